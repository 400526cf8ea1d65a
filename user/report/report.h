/*
 * report.h: `cmon report`: one self-contained HTML page (charts drawn by
 * uPlot, embedded at build time) from what cmon wrote: capture stores,
 * trace CSV / JSON Lines, profile CSV / JSON Lines, `cmon stats -F json`.
 *
 * source.c reads every kind into one model (calls, profile rows, stats
 * values); model.c reduces it to the page's data (per-function table,
 * latency over time, latency distribution, calls per second, memory and
 * the calls that grew it; downsampled, the method said on the page);
 * html.c writes the page.
 */
#ifndef CMON_REPORT_H
#define CMON_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REPORT_NONE UINT64_MAX

/* One call (stores and traces). */
struct rcall {
	uint64_t ts_ns, latency_ns;           /* latency REPORT_NONE: did not return */
	uint64_t rss_entry, rss_exit, vms_entry, vms_exit; /* REPORT_NONE: unknown */
	uint32_t func, pid;                   /* func: index in report.funcs */
};

struct report {
	char **funcs;           /* names shown: NAME, or MODULE:NAME when another
				 * function of that name is in another module
				 * (as cmon ls / stats / export name them) */
	char **func_names, **func_modules; /* interned by (module, name) */
	size_t n_funcs, cap_funcs;
	struct rcall *calls;
	size_t n_calls, cap_calls;
	json_t *profile_rows;   /* array of profile objects (final report rows) */
	json_t *stats;          /* array of stats documents */
	json_t *sources;        /* [{path, kind, items}] */
	struct rseen {          /* the files read (a store: its calls.db) */
		uint64_t dev, ino;
		char *path;     /* as given */
	} *seen;
	size_t n_seen, cap_seen;
};

void report__init(struct report *r);
void report__release(struct report *r);

/* Read PATH (kind detected from its content) into R.  0, or -1 with a
 * one-line message in ERR.  A file read before (the same store or file by
 * another path) is skipped with a warning: 0. */
int report__add_source(struct report *r, const char *path, char *err, size_t errlen);

/* The page's data: a JSON object (model.c).  NULL on ENOMEM. */
json_t *report__model(const struct report *r);

/* The page, with DATA embedded, to OUT.  0 or -errno. */
int report__write_html(FILE *out, const char *title, json_t *data);

#endif
