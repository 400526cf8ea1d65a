/*
 * view_filter.h: which recorded calls `cmon export` views again: --func
 * patterns, a --since/--until time range and an --if condition, decided
 * in user space over calls read back from a store, a JSON Lines or a CSV
 * trace.
 */
#ifndef CMON_VIEW_FILTER_H
#define CMON_VIEW_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "elf/funcpattern.h"
#include "filter/expr_eval.h"

struct view_filter {
	struct funcpattern *funcs;
	size_t n_funcs, cap_funcs;
	bool has_since, has_until;
	bool since_abs, until_abs; /* @TS_NS: a record's clock, else after the first call */
	uint64_t since_ns, until_ns;
	struct expr *cond;         /* --if, or NULL */
};

/* Take option C (--func 'f', OPT_SINCE, OPT_UNTIL, OPT_IF) with ARG: 0,
 * or -EINVAL after one error line. */
int view_filter__add(struct view_filter *vf, int c, const char *arg);
void view_filter__free(struct view_filter *vf);

/* Anything to decide (else every call is kept). */
bool view_filter__active(const struct view_filter *vf);
/* The range is relative: the recording's first entry time is needed. */
bool view_filter__needs_first(const struct view_filter *vf);

/* Is a call of FUNC (in MODULE, NULL: unknown) entered at TS_NS (FIRST_NS:
 * the recording's first entry) with values C (NULL: not asked) kept? */
bool view_filter__keep(const struct view_filter *vf, const char *func, const char *module,
		       uint64_t ts_ns, uint64_t first_ns, const struct expr_call *c);

#endif
