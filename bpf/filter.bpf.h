/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * filter.bpf.h: which processes count, decided in the kernel before
 * anything is recorded or aggregated (trace and profile alike): a pid, a
 * process name, a cgroup v2 (0 / empty: any), the --binary executable
 * (exe_filter.bpf.h) and the launched program from its exec
 * (lifecycle.bpf.h), and while following children, the followed processes
 * (follow.bpf.h).  The agent scopes system-wide probes with them.
 */
#ifndef CMON_FILTER_BPF_H
#define CMON_FILTER_BPF_H

#include "exe_filter.bpf.h"
#include "lifecycle.bpf.h"
#include "follow.bpf.h"

const volatile __u32 targ_filter_pid = 0;
const volatile bool targ_filter_comm = false;
const volatile __u64 targ_comm_lo = 0; /* the comm, NUL-padded to 16 bytes */
const volatile __u64 targ_comm_hi = 0;
/* The cgroup v2 (its id; 0: any) whose processes count, with those of
 * every cgroup below it: the task's ancestor at the cgroup's level. */
const volatile __u64 targ_filter_cgroup = 0;
const volatile __u32 targ_filter_cgroup_level = 0;
/* cmon's own process: never recorded, aggregated or stopped, whatever
 * route names it (--binary of cmon's file, a spec naming the agent's
 * binary, libc with `process: cmon-agent`): its records would be made
 * by writing records. */
const volatile __u32 targ_self_tgid = 0;

/*
 * Set (1) by user space as it detaches, through the skeleton's mapped
 * .bss: no call opens a frame after it, so the return probes can be
 * closed first (user/probe/detach.h: a close while one still fires can
 * wait for the program's end) without leaving calls open that began
 * meanwhile.  A global, not a map: one load, no lookup whose two outcomes
 * the verifier would follow through every entry program (a map lookup
 * here took cmon_entry past a million instructions).
 */
volatile __u32 entries_closed = 0;

static __always_inline bool task_wanted(struct task_struct *task)
{
	if (entries_closed)
		return false;
	if ((__u32)task->tgid == targ_self_tgid)
		return false;
	if (targ_filter_pid && (__u32)task->tgid != targ_filter_pid)
		return false;
	if (!follow_wanted(task))
		return false;
	if (targ_filter_cgroup &&
	    bpf_get_current_ancestor_cgroup_id((int)targ_filter_cgroup_level) != targ_filter_cgroup)
		return false;
	if (targ_filter_comm) {
		struct task_struct *leader = task->group_leader; /* a direct load */
		__u64 comm[2] = {};

		if (!leader || bpf_probe_read_kernel(comm, sizeof(comm), leader->comm) ||
		    comm[0] != targ_comm_lo || comm[1] != targ_comm_hi)
			return false;
	}
	return exe_wanted(task) && launch_wanted(task);
}

/*
 * Processes that exec'd from a thread other than their leader (tgid ->
 * that thread's old tid).  The kernel gives the thread the leader's pid,
 * but a pid-filtered uprobe_multi link holds the task it was made for,
 * the old leader, whose mm is gone: the new program would get no probe
 * from it.  User space attaches those links again (bpf_set__reattach).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} thread_execs SEC(".maps");

SEC("tp_btf/sched_process_exec")
int BPF_PROG(cmon_thread_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid, tid = old_pid, zero = 0;
	struct cmon_follow_stats *fs;

	if (old_pid == p->pid || !task_wanted(p))
		return 0;
	bpf_map_update_elem(&thread_execs, &tgid, &tid, BPF_ANY);
	fs = bpf_map_lookup_elem(&follow_stats, &zero);
	if (fs)
		__sync_fetch_and_add(&fs->thread_execs, 1);
	if (targ_follow_wake) {
		/* a wakeup (full: the next poll finds it all the same) */
		struct cmon_fork_rec *rec = bpf_ringbuf_reserve(&follow_events, sizeof(*rec), 0);

		if (rec) {
			rec->child = tgid;
			rec->parent = tgid;
			bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
		}
	}
	return 0;
}

#endif
