/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lifecycle.bpf.h: process events every program that keeps a shadow stack
 * needs (trace, profile).
 *
 * - A launched program is traced from its exec: between attach and exec
 *   the child is still cmon's launcher (closing fds, restoring signals),
 *   and its calls are cmon's own.
 * - A thread that calls exec (any thread: the kernel makes it the leader)
 *   never returns from its pending calls.  They are let go at the start of
 *   the exec, while pid, tid and comm are still the caller's (after it the
 *   thread has the leader's id and the new program's name).  So are
 *   those of its coroutines and goroutines (keyed stacks), then and when
 *   its last thread exits.
 */
#ifndef CMON_LIFECYCLE_BPF_H
#define CMON_LIFECYCLE_BPF_H

#include "shadow_stack.bpf.h"

const volatile __u32 targ_launch_pid = 0; /* the launched child (paused before exec); 0: none */
static volatile bool launch_execed;

/* Not the launcher's own calls in the child before its exec. */
static __always_inline bool launch_wanted(struct task_struct *task)
{
	return !targ_launch_pid || launch_execed || (__u32)task->tgid != targ_launch_pid;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(cmon_launch_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (targ_launch_pid && (__u32)p->tgid == targ_launch_pid)
		launch_execed = true;
	return 0;
}

/* sched_prepare_exec (Linux 6.10): in begin_new_exec, before the point of
 * no return and de_thread, so current still has its own tid and comm.
 * (fentry and kprobes need ftrace and kprobes, which a kernel may lack.)
 * User space loads one of the three (probe/host.h): this one; else fentry
 * on begin_new_exec, the same point; else the end of the exec, where the
 * frames are let go with the new program's ids and name. */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(cmon_exec_begin, struct task_struct *task, struct linux_binprm *bprm)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	shadow_stack_release(cur);
	keyed_stacks_release(cur); /* the old image's coroutines and goroutines */
	return 0;
}

SEC("fentry/begin_new_exec")
int BPF_PROG(cmon_exec_begin_fentry, struct linux_binprm *bprm)
{
	shadow_stack_release(bpf_get_current_task_btf());
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(cmon_exec_end, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	shadow_stack_release(bpf_get_current_task_btf());
	return 0;
}

/* A thread is going away (the thread-exit programs): its pending calls
 * never returned, nor, with its process's last thread, those of the
 * process's coroutines and goroutines.  (do_exit counts the live threads
 * down before the tracepoint.) */
static __always_inline void lifecycle_thread_exit(struct task_struct *task)
{
	shadow_stack_release(task);
	if (targ_keyed_stacks && !BPF_CORE_READ(task, signal, live.counter))
		keyed_stacks_release(task);
}

#endif
