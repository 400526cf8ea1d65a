// The bare uprobe floor: programs that do nothing, so a run measures only
// the kernel's cost of hitting the probe.
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

char LICENSE[] SEC("license") = "GPL";
