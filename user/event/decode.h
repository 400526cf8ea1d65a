/*
 * decode.h: a kernel record (struct cmon_call_rec) to a call record the
 * writers print: monotonic to wall-clock time, function id to names, flags
 * to a status.  No allocation: the record points into the probe set and the
 * kernel record, which must outlive it.
 */
#ifndef CMON_DECODE_H
#define CMON_DECODE_H

#include <stdint.h>
#include "cmon_abi.h"
#include "output/record.h"
#include "probe/calib.h"
#include "probe/resolve.h"

struct decoder {
	const struct probe_set *set;
	int64_t mono_to_real_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	uint64_t *bias_ns;       /* [n_funcs] the probe's own share of a latency; NULL: 0 */
	/* [n_funcs] (with bias_ns) how far after the entry probe a call
	 * timed from it begins: a single-stepped entry's lead (its share of
	 * the bias before the function runs), so that a span [ts_ns, ts_ns +
	 * latency_ns] lies where the call ran and nests; 0 for others. */
	uint64_t *lead_ns;
	uint64_t *spread_ns;     /* [n_funcs] (with bias_ns) how much the bias varies */
};

/* CALIB (NULL or not valid: nothing) is subtracted from latencies: they are
 * the function's own.  Returns 0, or -ENOMEM (only with a CALIB); release
 * with decoder__release. */
int decoder__init(struct decoder *d, const struct probe_set *set, const struct probe_calib *calib);
void decoder__release(struct decoder *d);

/* Returns 0, or -EINVAL for a record cmon did not write (unknown type or
 * function). */
int decoder__decode(const struct decoder *d, const struct cmon_call_rec *in,
		    struct call_record *out);

#endif
