// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * signature.c: a function's signature (parameters, return value, each
 * value's location at the probe address) and the variables in scope at a
 * pc (--locals).
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "core/escape.h"
#include "dwarf/debuginfo_impl.h"

/* ------------------------------------------------------------------ */
/* Signatures                                                          */

static bool subprogram_at(Dwarf_Die *die, uint64_t addr)
{
	Dwarf_Addr a, base, start, end;
	ptrdiff_t off = 0;

	if (dwarf_tag(die) != DW_TAG_subprogram)
		return false;
	if ((dwarf_entrypc(die, &a) == 0 && a == addr) || (dwarf_lowpc(die, &a) == 0 && a == addr))
		return true;
	/* gcc's hot/cold split: no low_pc, a range per part; the symbol is
	 * at the start of one (the hot part). */
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		if (start == addr)
			return true;
	return false;
}

struct find_addr_arg {
	uint64_t addr;
	Dwarf_Die die;
	bool found;
};

static int find_addr_cb(Dwarf_Die *die, void *arg)
{
	struct find_addr_arg *f = arg;

	if (!subprogram_at(die, f->addr))
		return DWARF_CB_OK;
	f->die = *die;
	f->found = true;
	return DWARF_CB_ABORT;
}

/* The subprogram of CU whose code starts at ADDR.  Not dwarf_getscopes():
 * when code inlined from another function sits at ADDR, its scopes lead
 * to that function's abstract definition, not to the function at ADDR. */
static int find_in_cu(Dwarf_Die *cu, uint64_t addr, Dwarf_Die *out)
{
	struct find_addr_arg f = { .addr = addr };

	dwarf_getfuncs(cu, find_addr_cb, &f, 0);
	if (!f.found)
		return -ENOENT;
	*out = f.die;
	return 0;
}

int sig__find_subprogram(struct debuginfo *di, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_Die cu;

	if (debuginfo__cu_at(di, addr, &cu) && find_in_cu(&cu, addr, out) == 0)
		return 0;
	return -ENOENT;
}

void func_sig__free(struct func_sig *sig)
{
	if (!sig)
		return;
	free(sig->params);
	ctype_arena__put(sig->arena);
	free(sig);
}

/* Go marks its results as output parameters (`~r0`, or their names). */
static bool is_result(Dwarf_Die *param)
{
	Dwarf_Attribute a;
	bool flag = false;

	return dwarf_attr(param, DW_AT_variable_parameter, &a) && dwarf_formflag(&a, &flag) == 0 &&
	       flag;
}

/* The parameter DIEs of FUNC (or of its abstract origin when the concrete
 * instance lists none); with GO, its results apart, in RESULTS (*N_RESULTS). */
static size_t collect_params(Dwarf_Die *func, Dwarf_Die *params, size_t max, bool *variadic,
			     bool go, Dwarf_Die *results, size_t *n_results)
{
	Dwarf_Die child, origin;
	Dwarf_Attribute a;
	size_t n = 0;

	*variadic = false;
	*n_results = 0;
	if (dwarf_child(func, &child) == 0) {
		do {
			int tag = dwarf_tag(&child);

			if (tag == DW_TAG_formal_parameter && go && is_result(&child)) {
				if (*n_results < max)
					results[(*n_results)++] = child;
			} else if (tag == DW_TAG_formal_parameter && n < max) {
				params[n++] = child;
			} else if (tag == DW_TAG_unspecified_parameters) {
				*variadic = true;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	if (!n && !*n_results && dwarf_attr(func, DW_AT_abstract_origin, &a) &&
	    dwarf_formref_die(&a, &origin))
		return collect_params(&origin, params, max, variadic, go, results, n_results);
	return n;
}

/* FUNC is Go code (its compile unit says so). */
static bool is_go(Dwarf_Die *func)
{
	Dwarf_Die cu;

	return dwarf_diecu(func, &cu, NULL, NULL) && dwarf_srclang(&cu) == DW_LANG_Go;
}

/* FUNC is Rust code (its compile unit says so). */
static bool is_rust(Dwarf_Die *func)
{
	Dwarf_Die cu;

	return dwarf_diecu(func, &cu, NULL, NULL) && dwarf_srclang(&cu) == DW_LANG_Rust;
}

static bool is_aggregate(const struct ctype *t)
{
	t = ctype__concrete(t);
	return t && (t->kind == CTYPE_STRUCT || t->kind == CTYPE_UNION || t->kind == CTYPE_ARRAY);
}

/* Rust's own ABI passes an aggregate its own way (an Option<u8> in two
 * registers, returned in al and dl), not as SysV's: where DWARF gives no
 * location, SysV's guess would show another value.  No guess then: the
 * return value of an aggregate, and every parameter once one is an
 * aggregate (it moves the registers of those after it). */
static void rust_abi_unknown(const struct ctype *ret, struct dloc *ret_loc,
			     const struct ctype *const *types, size_t n, struct dloc *abi)
{
	bool any = false;

	if (is_aggregate(ret))
		memset(ret_loc, 0, sizeof(*ret_loc));
	for (size_t i = 0; i < n; i++)
		any = any || is_aggregate(types[i]);
	for (size_t i = 0; any && i < n; i++)
		memset(&abi[i], 0, sizeof(abi[i]));
}

#define MAX_PARAMS 64

int debuginfo__signature(struct debuginfo *di, uint64_t func_addr, uint64_t probe_addr,
			 bool at_entry, struct func_sig **out)
{
	Dwarf_Die func, t, *pdies = NULL, *rdies = NULL;
	const struct ctype **types = NULL;
	struct dloc *abi = NULL;
	struct func_sig *sig = NULL;
	struct loc_ctx lc;
	const char *name;
	size_t n, n_results;
	bool hidden;
	int err = 0;

	*out = NULL;
	if (di->kind != DEBUGINFO_DWARF)
		return -ENODATA;
	err = sig__find_subprogram(di, func_addr, &func);
	if (err)
		return err;
	pdies = calloc(MAX_PARAMS, sizeof(*pdies));
	rdies = calloc(MAX_PARAMS, sizeof(*rdies));
	sig = calloc(1, sizeof(*sig));
	if (!pdies || !rdies || !sig) {
		err = -ENOMEM;
		goto cleanup;
	}
	sig->arena = ctype_arena__get(di->arena);
	sig->addr = func_addr;
	sig->probe_addr = probe_addr;
	name = dwarf_diename(&func);
	sig->name = ctype_arena__strdup(di->arena, name ? name : "?");
	sig->go = is_go(&func);
	n = collect_params(&func, pdies, MAX_PARAMS, &sig->variadic, sig->go, rdies, &n_results);
	sig->params = calloc(n ? n : 1, sizeof(*sig->params));
	types = calloc(n ? n : 1, sizeof(*types));
	abi = calloc(n ? n : 1, sizeof(*abi));
	if (!sig->name || !sig->params || !types || !abi) {
		err = -ENOMEM;
		goto cleanup;
	}
	sig->n_params = n;
	for (size_t i = 0; i < n; i++) {
		const char *pn = dwarf_diename(&pdies[i]);
		char buf[32];

		types[i] = dtype__of(di, dtype__die_type(&pdies[i], &t) ? &t : NULL, 0);
		if (!pn) {
			/* Unnamed (C23 `int f(int a, int)`, C++): "#I", I its
			 * position from 0 as in argI.  '#' is in no C, C++,
			 * Rust or Go name, so it never takes a real parameter's
			 * name ("param1" did: two "param1" keys in "args"). */
			snprintf(buf, sizeof(buf), "#%zu", i);
			pn = buf;
		}
		sig->params[i].name = ctype_arena__strdup(di->arena, pn);
		if (!types[i] || !sig->params[i].name) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	/* Go: the first result is the return value (the others are not shown). */
	if (n_results)
		sig->ret_type = dtype__of(di, dtype__die_type(&rdies[0], &t) ? &t : NULL, 0);
	else
		sig->ret_type = dtype__of(di, dtype__die_type(&func, &t) ? &t : NULL, 0);
	if (!sig->ret_type) {
		err = -ENOMEM;
		goto cleanup;
	}
	dtype__finalize(di);
	for (size_t i = 0; i < n; i++)
		sig->params[i].type = types[i];

	if (sig->go) {
		/* Results on the stack follow the arguments' area: at the ret,
		 * [sp] is the return address. */
		uint32_t args_stack = abi__go(types, n, 8, abi);

		abi__go(&sig->ret_type, 1, 8 + (int64_t)args_stack, &sig->ret_loc);
	} else {
		/* A parameter gcc's IPA-SRA or constant propagation took out of a
		 * clone (foo.isra.0, foo.constprop.0) is not passed: the others
		 * take the registers in order without it. */
		const struct ctype **passed = calloc(n ? n : 1, sizeof(*passed));
		bool *gone = calloc(n ? n : 1, sizeof(*gone));
		size_t np = 0;

		if (!passed || !gone) {
			free(passed);
			free(gone);
			err = -ENOMEM;
			goto cleanup;
		}
		for (size_t i = 0; i < n; i++) {
			gone[i] = loc__not_passed(&pdies[i], probe_addr);
			if (!gone[i])
				passed[np++] = types[i];
		}
		abi__sysv_return(sig->ret_type, &sig->ret_loc, &hidden);
		abi__sysv_params(passed, np, hidden, abi);
		/* spread the NP locations to their parameters, in place from the
		 * last (the k-th passed one is at or after k) */
		for (size_t i = n, k = np; i-- > 0;)
			if (!gone[i])
				abi[i] = abi[--k];
			else
				memset(&abi[i], 0, sizeof(abi[i])); /* optimized out */
		free(passed);
		free(gone);
		if (is_rust(&func))
			rust_abi_unknown(sig->ret_type, &sig->ret_loc, types, n, abi);
	}
	lc.di = di;
	lc.func = &func;
	lc.pc = probe_addr;
	lc.at_entry = at_entry;
	for (size_t i = 0; i < n; i++)
		loc__param(&lc, &pdies[i], types[i], func_addr, &abi[i], &sig->params[i].loc);
	*out = sig;
	sig = NULL;
cleanup:
	if (err)
		dtype__finalize(di); /* leave no half-built batch behind */
	func_sig__free(sig);
	free(abi);
	free(types);
	free(pdies);
	free(rdies);
	return err;
}

/*
 * --locals: the variables and parameters in scope at PC, innermost first
 * (an inner one hides an outer one of the same name), up to the function
 * (or inlined function) the code at PC belongs to.
 */
#define MAX_LOCALS 64

static const char *integrated_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
}

/* The subprogram of CU whose code holds PC (nested ones too: C++ members
 * are children of their class), into *OUT. */
static bool cu_subprogram_at(Dwarf_Die *parent, uint64_t pc, Dwarf_Die *out)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram && dwarf_haspc(&child, pc) > 0) {
			*out = child;
			return true;
		}
		if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		     tag == DW_TAG_structure_type) && cu_subprogram_at(&child, pc, out))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

int debuginfo__locals(struct debuginfo *di, uint64_t pc, struct func_sig **out)
{
	Dwarf_Die cu, *scopes = NULL, *vars = NULL, t, func;
	const struct ctype **types = NULL;
	const char **names = NULL;
	struct func_sig *sig = NULL;
	struct loc_ctx lc;
	size_t n = 0;
	int n_scopes, err = 0, fi = -1;
	Dwarf_Addr low = 0;

	*out = NULL;
	if (di->kind != DEBUGINFO_DWARF)
		return -ENODATA;
	if (!debuginfo__cu_at(di, pc, &cu))
		return -ENOENT;
	n_scopes = dwarf_getscopes(&cu, pc, &scopes);
	if (n_scopes <= 0)
		return -ENOENT;
	/* The innermost function scope, and the subprogram whose frame it is in. */
	for (int i = 0; i < n_scopes && fi < 0; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram ||
		    dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine)
			fi = i;
	for (int i = 0; i < n_scopes; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			func = scopes[i];
			break;
		}
		/* Past an inlined copy, libdw goes on with the scopes of its
		 * abstract definition (to the CU), not the function it was
		 * inlined into: that one is the CU's subprogram holding PC. */
		if (i == n_scopes - 1 && !cu_subprogram_at(&cu, pc, &func))
			fi = -1;
	}
	vars = calloc(MAX_LOCALS, sizeof(*vars));
	names = calloc(MAX_LOCALS, sizeof(*names));
	types = calloc(MAX_LOCALS, sizeof(*types));
	sig = calloc(1, sizeof(*sig));
	if (fi < 0 || !vars || !names || !types || !sig) {
		err = fi < 0 ? -ENOENT : -ENOMEM;
		goto cleanup;
	}
	for (int i = 0; i <= fi; i++) {
		Dwarf_Die child;

		if (dwarf_child(&scopes[i], &child) != 0)
			continue;
		do {
			int tag = dwarf_tag(&child);
			const char *name = integrated_name(&child);
			bool seen = false;

			if ((tag != DW_TAG_variable && tag != DW_TAG_formal_parameter) || !name ||
			    n >= MAX_LOCALS)
				continue;
			for (size_t k = 0; k < n && !seen; k++)
				seen = !strcmp(names[k], name);
			if (!seen) {
				names[n] = name;
				vars[n++] = child;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	sig->arena = ctype_arena__get(di->arena);
	sig->name = ctype_arena__strdup(di->arena, integrated_name(&scopes[fi]) ?
						      integrated_name(&scopes[fi]) : "?");
	dwarf_lowpc(&func, &low);
	sig->addr = low;
	sig->probe_addr = pc;
	sig->params = calloc(n ? n : 1, sizeof(*sig->params));
	if (!sig->name || !sig->params) {
		err = -ENOMEM;
		goto cleanup;
	}
	sig->n_params = n;
	for (size_t i = 0; i < n; i++) {
		types[i] = dtype__of(di, dtype__die_type(&vars[i], &t) ? &t : NULL, 0);
		sig->params[i].name = ctype_arena__strdup(di->arena, names[i]);
		if (!types[i] || !sig->params[i].name) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	sig->ret_type = dtype__of(di, NULL, 0);
	if (!sig->ret_type) {
		err = -ENOMEM;
		goto cleanup;
	}
	dtype__finalize(di);
	lc.di = di;
	lc.func = &func;
	lc.pc = pc;
	lc.at_entry = false;
	for (size_t i = 0; i < n; i++) {
		struct dloc none = { .source = DLOC_SRC_DWARF }; /* no location: optimized out */

		sig->params[i].type = types[i];
		loc__param(&lc, &vars[i], types[i], low, &none, &sig->params[i].loc);
	}
	*out = sig;
	sig = NULL;
cleanup:
	if (err)
		dtype__finalize(di);
	func_sig__free(sig);
	free(types);
	free(names);
	free(vars);
	free(scopes);
	return err;
}

