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
#include "events.bpf.h"
#include "break.bpf.h"

/* libbpf 1.1 stops at the fifth argument register. */
#ifndef PT_REGS_PARM6
#define PT_REGS_PARM6(x) (__PT_REGS_CAST(x)->r9)
#endif

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool targ_entry_only = false; /* --no-return */
/* A probed function never returns (its record written at entry): without
 * one, the verifier drops that path, whose frame push, --if and typed plan
 * pushed a typed --if past its million instructions. */
const volatile bool targ_never_returns = false;
const volatile bool targ_focus = false;      /* --focus: record inside focus functions only */
const volatile bool targ_stack = false;      /* --stack: each call's user stack */
const volatile bool targ_line_regs = false;  /* --locals: line records carry the arg registers */
const volatile __s32 targ_max_depth = -1;    /* --max-depth below the focus; -1: any */

#include "fetch.bpf.h"
#include "filter.bpf.h"
#include "expr.bpf.h"
#include "usdt.bpf.h"
#include "args.bpf.h"

#include "staging.bpf.h"

/* REC is written: into its batch (B, from staging_take) or the ring. */
static __always_inline void send(struct cmon_call_rec *rec, struct cmon_batch *b)
{
	if (b)
		staging_put(b);
	else
		submit(rec);
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

/* --if / --on-change left FR's call out at its return, after its entry
 * capture or stack was written: a capture record without items
 * (CMON_CAPTURE_DROP) tells user space to forget them. */
static __always_inline void drop_entry_records(struct cmon_frame *fr)
{
	struct cmon_capture_rec *rec;
	__u32 k = fr->func_id * 2;

	if (!targ_stack) {
		struct cmon_fetch_plan *plan = bpf_map_lookup_elem(&fetch_plans, &k);

		if (!plan || !plan->n)
			return;
	}
	rec = reserve_waiting(sizeof(*rec));
	if (!rec)
		return; /* they stay until the end: memory, not data */
	rec->type = CMON_REC_CAPTURE;
	rec->n = 0;
	rec->ts_entry_ns = fr->ts;
	rec->tid = (__u32)bpf_get_current_pid_tgid();
	rec->func_id = fr->func_id;
	rec->at_return = CMON_CAPTURE_DROP;
	rec->len = 0;
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

/* Is FR's call (exit FLAGS, value RET, at TS_EXIT) to be written?  The
 * exit stage of --if / --on-change; a call left out is counted. */
static __always_inline bool frame_kept(struct cmon_frame *fr, __u32 flags, __u64 ret, __u64 ts_exit)
{
	enum expr_verdict ev;
	struct cmon_func_stats *st;

	if (frame_stale(fr)) {
		/* duty cycling: its window closed before it returned */
		st = stats_of(fr->func_id);
		if (st && !(fr->flags & CMON_FRAME_QUIET))
			st->cut++;
		if (targ_capture || targ_stack)
			drop_entry_records(fr);
		return false;
	}
	if (!targ_expr || (fr->flags & CMON_FRAME_QUIET))
		return true;
	ev = expr_decide(fr->func_id, bpf_get_current_pid_tgid() >> 32, fr->args, ret,
			 frame_latency(fr, ts_exit), true,
			 flags & (CMON_CALL_RETURNED | CMON_CALL_TAILCALL));
	if (ev == EXPR_KEEP)
		return true;
	expr_count_stats(stats_of(fr->func_id), ev);
	if (targ_capture || targ_stack)
		drop_entry_records(fr);
	return false;
}

/* Write FR as a record (DECIDED: frame_kept said so already). */
static __always_inline void emit_frame(struct task_struct *task, struct cmon_frame *fr,
				       __u32 depth, __u32 flags, __u64 ret,
				       __u64 ts_exit, __u64 rss_exit, __u64 vms_exit, bool decided)
{
	struct cmon_batch *b = NULL;
	struct cmon_call_rec *rec;
	struct cmon_func_stats *st;

	if (fr->flags & CMON_FRAME_QUIET)
		return; /* probed for --focus only, deeper than --max-depth, or --if at entry */
	if (!decided && !frame_kept(fr, flags, ret, ts_exit))
		return;
	rec = staging_take(&b);
	if (!rec)
		rec = reserve_waiting(sizeof(*rec));
	if (!rec) {
		st = stats_of(fr->func_id);
		if (st)
			st->lost_ringbuf++;
		return;
	}
	fill_identity(rec, task);
	if (fr->tid)
		rec->tid = fr->tid; /* the caller's thread, not the returner's */
	rec->flags = flags;
	rec->func_id = fr->func_id;
	rec->depth = depth;
	rec->ts_entry_ns = fr->ts;
	rec->ts_exit_ns = ts_exit ? fr->ts + frame_latency(fr, ts_exit) : 0;
	__builtin_memcpy(rec->args, fr->args, sizeof(rec->args));
	rec->ret = ret;
	rec->rss_entry = fr->rss;
	rec->vms_entry = fr->vms;
	rec->rss_exit = rss_exit;
	rec->vms_exit = vms_exit;
	/* Abandoned frames are found later than their entry: now. */
	rec->order_ns = ts_exit ? ts_exit : bpf_ktime_get_ns();
	send(rec, b);
}

/* A frame the stack moved past: its call never returned. */
static void shadow_stack_on_dead(struct task_struct *task, struct cmon_frame *fr, __u32 depth)
{
	if (fr->flags & CMON_FRAME_NO_URET) {
		/* it may well have returned: the kernel gave it no uretprobe */
		struct cmon_func_stats *st = stats_of(fr->func_id);

		if (st && !(fr->flags & CMON_FRAME_QUIET))
			st->lost_uret++;
		return;
	}
	emit_frame(task, fr, depth, CMON_CALL_NORETURN, 0, 0, 0, 0, false);
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
	emit_frame(c->task, fr, c->ss->depth - 1, c->flags, c->ret, c->ts, c->rss, c->vms, false);
	shadow_stack_pop(c->ss);
	return 0;
}

/* A record written at entry (--no-return, never-returns, USDT): reserved
 * and filled but for its args, which the caller sets before submit().
 * NULL when the buffer is full (counted).  TS 0: now. */
static __always_inline struct cmon_call_rec *entry_record(struct task_struct *task,
							  __u32 func_id,
							  struct cmon_func_stats *st,
							  __u32 flags, __u64 ts,
							  struct cmon_batch **b)
{
	struct mm_struct *mm = task->mm;
	struct cmon_call_rec *rec = b ? staging_take(b) : NULL;

	if (!rec)
		rec = reserve_waiting(sizeof(*rec));
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
	rec->order_ns = rec->ts_entry_ns;
	rec->ts_exit_ns = 0;
	rec->ret = 0;
	rec->rss_entry = mm ? mm_rss_bytes(mm) : 0;
	rec->vms_entry = mm ? mm_vms_bytes(mm) : 0;
	rec->rss_exit = 0;
	rec->vms_exit = 0;
	return rec;
}

/* The shadow stack for an entry of FUNC_ID at SLOT (the thread's, a
 * coroutine's, a goroutine's with GO), frames the stack moved past let go
 * (a tail call keeps its caller's frame: both return together).  NULL
 * when it cannot be had (counted), or when a Go function was restarted
 * after its stack grew (the call is already pending). */
static __always_inline struct cmon_shadow_stack *entry_stack(struct task_struct *task,
							     struct pt_regs *ctx, __u64 slot,
							     bool go, __u32 func_id,
							     struct cmon_func_stats *st)
{
	struct cmon_shadow_stack *ss;

	ss = go ? keyed_stack_get((__u32)task->tgid, go_g(ctx), true)
		: shadow_stack_get(task, slot, true);
	if (!ss) {
		if (st)
			st->lost_nomem++;
		return NULL;
	}
	if (go && go_entry_restarts(task, ss, slot, func_id))
		return NULL;
	/* (A Go slot is not an address: Go tail calls are seen on their jumps.) */
	shadow_stack_unwind(task, ss, slot, go || !shadow_stack_is_tail_call(task, ss, slot));
	return ss;
}


struct frame_objs_ctx {
	struct cmon_stack_rec *rec;
	struct task_struct *task;
	__u64 lo, hi; /* the last mapping found */
	struct cmon_frame_obj obj;
};

static long frame_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct frame_objs_ctx *c = data;
	struct file *f = vma->vm_file;

	c->lo = vma->vm_start;
	c->hi = vma->vm_end;
	c->obj.where = CMON_FRAME_MAPPED;
	if (!f)
		return 0;
	c->obj.ino = BPF_CORE_READ(f, f_inode, i_ino);
	c->obj.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	c->obj.base = vma->vm_start - (vma->vm_pgoff << 12); /* x86-64's 4 KiB pages */
	return 0;
}

/* Frame I's mapping (one lookup per run of frames in the same one). */
static long frame_obj_step(__u64 i, void *data)
{
	struct frame_objs_ctx *c = data;
	__u64 ip;

	if (i >= c->rec->n || i >= CMON_STACK_MAX)
		return 1;
	ip = c->rec->ips[i & (CMON_STACK_MAX - 1)];
	if (ip < c->lo || ip >= c->hi) {
		c->lo = c->hi = 0;
		__builtin_memset(&c->obj, 0, sizeof(c->obj));
		if (bpf_find_vma(c->task, ip, frame_vma, c, 0) == -2 /* -ENOENT */)
			c->obj.where = CMON_FRAME_UNMAPPED;
	}
	c->rec->objs[i & (CMON_STACK_MAX - 1)] = c->obj;
	return 0;
}

/* REC's frames' files, while the process and its mappings are there. */
static __always_inline void frame_objs(struct cmon_stack_rec *rec)
{
	struct frame_objs_ctx c = { .rec = rec, .task = bpf_get_current_task_btf() };

	__builtin_memset(rec->objs, 0, sizeof(rec->objs));
	bpf_loop(CMON_STACK_MAX, frame_obj_step, &c, 0);
}

/* --stack: the user stack at this entry, tagged (tid, TS) for its record.
 * COOKIE says whether the kernel's unwinder may already hold the return
 * address (CMON_COOKIE_AT_FUNC_ENTRY). */
static __always_inline void emit_stack(struct pt_regs *ctx, __u64 cookie, __u64 slot, __u64 ts,
				       struct cmon_func_stats *st)
{
	struct cmon_stack_rec *rec = reserve_waiting(sizeof(*rec));
	__u64 ret = 0;
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
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)slot))
		ret = 0;
	/* On `push %rbp` / endbr64 a 6.16+ kernel walks from [sp] itself:
	 * [ip, [sp], chain...] is the whole stack. */
	if (cookie & CMON_COOKIE_AT_FUNC_ENTRY) {
		n = bpf_get_stack(ctx, rec->ips, CMON_STACK_MAX * sizeof(__u64), BPF_F_USER_STACK);
		if (n >= 16 && rec->ips[1] == ret) {
			rec->n = (__u32)(n / 8 > CMON_STACK_MAX ? CMON_STACK_MAX : n / 8);
			frame_objs(rec);
			bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
			return;
		}
	}
	rec->ips[0] = PT_REGS_IP(ctx);
	/* The frame-pointer chain from [1]: its first entry (the ip again) is
	 * replaced by the return address the walk would miss. */
	n = bpf_get_stack(ctx, &rec->ips[1], (CMON_STACK_MAX - 1) * sizeof(__u64),
			  BPF_F_USER_STACK);
	n = n > 0 ? n / 8 : 1;
	rec->ips[1] = ret;
	rec->n = (__u32)(n + 1 > CMON_STACK_MAX ? CMON_STACK_MAX : n + 1);
	frame_objs(rec);
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

#define CMON_SIGSTOP 19

/*
 * `cmon break --if EXPR`: the --if program (expr.bpf.h) on the arguments,
 * run before the hit is counted; a hit it refuses neither counts nor stops.
 */
static __always_inline bool break_condition(struct pt_regs *ctx, __u32 func_id, bool go)
{
	__u64 a[CMON_MAX_ARGS];

	if (!targ_expr)
		return true;
	read_args(ctx, go, a);
	return expr_decide(func_id, (__u32)(bpf_get_current_pid_tgid() >> 32), a, 0, 0, false,
			   false) == EXPR_KEEP;
}

/*
 * cmon break: for the first targ_break_count hits, the arguments and the
 * user stack to the ring buffer, then SIGSTOP to the whole process.  The
 * signal is pending until the thread returns to user space, after the
 * kernel has run (emulated or single-stepped) the probed first
 * instruction.  User space resumes it (SIGCONT).
 */
static __always_inline int break_hit(struct pt_regs *ctx, struct task_struct *task,
				     __u64 cookie, __u32 func_id, __u64 slot,
				     struct cmon_func_stats *st)
{
	struct cmon_call_rec *rec;
	__u64 ts = 0;

	if (!break_condition(ctx, func_id, cookie & CMON_COOKIE_GO))
		return 0;
	if (st)
		st->calls++;
	if (__sync_fetch_and_add(&break_hits, 1) >= targ_break_count)
		return 0;
	/* Captures, then the stack, then the record: the consumer reads
	 * them in the order they were reserved. */
	if (targ_capture && run_fetch_plan(ctx, func_id, 0, slot, 0, &ts, NULL) < 0 && st)
		st->lost_capture++;
	if (!ts)
		ts = bpf_ktime_get_ns();
	emit_stack(ctx, cookie, slot, ts, st);
	rec = entry_record(task, func_id, st, CMON_CALL_ENTRY_ONLY, ts, NULL);
	if (!rec) {
		__sync_fetch_and_add(&break_lost, 1);
		return 0;
	}
	read_args(ctx, cookie & CMON_COOKIE_GO, rec->args);
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
	bpf_send_signal(CMON_SIGSTOP);
	return 0;
}

/* A USDT site fired: one entry-only record, its arguments as the note says. */
SEC("uprobe")
int BPF_KPROBE(cmon_usdt)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 func_id = bpf_get_attach_cookie(ctx) & CMON_COOKIE_FUNC_MASK;
	struct cmon_func_stats *st = stats_of(func_id);
	struct cmon_usdt_spec *spec = bpf_map_lookup_elem(&usdt_specs, &func_id);
	struct cmon_batch *b = NULL;
	struct cmon_call_rec *rec;

	__u64 ts = 0;
	int planned = 0;

	if (!spec || !task_wanted(task))
		return 0;
	if (st)
		st->calls++;
	/* --locals: a line's variables, by the plan its scope gave */
	if (targ_capture && spec->kind == CMON_SITE_LINE) {
		planned = run_fetch_plan(ctx, func_id, 0, PT_REGS_SP(ctx), 0, &ts, NULL);
		if (planned < 0 && st)
			st->lost_capture++;
	}
	rec = entry_record(task, func_id, st, CMON_CALL_ENTRY_ONLY |
			   (spec->kind == CMON_SITE_LINE ? CMON_CALL_LINE : CMON_CALL_USDT), ts, &b);
	if (!rec)
		return 0;
	if (planned >= 0 && targ_line_regs && spec->kind == CMON_SITE_LINE) {
		/* the variables the plan finds in argument registers (an
		 * empty plan: all of them are there) */
		read_args(ctx, false, rec->args);
	} else {
		for (int i = 0; i < CMON_MAX_ARGS; i++)
			rec->args[i] = (__u32)i < spec->n_args ? usdt_arg(ctx, &spec->args[i]) : 0;
	}
	send(rec, b);
	return 0;
}

/* --no-return, or a function without a return to wait for: its record
 * is written at entry (cmon_entry's; inlined, as the verifier saw it). */
static __always_inline int entry_no_return(struct pt_regs *ctx, struct task_struct *task,
					   struct cmon_shadow_stack *ss, __u64 cookie,
					   __u32 func_id, struct cmon_func_stats *st,
					   __u64 slot, __u64 at, bool go, __u32 fflags)
{
	struct cmon_frame *fr;
	struct cmon_batch *b = NULL;
	struct cmon_call_rec *rec;
	__u32 depth = ~0U;
	__u64 ts = 0;

	/* Never returns: its record is written now, at its depth, and
	 * a silent frame makes its callees nest under it (let go when
	 * the stack moves past it, as an abandoned call's). */
	if (ss && !targ_entry_only) {
		depth = ss->depth;
		fr = cookie & CMON_COOKIE_NO_FRAME ? NULL : shadow_stack_reserve(ss);
		if (fr) {
			fr->slot = slot;
			fr->func_id = func_id;
			fr->flags = fflags | CMON_FRAME_QUIET;
			fr->tid = (__u32)bpf_get_current_pid_tgid();
			fr->step_ns = 0;
			fr->child_ns = 0;
			fr->ts = bpf_ktime_get_ns();
			focus_push(ss, fflags);
			shadow_stack_commit(ss);
		}
	}
	if (fflags & CMON_FRAME_QUIET)
		return 0;
	if (targ_expr) {
		__u64 a[CMON_MAX_ARGS];
		enum expr_verdict ev;

		read_args(ctx, go, a);
		ev = expr_decide(func_id, task->tgid, a, 0, 0, false, false);
		/* Never returns: a condition on the return cannot hold. */
		if (ev == EXPR_KEEP && !targ_entry_only)
			ev = expr_decide(func_id, task->tgid, a, 0, 0, true, false);
		if (ev != EXPR_KEEP) {
			expr_count_stats(st, ev);
			return 0;
		}
	}
	if (targ_capture && run_fetch_plan(ctx, func_id, 0, at, 0, &ts, NULL) < 0 && st)
		st->lost_capture++;
	rec = entry_record(task, func_id, st, CMON_CALL_ENTRY_ONLY |
			   ((cookie & CMON_COOKIE_NEVER_RETURNS) &&
			    !(cookie & CMON_COOKIE_RETURN_UNSEEN) ? CMON_CALL_NEVER_RETURNS : 0),
			   ts, &b);
	if (!rec)
		return 0;
	if (depth != ~0U) {
		rec->depth = depth;
		rec->flags |= CMON_CALL_DEPTH;
	}
	read_args(ctx, go, rec->args);
	if (targ_stack)
		emit_stack(ctx, cookie, at, rec->ts_entry_ns, st);
	send(rec, b);
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
	__u64 at = entry_slot(ctx, cookie), slot = at; /* AT: the slot's address */
	bool go = cookie & CMON_COOKIE_GO;
	__u32 fflags = 0;

	duty_count(func_id);
	if (!task_wanted(task))
		return 0;
	if (!targ_entry_only && reentered(task, cookie, func_id, at))
		return 0;
	if (targ_break_count)
		return break_hit(ctx, task, cookie, func_id, at, st);
	if (go) {
		slot = go_slot(ctx, at);
		if (!slot)
			return 0;
	}
	/* The stack, once for every path below: each inlined copy is walked
	 * again by the verifier, and four of them with a typed capture plan
	 * passed its million instructions.  Before anything is counted: a Go
	 * restart is no new call; without memory (counted) a call under
	 * --focus cannot be placed, others still count as calls. */
	if (!targ_entry_only || targ_focus) {
		ss = entry_stack(task, ctx, slot, go, func_id, st);
		if (!ss && (go || targ_focus))
			return 0;
	}
	if (targ_focus) {
		/* Inside a focus function (any depth, recursion counted), or
		 * entering one; else nothing happens here. */
		if (!ss)
			return 0;
		if (!focus_enter(ss, cookie, targ_max_depth, &fflags)) {
			if (st && !(cookie & CMON_COOKIE_QUIET))
				st->outside_focus++;
			return 0;
		}
	}
	if (st && !(fflags & CMON_FRAME_QUIET))
		st->calls++;
	else if (st && !(cookie & CMON_COOKIE_QUIET))
		st->outside_focus++; /* in the focus, deeper than --max-depth */

	/* --no-return, or a function without a return to wait for. */
	if (targ_entry_only || (targ_never_returns && (cookie & CMON_COOKIE_NEVER_RETURNS)))
		return entry_no_return(ctx, task, ss, cookie, func_id, st, slot, at, go, fflags);

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
	fr->tid = (__u32)bpf_get_current_pid_tgid();
	frame_init(fr, cookie);
	focus_push(ss, fflags);
	read_args(ctx, go, fr->args);
	/* --if / --on-change on the arguments alone: decided now, so member
	 * reads see what the call was given, and a call left out costs no
	 * capture or stack. */
	if (targ_expr && !(fflags & CMON_FRAME_QUIET)) {
		enum expr_verdict ev = expr_decide(func_id, task->tgid, fr->args, 0, 0, false, false);

		if (ev != EXPR_KEEP) {
			fr->flags |= CMON_FRAME_QUIET;
			fflags |= CMON_FRAME_QUIET;
			expr_count_stats(st, ev);
		}
	}
	fr->rss = mm ? mm_rss_bytes(mm) : 0;
	fr->vms = mm ? mm_vms_bytes(mm) : 0;
	/* Time last, so the memory reads are not counted as the call's. */
	fr->ts = 0;
	if (targ_capture && !(fflags & CMON_FRAME_QUIET) &&
	    run_fetch_plan(ctx, func_id, 0, at, 0, &fr->ts, NULL) < 0 && st)
		st->lost_capture++;
	if (!fr->ts)
		fr->ts = bpf_ktime_get_ns();
	if (targ_stack && !(fflags & CMON_FRAME_QUIET))
		emit_stack(ctx, cookie, at, fr->ts, st);
	shadow_stack_commit(ss);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(cmon_exit)
{
	__u64 ts = bpf_ktime_get_ns();
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 kind = (cookie >> CMON_COOKIE_KIND_SHIFT) & CMON_COOKIE_KIND_MASK;
	struct mm_struct *mm = task->mm;
	struct cmon_shadow_stack *ss;
	struct cmon_frame *fr;
	__u64 at = exit_slot(PT_REGS_SP(ctx), kind), slot = at;
	__u32 flags = CMON_CALL_RETURNED;
	__u64 ret = 0, rss, vms;
	bool go = cookie & CMON_COOKIE_GO;
	bool kept;

	if (!exit_taken(ctx, cookie))
		return 0; /* a conditional jump that stays in the function */

	if (go) {
		slot = go_slot(ctx, at);
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
	if (kind == CMON_EXIT_TAIL_JMP)
		flags = CMON_CALL_TAILCALL;
	else
		ret = PT_REGS_RC(ctx);
	/* Decided before the return's captures: a call left out writes none. */
	kept = frame_kept(fr, flags, ret, ts);
	if (kept && targ_capture && kind != CMON_EXIT_TAIL_JMP && !(fr->flags & CMON_FRAME_QUIET)) {
		__u64 tag;

		if (run_fetch_plan(ctx, fr->func_id, 1, at, fr->ts, &tag, fr->args) < 0) {
			struct cmon_func_stats *st = stats_of(fr->func_id);

			if (st)
				st->lost_capture++;
		}
	}
	rss = mm ? mm_rss_bytes(mm) : 0;
	vms = mm ? mm_vms_bytes(mm) : 0;
	if (kept)
		emit_frame(task, fr, ss->depth - 1, flags, ret, ts, rss, vms, true);
	shadow_stack_pop(ss);
	/* Callers that tail-called into this frame return with it, with its
	 * value (the kernel's chained uretprobes that follow find no frame). */
	fr = shadow_stack_top(ss, slot);
	if (fr && (fr->flags & CMON_FRAME_TAIL_CALLED)) {
		struct tail_ctx c = { .task = task, .ss = ss, .slot = slot, .ret = ret,
				      .ts = ts, .rss = rss, .vms = vms, .flags = flags };

		bpf_loop(CMON_STACK_DEPTH, tail_step, &c, 0);
	}
	stack_put_after_return(task, ctx, ss, slot, go);
	return 0;
}

#include "python.bpf.h"

/* A thread is going away: whatever it still had pending never returned. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(cmon_thread_exit, struct task_struct *task)
{
	thread_gone(task);
	py_exit(task);
	return 0;
}
