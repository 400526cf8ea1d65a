/*
 * decode.h: a kernel record (struct cmon_call_rec) to a call record the
 * writers print: monotonic to wall-clock time, function id to names, flags
 * to a status.  No allocation: the record points into the probe set and the
 * kernel record, which must outlive it.
 */
#ifndef CMON_DECODE_H
#define CMON_DECODE_H

#include <stdint.h>
#include "cmon.h"
#include "output/record.h"
#include "probe/resolve.h"

struct decoder {
	const struct probe_set *set;
	int64_t mono_to_real_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
};

void decoder__init(struct decoder *d, const struct probe_set *set);

/* Returns 0, or -EINVAL for a record cmon did not write (unknown type or
 * function). */
int decoder__decode(const struct decoder *d, const struct cmon_call_rec *in,
		    struct call_record *out);

#endif
