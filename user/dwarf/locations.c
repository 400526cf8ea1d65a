// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * locations.c: DWARF location expressions and lists evaluated at a pc
 * (registers, memory at register + offset, the frame base and the CFA,
 * constants, pieces), and the rule for a parameter before the prologue.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dwarf/debuginfo_impl.h"

/* ------------------------------------------------------------------ */
/* DWARF locations                                                     */


static bool reg_ok(Dwarf_Word r)
{
	return r <= DREG_R15 || (r >= DREG_XMM0 && r <= DREG_ST0 + 7);
}

static void reg_piece(struct dloc_piece *p, Dwarf_Word r)
{
	memset(p, 0, sizeof(*p));
	p->reg = (uint8_t)r;
	if (r >= DREG_ST0)
		p->kind = DLOC_X87;
	else if (r >= DREG_XMM0)
		p->kind = DLOC_XMM;
	else
		p->kind = DLOC_REG;
}

static Dwarf_CFI *get_cfi(struct debuginfo *di)
{
	if (!di->cfi_eh_tried) {
		di->cfi_eh_tried = true;
		di->cfi_eh = dwarf_getcfi_elf(di->elf);
	}
	return di->cfi_eh ? di->cfi_eh : dwarf_getcfi(di->dwarf);
}

/* The CFA at PC as register + offset. */
int loc__cfa_at(struct debuginfo *di, uint64_t pc, uint8_t *reg, int64_t *off)
{
	Dwarf_CFI *cfi = get_cfi(di);
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t n;
	int err = -ENOTSUP;

	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
		return -ENOTSUP;
	if (dwarf_frame_cfa(frame, &ops, &n) == 0 && n == 1) {
		if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
			*reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
			*off = (int64_t)ops[0].number;
			err = 0;
		} else if (ops[0].atom == DW_OP_bregx && ops[0].number <= DREG_R15) {
			*reg = (uint8_t)ops[0].number;
			*off = (int64_t)ops[0].number2;
			err = 0;
		}
	}
	free(frame);
	return err;
}

/* The frame base at PC as register + offset (memory addresses base on it). */
static int frame_base(struct loc_ctx *c, uint8_t *reg, int64_t *off)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr_integrate(c->func, DW_AT_frame_base, &a) ||
	    dwarf_getlocation_addr(&a, c->pc, &ops, &n, 1) != 1 || n != 1)
		return -ENOTSUP;
	switch (ops[0].atom) {
	case DW_OP_call_frame_cfa:
		return loc__cfa_at(c->di, c->pc, reg, off);
	case DW_OP_breg0 ... DW_OP_breg15:
		*reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
		*off = (int64_t)ops[0].number;
		return 0;
	case DW_OP_reg0 ... DW_OP_reg15:
		/* the frame base is the register's value */
		*reg = (uint8_t)(ops[0].atom - DW_OP_reg0);
		*off = 0;
		return 0;
	default:
		return -ENOTSUP;
	}
}

static bool is_const_op(const Dwarf_Op *op, uint64_t *v)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
		*v = op->atom - DW_OP_lit0;
		return true;
	}
	switch (op->atom) {
	case DW_OP_const1u:
	case DW_OP_const2u:
	case DW_OP_const4u:
	case DW_OP_const8u:
	case DW_OP_constu:
	case DW_OP_const1s:
	case DW_OP_const2s:
	case DW_OP_const4s:
	case DW_OP_const8s:
	case DW_OP_consts:
		*v = op->number;
		return true;
	default:
		return false;
	}
}

/* DW_OP_convert at OP of the location ATTR: the size in bytes of the
 * base type it converts to (0 for the generic type: no change) and
 * whether that type is signed; -1 when the type cannot be read. */
static int convert_type(Dwarf_Attribute *attr, const Dwarf_Op *op, bool *is_signed)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	Dwarf_Word enc;
	int size;

	*is_signed = false;
	if (op->number == 0)
		return 0;
	if (dwarf_getlocation_die(attr, op, &t) != 0 ||
	    dwarf_tag(&t) != DW_TAG_base_type ||
	    dwarf_formudata(dwarf_attr(&t, DW_AT_encoding, &a), &enc) != 0)
		return -1;
	size = dwarf_bytesize(&t);
	if (size <= 0 || size > 8)
		return -1;
	*is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
	return size;
}

/* After a DW_OP_bregN at OPS[I]: the DW_OP_and and DW_OP_shr by constants
 * and the DW_OP_convert that end in DW_OP_stack_value (rustc reads an
 * enum's tag and payload out of one register: breg5 0; constu 0xffffffff;
 * and; lit1; and; stack_value; clang's DWARF 5 truncates a struct member
 * out of a register: breg5 0; constu 32; shr; convert u64; convert u16;
 * stack_value).  Folds them into CUR's shift and mask and returns the
 * index past DW_OP_stack_value, or 0 when the ops are anything else.
 * *SEXT: the bytes a signed conversion narrowed the value to, which a
 * wider piece would have sign-extended (0: none). */
static size_t reg_arith(Dwarf_Attribute *attr, const Dwarf_Op *ops, size_t n, size_t i,
			struct dloc_piece *cur, uint32_t *sext)
{
	uint64_t mask = UINT64_MAX, v;
	unsigned shift = 0, width = 8;
	bool is_signed;
	int size;

	*sext = 0;
	/* the stack_value may be followed by a DW_OP_piece (clang's pieces
	 * of a struct passed in registers): stop there, not at the end */
	for (i++; i < n && ops[i].atom != DW_OP_stack_value;) {
		if (ops[i].atom == DW_OP_convert || ops[i].atom == DW_OP_GNU_convert) {
			size = convert_type(attr, &ops[i], &is_signed);
			if (size < 0)
				return 0;
			if (size && (unsigned)size < width) {
				width = (unsigned)size;
				mask &= (1ULL << (8 * width)) - 1;
				*sext = is_signed ? width : 0;
			}
			i++;
			continue;
		}
		/* arithmetic on a narrowed signed value: not a shift and mask */
		if (i + 1 >= n || !is_const_op(&ops[i], &v) || *sext)
			return 0;
		if (ops[i + 1].atom == DW_OP_and) {
			mask &= v;
		} else if (ops[i + 1].atom == DW_OP_shr && v < 64 && shift + v < 64) {
			shift += (unsigned)v;
			mask >>= v;
		} else {
			return 0;
		}
		i += 2;
	}
	if (i >= n || ops[i].atom != DW_OP_stack_value)
		return 0;
	cur->shift = (uint8_t)shift;
	cur->mask = mask == UINT64_MAX ? 0 : mask;
	return i + 1;
}

/* Evaluate OPS (a location description of a SIZE-byte value) into L.
 * 0, or -ENOTSUP for anything outside the supported subset. */
static int eval_ops(struct loc_ctx *c, Dwarf_Attribute *attr, const Dwarf_Op *ops, size_t n,
		    uint32_t size, struct dloc *l)
{
	struct dloc_piece cur;
	bool have = false;
	uint32_t used = 0;
	size_t i = 0;

	memset(l, 0, sizeof(*l));
	if (!n)
		return -ENOTSUP; /* empty: optimized out here */
	while (i < n) {
		const Dwarf_Op *op = &ops[i];
		bool stack_value = i + 1 < n && ops[i + 1].atom == DW_OP_stack_value;
		uint64_t v;

		if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31) {
			if (have || !reg_ok(op->atom - DW_OP_reg0))
				return -ENOTSUP;
			reg_piece(&cur, op->atom - DW_OP_reg0);
			have = true;
			i++;
		} else if (op->atom == DW_OP_regx) {
			if (have || !reg_ok(op->number))
				return -ENOTSUP;
			reg_piece(&cur, op->number);
			have = true;
			i++;
		} else if ((op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) ||
			   op->atom == DW_OP_bregx) {
			Dwarf_Word r = op->atom == DW_OP_bregx ? op->number : (Dwarf_Word)(op->atom - DW_OP_breg0);
			int64_t off = (int64_t)(op->atom == DW_OP_bregx ? op->number2 : op->number);

			size_t next = 0;
			uint32_t sext = 0;

			if (have || r > DREG_R15)
				return -ENOTSUP;
			memset(&cur, 0, sizeof(cur));
			if (!stack_value && i + 1 < n && ops[i + 1].atom != DW_OP_piece &&
			    ops[i + 1].atom != DW_OP_deref) {
				next = reg_arith(attr, ops, n, i, &cur, &sext);
				if (!next)
					return -ENOTSUP;
				/* a piece wider than the signed value it holds
				 * would be its sign extension: not a mask */
				if (sext && (next < n && ops[next].atom == DW_OP_piece ?
					     ops[next].number : size - used) > sext)
					return -ENOTSUP;
			}
			cur.kind = stack_value || next ? DLOC_REG : DLOC_MEM;
			cur.reg = (uint8_t)r;
			cur.off = off;
			have = true;
			i = next ? next : i + (stack_value ? 2 : 1);
		} else if (op->atom == DW_OP_fbreg) {
			uint8_t r;
			int64_t off;

			if (have || stack_value || frame_base(c, &r, &off) != 0)
				return -ENOTSUP;
			memset(&cur, 0, sizeof(cur));
			cur.kind = DLOC_MEM;
			cur.reg = r;
			cur.off = off + (int64_t)op->number;
			c->frame_based = true;
			have = true;
			i++;
		} else if (is_const_op(op, &v)) {
			if (have || !stack_value)
				return -ENOTSUP;
			memset(&cur, 0, sizeof(cur));
			cur.kind = DLOC_CONST;
			cur.value = v;
			have = true;
			i += 2;
		} else if (op->atom == DW_OP_implicit_value) {
			if (have || op->number > 8)
				return -ENOTSUP;
			memset(&cur, 0, sizeof(cur));
			cur.kind = DLOC_CONST;
			memcpy(&cur.value, (const void *)(uintptr_t)op->number2, op->number);
			have = true;
			i++;
		} else if (op->atom == DW_OP_piece) {
			if (l->n >= DLOC_MAX_PIECES || op->number > UINT32_MAX)
				return -ENOTSUP;
			if (!have) {
				memset(&cur, 0, sizeof(cur));
				cur.kind = DLOC_NONE; /* this part is optimized out */
			}
			cur.size = (uint32_t)op->number;
			l->p[l->n++] = cur;
			used += cur.size;
			have = false;
			i++;
		} else if (op->atom == DW_OP_deref && have && cur.kind == DLOC_MEM && !cur.deref) {
			/* the value is at the address stored in that slot (a
			 * C++ object passed by invisible reference at -O0) */
			cur.deref = 1;
			i++;
		} else if (op->atom == DW_OP_GNU_uninit) {
			i++;
		} else {
			return -ENOTSUP; /* entry_value, deref, arithmetic, ... */
		}
	}
	if (have) {
		if (l->n >= DLOC_MAX_PIECES)
			return -ENOTSUP;
		cur.size = size > used ? size - used : 0;
		if (cur.kind == DLOC_REG && cur.size > 8)
			cur.size = 8;
		l->p[l->n++] = cur;
	}
	/* a location made only of optimized-out pieces tells nothing */
	for (uint8_t k = 0; k < l->n; k++)
		if (l->p[k].kind != DLOC_NONE)
			return 0;
	return -ENOTSUP;
}

/* The end of the prologue: the first line row flagged prologue_end, else
 * the second address among the function's rows. */
static int prologue_end(Dwarf_Die *func, uint64_t low, uint64_t *out)
{
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t n;
	Dwarf_Addr high;
	uint64_t second = UINT64_MAX, pe = UINT64_MAX;

	if (!dwarf_diecu(func, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &n) != 0)
		return -ENOENT;
	if (dwarf_highpc(func, &high) != 0)
		high = low + 1;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *line = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		bool flag = false, end = false;

		if (!line || dwarf_lineaddr(line, &a) != 0 || a < low || a >= high)
			continue;
		if (dwarf_lineendsequence(line, &end) == 0 && end)
			continue;
		if (dwarf_lineprologueend(line, &flag) == 0 && flag && a < pe)
			pe = a;
		if (a > low && a < second)
			second = a;
	}
	if (pe != UINT64_MAX)
		*out = pe;
	else if (second != UINT64_MAX)
		*out = second;
	else
		return -ENOENT;
	return 0;
}

static bool before_prologue(Dwarf_Die *func, uint64_t low, uint64_t pc)
{
	uint64_t pe;

	if (prologue_end(func, low, &pe) == 0)
		return pc < pe;
	return pc <= low + 4;
}

static int const_value_loc(Dwarf_Attribute *a, uint32_t size, struct dloc *l)
{
	Dwarf_Word u;
	Dwarf_Block b;

	memset(l, 0, sizeof(*l));
	l->n = 1;
	l->p[0].kind = DLOC_CONST;
	l->p[0].size = size > 8 ? 8 : size;
	if (dwarf_formudata(a, &u) == 0) {
		l->p[0].value = u;
		return 0;
	}
	if (dwarf_formblock(a, &b) == 0 && b.length <= 8) {
		memcpy(&l->p[0].value, b.data, b.length);
		l->p[0].size = (uint32_t)b.length;
		return 0;
	}
	return -ENOTSUP;
}

bool loc__not_passed(Dwarf_Die *param, uint64_t pc)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr(param, DW_AT_location, &a) ||
	    dwarf_getlocation_addr(&a, pc, &ops, &n, 1) != 1)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ops[i].atom == DW_OP_GNU_parameter_ref)
			return true;
	return false;
}

/* L has a piece DWARF gives a place that overlaps bytes [FROM, TO). */
static bool described(const struct dloc *l, uint32_t from, uint32_t to)
{
	uint32_t o = 0;

	for (uint8_t k = 0; k < l->n; o += l->p[k++].size)
		if (l->p[k].kind != DLOC_NONE && o < to && o + l->p[k].size > from)
			return true;
	return false;
}

/* At the entry, the parts of L that DWARF says are optimized out take the
 * ABI location's bytes at the same offsets (clang 14 leaves the byte of a
 * struct member passed in rdi an empty piece at the very entry, where rdi
 * holds it) -- only in a register or memory DWARF reads some other part
 * of: one the callee uses, so the caller passed all of it.  A part alone
 * in its register may not be passed at all (LLVM's callers leave a dead
 * eightbyte of a struct unset). */
static void fill_from_abi(struct dloc *l, const struct dloc *abi)
{
	uint32_t o = 0;

	for (uint8_t k = 0; k < l->n; o += l->p[k++].size) {
		struct dloc_piece *p = &l->p[k];
		uint32_t ao = 0;

		if (p->kind != DLOC_NONE)
			continue;
		for (uint8_t j = 0; j < abi->n; ao += abi->p[j++].size) {
			const struct dloc_piece *a = &abi->p[j];
			uint32_t size = p->size, d = o - ao;

			if (o < ao || o + size > ao + a->size)
				continue;
			if (!described(l, ao, ao + a->size))
				break;
			if (a->kind == DLOC_REG && !a->shift && !a->mask && !a->off && d < 8) {
				*p = *a;
				p->shift = (uint8_t)(8 * d);
			} else if (a->kind == DLOC_MEM && !a->deref) {
				*p = *a;
				p->off += d;
			}
			p->size = size;
			break;
		}
	}
}

/* The compilation unit of DIE was made by an LLVM compiler (clang, rustc,
 * flang, ...: "clang" is in each one's DW_AT_producer). */
static bool llvm_producer(Dwarf_Die *die)
{
	Dwarf_Die cu;
	Dwarf_Attribute a;
	const char *p;

	if (!dwarf_diecu(die, &cu, NULL, NULL) || !dwarf_attr(&cu, DW_AT_producer, &a))
		return false;
	p = dwarf_formstring(&a);
	return p && strstr(p, "clang");
}

void loc__param(struct loc_ctx *c, Dwarf_Die *param, const struct ctype *t,
		      uint64_t low, const struct dloc *abi, struct dloc *out)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;
	uint32_t size = ctype__concrete(t)->size;

	if (dwarf_attr_integrate(param, DW_AT_const_value, &a) && const_value_loc(&a, size, out) == 0) {
		out->source = DLOC_SRC_DWARF;
		return;
	}
	c->frame_based = false;
	if (dwarf_attr(param, DW_AT_location, &a) &&
	    dwarf_getlocation_addr(&a, c->pc, &ops, &n, 1) == 1 &&
	    eval_ops(c, &a, ops, n, size, out) == 0) {
		if (!c->frame_based || !before_prologue(c->func, low, c->pc)) {
			if (c->at_entry)
				fill_from_abi(out, abi);
			out->source = DLOC_SRC_DWARF;
			return;
		}
		*out = *abi; /* rule a: the slot is not filled yet */
		out->source = DLOC_SRC_ABI;
		return;
	}
	*out = *abi; /* rule b (none for a parameter not passed: optimized out) */
	out->source = DLOC_SRC_ABI_FALLBACK;
	/* LLVM gives a parameter the function never uses no location at all,
	 * and its callers need not set that register: dead argument
	 * elimination passes poison there (clang -O2 un2(111, 222) leaves
	 * rsi as it was).  The ABI register would show a stale value. */
	if (loc__not_passed(param, c->pc) ||
	    (!dwarf_hasattr(param, DW_AT_location) && llvm_producer(param))) {
		memset(out, 0, sizeof(*out));
		out->source = DLOC_SRC_DWARF;
	}
}

