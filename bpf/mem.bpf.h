/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mem.bpf.h: a process's RSS and VMS, read in the kernel, exactly.
 *
 * Since Linux 6.2 mm->rss_stat[] are percpu_counters: .count lags the truth
 * by up to a batch per CPU, so the exact value is .count plus every CPU's
 * pending delta in *counters.  Kernel data symbols (__per_cpu_offset) are not
 * in kallsyms here, so each CPU's per-CPU offset is learned from a per-CPU
 * array map: the address of CPU n's value minus the map's __percpu pointer.
 * All NR_MM_COUNTERS counters of an mm share one per-CPU allocation
 * (percpu_counter_init_many), so one read per CPU fetches all of them.
 */
#ifndef CMON_MEM_BPF_H
#define CMON_MEM_BPF_H

#include "cmon_abi.h"

#define CMON_NR_MM_COUNTERS 4

const volatile __u32 targ_nr_cpus = 1;   /* possible CPUs, set by user space */
/* Read per-CPU RSS deltas with direct loads through bpf_rdonly_cast instead
 * of bpf_probe_read_kernel (half the cost); user space turns it off where
 * the kernel has no such kfunc (Linux < 6.2, probe/host.h), and reloads
 * without when this kernel's verifier refuses the cast. */
const volatile bool targ_mem_cast = true;

/* A read-only, fault-safe view of a kernel address (btf_id 0: plain memory). */
extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id) __ksym __weak;
const volatile __u64 targ_page_size = 4096;

/* One-slot per-CPU array whose value addresses reveal per-CPU offsets. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_offset_probe SEC(".maps");

/* __per_cpu_offset[cpu], learned once. */
static __u64 cpu_offset[CMON_MAX_CPUS];
static bool cpu_offset_ready;
static bool cpu_offset_failed;

/* The map's kernel address as a plain number: the verifier forbids
 * arithmetic on a map pointer, but a privileged program may store it. */
static volatile __u64 ptr_scratch;

static __always_inline __u64 ptr_to_u64(void *p)
{
	ptr_scratch = (__u64)p;
	return ptr_scratch;
}

static __always_inline bool learn_cpu_offsets(void)
{
	__u32 zero = 0;
	__u64 base = 0, addr;

	if (cpu_offset_ready)
		return true;
	if (cpu_offset_failed)
		return false;
	addr = ptr_to_u64(&cpu_offset_probe) + bpf_core_field_offset(struct bpf_array, pptrs);
	if (bpf_probe_read_kernel(&base, sizeof(base), (void *)addr) || !base)
		goto fail;
	for (__u32 cpu = 0; cpu < CMON_MAX_CPUS && cpu < targ_nr_cpus; cpu++) {
		void *val = bpf_map_lookup_percpu_elem(&cpu_offset_probe, &zero, cpu);

		if (!val)
			goto fail;
		cpu_offset[cpu] = ptr_to_u64(val) - base;
	}
	cpu_offset_ready = true;
	return true;
fail:
	cpu_offset_failed = true;
	return false;
}

/* Before Linux 6.2 the counters were atomics in mm->rss_stat (the
 * threads' unsynced deltas are not in VmRSS either). */
struct mm_rss_stat___atomic {
	atomic_long_t count[CMON_NR_MM_COUNTERS];
} __attribute__((preserve_access_index));

struct mm_struct___atomic {
	struct mm_rss_stat___atomic rss_stat;
} __attribute__((preserve_access_index));

/* RSS in bytes: file + anon + shmem pages, as VmRSS in /proc/PID/status.
 * MM is a BTF pointer (task->mm): its fields are read with direct loads;
 * only the per-CPU deltas need a helper. */
static __always_inline __u64 mm_rss_bytes(struct mm_struct *mm)
{
	if (bpf_core_type_exists(struct mm_rss_stat___atomic)) {
		struct mm_struct___atomic *old = (void *)mm;
		__s64 c[CMON_NR_MM_COUNTERS] = {};
		__s64 f, a, s;

		/* one helper read: 6.1's verifier cannot walk into the
		 * atomic_long_t typedef with a direct load */
		bpf_core_read(c, sizeof(c), &old->rss_stat);
		f = c[MM_FILEPAGES];
		a = c[MM_ANONPAGES];
		s = c[MM_SHMEMPAGES];

		return (__u64)((f > 0 ? f : 0) + (a > 0 ? a : 0) + (s > 0 ? s : 0)) *
		       targ_page_size;
	}
	__s64 file = mm->rss_stat[MM_FILEPAGES].count;
	__s64 anon = mm->rss_stat[MM_ANONPAGES].count;
	__s64 shmem = mm->rss_stat[MM_SHMEMPAGES].count;
	__u64 base = (__u64)mm->rss_stat[0].counters;

	/* Sum the per-CPU deltas only when the layout is the one we know:
	 * the counters side by side in one allocation.  Otherwise .count. */
	if (learn_cpu_offsets() &&
	    (__u64)mm->rss_stat[MM_ANONPAGES].counters == base + 4 * MM_ANONPAGES &&
	    (__u64)mm->rss_stat[MM_SHMEMPAGES].counters == base + 4 * MM_SHMEMPAGES) {
		for (__u32 cpu = 0; cpu < CMON_MAX_CPUS && cpu < targ_nr_cpus; cpu++) {
			__s32 copy[CMON_NR_MM_COUNTERS];
			__s32 *delta;

			if (targ_mem_cast) {
				delta = bpf_rdonly_cast((void *)(base + cpu_offset[cpu]), 0);
			} else {
				if (bpf_probe_read_kernel(copy, sizeof(copy),
							  (void *)(base + cpu_offset[cpu])))
					break;
				delta = copy;
			}
			file += delta[MM_FILEPAGES];
			anon += delta[MM_ANONPAGES];
			shmem += delta[MM_SHMEMPAGES];
		}
	}
	if (file < 0)
		file = 0;
	if (anon < 0)
		anon = 0;
	if (shmem < 0)
		shmem = 0;
	return (__u64)(file + anon + shmem) * targ_page_size;
}

static __always_inline __u64 mm_vms_bytes(struct mm_struct *mm)
{
	return mm->total_vm * targ_page_size;
}

#endif
