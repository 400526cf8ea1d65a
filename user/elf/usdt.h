/*
 * usdt.h: the static probes of an ELF file (SystemTap SDT notes,
 * <sys/sdt.h>'s DTRACE_PROBE/STAP_PROBE), as a uprobe sees them: where the
 * probe's nop sits (a file offset), its semaphore (a file offset, for the
 * kernel's reference counter: no write into the process), and where each
 * argument is at that instruction.
 */
#ifndef CMON_ELF_USDT_H
#define CMON_ELF_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USDT_MAX_ARGS 12

enum usdt_arg_kind {
	USDT_ARG_REG,   /* the register's value */
	USDT_ARG_MEM,   /* SIZE bytes at register + offset */
	USDT_ARG_CONST, /* the value itself */
};

struct usdt_arg {
	enum usdt_arg_kind kind;
	int reg;        /* an offset into struct pt_regs (x86-64), in bytes */
	int64_t value;  /* CONST: the value; MEM: the offset */
	uint8_t size;   /* 1, 2, 4, 8 */
	bool is_signed;
};

struct usdt_probe {
	char *provider, *name;
	char *args_text;        /* as the note spells it: "-4@%edi 8@-16(%rbp)" */
	uint64_t addr;          /* the probe's address, .stapsdt.base adjusted */
	uint64_t file_offset;   /* where the uprobe goes */
	uint64_t sema_offset;   /* the semaphore's file offset; 0: none */
	struct usdt_arg args[USDT_MAX_ARGS];
	int n_args;             /* -1: an argument spec cmon cannot read */
};

/* Every SDT probe of the ELF file at PATH into *OUT (*N of them; free with
 * usdt__free).  0 (none is fine), or -errno (-ENOEXEC: not ELF). */
int usdt__read(const char *path, struct usdt_probe **out, size_t *n);
void usdt__free(struct usdt_probe *p, size_t n);

/* The offset in struct pt_regs of x86-64 register NAME (LEN bytes, any
 * width: "rdi", "edi", "dil"), or -1. */
int usdt__reg_offset(const char *name, size_t len);

/* One argument spec ("-4@%edi") into A.  0 or -EINVAL. */
int usdt__parse_arg(const char *spec, struct usdt_arg *a);

#endif
