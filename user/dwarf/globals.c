// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include "dwarf/debuginfo_impl.h"
#include "dwarf/globals.h"

/* The type's kind and a short name, qualifiers and typedefs looked through. */
static void type_of(Dwarf_Die *var, struct dwarf_global *g)
{
	Dwarf_Attribute a;
	Dwarf_Die t, peeled;
	Dwarf_Word enc = 0;
	const char *name;
	int tag, sz;

	g->kind = GLOBAL_RAW;
	g->size = 0;
	snprintf(g->type, sizeof(g->type), "?");
	if (!dwarf_formref_die(dwarf_attr_integrate(var, DW_AT_type, &a), &t))
		return;
	name = dwarf_diename(&t);
	if (dwarf_peel_type(&t, &peeled) != 0)
		return;
	tag = dwarf_tag(&peeled);
	sz = dwarf_bytesize(&peeled);
	g->size = sz > 0 ? (uint64_t)sz : 0;
	if (!name)
		name = dwarf_diename(&peeled);
	switch (tag) {
	case DW_TAG_pointer_type:
		g->kind = GLOBAL_POINTER;
		if (!g->size)
			g->size = 8;
		snprintf(g->type, sizeof(g->type), "pointer");
		return;
	case DW_TAG_array_type:
		name = "array";
		break;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		name = name ? name : "struct";
		break;
	case DW_TAG_enumeration_type:
		g->kind = GLOBAL_SIGNED;
		break;
	case DW_TAG_base_type:
		if (dwarf_formudata(dwarf_attr(&peeled, DW_AT_encoding, &a), &enc) == 0) {
			if (enc == DW_ATE_signed || enc == DW_ATE_signed_char)
				g->kind = GLOBAL_SIGNED;
			else if (enc == DW_ATE_unsigned || enc == DW_ATE_unsigned_char ||
				 enc == DW_ATE_boolean)
				g->kind = GLOBAL_UNSIGNED;
		}
		break;
	default:
		break;
	}
	snprintf(g->type, sizeof(g->type), "%s", name ? name : "?");
}

/* DW_AT_location as one fixed address: DW_OP_addr, or in DWARF 5 (clang's
 * default) an index into .debug_addr. */
static int fixed_addr(Dwarf_Die *var, uint64_t *addr)
{
	Dwarf_Attribute a, in_addr;
	Dwarf_Addr v;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr(var, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &n) || n != 1)
		return -ENOENT;
	switch (ops[0].atom) {
	case DW_OP_addr:
		*addr = ops[0].number;
		return 0;
	case DW_OP_addrx:
	case DW_OP_GNU_addr_index:
		if (dwarf_getlocation_attr(&a, &ops[0], &in_addr) || dwarf_formaddr(&in_addr, &v))
			return -ENOENT;
		*addr = v;
		return 0;
	default:
		return -ENOENT;
	}
}

struct global_find {
	const char *name;
	struct dwarf_global *out;
};

/* The variable named so at CU's top level, with a fixed address: 1. */
static int global_in_cu(Dwarf_Die *cu, void *arg)
{
	struct global_find *g = arg;
	Dwarf_Die child;

	if (dwarf_child(cu, &child) != 0)
		return 0;
	do {
		const char *n;

		if (dwarf_tag(&child) != DW_TAG_variable)
			continue;
		n = dwarf_diename(&child);
		if (!n || strcmp(n, g->name) || fixed_addr(&child, &g->out->addr))
			continue;
		type_of(&child, g->out);
		return 1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

int dwarf_global__find(struct debuginfo *di, const char *name, struct dwarf_global *out)
{
	struct global_find g = { .name = name, .out = out };

	if (!debuginfo__dwarf(di))
		return -ENODATA;
	return debuginfo__each_cu(di, true, global_in_cu, &g) ? 0 : -ENOENT;
}

int dwarf_global__line(struct debuginfo *di, uint64_t addr, const char **file, unsigned *line)
{
	Dwarf *dw = debuginfo__dwarf(di);
	Dwarf_Die cu;
	Dwarf_Line *l;
	int ln = 0;

	if (!dw)
		return -ENODATA;
	if (!debuginfo__cu_at(di, addr, &cu) || !(l = dwarf_getsrc_die(&cu, addr)) ||
	    dwarf_lineno(l, &ln) || ln <= 0)
		return -ENOENT;
	*file = dwarf_linesrc(l, NULL, NULL);
	*line = (unsigned)ln;
	return *file ? 0 : -ENOENT;
}
