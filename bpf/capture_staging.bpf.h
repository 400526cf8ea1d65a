/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * capture_staging.bpf.h: capture records staged per CPU (struct
 * cmon_capture_batch, cmon_abi.h) and sent to the ring buffer a batch at a
 * time, as staging.bpf.h does for call records: measured here, a capture
 * record's own reservation, fill and submit cost ~90 ns of a typed call.
 * User space (user/event/capture_staging.c) takes partial batches at every
 * poll, after the call records' sweep: a capture is written before its
 * call returns, so it is there by the time its call record goes out.
 * Included by fetch.bpf.h.
 */
#ifndef CMON_CAPTURE_STAGING_BPF_H
#define CMON_CAPTURE_STAGING_BPF_H

#include "events.bpf.h"

const volatile bool targ_capture_staging = false;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* one per possible CPU, set by user space */
	__type(key, __u32);
	__type(value, struct cmon_capture_batch);
} capture_staging SEC(".maps");

struct capbatch_walk {
	struct cmon_capture_batch *b;
	__u32 off;
};

/* One record of a batch the ring buffer refused: its capture is lost. */
static long capbatch_count_lost(__u64 i, void *ctx)
{
	struct capbatch_walk *w = ctx;
	struct cmon_capture_rec *r;
	struct cmon_func_stats *st;
	__u32 off = w->off;

	if (off >= w->b->len || off > CMON_CAPBATCH_BYTES - sizeof(*r))
		return 1;
	r = (void *)w->b->data + off;
	st = stats_of(r->func_id);
	if (st)
		st->lost_capture++;
	w->off = off + ((sizeof(*r) + r->len + 7) & ~7u);
	return 0;
}

/* Send held batch B to the ring buffer and empty it. */
/* Out of line: its walk would add to the callers' stack. */
static __noinline void capbatch_send(struct cmon_capture_batch *b)
{
	__u32 len = b->len;

	if (len > CMON_CAPBATCH_BYTES)
		len = CMON_CAPBATCH_BYTES;
	b->type = CMON_REC_CAPTURE_BATCH;
	len += offsetof(struct cmon_capture_batch, data);
	if (len > offsetof(struct cmon_capture_batch, data) &&
	    bpf_ringbuf_output(&events, b, len, BPF_RB_NO_WAKEUP) &&
	    (!targ_block_ns || !room_wait(len) ||
	     bpf_ringbuf_output(&events, b, len, BPF_RB_NO_WAKEUP))) {
		struct capbatch_walk w = { .b = b };

		bpf_loop(CMON_CAPBATCH_BYTES / sizeof(struct cmon_capture_rec),
			 capbatch_count_lost, &w, 0);
	}
	b->len = 0;
	b->n = 0;
}

/* This CPU's batch, held until capbatch_release, with room for a record
 * of TOTAL bytes at data + len (a fuller batch is sent first); NULL when
 * staging is off, the record is CMON_CAPBATCH_REC_MAX or more, or the batch is held (another task
 * on this CPU preempted inside a program, or the sweep): then the ring
 * buffer takes the record. */
static __always_inline struct cmon_capture_batch *capbatch_take(__u32 total)
{
	struct cmon_capture_batch *b;
	__u32 cpu;

	if (!targ_capture_staging || total >= CMON_CAPBATCH_REC_MAX)
		return NULL;
	cpu = bpf_get_smp_processor_id();
	b = bpf_map_lookup_elem(&capture_staging, &cpu);
	if (!b || __sync_val_compare_and_swap(&b->busy, 0, 1) != 0)
		return NULL;
	if (b->len + total > CMON_CAPBATCH_BYTES)
		capbatch_send(b);
	return b;
}

/* Let B go (a plain store after a barrier, as staging_release). */
static __always_inline void capbatch_release(struct cmon_capture_batch *b)
{
	barrier();
	*(volatile __u64 *)&b->busy = 0;
}

#endif
