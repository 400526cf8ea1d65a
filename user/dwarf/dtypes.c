// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dtypes.c: ctype graphs from DWARF DIEs (cached per DIE), with their C and
 * C++ display names, sizes, alignments and C++ by-reference passing.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "core/grow.h"
#include "core/escape.h"
#include "dwarf/debuginfo_impl.h"

#define MAX_TYPE_DEPTH 48

/* ------------------------------------------------------------------ */
/* Types                                                               */

static int vec_push(struct ptr_vec *v, struct ctype *t)
{
	if (GROW(v->v, v->n, v->cap, 32))
		return -ENOMEM;
	v->v[v->n++] = t;
	return 0;
}

static size_t slot_hash(const void *key, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 20) & (cap - 1);
}

static struct ctype *cache_get(struct debuginfo *di, const void *key)
{
	if (!di->cap_slots)
		return NULL;
	for (size_t i = slot_hash(key, di->cap_slots);; i = (i + 1) & (di->cap_slots - 1)) {
		if (!di->slots[i].key)
			return NULL;
		if (di->slots[i].key == key)
			return di->slots[i].type;
	}
}

static int cache_put(struct debuginfo *di, const void *key, struct ctype *t)
{
	if ((di->n_slots + 1) * 2 > di->cap_slots) {
		size_t cap = di->cap_slots ? di->cap_slots * 2 : 256;
		struct type_slot *s = calloc(cap, sizeof(*s));

		if (!s)
			return -ENOMEM;
		for (size_t i = 0; i < di->cap_slots; i++) {
			size_t j;

			if (!di->slots[i].key)
				continue;
			for (j = slot_hash(di->slots[i].key, cap); s[j].key; j = (j + 1) & (cap - 1))
				;
			s[j] = di->slots[i];
		}
		free(di->slots);
		di->slots = s;
		di->cap_slots = cap;
	}
	size_t i = slot_hash(key, di->cap_slots);

	while (di->slots[i].key)
		i = (i + 1) & (di->cap_slots - 1);
	di->slots[i].key = key;
	di->slots[i].type = t;
	di->n_slots++;
	return 0;
}

bool dtype__die_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	Dwarf_Die def;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, out))
		return false;
	/* A type in a type unit (-fdebug-types-section): the CU holds a
	 * declaration whose DW_AT_signature names the definition. */
	if (dwarf_attr(out, DW_AT_signature, &a) && dwarf_formref_die(&a, &def))
		*out = def;
	return true;
}

static bool is_cxx(Dwarf_Die *die)
{
	Dwarf_Die cu;
	int lang;

	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return false;
	lang = dwarf_srclang(&cu);
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

static bool is_qualifier(int tag)
{
	return tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
	       tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type;
}

/* The tag under any qualifiers (not typedefs: a typedef is a name, which
 * is what C declarator syntax cares about). */
static int tag_under_quals(Dwarf_Die *die)
{
	Dwarf_Die cur = *die, next;

	for (int i = 0; i < 8; i++) {
		int tag = dwarf_tag(&cur);

		if (!is_qualifier(tag))
			return tag;
		if (!dtype__die_type(&cur, &next))
			return DW_TAG_base_type; /* const void */
		cur = next;
	}
	return DW_TAG_base_type;
}

static int dname(Dwarf_Die *die, const char *inner, struct strbuf *out, bool cxx, int depth);
static int dname_ptr_paren(Dwarf_Die *die, const char *sym, const char *inner,
			   struct strbuf *out, bool cxx, int depth);

static int dname_inner(Dwarf_Die *die, const char *pre, const char *inner, const char *post,
		       struct strbuf *out, bool cxx, int depth)
{
	struct strbuf s = { 0 };
	Dwarf_Die t;
	int err;

	err = strbuf__puts(&s, pre);
	if (!err)
		err = strbuf__puts(&s, inner);
	if (!err)
		err = strbuf__puts(&s, post);
	if (!err)
		err = dname(dtype__die_type(die, &t) ? &t : NULL, s.buf, out, cxx, depth + 1);
	free(s.buf);
	return err;
}

/* C declarator syntax: the name of type DIE wrapped around INNER ("" for
 * an abstract declarator): "char *", "int (*)[3]", "char *const". */
static int dname(Dwarf_Die *die, const char *inner, struct strbuf *out, bool cxx, int depth)
{
	const char *name, *base = NULL, *prefix = "";
	struct strbuf tmp = { 0 };
	Dwarf_Die t, child;
	int tag, err = 0;

	if (depth > 32)
		return strbuf__puts(out, "?");
	if (!die) {
		base = "void";
		goto simple;
	}
	tag = dwarf_tag(die);
	name = dwarf_diename(die);
	switch (tag) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		const char *sym = tag == DW_TAG_pointer_type ? "*" :
				  tag == DW_TAG_reference_type ? "&" : "&&";
		int ttag = dtype__die_type(die, &t) ? tag_under_quals(&t) : DW_TAG_base_type;

		if (ttag == DW_TAG_array_type || ttag == DW_TAG_subroutine_type)
			return dname_ptr_paren(die, sym, inner, out, cxx, depth);
		return dname_inner(die, sym, inner, "", out, cxx, depth);
	}
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type: {
		const char *q = tag == DW_TAG_const_type ? "const" :
				tag == DW_TAG_volatile_type ? "volatile" :
				tag == DW_TAG_restrict_type ? "restrict" : "_Atomic";
		int ttag = dtype__die_type(die, &t) ? tag_under_quals(&t) : DW_TAG_base_type;

		if (ttag == DW_TAG_pointer_type || ttag == DW_TAG_reference_type ||
		    ttag == DW_TAG_rvalue_reference_type)
			return dname_inner(die, q, *inner ? " " : "", inner, out, cxx, depth);
		err = strbuf__puts(out, q);
		if (!err)
			err = strbuf__putc(out, ' ');
		if (!err)
			err = dname(dtype__die_type(die, &t) ? &t : NULL, inner, out, cxx, depth + 1);
		return err;
	}
	case DW_TAG_array_type:
		err = strbuf__puts(&tmp, inner);
		if (dwarf_child(die, &child) == 0) {
			do {
				Dwarf_Word n = 0;
				Dwarf_Attribute a;

				if (dwarf_tag(&child) != DW_TAG_subrange_type)
					continue;
				if (dwarf_attr(&child, DW_AT_count, &a) && dwarf_formudata(&a, &n) == 0)
					err = err ?: strbuf__printf(&tmp, "[%llu]", (unsigned long long)n);
				else if (dwarf_attr(&child, DW_AT_upper_bound, &a) &&
					 dwarf_formudata(&a, &n) == 0)
					err = err ?: strbuf__printf(&tmp, "[%llu]", (unsigned long long)n + 1);
				else
					err = err ?: strbuf__puts(&tmp, "[]");
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		if (!err)
			err = dname(dtype__die_type(die, &t) ? &t : NULL, tmp.buf ? tmp.buf : "", out, cxx,
				    depth + 1);
		free(tmp.buf);
		return err;
	case DW_TAG_subroutine_type: {
		bool first = true, proto;
		Dwarf_Attribute a;

		err = strbuf__puts(&tmp, inner);
		err = err ?: strbuf__putc(&tmp, '(');
		proto = dwarf_attr(die, DW_AT_prototyped, &a) != NULL;
		if (dwarf_child(die, &child) == 0) {
			do {
				int ctag = dwarf_tag(&child);

				if (ctag == DW_TAG_formal_parameter) {
					err = err ?: strbuf__puts(&tmp, first ? "" : ", ");
					err = err ?: dname(dtype__die_type(&child, &t) ? &t : NULL, "", &tmp, cxx,
							   depth + 1);
					first = false;
				} else if (ctag == DW_TAG_unspecified_parameters) {
					err = err ?: strbuf__puts(&tmp, first ? "..." : ", ...");
					first = false;
				}
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		if (first && proto && !cxx)
			err = err ?: strbuf__puts(&tmp, "void");
		err = err ?: strbuf__putc(&tmp, ')');
		if (!err)
			err = dname(dtype__die_type(die, &t) ? &t : NULL, tmp.buf, out, cxx, depth + 1);
		free(tmp.buf);
		return err;
	}
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
		if (!cxx)
			prefix = tag == DW_TAG_union_type ? "union " :
				 tag == DW_TAG_enumeration_type ? "enum " :
				 tag == DW_TAG_class_type ? "class " : "struct ";
		base = name ? name : "{...}";
		if (cxx && !name)
			prefix = tag == DW_TAG_union_type ? "union " :
				 tag == DW_TAG_enumeration_type ? "enum " : "struct ";
		break;
	default:
		base = name ? name : "?";
		break;
	}
simple:
	err = strbuf__puts(out, prefix);
	err = err ?: strbuf__puts(out, base);
	if (!err && *inner) {
		/* "char *", "int [3]", "void (*)(int)"; no space before "&" in C++
		 * style is not worth a special case. */
		err = strbuf__putc(out, ' ');
		err = err ?: strbuf__puts(out, inner);
	}
	return err;
}

/* Pointer to array or function: "(" sym inner ")" around the inner
 * declarator.  Split out of dname() to keep the recursion readable. */
static int dname_ptr_paren(Dwarf_Die *die, const char *sym, const char *inner,
			   struct strbuf *out, bool cxx, int depth)
{
	struct strbuf s = { 0 };
	Dwarf_Die t;
	int err;

	err = strbuf__putc(&s, '(');
	err = err ?: strbuf__puts(&s, sym);
	err = err ?: strbuf__puts(&s, inner);
	err = err ?: strbuf__putc(&s, ')');
	if (!err)
		err = dname(dtype__die_type(die, &t) ? &t : NULL, s.buf, out, cxx, depth + 1);
	free(s.buf);
	return err;
}

static char *type_name(struct debuginfo *di, Dwarf_Die *die)
{
	struct strbuf s = { 0 };
	char *r;

	if (dname(die, "", &s, is_cxx(die), 0) || !s.buf) {
		free(s.buf);
		return NULL;
	}
	r = ctype_arena__strdup(di->arena, s.buf);
	free(s.buf);
	return r;
}

static uint32_t die_size(Dwarf_Die *die, uint32_t dflt)
{
	Dwarf_Word sz;

	if (dwarf_aggregate_size(die, &sz) == 0 && sz <= UINT32_MAX)
		return (uint32_t)sz;
	return dflt;
}

static bool attr_udata(Dwarf_Die *die, unsigned name, Dwarf_Word *v)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, name, &a) && dwarf_formudata(&a, v) == 0;
}

/*
 * A struct, class or union only declared in a CU (DW_AT_declaration) is
 * defined in another: clang by default (-flimit-debug-info) describes a
 * class with a vtable only in the CU of its key function, and a template
 * instantiation declared extern only where it is instantiated; gcc too for
 * a class whose key function is elsewhere.  Found by qualified name, as
 * gdb resolves such opaque types.
 */
struct type_def {
	char *name;     /* "ns::Outer::K" */
	Dwarf_Off off;  /* the definition's DIE */
	bool is_union;
};

static int type_def_cmp(const void *a, const void *b)
{
	const struct type_def *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (int)x->is_union - (int)y->is_union;
}

static bool is_record(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
	       tag == DW_TAG_union_type;
}

static char *qualify(const char *prefix, const char *name)
{
	char *q;

	if (!*prefix)
		return strdup(name);
	return asprintf(&q, "%s::%s", prefix, name) < 0 ? NULL : q;
}

/* The definitions under PARENT (a CU, namespace or record) named PREFIX. */
static void defs_walk(struct debuginfo *di, Dwarf_Die *parent, const char *prefix, size_t *cap,
		      int depth)
{
	Dwarf_Die child;

	if (depth > 16 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		const char *name = dwarf_diename(&child);
		char *q;

		if (tag == DW_TAG_namespace) {
			q = qualify(prefix, name ? name : "(anonymous namespace)");
			if (q)
				defs_walk(di, &child, q, cap, depth + 1);
			free(q);
			continue;
		}
		if (!is_record(tag) || !name || !(q = qualify(prefix, name)))
			continue;
		if (!dwarf_hasattr(&child, DW_AT_declaration) &&
		    dwarf_hasattr(&child, DW_AT_byte_size)) {
			if (GROW(di->type_defs, di->n_type_defs, *cap, 256)) {
				free(q);
				return;
			}
			di->type_defs[di->n_type_defs++] = (struct type_def){
				.name = q, .off = dwarf_dieoffset(&child),
				.is_union = tag == DW_TAG_union_type };
			defs_walk(di, &child, q, cap, depth + 1); /* nested types */
			continue;
		}
		defs_walk(di, &child, q, cap, depth + 1);
		free(q);
	} while (dwarf_siblingof(&child, &child) == 0);
}

struct defs_build {
	struct debuginfo *di;
	size_t cap;
};

static int defs_of_cu(Dwarf_Die *cu, void *arg)
{
	struct defs_build *b = arg;

	defs_walk(b->di, cu, "", &b->cap, 0);
	return 0;
}

static void defs_build(struct debuginfo *di)
{
	struct defs_build b = { .di = di };

	di->type_defs_built = true;
	/* as in the file: a definition is found again by its DIE offset */
	debuginfo__each_cu(di, false, defs_of_cu, &b);
	if (di->n_type_defs)
		qsort(di->type_defs, di->n_type_defs, sizeof(*di->type_defs), type_def_cmp);
}

void dtype__free_defs(struct debuginfo *di)
{
	for (size_t i = 0; i < di->n_type_defs; i++)
		free(di->type_defs[i].name);
	free(di->type_defs);
}

/* The definition of the record DIE declares, from any CU. */
static bool type_definition(struct debuginfo *di, Dwarf_Die *die, Dwarf_Die *def)
{
	Dwarf_Die *scopes = NULL;
	struct type_def key = { .is_union = dwarf_tag(die) == DW_TAG_union_type }, *d;
	char *q = strdup(""), *n;
	int ns;
	bool ok = false;

	ns = dwarf_getscopes_die(die, &scopes);
	/* scopes[0] is DIE, the last its CU: the enclosing names between */
	for (int i = ns - 2; q && i >= 0; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *name = dwarf_diename(&scopes[i]);

		if (tag == DW_TAG_namespace && !name)
			name = "(anonymous namespace)";
		if ((tag != DW_TAG_namespace && !is_record(tag)) || !name)
			goto out; /* a local or unnamed one: defined in its own CU */
		n = qualify(q, name);
		free(q);
		q = n;
	}
	if (ns <= 0 || !q)
		goto out;
	if (!di->type_defs_built)
		defs_build(di);
	key.name = q;
	d = bsearch(&key, di->type_defs, di->n_type_defs, sizeof(*d), type_def_cmp);
	ok = d && dwarf_offdie(di->dwarf, d->off, def);
out:
	free(q);
	free(scopes);
	return ok;
}

static struct ctype *new_node(struct debuginfo *di, Dwarf_Die *die, enum ctype_kind kind,
			      uint32_t size, uint32_t align)
{
	struct ctype *t = ctype_arena__alloc(di->arena, sizeof(*t));

	if (!t)
		return NULL;
	t->kind = kind;
	t->name = type_name(di, die);
	t->size = size;
	t->align = align ? align : 1;
	if (!t->name || cache_put(di, die->addr, t) || vec_push(&di->fresh, t))
		return NULL;
	return t;
}

static int member_offset(Dwarf_Die *m, Dwarf_Word *off)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	*off = 0;
	if (!dwarf_attr(m, DW_AT_data_member_location, &a))
		return 0; /* union members */
	if (dwarf_formudata(&a, off) == 0)
		return 0;
	/* DWARF 2: an expression, DW_OP_plus_uconst N */
	if (dwarf_getlocation(&a, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst) {
		*off = ops[0].number;
		return 0;
	}
	return -ENOTSUP;
}

static int build_members(struct debuginfo *di, Dwarf_Die *die, struct ctype *t, int depth)
{
	Dwarf_Die child;
	size_t n = 0, i = 0;
	struct ctype_member *m;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Attribute a;

		if ((tag == DW_TAG_member && !dwarf_attr(&child, DW_AT_declaration, &a) &&
		     !dwarf_attr(&child, DW_AT_external, &a)) ||
		    tag == DW_TAG_inheritance)
			n++;
	} while (dwarf_siblingof(&child, &child) == 0);
	if (!n)
		return 0;
	m = ctype_arena__alloc(di->arena, n * sizeof(*m));
	if (!m)
		return -ENOMEM;
	dwarf_child(die, &child);
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Attribute a;
		Dwarf_Die mt;
		Dwarf_Word off, bits, v;
		const char *name;

		if (!((tag == DW_TAG_member && !dwarf_attr(&child, DW_AT_declaration, &a) &&
		       !dwarf_attr(&child, DW_AT_external, &a)) ||
		      tag == DW_TAG_inheritance))
			continue;
		if (i >= n)
			break;
		name = dwarf_diename(&child);
		m[i].type = dtype__of(di, dtype__die_type(&child, &mt) ? &mt : NULL, depth + 1);
		if (!m[i].type)
			return -ENOMEM;
		if (tag == DW_TAG_inheritance)
			name = m[i].type->name; /* a base class: named after it */
		if (name) {
			m[i].name = ctype_arena__strdup(di->arena, name);
			if (!m[i].name)
				return -ENOMEM;
		}
		if (member_offset(&child, &off) != 0)
			off = 0;
		m[i].offset = (uint32_t)off;
		if (attr_udata(&child, DW_AT_bit_size, &bits) && bits > 0) {
			m[i].bit_size = (uint16_t)bits;
			if (attr_udata(&child, DW_AT_data_bit_offset, &v)) {
				m[i].bit_offset = (uint32_t)v;
			} else if (attr_udata(&child, DW_AT_bit_offset, &v)) {
				/* DWARF 2/3: counted from the most significant bit
				 * of a storage unit of DW_AT_byte_size bytes. */
				Dwarf_Word unit;

				if (!attr_udata(&child, DW_AT_byte_size, &unit))
					unit = die_size(&mt, 4);
				m[i].bit_offset = (uint32_t)(off * 8 + unit * 8 - v - bits);
			} else {
				m[i].bit_offset = (uint32_t)(off * 8);
			}
			m[i].offset = m[i].bit_offset / 8;
		}
		i++;
	} while (dwarf_siblingof(&child, &child) == 0);
	t->members = m;
	t->n_members = i;
	return 0;
}

/* A Rust enum: DIE's variant part, if it has one, as T's variants.  Its
 * discriminant is the member DW_AT_discr names; a variant without
 * DW_AT_discr_value takes every value the others do not (a niche layout's
 * dataful variant).  Left a plain struct when the part is not understood. */
static int build_variants(struct debuginfo *di, Dwarf_Die *die, struct ctype *t, int depth)
{
	Dwarf_Die part, child, discr, dt, mem, mt;
	struct ctype_variant *vs;
	Dwarf_Attribute a;
	Dwarf_Word doff, off, v;
	size_t n = 0, i = 0;
	uint32_t size;

	if (dwarf_child(die, &part) != 0)
		return 0;
	while (dwarf_tag(&part) != DW_TAG_variant_part)
		if (dwarf_siblingof(&part, &part) != 0)
			return 0;
	if (!dwarf_attr(&part, DW_AT_discr, &a) || !dwarf_formref_die(&a, &discr) ||
	    member_offset(&discr, &doff) != 0 || !dtype__die_type(&discr, &dt))
		return 0;
	size = die_size(&dt, 0);
	if (!size || size > 8 || doff + size > t->size || dwarf_child(&part, &child) != 0)
		return 0;
	do
		n += dwarf_tag(&child) == DW_TAG_variant;
	while (dwarf_siblingof(&child, &child) == 0);
	if (!n)
		return 0;
	vs = ctype_arena__alloc(di->arena, n * sizeof(*vs));
	if (!vs)
		return -ENOMEM;
	dwarf_child(&part, &child);
	do {
		const char *name;

		if (dwarf_tag(&child) != DW_TAG_variant || i >= n)
			continue;
		if (dwarf_child(&child, &mem) != 0)
			return 0;
		while (dwarf_tag(&mem) != DW_TAG_member)
			if (dwarf_siblingof(&mem, &mem) != 0)
				return 0;
		/* the variant's struct lies over the whole enum */
		if (member_offset(&mem, &off) != 0 || off || !(name = dwarf_diename(&mem)))
			return 0;
		vs[i].name = ctype_arena__strdup(di->arena, name);
		vs[i].type = dtype__of(di, dtype__die_type(&mem, &mt) ? &mt : NULL, depth + 1);
		if (!vs[i].name || !vs[i].type)
			return -ENOMEM;
		vs[i].is_default = !attr_udata(&child, DW_AT_discr_value, &v);
		vs[i].discr_value = vs[i].is_default ? 0 : v;
		i++;
	} while (dwarf_siblingof(&child, &child) == 0);
	t->variants = vs;
	t->n_variants = i;
	t->discr_offset = (uint32_t)doff;
	t->discr_size = size;
	return 0;
}

static int build_enumerators(struct debuginfo *di, Dwarf_Die *die, struct ctype *t)
{
	Dwarf_Die child;
	size_t n = 0, i = 0;
	struct ctype_enumerator *e;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do
		n += dwarf_tag(&child) == DW_TAG_enumerator;
	while (dwarf_siblingof(&child, &child) == 0);
	if (!n)
		return 0;
	e = ctype_arena__alloc(di->arena, n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	dwarf_child(die, &child);
	do {
		Dwarf_Attribute a;
		Dwarf_Sword sv = 0;
		Dwarf_Word uv = 0;
		int64_t v;
		const char *name;

		if (dwarf_tag(&child) != DW_TAG_enumerator || i >= n)
			continue;
		if (!dwarf_attr(&child, DW_AT_const_value, &a))
			continue;
		if (t->is_signed) {
			if (dwarf_formsdata(&a, &sv) != 0)
				continue;
			v = sv;
			/* some producers store -1 of an int enum as data4
			 * 0xffffffff: sign-extend from the enum's width */
			if (t->size && t->size < 8) {
				unsigned sh = 64 - t->size * 8;

				v = (int64_t)((uint64_t)v << sh) >> sh;
			}
		} else {
			if (dwarf_formudata(&a, &uv) != 0)
				continue;
			v = (int64_t)uv;
		}
		name = dwarf_diename(&child);
		e[i].name = ctype_arena__strdup(di->arena, name ? name : "?");
		if (!e[i].name)
			return -ENOMEM;
		e[i].value = v;
		i++;
	} while (dwarf_siblingof(&child, &child) == 0);
	t->enumerators = e;
	t->n_enumerators = i;
	return 0;
}

/* A C++ class that is not trivially copyable by its own declarations
 * (members and bases are checked in finalize): a user-declared destructor,
 * copy or move constructor, a virtual function or a virtual base.  What
 * gdb checks when DW_AT_calling_convention is absent (gcc 12 omits it). */
static bool cxx_own_nontrivial(Dwarf_Die *cls)
{
	const char *cname = dwarf_diename(cls);
	Dwarf_Die child;

	if (dwarf_child(cls, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Attribute a;
		Dwarf_Word w;
		const char *name;

		if (tag == DW_TAG_inheritance) {
			if (attr_udata(&child, DW_AT_virtuality, &w) && w)
				return true;
			continue;
		}
		if (tag != DW_TAG_subprogram)
			continue;
		if (attr_udata(&child, DW_AT_virtuality, &w) && w)
			return true;
		if (dwarf_attr(&child, DW_AT_artificial, &a) ||
		    (attr_udata(&child, DW_AT_defaulted, &w) && w == DW_DEFAULTED_in_class))
			continue;
		name = dwarf_diename(&child);
		if (!name)
			continue;
		if (name[0] == '~')
			return true;
		if (cname && !strcmp(name, cname)) {
			/* a constructor whose first parameter is a reference
			 * to the class: copy or move */
			Dwarf_Die p, t;

			if (dwarf_child(&child, &p) != 0)
				continue;
			do {
				if (dwarf_tag(&p) != DW_TAG_formal_parameter ||
				    dwarf_attr(&p, DW_AT_artificial, &a))
					continue;
				if (dtype__die_type(&p, &t) && (dwarf_tag(&t) == DW_TAG_reference_type ||
							 dwarf_tag(&t) == DW_TAG_rvalue_reference_type)) {
					Dwarf_Die c = t;

					for (int i = 0; i < 8 && dtype__die_type(&c, &c); i++) {
						const char *n = dwarf_diename(&c);

						if ((dwarf_tag(&c) == DW_TAG_structure_type ||
						     dwarf_tag(&c) == DW_TAG_class_type) &&
						    n && !strcmp(n, cname))
							return true;
					}
				}
				break;
			} while (dwarf_siblingof(&p, &p) == 0);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static bool enum_signed(Dwarf_Die *die)
{
	Dwarf_Die ut, child;
	Dwarf_Word enc;

	/* The underlying type when given (DWARF 3+ producers do). */
	if (dtype__die_type(die, &ut)) {
		for (int i = 0; i < 8 && dwarf_tag(&ut) != DW_TAG_base_type; i++)
			if (!dtype__die_type(&ut, &ut))
				break;
		if (attr_udata(&ut, DW_AT_encoding, &enc))
			return enc == DW_ATE_signed || enc == DW_ATE_signed_char;
	}
	/* Else: signed when an enumerator is stored as a negative sdata. */
	if (dwarf_child(die, &child) == 0) {
		do {
			Dwarf_Attribute a;

			if (dwarf_tag(&child) == DW_TAG_enumerator &&
			    dwarf_attr(&child, DW_AT_const_value, &a) &&
			    dwarf_whatform(&a) == DW_FORM_sdata) {
				Dwarf_Sword v;

				if (dwarf_formsdata(&a, &v) == 0 && v < 0)
					return true;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	return false;
}

static const struct ctype *build_array(struct debuginfo *di, Dwarf_Die *die, int depth)
{
	uint32_t counts[16];
	int ndim = 0;
	Dwarf_Die child, et;
	struct ctype *outer;
	const struct ctype *elem, *t;

	if (dwarf_child(die, &child) == 0) {
		do {
			Dwarf_Word n = 0, lo = 0;
			Dwarf_Attribute a;

			if (dwarf_tag(&child) != DW_TAG_subrange_type || ndim >= 16)
				continue;
			if (dwarf_attr(&child, DW_AT_count, &a) && dwarf_formudata(&a, &n) == 0) {
				/* n */
			} else if (dwarf_attr(&child, DW_AT_upper_bound, &a) &&
				   dwarf_formudata(&a, &n) == 0) {
				if (attr_udata(&child, DW_AT_lower_bound, &lo) && lo <= n)
					n -= lo;
				n += 1;
			} else {
				n = 0; /* flexible or variable length */
			}
			counts[ndim++] = n > UINT32_MAX ? 0 : (uint32_t)n;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	if (!ndim)
		counts[ndim++] = 0;
	/* The outer node first, so a recursive reference finds it. */
	outer = new_node(di, die, CTYPE_ARRAY, 0, 1);
	if (!outer)
		return NULL;
	elem = dtype__of(di, dtype__die_type(die, &et) ? &et : NULL, depth + 1);
	if (!elem)
		return NULL;
	t = elem;
	for (int k = ndim - 1; k >= 1; k--) {
		struct ctype *a = ctype__new_array(di->arena, t, counts[k]);

		if (!a || vec_push(&di->fresh, a))
			return NULL;
		t = a;
	}
	outer->target = t;
	outer->count = counts[0];
	outer->incomplete = counts[0] == 0;
	return outer;
}

const struct ctype *dtype__of(struct debuginfo *di, Dwarf_Die *die, int depth)
{
	struct ctype *t;
	Dwarf_Die target;
	Dwarf_Word enc = 0, cc;
	Dwarf_Attribute a;
	const char *name;
	uint32_t size;
	int tag;

	if (!die)
		return di->void_type;
	t = cache_get(di, die->addr);
	if (t)
		return t;
	if (depth > MAX_TYPE_DEPTH)
		return di->void_type;
	tag = dwarf_tag(die);
	name = dwarf_diename(die);
	switch (tag) {
	case DW_TAG_base_type: {
		enum ctype_kind kind = CTYPE_UNKNOWN;
		bool sgn = false, x87 = false, cplx = false;

		size = die_size(die, 0);
		attr_udata(die, DW_AT_encoding, &enc);
		switch (enc) {
		case DW_ATE_boolean:
			kind = CTYPE_BOOL;
			break;
		case DW_ATE_signed:
			kind = CTYPE_INT;
			sgn = true;
			break;
		case DW_ATE_unsigned:
		case DW_ATE_UTF:
			kind = CTYPE_UINT;
			break;
		case DW_ATE_signed_char:
		case DW_ATE_unsigned_char:
			sgn = enc == DW_ATE_signed_char;
			kind = name && !strcmp(name, "char") ? CTYPE_CHAR : sgn ? CTYPE_INT : CTYPE_UINT;
			break;
		case DW_ATE_float:
			kind = CTYPE_FLOAT;
			x87 = size == 16 && name && strstr(name, "long double");
			break;
		case DW_ATE_complex_float:
			kind = CTYPE_FLOAT;
			cplx = true;
			x87 = name && strstr(name, "long double");
			break;
		default:
			break;
		}
		t = new_node(di, die, kind, size, size > 16 ? 16 : size);
		if (!t)
			return NULL;
		t->is_signed = sgn;
		t->is_x87 = x87;
		t->is_complex = cplx;
		if (cplx)
			t->align = size / 2 > 16 ? 16 : size / 2;
		return t;
	}
	case DW_TAG_typedef:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		/* Filled from the type it names once that is complete
		 * (finalize): it may be under construction right now. */
		t = ctype_arena__alloc(di->arena, sizeof(*t));
		if (!t)
			return NULL;
		t->name = type_name(di, die);
		if (!t->name || cache_put(di, die->addr, t) || vec_push(&di->aliases, t))
			return NULL;
		t->alias_of = dtype__of(di, dtype__die_type(die, &target) ? &target : NULL, depth + 1);
		return t->alias_of ? t : NULL;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		t = new_node(di, die, CTYPE_POINTER, die_size(die, 8), 8);
		if (!t)
			return NULL;
		t->target = dtype__of(di, dtype__die_type(die, &target) ? &target : NULL, depth + 1);
		return t->target ? t : NULL;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		if (dwarf_hasattr(die, DW_AT_declaration) && type_definition(di, die, &target)) {
			t = (struct ctype *)dtype__of(di, &target, depth + 1);
			return t && !cache_put(di, die->addr, t) ? t : NULL;
		}
		t = new_node(di, die, tag == DW_TAG_union_type ? CTYPE_UNION : CTYPE_STRUCT,
			     die_size(die, 0), 0);
		if (!t)
			return NULL;
		t->incomplete = dwarf_attr(die, DW_AT_declaration, &a) != NULL;
		if (attr_udata(die, DW_AT_calling_convention, &cc))
			t->by_reference = cc == DW_CC_pass_by_reference;
		else if (is_cxx(die))
			t->by_reference = cxx_own_nontrivial(die);
		if (attr_udata(die, DW_AT_alignment, &cc) && cc && cc <= 4096)
			t->align = (uint32_t)cc; /* kept by finalize */
		if (build_members(di, die, t, depth) || build_variants(di, die, t, depth))
			return NULL;
		/* GCC writes a transparent union (glibc's __SOCKADDR_ARG, accept4's
		 * address) as a union of 8 bytes with no members; it is passed as
		 * its members are, a pointer: shown as one. */
		if (t->kind == CTYPE_UNION && !t->incomplete && t->size == 8 && !t->n_members &&
		    !t->n_variants) {
			t->kind = CTYPE_POINTER;
			t->align = 8;
			t->target = dtype__of(di, NULL, depth + 1);
			return t->target ? t : NULL;
		}
		return t;
	case DW_TAG_enumeration_type:
		size = die_size(die, 4);
		t = new_node(di, die, CTYPE_ENUM, size, size);
		if (!t)
			return NULL;
		t->is_signed = enum_signed(die);
		return build_enumerators(di, die, t) ? NULL : t;
	case DW_TAG_array_type:
		return build_array(di, die, depth);
	case DW_TAG_subroutine_type:
		t = new_node(di, die, CTYPE_FUNC, 0, 1);
		if (!t)
			return NULL;
		t->target = dtype__of(di, dtype__die_type(die, &target) ? &target : NULL, depth + 1);
		return t->target ? t : NULL;
	default:
		/* nullptr_t, pointers to members, ...: bytes */
		size = die_size(die, 0);
		return new_node(di, die, CTYPE_UNKNOWN, size, size >= 8 ? 8 : 1);
	}
}

uint32_t dtype__align(const struct ctype *t, int depth)
{
	uint32_t al = 1;

	t = ctype__concrete(t);
	if (!t || depth > MAX_TYPE_DEPTH)
		return 1;
	switch (t->kind) {
	case CTYPE_ARRAY:
		return dtype__align(t->target, depth + 1);
	case CTYPE_STRUCT:
	case CTYPE_UNION:
		if (t->align > 1)
			return t->align; /* DW_AT_alignment, or computed before */
		for (size_t i = 0; i < t->n_members; i++) {
			uint32_t m = dtype__align(t->members[i].type, depth + 1);

			if (m > al)
				al = m;
		}
		/* A packed struct: its size is no multiple of the members'
		 * alignment. */
		if (t->size && t->size % al)
			al = 1;
		return al;
	default:
		return t->align ? t->align : 1;
	}
}

/* Not trivially copyable: itself, or a member or base by value. */
static bool calc_by_reference(const struct ctype *t, int depth)
{
	t = ctype__concrete(t);
	if (!t || depth > MAX_TYPE_DEPTH)
		return false;
	if (t->kind == CTYPE_ARRAY)
		return calc_by_reference(t->target, depth + 1);
	if (t->kind != CTYPE_STRUCT && t->kind != CTYPE_UNION)
		return false;
	if (t->by_reference)
		return true;
	for (size_t i = 0; i < t->n_members; i++)
		if (calc_by_reference(t->members[i].type, depth + 1))
			return true;
	return false;
}

static uint32_t calc_array_size(struct ctype *t, int depth)
{
	const struct ctype *e = ctype__concrete(t->target);
	uint64_t sz;

	if (!e || depth > MAX_TYPE_DEPTH)
		return 0;
	if (e->kind == CTYPE_ARRAY && e->size == 0 && e->count)
		calc_array_size((struct ctype *)e, depth + 1); /* a node of this batch */
	sz = (uint64_t)e->size * t->count;
	t->size = sz > UINT32_MAX ? 0 : (uint32_t)sz;
	return t->size;
}

/* Complete the nodes built since the last call: array sizes, aggregate
 * alignments, then alias copies. */
void dtype__finalize(struct debuginfo *di)
{
	for (size_t i = 0; i < di->fresh.n; i++) {
		struct ctype *t = di->fresh.v[i];

		if (t->kind == CTYPE_ARRAY)
			calc_array_size(t, 0);
	}
	for (size_t i = 0; i < di->fresh.n; i++) {
		struct ctype *t = di->fresh.v[i];

		if (t->kind == CTYPE_ARRAY || t->kind == CTYPE_STRUCT || t->kind == CTYPE_UNION)
			t->align = dtype__align(t, 0);
		if (t->kind == CTYPE_STRUCT || t->kind == CTYPE_UNION)
			t->by_reference = calc_by_reference(t, 0);
	}
	for (size_t i = 0; i < di->aliases.n; i++) {
		struct ctype *a = di->aliases.v[i];
		const struct ctype *c = ctype__concrete(a->alias_of);
		const char *name = a->name;
		const struct ctype *of = a->alias_of;

		if (!c) {
			c = di->void_type;
			of = c;
		}
		*a = *c;
		a->name = name;
		a->alias_of = of;
	}
	di->fresh.n = 0;
	di->aliases.n = 0;
}

