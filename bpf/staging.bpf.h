/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * staging.bpf.h: call records staged per CPU and sent to the ring buffer
 * CMON_BATCH at a time (struct cmon_batch, cmon_abi.h).  A ring-buffer
 * reservation takes its lock and touches the positions the consumer reads
 * on another CPU: measured here, ~100 ns of the ~180 ns a record costs over
 * an empty probe; a batch pays it once for 16 calls.
 *
 * The batch is a slot of an mmapped array, one per CPU.  BUSY guards it: a
 * program that finds it held (another task on this CPU, preempted inside
 * the same program, or user space sweeping a partial batch) writes its
 * record to the ring buffer directly.  User space (user/event/staging.c)
 * puts the records of every source back in time order.  A thread that
 * leaves a CPU takes its partial batch with it (cmon_migrate): left
 * behind, it would go out with the thread's later records on that CPU,
 * and be lost whole with them if the ring buffer is full by then.
 * Included by trace.bpf.c.
 */
#ifndef CMON_STAGING_BPF_H
#define CMON_STAGING_BPF_H

#include "events.bpf.h"

const volatile bool targ_staging = false;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* one per possible CPU, set by user space */
	__type(key, __u32);
	__type(value, struct cmon_batch);
} staging SEC(".maps");

/* A record slot in this CPU's batch, which stays held until staging_put;
 * NULL when staging is off or the batch is held (then the ring buffer). */
static __always_inline struct cmon_call_rec *staging_take(struct cmon_batch **held)
{
	__u32 cpu = bpf_get_smp_processor_id(), n;
	struct cmon_batch *b;

	if (!targ_staging)
		return NULL;
	b = bpf_map_lookup_elem(&staging, &cpu);
	if (!b || __sync_val_compare_and_swap(&b->busy, 0, 1) != 0)
		return NULL;
	n = b->n;
	if (n >= CMON_BATCH) { /* never: a full batch is sent before it is let go */
		__sync_lock_test_and_set(&b->busy, 0);
		return NULL;
	}
	b->tid = (__u32)bpf_get_current_pid_tgid();
	*held = b;
	return &b->r[n];
}

/* Let B go: a plain store after a compiler barrier releases it on x86-64
 * (stores are not reordered with earlier stores; cmon runs nowhere else),
 * where an atomic exchange would cost a locked instruction a record. */
static __always_inline void staging_release(struct cmon_batch *b)
{
	barrier();
	*(volatile __u64 *)&b->busy = 0;
}

/* B's N records to the ring buffer (B held; with --blocking-timeout and
 * WAIT, waiting for room); counted lost if it is full. */
static __always_inline void staging_send(struct cmon_batch *b, __u32 n, __u64 flags, bool wait)
{
	b->type = CMON_REC_BATCH;
	b->n = n;
	if (bpf_ringbuf_output(&events, b, sizeof(*b), flags) &&
	    (!wait || !targ_block_ns || !room_wait(sizeof(*b)) ||
	     bpf_ringbuf_output(&events, b, sizeof(*b), flags))) {
		for (__u32 i = 0; i < CMON_BATCH && i < n; i++) {
			struct cmon_func_stats *st = stats_of(b->r[i].func_id);

			if (st)
				st->lost_ringbuf++;
		}
	}
	b->n = 0;
}

/* The record taken from B is written: count it in, send a full batch, let
 * the batch go. */
static __always_inline void staging_put(struct cmon_batch *b)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (++b->n < CMON_BATCH) {
		staging_release(b);
		return;
	}
	/* The fill, every 4th batch (64 records): see wakeup_flags(). */
	if (targ_wakeup_bytes && (++b->sent & 3) == 0)
		flags = wakeup_flags();
	staging_send(b, CMON_BATCH, flags, true);
	staging_release(b);
}

/* A thread moves to another CPU: the partial batch it staged on the one it
 * leaves goes out now, before anything it stages next (held: the sweep
 * takes it).  Runs on every migration of the host; a look at one slot. */
SEC("tp_btf/sched_migrate_task")
int BPF_PROG(cmon_migrate, struct task_struct *p, int dest_cpu)
{
	__u32 cpu = p->thread_info.cpu, n; /* task_cpu(p): not moved yet */
	struct cmon_batch *b;

	if (!targ_staging || cpu == (__u32)dest_cpu)
		return 0;
	b = bpf_map_lookup_elem(&staging, &cpu);
	if (!b || !b->n || b->tid != (__u32)p->pid)
		return 0;
	if (__sync_val_compare_and_swap(&b->busy, 0, 1) != 0)
		return 0;
	n = b->n;
	if (n && n < CMON_BATCH && b->tid == (__u32)p->pid)
		/* never waits: this runs inside the scheduler (its run-queue
		 * locks held), where a spin could keep cmon itself from running */
		staging_send(b, n, BPF_RB_NO_WAKEUP, false);
	staging_release(b);
	return 0;
}

#endif
