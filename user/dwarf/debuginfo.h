/*
 * debuginfo.h: a file's DWARF (found in the file itself or in a separate
 * debug file), and function signatures from it: parameter names, types,
 * and where each value is at the probe address.
 *
 * Where DWARF is looked for: the file itself (a .debug_info section with
 * contents), else a separate debug file found by its build ID, through
 * .gnu_debuglink or from debuginfod (dwarf/debugfile.h: the order and the
 * checks).  A file with only .gnu_debugdata (MiniDebugInfo: an
 * xz-compressed symbol table, no types) is reported as
 * DEBUGINFO_SYMBOLS_ONLY: raw mode.
 *
 * The location rule (the value of a parameter at the probe address PC):
 *   - The parameter's DW_AT_location is evaluated at PC: a single
 *     expression, or the location-list entry whose range holds PC.
 *     Supported: DW_OP_reg0..31, DW_OP_regx (a register; xmm registers are
 *     unavailable to a uprobe), DW_OP_breg0..31, DW_OP_bregx (memory at register +
 *     offset; rsp-based: at the probe's sp), DW_OP_fbreg (memory at frame
 *     base + offset; a DW_OP_call_frame_cfa frame base is computed from
 *     the CFI at PC, = entry sp + 8 at the entry), either followed by
 *     DW_OP_deref (memory at the address stored there), DW_OP_breg + stack_value
 *     (register + addend), constants + stack_value, DW_OP_implicit_value,
 *     DW_AT_const_value, and DW_OP_piece sequences of those.
 *   - The SysV ABI location (classification of every parameter's type, in
 *     order; see abi_* in debuginfo.c) is used instead when
 *       a. the expression is frame-based (DW_OP_fbreg) and PC is before
 *          the end of the prologue (the first line-table row flagged
 *          prologue_end, else the second address of the function's line
 *          rows, as gdb does; without line rows: PC <= low_pc + 4): the
 *          prologue has not stored the argument in its slot yet (-O0);
 *       b. no location covers PC (-O2 lists often start after the entry),
 *          or the expression uses anything else (DW_OP_entry_value, ...).
 *     cmon's probes sit at the entry (offset 0, or +4 past endbr64), where
 *     the ABI location is exact; a probe deeper in the body with case b
 *     gets the ABI location too, marked DLOC_SRC_ABI_FALLBACK, which may
 *     be stale there.
 *   - The return value's location is always the ABI's: rax, rax:rdx (or
 *     mixed with xmm0/xmm1 for structs of two eightbytes), xmm0
 *     (unavailable), st0 (long double: unavailable), and for a struct
 *     returned in memory (class MEMORY) the buffer whose address is in
 *     rax at the return (the caller passed it as a hidden first argument
 *     in rdi, which shifts the other parameters by one register).
 *   - C++ classes that are not trivially copyable (a user-declared copy or
 *     move constructor or destructor, a virtual function or base, or such
 *     a member or base; or DW_AT_calling_convention pass_by_reference) are
 *     passed by invisible reference: the ABI location is memory at the
 *     address in the next integer register.
 */
#ifndef CMON_DEBUGINFO_H
#define CMON_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dwarf/ctype.h"

/* DWARF x86-64 register numbers (as in bpf/cmon_abi.h). */
enum dwarf_reg {
	DREG_RAX = 0, DREG_RDX = 1, DREG_RCX = 2, DREG_RBX = 3,
	DREG_RSI = 4, DREG_RDI = 5, DREG_RBP = 6, DREG_RSP = 7,
	DREG_R8 = 8, DREG_R9 = 9, DREG_R10 = 10, DREG_R11 = 11,
	DREG_R12 = 12, DREG_R13 = 13, DREG_R14 = 14, DREG_R15 = 15,
	DREG_RIP = 16, DREG_XMM0 = 17, /* .. xmm15 = 32 */
	DREG_ST0 = 33,                 /* .. st7 = 40 */
};

enum dloc_kind {
	DLOC_NONE = 0, /* not available: optimized out, unknown */
	DLOC_REG,      /* the register's value + addend, low SIZE bytes */
	DLOC_MEM,      /* SIZE bytes at register reg + off (reg DREG_RSP: the sp at the probe) */
	DLOC_CONST,    /* value, low SIZE bytes (little-endian) */
	DLOC_XMM,      /* in SSE register reg - DREG_XMM0: a uprobe cannot read it */
	DLOC_X87,      /* in x87 register st(reg - DREG_ST0): cannot be read */
};

struct dloc_piece {
	uint8_t kind;   /* enum dloc_kind */
	uint8_t reg;    /* DREG_*; for DLOC_XMM the DWARF number of the xmm register */
	uint8_t deref;  /* DLOC_MEM: the bytes are at the address stored at reg + off */
	uint32_t size;  /* bytes of the value this piece holds */
	int64_t off;    /* DLOC_MEM: offset from reg; DLOC_REG: addend */
	uint64_t value; /* DLOC_CONST */
	/* DLOC_REG: ((reg + off) >> shift) & mask (mask 0: all of it), the
	 * DW_OP_and / DW_OP_shr of a value rustc packs in a register */
	uint8_t shift;
	uint64_t mask;
};

#define DLOC_MAX_PIECES 8

enum dloc_source {
	DLOC_SRC_DWARF = 0,        /* DW_AT_location (or const_value) at the probe pc */
	DLOC_SRC_ABI,              /* the ABI location: rule a above, or the return value */
	DLOC_SRC_ABI_FALLBACK,     /* the ABI location: rule b above */
};

/* Where a value is: pieces in order, each holding the next SIZE bytes of
 * the value (one piece for most values; two registers for a 16-byte
 * struct). */
struct dloc {
	uint8_t n;
	uint8_t source; /* enum dloc_source */
	struct dloc_piece p[DLOC_MAX_PIECES];
};

struct func_param {
	const char *name;          /* DWARF name; "#<i>" when unnamed */
	const struct ctype *type;
	struct dloc loc;           /* at the probe address */
};

struct func_sig {
	const char *name;          /* DW_AT_name of the subprogram */
	uint64_t addr;             /* function address (file vaddr) */
	uint64_t probe_addr;       /* the address locations were evaluated at */
	struct func_param *params;
	size_t n_params;
	bool variadic;             /* `...`: the unnamed arguments are not shown */
	/* Go code: arguments and results in Go's registers (ABIInternal), the
	 * first result as the return value. */
	bool go;
	const struct ctype *ret_type; /* CTYPE_VOID for void */
	struct dloc ret_loc;       /* at the return */
	struct ctype_arena *arena; /* one reference: types outlive the debuginfo */
};

void func_sig__free(struct func_sig *sig); /* NULL fine */

/* The integer argument register (0..5: rdi rsi rdx rcx r8 r9; with GO,
 * Go's rax rbx rcx rdi rsi r8: what arg0..arg5 record) that L is whole,
 * or -1 (memory, another register, an addend, several pieces). */
int dloc__arg_register(const struct dloc *l, bool go);

enum debuginfo_kind {
	DEBUGINFO_NONE = 0,      /* no DWARF found: raw mode */
	DEBUGINFO_SYMBOLS_ONLY,  /* .gnu_debugdata only: symbols, no types: raw mode */
	DEBUGINFO_DWARF,
};

struct debuginfo_opts {
	const char *debug_root;  /* default "/usr/lib/debug"; for a file named
				  * /proc/PID/root/...: PID's /usr/lib/debug */
	const char *link_dir;    /* directory .gnu_debuglink names are relative to;
				  * default: the directory of PATH (set it when PATH is
				  * a /proc/PID/map_files path) */
	bool no_fetch;           /* local debug files only (no debuginfod) */
};

struct debuginfo;

/*
 * Open PATH and find its DWARF.  A file without DWARF is not an error:
 * debuginfo__kind() says what was found.  Returns NULL and sets errno only
 * when PATH cannot be read (ENOENT, EACCES...) or is not ELF (ENOEXEC).
 */
struct debuginfo *debuginfo__open(const char *path);
struct debuginfo *debuginfo__open_opts(const char *path, const struct debuginfo_opts *opts);
void debuginfo__free(struct debuginfo *di); /* NULL fine; signatures stay valid */

enum debuginfo_kind debuginfo__kind(const struct debuginfo *di);
/* No DWARF yet: debuginfod is fetching it in the background. */
bool debuginfo__fetching(const struct debuginfo *di);

/* The libdw handle (NULL without DWARF): for dwarf/lines.c. */
struct Dwarf;
struct Dwarf *debuginfo__dwarf(struct debuginfo *di);
/* The file the DWARF was read from (PATH or the separate debug file), or
 * NULL without DWARF. */
const char *debuginfo__dwarf_path(const struct debuginfo *di);
/* One line for logs and `cmon list`: "DWARF in /x", "DWARF from
 * /usr/lib/debug/.build-id/ab/cdef.debug (build-id)", "DWARF from
 * CACHE/abcd/debuginfo (debuginfod URLS)", "symbols only
 * (.gnu_debugdata), no DWARF", "no DWARF". */
const char *debuginfo__describe(const struct debuginfo *di);

/*
 * The signature of the function at FUNC_ADDR (its symbol's st_value),
 * locations evaluated at PROBE_ADDR (FUNC_ADDR + the entry plan's skip;
 * AT_ENTRY: PROBE_ADDR is that entry, where the ABI location of every
 * argument is exact, and fills what DWARF says is optimized out there).
 * Returns 0 and *OUT (free with func_sig__free), -ENODATA when the file has
 * no DWARF, -ENOENT when no DWARF subprogram starts at FUNC_ADDR (raw mode
 * for that function), -ENOMEM.
 */
int debuginfo__signature(struct debuginfo *di, uint64_t func_addr, uint64_t probe_addr,
			 bool at_entry, struct func_sig **out);

/*
 * --locals: the variables and parameters visible at PC (a line's address),
 * as a signature whose "parameters" are them, locations evaluated at PC
 * (none: optimized out there).  The innermost function's scopes only (an
 * inlined function's own, at an inlined copy).  0, -ENODATA (no DWARF),
 * -ENOENT (no scope at PC), -ENOMEM.
 */
int debuginfo__locals(struct debuginfo *di, uint64_t pc, struct func_sig **out);

/* The GNU build-id of the ELF file PATH as lowercase hex (malloc'd), read
 * from its notes whether or not it has symbols or DWARF; NULL when it has
 * none or cannot be read. */
char *debuginfo__build_id(const char *path);

/*
 * Where the body of the function at FUNC_ADDR begins (its second line-table
 * row: gcc -O0 has stored every parameter in its frame slot by then), and
 * where its return-address slot is there: register SLOT_REG (DREG_RSP or
 * DREG_RBP) + SLOT_OFF, from the CFI.  0, or -ENOENT when DWARF or CFI do
 * not say (no line rows inside the function, a CFA on another register).
 */
int debuginfo__body_start(struct debuginfo *di, uint64_t func_addr, uint64_t *pc,
			  uint8_t *slot_reg, int64_t *slot_off);

/* Address of the (first) DWARF subprogram named NAME with code: 0, -ENOENT,
 * -ENODATA.  For tests and listings; probes use symbol addresses. */
int debuginfo__func_addr(struct debuginfo *di, const char *name, uint64_t *addr);

#endif
