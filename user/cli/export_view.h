/*
 * export_view.h: `cmon export RUN -F chrome|tree|folded`: a capture store
 * through the same views as `cmon trace -F ...` (user/output/view.h).
 */
#ifndef CMON_EXPORT_VIEW_H
#define CMON_EXPORT_VIEW_H

#include <stdio.h>
#include <cmon/cmon.h>
#include "output/writer.h"

struct view_filter;

/* Every call of S that VF keeps (NULL: all), written to OUT as FMT
 * (OUT_CHROME, OUT_TREE, OUT_FOLDED).  *CALLS counts them.  0, 1 (the
 * store's error: cmon_store_error) or -errno. */
int export_view(struct cmon_store *s, enum out_format fmt, FILE *out, uint64_t *calls,
		const struct view_filter *vf);

/* `export -F csv`: function I of FS's calls in S as the table `trace -F
 * csv -o 'x.%f.csv'` writes (the same columns, cells and writer), and
 * "call", each call's number in the store.  CGROUP_OF (NULL: no cgroup
 * column): a process's cgroup.  *CALLS counts them.  0, 1 (the store's
 * error) or -errno. */
int export_view__table(struct cmon_store *s, const struct cmon_function *fs, size_t nf,
		       size_t i, FILE *out, const char *(*cgroup_of)(void *, uint32_t),
		       void *ctx, uint64_t *calls);

/* `cmon export RUN -F FMT [-o PATH]`: open RUN, write the calls VF keeps
 * to PATH (made 0600, no symlink followed) or stdout, one error line on
 * failure.  An exit status. */
int export_view__run(const char *run, enum out_format fmt, const char *path,
		     const struct view_filter *vf);

#endif
