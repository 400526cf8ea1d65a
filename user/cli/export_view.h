/*
 * export_view.h: `cmon export RUN -F chrome|tree|folded`: a capture store
 * through the same views as `cmon trace -F ...` (user/output/view.h).
 */
#ifndef CMON_EXPORT_VIEW_H
#define CMON_EXPORT_VIEW_H

#include <stdbool.h>
#include <stdio.h>
#include <cmon/cmon.h>
#include "output/writer.h"

struct view_filter;

/* Every call of S that VF keeps (NULL: all), written to OUT as FMT
 * (OUT_CHROME, OUT_TREE, OUT_FOLDED).  *CALLS counts them.  0, 1 (the
 * store's error: cmon_store_error) or -errno. */
int export_view(struct cmon_store *s, enum out_format fmt, FILE *out, uint64_t *calls,
		const struct view_filter *vf);

/* *FIRST: the entry time of S's first call when VF's range needs it (a
 * time after the first call), else 0.  0 or 1 (the store's error). */
int export_view__first_ts(struct cmon_store *s, const struct view_filter *vf, uint64_t *first);

/* `export -F csv|json` (FMT OUT_CSV, OUT_JSON): function I of FS's calls
 * in S that VF keeps (NULL: all; FIRST from export_view__first_ts) as
 * `trace -F csv|json -o 'x.%f.csv'` writes them (the same columns or keys,
 * cells and writer), and "call", each call's number in the store.
 * CGROUP_OF (NULL: no cgroup column): a process's cgroup.  *CALLS counts
 * them.  0, 1 (the store's error) or -errno. */
int export_view__table(struct cmon_store *s, const struct cmon_function *fs, size_t nf,
		       size_t i, enum out_format fmt, FILE *out, const struct view_filter *vf,
		       uint64_t first, const char *(*cgroup_of)(void *, uint32_t), void *ctx,
		       uint64_t *calls);

/* RUN is a trace file (JSON Lines of `trace -F json`, or a trace CSV:
 * *CSV): its stream, at its start; NULL: not one (a store, or no file). */
FILE *export_view__trace_file(const char *run, bool *csv);

/* Where `export -F csv|json` of a trace file puts a function's table. */
struct export_tables {
	/* A table for function FUNC of MODULE, of CALLS calls: its stream,
	 * or NULL and *ERR (-errno). */
	FILE *(*open)(void *ctx, const char *func, const char *module, uint64_t calls, int *err);
	int (*close)(void *ctx, FILE *f); /* 0 or -errno */
	void *ctx;
};

/* An error already said in one line. */
#define EXPORT_SAID 2

/* `export -F csv|json` (FMT OUT_CSV, OUT_JSON) of trace file IN (named
 * RUN; CSV: a trace CSV): the calls VF keeps (NULL: all), a table per
 * function, in the order the functions first come, each as `trace -F FMT
 * -o 'x.%f.csv'` writes it.  *CALLS counts them.  0, EXPORT_SAID (the
 * file is not a trace of cmon's, or a newer one) or -errno. */
int export_view__trace_tables(FILE *in, bool csv, const char *run, enum out_format fmt,
			      const struct view_filter *vf, const struct export_tables *t,
			      uint64_t *calls);

/* `cmon export RUN -F FMT [-o PATH]`: open RUN, write the calls VF keeps
 * to PATH (made 0600, no symlink followed) or stdout, one error line on
 * failure.  An exit status. */
int export_view__run(const char *run, enum out_format fmt, const char *path,
		     const struct view_filter *vf);

#endif
