// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * trace.bpf.c: one record per traced call.
 *
 * Entry probes push a frame (arguments, time, memory) on a per-thread shadow
 * stack; exit probes pop it and write one record to the ring buffer.  Frames
 * are matched by the address of the return-address slot, not by thread
 * alone, so recursion and nesting pair correctly, and a frame whose return
 * never came (longjmp, exception, thread or process exit) is noticed the
 * moment the stack has moved past it, and written as such.
 *
 * The consumer is never woken per record: it polls on a timer, and a record
 * only forces a wakeup when the ring buffer is filling up.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cmon_abi.h"
#include "mem.bpf.h"
#include "shadow_stack.bpf.h"
#include "exe_filter.bpf.h"

/* libbpf 1.1 stops at the fifth argument register. */
#ifndef PT_REGS_PARM6
#define PT_REGS_PARM6(x) (__PT_REGS_CAST(x)->r9)
#endif

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool targ_entry_only = false; /* --no-return */
const volatile bool targ_focus = false;      /* --focus: record inside focus functions only */
const volatile bool targ_stack = false;      /* --stack: each call's user stack */
const volatile __s32 targ_max_depth = -1;    /* --max-depth below the focus; -1: any */
const volatile __u64 targ_wakeup_bytes = 0;  /* force a wakeup past this fill */
#define CMON_WAKEUP_CHECK_EVERY 64 /* records per CPU; a power of two */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by user space before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* one per function, set by user space */
	__type(key, __u32);
	__type(value, struct cmon_func_stats);
} func_stats SEC(".maps");

#include "fetch.bpf.h"
#include "filter.bpf.h"

static __always_inline struct cmon_func_stats *stats_of(__u32 func_id)
{
	return bpf_map_lookup_elem(&func_stats, &func_id);
}

/* Records written on each CPU: the fill is checked every
 * CMON_WAKEUP_CHECK_EVERY of them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rb_written SEC(".maps");

/*
 * Submit without waking the consumer (it polls on a timer), unless the
 * buffer is filling up.  Reading the fill (bpf_ringbuf_query) costs more
 * than the rest of the record here (~250 ns: the positions' cache lines
 * live on the consumer's CPU), so it is read once every
 * CMON_WAKEUP_CHECK_EVERY records per CPU: the threshold leaves thousands
 * of records of room.
 */
static __always_inline void submit(struct cmon_call_rec *rec)
{
	__u64 flags = BPF_RB_NO_WAKEUP, *n;
	__u32 zero = 0;

	if (targ_wakeup_bytes && (n = bpf_map_lookup_elem(&rb_written, &zero)) &&
	    (++*n & (CMON_WAKEUP_CHECK_EVERY - 1)) == 0 &&
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > targ_wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
}

static __always_inline void fill_identity(struct cmon_call_rec *rec, struct task_struct *task)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	rec->type = CMON_REC_CALL;
	rec->pid = pid_tgid >> 32;
	rec->tid = (__u32)pid_tgid;
	/* Direct loads through the task's BTF pointers: cheaper than a
	 * string-read helper, and comm is always NUL-terminated. */
	__builtin_memcpy(rec->comm, task->group_leader->comm, CMON_COMM_LEN);
}

/* Write FR as a record; EXIT_REGS is NULL for a frame that never returned. */
static __always_inline void emit_frame(struct task_struct *task, struct cmon_frame *fr,
				       __u32 depth, __u32 flags, __u64 ret,
				       __u64 ts_exit, __u64 rss_exit, __u64 vms_exit)
{
	struct cmon_call_rec *rec;
	struct cmon_func_stats *st;

	if (fr->flags & CMON_FRAME_QUIET)
		return; /* probed for --focus only, or deeper than --max-depth */
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		st = stats_of(fr->func_id);
		if (st)
			st->lost_ringbuf++;
		return;
	}
	fill_identity(rec, task);
	rec->flags = flags;
	rec->func_id = fr->func_id;
	rec->depth = depth;
	rec->ts_entry_ns = fr->ts;
	rec->ts_exit_ns = ts_exit;
	__builtin_memcpy(rec->args, fr->args, sizeof(rec->args));
	rec->ret = ret;
	rec->rss_entry = fr->rss;
	rec->vms_entry = fr->vms;
	rec->rss_exit = rss_exit;
	rec->vms_exit = vms_exit;
	submit(rec);
}

/* A frame the stack moved past: its call never returned. */
static void shadow_stack_on_dead(struct task_struct *task, struct cmon_frame *fr, __u32 depth)
{
	emit_frame(task, fr, depth, CMON_CALL_NORETURN, 0, 0, 0, 0);
}

/* Callers that tail-called into a returning frame return with it. */
struct tail_ctx {
	struct task_struct *task;
	struct cmon_shadow_stack *ss;
	__u64 slot, ret, ts, rss, vms;
	__u32 flags;
};

static long tail_step(__u64 i, void *data)
{
	struct tail_ctx *c = data;
	struct cmon_frame *fr = shadow_stack_top(c->ss, c->slot);

	if (!fr || !(fr->flags & CMON_FRAME_TAIL_CALLED))
		return 1;
	emit_frame(c->task, fr, c->ss->depth - 1, c->flags, c->ret, c->ts, c->rss, c->vms);
	shadow_stack_pop(c->ss);
	return 0;
}

/* USDT sites: their argument specs, by func_id (sized by user space). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_usdt_spec);
} usdt_specs SEC(".maps");

static __always_inline __u64 usdt_arg(struct pt_regs *ctx, const struct cmon_usdt_arg *a)
{
	__u64 v = 0, reg = 0;
	__u32 shift;

	if (a->kind == CMON_USDT_CONST)
		return (__u64)a->value;
	if (a->reg_off > sizeof(struct pt_regs) - 8)
		return 0;
	bpf_probe_read_kernel(&reg, sizeof(reg), (void *)ctx + (a->reg_off & 0xff8));
	if (a->kind == CMON_USDT_MEM) {
		__u32 n = a->size;

		if (n > 8)
			n = 8;
		if (n == 0)
			n = 1;
		if (bpf_probe_read_user(&v, n, (void *)(reg + a->value)))
			v = 0;
	} else {
		v = reg;
	}
	/* The argument's own width and sign: -1 in a 4-byte int is -1. */
	shift = a->size >= 1 && a->size < 8 ? 64 - 8 * a->size : 0;
	if (shift)
		v = a->is_signed ? (__u64)((__s64)(v << shift) >> shift) : (v << shift) >> shift;
	return v;
}

/* A record written at entry (--no-return, never-returns, USDT): reserved
 * and filled but for its args, which the caller sets before submit().
 * NULL when the buffer is full (counted).  TS 0: now. */
static __always_inline struct cmon_call_rec *entry_record(struct task_struct *task,
							  __u32 func_id,
							  struct cmon_func_stats *st,
							  __u32 flags, __u64 ts)
{
	struct mm_struct *mm = task->mm;
	struct cmon_call_rec *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);

	if (!rec) {
		if (st)
			st->lost_ringbuf++;
		return NULL;
	}
	fill_identity(rec, task);
	rec->flags = flags;
	rec->func_id = func_id;
	rec->depth = 0;
	rec->ts_entry_ns = ts ? ts : bpf_ktime_get_ns();
	rec->ts_exit_ns = 0;
	rec->ret = 0;
	rec->rss_entry = mm ? mm_rss_bytes(mm) : 0;
	rec->vms_entry = mm ? mm_vms_bytes(mm) : 0;
	rec->rss_exit = 0;
	rec->vms_exit = 0;
	return rec;
}

/* The thread's shadow stack for an entry at SLOT, frames the stack moved
 * past let go (a tail call keeps its caller's frame: both return
 * together).  NULL when it cannot be had (counted). */
static __always_inline struct cmon_shadow_stack *entry_stack(struct task_struct *task, __u64 slot,
							     struct cmon_func_stats *st)
{
	struct cmon_shadow_stack *ss;

	ss = bpf_task_storage_get(&stacks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ss) {
		if (st)
			st->lost_nomem++;
		return NULL;
	}
	shadow_stack_unwind(task, ss, slot, !shadow_stack_is_tail_call(task, ss, slot));
	return ss;
}

/* --stack: the user stack at this entry, tagged (tid, TS) for its record. */
static __always_inline void emit_stack(struct pt_regs *ctx, __u64 slot, __u64 ts,
				       struct cmon_func_stats *st)
{
	struct cmon_stack_rec *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	long n;

	if (!rec) {
		if (st)
			st->lost_capture++;
		return;
	}
	rec->type = CMON_REC_STACK;
	rec->tid = (__u32)bpf_get_current_pid_tgid();
	rec->pid = bpf_get_current_pid_tgid() >> 32;
	rec->ts_entry_ns = ts;
	rec->ips[0] = PT_REGS_IP(ctx);
	/* The frame-pointer chain from [1]: its first entry (the ip again) is
	 * replaced by the return address the walk would miss. */
	n = bpf_get_stack(ctx, &rec->ips[1], (CMON_STACK_MAX - 1) * sizeof(__u64),
			  BPF_F_USER_STACK);
	n = n > 0 ? n / 8 : 1;
	if (bpf_probe_read_user(&rec->ips[1], sizeof(__u64), (void *)slot))
		rec->ips[1] = 0;
	rec->n = (__u32)(n + 1 > CMON_STACK_MAX ? CMON_STACK_MAX : n + 1);
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

/* A USDT site fired: one entry-only record, its arguments as the note says. */
SEC("uprobe")
int BPF_KPROBE(cmon_usdt)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 func_id = bpf_get_attach_cookie(ctx) & CMON_COOKIE_FUNC_MASK;
	struct cmon_func_stats *st = stats_of(func_id);
	struct cmon_usdt_spec *spec = bpf_map_lookup_elem(&usdt_specs, &func_id);
	struct cmon_call_rec *rec;

	if (!spec || !task_wanted(task))
		return 0;
	if (st)
		st->calls++;
	rec = entry_record(task, func_id, st, CMON_CALL_ENTRY_ONLY |
			   (spec->kind == CMON_SITE_LINE ? CMON_CALL_LINE : CMON_CALL_USDT), 0);
	if (!rec)
		return 0;
	for (int i = 0; i < CMON_MAX_ARGS; i++)
		rec->args[i] = (__u32)i < spec->n_args ? usdt_arg(ctx, &spec->args[i]) : 0;
	submit(rec);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(cmon_entry)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 func_id = cookie & CMON_COOKIE_FUNC_MASK;
	struct cmon_func_stats *st = stats_of(func_id);
	struct mm_struct *mm = task->mm;
	struct cmon_shadow_stack *ss = NULL;
	struct cmon_frame *fr;
	__u64 slot = entry_slot(ctx, cookie);
	__u32 fflags = 0;

	if (!task_wanted(task))
		return 0;
	if (targ_focus) {
		/* Inside a focus function (any depth, recursion counted), or
		 * entering one; else nothing happens here. */
		__u32 rel;

		ss = entry_stack(task, slot, st);
		if (!ss)
			return 0;
		if (!(cookie & CMON_COOKIE_FOCUS) && !(ss->focus & 0xffff)) {
			if (st && !(cookie & CMON_COOKIE_QUIET))
				st->outside_focus++;
			return 0;
		}
		rel = ss->focus & 0xffff ? ss->depth - (ss->focus >> 16) : 0;
		if ((cookie & CMON_COOKIE_QUIET) ||
		    (targ_max_depth >= 0 && rel > (__u32)targ_max_depth))
			fflags |= CMON_FRAME_QUIET;
		if (cookie & CMON_COOKIE_FOCUS)
			fflags |= CMON_FRAME_FOCUS;
	}
	if (st && !(fflags & CMON_FRAME_QUIET))
		st->calls++;

	/* --no-return, or a function without a return to wait for (a frame
	 * pushed for it would only ever be abandoned). */
	if (targ_entry_only || (cookie & CMON_COOKIE_NEVER_RETURNS)) {
		struct cmon_call_rec *rec;
		__u64 ts = 0;

		if (fflags & CMON_FRAME_QUIET)
			return 0;
		if (targ_capture && run_fetch_plan(ctx, func_id, 0, slot, 0, &ts) < 0 && st)
			st->lost_capture++;
		rec = entry_record(task, func_id, st, CMON_CALL_ENTRY_ONLY |
				   (cookie & CMON_COOKIE_NEVER_RETURNS ? CMON_CALL_NEVER_RETURNS : 0), ts);
		if (!rec)
			return 0;
		rec->args[0] = PT_REGS_PARM1(ctx);
		rec->args[1] = PT_REGS_PARM2(ctx);
		rec->args[2] = PT_REGS_PARM3(ctx);
		rec->args[3] = PT_REGS_PARM4(ctx);
		rec->args[4] = PT_REGS_PARM5(ctx);
		rec->args[5] = PT_REGS_PARM6(ctx);
		if (targ_stack)
			emit_stack(ctx, slot, rec->ts_entry_ns, st);
		submit(rec);
		return 0;
	}

	if (!targ_focus)
		ss = entry_stack(task, slot, st);
	if (!ss)
		return 0;
	fr = shadow_stack_reserve(ss);
	if (!fr) {
		if (st)
			st->lost_depth++;
		return 0;
	}
	fr->slot = slot;
	fr->func_id = func_id;
	fr->flags = fflags;
	if (fflags & CMON_FRAME_FOCUS) {
		if (!(ss->focus & 0xffff))
			ss->focus = ss->depth << 16; /* the outermost: depths count from it */
		ss->focus++;
	}
	fr->args[0] = PT_REGS_PARM1(ctx);
	fr->args[1] = PT_REGS_PARM2(ctx);
	fr->args[2] = PT_REGS_PARM3(ctx);
	fr->args[3] = PT_REGS_PARM4(ctx);
	fr->args[4] = PT_REGS_PARM5(ctx);
	fr->args[5] = PT_REGS_PARM6(ctx);
	fr->rss = mm ? mm_rss_bytes(mm) : 0;
	fr->vms = mm ? mm_vms_bytes(mm) : 0;
	/* Time last, so the memory reads are not counted as the call's. */
	fr->ts = 0;
	if (targ_capture && run_fetch_plan(ctx, func_id, 0, slot, 0, &fr->ts) < 0 && st)
		st->lost_capture++;
	if (!fr->ts)
		fr->ts = bpf_ktime_get_ns();
	if (targ_stack && !(fflags & CMON_FRAME_QUIET))
		emit_stack(ctx, slot, fr->ts, st);
	shadow_stack_commit(ss);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(cmon_exit)
{
	__u64 ts = bpf_ktime_get_ns();
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 kind = cookie >> CMON_COOKIE_KIND_SHIFT;
	struct mm_struct *mm = task->mm;
	struct cmon_shadow_stack *ss;
	struct cmon_frame *fr;
	__u64 slot = PT_REGS_SP(ctx);
	__u32 flags = CMON_CALL_RETURNED;
	__u64 ret = 0, rss, vms;

	ss = bpf_task_storage_get(&stacks, task, 0, 0);
	if (!ss)
		return 0; /* a call that began before we attached */
	slot = exit_slot(slot, kind);
	shadow_stack_unwind(task, ss, slot, false);
	fr = shadow_stack_top(ss, slot);
	if (!fr)
		return 0;
	if (kind == CMON_EXIT_TAIL_JMP) {
		flags = CMON_CALL_TAILCALL;
	} else {
		ret = PT_REGS_RC(ctx);
		if (targ_capture) {
			__u64 tag;

			if (run_fetch_plan(ctx, fr->func_id, 1, slot, fr->ts, &tag) < 0) {
				struct cmon_func_stats *st = stats_of(fr->func_id);

				if (st)
					st->lost_capture++;
			}
		}
	}
	rss = mm ? mm_rss_bytes(mm) : 0;
	vms = mm ? mm_vms_bytes(mm) : 0;
	emit_frame(task, fr, ss->depth - 1, flags, ret, ts, rss, vms);
	shadow_stack_pop(ss);
	/* Callers that tail-called into this frame return with it, with its
	 * value (the kernel's chained uretprobes that follow find no frame). */
	fr = shadow_stack_top(ss, slot);
	if (fr && (fr->flags & CMON_FRAME_TAIL_CALLED)) {
		struct tail_ctx c = { .task = task, .ss = ss, .slot = slot, .ret = ret,
				      .ts = ts, .rss = rss, .vms = vms, .flags = flags };

		bpf_loop(CMON_STACK_DEPTH, tail_step, &c, 0);
	}
	return 0;
}

#include "python.bpf.h"

/* A thread is going away: whatever it still had pending never returned. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(cmon_thread_exit, struct task_struct *task)
{
	shadow_stack_release(task);
	return 0;
}
