// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * abi.c: where values live by the ABI when DWARF does not say: the SysV
 * x86-64 classification of arguments and return values, and Go's register
 * ABI (ABIInternal).
 */
#include <string.h>
#include "dwarf/debuginfo_impl.h"

/* ------------------------------------------------------------------ */
/* SysV x86-64 classification                                          */

enum abi_cls { AC_NONE = 0, AC_INT, AC_SSE, AC_SSEUP, AC_X87, AC_X87UP, AC_MEM };

static enum abi_cls cls_merge(enum abi_cls a, enum abi_cls b)
{
	if (a == b)
		return a;
	if (a == AC_NONE)
		return b;
	if (b == AC_NONE)
		return a;
	if (a == AC_MEM || b == AC_MEM)
		return AC_MEM;
	if (a == AC_INT || b == AC_INT)
		return AC_INT;
	if (a == AC_X87 || a == AC_X87UP || b == AC_X87 || b == AC_X87UP)
		return AC_MEM;
	return AC_SSE;
}

static void cls_put(enum abi_cls cls[2], uint32_t off, enum abi_cls c)
{
	uint32_t i = off / 8;

	if (i < 2)
		cls[i] = cls_merge(cls[i], c);
	else
		cls[0] = AC_MEM;
}

static void classify_at(const struct ctype *t, uint32_t off, enum abi_cls cls[2], int depth)
{
	t = ctype__concrete(t);
	if (!t || depth > MAX_TYPE_DEPTH) {
		cls[0] = AC_MEM;
		return;
	}
	switch (t->kind) {
	case CTYPE_INT:
	case CTYPE_UINT:
	case CTYPE_CHAR:
	case CTYPE_BOOL:
	case CTYPE_ENUM:
	case CTYPE_POINTER:
		for (uint32_t b = 0; b < t->size; b += 8)
			cls_put(cls, off + b, AC_INT);
		break;
	case CTYPE_FLOAT:
		if (t->is_x87 && !t->is_complex) {
			cls_put(cls, off, AC_X87);
			cls_put(cls, off + 8, AC_X87UP);
		} else if (t->is_complex && t->is_x87) {
			cls[0] = AC_MEM;
		} else if (t->is_complex) {
			/* two parts of size/2 each: float pair in one eightbyte */
			cls_put(cls, off, AC_SSE);
			cls_put(cls, off + t->size / 2, AC_SSE);
		} else if (t->size == 16) {
			cls_put(cls, off, AC_SSE); /* __float128 */
			cls_put(cls, off + 8, AC_SSEUP);
		} else {
			cls_put(cls, off, AC_SSE);
		}
		break;
	case CTYPE_STRUCT:
	case CTYPE_UNION:
		for (size_t i = 0; i < t->n_members; i++) {
			const struct ctype_member *m = &t->members[i];

			if (m->bit_size) {
				cls_put(cls, m->bit_offset / 8, AC_INT);
				continue;
			}
			/* unaligned fields (packed) make the whole thing MEMORY */
			if (m->offset % dtype__align(m->type, 0)) {
				cls[0] = AC_MEM;
				return;
			}
			classify_at(m->type, off + m->offset, cls, depth + 1);
		}
		break;
	case CTYPE_ARRAY: {
		const struct ctype *e = ctype__concrete(t->target);

		if (!e || !e->size)
			break;
		for (uint32_t i = 0; i < t->count && i * e->size < 16; i++)
			classify_at(e, off + i * e->size, cls, depth + 1);
		break;
	}
	default:
		cls[0] = AC_MEM;
		break;
	}
}

/* Eightbyte classes of a value of type T; returns the count of eightbytes
 * (0: an empty type, passed as nothing), cls[0] == AC_MEM: in memory. */
static int classify(const struct ctype *t, enum abi_cls cls[2])
{
	cls[0] = cls[1] = AC_NONE;
	t = ctype__concrete(t);
	if (!t || t->size == 0)
		return 0;
	if (t->size > 16 || ((t->kind == CTYPE_STRUCT || t->kind == CTYPE_UNION) && t->by_reference)) {
		cls[0] = AC_MEM;
		return 1;
	}
	classify_at(t, 0, cls, 0);
	if (cls[0] == AC_MEM || cls[1] == AC_MEM) {
		cls[0] = AC_MEM;
		return 1;
	}
	if (cls[1] == AC_X87UP && cls[0] != AC_X87) {
		cls[0] = AC_MEM;
		return 1;
	}
	if (cls[1] == AC_SSEUP && cls[0] != AC_SSE && cls[0] != AC_SSEUP)
		cls[1] = AC_SSE;
	if (cls[0] == AC_NONE)
		cls[0] = AC_SSE; /* padding-only eightbyte: nothing to read */
	return t->size > 8 ? 2 : 1;
}

static const uint8_t abi_int_regs[6] = { DREG_RDI, DREG_RSI, DREG_RDX, DREG_RCX, DREG_R8, DREG_R9 };

int dloc__arg_register(const struct dloc *l, bool go)
{
	static const uint8_t go_regs[6] = { DREG_RAX, DREG_RBX, DREG_RCX, DREG_RDI, DREG_RSI, DREG_R8 };

	if (l->n != 1 || l->p[0].kind != DLOC_REG || l->p[0].off)
		return -1;
	for (int i = 0; i < 6; i++)
		if (l->p[0].reg == (go ? go_regs : abi_int_regs)[i])
			return i;
	return -1;
}

void dloc__piece_add(struct dloc *l, enum dloc_kind kind, uint8_t reg, uint32_t size, int64_t off)
{
	if (l->n >= DLOC_MAX_PIECES)
		return;
	l->p[l->n].kind = (uint8_t)kind;
	l->p[l->n].reg = reg;
	l->p[l->n].size = size;
	l->p[l->n].off = off;
	l->p[l->n].value = 0;
	l->p[l->n].deref = 0;
	l->p[l->n].shift = 0;
	l->p[l->n].mask = 0;
	l->n++;
}

/* The return value's location at the return; sets *HIDDEN when the caller
 * passes the buffer address in rdi. */
void abi__sysv_return(const struct ctype *rt, struct dloc *l, bool *hidden)
{
	const struct ctype *t = ctype__concrete(rt);
	enum abi_cls cls[2];
	int n = classify(t, cls), ni = 0, ns = 0;
	static const uint8_t ret_int[2] = { DREG_RAX, DREG_RDX };

	memset(l, 0, sizeof(*l));
	l->source = DLOC_SRC_ABI;
	*hidden = false;
	if (!n)
		return;
	if (t->kind == CTYPE_FLOAT && t->is_complex && t->is_x87) {
		dloc__piece_add(l, DLOC_X87, DREG_ST0, 16, 0);
		dloc__piece_add(l, DLOC_X87, DREG_ST0 + 1, 16, 0);
		return;
	}
	if (cls[0] == AC_MEM) {
		dloc__piece_add(l, DLOC_MEM, DREG_RAX, t->size, 0);
		*hidden = true;
		return;
	}
	for (int i = 0; i < n; i++) {
		uint32_t sz = t->size - 8u * (uint32_t)i;

		if (sz > 8)
			sz = 8;
		switch (cls[i]) {
		case AC_INT:
			dloc__piece_add(l, DLOC_REG, ret_int[ni++], sz, 0);
			break;
		case AC_SSE:
			dloc__piece_add(l, DLOC_XMM, (uint8_t)(DREG_XMM0 + ns++), sz, 0);
			break;
		case AC_SSEUP:
			if (l->n)
				l->p[l->n - 1].size += sz;
			break;
		case AC_X87:
			dloc__piece_add(l, DLOC_X87, DREG_ST0, t->size, 0);
			return;
		default:
			break;
		}
	}
}

/* ABI locations of every parameter at the entry (TYPES[i]) into LOCS. */
void abi__sysv_params(const struct ctype *const *types, size_t n, bool hidden, struct dloc *locs)
{
	int ni = hidden ? 1 : 0, ns = 0;
	uint32_t stack = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ctype *t = ctype__concrete(types[i]);
		struct dloc *l = &locs[i];
		enum abi_cls cls[2];
		int neb = classify(t, cls), need_i = 0, need_s = 0;

		memset(l, 0, sizeof(*l));
		l->source = DLOC_SRC_ABI;
		if (!neb)
			continue;
		if ((t->kind == CTYPE_STRUCT || t->kind == CTYPE_UNION) && t->by_reference) {
			/* C++: the caller's copy, by invisible reference */
			if (ni < 6)
				dloc__piece_add(l, DLOC_MEM, abi_int_regs[ni++], t->size, 0);
			continue;
		}
		if (cls[0] != AC_MEM && cls[0] != AC_X87) {
			for (int k = 0; k < neb; k++) {
				need_i += cls[k] == AC_INT;
				need_s += cls[k] == AC_SSE;
			}
			if (ni + need_i <= 6 && ns + need_s <= 8) {
				for (int k = 0; k < neb; k++) {
					uint32_t sz = t->size - 8u * (uint32_t)k;

					if (sz > 8)
						sz = 8;
					if (cls[k] == AC_INT)
						dloc__piece_add(l, DLOC_REG, abi_int_regs[ni++], sz, 0);
					else if (cls[k] == AC_SSE)
						dloc__piece_add(l, DLOC_XMM, (uint8_t)(DREG_XMM0 + ns++), sz, 0);
					else if (cls[k] == AC_SSEUP && l->n)
						l->p[l->n - 1].size += sz;
				}
				continue;
			}
		}
		/* In memory, in the caller's argument area: [sp] at the entry
		 * is the return address, the area starts at sp + 8. */
		uint32_t al = dtype__align(t, 0);

		al = al > 8 ? 16 : 8;
		stack = (stack + al - 1) / al * al;
		dloc__piece_add(l, DLOC_MEM, DREG_RSP, t->size, 8 + (int64_t)stack);
		stack += (t->size + 7) / 8 * 8;
	}
}

/*
 * Go's register ABI (ABIInternal, Go 1.17+ on amd64): each value is split
 * into its scalar parts (a string is a pointer and a length, a slice
 * three words, an interface two), the parts take the next integer
 * registers (rax, rbx, rcx, rdi, rsi, r8-r11) or float registers (x0-x14)
 * in order; a value whose parts do not all fit goes to the stack whole,
 * and the registers it would have used stay free.  Results are assigned
 * the same way from rax again.
 */
static const uint8_t go_int_regs[9] = { DREG_RAX, DREG_RBX, DREG_RCX, DREG_RDI, DREG_RSI,
					DREG_R8,  DREG_R9,  DREG_R10, DREG_R11 };

static bool go_assign(const struct ctype *t, struct dloc *l, int *ni, int *nf, int depth)
{
	t = ctype__concrete(t);
	if (!t || depth > 8)
		return false;
	switch (t->kind) {
	case CTYPE_VOID:
		return true;
	case CTYPE_STRUCT: {
		uint32_t at = 0;

		for (size_t i = 0; i < t->n_members; i++) {
			const struct ctype_member *m = &t->members[i];

			if (m->bit_size)
				return false;
			if (m->offset > at) /* padding: no register holds it */
				dloc__piece_add(l, DLOC_CONST, 0, m->offset - at, 0);
			if (!go_assign(m->type, l, ni, nf, depth + 1))
				return false;
			at = m->offset + ctype__concrete(m->type)->size;
		}
		if (t->size > at)
			dloc__piece_add(l, DLOC_CONST, 0, t->size - at, 0);
		return true;
	}
	case CTYPE_ARRAY:
		if (!t->count)
			return true;
		return t->count == 1 && go_assign(t->target, l, ni, nf, depth + 1);
	case CTYPE_FLOAT:
		if (*nf + (t->is_complex ? 2 : 1) > 15)
			return false;
		for (int k = 0; k < (t->is_complex ? 2 : 1); k++)
			dloc__piece_add(l, DLOC_XMM, (uint8_t)(DREG_XMM0 + (*nf)++),
				  t->is_complex ? t->size / 2 : t->size, 0);
		return true;
	case CTYPE_UNION:
		return false;
	default: /* integers, bool, pointers, maps, channels, funcs */
		if (*ni >= 9 || t->size > 8)
			return false;
		dloc__piece_add(l, DLOC_REG, go_int_regs[(*ni)++], t->size, 0);
		return true;
	}
}

/* Go ABI locations of N values (TYPES) into LOCS; their stack area from
 * sp + BASE; returns the stack bytes used. */
uint32_t abi__go(const struct ctype *const *types, size_t n, int64_t base, struct dloc *locs)
{
	int ni = 0, nf = 0;
	uint32_t stack = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ctype *t = ctype__concrete(types[i]);
		struct dloc *l = &locs[i];
		int ni0 = ni, nf0 = nf;
		uint32_t al;

		memset(l, 0, sizeof(*l));
		l->source = DLOC_SRC_ABI;
		if (go_assign(t, l, &ni, &nf, 0) && l->n <= DLOC_MAX_PIECES - 1)
			continue;
		ni = ni0;
		nf = nf0;
		memset(l, 0, sizeof(*l));
		l->source = DLOC_SRC_ABI;
		al = dtype__align(t, 0);
		al = al > 8 ? 8 : al ? al : 1;
		stack = (stack + al - 1) / al * al;
		dloc__piece_add(l, DLOC_MEM, DREG_RSP, t->size, base + (int64_t)stack);
		stack += t->size;
	}
	return (stack + 7) / 8 * 8;
}

