// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* plan.c: fetch plans and their layout (see plan.h), --capture parsing. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "core/log.h"
#include "dwarf/plan.h"

/* Argument registers in order: the call record's args[] (DWARF numbers). */
static const uint8_t c_arg_regs[6] = { DREG_RDI, DREG_RSI, DREG_RDX, DREG_RCX, DREG_R8, DREG_R9 };
/* Go's first six (ABIInternal): what trace.bpf.c records as arg0..arg5. */
static const uint8_t go_arg_regs[6] = { DREG_RAX, DREG_RBX, DREG_RCX, DREG_RDI, DREG_RSI, DREG_R8 };

#define MAX_DEREFS 256        /* recorded derefs, planned or dropped */
#define MAX_DEREF_ELEMS 64    /* array elements searched for pointers */

/* ------------------------------------------------------------------ */
/* --capture                                                           */

static size_t ident_len(const char *s)
{
	size_t n = 0;

	if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

/* A name or a decimal count at S, N bytes. */
static int parse_len(const char *spec, const char *s, size_t n, struct capture_spec *out)
{
	if (n && isdigit((unsigned char)s[0])) {
		uint64_t v = 0;

		for (size_t i = 0; i < n; i++) {
			if (!isdigit((unsigned char)s[i]) || v > (UINT64_MAX - 9) / 10) {
				log_error("--capture %s: bad count '%.*s'", spec, (int)n, s);
				return -EINVAL;
			}
			v = v * 10 + (uint64_t)(s[i] - '0');
		}
		out->len_const = v;
		return 0;
	}
	if (!n || ident_len(s) != n) {
		log_error("--capture %s: bad count '%.*s' (an argument name or a number)", spec,
			  (int)n, s);
		return -EINVAL;
	}
	out->len = strndup(s, n);
	return out->len ? 0 : -ENOMEM;
}

int capture_spec__parse(const char *s, struct capture_spec *out)
{
	const char *eq, *p, *rest;
	size_t n;
	int err = -EINVAL;

	memset(out, 0, sizeof(*out));
	eq = strchr(s, '=');
	if (!eq) {
		log_error("--capture %s: expected NAME=PTR:LEN, NAME=PTR[COUNT] or NAME=PTR:str", s);
		return -EINVAL;
	}
	n = ident_len(s);
	if (!n || s + n != eq) {
		log_error("--capture %s: bad name '%.*s'", s, (int)(eq - s), s);
		return -EINVAL;
	}
	out->name = strndup(s, n);
	out->text = strdup(s);
	p = eq + 1;
	n = ident_len(p);
	if (!out->name || !out->text) {
		err = -ENOMEM;
		goto fail;
	}
	if (!n) {
		log_error("--capture %s: expected an argument name after '='", s);
		goto fail;
	}
	out->ptr = strndup(p, n);
	if (!out->ptr) {
		err = -ENOMEM;
		goto fail;
	}
	rest = p + n;
	if (!strcmp(rest, ":str")) {
		out->kind = CAPTURE_STR;
		return 0;
	}
	if (rest[0] == ':') {
		out->kind = CAPTURE_BUF;
		rest++;
		err = parse_len(s, rest, strlen(rest), out);
		if (err)
			goto fail;
		return 0;
	}
	if (rest[0] == '[') {
		const char *close = strchr(rest, ']');

		if (!close || close[1] != '\0') {
			log_error("--capture %s: expected NAME=PTR[COUNT]", s);
			goto fail;
		}
		out->kind = CAPTURE_ARRAY;
		err = parse_len(s, rest + 1, (size_t)(close - rest - 1), out);
		if (err)
			goto fail;
		return 0;
	}
	log_error("--capture %s: expected ':LEN', '[COUNT]' or ':str' after '%s'", s, out->ptr);
fail:
	capture_spec__clear(out);
	return err;
}

void capture_spec__clear(struct capture_spec *c)
{
	if (!c)
		return;
	free(c->text);
	free(c->name);
	free(c->ptr);
	free(c->len);
	memset(c, 0, sizeof(*c));
}

void plan_opts__init(struct plan_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->strlen = PLAN_DEFAULT_STRLEN;
	o->deref = PLAN_DEFAULT_DEREF;
	o->capture_max = PLAN_DEFAULT_CAPTURE_MAX;
}

/* ------------------------------------------------------------------ */
/* Building                                                            */

struct builder {
	const struct func_sig *sig;
	const struct plan_opts *o;
	struct cmon_fetch_plan *plan[2]; /* [0] entry, [1] return */
	uint64_t bytes[2];               /* item sizes so far, per plan */
	struct plan_layout *l;
	size_t cap_derefs;
};

/* The register recorded as argI for this function. */
static uint8_t arg_reg(const struct builder *b, int i)
{
	return (b->sig && b->sig->go ? go_arg_regs : c_arg_regs)[i];
}

static int arg_index(const struct builder *b, uint8_t reg)
{
	for (int i = 0; i < 6; i++)
		if (arg_reg(b, i) == reg)
			return i;
	return -1;
}

/* Append an item to plan AT (0 entry, 1 return); its index, or -1 when the
 * plan is full (item count or record bytes). */
static int add_item(struct builder *b, int at, const struct cmon_fetch *f)
{
	struct cmon_fetch_plan *p = b->plan[at];
	uint32_t size = f->kind == CMON_FETCH_REG ? 8 : f->size;

	if (p->n >= CMON_MAX_FETCH || b->bytes[at] + size > CMON_CAPTURE_MAX) {
		b->l->n_dropped++;
		return -1;
	}
	p->items[p->n] = *f;
	b->bytes[at] += size;
	return (int)p->n++;
}

static void fetch_init(struct cmon_fetch *f, uint8_t kind)
{
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->len_reg = -1;
	f->elem_size = 1;
}

/* Base the fetch F on memory at register REG + OFF ("the stack pointer"
 * for rsp). */
static void fetch_mem_base(struct cmon_fetch *f, uint8_t reg, int64_t off)
{
	if (reg == DREG_RSP) {
		f->base = CMON_BASE_SP;
	} else {
		f->base = CMON_BASE_REG;
		f->reg = reg;
	}
	f->off = off;
}

/* The sources of a value from its DWARF location. */
static void plan_value_src(struct builder *b, struct plan_value *v, const struct dloc *loc)
{
	int at = v->at_return ? 1 : 0;

	v->n_src = 0;
	for (uint8_t i = 0; i < loc->n && i < DLOC_MAX_PIECES; i++) {
		const struct dloc_piece *p = &loc->p[i];
		struct plan_src *s = &v->src[v->n_src++];
		struct cmon_fetch f;
		int idx;

		memset(s, 0, sizeof(*s));
		s->size = p->size;
		s->at_return = v->at_return;
		switch (p->kind) {
		case DLOC_REG:
			s->addend = p->off;
			s->shift = p->shift;
			s->mask = p->mask;
			if (!v->at_return && arg_index(b, p->reg) >= 0) {
				s->kind = PSRC_ARG;
				s->index = (uint8_t)arg_index(b, p->reg);
				break;
			}
			if (v->at_return && p->reg == DREG_RAX) {
				s->kind = PSRC_RET;
				break;
			}
			fetch_init(&f, CMON_FETCH_REG);
			f.reg = p->reg;
			f.size = 8;
			idx = add_item(b, at, &f);
			if (idx < 0) {
				s->kind = PSRC_NONE;
				s->reason = PU_TOO_MANY_ITEMS;
				break;
			}
			s->kind = PSRC_ITEM;
			s->item_kind = CMON_FETCH_REG;
			s->index = (uint8_t)idx;
			s->reg = p->reg;
			break;
		case DLOC_MEM:
			fetch_init(&f, CMON_FETCH_MEM);
			fetch_mem_base(&f, p->reg, p->off);
			f.deref = p->deref;
			f.size = p->size > CMON_ITEM_MAX ? CMON_ITEM_MAX : p->size;
			idx = add_item(b, at, &f);
			if (idx < 0) {
				s->kind = PSRC_NONE;
				s->reason = PU_TOO_MANY_ITEMS;
				break;
			}
			s->kind = PSRC_ITEM;
			s->item_kind = CMON_FETCH_MEM;
			s->index = (uint8_t)idx;
			break;
		case DLOC_CONST:
			s->kind = PSRC_CONST;
			s->value = p->value;
			break;
		case DLOC_XMM:
			s->kind = PSRC_NONE;
			s->reason = PU_XMM;
			s->reg = p->reg;
			break;
		case DLOC_X87:
			s->kind = PSRC_NONE;
			s->reason = PU_X87;
			s->reg = p->reg;
			break;
		default:
			s->kind = PSRC_NONE;
			s->reason = PU_OPTIMIZED_OUT;
			break;
		}
	}
	if (!v->n_src) {
		v->src[0].kind = PSRC_NONE;
		v->src[0].reason = PU_OPTIMIZED_OUT;
		v->src[0].size = v->type ? v->type->size : 0;
		v->n_src = 1;
	}
}

/* Where the 8-byte pointer at OFF of a value or a deref's item is read
 * from: fills F's base; false when it cannot be addressed (a constant, an
 * unavailable piece, a misaligned piece of registers). */
static bool pointer_base(struct builder *b, int value, int parent, uint32_t off,
			 struct cmon_fetch *f)
{
	const struct plan_layout *l = b->l;

	if (parent >= 0) {
		const struct plan_deref *d = &l->derefs[parent];

		if (d->item < 0)
			return false;
		f->base = CMON_BASE_ITEM;
		f->base_item = (uint8_t)d->item;
		f->off = off;
		f->deref = 1;
		return true;
	}
	const struct plan_value *v = &l->values[value];
	uint32_t start = 0;

	for (uint8_t i = 0; i < v->n_src; i++) {
		const struct plan_src *s = &v->src[i];
		uint32_t po;

		if (off < start || off >= start + s->size) {
			start += s->size;
			continue;
		}
		po = off - start;
		/* a shifted or masked register is no address the kernel can use */
		if (po + 8 > s->size || s->shift || s->mask)
			return false;
		switch (s->kind) {
		case PSRC_ARG:
			if (s->at_return) {
				/* the entry's value, kept with the call */
				if (po)
					return false;
				f->base = CMON_BASE_ENTRY_ARG;
				f->reg = s->index;
				f->off = s->addend;
				f->deref = 0;
				return true;
			}
			/* fallthrough */
		case PSRC_RET:
			if (po)
				return false;
			f->base = CMON_BASE_REG;
			f->reg = s->kind == PSRC_RET ? DREG_RAX : arg_reg(b, s->index);
			f->off = s->addend;
			f->deref = 0;
			return true;
		case PSRC_ITEM: {
			const struct cmon_fetch *it = &b->plan[s->at_return ? 1 : 0]->items[s->index];

			if (it->kind == CMON_FETCH_REG) {
				if (po)
					return false;
				f->base = CMON_BASE_REG;
				f->reg = it->reg;
				f->off = s->addend;
				f->deref = 0;
				return true;
			}
			f->base = CMON_BASE_ITEM;
			f->base_item = s->index;
			f->off = po;
			f->deref = 1;
			return true;
		}
		default:
			return false;
		}
	}
	return false;
}

static int add_deref(struct builder *b, int value, int parent, uint32_t off,
		     const struct ctype *ptr, unsigned level, bool at_return, bool text,
		     uint32_t elems)
{
	struct plan_layout *l = b->l;
	struct plan_deref *d;
	struct cmon_fetch f;
	int idx;

	if (l->n_derefs >= MAX_DEREFS)
		return 0;
	if (GROW(l->derefs, l->n_derefs, b->cap_derefs, 16))
		return -ENOMEM;
	if (text || ctype__is_string(ptr)) {
		/* (A Go string's bytes end at its length, not at a NUL: user
		 * space cuts them there.) */
		fetch_init(&f, CMON_FETCH_STR);
		f.size = b->o->strlen;
	} else {
		uint64_t size = (uint64_t)ctype__concrete(ptr->target)->size * (elems ? elems : 1);

		fetch_init(&f, CMON_FETCH_MEM);
		f.size = size > CMON_ITEM_MAX ? CMON_ITEM_MAX : (uint32_t)size;
	}
	if (!pointer_base(b, value, parent, off, &f))
		return 0; /* not addressable: shown as an address */
	d = &l->derefs[l->n_derefs];
	memset(d, 0, sizeof(*d));
	d->value = (int16_t)value;
	d->parent = (int16_t)parent;
	d->off = off;
	d->ptr_type = ptr;
	d->level = (uint8_t)level;
	d->at_return = at_return;
	idx = add_item(b, at_return ? 1 : 0, &f);
	d->item = (int16_t)idx;
	d->status = idx < 0 ? PD_DROPPED : PD_OK;
	l->n_derefs++;
	return 0;
}

/* Find the pointers in type T at OFF (of a value, or of deref PARENT's
 * bytes) and plan what they point to, at LEVEL hops. */
static int scan_pointers(struct builder *b, int value, int parent, const struct ctype *t,
			 uint32_t off, unsigned level, bool at_return, int depth)
{
	int err = 0;

	if (!t || depth > 16)
		return 0;
	switch (t->kind) {
	case CTYPE_POINTER:
		if (ctype__is_string(t))
			return add_deref(b, value, parent, off, t, level, at_return, true, 0);
		if (ctype__is_struct_ptr(t) && level <= b->o->deref)
			return add_deref(b, value, parent, off, t, level, at_return, false, 0);
		return 0;
	case CTYPE_STRUCT:
		if (ctype__is_sized_string(t))
			return add_deref(b, value, parent, off, t->members[0].type, level, at_return,
					 true, 0);
		if (ctype__is_go_slice(t)) /* its first elements (a slice's length is read then) */
			return add_deref(b, value, parent, off, t->members[0].type, level, at_return,
					 false, GO_SLICE_MAX);
		for (size_t i = 0; i < t->n_members && !err; i++) {
			const struct ctype_member *m = &t->members[i];

			if (m->bit_size)
				continue;
			err = scan_pointers(b, value, parent, m->type, off + m->offset, level, at_return,
					    depth + 1);
		}
		return err;
	case CTYPE_ARRAY: {
		const struct ctype *e = t->target;

		if (!e || !e->size)
			return 0;
		for (uint32_t i = 0; i < t->count && i < MAX_DEREF_ELEMS && !err; i++)
			err = scan_pointers(b, value, parent, e, off + i * e->size, level, at_return,
					    depth + 1);
		return err;
	}
	default:
		return 0; /* unions: a pointer member may be the wrong member */
	}
}

/* Breadth first: pointers in the values (level 1), then in what those
 * point to (level 2), ... so the deepest are the ones that do not fit. */
static int plan_derefs(struct builder *b, bool at_return)
{
	struct plan_layout *l = b->l;
	size_t first = l->n_derefs, end;
	int err = 0;

	for (size_t v = 0; v < l->n_values && !err; v++)
		if (l->values[v].at_return == at_return)
			err = scan_pointers(b, (int)v, -1, l->values[v].type, 0, 1, at_return, 0);
	/* each round scans the derefs the previous one added */
	while (!err && first < l->n_derefs) {
		end = l->n_derefs;
		for (size_t i = first; i < end && !err; i++) {
			const struct plan_deref *d = &l->derefs[i];
			const struct ctype *pt;
			int value = d->value;
			unsigned level = d->level;

			if (d->status != PD_OK || ctype__is_string(d->ptr_type))
				continue;
			pt = d->ptr_type->target;
			err = scan_pointers(b, value, (int)i, pt, 0, level + 1, at_return, 0);
		}
		first = end;
	}
	return err;
}

static const struct func_param *find_param(const struct func_sig *sig, const char *name)
{
	for (size_t i = 0; sig && i < sig->n_params; i++)
		if (!strcmp(sig->params[i].name, name))
			return &sig->params[i];
	return NULL;
}

/* "arg0".."arg5": the raw register index, else -1. */
static int raw_arg(const char *name)
{
	if (!strncmp(name, "arg", 3) && name[3] >= '0' && name[3] <= '5' && name[4] == '\0')
		return name[3] - '0';
	return -1;
}

static const char *func_name(const struct func_sig *sig)
{
	return sig ? sig->name : "the function";
}

/* Whether the return value is read from register REG at the return. */
static bool ret_uses_reg(const struct builder *b, uint8_t reg)
{
	const struct plan_layout *l = b->l;
	const struct plan_value *v;

	if (l->ret_value < 0)
		return false;
	v = &l->values[l->ret_value];
	for (uint8_t i = 0; i < v->n_src; i++) {
		const struct plan_src *s = &v->src[i];
		const struct cmon_fetch *it;

		if (s->kind == PSRC_RET && reg == DREG_RAX)
			return true;
		if (s->kind != PSRC_ITEM || s->index >= b->plan[1]->n)
			continue;
		/* its register, or the one its memory is at (then its derefs') */
		it = &b->plan[1]->items[s->index];
		if ((it->kind == CMON_FETCH_REG || it->base == CMON_BASE_REG) && it->reg == reg)
			return true;
	}
	return false;
}

/* --capture-at return|both: the entry's fetch F again at the return, from
 * the pointer and count the call was given (its argument registers, kept
 * in the frame, as for a pointer parameter: the registers themselves may
 * be clobbered by then; the count's register is given back its entry
 * value, unless the return value is read from it).  A pointer or count
 * elsewhere (a stack slot, another register) is read at the call only,
 * and said so. */
static void plan_capture_again(struct builder *b, const char *spec, const struct cmon_fetch *f,
			       struct plan_capture *pc)
{
	struct cmon_fetch g = *f;
	int ai = f->base == CMON_BASE_REG && !f->deref ? arg_index(b, f->reg) : -1;
	int li = f->len_reg >= 0 ? arg_index(b, (uint8_t)f->len_reg) : 0;
	const char *why = ai < 0 ? "its pointer is not an argument register" :
			  li < 0 ? "its count is not an argument register" :
			  f->len_reg >= 0 && ret_uses_reg(b, (uint8_t)f->len_reg)
				  ? "its count's register holds the return value" : NULL;
	int idx;

	if (pc->item < 0)
		return;
	if (why) {
		log_warn("--capture %s: %s: read at the call only", spec, why);
		return;
	}
	g.base = CMON_BASE_ENTRY_ARG;
	g.reg = (uint8_t)ai;
	idx = add_item(b, 1, &g);
	pc->ret_item = (int16_t)idx;
	if (idx >= 0 && f->len_reg >= 0)
		b->plan[1]->entry_regs |= 1u << (24 + li) | (uint32_t)(f->len_reg & 15) << (4 * li);
}

static int plan_capture(struct builder *b, const struct capture_spec *cs, struct plan_capture *pc)
{
	const struct func_sig *sig = b->sig;
	const struct func_param *pp = NULL, *lp = NULL;
	const char *spec = cs->text ? cs->text : cs->name;
	struct cmon_fetch f;
	int raw = -1, lraw = -1, idx;
	uint32_t elem = 1;
	uint64_t size;

	memset(pc, 0, sizeof(*pc));
	pc->name = ctype_arena__strdup(b->l->arena, cs->name);
	if (!pc->name)
		return -ENOMEM;
	pc->kind = cs->kind;
	pc->item = -1;
	pc->ret_item = -1;
	if (find_param(sig, cs->name)) {
		log_error("--capture %s: the name is a parameter of %s: pick another", spec,
			  func_name(sig));
		return -EINVAL;
	}
	pp = find_param(sig, cs->ptr);
	if (!pp && (raw = raw_arg(cs->ptr)) < 0) {
		log_error("--capture %s: %s has no argument named '%s'%s", spec, func_name(sig),
			  cs->ptr, sig ? "" : " (no DWARF: use arg0..arg5)");
		return -ENOENT;
	}
	if (cs->len) {
		lp = find_param(sig, cs->len);
		if (!lp && (lraw = raw_arg(cs->len)) < 0) {
			log_error("--capture %s: %s has no argument named '%s'%s", spec,
				  func_name(sig), cs->len, sig ? "" : " (no DWARF: use arg0..arg5)");
			return -ENOENT;
		}
	}
	if (pp && pp->type->kind != CTYPE_POINTER &&
	    !(cs->kind == CAPTURE_BUF && (pp->type->kind == CTYPE_INT || pp->type->kind == CTYPE_UINT))) {
		log_error("--capture %s: '%s' is a %s, not a pointer", spec, cs->ptr, pp->type->name);
		return -EINVAL;
	}
	if (cs->kind == CAPTURE_ARRAY) {
		const struct ctype *et = pp ? pp->type->target : NULL;

		if (!et || !et->size || et->kind == CTYPE_FUNC) {
			log_error("--capture %s: '%s' needs a pointer to a sized type (%s)", spec,
				  cs->ptr, pp ? pp->type->name : "no DWARF type");
			return -EINVAL;
		}
		pc->elem = et;
		elem = et->size;
	}
	pc->elem_size = elem;

	/* The pointer's value: a register, or a stack slot to load it from. */
	fetch_init(&f, cs->kind == CAPTURE_STR ? CMON_FETCH_STR : CMON_FETCH_MEM);
	if (pp) {
		const struct dloc_piece *p = &pp->loc.p[0];

		if (!pp->loc.n || p->size < 8 || (p->kind != DLOC_REG && p->kind != DLOC_MEM) ||
		    p->deref) {
			log_error("--capture %s: '%s' is not readable at the probe", spec, cs->ptr);
			return -ENOTSUP;
		}
		if (p->kind == DLOC_REG) {
			f.base = CMON_BASE_REG;
			f.reg = p->reg;
			f.off = p->off;
		} else {
			fetch_mem_base(&f, p->reg, p->off);
			f.deref = 1;
		}
	} else {
		f.base = CMON_BASE_REG;
		f.reg = arg_reg(b, raw);
	}

	/* The count: a register the BPF side multiplies by elem_size. */
	size = b->o->capture_max / elem * elem;
	if (!size) {
		log_error("--capture %s: one element (%u bytes) exceeds --capture-max", spec, elem);
		return -EINVAL;
	}
	pc->len.kind = PSRC_NONE;
	if (cs->kind != CAPTURE_STR) {
		if (!cs->len) {
			uint64_t want = cs->len_const > UINT64_MAX / elem ? UINT64_MAX : cs->len_const * elem;

			if (want < size)
				size = want;
			pc->len.kind = PSRC_CONST;
			pc->len.value = cs->len_const;
		} else if (lp) {
			const struct ctype *lt = lp->type;
			const struct dloc_piece *p = &lp->loc.p[0];

			if (lt->kind != CTYPE_INT && lt->kind != CTYPE_UINT && lt->kind != CTYPE_ENUM &&
			    lt->kind != CTYPE_CHAR && lt->kind != CTYPE_BOOL) {
				log_error("--capture %s: count '%s' is a %s, not an integer", spec, cs->len,
					  lt->name);
				return -EINVAL;
			}
			if (lp->loc.n != 1 || p->kind != DLOC_REG || p->off) {
				log_error("--capture %s: count '%s' is not in a register at the probe",
					  spec, cs->len);
				return -ENOTSUP;
			}
			f.len_reg = (int8_t)p->reg;
			if (arg_index(b, p->reg) >= 0) {
				pc->len.kind = PSRC_ARG;
				pc->len.index = (uint8_t)arg_index(b, p->reg);
				pc->len.size = lt->size > 8 ? 8 : lt->size;
				pc->len_signed = lt->is_signed;
			}
		} else {
			f.len_reg = (int8_t)arg_reg(b, lraw);
			pc->len.kind = PSRC_ARG;
			pc->len.index = (uint8_t)lraw;
			pc->len.size = 8;
		}
	}
	f.size = (uint32_t)size;
	f.elem_size = elem;
	pc->size = (uint32_t)size;
	idx = add_item(b, 0, &f);
	pc->item = (int16_t)idx;
	if (b->o->capture_at != PLAN_AT_ENTRY)
		plan_capture_again(b, spec, &f, pc);
	return 0;
}

void plan_layout__free(struct plan_layout *l)
{
	if (!l)
		return;
	free(l->values);
	free(l->again);
	free(l->derefs);
	free(l->captures);
	ctype_arena__put(l->arena);
	free(l);
}

static int check_opts(const struct plan_opts *o)
{
	/* The command line checked these; a caller that did not learns why. */
	if (!o->strlen || o->strlen > PLAN_MAX_STRLEN) {
		log_error("string length %u out of range (1..%u)", o->strlen, PLAN_MAX_STRLEN);
		return -EINVAL;
	}
	if (!o->capture_max || o->capture_max > CMON_ITEM_MAX) {
		log_error("capture size %u out of range (1..%u)", o->capture_max, CMON_ITEM_MAX);
		return -EINVAL;
	}
	if (o->deref > PLAN_MAX_DEREF) {
		log_error("pointer depth %u out of range (0..%u)", o->deref, PLAN_MAX_DEREF);
		return -EINVAL;
	}
	for (size_t i = 0; i < o->n_captures; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(o->captures[i].name, o->captures[j].name)) {
				log_error("--capture %s: the name '%s' is used twice",
					  o->captures[i].text ? o->captures[i].text : o->captures[i].name,
					  o->captures[i].name);
				return -EINVAL;
			}
	return 0;
}

int plan__build(const struct func_sig *sig, const struct plan_opts *opts,
		struct cmon_fetch_plan *entry, struct cmon_fetch_plan *ret,
		struct plan_layout **out)
{
	struct plan_opts defaults;
	struct builder b = { 0 };
	struct plan_layout *l = NULL;
	bool has_ret;
	int err;

	*out = NULL;
	if (!opts) {
		plan_opts__init(&defaults);
		opts = &defaults;
	}
	err = check_opts(opts);
	if (err)
		return err;
	memset(entry, 0, sizeof(*entry));
	memset(ret, 0, sizeof(*ret));
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->arena = sig ? ctype_arena__get(sig->arena) : ctype_arena__new();
	l->ret_value = -1;
	l->typed = sig != NULL;
	if (!l->arena) {
		err = -ENOMEM;
		goto cleanup;
	}
	b.sig = sig;
	b.o = opts;
	b.plan[0] = entry;
	b.plan[1] = ret;
	b.l = l;

	has_ret = sig && sig->ret_type && sig->ret_type->kind != CTYPE_VOID;
	l->returns_void = sig && !has_ret;
	l->n_params = sig ? sig->n_params : 0;
	l->n_values = l->n_params + (has_ret ? 1 : 0);
	/* room for the parameters read again at the return (--capture-at) */
	l->values = calloc(l->n_values + l->n_params + 1, sizeof(*l->values));
	l->again = calloc(l->n_params + 1, sizeof(*l->again));
	l->capture_at = opts->capture_at;
	l->captures = calloc(opts->n_captures ? opts->n_captures : 1, sizeof(*l->captures));
	if (!l->values || !l->again || !l->captures) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* Level 0: the values themselves. */
	for (size_t i = 0; i < l->n_params; i++) {
		l->values[i].name = sig->params[i].name;
		l->values[i].type = sig->params[i].type;
		plan_value_src(&b, &l->values[i], &sig->params[i].loc);
	}
	if (has_ret) {
		struct plan_value *v = &l->values[l->n_params];

		l->ret_value = (int)l->n_params;
		v->name = "return";
		v->type = sig->ret_type;
		v->at_return = true;
		plan_value_src(&b, v, &sig->ret_loc);
	}
	/* --capture-at return|both: pointer parameters again at the return,
	 * from their entry values (kept in the call's frame). */
	for (size_t i = 0; i < l->n_params; i++) {
		const struct plan_value *pv = &l->values[i];
		const struct ctype *t = ctype__concrete(pv->type);
		struct plan_value *v;

		l->again[i] = -1;
		if (opts->capture_at == PLAN_AT_ENTRY || !t ||
		    !(ctype__is_string(t) || ctype__is_struct_ptr(t)) || pv->n_src != 1 ||
		    pv->src[0].kind != PSRC_ARG)
			continue;
		v = &l->values[l->n_values];
		*v = *pv;
		v->at_return = true;
		v->src[0].at_return = true;
		l->again[i] = (int)l->n_values++;
	}
	/* Then what the user asked for by name. */
	for (size_t i = 0; i < opts->n_captures; i++) {
		err = plan_capture(&b, &opts->captures[i], &l->captures[i]);
		if (err)
			goto cleanup;
		l->n_captures++;
	}
	/* Then what pointers reach, breadth first. */
	err = plan_derefs(&b, false);
	if (!err)
		err = plan_derefs(&b, true);
	if (err)
		goto cleanup;
	if (l->n_dropped)
		log_debug("%s: %u fetch items did not fit (%u per plan)", func_name(sig),
			  l->n_dropped, CMON_MAX_FETCH);
	*out = l;
	l = NULL;
cleanup:
	plan_layout__free(l);
	if (err) {
		memset(entry, 0, sizeof(*entry));
		memset(ret, 0, sizeof(*ret));
	}
	return err;
}
