/*
 * series.h: what one probe exposes, per (function, pid label): counts and
 * the cumulative histogram buckets Prometheus wants, summed over the
 * probe's live profiler and the values it carries over (from a replaced
 * binary's profiler, or an expired one).
 *
 * Latency buckets (seconds): 1us 5us 10us 50us 100us 500us 1ms 5ms 10ms
 * 50ms 100ms 500ms 1s 5s 10s +Inf.  The kernel keeps a log-linear
 * histogram (agg/hist.h: 32 sub-buckets per power of two); a bound that
 * falls inside a kernel bucket counts the values of the buckets wholly
 * below it, so each le count is exact up to the 1.6 % width of the bucket
 * around the bound (it may leave out values within 1.6 % below the bound).
 *
 * Argument buckets: the kernel's log2 buckets of the argument taken as an
 * unsigned 64-bit value; le = 2^k - 1 for k = 0..63 ("0", "1", "3", "7",
 * ...), i.e. the values below 2^k, exact for integers; +Inf holds the rest.
 * A negative argument is a huge unsigned value (and an `int` -1 reads
 * 4294967295: see README, "Values are raw registers").
 */
#ifndef CMON_AGENT_SERIES_H
#define CMON_AGENT_SERIES_H

#include <stddef.h>
#include <stdint.h>
#include "agg/profiler.h"

#define SERIES_LAT_NBOUNDS 15
#define SERIES_ARG_NBOUNDS 64

/* Pid label values: no pid label, and the sum of processes over the cap. */
#define SERIES_PID_NONE 0u
#define SERIES_PID_OTHER UINT32_MAX
/* The function label of functions beyond the probe's max_functions. */
#define SERIES_FUNC_OTHER "other"

extern const char *const series_lat_le[SERIES_LAT_NBOUNDS];     /* "1e-06" .. "10" */
extern const uint64_t series_lat_bound_ns[SERIES_LAT_NBOUNDS];
extern const char *const series_arg_le[SERIES_ARG_NBOUNDS];     /* "0" .. "9223372036854775807" */

struct series_val {
	uint64_t calls;    /* entries */
	uint64_t lost;     /* entries not recorded */
	uint64_t filtered; /* if: calls left out (not in calls) */
	uint64_t lat_count, lat_sum_ns;   /* completed calls, their latency */
	uint64_t lat_le[SERIES_LAT_NBOUNDS];
	uint64_t arg_count;
	uint64_t arg_le[SERIES_ARG_NBOUNDS];
};

/* V = the cumulative buckets of FP (the kernel's aggregate of one function,
 * or function and process; its latencies already the function's own). */
void series_val__from_profile(struct series_val *v, const struct func_profile *fp);
void series_val__add(struct series_val *acc, const struct series_val *v);

struct series_row {
	char *func;   /* owned */
	uint32_t pid; /* a pid, SERIES_PID_NONE or SERIES_PID_OTHER */
	struct series_val v;
};

struct series_table {
	struct series_row *rows;
	size_t n, cap;
};

/* Append a row (FUNC copied); 0 or -ENOMEM.  Rows with the same key are
 * summed by series_table__normalize. */
int series_table__add(struct series_table *t, const char *func, uint32_t pid,
		      const struct series_val *v);
/* Add every row of SRC. */
int series_table__merge(struct series_table *t, const struct series_table *src);
/* Sort by (function, pid; "other" last) and sum rows with the same key. */
void series_table__normalize(struct series_table *t);
/* Rows of PID now count as pid OLD -> NEW (then normalize). */
void series_table__relabel(struct series_table *t, uint32_t old_pid, uint32_t new_pid);
void series_table__clear(struct series_table *t); /* frees rows; T reusable */

#endif
