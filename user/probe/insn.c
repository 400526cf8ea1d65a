// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * insn.c: probe placement from x86-64 machine code.
 *
 * Capstone only tells us where instructions start and whether they decode;
 * the classification itself looks at the raw bytes (prefixes, opcode,
 * modrm), because that is what the kernel's uprobe analyser looks at and
 * because it keeps capstone's detail mode, the slow part, switched off.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "core/grow.h"
#include "core/log.h"
#include "probe/insn.h"

/* Longest legal x86 instruction. */
#define INSN_MAX_LEN 15

static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
/* The nop5 that gcc -mnop-mcount and patchable entries emit; the only
 * encoding the kernel turns into a trampoline call. */
static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

const char *probe_cost__name(enum probe_cost cost)
{
	switch (cost) {
	case PROBE_COST_OPTIMIZED:
		return "optimized";
	case PROBE_COST_EMULATED:
		return "emulated";
	case PROBE_COST_SINGLESTEP:
		return "single-step";
	case PROBE_COST_UNPROBEABLE:
		return "unprobeable";
	}
	return "unknown";
}

unsigned probe_cost__typical_ns(enum probe_cost cost)
{
	switch (cost) {
	case PROBE_COST_OPTIMIZED:
		return 110;
	case PROBE_COST_EMULATED:
		return 200;
	case PROBE_COST_SINGLESTEP:
		return 2600;
	case PROBE_COST_UNPROBEABLE:
		return 0;
	}
	return 0;
}

/*
 * Capstone is loaded only while probes are being planned: its relocated
 * tables for every architecture cost ~4 MB of resident memory, which a
 * tracer that runs for hours should not keep.  insn__release() unloads it.
 *
 * One capstone handle for the whole process: opening one costs far more
 * than decoding a function.  cmon drives this module from a single thread,
 * so there is no locking; closed at exit so leak checkers stay quiet.
 */
#define CAPSTONE_SONAME "libcapstone.so.4"

static struct {
	void *dl;
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*close)(csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	cs_insn *(*malloc)(csh handle);
	void (*free)(cs_insn *insn, size_t count);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
			    cs_insn *insn);
	const char *(*strerror)(cs_err code);
} cs;
static csh cs_handle;
static cs_insn *cs_buf;
static bool cs_ready;

void insn__release(void)
{
	if (cs_ready) {
		cs.free(cs_buf, 1);
		cs.close(&cs_handle);
		cs_buf = NULL;
		cs_ready = false;
	}
	if (cs.dl) {
		dlclose(cs.dl);
		memset(&cs, 0, sizeof(cs));
	}
}

static int insn_cs_load(void)
{
	if (cs.dl)
		return 0;
	cs.dl = dlopen(CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!cs.dl) {
		log_error("cannot load %s: %s", CAPSTONE_SONAME, dlerror());
		return -ENOENT;
	}
	*(void **)&cs.open = dlsym(cs.dl, "cs_open");
	*(void **)&cs.close = dlsym(cs.dl, "cs_close");
	*(void **)&cs.option = dlsym(cs.dl, "cs_option");
	*(void **)&cs.malloc = dlsym(cs.dl, "cs_malloc");
	*(void **)&cs.free = dlsym(cs.dl, "cs_free");
	*(void **)&cs.disasm_iter = dlsym(cs.dl, "cs_disasm_iter");
	*(void **)&cs.strerror = dlsym(cs.dl, "cs_strerror");
	if (!cs.open || !cs.close || !cs.option || !cs.malloc || !cs.free || !cs.disasm_iter ||
	    !cs.strerror) {
		log_error("%s lacks the functions cmon uses", CAPSTONE_SONAME);
		dlclose(cs.dl);
		memset(&cs, 0, sizeof(cs));
		return -ENOENT;
	}
	return 0;
}

static int insn_cs_get(void)
{
	static bool atexit_done;
	cs_err err;

	if (cs_ready)
		return 0;
	if (insn_cs_load())
		return -EIO;
	err = cs.open(CS_ARCH_X86, CS_MODE_64, &cs_handle);
	if (err != CS_ERR_OK) {
		log_error("capstone: cs_open: %s", cs.strerror(err));
		return -EIO;
	}
	/* Detail is off by default; say so, the sweep depends on it for speed. */
	cs.option(cs_handle, CS_OPT_DETAIL, CS_OPT_OFF);
	cs_buf = cs.malloc(cs_handle);
	if (!cs_buf) {
		cs.close(&cs_handle);
		return -ENOMEM;
	}
	cs_ready = true;
	if (!atexit_done && atexit(insn__release) == 0)
		atexit_done = true;
	return 0;
}

/* Decode one instruction at CODE[OFF]; its length, or 0 if it does not decode. */
static size_t insn_decode_one(const uint8_t *code, size_t len, size_t off, uint64_t addr)
{
	const uint8_t *p = code + off;
	size_t left = len - off;
	uint64_t a = addr + off;

	if (left > INSN_MAX_LEN)
		left = INSN_MAX_LEN;
	if (!cs.disasm_iter(cs_handle, &p, &left, &a, cs_buf))
		return 0;
	return cs_buf->size;
}

/* The parts of one (already validated) instruction the classifiers need. */
struct raw_insn {
	const uint8_t *b;
	size_t len;
	size_t op;      /* index of the first opcode byte */
	uint8_t rex;    /* 0: none */
	bool lock;
	bool seg_bad;   /* es/cs/ss/ds override: the kernel rejects these */
	bool opsize;    /* 66 */
	unsigned npfx;  /* legacy prefixes, REX not counted */
};

static void raw_parse(const uint8_t *b, size_t len, struct raw_insn *r)
{
	size_t i = 0;

	memset(r, 0, sizeof(*r));
	r->b = b;
	r->len = len;
	for (; i < len; i++) {
		uint8_t c = b[i];

		if ((c & 0xf0) == 0x40) {
			r->rex = c;
			continue;
		}
		switch (c) {
		case 0xf0:
			r->lock = true;
			break;
		case 0x26: case 0x2e: case 0x36: case 0x3e:
			r->seg_bad = true;
			break;
		case 0x66:
			r->opsize = true;
			break;
		case 0x64: case 0x65: case 0x67: case 0xf2: case 0xf3:
			break;
		default:
			goto done;
		}
		/* A REX followed by a legacy prefix is ignored by the CPU. */
		r->rex = 0;
		r->npfx++;
	}
done:
	r->op = i;
}

static uint8_t raw_byte(const struct raw_insn *r, size_t i)
{
	return r->op + i < r->len ? r->b[r->op + i] : 0;
}

/* Relative branch displacement: the instruction's trailing immediate. */
static int64_t raw_rel(const struct raw_insn *r)
{
	const uint8_t *imm;
	size_t opcode_len = raw_byte(r, 0) == 0x0f ? 2 : 1;
	size_t n;

	if (r->op + opcode_len > r->len)
		return 0;
	n = r->len - r->op - opcode_len;
	imm = r->b + r->op + opcode_len;
	switch (n) {
	case 1:
		return (int8_t)imm[0];
	case 2:
		return (int16_t)(imm[0] | imm[1] << 8);
	case 4:
		return (int32_t)((uint32_t)imm[0] | (uint32_t)imm[1] << 8 |
				 (uint32_t)imm[2] << 16 | (uint32_t)imm[3] << 24);
	}
	return 0;
}

static bool opc_is_jcc8(uint8_t o)
{
	/* jcc rel8, and loop/loope/loopne/jrcxz which branch the same way */
	return (o >= 0x70 && o <= 0x7f) || (o >= 0xe0 && o <= 0xe3);
}

/* One-byte opcodes the kernel refuses: invalid in 64-bit mode, or
 * privileged / trapping (in, out, int*, iret, hlt, cli, sti). */
static bool opc1_bad(uint8_t o)
{
	switch (o) {
	case 0x06: case 0x07: case 0x0e: case 0x16: case 0x17: case 0x1e:
	case 0x1f: case 0x27: case 0x2f: case 0x37: case 0x3f: case 0x60:
	case 0x61: case 0x82: case 0x9a: case 0xd4: case 0xd5: case 0xd6:
	case 0xea:
	case 0x6c: case 0x6d: case 0x6e: case 0x6f:
	case 0xe4: case 0xe5: case 0xe6: case 0xe7:
	case 0xec: case 0xed: case 0xee: case 0xef:
	case 0xcc: case 0xcd: case 0xce: case 0xcf:
	case 0xf1: case 0xf4: case 0xfa: case 0xfb:
		return true;
	}
	return false;
}

/* 0f xx the kernel refuses: syscall/sysret/sysenter/sysexit, ud2 and the
 * CPL0-only ones. */
static bool opc2_bad(uint8_t o)
{
	switch (o) {
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b:
	case 0x30: case 0x34: case 0x35: case 0x37:
		return true;
	}
	return false;
}

static enum probe_cost classify(const uint8_t *b, size_t len)
{
	struct raw_insn r;
	uint8_t o, o2, modrm;

	if (len == sizeof(nop5) && memcmp(b, nop5, sizeof(nop5)) == 0)
		return PROBE_COST_OPTIMIZED;
	raw_parse(b, len, &r);
	if (r.op >= len || r.lock || r.seg_bad)
		return PROBE_COST_UNPROBEABLE;
	o = raw_byte(&r, 0);
	o2 = raw_byte(&r, 1);
	/* VEX (c5: 2 bytes, c4: 3) and EVEX (62: 4): the kernel's decoder
	 * keeps only the opcode byte after them, and its table of good
	 * instructions is the one-byte map's (vpxor's ef reads as `out`:
	 * refused, ENOTSUPP at attach); the rest are single-stepped. */
	if (o == 0xc5 || o == 0xc4 || o == 0x62) {
		uint8_t op = raw_byte(&r, o == 0xc5 ? 2 : o == 0xc4 ? 3 : 4);

		return opc1_bad(op) ? PROBE_COST_UNPROBEABLE : PROBE_COST_SINGLESTEP;
	}
	if (opc1_bad(o))
		return PROBE_COST_UNPROBEABLE;
	/* mov ss masks interrupts for one instruction: never single-stepped */
	if (o == 0x8e && ((o2 >> 3) & 7) == 2)
		return PROBE_COST_UNPROBEABLE;

	if (o == 0x0f) {
		if (opc2_bad(o2))
			return PROBE_COST_UNPROBEABLE;
		modrm = raw_byte(&r, 2);
		if (o2 == 0x1f && ((modrm >> 3) & 7) == 0)
			return PROBE_COST_EMULATED; /* nopl/nopw */
		if (o2 >= 0x80 && o2 <= 0x8f) /* jcc rel32 */
			return r.opsize ? PROBE_COST_UNPROBEABLE : PROBE_COST_EMULATED;
		return PROBE_COST_SINGLESTEP;
	}
	if (o == 0x90) /* with REX.B it is xchg eax, r8d */
		return (r.rex & 1) ? PROBE_COST_SINGLESTEP : PROBE_COST_EMULATED;
	if (o >= 0x50 && o <= 0x57) {
		/* push reg, push r8..r15: nothing else is emulated */
		if (r.npfx == 0 && (r.rex == 0 || r.rex == 0x41))
			return PROBE_COST_EMULATED;
		return PROBE_COST_SINGLESTEP;
	}
	if (o == 0xe8 || o == 0xe9 || o == 0xeb || (o >= 0x70 && o <= 0x7f))
		/* the kernel rejects 16-bit branches outright */
		return r.opsize ? PROBE_COST_UNPROBEABLE : PROBE_COST_EMULATED;
	return PROBE_COST_SINGLESTEP;
}

/*
 * A VEX instruction of B (N bytes) that the kernel refuses to probe and
 * that writes nothing but a vector register (ModRM.reg) from registers or
 * memory: the AVX string functions glibc's IFUNCs pick start so (vpxor,
 * vmovd xmm0, esi, vpbroadcastb).  An entry probe just past it sees the
 * same arguments and stack: the integer registers, rsp and the flags are
 * as at the start.
 */
static bool vex_vector_only(const uint8_t *b, size_t n)
{
	uint8_t map, op;

	if (n < 3 || (b[0] != 0xc5 && b[0] != 0xc4))
		return false;
	map = b[0] == 0xc5 ? 1 : b[1] & 0x1f;
	op = b[0] == 0xc5 ? b[2] : n > 3 ? b[3] : 0;
	if (map == 1) {
		switch (op) {
		case 0x10: case 0x28: case 0x57: case 0x6e: case 0x6f: /* loads, xor */
		case 0x74: case 0x75: case 0x76: case 0xef: case 0xeb: case 0xdb:
			return true;
		}
	} else if (map == 2) {
		switch (op) {
		case 0x58: case 0x59: case 0x78: case 0x79: /* vpbroadcast */
			return true;
		}
	}
	return false;
}

int insn__plan_entry(const uint8_t *code, size_t len, uint64_t addr, struct entry_plan *out)
{
	size_t skip = 0, n;
	int n_txt, err;

	if (!code || !out || len == 0)
		return -EINVAL;
	err = insn_cs_get();
	if (err)
		return err;

	if (len >= sizeof(endbr64) && memcmp(code, endbr64, sizeof(endbr64)) == 0)
		skip = sizeof(endbr64);
	out->skip = skip;
	out->cost = PROBE_COST_UNPROBEABLE;
	snprintf(out->insn, sizeof(out->insn), "(bad)");
	if (skip >= len)
		return -EINVAL;

	n = insn_decode_one(code, len, skip, addr);
	if (n == 0)
		return -EINVAL;
	out->cost = classify(code + skip, n);
	/* A first AVX instruction the kernel refuses: probed past it. */
	for (int k = 0; k < 3 && out->cost == PROBE_COST_UNPROBEABLE &&
			vex_vector_only(code + skip, n) && skip + n < len; k++) {
		size_t next = insn_decode_one(code, len, skip + n, addr);

		if (!next)
			break;
		skip += n;
		n = next;
		out->skip = (uint32_t)skip;
		out->cost = classify(code + skip, n);
	}
	n_txt = snprintf(out->insn, sizeof(out->insn), "%s%s%s", cs_buf->mnemonic,
			 cs_buf->op_str[0] ? " " : "", cs_buf->op_str);
	if (n_txt < 0)
		out->insn[0] = '\0';
	/* else: longer operands are cut, the buffer stays terminated */
	return 0;
}

/* Does the instruction B (LEN bytes) do nothing: nop, xchg ax,ax, nopw/nopl? */
static bool is_nop(const uint8_t *b, size_t len)
{
	struct raw_insn r;
	uint8_t o;

	raw_parse(b, len, &r);
	if (r.op >= len || r.lock)
		return false;
	o = raw_byte(&r, 0);
	if (o == 0x90)
		return !(r.rex & 1);
	return o == 0x0f && raw_byte(&r, 1) == 0x1f && ((raw_byte(&r, 2) >> 3) & 7) == 0;
}

int insn__nop_entry(const uint8_t *code, size_t len, uint64_t addr, uint32_t *off,
		    enum probe_cost *cost)
{
	enum probe_cost best_cost = PROBE_COST_UNPROBEABLE;
	uint32_t best = 0;
	int err = insn_cs_get();

	if (err)
		return err;
	for (size_t s = 0; s < len; s++) {
		enum probe_cost c = PROBE_COST_UNPROBEABLE;
		size_t at = s;
		bool nops = true;

		while (nops && at < len) {
			size_t n = insn_decode_one(code, len, at, addr);

			nops = n && at + n <= len && is_nop(code + at, n);
			if (nops && at == s)
				c = classify(code + at, n);
			at += n;
		}
		if (!nops || at != len || c == PROBE_COST_UNPROBEABLE)
			continue;
		if (c <= best_cost) { /* the cheapest; of those, the nearest the end */
			best_cost = c;
			best = (uint32_t)s;
		}
	}
	if (best_cost == PROBE_COST_UNPROBEABLE)
		return -ENOENT;
	*off = best;
	*cost = best_cost;
	return 0;
}

static int offs_push(uint32_t **v, size_t *n, size_t *cap, uint32_t off)
{
	if (GROW(*v, *n, *cap, 4))
		return -ENOMEM;
	(*v)[(*n)++] = off;
	return 0;
}

/* An indirect jump through a register or a table: a jump table's, or a
 * tail call through a function pointer (`jmp *%rax`): its targets are
 * unknown.  A jump through the GOT leaves the function. */
static bool raw_is_local_indirect_jmp(const struct raw_insn *r)
{
	uint8_t o2 = raw_byte(r, 1);

	return raw_byte(r, 0) == 0xff && ((o2 >> 3) & 7) == 4 && (o2 & 0xc7) != 0x05;
}

/* Is R, at OFF (N bytes), a direct branch or call (E8, E9, EB, Jcc, loop)?
 * Then *T its target as an offset from the same base (negative: before). */
static bool raw_branch_target(const struct raw_insn *r, size_t off, size_t n, int64_t *t)
{
	uint8_t o = raw_byte(r, 0), o2 = raw_byte(r, 1);

	if (o == 0xe8 || o == 0xe9 || o == 0xeb || opc_is_jcc8(o) ||
	    (o == 0x0f && o2 >= 0x80 && o2 <= 0x8f)) {
		*t = (int64_t)off + (int64_t)n + raw_rel(r);
		return true;
	}
	return false;
}

/* R, an indirect jump at OFF, as an exit probe can follow it: jmp *%reg,
 * or jmp *disp(%reg) (no index register: a table indexed so stays in the
 * function, a jump table's).  False for other forms. */
static bool ind_jump_of(const struct raw_insn *r, uint32_t off, struct ind_jump *j)
{
	uint8_t modrm = raw_byte(r, 1), mod = modrm >> 6, rm = modrm & 7;
	uint8_t base = (uint8_t)(rm | ((r->rex & 1) << 3));
	size_t at = r->op + 2; /* the displacement, after the modrm byte */

	memset(j, 0, sizeof(*j));
	j->off = off;
	j->reg = base;
	if (mod == 3)
		return true;
	if (rm == 4 || (mod == 0 && rm == 5))
		return false; /* SIB (a table), or rip-relative (the GOT: a tail exit) */
	j->mem = true;
	if (mod == 1 && at < r->len)
		j->disp = (int8_t)r->b[at];
	else if (mod == 2 && at + 4 <= r->len)
		j->disp = (int32_t)((uint32_t)r->b[at] | (uint32_t)r->b[at + 1] << 8 |
				    (uint32_t)r->b[at + 2] << 16 | (uint32_t)r->b[at + 3] << 24);
	else if (mod != 0)
		return false;
	return true;
}

enum exit_kind { EXIT_NONE, EXIT_RET, EXIT_TAIL };

/* The exit kind of the instruction B (N bytes) at OFF of a body of LEN at
 * ADDR, jumps into [IN_LO, IN_HI) staying inside; for a conditional jump
 * out of it, *COND its condition + 1 (0: none). */
static enum exit_kind exit_kind(const uint8_t *b, size_t n, size_t off, size_t len, uint64_t addr,
				uint64_t in_lo, uint64_t in_hi, uint8_t *cond)
{
	struct raw_insn r;
	uint8_t o, o2;
	uint64_t target;

	*cond = 0;
	raw_parse(b, n, &r);
	o = raw_byte(&r, 0);
	switch (o) {
	case 0xc3: /* ret, repz ret, bnd ret */
	case 0xc2: /* ret imm16 */
		return EXIT_RET;
	case 0xe9:
	case 0xeb:
		break;
	case 0x0f:
		o2 = raw_byte(&r, 1);
		if (o2 < 0x80 || o2 > 0x8f)
			return EXIT_NONE;
		*cond = (uint8_t)((o2 & 0x0f) + 1);
		break;
	case 0xff:
		/* jmp qword ptr [rip + disp]: a tail call through the GOT.
		 * jmp reg and jmp [table + reg*8] stay inside (jump tables). */
		o2 = raw_byte(&r, 1);
		if (((o2 >> 3) & 7) == 4 && (o2 & 0xc7) == 0x05)
			return EXIT_TAIL;
		return EXIT_NONE;
	default:
		if (!opc_is_jcc8(o))
			return EXIT_NONE;
		if (o >= 0x70 && o <= 0x7f) /* loop and jrcxz: taken as always */
			*cond = (uint8_t)((o & 0x0f) + 1);
	}
	/* Unsigned wrap-around makes targets before the start huge: outside. */
	target = (uint64_t)off + n + (uint64_t)raw_rel(&r);
	if (target < len || (addr + target >= in_lo && addr + target < in_hi))
		return EXIT_NONE;
	return EXIT_TAIL;
}

int insn__jump_target(const uint8_t *code, size_t len, uint64_t addr, uint32_t off,
		      uint64_t *target)
{
	struct raw_insn r;
	int64_t t;
	size_t n;

	if (!code || !target || off >= len || insn_cs_get())
		return -EINVAL;
	n = insn_decode_one(code, len, off, addr);
	if (!n)
		return -EINVAL;
	raw_parse(code + off, n, &r);
	if (!raw_branch_target(&r, off, n, &t))
		return -EINVAL;
	*target = addr + (uint64_t)t;
	return 0;
}

int insn__plan_exits(const uint8_t *code, size_t len, uint64_t addr, struct exit_plan *out)
{
	return insn__plan_exits_in(code, len, addr, 0, 0, out);
}

int insn__plan_exits_in(const uint8_t *code, size_t len, uint64_t addr, uint64_t in_lo,
			uint64_t in_hi, struct exit_plan *out)
{
	size_t cap_ret = 0, cap_tail = 0, cap_cond = 0, cap_ind = 0;
	uint8_t cond;
	const uint8_t *p = code;
	size_t left = len;
	uint64_t a = addr;
	int err;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!code || len == 0 || len > UINT32_MAX)
		return -EINVAL;
	err = insn_cs_get();
	if (err)
		return err;

	/* Linear sweep: compilers put no data in x86 .text functions, and the
	 * int3/nop padding after noreturn calls decodes like code. */
	out->complete = true;
	while (left > 0) {
		size_t off = (size_t)(p - code);
		enum exit_kind k;

		if (!cs.disasm_iter(cs_handle, &p, &left, &a, cs_buf)) {
			log_debug("insn: undecodable byte at +%#zx (0x%02x) of %#llx",
				  off, code[off], (unsigned long long)addr);
			out->complete = false;
			break;
		}
		k = exit_kind(code + off, cs_buf->size, off, len, addr, in_lo, in_hi, &cond);
		if (k == EXIT_NONE) {
			struct raw_insn r;
			struct ind_jump j;

			raw_parse(code + off, cs_buf->size, &r);
			if (raw_is_local_indirect_jmp(&r)) {
				out->n_indirect++;
				if (ind_jump_of(&r, (uint32_t)off, &j)) {
					if (GROW(out->ind, out->n_ind, cap_ind, 4)) {
						err = -ENOMEM;
						goto cleanup;
					}
					out->ind[out->n_ind++] = j;
				}
			}
		}
		if (k == EXIT_RET)
			err = offs_push(&out->ret_offs, &out->n_ret, &cap_ret, (uint32_t)off);
		else if (k == EXIT_TAIL) {
			/* its condition first, alongside at the same index */
			err = GROW(out->tail_cond, out->n_tail, cap_cond, 4);
			if (!err) {
				out->tail_cond[out->n_tail] = cond;
				err = offs_push(&out->tail_offs, &out->n_tail, &cap_tail,
						(uint32_t)off);
			}
		}
		if (err)
			goto cleanup;
	}
	return 0;
cleanup:
	exit_plan__clear(out);
	return err;
}

/* Instructions the step planner looks at past the entry one: the time
 * between them is not in the latency, so they must be few. */
#define STEP_MAX_INSNS 8

/* A rep-prefixed string operation: runs as long as its count says. */
static bool raw_is_rep_string(const struct raw_insn *r)
{
	uint8_t o = raw_byte(r, 0);
	bool rep = false;

	for (size_t i = 0; i < r->op; i++)
		rep |= r->b[i] == 0xf2 || r->b[i] == 0xf3;
	return rep && ((o >= 0xa4 && o <= 0xa7) || (o >= 0xaa && o <= 0xaf) ||
		       (o >= 0x6c && o <= 0x6f));
}

/* A transfer of control whose target the planner cannot see (ret, loop,
 * jrcxz, indirect call or jump), or one the planner must not step over. */
static bool raw_leaves_line(const struct raw_insn *r)
{
	uint8_t o = raw_byte(r, 0), o2 = raw_byte(r, 1);

	switch (o) {
	case 0xc2: case 0xc3: case 0xca: case 0xcb:
	case 0xe0: case 0xe1: case 0xe2: case 0xe3:
		return true;
	case 0xff:
		return ((o2 >> 3) & 7) >= 2 && ((o2 >> 3) & 7) <= 5;
	case 0x0f:
		/* cpuid, fences and xsave/xrstor, system instructions: slow */
		return o2 == 0xa2 || o2 == 0xae || o2 == 0x01 || o2 == 0x00;
	}
	return raw_is_rep_string(r);
}


enum landing { LANDS_NOT, LANDS_IN, LANDS_UNKNOWN };

/* Does a direct branch of the body CODE (LEN bytes at ADDR) land in [LO,
 * HI] (offsets)?  Calls count only with CALLS (a call to the function
 * itself is recursion: a new call); an indirect jump inside the body makes
 * it unknown with INDIRECT_UNKNOWN (a jump table's targets), and so does a
 * body that does not decode. */
static enum landing body_lands_in(const uint8_t *code, size_t len, uint64_t addr, int64_t lo,
				  int64_t hi, bool calls, bool indirect_unknown)
{
	const uint8_t *p = code;
	size_t left = len;
	uint64_t a = addr;

	while (left > 0) {
		size_t at = (size_t)(p - code);
		struct raw_insn r;
		int64_t t;

		if (!cs.disasm_iter(cs_handle, &p, &left, &a, cs_buf))
			return LANDS_UNKNOWN;
		raw_parse(code + at, cs_buf->size, &r);
		if (indirect_unknown && raw_is_local_indirect_jmp(&r))
			return LANDS_UNKNOWN;
		if ((calls || raw_byte(&r, 0) != 0xe8) &&
		    raw_branch_target(&r, at, cs_buf->size, &t) && t >= lo && t <= hi)
			return LANDS_IN;
	}
	return LANDS_NOT;
}

bool insn__branches_into(const uint8_t *code, size_t len, uint64_t addr, uint32_t lo,
			 uint32_t hi)
{
	if (!code || !len || insn_cs_get())
		return false;
	return body_lands_in(code, len, addr, lo, hi, false, false) == LANDS_IN;
}

int insn__plan_step(const uint8_t *code, size_t len, uint64_t addr, uint32_t entry_off,
		    struct step_plan *out)
{
	size_t off = entry_off, n = 0;
	int err;

	if (!code || !out || entry_off >= len)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	err = insn_cs_get();
	if (err)
		return err;

	/* The straight line from the entry instruction to a cheap one. */
	for (int i = 0; i <= STEP_MAX_INSNS && off < len; i++) {
		struct raw_insn r;
		enum probe_cost c;
		int64_t t;

		n = insn_decode_one(code, len, off, addr);
		if (n == 0)
			return 0;
		raw_parse(code + off, n, &r);
		c = classify(code + off, n);
		if (i > 0 && (c == PROBE_COST_EMULATED || c == PROBE_COST_OPTIMIZED)) {
			out->off = (uint32_t)off;
			out->cost = c;
			break;
		}
		if (c == PROBE_COST_UNPROBEABLE || raw_leaves_line(&r) ||
		    raw_branch_target(&r, off, n, &t))
			return 0;
		off += n;
	}
	if (!out->off)
		return 0;

	/* No branch of the function may land between the entry and the step
	 * probe, nor may a jump table (its targets are unknown). */
	if (body_lands_in(code, len, addr, (int64_t)entry_off + 1, out->off, true, true) !=
	    LANDS_NOT)
		memset(out, 0, sizeof(*out));
	return 0;
}

void exit_plan__clear(struct exit_plan *p)
{
	if (!p)
		return;
	free(p->ret_offs);
	free(p->tail_offs);
	free(p->tail_cond);
	free(p->ind);
	memset(p, 0, sizeof(*p));
}
