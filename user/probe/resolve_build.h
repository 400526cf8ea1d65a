// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * resolve_build.h: what the resolver's modules share while they build a
 * probe set (internal to user/probe/resolve*.c): the builder, and each
 * module's steps.  resolve.c matches function patterns and runs the steps;
 * resolve_targets.c takes the targets' files; resolve_plan.c plans one
 * function's probes; resolve_sites.c adds USDT and source-line sites.
 */
#ifndef CMON_PROBE_RESOLVE_BUILD_H
#define CMON_PROBE_RESOLVE_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/grow.h"
#include "resolve.h"

struct symtab_func;
struct funcpattern;

/* ARR with room for one more (core/grow), or NULL. */
static inline void *grow(void *arr, size_t count, size_t *cap, size_t elem)
{
	return grow__room(&arr, count, cap, elem, 8) ? NULL : arr;
}

struct builder {
	struct probe_set *set;
	size_t cap_objects, cap_funcs, cap_targets;
	const struct resolve_opts *o;
	bool focus_mode; /* resolving --focus patterns: matches become focus */
	/* Debug files' symbol tables (an IFUNC's implementation is a local
	 * symbol, there only), kept while resolving. */
	struct symtab **aux;
	size_t n_aux, cap_aux;
};

/* resolve_targets.c: the files of -p, a launch, --binary and --cgroup. */
int resolve_targets__add_pid(struct builder *b, pid_t pid);
int resolve_targets__add_launch(struct builder *b);
int resolve_targets__add_binary(struct builder *b);
int resolve_targets__add_cgroup(struct builder *b);
int resolve_targets__check_named_file(const struct probe_object *obj);

/* resolve_plan.c: one function's probes. */
bool resolve_plan__runtime_unwinds(const struct probe_set *s, const struct probe_target *t,
				   unsigned which);
bool resolve_plan__is_cold_part(const char *name);
struct probe_func *resolve_plan__new_func(struct builder *b, size_t obj_idx, uint64_t addr,
					  uint64_t off);
int resolve_plan__add_func(struct builder *b, size_t obj_idx, const struct symtab_func *f,
			   const char *as, enum return_mode mode, bool glob);
enum return_mode resolve_plan__mode_for(const struct builder *b, const struct probe_target *t,
					size_t obj_idx);

/* resolve.c: the functions a pattern names. */
int resolve__pattern(struct builder *b, const struct funcpattern *p);

/* resolve_sites.c: USDT and source-line sites. */
int resolve_sites__line(struct builder *b, const char *spec);
int resolve_sites__lines_of(struct builder *b, const struct funcpattern *p);
int resolve_sites__usdt(struct builder *b, const char *spec);

#endif
