/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * events.bpf.h: the trace programs' ring buffer (`events`), their
 * per-function counters (`func_stats`, struct cmon_func_stats) and how a
 * record is submitted: without waking the consumer, unless it sleeps
 * while the buffer fills up (`consumer`, struct cmon_consumer, mmapped by
 * user/event/tracer.c).  Every header that writes records includes it.
 */
#ifndef CMON_EVENTS_BPF_H
#define CMON_EVENTS_BPF_H

#include "cmon_abi.h"

const volatile __u64 targ_wakeup_bytes = 0;  /* force a wakeup past this fill */
#define CMON_WAKEUP_CHECK_EVERY 64 /* records per CPU; a power of two */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by user space before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* one per function, set by user space */
	__type(key, __u32);
	__type(value, struct cmon_func_stats);
} func_stats SEC(".maps");

static __always_inline struct cmon_func_stats *stats_of(__u32 func_id)
{
	return bpf_map_lookup_elem(&func_stats, &func_id);
}

/* Records written on each CPU: the fill is checked every
 * CMON_WAKEUP_CHECK_EVERY of them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rb_written SEC(".maps");

/* Forced wakeups, per CPU (`-v` prints their sum). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rb_wakeups SEC(".maps");

/* Whether the consumer sleeps (struct cmon_consumer, mmapped by user space). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_consumer);
} consumer SEC(".maps");

/*
 * The flags of a submission whose turn it is to look at the fill: a forced
 * wakeup when the consumer sleeps and the buffer is past the threshold.
 * A consumer that is reading gets none: each was an IRQ-work
 * self-interrupt on this CPU (a VM exit on this host), every 64 records
 * while a busy consumer lagged: a third of the traced thread's time on a
 * 5-byte nop.  Reading the fill (bpf_ringbuf_query) costs more than the
 * rest of a record (the positions' cache lines live on the consumer's
 * CPU), hence once in CMON_WAKEUP_CHECK_EVERY records per CPU; the
 * threshold leaves thousands of records of room.
 */
static __always_inline __u64 wakeup_flags(void)
{
	__u32 zero = 0;
	struct cmon_consumer *c = bpf_map_lookup_elem(&consumer, &zero);
	__u64 *n;

	if (!c || !*(volatile __u64 *)&c->asleep ||
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) <= targ_wakeup_bytes)
		return BPF_RB_NO_WAKEUP;
	n = bpf_map_lookup_elem(&rb_wakeups, &zero);
	if (n)
		(*n)++;
	return BPF_RB_FORCE_WAKEUP;
}

/* Submit without waking the consumer (it polls on a timer), unless it
 * sleeps while the buffer fills up. */
static __always_inline void submit(struct cmon_call_rec *rec)
{
	__u64 flags = BPF_RB_NO_WAKEUP, *n;
	__u32 zero = 0;

	if (targ_wakeup_bytes && (n = bpf_map_lookup_elem(&rb_written, &zero)) &&
	    (++*n & (CMON_WAKEUP_CHECK_EVERY - 1)) == 0)
		flags = wakeup_flags();
	bpf_ringbuf_submit(rec, flags);
}

#endif
