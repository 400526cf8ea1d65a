/*
 * pyprof.h: `cmon profile --py`: Python calls aggregated per function (and
 * process) in user space, from the per-call records of the trace programs
 * (python.bpf.h), into the rows profile reports (struct func_profile).
 * The kernel-side aggregation of profile.bpf.c does not take Python
 * functions: their identity (a code object) is known only as they run.
 * Self time (a call's latency less its traced callees') and the calls
 * between the selected functions come from each record's depth: a call's
 * callees are the records one deeper on its thread that came before it.
 */
#ifndef CMON_PYPROF_H
#define CMON_PYPROF_H

#include <stdbool.h>
#include <stdint.h>
#include "agg/profiler.h"
#include "output/record.h"

struct pyprof;

/* Rows get func_id FIRST_ID + n (FIRST_ID: past the probe set's). */
struct pyprof *pyprof__new(uint32_t first_id, bool per_pid);
void pyprof__free(struct pyprof *pp);

/* One decoded Python call.  0 or -ENOMEM. */
int pyprof__add(struct pyprof *pp, const struct call_record *cr);

/* Each function (and process) with a call, as profiler__read does. */
int pyprof__read(struct pyprof *pp, profiler_read_fn fn, void *ctx);

/* Every row's lost calls back to 0, before they are added again from the
 * kernel's cumulative counts. */
void pyprof__clear_lost(struct pyprof *pp);
/* Calls of function QUALNAME (file:line WHERE) of process PID not
 * recorded: counted lost in its row. */
int pyprof__add_lost(struct pyprof *pp, uint32_t pid, const char *qualname, const char *where,
		     uint64_t n);

/* The calls between the functions: for row FUNC_ID, FN(CTX, the other
 * row's func_id, calls, total_ns of those calls) for each function that
 * called it (CALLERS) or that it called. */
typedef void (*pyprof_edge_fn)(void *ctx, uint32_t other, uint64_t calls, uint64_t total_ns);
void pyprof__edges(const struct pyprof *pp, uint32_t func_id, bool callers, pyprof_edge_fn fn,
		   void *ctx);

/* The name and file:line of row FUNC_ID; NULL if not one of ours. */
const char *pyprof__name(const struct pyprof *pp, uint32_t func_id);
const char *pyprof__module(const struct pyprof *pp, uint32_t func_id);

#endif
