/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * profile.h: the aggregates profile.bpf.c keeps and user space reads
 * (user/agg/profiler.c).  Fixed-width types only, all 64-bit so the layout
 * has no padding; one value per CPU, summed by user space.
 */
#ifndef CMON_PROFILE_H
#define CMON_PROFILE_H

#include "cmon_abi.h"
#include "hist_buckets.h"

/* targ_hist_arg for the return value (rax, at the return). */
#define CMON_HIST_RET 6

/* One function's (or one function-in-a-process's) counters on one CPU.
 * ~9.8 KB: well under the 32 KiB per-CPU value limit. */
struct cmon_prof_value {
	__u64 calls;        /* entries counted */
	__u64 returns;      /* completed calls: latency known */
	__u64 noreturn;     /* frames abandoned (longjmp, exception, exit) */
	__u64 lost;         /* entries not recorded: depth, no memory, map full */
	__u64 lat_sum_ns;
	__u64 lat_min_ns;   /* valid when returns > 0 */
	__u64 lat_max_ns;
	__s64 rss_growth;   /* bytes, summed over completed calls */
	__u64 arg_overflow; /* linear: outside [MIN, MIN + 65 STEP); log2: negative */
	__u64 filtered;     /* --if: calls whose condition was false (not in calls) */
	__u64 lat_hist[HIST_NBUCKETS];
	__u64 arg_hist[HIST_ARG_NBUCKETS];
};

/* Why calls were not recorded (index of prof_losses, summed over CPUs). */
enum cmon_prof_loss {
	CMON_LOSS_DEPTH = 0,   /* CMON_STACK_DEPTH calls already pending on the thread */
	CMON_LOSS_TASK_MEM,    /* the thread's shadow stack could not be allocated */
	CMON_LOSS_TABLE_FULL,  /* --per-pid: no (function, process) slot left */
	CMON_LOSS_VALUE_MEM,   /* the kernel could not allocate the function's counters */
	CMON_LOSS_URET_DEPTH,  /* its return, through a uretprobe, was nested past the
				* kernel's CMON_KERNEL_URET_DEPTH: not seen */
	CMON_LOSS_NCAUSES,
};

/* Key of the per-process hash (--per-pid). */
struct cmon_prof_key {
	__u32 func_id;
	__u32 pid;
};

#endif
