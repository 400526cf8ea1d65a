// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * usdt.c: see usdt.h.  The note layout (stapsdt, type 3): three addresses
 * (the probe, the link-time .stapsdt.base, the semaphore; 0 if none), then
 * provider, name and argument specs as NUL-terminated strings.  A prelink
 * or a different load base moves .stapsdt.base: the probe and semaphore
 * addresses move by the same amount.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include <libelf.h>
#include "core/grow.h"
#include "elf/usdt.h"

#define NT_STAPSDT 3

/* x86-64 registers by every name an SDT argument may use, as offsets into
 * struct pt_regs (the kernel's layout, which BPF programs receive). */
static const struct {
	const char *names[4]; /* 64, 32, 16, 8 bits */
	int off;
} regs[] = {
	{ { "rax", "eax", "ax", "al" }, 80 },   { { "rbx", "ebx", "bx", "bl" }, 40 },
	{ { "rcx", "ecx", "cx", "cl" }, 88 },   { { "rdx", "edx", "dx", "dl" }, 96 },
	{ { "rsi", "esi", "si", "sil" }, 104 }, { { "rdi", "edi", "di", "dil" }, 112 },
	{ { "rbp", "ebp", "bp", "bpl" }, 32 },  { { "rsp", "esp", "sp", "spl" }, 152 },
	{ { "r8", "r8d", "r8w", "r8b" }, 72 },  { { "r9", "r9d", "r9w", "r9b" }, 64 },
	{ { "r10", "r10d", "r10w", "r10b" }, 56 }, { { "r11", "r11d", "r11w", "r11b" }, 48 },
	{ { "r12", "r12d", "r12w", "r12b" }, 24 }, { { "r13", "r13d", "r13w", "r13b" }, 16 },
	{ { "r14", "r14d", "r14w", "r14b" }, 8 },  { { "r15", "r15d", "r15w", "r15b" }, 0 },
	{ { "rip", "eip", NULL, NULL }, 128 },
};

int usdt__reg_offset(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (int k = 0; k < 4; k++)
			if (regs[i].names[k] && strlen(regs[i].names[k]) == len &&
			    !memcmp(regs[i].names[k], name, len))
				return regs[i].off;
	return -1;
}

int usdt__parse_arg(const char *spec, struct usdt_arg *a)
{
	const char *at = strchr(spec, '@'), *p, *paren;
	char *end;
	long size;

	memset(a, 0, sizeof(*a));
	if (!at)
		return -EINVAL;
	size = strtol(spec, &end, 10);
	if (end != at || (labs(size) != 1 && labs(size) != 2 && labs(size) != 4 && labs(size) != 8))
		return -EINVAL;
	a->size = (uint8_t)labs(size);
	a->is_signed = size < 0;
	p = at + 1;
	if (*p == '$') { /* a constant */
		a->kind = USDT_ARG_CONST;
		a->value = strtoll(p + 1, &end, 0);
		return end == p + 1 || *end ? -EINVAL : 0;
	}
	if (*p == '%') { /* a register */
		a->kind = USDT_ARG_REG;
		a->reg = usdt__reg_offset(p + 1, strlen(p + 1));
		return a->reg < 0 ? -EINVAL : 0;
	}
	/* OFF(%reg): memory; an index register (base,index,scale) is not read. */
	paren = strchr(p, '(');
	if (!paren || paren[1] != '%' || strchr(paren, ',') || paren[strlen(paren) - 1] != ')')
		return -EINVAL;
	a->kind = USDT_ARG_MEM;
	a->value = paren == p ? 0 : strtoll(p, &end, 0);
	if (paren != p && end != paren)
		return -EINVAL;
	a->reg = usdt__reg_offset(paren + 2, strlen(paren + 2) - 1);
	return a->reg < 0 ? -EINVAL : 0;
}

static int parse_args(struct usdt_probe *u)
{
	char *copy = strdup(u->args_text), *save = NULL, *tok;
	int n = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (n == USDT_MAX_ARGS || usdt__parse_arg(tok, &u->args[n])) {
			n = -1;
			break;
		}
		n++;
	}
	free(copy);
	u->n_args = n;
	return 0;
}

/* File offset of VADDR, from the PT_LOAD segments; 0 when none maps it. */
static uint64_t file_offset_of(Elf *elf, size_t phnum, uint64_t vaddr)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_memsz)
			return ph.p_offset + (vaddr - ph.p_vaddr);
	}
	return 0;
}

static int add_note(struct usdt_probe **out, size_t *n, size_t *cap, const char *desc,
		    size_t len, uint64_t base_now, Elf *elf, size_t phnum)
{
	uint64_t pc, base, sema;
	const char *prov, *name, *args, *end = desc + len;
	struct usdt_probe *u;

	if (len < 24)
		return 0; /* not a note we know */
	memcpy(&pc, desc, 8);
	memcpy(&base, desc + 8, 8);
	memcpy(&sema, desc + 16, 8);
	prov = desc + 24;
	name = memchr(prov, 0, (size_t)(end - prov));
	if (!name++ || name >= end)
		return 0;
	args = memchr(name, 0, (size_t)(end - name));
	if (!args++ || args > end || !memchr(args, 0, (size_t)(end - args)))
		return 0;
	if (base_now && base) {
		pc += base_now - base;
		if (sema)
			sema += base_now - base;
	}
	if (GROW(*out, *n, *cap, 16))
		return -ENOMEM;
	u = &(*out)[*n];
	memset(u, 0, sizeof(*u));
	u->provider = strdup(prov);
	u->name = strdup(name);
	u->args_text = strdup(args);
	(*n)++; /* freed with the rest from here */
	if (!u->provider || !u->name || !u->args_text)
		return -ENOMEM;
	u->addr = pc;
	u->file_offset = file_offset_of(elf, phnum, pc);
	u->sema_offset = sema ? file_offset_of(elf, phnum, sema) : 0;
	return parse_args(u);
}

int usdt__read(const char *path, struct usdt_probe **out, size_t *n)
{
	Elf_Scn *scn = NULL;
	uint64_t base_now = 0;
	size_t shstrndx, phnum, cap = 0;
	Elf *elf;
	int fd, err = 0;

	*out = NULL;
	*n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) ||
	    elf_getphdrnum(elf, &phnum)) {
		err = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (gelf_getshdr(scn, &sh) && (sname = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(sname, ".stapsdt.base"))
			base_now = sh.sh_addr;
	}
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && !err &&
		       (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((char *)data->d_buf + name_off, "stapsdt", 8))
				continue;
			err = add_note(out, n, &cap, (char *)data->d_buf + desc_off, nh.n_descsz,
				       base_now, elf, phnum);
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	if (err) {
		usdt__free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return err;
}

void usdt__free(struct usdt_probe *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++) {
		free(p[i].provider);
		free(p[i].name);
		free(p[i].args_text);
	}
	free(p);
}
