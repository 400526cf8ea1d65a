// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agg/hist_arg.h"
#include "core/log.h"
#include "dwarf/debuginfo.h"
#include "profile.h"

_Static_assert(HIST_ARG_RET == CMON_HIST_RET, "one number for the return value");

/* "0".."5" or "arg0".."arg5": the register; else -1. */
static int arg_number(const char *s)
{
	if (!strncmp(s, "arg", 3))
		s += 3;
	return s[0] >= '0' && s[0] <= '5' && !s[1] ? s[0] - '0' : -1;
}

bool hist_arg__valid(const char *spec)
{
	if (!spec || !*spec)
		return false;
	if (arg_number(spec) >= 0 || !strcmp(spec, "ret"))
		return true;
	if (!isalpha((unsigned char)*spec) && *spec != '_')
		return false;
	for (const char *p = spec; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return false;
	return true;
}

/* Width and sign of an integer-like type; false for anything else. */
static bool int_like(const struct ctype *t, struct hist_arg *h)
{
	const struct ctype *c = t ? ctype__concrete(t) : NULL;

	if (!c || (c->kind != CTYPE_INT && c->kind != CTYPE_UINT && c->kind != CTYPE_CHAR &&
		   c->kind != CTYPE_BOOL && c->kind != CTYPE_ENUM && c->kind != CTYPE_POINTER) ||
	    (c->size != 1 && c->size != 2 && c->size != 4 && c->size != 8))
		return false;
	h->bytes = c->size;
	h->is_signed = c->kind == CTYPE_INT ||
		       ((c->kind == CTYPE_CHAR || c->kind == CTYPE_ENUM) && c->is_signed);
	h->typed = true;
	snprintf(h->type, sizeof(h->type), "%s", t->name);
	return true;
}

/* What SPEC is at USDT site F: its note's argument NUM, at its width and
 * sign (a site has no return and no names).  -ENOENT: not there. */
static int one_site(const struct probe_func *f, int num, struct hist_arg *h, const char **why)
{
	const struct cmon_usdt_arg *a;

	memset(h, 0, sizeof(*h));
	h->reg = num;
	h->bytes = 8;
	if (num < 0 || num >= CMON_MAX_ARGS) {
		*why = "is a USDT site: give its argument's number (0..5)";
		return -ENOENT;
	}
	if ((uint32_t)num >= f->usdt_spec.n_args) {
		*why = "is a USDT site with fewer arguments";
		return -ENOENT;
	}
	a = &f->usdt_spec.args[num];
	h->bytes = a->size == 1 || a->size == 2 || a->size == 4 ? a->size : 8;
	h->is_signed = a->is_signed;
	h->typed = true;
	snprintf(h->type, sizeof(h->type), "%s%u (USDT)", a->is_signed ? "int" : "uint",
		 8 * h->bytes);
	return 0;
}

/* What SPEC is in one function; -ENOENT: not there (*why says so). */
static int one_func(const struct func_sig *sig, const char *spec, int num, struct hist_arg *h,
		    const char **why)
{
	memset(h, 0, sizeof(*h));
	h->reg = num;
	h->bytes = 8;
	if (!sig) {
		/* a register, or rax: raw, 64 bits */
		*why = "has no DWARF to find it in";
		if (!strcmp(spec, "ret"))
			h->reg = HIST_ARG_RET;
		return h->reg >= 0 ? 0 : -ENOENT;
	}
	if (!strcmp(spec, "ret")) {
		h->reg = HIST_ARG_RET;
		*why = "returns no integer in rax";
		return int_like(sig->ret_type, h) && sig->ret_loc.n == 1 &&
				       sig->ret_loc.p[0].kind == DLOC_REG &&
				       sig->ret_loc.p[0].reg == DREG_RAX
			       ? 0
			       : -ENOENT;
	}
	for (size_t i = 0; i < sig->n_params; i++) {
		const struct func_param *p = &sig->params[i];
		int reg = dloc__arg_register(&p->loc, sig->go);

		if (num >= 0 ? reg != num : strcmp(p->name, spec))
			continue;
		if (reg < 0) {
			*why = "has it outside the argument registers";
			return -ENOENT;
		}
		h->reg = reg;
		if (!int_like(p->type, h)) {
			*why = "has it as a type that is not an integer";
			return num >= 0 ? 0 : -ENOENT; /* a number: the raw register */
		}
		return 0;
	}
	*why = "has no such parameter";
	return num >= 0 ? 0 : -ENOENT; /* a number: the raw register */
}

int hist_arg__resolve(const struct probe_set *set, const char *spec, const char *what,
		      struct hist_arg *out)
{
	struct debuginfo **dis = calloc(set->n_objects ? set->n_objects : 1, sizeof(*dis));
	int num = arg_number(spec), err = 0;
	size_t first = 0;
	bool agree = true;

	memset(out, 0, sizeof(*out));
	if (!dis)
		return -ENOMEM;
	for (size_t i = 0; i < set->n_funcs && !err; i++) {
		const struct probe_func *f = &set->funcs[i];
		struct func_sig *sig = NULL;
		const char *why = "";
		struct hist_arg h;

		if (!f->usdt && !dis[f->object])
			dis[f->object] = debuginfo__open(set->objects[f->object].attach_path);
		if (!f->usdt && dis[f->object] && debuginfo__kind(dis[f->object]) == DEBUGINFO_DWARF)
			debuginfo__signature(dis[f->object], f->addr, f->addr + f->entry.skip, true,
					     &sig);
		if (f->usdt ? one_site(f, num, &h, &why) : one_func(sig, spec, num, &h, &why)) {
			log_error("%s %s: %s %s", what, spec, f->name, why);
			err = -EINVAL;
		} else if (i == 0) {
			*out = h;
		} else if (h.reg != out->reg || h.bytes != out->bytes ||
			   h.is_signed != out->is_signed) {
			agree = false;
			first = i;
		}
		func_sig__free(sig);
		if (!agree && num < 0) {
			log_error("%s %s: %s and %s differ in its register, width or sign: "
				  "profile them separately", what, spec, set->funcs[0].name,
				  set->funcs[first].name);
			err = -EINVAL;
		}
		if (!agree)
			break;
	}
	if (!err && !agree) {
		/* A register number over functions that disagree: the raw value. */
		*out = (struct hist_arg){ .reg = num, .bytes = 8 };
	}
	for (size_t o = 0; o < set->n_objects; o++)
		debuginfo__free(dis[o]);
	free(dis);
	return err;
}
