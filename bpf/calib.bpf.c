// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * calib.bpf.c: the probe's own share of every measured latency.
 *
 * trace and profile take a call's entry time at the end of the entry
 * program, before the kernel single-steps or emulates the displaced
 * instruction and returns to user space, and its exit time at the start of
 * the exit program, after the return trap: so every latency carries the
 * probe's own cost.  cmon times empty calibration functions (one per site
 * class and return mechanism, in its own binary, user/probe/calib.c) under
 * these two programs, which take their times exactly where trace and
 * profile do, and subtracts the median.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "calib_slots.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Single-threaded by construction: only cmon's own calibrating thread
 * calls the calibration functions, and the links are scoped to its pid. */
__u64 entry_ts[CMON_CALIB_SLOTS];
__u32 n_samples[CMON_CALIB_SLOTS];
__u64 samples[CMON_CALIB_SLOTS][CMON_CALIB_SAMPLES];

SEC("uprobe")
int BPF_KPROBE(cmon_calib_entry)
{
	__u32 slot = (__u32)bpf_get_attach_cookie(ctx);

	if (slot >= CMON_CALIB_SLOTS)
		return 0;
	entry_ts[slot] = bpf_ktime_get_ns(); /* last, as trace and profile */
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(cmon_calib_exit)
{
	__u64 ts = bpf_ktime_get_ns(); /* first, as trace and profile */
	__u32 slot = (__u32)bpf_get_attach_cookie(ctx), n;

	if (slot >= CMON_CALIB_SLOTS || !entry_ts[slot])
		return 0;
	n = n_samples[slot];
	if (n < CMON_CALIB_SAMPLES) {
		samples[slot][n] = ts - entry_ts[slot];
		n_samples[slot] = n + 1;
	}
	entry_ts[slot] = 0;
	return 0;
}
