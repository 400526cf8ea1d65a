// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* render.c: typed values of a call as JSON (conventions in render.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "core/decimal.h"
#include "output/changed.h"
#include "core/escape.h"
#include "output/render.h"

#define MAX_VALUE_BYTES CMON_ITEM_MAX
#define MAX_RENDER_DEPTH 24

/* Why a byte of a value is not there (0: it is). */
enum why {
	W_OK = 0,
	W_OPT,      /* optimized out */
	W_DROPPED,  /* too many items */
	W_MISSING,  /* no capture record */
	W_FAULT,    /* the kernel could not read it */
	W_SHORT,    /* past the bytes read */
	W_XMM0 = 16, /* .. xmm15 = 31 */
	W_ST0 = 32,  /* .. st7 = 39 */
};

/* Bytes with per-byte availability, and where they came from (for
 * finding the derefs of pointers inside). */
struct view {
	const uint8_t *data;
	const uint8_t *why;
	uint32_t size;
	int value;   /* plan value index, -1: none (captures) */
	int parent;  /* -1: the value's bytes; else the deref whose item these are */
};

struct rctx {
	const struct plan_layout *l;
	const struct render_call *c;
	struct render_out *o;
	struct strbuf *sb; /* where values are written */
	int err;
	bool in_capture; /* a --capture's elements: the capture is the blob */
	bool no_blobs;   /* --capture-at both, a read at the return: the store
			  * keeps the entry's values */
	bool no_leaves;  /* the same reads: they are not columns */
	bool in_leaf;    /* inside a leaf: no column below it */
	uint8_t kind;    /* what the last quoted scalar was (enum render_kind) */
	const char *sep; /* emit's: how a member is joined to the path */
};

static void put(struct rctx *r, const char *s)
{
	if (!r->err)
		r->err = strbuf__puts(r->sb, s);
}

static void put_str(struct rctx *r, const void *s, size_t n)
{
	if (!r->err)
		r->err = json_escape_bytes(r->sb, s, n);
}

/* ---- paths ---- */

static size_t path_push(struct rctx *r, const char *sep, const char *name)
{
	size_t len = r->o->path.len;

	if (!r->err && sep)
		r->err = strbuf__puts(&r->o->path, sep);
	if (!r->err && name)
		r->err = strbuf__puts(&r->o->path, name);
	return len;
}

static void path_pop(struct rctx *r, size_t len)
{
	if (r->o->path.buf) {
		r->o->path.len = len;
		r->o->path.buf[len] = '\0';
	}
}

static void list_add(struct rctx *r, struct strbuf *list, size_t *n)
{
	if (r->err)
		return;
	if (*n)
		r->err = strbuf__putc(list, ',');
	if (!r->err)
		r->err = json_escape(list, r->o->path.buf ? r->o->path.buf : "");
	(*n)++;
}

static void note_fault(struct rctx *r)
{
	list_add(r, &r->o->faults, &r->o->n_faults);
}

static void note_truncated(struct rctx *r)
{
	list_add(r, &r->o->truncated, &r->o->n_truncated);
}

/* ---- items ---- */

static const struct render_item *item_at(const struct rctx *r, bool at_return, int idx)
{
	const struct render_item *items = at_return ? r->c->exit : r->c->entry;
	size_t n = at_return ? r->c->n_exit : r->c->n_entry;

	if (idx < 0 || !items || (size_t)idx >= n)
		return NULL;
	return &items[idx];
}

/* ---- scalars ---- */

static unsigned __int128 load_le(const uint8_t *p, uint32_t n)
{
	unsigned __int128 v = 0;

	for (uint32_t i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

static __int128 sign_extend(unsigned __int128 v, unsigned bits)
{
	if (bits >= 128)
		return (__int128)v;
	if (v & ((unsigned __int128)1 << (bits - 1)))
		v |= ~(unsigned __int128)0 << bits;
	return (__int128)v;
}

static void put_u128(struct rctx *r, unsigned __int128 v)
{
	char buf[48], *p = buf + sizeof(buf);

	if (r->err)
		return;
	if (v <= UINT64_MAX) { /* nearly every value: straight into the buffer */
		r->err = strbuf__reserve(r->sb, DECIMAL_MAX);
		if (!r->err)
			r->sb->len = (size_t)(decimal__u64(r->sb->buf + r->sb->len, (uint64_t)v) -
					      r->sb->buf);
		if (!r->err)
			r->sb->buf[r->sb->len] = '\0';
		return;
	}
	/* 128-bit division is a library call per digit: only for the digits
	 * above 64 bits; the rest two at a time. */
	*--p = '\0';
	while (v > UINT64_MAX) {
		*--p = (char)('0' + (unsigned)(v % 10));
		v /= 10;
	}
	p -= decimal__ndigits((uint64_t)v);
	decimal__u64(p, (uint64_t)v);
	put(r, p);
}

static void put_i128(struct rctx *r, __int128 v)
{
	if (v < 0) {
		put(r, "-");
		put_u128(r, (unsigned __int128)0 - (unsigned __int128)v);
	} else {
		put_u128(r, (unsigned __int128)v);
	}
}

static void put_hex(struct rctx *r, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "\"0x%" PRIx64 "\"", v);
	put(r, buf);
	r->kind = RK_ADDRESS;
}

/* An integer-like value (INT, UINT, CHAR, BOOL, ENUM) of type T whose
 * raw bits are V (BITS wide). */
static void put_intlike(struct rctx *r, const struct ctype *t, unsigned __int128 v, unsigned bits)
{
	switch (t->kind) {
	case CTYPE_BOOL:
		put(r, v ? "true" : "false");
		return;
	case CTYPE_CHAR: {
		char ch = (char)(uint8_t)v;

		put_str(r, &ch, 1);
		return;
	}
	case CTYPE_ENUM: {
		__int128 sv = t->is_signed ? sign_extend(v, bits) : (__int128)v;
		const char *name = ctype__enum_name(t, (int64_t)sv);

		if (name)
			put_str(r, name, strlen(name));
		else if (t->is_signed)
			put_i128(r, sv);
		else
			put_u128(r, v);
		return;
	}
	case CTYPE_INT:
		put_i128(r, sign_extend(v, bits));
		return;
	default:
		put_u128(r, v);
		return;
	}
}

void render__double_json(double d, char buf[RENDER_NUM_LEN])
{
	if (isnan(d) || isinf(d)) {
		snprintf(buf, RENDER_NUM_LEN, "%s",
			 isnan(d) ? "\"NaN\"" : d < 0 ? "\"-Infinity\"" : "\"Infinity\"");
		return;
	}
	/* the shortest form that reads back as the same double */
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, RENDER_NUM_LEN, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
}

void render__float_json(float f, char buf[RENDER_NUM_LEN])
{
	if (isnan(f) || isinf(f)) {
		render__double_json((double)f, buf);
		return;
	}
	for (int prec = 1; prec <= 9; prec++) {
		snprintf(buf, RENDER_NUM_LEN, "%.*g", prec, (double)f);
		if (strtof(buf, NULL) == f)
			break;
	}
}

static void put_double(struct rctx *r, double d)
{
	char buf[RENDER_NUM_LEN];

	render__double_json(d, buf);
	put(r, buf);
	r->kind = buf[0] == '"' ? RK_FLOAT_STR : RK_NUMBER;
}

static void put_float(struct rctx *r, float f)
{
	char buf[RENDER_NUM_LEN];

	render__float_json(f, buf);
	put(r, buf);
	r->kind = buf[0] == '"' ? RK_FLOAT_STR : RK_NUMBER;
}

static void put_ldouble(struct rctx *r, long double d)
{
	char buf[64];

	if (isnan(d) || isinf(d)) {
		put_double(r, (double)d);
		return;
	}
	r->kind = RK_NUMBER;
	for (int prec = 1; prec <= 21; prec++) {
		snprintf(buf, sizeof(buf), "%.*Lg", prec, d);
		if (strtold(buf, NULL) == d)
			break;
	}
	put(r, buf);
}

static void put_float_bytes(struct rctx *r, const struct ctype *t, const uint8_t *p, uint32_t size)
{
	if (size == 4) {
		float f;

		memcpy(&f, p, 4);
		put_float(r, f);
	} else if (size == 8) {
		double d;

		memcpy(&d, p, 8);
		put_double(r, d);
	} else if (size == 16 && t->is_x87) {
		long double d = 0;

		memcpy(&d, p, 10); /* 80-bit extended in the low 10 bytes */
		put_ldouble(r, d);
	} else if (size == 16) {
		__float128 q;

		memcpy(&q, p, 16);
		put_ldouble(r, (long double)q);
	} else {
		put(r, "\"<unavailable: float format>\"");
	}
}

/* ---- markers ---- */

static bool is_float(const struct ctype *t)
{
	return t && t->kind == CTYPE_FLOAT;
}

static void put_marker_text(struct rctx *r, uint8_t why, const struct ctype *t);

/* A value that is not there: its marker, and (for tables, whose cell is
 * empty) "path: why" in the unavailable list. */
static void put_marker(struct rctx *r, uint8_t why, const struct ctype *t)
{
	size_t start = r->sb->len;
	struct strbuf *u = &r->o->unavailable;

	put_marker_text(r, why, t);
	if (r->err || why == W_FAULT || !r->c->cols || r->no_leaves)
		return;
	r->kind = RK_MARKER;
	/* the marker's text without its quotes and "<", ">" */
	if (r->sb->len - start > 4)
		r->err = (u->len ? strbuf__puts(u, "; ") : 0) ?:
			 strbuf__puts(u, r->o->path.buf ? r->o->path.buf : "") ?:
			 strbuf__puts(u, ": ") ?:
			 strbuf__putn(u, r->sb->buf + start + 2, r->sb->len - start - 4);
}

static void put_marker_text(struct rctx *r, uint8_t why, const struct ctype *t)
{
	char buf[64];

	if ((why >= W_ST0 && why < W_ST0 + 8) || (why >= W_XMM0 && why < W_XMM0 + 16))
		r->o->n_unavailable++;
	if (why >= W_ST0 && why < W_ST0 + 8) {
		snprintf(buf, sizeof(buf), "\"<unavailable: long double in st%u>\"", why - W_ST0);
		put(r, buf);
		return;
	}
	if (why >= W_XMM0 && why < W_XMM0 + 16) {
		snprintf(buf, sizeof(buf), "\"<unavailable: %sin xmm%u>\"",
			 is_float(t) ? "float " : "", why - W_XMM0);
		put(r, buf);
		return;
	}
	switch (why) {
	case W_FAULT:
		put(r, "null");
		note_fault(r);
		return;
	case W_DROPPED:
		put(r, "\"<not captured: too many items>\"");
		return;
	case W_MISSING:
		put(r, "\"<unavailable: not captured>\"");
		return;
	case W_SHORT:
		put(r, "\"<unavailable: truncated>\"");
		return;
	default:
		put(r, "\"<unavailable: optimized out>\"");
		return;
	}
}

/* The first reason bytes [off, off + n) are missing, or W_OK; *UNIFORM:
 * every byte has that same reason. */
static uint8_t why_range(const struct view *v, uint32_t off, uint32_t n, bool *uniform)
{
	uint8_t first = W_OK;
	bool same = true;

	if (off >= v->size || n > v->size - off) {
		if (uniform)
			*uniform = off >= v->size;
		return W_SHORT;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint8_t w = v->why[off + i];

		if (i == 0)
			first = w;
		else if (w != first)
			same = false;
	}
	if (first == W_OK && !same) {
		for (uint32_t i = 0; i < n; i++)
			if (v->why[off + i]) {
				first = v->why[off + i];
				break;
			}
	}
	if (uniform)
		*uniform = same;
	return first;
}

/* ---- values ---- */

static void emit(struct rctx *r, const struct view *v, uint32_t off, const struct ctype *t,
		 const char *sep, int depth);

static const struct plan_deref *find_deref(const struct rctx *r, const struct view *v, uint32_t off,
					   int *index)
{
	const struct plan_layout *l = r->l;

	if (v->value < 0)
		return NULL;
	for (size_t i = 0; i < l->n_derefs; i++) {
		const struct plan_deref *d = &l->derefs[i];

		if (d->value == v->value && d->parent == v->parent && d->off == off) {
			*index = (int)i;
			return d;
		}
	}
	return NULL;
}

static void add_blob(struct rctx *r, const char *name, const struct ctype *elem,
		     const uint32_t *shape, uint8_t ndim, const void *data, size_t len, bool truncated);

/* A pointer: the string or struct it points to when planned, else its
 * address. */
static void emit_pointer(struct rctx *r, const struct view *v, uint32_t off, const struct ctype *t,
			 int depth)
{
	uint8_t why = why_range(v, off, 8, NULL);
	const struct plan_deref *d;
	const struct render_item *it;
	bool known = why == W_OK, follow = ctype__is_string(t) || ctype__is_struct_ptr(t);
	uint64_t p = known ? (uint64_t)load_le(v->data + off, 8) : 0;
	int di = -1;

	d = follow ? find_deref(r, v, off, &di) : NULL;
	if (!d) {
		if (!known)
			put_marker(r, why, t);
		else if (ctype__is_string(t) && p == 0)
			put(r, "null");
		else
			put_hex(r, p);
		return;
	}
	if (known && p == 0) {
		put(r, "null");
		return;
	}
	if (d->status == PD_DROPPED) {
		put_marker(r, W_DROPPED, t);
		return;
	}
	it = item_at(r, d->at_return, d->item);
	if (!it) {
		put_marker(r, W_MISSING, t);
		return;
	}
	if (it->flags & CMON_ITEM_FAULT) {
		put_marker(r, W_FAULT, t);
		return;
	}
	if (ctype__is_string(t)) {
		put_str(r, it->data, it->len);
		if (it->flags & CMON_ITEM_TRUNCATED)
			note_truncated(r);
		return;
	}
	/* the struct it points to, from the item's bytes */
	const struct ctype *st = t->target;
	uint32_t size = st->size, have = it->len < size ? it->len : size;
	uint8_t *why_buf = calloc(size ? size : 1, 1);
	struct view sv = { .data = it->data, .why = why_buf, .size = size, .value = v->value,
			   .parent = di };
	uint8_t *copy = NULL;

	if (!why_buf) {
		r->err = -ENOMEM;
		return;
	}
	if (have < size) {
		/* a short item: pad so data[] covers size */
		copy = calloc(size, 1);
		if (!copy) {
			free(why_buf);
			r->err = -ENOMEM;
			return;
		}
		memcpy(copy, it->data, have);
		sv.data = copy;
		memset(why_buf + have, W_SHORT, size - have);
	}
	emit(r, &sv, 0, st, "->", depth + 1);
	free(copy);
	free(why_buf);
}

/* A Go string or Rust &str: its LEN bytes, from the item its pointer was read into;
 * false when they were not read (then shown as the header). */
static bool emit_sized_string(struct rctx *r, const struct view *v, uint32_t off)
{
	const struct render_item *it;
	const struct plan_deref *d;
	uint64_t len;
	int di;

	if (why_range(v, off, 16, NULL) != W_OK)
		return false;
	len = (uint64_t)load_le(v->data + off + 8, 8);
	if (!len) {
		put_str(r, "", 0);
		return true;
	}
	d = find_deref(r, v, off, &di);
	if (!d || d->status != PD_OK || !(it = item_at(r, d->at_return, d->item)) ||
	    (it->flags & CMON_ITEM_FAULT))
		return false;
	put_str(r, it->data, len < it->len ? len : it->len);
	if (len > it->len)
		note_truncated(r);
	return true;
}

/* A Go slice: its first elements (len of them, at most what was read),
 * from the item its array pointer was read into; false when they were not
 * read (then shown as the header). */
static bool emit_go_slice(struct rctx *r, const struct view *v, uint32_t off,
			  const struct ctype *t, int depth)
{
	const struct ctype *elem = ctype__concrete(ctype__concrete(t->members[0].type)->target);
	const struct render_item *it;
	const struct plan_deref *d;
	uint8_t *why_buf;
	uint64_t len, have;
	int di;

	if (why_range(v, off, 24, NULL) != W_OK || !elem->size)
		return false;
	len = (uint64_t)load_le(v->data + off + 8, 8);
	d = len ? find_deref(r, v, off, &di) : NULL;
	if (len && (!d || d->status != PD_OK || !(it = item_at(r, d->at_return, d->item)) ||
		    (it->flags & CMON_ITEM_FAULT)))
		return false;
	have = len ? it->len / elem->size : 0;
	if (have > len)
		have = len;
	why_buf = calloc(have ? have * elem->size : 1, 1); /* W_OK: 0 */
	if (!why_buf) {
		r->err = -ENOMEM;
		return true;
	}
	put(r, "[");
	for (uint64_t i = 0; i < have && !r->err; i++) {
		struct view sv = { .data = it->data, .why = why_buf,
				   .size = (uint32_t)(have * elem->size), .value = v->value,
				   .parent = di };

		if (i)
			put(r, ",");
		emit(r, &sv, (uint32_t)(i * elem->size), elem, ".", depth + 1);
	}
	put(r, "]");
	free(why_buf);
	if (have < len)
		note_truncated(r);
	return true;
}

static void emit_members(struct rctx *r, const struct view *v, uint32_t off, const struct ctype *t,
			 const char *sep, int depth, bool *first)
{
	for (size_t i = 0; i < t->n_members && !r->err; i++) {
		const struct ctype_member *m = &t->members[i];
		const struct ctype *mt = m->type;
		size_t saved;

		if (!m->name) {
			/* anonymous struct/union: its members belong here;
			 * an unnamed bitfield is padding */
			if (!m->bit_size && mt && (mt->kind == CTYPE_STRUCT || mt->kind == CTYPE_UNION))
				emit_members(r, v, off + m->offset, mt, sep, depth + 1, first);
			continue;
		}
		if (!*first)
			put(r, ",");
		*first = false;
		if (!r->err)
			r->err = json_escape(r->sb, m->name);
		put(r, ":");
		saved = path_push(r, sep, m->name);
		if (m->bit_size) {
			uint32_t bit = off * 8 + m->bit_offset, byte = bit / 8, shift = bit % 8;
			uint32_t nbytes = (shift + m->bit_size + 7) / 8;
			uint8_t why = why_range(v, byte, nbytes, NULL);

			if (why != W_OK || m->bit_size > 64 || nbytes > 16) {
				put_marker(r, why ? why : W_OPT, mt);
			} else {
				uint64_t raw = 0;

				/* bits shift .. shift + bit_size of up to 9 bytes */
				for (uint32_t i = 0; i < nbytes; i++) {
					uint64_t b8 = v->data[byte + i];
					int sh = (int)(8 * i) - (int)shift;

					if (sh < 0)
						raw |= b8 >> -sh;
					else if (sh < 64)
						raw |= b8 << sh;
				}
				if (m->bit_size < 64)
					raw &= (1ULL << m->bit_size) - 1;
				put_intlike(r, mt, raw, m->bit_size);
			}
		} else {
			emit(r, v, off + m->offset, mt, ".", depth + 1);
		}
		path_pop(r, saved);
	}
}

/* Tuple fields are named __0, __1, ... by rustc. */
static bool is_tuple_field(const struct ctype_member *m)
{
	return m->name && m->name[0] == '_' && m->name[1] == '_' && m->name[2] >= '0' &&
	       m->name[2] <= '9';
}

/* A Rust enum, as the variant its discriminant selects: "None" (no
 * fields), {"Some":5} (one tuple field), {"V":[a,b]} (tuple fields),
 * {"V":{"x":1}} (named fields). */
static void emit_variant(struct rctx *r, const struct view *v, uint32_t off, const struct ctype *t,
			 int depth)
{
	const struct ctype_variant *pick = NULL, *other = NULL;
	const struct ctype *vt;
	uint64_t d, mask = t->discr_size >= 8 ? UINT64_MAX : (1ULL << (t->discr_size * 8)) - 1;
	uint8_t why = why_range(v, off + t->discr_offset, t->discr_size, NULL);
	bool tuple = true, first = true;
	size_t saved;
	char buf[64];

	if (why != W_OK) { /* which variant it is cannot be told */
		put_marker(r, why, t);
		return;
	}
	d = (uint64_t)load_le(v->data + off + t->discr_offset, t->discr_size);
	for (size_t i = 0; i < t->n_variants; i++) {
		if (t->variants[i].is_default)
			other = &t->variants[i];
		else if ((t->variants[i].discr_value & mask) == d)
			pick = &t->variants[i];
	}
	if (!pick)
		pick = other;
	if (!pick) {
		snprintf(buf, sizeof(buf), "\"<no variant has discriminant %llu>\"",
			 (unsigned long long)d);
		put(r, buf);
		return;
	}
	vt = ctype__concrete(pick->type);
	if (!vt || !vt->n_members) {
		put_str(r, pick->name, strlen(pick->name));
		return;
	}
	for (size_t i = 0; i < vt->n_members; i++)
		tuple = tuple && is_tuple_field(&vt->members[i]);
	put(r, "{");
	put_str(r, pick->name, strlen(pick->name));
	put(r, ":");
	saved = path_push(r, ".", pick->name);
	if (tuple && vt->n_members == 1) {
		emit(r, v, off + vt->members[0].offset, vt->members[0].type, ".", depth + 1);
	} else if (tuple) {
		put(r, "[");
		for (size_t i = 0; i < vt->n_members; i++) {
			size_t at = path_push(r, ".", vt->members[i].name);

			if (i)
				put(r, ",");
			emit(r, v, off + vt->members[i].offset, vt->members[i].type, ".", depth + 1);
			path_pop(r, at);
		}
		put(r, "]");
	} else {
		put(r, "{");
		emit_members(r, v, off, vt, ".", depth + 1, &first);
		put(r, "}");
	}
	path_pop(r, saved);
	put(r, "}");
}

/* Nested array dimensions down to a numeric element: ndim, or 0 when the
 * element is not numeric. */
static uint8_t numeric_shape(const struct ctype *t, uint32_t *shape, const struct ctype **elem)
{
	uint8_t n = 0;

	while (t && t->kind == CTYPE_ARRAY) {
		if (n >= RENDER_MAX_DIMS || !t->count)
			return 0;
		shape[n++] = t->count;
		t = t->target;
	}
	if (!ctype__is_numeric(t) || t->kind == CTYPE_CHAR)
		return 0;
	*elem = t;
	return n;
}

static void emit_array(struct rctx *r, const struct view *v, uint32_t off, const struct ctype *t,
		       int depth, bool top)
{
	const struct ctype *e = t->target;
	uint32_t n = t->count;
	char idx[24];

	if (!e || !e->size) {
		put(r, "[]");
		return;
	}
	if (e->kind == CTYPE_CHAR) {
		/* a string up to its NUL */
		uint32_t len = 0;
		uint8_t why;

		why = why_range(v, off, n, NULL);
		while (len < n && off + len < v->size && v->why[off + len] == W_OK &&
		       v->data[off + len])
			len++;
		if (len < n && (off + len >= v->size || v->why[off + len] != W_OK)) {
			put_marker(r, why ? why : W_SHORT, t);
			return;
		}
		put_str(r, v->data + off, len);
		return;
	}
	put(r, "[");
	for (uint32_t i = 0; i < n && !r->err; i++) {
		size_t saved;

		if (i)
			put(r, ",");
		snprintf(idx, sizeof(idx), "[%u]", i);
		saved = path_push(r, NULL, idx);
		if (e->kind == CTYPE_ARRAY)
			emit_array(r, v, off + i * e->size, e, depth + 1, false);
		else
			emit(r, v, off + i * e->size, e, ".", depth + 1);
		path_pop(r, saved);
	}
	put(r, "]");
	if (top && !r->in_capture) {
		uint32_t shape[RENDER_MAX_DIMS];
		const struct ctype *ne = NULL;
		uint8_t nd = numeric_shape(t, shape, &ne);

		if (nd && why_range(v, off, t->size, NULL) == W_OK)
			add_blob(r, r->o->path.buf, ne, shape, nd, v->data + off, t->size, false);
	}
}

static void emit_node(struct rctx *r, const struct view *v, uint32_t off, const struct ctype *t,
		      int depth)
{
	bool uniform;
	uint8_t why;

	if (r->err)
		return;
	if (!t || depth > MAX_RENDER_DEPTH) {
		put(r, "null");
		return;
	}
	why = t->size ? why_range(v, off, t->size, &uniform) : W_OK;
	if (ctype__is_sized_string(t) && emit_sized_string(r, v, off))
		return;
	if (ctype__is_go_slice(t) && emit_go_slice(r, v, off, t, depth))
		return;
	switch (t->kind) {
	case CTYPE_STRUCT:
	case CTYPE_UNION:
	case CTYPE_ARRAY:
		/* show the members that are there, unless nothing is */
		if (why != W_OK && uniform &&
		    (why == W_FAULT || why == W_DROPPED || why == W_MISSING || why == W_OPT)) {
			put_marker(r, why, t);
			return;
		}
		if (t->kind == CTYPE_ARRAY) {
			emit_array(r, v, off, t, depth, true);
		} else if (t->n_variants) {
			emit_variant(r, v, off, t, depth);
		} else {
			bool first = true;

			put(r, "{");
			emit_members(r, v, off, t, r->sep, depth, &first);
			put(r, "}");
		}
		return;
	default:
		break;
	}
	if (why != W_OK) {
		put_marker(r, why, t);
		return;
	}
	switch (t->kind) {
	case CTYPE_INT:
	case CTYPE_UINT:
	case CTYPE_CHAR:
	case CTYPE_BOOL:
	case CTYPE_ENUM:
		if (t->size > 16 || !t->size) {
			put(r, "null");
			return;
		}
		put_intlike(r, t, load_le(v->data + off, t->size), t->size * 8);
		return;
	case CTYPE_FLOAT:
		if (t->is_complex) {
			const struct ctype part = { .kind = CTYPE_FLOAT, .size = t->size / 2,
						    .is_x87 = t->is_x87 };

			put(r, "[");
			put_float_bytes(r, &part, v->data + off, part.size);
			put(r, ",");
			put_float_bytes(r, &part, v->data + off + part.size, part.size);
			put(r, "]");
			return;
		}
		put_float_bytes(r, t, v->data + off, t->size);
		return;
	case CTYPE_POINTER:
		emit_pointer(r, v, off, t, depth);
		return;
	case CTYPE_UNKNOWN:
		if (t->size && t->size <= 8) {
			put_hex(r, (uint64_t)load_le(v->data + off, t->size));
			return;
		}
		/* fall through */
	default:
		put(r, "null");
		return;
	}
}

/* ---- leaves (the value form for tables) ---- */

static uint32_t path_hash(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 16777619u;
	return h;
}

/* The column of the leaf at PATH, or -1. */
static int cols_find(const struct render_cols *c, const char *path, size_t n)
{
	if (!c->n_slots)
		return -1;
	for (size_t i = path_hash(path, n) & (c->n_slots - 1);; i = (i + 1) & (c->n_slots - 1)) {
		uint32_t s = c->slots[i];

		if (!s)
			return -1;
		if (!strncmp(c->paths[s - 1], path, n) && !c->paths[s - 1][n])
			return (int)s - 1;
	}
}

/* The leaf of R's path, when it is one: its column, else -1. */
static int leaf_open(struct rctx *r, size_t *start)
{
	int col;

	if (!r->c->cols || r->in_leaf || r->no_leaves || r->err)
		return -1;
	col = cols_find(r->c->cols, r->o->path.buf ? r->o->path.buf : "", r->o->path.len);
	if (col >= 0) {
		r->in_leaf = true;
		r->kind = RK_NULL;
		*start = r->sb->len;
	}
	return col;
}

/* The leaf at column COL is the text from START: noted by its offset (the
 * buffer may move), where ones in ONE are moved to cellbuf's later. */
static void leaf_close(struct rctx *r, int col, size_t start)
{
	struct render_out *o = r->o;
	const char *t = r->sb->buf + start;
	size_t n = r->sb->len - start;
	size_t cap_where = o->cap_leaves; /* leaf_where beside leaves: the same capacity */
	uint8_t kind;

	r->in_leaf = false;
	if (r->err || col < 0 || !n)
		return;
	if (GROW(o->leaf_where, o->n_leaves, cap_where, 16) ||
	    GROW(o->leaves, o->n_leaves, o->cap_leaves, 16)) {
		r->err = -ENOMEM;
		return;
	}
	if (t[0] == '[' || t[0] == '{')
		kind = RK_JSON;
	else if (n == 4 && !memcmp(t, "null", 4))
		kind = RK_NULL;
	else if (t[0] == 't' || t[0] == 'f')
		kind = RK_BOOL;
	else if (t[0] == '"')
		kind = r->kind == RK_ADDRESS || r->kind == RK_MARKER || r->kind == RK_FLOAT_STR ?
			       r->kind : RK_STRING;
	else
		kind = RK_NUMBER;
	o->leaves[o->n_leaves] = (struct render_leaf){ .col = (uint32_t)col, .kind = kind,
						       .len = (uint32_t)n,
						       .text = (const char *)(uintptr_t)start };
	o->leaf_where[o->n_leaves] = r->sb == &o->ret;
	o->n_leaves++;
}

static void emit(struct rctx *r, const struct view *v, uint32_t off, const struct ctype *t,
		 const char *sep, int depth)
{
	size_t start = 0;
	int col = leaf_open(r, &start);

	r->sep = sep;
	emit_node(r, v, off, t, depth);
	if (col >= 0)
		leaf_close(r, col, start);
}

/* ---- columns: the layout's leaves, found as emit finds them ---- */

struct colwalk {
	const struct plan_layout *l;
	struct render_cols *c;
	struct strbuf path;
	size_t cap;
	int err;
};

static void col_add(struct colwalk *w)
{
	struct render_cols *c = w->c;
	const char *p = w->path.buf ? w->path.buf : "";
	struct strbuf name = {};
	size_t cap_paths = w->cap; /* paths beside names: the same capacity */
	int err;

	if (w->err)
		return;
	if (cols_find(c, p, w->path.len) >= 0)
		return; /* a member name met twice (anonymous members) */
	if (GROW(c->paths, c->n, cap_paths, 8) || GROW(c->names, c->n, w->cap, 8)) {
		w->err = -ENOMEM;
		return;
	}
	/* "return..." is "ret...", a parameter's "args.NAME...", and a
	 * pointer followed ("->") is a member like any other (".") */
	if (p[0] == '\1')
		err = strbuf__puts(&name, "captures."), p++;
	else if (strncmp(p, "return", 6) || (p[6] && p[6] != '.' && p[6] != '-'))
		err = strbuf__puts(&name, "args.");
	else
		err = strbuf__puts(&name, "ret"), p += 6;
	for (; !err && *p; p++) {
		if (p[0] == '-' && p[1] == '>') {
			err = strbuf__putc(&name, '.');
			p++;
		} else {
			err = strbuf__putc(&name, *p);
		}
	}
	c->paths[c->n] = err ? NULL : strdup(w->path.buf ? w->path.buf : "");
	if (err || !c->paths[c->n]) {
		strbuf__release(&name);
		w->err = -ENOMEM;
		return;
	}
	c->names[c->n] = name.buf;
	c->n++;
	/* the table at most half full */
	if (2 * c->n > c->n_slots) {
		size_t ns = c->n_slots ? 2 * c->n_slots : 16;
		uint32_t *slots = calloc(ns, sizeof(*slots));

		if (!slots) {
			w->err = -ENOMEM;
			return;
		}
		free(c->slots);
		c->slots = slots;
		c->n_slots = ns;
		for (size_t k = 0; k < c->n; k++) {
			size_t i = path_hash(c->paths[k], strlen(c->paths[k])) & (ns - 1);

			while (slots[i])
				i = (i + 1) & (ns - 1);
			slots[i] = (uint32_t)k + 1;
		}
	} else {
		size_t i = path_hash(c->paths[c->n - 1], w->path.len) & (c->n_slots - 1);

		while (c->slots[i])
			i = (i + 1) & (c->n_slots - 1);
		c->slots[i] = (uint32_t)c->n;
	}
}

static void col_walk(struct colwalk *w, int value, int parent, uint32_t off, const struct ctype *t,
		     int depth);

static void col_members(struct colwalk *w, int value, int parent, uint32_t off,
			const struct ctype *t, const char *sep, int depth)
{
	for (size_t i = 0; i < t->n_members && !w->err; i++) {
		const struct ctype_member *m = &t->members[i];
		size_t len = w->path.len;

		if (!m->name) {
			if (!m->bit_size && m->type &&
			    (m->type->kind == CTYPE_STRUCT || m->type->kind == CTYPE_UNION))
				col_members(w, value, parent, off + m->offset, m->type, sep,
					    depth + 1);
			continue;
		}
		w->err = strbuf__puts(&w->path, sep) ?: strbuf__puts(&w->path, m->name);
		if (m->bit_size)
			col_add(w);
		else
			col_walk(w, value, parent, off + m->offset, m->type, depth + 1);
		w->path.len = len;
		if (w->path.buf)
			w->path.buf[len] = '\0';
	}
}

/* As emit: a struct or union's members, what a followed struct pointer
 * points to, and a leaf for anything else. */
static void col_walk(struct colwalk *w, int value, int parent, uint32_t off, const struct ctype *t,
		     int depth)
{
	if (w->err)
		return;
	if (!t || depth > MAX_RENDER_DEPTH || ctype__is_sized_string(t) || ctype__is_go_slice(t)) {
		col_add(w);
		return;
	}
	if ((t->kind == CTYPE_STRUCT || t->kind == CTYPE_UNION) && !t->n_variants) {
		col_members(w, value, parent, off, t, ".", depth);
		return;
	}
	if (t->kind == CTYPE_POINTER && ctype__is_struct_ptr(t) && !ctype__is_string(t)) {
		for (size_t i = 0; i < w->l->n_derefs; i++) {
			const struct plan_deref *d = &w->l->derefs[i];

			if (d->value == value && d->parent == parent && d->off == off) {
				col_members(w, value, (int)i, 0, t->target, "->", depth + 1);
				return;
			}
		}
	}
	col_add(w);
}

int render__columns(const struct plan_layout *l, struct render_cols **out)
{
	struct colwalk w = { .l = l };

	*out = NULL;
	w.c = calloc(1, sizeof(*w.c));
	if (!w.c)
		return -ENOMEM;
	w.c->typed = l->typed;
	for (size_t i = 0; i < l->n_params && !w.err && l->typed; i++) {
		strbuf__reset(&w.path);
		w.err = strbuf__puts(&w.path, l->values[i].name);
		col_walk(&w, (int)i, -1, 0, l->values[i].type, 0);
	}
	if (!w.err && l->ret_value >= 0) {
		strbuf__reset(&w.path);
		w.err = strbuf__puts(&w.path, "return");
		col_walk(&w, l->ret_value, -1, 0, l->values[l->ret_value].type, 0);
	}
	/* a --capture is one leaf, found by its index: "\1NAME" is no path */
	w.c->first_capture = w.c->n;
	for (size_t i = 0; i < l->n_captures && !w.err; i++) {
		strbuf__reset(&w.path);
		w.err = strbuf__printf(&w.path, "\1%s", l->captures[i].name);
		col_add(&w);
	}
	strbuf__release(&w.path);
	if (w.err) {
		render_cols__free(w.c);
		return w.err;
	}
	*out = w.c;
	return 0;
}

void render_cols__free(struct render_cols *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->names[i]);
		free(c->paths[i]);
	}
	free(c->names);
	free(c->paths);
	free(c->slots);
	free(c);
}

/* ---- assembling a value's bytes ---- */

static uint8_t unavail_why(const struct plan_src *s)
{
	switch (s->reason) {
	case PU_XMM:
		return (uint8_t)(W_XMM0 + (s->reg - DREG_XMM0) % 16);
	case PU_X87:
		return (uint8_t)(W_ST0 + (s->reg - DREG_ST0) % 8);
	case PU_TOO_MANY_ITEMS:
		return W_DROPPED;
	default:
		return W_OPT;
	}
}

static void fill_reg(uint8_t *data, uint8_t *why, uint32_t n, uint64_t v)
{
	for (uint32_t i = 0; i < n; i++) {
		data[i] = i < 8 ? (uint8_t)(v >> (8 * i)) : 0;
		why[i] = i < 8 ? W_OK : W_OPT;
	}
}

/* A register source's value: the register plus the addend, shifted and
 * masked as DWARF computed it. */
static uint64_t reg_src(const struct plan_src *s, uint64_t reg)
{
	uint64_t v = (reg + (uint64_t)s->addend) >> s->shift;

	return s->mask ? v & s->mask : v;
}

static void assemble(const struct rctx *r, const struct plan_value *pv, uint8_t *data, uint8_t *why,
		     uint32_t size)
{
	uint32_t pos = 0;

	memset(why, W_OPT, size);
	for (uint8_t i = 0; i < pv->n_src && pos < size; i++) {
		const struct plan_src *s = &pv->src[i];
		uint32_t n = s->size < size - pos ? s->size : size - pos;
		const struct render_item *it;

		switch (s->kind) {
		case PSRC_ARG:
			fill_reg(data + pos, why + pos, n, reg_src(s, (uint64_t)r->c->args[s->index]));
			break;
		case PSRC_RET:
			fill_reg(data + pos, why + pos, n, reg_src(s, (uint64_t)r->c->ret));
			break;
		case PSRC_CONST:
			fill_reg(data + pos, why + pos, n, s->value);
			break;
		case PSRC_ITEM:
			it = item_at(r, s->at_return, s->index);
			if (!it) {
				memset(why + pos, W_MISSING, n);
			} else if (it->flags & CMON_ITEM_FAULT) {
				memset(why + pos, W_FAULT, n);
			} else if (s->item_kind == CMON_FETCH_REG && it->len >= 8) {
				/* a CMON_FETCH_REG item: the register's 8 bytes */
				uint64_t rv;

				memcpy(&rv, it->data, 8);
				fill_reg(data + pos, why + pos, n, reg_src(s, rv));
			} else {
				uint32_t have = it->len < n ? it->len : n;

				memcpy(data + pos, it->data, have);
				memset(why + pos, W_OK, have);
				memset(why + pos + have, W_SHORT, n - have);
			}
			break;
		default:
			memset(why + pos, unavail_why(s), n);
			break;
		}
		pos += s->size;
	}
}

/* An integer-like value whole in one register (most parameters): its bits
 * straight from the register, as assemble() and emit() would give them. */
static bool render_register_int(struct rctx *r, const struct plan_value *pv)
{
	const struct ctype *t = pv->type;
	const struct plan_src *s = &pv->src[0];
	uint64_t v;

	if (!t || pv->n_src != 1 || !t->size || t->size > 8 || s->size < t->size)
		return false;
	if (t->kind != CTYPE_INT && t->kind != CTYPE_UINT && t->kind != CTYPE_CHAR &&
	    t->kind != CTYPE_BOOL && t->kind != CTYPE_ENUM)
		return false;
	if (s->kind == PSRC_ARG)
		v = reg_src(s, (uint64_t)r->c->args[s->index]);
	else if (s->kind == PSRC_RET)
		v = reg_src(s, (uint64_t)r->c->ret);
	else
		return false;
	if (t->size < 8)
		v &= (1ULL << (t->size * 8)) - 1;
	put_intlike(r, t, v, t->size * 8);
	return true;
}

static int render_value(struct rctx *r, int index)
{
	const struct plan_value *pv = &r->l->values[index];
	uint32_t size = pv->type ? pv->type->size : 0;
	uint8_t small_data[64], small_why[64]; /* most values: no allocation per record */
	uint8_t *data = small_data, *why = small_why;
	struct view v;

	size_t start = 0;
	int col = leaf_open(r, &start);

	if (render_register_int(r, pv)) {
		if (col >= 0)
			leaf_close(r, col, start);
		return r->err;
	}
	r->in_leaf = false; /* emit opens the leaf again */

	if (size > MAX_VALUE_BYTES)
		size = MAX_VALUE_BYTES;
	if (size > sizeof(small_data)) {
		data = calloc(size, 1);
		why = calloc(size, 1);
		if (!data || !why) {
			free(data);
			free(why);
			return -ENOMEM;
		}
	} else {
		memset(small_data, 0, sizeof(small_data));
		memset(small_why, 0, sizeof(small_why));
	}
	assemble(r, pv, data, why, size);
	v = (struct view){ .data = data, .why = why, .size = size, .value = index, .parent = -1 };
	emit(r, &v, 0, pv->type, ".", 0);
	if (data != small_data) {
		free(data);
		free(why);
	}
	return r->err;
}

/* ---- blobs ---- */

static void add_blob(struct rctx *r, const char *name, const struct ctype *elem,
		     const uint32_t *shape, uint8_t ndim, const void *data, size_t len, bool truncated)
{
	struct render_out *o = r->o;
	struct render_blob *b;
	size_t name_off, data_off;

	if (r->err || r->no_blobs)
		return;
	if (o->n_blobs == o->cap_blobs) {
		size_t cap = o->cap_blobs ? o->cap_blobs * 2 : 8;
		struct render_blob *nb = realloc(o->blobs, cap * sizeof(*nb));
		size_t *offs;

		if (!nb) {
			r->err = -ENOMEM;
			return;
		}
		o->blobs = nb;
		offs = realloc(o->blob_offs, cap * 2 * sizeof(*offs));
		if (!offs) {
			r->err = -ENOMEM;
			return;
		}
		o->blob_offs = offs;
		o->cap_blobs = cap;
	}
	/* name and bytes go to blobbuf; pointers are set at the end, after
	 * the last realloc */
	name_off = o->blobbuf.len;
	r->err = strbuf__putn(&o->blobbuf, name ? name : "", name ? strlen(name) + 1 : 1);
	data_off = o->blobbuf.len;
	if (!r->err)
		r->err = strbuf__putn(&o->blobbuf, data, len);
	if (r->err)
		return;
	b = &o->blobs[o->n_blobs];
	memset(b, 0, sizeof(*b));
	if (elem)
		ctype__dtype(elem, b->dtype, sizeof(b->dtype));
	else
		snprintf(b->dtype, sizeof(b->dtype), "|u1");
	for (uint8_t i = 0; i < ndim && i < RENDER_MAX_DIMS; i++)
		b->shape[i] = shape[i];
	b->ndim = ndim;
	b->len = len;
	b->truncated = truncated;
	o->blob_offs[2 * o->n_blobs] = name_off;
	o->blob_offs[2 * o->n_blobs + 1] = data_off;
	o->n_blobs++;
}

/* ---- --capture ---- */

/* Capture PC as read at the call, or AT_RETURN by its return item; its
 * path goes under what R's path holds ("at_return"). */
static void render_capture(struct rctx *r, const struct plan_capture *pc, bool at_return)
{
	const struct render_item *it;
	uint64_t want = UINT64_MAX, bytes;
	bool truncated;
	int item = at_return ? pc->ret_item : pc->item;
	size_t saved = path_push(r, r->o->path.len ? "." : NULL, pc->name);

	if (item < 0) {
		put_marker(r, W_DROPPED, NULL);
		goto out;
	}
	it = item_at(r, at_return, item);
	if (!it) {
		put_marker(r, W_MISSING, NULL);
		goto out;
	}
	if (it->flags & CMON_ITEM_FAULT) {
		put_marker(r, W_FAULT, NULL);
		goto out;
	}
	/* the exact count, when known: the register may hold more than the
	 * argument (an int's upper half) */
	if (pc->len.kind == PSRC_ARG || pc->len.kind == PSRC_CONST) {
		uint64_t raw = pc->len.kind == PSRC_CONST ? pc->len.value :
			       (uint64_t)r->c->args[pc->len.index];
		unsigned bits = pc->len.kind == PSRC_CONST ? 64 : pc->len.size * 8;
		int64_t count;

		if (bits < 64) {
			raw &= (1ULL << bits) - 1;
			if (pc->len_signed && (raw >> (bits - 1)) & 1)
				raw |= ~0ULL << bits;
		}
		count = (int64_t)raw;
		if (pc->len_signed && count < 0)
			want = 0;
		else
			want = raw > UINT64_MAX / pc->elem_size ? UINT64_MAX : raw * pc->elem_size;
	}
	bytes = it->len;
	if (want != UINT64_MAX && want < bytes)
		bytes = want;
	bytes -= bytes % pc->elem_size;
	truncated = want != UINT64_MAX ? want > bytes : (it->flags & CMON_ITEM_TRUNCATED) != 0;
	if (pc->kind == CAPTURE_STR) {
		put_str(r, it->data, it->len);
		truncated = (it->flags & CMON_ITEM_TRUNCATED) != 0;
		bytes = it->len;
	} else if (pc->kind == CAPTURE_BUF) {
		static const char hex[] = "0123456789abcdef";
		const uint8_t *p = it->data;
		char *o;

		/* Written in place: a call per byte cost more than the bytes. */
		if (!r->err)
			r->err = strbuf__reserve(r->sb, 2 * bytes + 2);
		if (r->err)
			goto out;
		o = r->sb->buf + r->sb->len;
		*o++ = '"';
		for (uint64_t i = 0; i < bytes; i++) {
			*o++ = hex[p[i] >> 4];
			*o++ = hex[p[i] & 15];
		}
		*o++ = '"';
		*o = '\0';
		r->sb->len = (size_t)(o - r->sb->buf);
	} else {
		uint32_t n = (uint32_t)(bytes / pc->elem_size);
		uint8_t *why = calloc(bytes ? bytes : 1, 1);
		struct view v = { .data = it->data, .why = why, .size = (uint32_t)bytes,
				  .value = -1, .parent = -1 };
		char idx[24];

		if (!why) {
			r->err = -ENOMEM;
			goto out;
		}
		put(r, "[");
		r->in_capture = true;
		for (uint32_t i = 0; i < n && !r->err; i++) {
			size_t s2;

			if (i)
				put(r, ",");
			snprintf(idx, sizeof(idx), "[%u]", i);
			s2 = path_push(r, NULL, idx);
			emit(r, &v, i * pc->elem_size, pc->elem, ".", 1);
			path_pop(r, s2);
		}
		r->in_capture = false;
		put(r, "]");
		free(why);
	}
	if (truncated)
		note_truncated(r);
	{
		uint32_t shape[RENDER_MAX_DIMS] = { (uint32_t)(bytes / pc->elem_size) };
		const struct ctype *elem = pc->kind == CAPTURE_ARRAY ? pc->elem : NULL, *ne = NULL;
		uint8_t nd = 1;

		/* elements that are arrays of numbers (double (*q)[2]): one
		 * array of [n, 2] doubles, not n opaque records */
		if (elem && elem->kind == CTYPE_ARRAY) {
			uint8_t inner = numeric_shape(elem, shape + 1, &ne);

			if (inner && inner < RENDER_MAX_DIMS) {
				nd = (uint8_t)(1 + inner);
				elem = ne;
			}
		}
		add_blob(r, pc->name, elem, shape, nd, it->data, (size_t)bytes, truncated);
		/* A string is characters, not bytes: readers show it as text. */
		if (!r->err && !r->no_blobs && pc->kind == CAPTURE_STR)
			snprintf(r->o->blobs[r->o->n_blobs - 1].dtype,
				 sizeof(r->o->blobs[0].dtype), "|S1");
	}
out:
	path_pop(r, saved);
}

/* ---- the call ---- */

static void out_clear(struct render_out *o)
{
	strbuf__reset(&o->args);
	strbuf__reset(&o->ret);
	strbuf__reset(&o->captures);
	strbuf__reset(&o->truncated);
	strbuf__reset(&o->faults);
	strbuf__reset(&o->at_return);
	strbuf__reset(&o->changed);
	o->n_changed = 0;
	strbuf__reset(&o->cellbuf);
	strbuf__reset(&o->blobbuf);
	strbuf__reset(&o->path);
	o->n_truncated = o->n_faults = o->n_unavailable = 0;
	o->n_cells = 0;
	o->n_blobs = 0;
	o->n_leaves = 0;
	strbuf__reset(&o->unavailable);
}

/* --capture-at both: the same pointers (and --capture buffers) at the
 * return, into at_return, and what changed, into changed.  0 or -ENOMEM. */
static int render_at_return(struct rctx *r)
{
	const struct plan_layout *l = r->l;
	struct render_out *o = r->o;
	struct strbuf *one = &o->one;
	int err;
	size_t n = 0;

	r->no_leaves = true;
	err = strbuf__putc(&o->at_return, '{') ?: strbuf__putc(&o->changed, '{');
	for (size_t i = 0; i < l->n_params && !err; i++) {
		const char *name = l->values[i].name;

		if (l->again[i] < 0)
			continue;
		strbuf__reset(one);
		r->sb = one;
		path_pop(r, 0);
		/* its notes name this read: "at_return.buf", not "buf" */
		path_push(r, NULL, "at_return");
		path_push(r, ".", name);
		err = r->err ?: render_value(r, l->again[i]);
		if (!err && n++)
			err = strbuf__putc(&o->at_return, ',');
		err = err ?: json_escape(&o->at_return, name);
		err = err ?: strbuf__putc(&o->at_return, ':');
		err = err ?: strbuf__putn(&o->at_return, one->buf ? one->buf : "", one->len);
		err = err ?: changed__diff(&o->changed, &o->n_changed, name,
					   o->cellbuf.buf + o->cell_offs[i],
					   one->buf ? one->buf : "null");
	}
	/* and the --capture buffers, by the entry's pointer and count */
	r->no_blobs = true;
	for (size_t i = 0; i < l->n_captures && !err; i++) {
		const struct plan_capture *pc = &l->captures[i];

		if (pc->ret_item < 0)
			continue;
		strbuf__reset(one);
		r->sb = one;
		path_pop(r, 0);
		path_push(r, NULL, "at_return");
		render_capture(r, pc, true);
		err = r->err;
		if (!err && n++)
			err = strbuf__putc(&o->at_return, ',');
		err = err ?: json_escape(&o->at_return, pc->name);
		err = err ?: strbuf__putc(&o->at_return, ':');
		err = err ?: strbuf__putn(&o->at_return, one->buf ? one->buf : "", one->len);
		err = err ?: changed__diff(&o->changed, &o->n_changed, pc->name,
					   o->cellbuf.buf + o->cell_offs[l->n_params + i],
					   one->buf ? one->buf : "null");
	}
	r->no_blobs = false;
	r->no_leaves = false;
	err = err ?: strbuf__putc(&o->at_return, '}') ?: strbuf__putc(&o->changed, '}');
	o->again_truncated[1] = o->truncated.len;
	o->again_faults[1] = o->faults.len;
	return err;
}

int render__call(const struct plan_layout *l, const struct render_call *c, struct render_out *o)
{
	struct rctx r = { .l = l, .c = c, .o = o };
	struct strbuf *one = &o->one; /* a parameter's text; its memory kept */
	int err;

	out_clear(o);
	err = strbuf__putc(&o->truncated, '[') ?: strbuf__putc(&o->faults, '[');
	err = err ?: strbuf__putc(&o->args, '{');
	if (err)
		return err;
	/* cell_offs: the parameters' cells, then the captures' texts (their
	 * values at the call, for "changed") */
	if (o->cap_cells < l->n_params + l->n_captures) {
		size_t n = l->n_params + l->n_captures;
		size_t *offs = realloc(o->cell_offs, n * sizeof(*offs));
		const char **cells;

		if (!offs)
			return -ENOMEM;
		o->cell_offs = offs;
		cells = realloc(o->cells, n * sizeof(*cells));
		if (!cells)
			return -ENOMEM;
		o->cells = cells;
		o->cap_cells = n;
	}
	/* parameters: each into ONE, then into args and its cell; with
	 * --capture-at return, a pointer's pointee as the return found it */
	for (size_t i = 0; i < l->n_params && !err; i++) {
		const char *name = l->values[i].name;
		int vi = l->capture_at == PLAN_AT_RETURN && l->again && l->again[i] >= 0 &&
				 c->has_ret ? l->again[i] : (int)i;

		size_t mark = o->n_leaves;

		strbuf__reset(one);
		r.sb = one;
		path_pop(&r, 0);
		path_push(&r, NULL, name);
		err = r.err ?: render_value(&r, vi);
		/* the leaves' offsets in ONE become offsets in cellbuf */
		for (size_t k = mark; k < o->n_leaves; k++)
			o->leaves[k].text += o->cellbuf.len;
		if (!err && i)
			err = strbuf__putc(&o->args, ',');
		err = err ?: json_escape(&o->args, name);
		err = err ?: strbuf__putc(&o->args, ':');
		err = err ?: strbuf__putn(&o->args, one->buf ? one->buf : "", one->len);
		o->cell_offs[i] = o->cellbuf.len;
		err = err ?: strbuf__putn(&o->cellbuf, one->buf ? one->buf : "", one->len + 1);
		o->n_cells = i + 1;
	}
	err = err ?: strbuf__putc(&o->args, '}');
	/* the return value */
	if (!err) {
		r.sb = &o->ret;
		path_pop(&r, 0);
		path_push(&r, NULL, "return");
		if (l->ret_value >= 0 && c->has_ret)
			err = r.err ?: render_value(&r, l->ret_value);
		else
			err = strbuf__puts(&o->ret, "null");
	}
	/* --capture: each into ONE, then into captures and (for "changed")
	 * cellbuf; with --capture-at return, as the return found it */
	err = err ?: strbuf__putc(&o->captures, '{');
	for (size_t i = 0; i < l->n_captures && !err; i++) {
		const struct plan_capture *pc = &l->captures[i];

		int col = c->cols ? (int)(c->cols->first_capture + i) : -1;
		size_t mark = o->n_leaves;

		strbuf__reset(one);
		r.sb = one;
		path_pop(&r, 0);
		r.in_leaf = col >= 0;
		r.kind = RK_NULL;
		render_capture(&r, pc, l->capture_at == PLAN_AT_RETURN && pc->ret_item >= 0 &&
					       c->has_ret);
		if (col >= 0)
			leaf_close(&r, col, 0);
		for (size_t k = mark; k < o->n_leaves; k++)
			o->leaves[k].text += o->cellbuf.len;
		err = r.err;
		if (!err && i)
			err = strbuf__putc(&o->captures, ',');
		err = err ?: json_escape(&o->captures, pc->name);
		err = err ?: strbuf__putc(&o->captures, ':');
		err = err ?: strbuf__putn(&o->captures, one->buf ? one->buf : "", one->len);
		o->cell_offs[l->n_params + i] = o->cellbuf.len;
		err = err ?: strbuf__putn(&o->cellbuf, one->buf ? one->buf : "", one->len + 1);
	}
	err = err ?: strbuf__putc(&o->captures, '}');
	/* --capture-at both: the same pointers (and --capture buffers) at the
	 * return, and the change; after the rest, so that the notes of these
	 * reads are one range of truncated / faults */
	o->again_truncated[0] = o->again_truncated[1] = o->truncated.len;
	o->again_faults[0] = o->again_faults[1] = o->faults.len;
	o->again_n_truncated = o->n_truncated;
	o->again_n_faults = o->n_faults;
	if (!err && l->capture_at == PLAN_AT_BOTH && l->again && c->has_ret)
		err = render_at_return(&r);
	o->again_n_truncated = o->n_truncated - o->again_n_truncated;
	o->again_n_faults = o->n_faults - o->again_n_faults;
	err = err ?: strbuf__putc(&o->truncated, ']');
	err = err ?: strbuf__putc(&o->faults, ']');
	if (err)
		return err;
	for (size_t i = 0; i < o->n_cells; i++)
		o->cells[i] = o->cellbuf.buf + o->cell_offs[i];
	for (size_t i = 0; i < o->n_leaves; i++)
		o->leaves[i].text = (o->leaf_where[i] ? o->ret.buf : o->cellbuf.buf) +
				    (uintptr_t)o->leaves[i].text;
	for (size_t i = 0; i < o->n_blobs; i++) {
		o->blobs[i].name = o->blobbuf.buf + o->blob_offs[2 * i];
		o->blobs[i].data = o->blobbuf.buf + o->blob_offs[2 * i + 1];
	}
	return 0;
}

void render_out__release(struct render_out *o)
{
	if (!o)
		return;
	strbuf__release(&o->args);
	strbuf__release(&o->ret);
	strbuf__release(&o->captures);
	strbuf__release(&o->truncated);
	strbuf__release(&o->faults);
	strbuf__release(&o->at_return);
	strbuf__release(&o->changed);
	strbuf__release(&o->cellbuf);
	strbuf__release(&o->blobbuf);
	strbuf__release(&o->path);
	strbuf__release(&o->one);
	free(o->cells);
	free(o->cell_offs);
	free(o->blobs);
	free(o->blob_offs);
	free(o->leaves);
	free(o->leaf_where);
	strbuf__release(&o->unavailable);
	memset(o, 0, sizeof(*o));
}
