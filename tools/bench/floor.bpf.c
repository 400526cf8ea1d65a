// The bare uprobe floor: programs that do nothing, so a run measures only
// the kernel's cost of hitting the probe.  The clock pair does the one
// thing every latency profile must: read the clock at the entry and at the
// return, so a run shows what the host's clock adds to the floor.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("uprobe")
int BPF_KPROBE(floor_entry)
{
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(floor_return)
{
	return 0;
}

/* Slot 0: the last entry's time on this CPU; slot 1: the sum of latencies
 * (kept so the reads are not dead code).  Not a correct profile across
 * migrations or nesting: a measure of the clock's cost only. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} clock_slots SEC(".maps");

SEC("uprobe")
int BPF_KPROBE(floor_clock_entry)
{
	__u32 k = 0;
	__u64 *t = bpf_map_lookup_elem(&clock_slots, &k);

	if (t)
		*t = bpf_ktime_get_ns();
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(floor_clock_return)
{
	__u64 now = bpf_ktime_get_ns(), *t, *sum;
	__u32 k0 = 0, k1 = 1;

	t = bpf_map_lookup_elem(&clock_slots, &k0);
	sum = bpf_map_lookup_elem(&clock_slots, &k1);
	if (t && sum)
		*sum += now - *t;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
