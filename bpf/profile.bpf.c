// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * profile.bpf.c: aggregate calls in the kernel; nothing per call leaves it.
 *
 * Entries push a small frame (time, RSS) on the per-thread shadow stack
 * (shadow_stack.bpf.h: pairing by return-address slot, so recursion and
 * abandoned calls are handled as in trace.bpf.c); exits pop it and fold the
 * call into a per-CPU value: counts, latency sum/min/max, a log-linear
 * latency histogram (hist_buckets.h), RSS growth, and optionally a
 * histogram of one argument.  Values live in a per-CPU array indexed by
 * function, or with --per-pid in a per-CPU hash keyed by (function, pid)
 * (with pid 0 when an array for every function would be big): no shared
 * cache line, no atomic on the hot path.
 *
 * Every setting is rodata, fixed before load, so the verifier drops the
 * branches a run does not use (filters, memory, histogram).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cmon_abi.h"
#include "profile.h"
#include "mem.bpf.h"
#include "shadow_stack.bpf.h"
#include "filter.bpf.h"
#include "args.bpf.h"
#include "expr.bpf.h"
#include "usdt.bpf.h"

/* libbpf 1.1 stops at the fifth argument register. */
#ifndef PT_REGS_PARM6
#define PT_REGS_PARM6(x) (__PT_REGS_CAST(x)->r9)
#endif

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool targ_per_pid = false;
/* Many functions on many CPUs: values in the hash (pid 0), allocated for
 * the functions actually called, instead of a preallocated array. */
const volatile bool targ_sparse = false;
const volatile bool targ_mem = true;
const volatile __s32 targ_hist_arg = -1; /* 0..5, CMON_HIST_RET, or -1: no argument histogram */
const volatile __u32 targ_hist_bytes = 8; /* the value's width (its C type) */
const volatile __u32 targ_hist_signed = 0;
const volatile bool targ_linear = false;
const volatile __u64 targ_lin_min = 0;   /* signed, as two's complement */
const volatile __u64 targ_lin_step = 1;
/* How exits see the return-address slot when every function of the set
 * returns the same way: the cookie need not be read on the hot path. */
enum { EXIT_KIND_COOKIE = 0, EXIT_KIND_ALL_URET = 1, EXIT_KIND_ALL_INSN = 2 };
const volatile __u32 targ_exit_kinds = EXIT_KIND_COOKIE;

/* Per function (max_entries = functions, set by user space). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_prof_value);
} prof_funcs SEC(".maps");

/* --per-pid: per (function, process); max_entries = functions x max_pids.
 * Sparse: per (function, 0); max_entries = functions.
 *
 * One value for all CPUs, updated with atomic operations (VADD, vmin,
 * vmax): an element is made at a (function, process)'s first call, in the
 * probe, where the kernel can only allocate without waiting.  A per-CPU
 * value (~10 KB on each CPU) came from the per-CPU allocator, whose
 * atomic requests are served from the few pages it keeps populated (a
 * worker adds more later): a burst of first calls ran through them and
 * lost 72 of 100 first calls, 3,623 of 4,000.  A plain value comes from
 * the slab: 4,000 first calls in a burst, none lost. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct cmon_prof_key);
	__type(value, struct cmon_prof_value);
} prof_pids SEC(".maps");

/* Values in prof_pids are shared by the CPUs; prof_funcs' are per CPU. */
#define SHARED_VALUES (targ_per_pid || targ_sparse)
#define VADD(field, n)                                                         \
	do {                                                                   \
		if (SHARED_VALUES)                                             \
			__sync_fetch_and_add(&(field), (n));                   \
		else                                                           \
			(field) += (n);                                        \
	} while (0)

/* *P = min(*P, X) (or max), atomically on a shared value: a few tries of
 * compare-and-swap, each failing only when another CPU moved *P. */
static __always_inline void vmin(__u64 *p, __u64 x)
{
	__u64 old = *p;

	for (int i = 0; i < 8 && x < old; i++) {
		__u64 seen = __sync_val_compare_and_swap(p, old, x);

		if (seen == old)
			break;
		old = seen;
	}
}

static __always_inline void vmax(__u64 *p, __u64 x)
{
	__u64 old = *p;

	for (int i = 0; i < 8 && x > old; i++) {
		__u64 seen = __sync_val_compare_and_swap(p, old, x);

		if (seen == old)
			break;
		old = seen;
	}
}

/* --per-pid: entries of a function that no (function, pid) slot could hold
 * (the hash is full).  Counted, never silent. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} prof_unslotted SEC(".maps");

/* The probes' own cost inside each function's latency (user/probe/calib.c),
 * taken out before anything is counted: the histogram then buckets the
 * function's own time at the resolution of its own size (a 5 us function
 * behind a 14 us single-step was bucketed at 19 us, 512 ns wide).
 * max_entries = functions; only read with targ_lat_bias. */
const volatile bool targ_lat_bias = false;
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} prof_lat_bias SEC(".maps");

/*
 * The agent's reloads: the new profiler is attached before the old one
 * goes, and both share this word (user space reuses the map); an entry
 * counts only in the generation it names, so the switch is one store, at
 * one instant: no call counted twice, none missed.  Returns are not gated:
 * each pairs with its own generation's frames.  targ_gen 0: not shared.
 */
const volatile __u32 targ_gen = 0;
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} prof_gate SEC(".maps");

static __always_inline bool gen_counting(void)
{
	__u32 k = 0, *gen;

	if (!targ_gen)
		return true;
	gen = bpf_map_lookup_elem(&prof_gate, &k);
	return gen && *gen == targ_gen;
}

/* Calls not recorded, by cause (enum cmon_prof_loss). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CMON_LOSS_NCAUSES);
	__type(key, __u32);
	__type(value, __u64);
} prof_losses SEC(".maps");

static __always_inline void count_loss(__u32 cause)
{
	__u64 *n = bpf_map_lookup_elem(&prof_losses, &cause);

	if (n)
		(*n)++;
}

/* A zeroed value: the source of a new hash element (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_prof_value);
} prof_zero SEC(".maps");

/* The value of FUNC_ID (in PID), created if CREATE; NULL with *CAUSE (a
 * cmon_prof_loss) when there is none. */
static __always_inline struct cmon_prof_value *value_of(__u32 func_id, __u32 pid, bool create,
							__u32 *cause)
{
	struct cmon_prof_key key = { .func_id = func_id, .pid = targ_per_pid ? pid : 0 };
	struct cmon_prof_value *v, *zero;
	__u32 k0 = 0;
	long err = 0;

	*cause = CMON_LOSS_VALUE_MEM;
	if (!targ_per_pid && !targ_sparse)
		return bpf_map_lookup_elem(&prof_funcs, &func_id);
	v = bpf_map_lookup_elem(&prof_pids, &key);
	if (v || !create)
		return v;
	zero = bpf_map_lookup_elem(&prof_zero, &k0);
	if (!zero)
		return NULL;
	zero->lat_min_ns = ~0ULL; /* vmin's start (read only with returns > 0) */
	v = map_lookup_or_make(&prof_pids, &key, &prof_zero, &err);
	if (!v && err == -7 /* E2BIG: max_entries reached */)
		*cause = CMON_LOSS_TABLE_FULL;
	return v;
}

static __always_inline void count_unslotted(__u32 func_id)
{
	__u64 *n = bpf_map_lookup_elem(&prof_unslotted, &func_id);

	if (n)
		(*n)++;
}

/* A frame the stack moved past: its call never returned. */
static void shadow_stack_on_dead(struct task_struct *task, struct cmon_frame *fr, __u32 depth)
{
	__u32 cause;
	struct cmon_prof_value *v;

	if (fr->flags & CMON_FRAME_QUIET)
		return; /* --focus only, or deeper than --max-depth: not counted */
	if (frame_stale(fr))
		return; /* duty cycling: it may well have returned while detached */
	v = value_of(fr->func_id, task->tgid, true, &cause);
	if (!v)
		return;
	if (fr->flags & CMON_FRAME_NO_URET) {
		/* it may well have returned: the kernel gave it no uretprobe */
		VADD(v->lost, 1);
		count_loss(CMON_LOSS_URET_DEPTH);
	} else if (fr->flags & CMON_FRAME_AT_EXIT) {
		/* a condition on the return cannot hold */
		expr_count(EXPR_FILTERED, &v->filtered, NULL, SHARED_VALUES);
	} else {
		VADD(v->noreturn, 1);
	}
}

static __always_inline bool wanted(struct task_struct *task)
{
	return task_wanted(task);
}

/* Bucket A, an argument IS_SIGNED, BYTES wide. */
static __always_inline void count_arg_as(struct cmon_prof_value *v, __u64 a, __u32 bytes,
					 __u32 is_signed)
{
	__u64 b;

	a = hist_arg_value(a, bytes, is_signed);
	/* log2 buckets hold values >= 0: a negative one is out of range */
	if (!targ_linear && is_signed && (__s64)a < 0)
		b = HIST_ARG_NBUCKETS;
	else if (targ_linear)
		b = hist_arg_linear_bucket(a, targ_lin_min, targ_lin_step);
	else
		b = hist_arg_log2_bucket(a);
	barrier_var(b); /* one register tested and indexed: see count_return */
	if (b < HIST_ARG_NBUCKETS)
		VADD(v->arg_hist[b], 1);
	else
		VADD(v->arg_overflow, 1);
}

/* A function's argument: at the width and sign --hist resolved. */
static __always_inline void count_arg_value(struct cmon_prof_value *v, __u64 a)
{
	count_arg_as(v, a, targ_hist_bytes, targ_hist_signed);
}

static __always_inline void count_arg(struct cmon_prof_value *v, struct pt_regs *ctx)
{
	__u64 a;

	/* barrier_var: keep one fixed-offset context load per case (the
	 * verifier refuses a load at a computed context offset). */
	switch (targ_hist_arg) {
	case 0: a = PT_REGS_PARM1(ctx); barrier_var(a); break;
	case 1: a = PT_REGS_PARM2(ctx); barrier_var(a); break;
	case 2: a = PT_REGS_PARM3(ctx); barrier_var(a); break;
	case 3: a = PT_REGS_PARM4(ctx); barrier_var(a); break;
	case 4: a = PT_REGS_PARM5(ctx); barrier_var(a); break;
	case 5: a = PT_REGS_PARM6(ctx); barrier_var(a); break;
	default: a = PT_REGS_RC(ctx); barrier_var(a); break; /* CMON_HIST_RET, at the return */
	}
	count_arg_value(v, a);
}

/* --if names ret or latency_ns for FUNC_ID: the call is counted at its
 * return, if at all. */
static __always_inline bool expr_at_exit(__u32 func_id)
{
	__u32 k = func_id * 2;
	const struct cmon_expr_prog *p = bpf_map_lookup_elem(&expr_progs, &k);

	return p && p->n && (p->flags & CMON_EXPR_AT_EXIT);
}

/* A call --if left out: counted as such (not in calls). */
static __always_inline void count_filtered(struct task_struct *task, __u32 func_id)
{
	__u32 cause;
	struct cmon_prof_value *v = value_of(func_id, task->tgid, true, &cause);

	if (v)
		expr_count(EXPR_FILTERED, &v->filtered, NULL, SHARED_VALUES);
	else
		count_loss(cause);
}

/* An entry of FUNC_ID in a process that counts: its counters, the call
 * counted; NULL when it does not count, or with the loss counted. */
static __always_inline struct cmon_prof_value *count_call(struct task_struct *task,
							  __u32 func_id)
{
	struct cmon_prof_value *v;
	__u32 cause;

	if (!wanted(task))
		return NULL;
	v = value_of(func_id, task->tgid, true, &cause);
	if (!v) {
		count_unslotted(func_id);
		count_loss(cause);
		return NULL;
	}
	VADD(v->calls, 1);
	return v;
}

/* A USDT site fired: counted (no return, no latency), and with --hist its
 * argument bucketed, read as the site's note says (usdt.bpf.h). */
SEC("uprobe")
int BPF_KPROBE(cmon_prof_usdt)
{
	__u32 func_id = bpf_get_attach_cookie(ctx) & CMON_COOKIE_FUNC_MASK;
	struct cmon_prof_value *v;
	struct cmon_usdt_spec *spec;
	__u32 k = (__u32)targ_hist_arg;

	if (!gen_counting())
		return 0;
	v = count_call(bpf_get_current_task_btf(), func_id);
	if (!v || targ_hist_arg < 0 || targ_hist_arg >= CMON_MAX_ARGS)
		return 0;
	spec = bpf_map_lookup_elem(&usdt_specs, &func_id);
	/* at its own note's width and sign (usdt_arg widens it to 64 bits),
	 * whatever functions of the set say */
	if (spec && k < spec->n_args && k < CMON_MAX_ARGS)
		count_arg_as(v, usdt_arg(ctx, &spec->args[k]), 8, spec->args[k].is_signed);
	else
		VADD(v->arg_overflow, 1); /* a site with fewer arguments */
	return 0;
}

const volatile bool targ_focus = false;   /* --focus: count inside focus functions only */
const volatile __s32 targ_max_depth = -1; /* --max-depth below the focus; -1: any */

SEC("uprobe")
int BPF_KPROBE(cmon_prof_entry)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 func_id = cookie & CMON_COOKIE_FUNC_MASK;
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 slot = PT_REGS_SP(ctx);
	struct cmon_prof_value *v;
	struct cmon_shadow_stack *ss = NULL;
	struct cmon_frame *fr;
	bool go = cookie & CMON_COOKIE_GO;
	__u64 args[CMON_MAX_ARGS] = {};
	bool deferred = false;
	__u32 fflags = 0;

	duty_count(func_id);
	if (!gen_counting() || reentered(task, cookie, func_id, slot))
		return 0;
	if (go && !(cookie & CMON_COOKIE_NEVER_RETURNS)) {
		/* Per goroutine (shadow_stack.bpf.h); a function restarted
		 * after its stack grew is no new call: looked at first. */
		slot = go_slot(ctx, slot);
		if (!slot || !wanted(task))
			return 0;
		ss = keyed_stack_get((__u32)task->tgid, go_g(ctx), true);
		if (ss && go_entry_restarts(task, ss, slot, func_id))
			return 0;
	}
	if (targ_focus) {
		/* Inside a focus function (any depth, recursion counted), or
		 * entering one; else nothing is counted (as in trace). */
		if (!wanted(task))
			return 0;
		if (!ss)
			ss = shadow_stack_get(task, slot, true);
		if (!ss) {
			count_loss(CMON_LOSS_TASK_MEM);
			return 0;
		}
		shadow_stack_unwind(task, ss, slot, go || !shadow_stack_is_tail_call(task, ss, slot));
		if (!focus_enter(ss, cookie, targ_max_depth, &fflags))
			return 0;
	}
	if (targ_expr && !(fflags & CMON_FRAME_QUIET)) {
		if (!wanted(task))
			return 0;
		read_args(ctx, go, args);
		deferred = expr_at_exit(func_id);
		if (deferred && (cookie & CMON_COOKIE_NEVER_RETURNS)) {
			count_filtered(task, func_id); /* no return: the condition cannot hold */
			return 0;
		}
		if (!deferred && expr_decide(func_id, task->tgid, args, 0, 0, false, false)) {
			count_filtered(task, func_id);
			return 0;
		}
	}
	if (deferred || (fflags & CMON_FRAME_QUIET)) {
		v = NULL; /* counted at the return, if --if holds; or not at all */
		if (!wanted(task) || (cookie & CMON_COOKIE_NEVER_RETURNS))
			return 0;
	} else {
		v = count_call(task, func_id);
		if (!v)
			return 0;
		if (targ_hist_arg >= 0 && targ_hist_arg != CMON_HIST_RET)
			count_arg(v, ctx);
		if (cookie & CMON_COOKIE_NEVER_RETURNS) {
			VADD(v->noreturn, 1); /* no return will come to time it */
			return 0;
		}
	}

	if (!go)
		ss = shadow_stack_get(task, slot, true);
	if (!ss) {
		if (v)
			VADD(v->lost, 1);
		count_loss(CMON_LOSS_TASK_MEM);
		return 0;
	}
	/* A tail call keeps its caller's frame: both return together (as in
	 * trace; the caller was counted as never returning).  --focus did it
	 * already. */
	if (!targ_focus)
		shadow_stack_unwind(task, ss, slot,
				    go || !shadow_stack_is_tail_call(task, ss, slot));
	fr = shadow_stack_reserve(ss);
	if (!fr) {
		if (v)
			VADD(v->lost, 1);
		count_loss(CMON_LOSS_DEPTH);
		return 0;
	}
	fr->slot = slot;
	fr->func_id = func_id;
	fr->flags = (deferred ? CMON_FRAME_AT_EXIT : 0) | fflags;
	frame_init(fr, cookie);
	focus_push(ss, fflags);
	if (deferred)
		__builtin_memcpy(fr->args, args, sizeof(fr->args));
	if (targ_mem) {
		struct mm_struct *mm = task->mm;

		fr->rss = mm ? mm_rss_bytes(mm) : 0;
	}
	/* Time last, so the memory read is not counted as the call's. */
	fr->ts = bpf_ktime_get_ns();
	shadow_stack_commit(ss);
	return 0;
}

/* FR returned at TS (exit of KIND, registers CTX): count it. */
static __always_inline void count_return(struct task_struct *task, struct cmon_frame *fr,
					 __u64 ts, __u32 kind, struct pt_regs *ctx)
{
	struct cmon_prof_value *v;
	__u64 b;
	__u32 cause;
	__u64 lat;

	if (frame_stale(fr))
		return; /* duty cycling: counted at entry, its return not timed */
	lat = frame_latency_net(fr, ts); /* child_ns is 0 without targ_child_cost */
	if (targ_lat_bias) {
		__u32 *bias = bpf_map_lookup_elem(&prof_lat_bias, &fr->func_id);

		if (bias)
			lat = lat > *bias ? lat - *bias : 0;
	}
	if (fr->flags & CMON_FRAME_AT_EXIT) {
		/* --if on the return: counted now, or filtered. */
		__u64 ret = kind != CMON_EXIT_TAIL_JMP ? PT_REGS_RC(ctx) : 0;

		if (expr_decide(fr->func_id, task->tgid, fr->args, ret, lat, true, true)) {
			count_filtered(task, fr->func_id);
			return;
		}
		v = value_of(fr->func_id, task->tgid, true, &cause);
		if (!v) {
			count_unslotted(fr->func_id);
			count_loss(cause);
			return;
		}
		VADD(v->calls, 1);
		if (targ_hist_arg >= 0 && targ_hist_arg < CMON_MAX_ARGS)
			count_arg_value(v, fr->args[targ_hist_arg & 7]);
	} else {
		v = value_of(fr->func_id, task->tgid, false, &cause);
		if (!v)
			return;
	}
	if (SHARED_VALUES) {
		vmin(&v->lat_min_ns, lat);
		vmax(&v->lat_max_ns, lat);
	} else {
		if (!v->returns || lat < v->lat_min_ns)
			v->lat_min_ns = lat;
		if (lat > v->lat_max_ns)
			v->lat_max_ns = lat;
	}
	VADD(v->returns, 1);
	VADD(v->lat_sum_ns, lat);
	if (targ_hist_arg == CMON_HIST_RET && kind != CMON_EXIT_TAIL_JMP)
		count_arg(v, ctx);
	/* One 64-bit register tested and used as the index: with the 32-bit
	 * value, clang 14 zero-extends one copy for the test and another for
	 * the index, and 6.1's verifier does not carry the bound across. */
	b = hist_lat_bucket(lat);
	barrier_var(b);
	if (b < HIST_NBUCKETS)
		VADD(v->lat_hist[b], 1);
	if (targ_mem) {
		struct mm_struct *mm = task->mm;

		if (mm)
			VADD(v->rss_growth, (__s64)(mm_rss_bytes(mm) - fr->rss));
	}
}

/* Callers that tail-called into a returning frame return with it. */
struct prof_tail_ctx {
	struct task_struct *task;
	struct cmon_shadow_stack *ss;
	struct pt_regs *regs;
	__u64 slot, ts;
	__u32 kind;
};

static long prof_tail_step(__u64 i, void *data)
{
	struct prof_tail_ctx *c = data;
	struct cmon_frame *fr = shadow_stack_top(c->ss, c->slot);

	if (!fr || !(fr->flags & CMON_FRAME_TAIL_CALLED))
		return 1;
	count_return(c->task, fr, c->ts, c->kind, c->regs);
	shadow_stack_pop(c->ss);
	frame_pass_cost(c->ss, fr);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(cmon_prof_exit)
{
	__u64 ts = bpf_ktime_get_ns();
	struct task_struct *task = bpf_get_current_task_btf();
	struct cmon_shadow_stack *ss;
	struct cmon_frame *fr;
	__u64 slot, cookie = bpf_get_attach_cookie(ctx);
	__u32 kind;
	bool go = cookie & CMON_COOKIE_GO;

	if (targ_exit_kinds == EXIT_KIND_ALL_URET)
		kind = CMON_EXIT_URETPROBE;
	else /* a ret and a tail jump are both at sp, but a tail has no value */
		kind = (cookie >> CMON_COOKIE_KIND_SHIFT) & CMON_COOKIE_KIND_MASK;
	if (!exit_taken(ctx, cookie))
		return 0; /* a conditional jump that stays in the function */
	slot = exit_slot(PT_REGS_SP(ctx), kind);
	if (go) {
		slot = go_slot(ctx, slot);
		ss = slot ? keyed_stack_get((__u32)task->tgid, go_g(ctx), false) : NULL;
	} else {
		ss = shadow_stack_get(task, slot, false);
	}
	if (!ss)
		return 0; /* a call that began before we attached */
	shadow_stack_unwind(task, ss, slot, false);
	fr = shadow_stack_top(ss, slot);
	if (!fr)
		return 0;
	if (!(fr->flags & CMON_FRAME_QUIET))
		count_return(task, fr, ts, kind, ctx);
	shadow_stack_pop(ss);
	frame_pass_cost(ss, fr);
	fr = shadow_stack_top(ss, slot);
	if (fr && (fr->flags & CMON_FRAME_TAIL_CALLED)) {
		struct prof_tail_ctx c = { .task = task, .ss = ss, .regs = ctx, .slot = slot,
					   .ts = ts, .kind = kind };

		bpf_loop(CMON_STACK_DEPTH, prof_tail_step, &c, 0);
	}
	stack_put_after_return(task, ctx, ss, slot, go);
	return 0;
}

/* A thread is going away: whatever it still had pending never returned. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(cmon_prof_texit, struct task_struct *task)
{
	thread_gone(task);
	return 0;
}
