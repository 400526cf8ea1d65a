/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmon.h: the records and limits the BPF programs and user space share.
 *
 * Fixed-width types only (no long, no pointers) so both sides agree on the
 * layout; every ring-buffer record starts with a type tag; fields are ordered
 * by size so there is no padding to disagree about.
 */
#ifndef CMON_H
#define CMON_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space; BPF code has vmlinux.h */
#endif

#define CMON_MAX_ARGS 6        /* integer argument registers, x86-64 SysV */
#define CMON_COMM_LEN 16
#define CMON_STACK_DEPTH 128   /* pending traced calls per thread */
#define CMON_MAX_CPUS 1024     /* bound for the exact RSS per-CPU sum */

/* The attach cookie of every probe: which function, and for exit probes how
 * the return was observed (it decides where the return-address slot is). */
#define CMON_COOKIE_FUNC_MASK 0xffffffffULL
#define CMON_COOKIE_KIND_SHIFT 32

enum cmon_exit_kind {
	CMON_EXIT_URETPROBE = 0, /* kernel uretprobe: ret already popped, slot = sp - 8 */
	CMON_EXIT_RET_INSN = 1,  /* uprobe on a ret instruction: slot = sp */
	CMON_EXIT_TAIL_JMP = 2,  /* uprobe on a jump out of the function: slot = sp, no value */
};

enum cmon_record_type {
	CMON_REC_CALL = 1,
};

enum cmon_call_flags {
	CMON_CALL_RETURNED = 1u << 0,   /* exit seen: ret, ts_exit, *_exit are valid */
	CMON_CALL_NORETURN = 1u << 1,   /* frame abandoned: longjmp, exception, exit */
	CMON_CALL_ENTRY_ONLY = 1u << 2, /* --no-return: nothing after the entry */
	CMON_CALL_TAILCALL = 1u << 3,   /* left by a tail jump: ret is unknown */
};

/* One traced call, written once: at its return, when it is abandoned, or at
 * entry with --no-return. */
struct cmon_call_rec {
	__u32 type;  /* CMON_REC_CALL */
	__u32 flags; /* enum cmon_call_flags */
	__u64 ts_entry_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 ts_exit_ns;
	__u64 args[CMON_MAX_ARGS];
	__u64 ret;
	__u64 rss_entry; /* bytes: file + anon + shmem pages, exact */
	__u64 rss_exit;
	__u64 vms_entry; /* bytes: mm->total_vm */
	__u64 vms_exit;
	__u32 pid;
	__u32 tid;
	__u32 func_id; /* index into user space's function table */
	__u32 depth;   /* traced calls pending below this one on the thread */
	char comm[CMON_COMM_LEN]; /* process (thread-group leader) name */
};

/* Per-function counters, one slot per function in a per-CPU array: the hot
 * path never touches a shared cache line. */
struct cmon_func_stats {
	__u64 calls;        /* entries seen */
	__u64 lost_ringbuf; /* record not written: ring buffer full */
	__u64 lost_depth;   /* entry not recorded: CMON_STACK_DEPTH pending calls */
	__u64 lost_nomem;   /* entry not recorded: no per-thread storage */
};

#endif /* CMON_H */
