// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * watch.bpf.c: --watch.  A hardware watchpoint (perf event of type
 * PERF_TYPE_BREAKPOINT, one per thread, inherited by the threads and
 * processes it creates) runs this program after every write to a watched
 * address: the new value is read there, the old one is the value last seen
 * in this process, and one record goes to the ring buffer.
 *
 * The event says which address fired (its sample address is bp_addr), so
 * one program serves every watch and every inherited copy of an event.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cmon_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 targ_n_watches = 0;
const volatile __u64 targ_wakeup_bytes = 0; /* wake the consumer past this fill */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} watch_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CMON_MAX_WATCH);
	__type(key, __u32);
	__type(value, struct cmon_watch_spec);
} watch_specs SEC(".maps");

/* The value each process last wrote (seeded by user space at attach). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct cmon_watch_key);
	__type(value, __u64);
} watch_old SEC(".maps");

/* Writes seen, and writes whose record did not fit (reported). */
__u64 watch_hits = 0;
__u64 watch_lost = 0;

/* One record of a write to watch ID (SPEC) in the current process. */
static __always_inline void record(__u32 id, const struct cmon_watch_spec *spec, __u64 ip)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct cmon_watch_key key = { .pid = pid_tgid >> 32, .watch_id = id };
	struct cmon_watch_rec *rec;
	__u64 v = 0, *old;
	__u32 len;

	__sync_fetch_and_add(&watch_hits, 1);
	rec = bpf_ringbuf_reserve(&watch_events, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&watch_lost, 1);
		return;
	}
	rec->type = CMON_REC_WATCH;
	rec->watch_id = id;
	rec->ts_ns = bpf_ktime_get_ns();
	rec->ip = ip;
	rec->pid = key.pid;
	rec->tid = (__u32)pid_tgid;
	rec->flags = 0;
	rec->pad = 0;
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	len = spec->len;
	if (len > 8 || len == 0)
		len = 8;
	if (bpf_probe_read_user(&v, len, (void *)spec->addr)) {
		rec->flags |= CMON_WATCH_FAULT;
		v = 0;
	}
	rec->new_val = v;
	old = bpf_map_lookup_elem(&watch_old, &key);
	if (old) {
		rec->old_val = *old;
		*old = v;
	} else {
		rec->old_val = 0;
		rec->flags |= CMON_WATCH_OLD_UNKNOWN;
		bpf_map_update_elem(&watch_old, &key, &v, BPF_ANY);
	}
	/* The consumer polls on a timer: a wakeup per write would cost more
	 * than the record, unless the buffer is filling up. */
	bpf_ringbuf_submit(rec, bpf_ringbuf_query(&watch_events, BPF_RB_AVAIL_DATA) >
					targ_wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* Every watch at the address that fired (two watches of one address share
 * one debug register). */
SEC("perf_event")
int cmon_watch(struct bpf_perf_event_data *ctx)
{
	__u64 ip = PT_REGS_IP(&ctx->regs);

	for (__u32 i = 0; i < CMON_MAX_WATCH && i < targ_n_watches; i++) {
		__u32 k = i;
		struct cmon_watch_spec *spec = bpf_map_lookup_elem(&watch_specs, &k);

		if (spec && spec->addr == ctx->addr)
			record(i, spec, ip);
	}
	return 0;
}
