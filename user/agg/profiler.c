// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * profiler.c: the user side of profile.bpf.c: open and configure the
 * skeleton, attach with uprobe_multi links (probe_links), and sum the
 * per-CPU aggregates into struct func_profile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/grow.h"
#include "agg/budget.h"
#include "core/hmap.h"
#include "core/log.h"
#include "probe/bpf_setup.h"
#include "probe/calib.h"
#include "probe/duty.h"
#include "probe/attach.h"
#include "probe/follow.h"
#include "probe/links.h"
#include "profile.h"
#include "profiler.h"
#include "profile.skel.h"

#define DEFAULT_MAX_PIDS 1024
/* Past this much per-CPU memory for a preallocated array of every
 * function, values go to a hash, allocated for the functions called. */
#define SPARSE_ABOVE_BYTES (256ULL << 20)

struct profiler {
	struct profile_bpf *skel;
	const struct probe_set *set;
	struct profiler_opts opts;
	struct bpf_set bs;  /* what every BPF set has: links, follower, CPUs */
	struct ring_buffer *fork_rb; /* follow.bpf.h's wakeups */
	bool sparse;                    /* values in the hash, pid 0 */
	struct cmon_prof_value *percpu; /* ncpus values: one lookup's result */
	uint64_t *unslotted;            /* ncpus counters */
	struct func_profile out;        /* handed to the callback */
	/* Duty cycling: each row's counts scaled so far (see scale_row);
	 * per function, or per (function, pid) through ROW_OF. */
	struct budget_scale *scaled;
	size_t n_scaled, cap_scaled;
	struct hmap row_of;
};


/* Do all exits find the return-address slot the same way?  Then the exit
 * program need not read its cookie (values as in profile.bpf.c). */
static uint32_t exit_kinds(const struct probe_set *set)
{
	size_t uret = 0, insn = 0;

	for (size_t i = 0; i < set->n_funcs; i++) {
		if (set->funcs[i].ret_mode == RETURN_URETPROBE)
			uret++;
		else if (set->funcs[i].ret_mode == RETURN_INSN)
			insn++;
	}
	if (uret && !insn)
		return 1;
	if (insn && !uret)
		return 2;
	return 0;
}

/* Open the skeleton, set its rodata and map sizes from P's options, load
 * (bpf_set__load's callback).  0 or -errno (the skeleton stays in P for
 * profiler__free). */
static int open_and_load(void *ctx, bool mem_cast)
{
	struct profiler *p = ctx;
	const struct profiler_opts *opts = &p->opts;
	struct bpf_set *bs = &p->bs;
	uint32_t n_funcs = p->set->n_funcs ? (uint32_t)p->set->n_funcs : 1;
	struct bpf_targ targ;
	uint64_t entries;

	p->skel = profile_bpf__open();
	if (!p->skel)
		return -errno;
	bs->entry = p->skel->progs.cmon_prof_entry;
	bs->exit = p->skel->progs.cmon_prof_exit;
	bs->usdt = p->skel->progs.cmon_prof_usdt;
	bs->thread_exit = p->skel->progs.cmon_prof_texit;
	BPF_SET_SHARED(bs, p->skel);
	bpf_set__targ(bs, mem_cast, &targ);
	BPF_SET_RODATA(p->skel->rodata, &targ);
	p->skel->rodata->targ_per_pid = opts->per_pid;
	p->skel->rodata->targ_sparse = p->sparse;
	p->skel->rodata->targ_mem = opts->mem;
	p->skel->rodata->targ_hist_arg = opts->hist_arg >= 0 ? opts->hist_arg : -1;
	p->skel->rodata->targ_hist_bytes = opts->hist_bytes ? opts->hist_bytes : 8;
	p->skel->rodata->targ_hist_signed = opts->hist_signed;
	p->skel->rodata->targ_linear = opts->linear;
	p->skel->rodata->targ_lin_min = (__u64)opts->lin_min;
	p->skel->rodata->targ_lin_step = opts->linear ? (__u64)opts->lin_step : 1;
	p->skel->rodata->targ_exit_kinds = exit_kinds(p->set);
	p->skel->rodata->targ_focus = opts->focus;
	p->skel->rodata->targ_max_depth = opts->focus ? opts->max_depth : -1;
	p->skel->rodata->targ_gen = opts->gen;
	if (opts->gen) {
		int err = bpf_map__reuse_fd(p->skel->maps.prof_gate, opts->gate_fd);

		if (err)
			return err;
	}

	/* Only the map the mode uses is sized; the other keeps one slot. */
	entries = opts->per_pid ? (uint64_t)n_funcs * opts->max_pids : p->sparse ? n_funcs : 1;
	if (entries > (1u << 24))
		return -E2BIG; /* functions x processes: keep the hash sane */
	bpf_map__set_max_entries(p->skel->maps.prof_funcs,
				 opts->per_pid || p->sparse ? 1 : n_funcs);
	bpf_map__set_max_entries(p->skel->maps.prof_pids, (__u32)entries);
	bpf_map__set_max_entries(p->skel->maps.prof_unslotted, n_funcs);
	bpf_map__set_max_entries(p->skel->maps.usdt_specs, n_funcs);
	p->skel->rodata->targ_lat_bias = opts->calib && opts->calib->valid;
	bpf_map__set_max_entries(p->skel->maps.prof_lat_bias,
				 p->skel->rodata->targ_lat_bias ? n_funcs : 1);
	bpf_set__prepare(bs); /* --if only here: no --on-change program */
	return profile_bpf__load(p->skel);
}

static void destroy_skel(void *ctx)
{
	struct profiler *p = ctx;

	profile_bpf__destroy(p->skel);
	p->skel = NULL;
}

struct profiler *profiler__new(const struct probe_set *set, const struct profiler_opts *opts)
{
	struct bpf_set_opts bo = {
		.follow = opts->follow,
		.host_wide = opts->host_wide,
		.mem = opts->mem,
		.filter_pid = opts->filter_pid,
		.filter_cgroup = opts->filter_cgroup,
		.filter_cgroup_level = opts->filter_cgroup_level,
		.exprs = opts->exprs,
		.callee_costs = opts->calib,
		.duty = opts->duty,
	};
	struct profiler *p;
	int err;

	if (opts->hist_arg > CMON_HIST_RET || (opts->linear && opts->lin_step <= 0) ||
	    set->n_funcs > CMON_COOKIE_FUNC_MASK) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->set = set;
	p->opts = *opts;
	if (!p->opts.max_pids)
		p->opts.max_pids = DEFAULT_MAX_PIDS;
	bo.filter_comm = p->opts.filter_comm; /* P's copy: it outlives the set */
	err = bpf_set__init(&p->bs, set, &bo);
	if (err)
		goto fail;
	p->sparse = !opts->per_pid && (uint64_t)set->n_funcs * (uint64_t)p->bs.ncpus *
					     sizeof(struct cmon_prof_value) > SPARSE_ABOVE_BYTES;
	if (p->sparse)
		log_debug("profile: %zu functions x %d CPUs: values allocated on first call",
			  set->n_funcs, p->bs.ncpus);
	p->percpu = calloc((size_t)p->bs.ncpus, sizeof(*p->percpu));
	p->unslotted = calloc((size_t)p->bs.ncpus, sizeof(*p->unslotted));
	if (!p->percpu || !p->unslotted) {
		err = -ENOMEM;
		goto fail;
	}
	err = bpf_set__load(&p->bs, open_and_load, destroy_skel, p);
	if (err)
		goto fail_quiet;
	/* Each function's probe cost, inside its own latency and as its
	 * callers see it, before anything is attached. */
	for (__u32 k = 0; p->skel->rodata->targ_lat_bias && k < set->n_funcs; k++) {
		uint64_t b = probe_calib__bias(opts->calib, &set->funcs[k]);
		__u32 v = b > UINT32_MAX ? UINT32_MAX : (__u32)b;

		if (v && bpf_map_update_elem(bpf_map__fd(p->skel->maps.prof_lat_bias), &k, &v,
					     BPF_ANY)) {
			err = -errno;
			goto fail;
		}
	}
	err = bpf_set__load_call_costs(&p->bs);
	if (err)
		goto fail;
	/* --if: each function's program, before anything is attached. */
	err = bpf_set__load_exprs(&p->bs);
	if (!err)
		err = bpf_set__load_usdt_specs(&p->bs, p->skel->maps.usdt_specs);
	if (err)
		goto fail;
	return p;
fail:
	bpf_setup__failed(false, err);
fail_quiet:
	profiler__free(p);
	errno = -err;
	return NULL;
}

/* A followed process forked: nothing to do here but to have woken the wait. */
static int on_fork(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

int profiler__wake_fd(const struct profiler *p)
{
	return p->fork_rb ? ring_buffer__epoll_fd(p->fork_rb) : -1;
}

void profiler__woken(struct profiler *p)
{
	if (p->fork_rb)
		ring_buffer__consume(p->fork_rb);
	bpf_set__reattach(&p->bs); /* a failure was said: untraced in the new program */
}

int profiler__attach(struct profiler *p)
{
	int err = bpf_set__attach_lifecycle(&p->bs);

	if (!err && p->opts.follow) {
		p->fork_rb = ring_buffer__new(bpf_map__fd(p->skel->maps.follow_events), on_fork,
					      NULL, NULL);
		if (!p->fork_rb)
			log_info("forks will not wake cmon: children's library links wait for "
				 "the next tick");
	}
	if (!err)
		err = bpf_set__attach_probes(&p->bs);
	return err;
}

struct follow *profiler__follow(const struct profiler *p) { return p->bs.follow; }

size_t profiler__probe_count(const struct profiler *p) { return probe_links__probe_count(p->bs.links); }

unsigned long long profiler__attach_ns(const struct profiler *p)
{
	return probe_links__attach_ns(p->bs.links);
}

/* Sum p->percpu into p->out (func_id and pid set by the caller). */
static void sum_values(struct profiler *p)
{
	struct func_profile *o = &p->out;
	bool have_min = false;

	o->calls = o->returns = o->noreturn = o->lost = o->filtered = 0;
	o->lat_sum_ns = o->lat_min_ns = o->lat_max_ns = 0;
	o->rss_growth_sum = 0;
	o->arg_overflow = 0;
	memset(o->lat_hist, 0, sizeof(o->lat_hist));
	memset(o->arg_hist, 0, sizeof(o->arg_hist));
	/* Per-process and sparse values are one for all CPUs (profile.bpf.c). */
	for (int c = 0; c < (p->opts.per_pid || p->sparse ? 1 : p->bs.ncpus); c++) {
		const struct cmon_prof_value *v = &p->percpu[c];

		o->calls += v->calls;
		o->noreturn += v->noreturn;
		o->lost += v->lost;
		o->filtered += v->filtered;
		o->arg_overflow += v->arg_overflow;
		o->rss_growth_sum += v->rss_growth;
		if (v->returns) {
			o->returns += v->returns;
			o->lat_sum_ns += v->lat_sum_ns;
			if (!have_min || v->lat_min_ns < o->lat_min_ns)
				o->lat_min_ns = v->lat_min_ns;
			have_min = true;
			if (v->lat_max_ns > o->lat_max_ns)
				o->lat_max_ns = v->lat_max_ns;
			for (size_t b = 0; b < HIST_NBUCKETS; b++)
				o->lat_hist[b] += v->lat_hist[b];
		}
		if (p->opts.hist_arg >= 0)
			for (size_t b = 0; b < HIST_ARG_NBUCKETS; b++)
				o->arg_hist[b] += v->arg_hist[b];
	}
}

/* The estimate state of the row (FUNC_ID, PID), made at its first read;
 * NULL and errno. */
static struct budget_scale *scaled_of(struct profiler *p, uint32_t func_id, uint32_t pid)
{
	uint32_t key[2] = { func_id, pid };
	bool added;
	uint64_t *slot;

	if (!p->opts.per_pid && !p->sparse) {
		if (!p->scaled) {
			p->scaled = calloc(p->set->n_funcs ? p->set->n_funcs : 1, sizeof(*p->scaled));
			if (!p->scaled)
				return NULL;
			p->n_scaled = p->set->n_funcs;
		}
		return func_id < p->n_scaled ? &p->scaled[func_id] : NULL;
	}
	slot = hmap__get(&p->row_of, key, sizeof(key), &added);
	if (!slot)
		return NULL;
	if (added) {
		if (GROW(p->scaled, p->n_scaled, p->cap_scaled, 64)) {
			errno = ENOMEM;
			return NULL;
		}
		*slot = p->n_scaled++;
	}
	return &p->scaled[*slot];
}

/* A duty-cycled function's row: its counts scaled (agg/budget.h). */
static int scale_row(struct profiler *p, struct func_profile *o)
{
	struct duty_stats ds;
	struct budget_scale *sc;
	uint64_t seen[BUDGET_SCALE_N];

	o->seen_calls = o->calls;
	o->sampled = 1;
	if (!p->bs.duty)
		return 0;
	duty__stats(p->bs.duty, o->func_id, &ds);
	sc = scaled_of(p, o->func_id, o->pid);
	if (!sc)
		return -ENOMEM;
	o->sampled = ds.fraction;
	seen[0] = o->calls;
	seen[1] = o->filtered;
	budget_scale__update(sc, seen, ds.scale);
	o->calls = (uint64_t)(sc->est[0] + 0.5);
	o->filtered = (uint64_t)(sc->est[1] + 0.5);
	return 0;
}

struct duty *profiler__duty(struct profiler *p)
{
	return bpf_set__duty(&p->bs);
}

/* Entries of FUNC_ID no (function, pid) slot could hold, summed over CPUs. */
static int unslotted(struct profiler *p, uint32_t func_id, uint64_t *out)
{
	*out = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.prof_unslotted), &func_id, p->unslotted))
		return -errno;
	for (int c = 0; c < p->bs.ncpus; c++)
		*out += p->unslotted[c];
	return 0;
}

static int read_per_func(struct profiler *p, profiler_read_fn fn, void *ctx)
{
	int fd = bpf_map__fd(p->skel->maps.prof_funcs);

	for (uint32_t i = 0; i < p->set->n_funcs; i++) {
		int ret;

		if (bpf_map_lookup_elem(fd, &i, p->percpu))
			return -errno;
		sum_values(p);
		if (!p->out.calls && !p->out.filtered)
			continue;
		p->out.func_id = i;
		p->out.pid = 0;
		ret = scale_row(p, &p->out);
		if (!ret)
			ret = fn(ctx, &p->out);
		if (ret)
			return ret;
	}
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	const struct cmon_prof_key *x = a, *y = b;

	if (x->func_id != y->func_id)
		return x->func_id < y->func_id ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Per (function, process), in that order; then per function, a pid 0 row
 * for entries the full hash could not take (calls = lost = their count). */
static int read_per_pid(struct profiler *p, profiler_read_fn fn, void *ctx)
{
	int fd = bpf_map__fd(p->skel->maps.prof_pids);
	struct cmon_prof_key *keys = NULL, key, *prev = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	/* Keys first, sorted: a stable order, and no iteration over a hash
	 * the kernel is inserting into while we call back. */
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		if (GROW(keys, n, cap, 64)) {
			err = -ENOMEM;
			goto cleanup;
		}
		keys[n] = key;
		prev = &keys[n++];
	}
	if (n)
		qsort(keys, n, sizeof(*keys), cmp_key);
	for (size_t i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &keys[i], p->percpu))
			continue; /* cannot vanish: nothing deletes; be lenient */
		sum_values(p);
		if (!p->out.calls && !p->out.filtered)
			continue;
		p->out.func_id = keys[i].func_id;
		p->out.pid = keys[i].pid;
		err = scale_row(p, &p->out);
		if (!err)
			err = fn(ctx, &p->out);
		if (err)
			goto cleanup;
	}
	for (uint32_t f = 0; f < p->set->n_funcs; f++) {
		uint64_t lost;

		err = unslotted(p, f, &lost);
		if (err)
			goto cleanup;
		if (!lost)
			continue;
		memset(p->percpu, 0, (size_t)p->bs.ncpus * sizeof(*p->percpu));
		sum_values(p);
		p->out.func_id = f;
		p->out.pid = 0;
		p->out.calls = p->out.lost = lost;
		p->out.seen_calls = lost;
		p->out.sampled = 1; /* entries not counted: as they were */
		err = fn(ctx, &p->out);
		if (err)
			goto cleanup;
	}
cleanup:
	free(keys);
	return err;
}

int profiler__read(struct profiler *p, profiler_read_fn fn, void *ctx)
{
	/* Sparse values are hash elements with pid 0: the same walk. */
	return p->opts.per_pid || p->sparse ? read_per_pid(p, fn, ctx) : read_per_func(p, fn, ctx);
}

int profiler__losses(struct profiler *p, struct profiler_losses *out)
{
	uint64_t sum[CMON_LOSS_NCAUSES] = {};
	int fd = bpf_map__fd(p->skel->maps.prof_losses);

	for (uint32_t cause = 0; cause < CMON_LOSS_NCAUSES; cause++) {
		if (bpf_map_lookup_elem(fd, &cause, p->unslotted))
			return -errno;
		for (int c = 0; c < p->bs.ncpus; c++)
			sum[cause] += p->unslotted[c];
	}
	out->depth = sum[CMON_LOSS_DEPTH];
	out->task_mem = sum[CMON_LOSS_TASK_MEM];
	out->table_full = sum[CMON_LOSS_TABLE_FULL];
	out->value_mem = sum[CMON_LOSS_VALUE_MEM];
	out->uret_depth = sum[CMON_LOSS_URET_DEPTH];
	return 0;
}

/* Append ", N WHAT" to BUF at *OFF. */
static void describe_cause(char *buf, size_t len, size_t *off, uint64_t n, const char *what)
{
	int k;

	if (!n || *off >= len)
		return;
	k = snprintf(buf + *off, len - *off, "%s%llu %s", *off ? ", " : "", (unsigned long long)n,
		     what);
	if (k > 0)
		*off += (size_t)k < len - *off ? (size_t)k : len - *off - 1;
}

const char *profiler_losses__describe(const struct profiler_losses *l, uint32_t max_pids,
				      char *buf, size_t len)
{
	char depth[64], table[80];
	size_t off = 0;

	snprintf(depth, sizeof(depth), "with more than %d calls pending on their thread",
		 CMON_STACK_DEPTH);
	snprintf(table, sizeof(table), "beyond the per-process table (%u processes per function)",
		 max_pids);
	buf[0] = 0;
	describe_cause(buf, len, &off, l->depth, depth);
	describe_cause(buf, len, &off, l->task_mem,
		       "whose thread's stack of pending calls could not be allocated");
	describe_cause(buf, len, &off, l->table_full, table);
	describe_cause(buf, len, &off, l->value_mem,
		       "whose counters the kernel could not allocate (out of memory at that "
		       "instant)");
	snprintf(depth, sizeof(depth), "whose return was nested past the kernel's %d uretprobes",
		 CMON_KERNEL_URET_DEPTH);
	describe_cause(buf, len, &off, l->uret_depth, depth);
	return buf;
}

int profiler__prog_stats(const struct profiler *p, uint64_t *run_time_ns, uint64_t *run_cnt)
{
	return bpf_set__prog_stats(&p->bs, run_time_ns, run_cnt);
}

int profiler__host_prog_stats(const struct profiler *p, struct bpf_prog_run *runs)
{
	return bpf_set__host_prog_stats(&p->bs, runs);
}

int profiler__gate_new(void)
{
	/* As profile.bpf.c declares prof_gate: reuse_fd checks the shape. */
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "prof_gate", sizeof(__u32), sizeof(__u32), 1,
				NULL);

	return fd < 0 ? -errno : fd;
}

int profiler__gate_set(int gate_fd, uint32_t gen)
{
	__u32 k = 0;

	return bpf_map_update_elem(gate_fd, &k, &gen, BPF_ANY) ? -errno : 0;
}

void profiler__detach(struct profiler *p)
{
	if (p)
		bpf_set__detach(&p->bs);
}

void profiler__free(struct profiler *p)
{
	if (!p)
		return;
	bpf_set__free(&p->bs);
	free(p->scaled);
	hmap__release(&p->row_of);
	ring_buffer__free(p->fork_rb);
	profile_bpf__destroy(p->skel);
	free(p->unslotted);
	free(p->percpu);
	free(p);
}
