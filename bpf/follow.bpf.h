/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * follow.bpf.h: a traced program's children (issue 14).  The processes
 * that count are the keys of FOLLOWED (tgids): user space puts the roots
 * there (the launched program, -p PID --follow), a process a followed one
 * forks is added here before it runs a single instruction, and a process
 * leaves the map when its last thread exits.  The main executable's links
 * have no pid filter while following (a child has its own mm, which a
 * pid-filtered uprobe_multi link never sees), so this map is the filter;
 * user space reads it to attach a child's library links and to know when
 * every followed process is gone.
 */
#ifndef CMON_FOLLOW_BPF_H
#define CMON_FOLLOW_BPF_H

#include "cmon_abi.h"
#include "lifecycle.bpf.h"

const volatile bool targ_follow = false;
const volatile bool targ_follow_wake = false; /* children need links of their own */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CMON_FOLLOW_MAX);
	__type(key, __u32);   /* tgid */
	__type(value, __u32); /* the parent's tgid (0: a root) */
} followed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_follow_stats);
} follow_stats SEC(".maps");

/* Wakes user space at each followed fork (when it has links to add). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} follow_events SEC(".maps");

static __always_inline bool follow_wanted(struct task_struct *task)
{
	__u32 tgid = task->tgid;

	/* The launched program itself, the usual case, without a lookup
	 * (lifecycle.bpf.h's targ_launch_pid: filter.bpf.h includes it first). */
	if (!targ_follow || (targ_launch_pid && tgid == targ_launch_pid))
		return true;
	return bpf_map_lookup_elem(&followed, &tgid);
}

/* Before the child is woken: it has run nothing yet. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(cmon_follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, zero = 0;
	struct cmon_follow_stats *fs;

	if (ptgid == ctgid || !bpf_map_lookup_elem(&followed, &ptgid))
		return 0; /* a new thread, or not ours */
	fs = bpf_map_lookup_elem(&follow_stats, &zero);
	if (bpf_map_update_elem(&followed, &ctgid, &ptgid, BPF_NOEXIST)) {
		if (fs)
			__sync_fetch_and_add(&fs->unfollowed, 1);
		return 0;
	}
	if (fs) {
		__sync_fetch_and_add(&fs->forks, 1);
		__sync_fetch_and_add(&fs->changes, 1);
	}
	shadow_stack_fork(parent, child);
	if (targ_follow_wake) {
		/* Full: the next poll finds the child in the map all the same. */
		struct cmon_fork_rec *rec = bpf_ringbuf_reserve(&follow_events, sizeof(*rec), 0);

		if (rec) {
			rec->child = ctgid;
			rec->parent = ptgid;
			bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
		}
	}
	return 0;
}

/* From the thread-exit programs: the last thread of a process is gone.
 * (do_exit counts the live threads down before this tracepoint; its
 * group_dead argument is Linux 6.16+, the counter is everywhere.) */
static __always_inline void follow_exit(struct task_struct *task)
{
	__u32 tgid = task->tgid, zero = 0;
	struct cmon_follow_stats *fs;

	if (!targ_follow || BPF_CORE_READ(task, signal, live.counter) ||
	    bpf_map_delete_elem(&followed, &tgid))
		return;
	fs = bpf_map_lookup_elem(&follow_stats, &zero);
	if (fs)
		__sync_fetch_and_add(&fs->changes, 1);
}

/* A thread is going away: whatever it still had pending never returned
 * (trace's and profile's thread-exit programs; lifecycle.bpf.h). */
static __always_inline void thread_gone(struct task_struct *task)
{
	lifecycle_thread_exit(task);
	follow_exit(task);
}

#endif
