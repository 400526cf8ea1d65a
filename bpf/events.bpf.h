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

/*
 * --blocking-timeout (targ_block_ns; 0: a record that finds the buffer
 * full is dropped and counted at once).  No helper of the kernel sleeps
 * on a condition from a uprobe, so the traced thread spins: it reads the
 * fill (bpf_ringbuf_query) until the record fits, the timeout passes, or
 * the loop's bound is spent; then the reservation is tried once more.
 * The thread holds its CPU meanwhile (migration off; preemption off on a
 * kernel without it), so the consumer must run on another CPU.
 * A wait whose whole timeout passed without the consumer moving (cmon
 * stopped, starved or dying) marks that position: the records after it
 * are dropped at once, as without the mode, until the consumer moves, so
 * a stopped cmon costs the program one timeout, not one per record.
 */
const volatile __u64 targ_block_ns = 0;
#define CMON_ROOM_LOOPS (1 << 23) /* bpf_loop's most; the rounds below bound the rest */
#define CMON_ROOM_ROUNDS 8

/* The consumer position a wait saw stopped, + 1 (0: none). */
__u64 room_stalled_at = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_room_waits);
} room_waits SEC(".maps");

struct room_wait_ctx {
	__u64 need;     /* the record's bytes in the ring: header, rounded to 8 */
	__u64 size;
	__u64 deadline;
	bool room;
};

static long room_step(__u64 i, void *data)
{
	struct room_wait_ctx *w = data;

	/* The kernel refuses a reservation that would take the producer
	 * past the consumer by more than the mask (size - 1). */
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) + w->need < w->size) {
		w->room = true;
		return 1;
	}
	return bpf_ktime_get_ns() >= w->deadline;
}

/* A record of BYTES found the ring buffer full: wait for room as said
 * above.  True: there may be room now (reserve again). */
static __noinline bool room_wait(__u64 bytes)
{
	struct room_wait_ctx w = {};
	struct cmon_room_waits *rw;
	__u64 cons, start;
	__u32 zero = 0;

	if (!targ_block_ns)
		return false;
	rw = bpf_map_lookup_elem(&room_waits, &zero);
	if (!rw)
		return false;
	cons = bpf_ringbuf_query(&events, BPF_RB_CONS_POS);
	if (*(volatile __u64 *)&room_stalled_at == cons + 1) {
		rw->skipped++;
		return false;
	}
	w.need = (bytes + 8 + 7) & ~7ull; /* BPF_RINGBUF_HDR_SZ */
	w.size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
	start = bpf_ktime_get_ns();
	w.deadline = start + targ_block_ns;
	for (int r = 0; r < CMON_ROOM_ROUNDS && !w.room; r++) {
		bpf_loop(CMON_ROOM_LOOPS, room_step, &w, 0);
		if (bpf_ktime_get_ns() >= w.deadline)
			break;
	}
	rw->times++;
	rw->ns += bpf_ktime_get_ns() - start;
	if (!w.room) {
		rw->given_up++;
		if (bpf_ringbuf_query(&events, BPF_RB_CONS_POS) == cons)
			*(volatile __u64 *)&room_stalled_at = cons + 1;
	}
	return w.room;
}

/* A record of SIZE bytes reserved, waiting for room when the mode is on;
 * NULL: none (the caller counts it lost). */
static __always_inline void *reserve_waiting(__u64 size)
{
	void *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec && targ_block_ns && room_wait(size))
		rec = bpf_ringbuf_reserve(&events, size, 0);
	return rec;
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
