/*
 * watcher.h: --watch.  Hardware watchpoints on a process's globals: one
 * perf event (PERF_TYPE_BREAKPOINT, write) per watch per thread, inherited
 * by the threads and processes created later, each running watch.bpf.c,
 * which records the new value, the old one, the thread and where the
 * write was.  Records are written as text, CSV or JSON Lines.
 *
 * Lifecycle: watcher__new (resolve the expressions in the running process,
 * load) -> watcher__attach -> watcher__poll ... -> watcher__detach ->
 * watcher__drain -> watcher__report -> watcher__free.
 */
#ifndef CMON_EVENT_WATCHER_H
#define CMON_EVENT_WATCHER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "output/writer.h"

struct watcher;

struct watcher_opts {
	pid_t pid;               /* the process (after its exec: PIE addresses) */
	const char *const *exprs; /* NAME (DWARF global or symbol), SYMBOL+OFF, ADDR:LEN */
	size_t n_exprs;
	FILE *out;
	enum out_format fmt;     /* OUT_TEXT, OUT_CSV, OUT_JSON */
	bool csv_header;         /* CSV: write the header line first */
};

/* Resolve and load.  0 and *OUT, or -errno after one error line. */
/* --watch ADDR:LEN (a hex address and 1, 2, 4 or 8 bytes at a multiple of
 * them), not a name: checked when the options are read, so that a
 * malformed one is a usage error.  0, or -EINVAL after one error line. */
bool watch__is_addr_len(const char *expr);
int watch__addr_len(const char *expr, uint64_t *addr, uint32_t *len);

int watcher__new(const struct watcher_opts *opts, struct watcher **out);

/* Seed the old values and open the events on every thread.  0, or -errno
 * after one error line (-ENOSPC: no free debug register); on failure no
 * event stays open. */
int watcher__attach(struct watcher *w);

/* Wait up to TIMEOUT_MS, then write what arrived.  Records written or
 * -errno. */
int watcher__poll(struct watcher *w, int timeout_ms);
int watcher__drain(struct watcher *w);

void watcher__detach(struct watcher *w);

/* Per watch: the address and the writes seen; writes lost.  Returns the
 * writes lost (not recorded: ring buffer full). */
/* Watches (a --watch given twice counts once). */
size_t watcher__count(const struct watcher *w);
uint64_t watcher__report(struct watcher *w, bool quiet);

void watcher__free(struct watcher *w); /* NULL fine */

#endif
