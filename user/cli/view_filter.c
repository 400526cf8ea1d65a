// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * view_filter.c: --func, --since/--until and --if over recorded calls.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "cli/options.h"
#include "cli/view_filter.h"
#include "core/log.h"
#include "filter/expr.h"

/* TIME: seconds after the first call ("1.5"), or "@NS", a record's ts_ns. */
static int parse_time(const char *what, const char *arg, bool *abs, uint64_t *ns)
{
	char *end;

	errno = 0;
	if (arg[0] == '@') {
		unsigned long long v = strtoull(arg + 1, &end, 10);

		if (errno || end == arg + 1 || *end || arg[1] == '-')
			goto bad;
		*abs = true;
		*ns = v;
		return 0;
	}
	double s = strtod(arg, &end);

	if (errno || end == arg || *end || !isfinite(s) || s < 0 || s > 1e9)
		goto bad;
	*abs = false;
	*ns = (uint64_t)llround(s * 1e9);
	return 0;
bad:
	log_error("export: %s takes seconds after the first call (1.5) or @TS_NS, not '%s'",
		  what, arg);
	return -EINVAL;
}

int view_filter__add(struct view_filter *vf, int c, const char *arg)
{
	int err;

	switch (c) {
	case 'f': {
		if (GROW(vf->funcs, vf->n_funcs, vf->cap_funcs, 4))
			return -ENOMEM;
		err = funcpattern__parse(arg, &vf->funcs[vf->n_funcs]);
		if (err) {
			log_error("export: --func '%s' is not a function pattern", arg);
			return err;
		}
		vf->n_funcs++;
		return 0;
	}
	case OPT_SINCE:
		vf->has_since = true;
		return parse_time("--since", arg, &vf->since_abs, &vf->since_ns);
	case OPT_UNTIL:
		vf->has_until = true;
		return parse_time("--until", arg, &vf->until_abs, &vf->until_ns);
	case OPT_IF:
		if (vf->cond) {
			log_error("export: give --if once (join conditions with &&)");
			return -EINVAL;
		}
		return expr__parse(arg, "export: --if", &vf->cond);
	}
	return -EINVAL;
}

void view_filter__free(struct view_filter *vf)
{
	for (size_t i = 0; i < vf->n_funcs; i++)
		funcpattern__clear(&vf->funcs[i]);
	free(vf->funcs);
	expr__free(vf->cond);
	memset(vf, 0, sizeof(*vf));
}

bool view_filter__active(const struct view_filter *vf)
{
	return vf->n_funcs || vf->has_since || vf->has_until || vf->cond;
}

bool view_filter__needs_first(const struct view_filter *vf)
{
	return (vf->has_since && !vf->since_abs) || (vf->has_until && !vf->until_abs);
}

static bool func_kept(const struct view_filter *vf, const char *func, const char *module)
{
	struct symtab_func f = { .name = func };
	bool any_include = false, in = false;

	for (size_t i = 0; i < vf->n_funcs; i++) {
		const struct funcpattern *p = &vf->funcs[i];
		bool m = funcpattern__match_func(p, &f) &&
			 (!p->object || (module && funcpattern__match_object(p, module)));

		if (p->exclude) {
			if (m)
				return false;
		} else {
			any_include = true;
			in |= m;
		}
	}
	return in || !any_include;
}

bool view_filter__keep(const struct view_filter *vf, const char *func, const char *module,
		       uint64_t ts_ns, uint64_t first_ns, const struct expr_call *c)
{
	if (vf->n_funcs && !func_kept(vf, func, module))
		return false;
	if (vf->has_since && ts_ns < (vf->since_abs ? 0 : first_ns) + vf->since_ns)
		return false;
	if (vf->has_until && ts_ns >= (vf->until_abs ? 0 : first_ns) + vf->until_ns)
		return false;
	return !vf->cond || !c || expr__eval(vf->cond, c);
}
