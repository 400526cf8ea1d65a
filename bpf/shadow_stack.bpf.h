/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * shadow_stack.bpf.h: the calls pending on each thread, shared by every
 * cmon BPF program that pairs entries with returns.
 *
 * A frame is identified by the address of its return-address slot, so
 * recursion and nesting pair correctly where a thread-keyed map would not.
 * The stack grows down: a live caller's slot is always above its callees',
 * so a frame at or below a new entry's slot, or below a return's slot, was
 * abandoned (longjmp, exception) and is popped as such.
 *
 * That order holds on one stack.  A process that switches stacks
 * (ucontext or boost.context coroutines: targ_stack_switch) has frames on
 * several; each coroutine stack gets a shadow stack of its own, keyed by
 * its region, so a call pairs on the stack it runs on (frames belong to a
 * stack, not to a thread: a coroutine may be resumed by another thread).
 * The regions are learnt where the stacks are made (cmon_stack_made, on
 * makecontext / make_fcontext); a frame outside every region is on the
 * thread's own stack.
 */
#ifndef CMON_SHADOW_STACK_BPF_H
#define CMON_SHADOW_STACK_BPF_H

#include "cmon_abi.h"
#include "maps.bpf.h"
#include "regs.bpf.h"

/* Task-local: no thread table to fill, freed with the task. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cmon_shadow_stack);
} stacks SEC(".maps");

#define SHADOW_STACK_MASK (CMON_STACK_DEPTH - 1)

const volatile bool targ_stack_switch = false;
/* Frames live on keyed stacks too (coroutines, goroutines): coro_stacks. */
const volatile bool targ_keyed_stacks = false;

/* Per process: the coroutine stacks' regions (sized by user space). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_stack_regions);
} stack_regions SEC(".maps");

/* Per coroutine stack: its pending calls (sized by user space; an entry
 * is let go when its last pending call returns). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct cmon_stack_key);
	__type(value, struct cmon_shadow_stack);
} coro_stacks SEC(".maps");

/* Zeroed values to create the two above from (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_shadow_stack);
} empty_stack SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_stack_regions);
} empty_regions SEC(".maps");

/* The low end of the coroutine stack region holding ADDR in process
 * TGID, or 0: the thread's own stack. */
static __always_inline __u64 stack_region_of(__u32 tgid, __u64 addr)
{
	struct cmon_stack_regions *rs = bpf_map_lookup_elem(&stack_regions, &tgid);
	__u32 n;

	if (!rs)
		return 0;
	n = rs->n;
	for (__u32 i = 0; i < CMON_MAX_STACK_REGIONS; i++) {
		if (i >= n)
			break;
		if (rs->r[i].lo <= addr && addr < rs->r[i].hi)
			return rs->r[i].lo;
	}
	return 0;
}

/*
 * The shadow stack a frame whose return slot is SLOT belongs to: the
 * thread's own (task storage), or a coroutine stack's.  CREATE: make it
 * when missing.  NULL when there is none (or no memory for it).
 */
/* The shadow stack of the stack keyed ID (a region's low end, a
 * goroutine's g) in process TGID; CREATE: make it when missing. */
static __always_inline struct cmon_shadow_stack *keyed_stack_get(__u32 tgid, __u64 id, bool create)
{
	struct cmon_stack_key k = { .tgid = tgid, .lo = id };

	if (!create)
		return bpf_map_lookup_elem(&coro_stacks, &k);
	return map_lookup_or_make(&coro_stacks, &k, &empty_stack, NULL);
}

static __always_inline struct cmon_shadow_stack *shadow_stack_get(struct task_struct *task,
								   __u64 slot, bool create)
{
	if (targ_stack_switch) {
		__u64 lo = stack_region_of((__u32)task->tgid, slot);

		if (lo)
			return keyed_stack_get((__u32)task->tgid, lo, create);
	}
	return bpf_task_storage_get(&stacks, task, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/*
 * Step timing.  A single-stepped entry costs ~15 us on this kind of host
 * and varies by microseconds from call to call, with how long ago the last
 * single-step was: no calibration taken at start can take it out of a
 * latency.  So where the function's first instructions lead in a straight
 * line to a cheap (emulated) one, that one gets a step probe too, and the
 * latency starts there: the frame's step_ns.  Until it fires, step_ns holds
 * the calibrated estimate (targ_step_lead_ns), so a call whose step probe
 * never fired (attached between the two) is still corrected.
 */
const volatile __u32 targ_step_lead_ns = 0;

/*
 * Duty cycling (the agent's budget): a function's probes are attached for
 * a part of each period and detached for the rest, and user space bumps
 * its generation here before each attach.  A frame carries the generation
 * of its entry; one from an earlier window (its return came while the
 * probes were away, or comes now, after a new attach) is let go without
 * a latency: a return seen in a later window may be another call's, made
 * while nothing was attached, at the same stack slot.
 */
const volatile bool targ_duty = false;
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* functions, with targ_duty */
	__type(key, __u32);
	__type(value, __u32);
} duty_gen SEC(".maps");

/* Each function's entries, with targ_duty: read by probe/duty.c at its
 * windows' edges.  A probe appears and goes inside a system call, so a
 * window's calls are more than its interval between those calls saw; the
 * rate of that interval prices the window's attached time. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* functions, with targ_duty */
	__type(key, __u32);
	__type(value, struct cmon_duty_calls);
} duty_calls SEC(".maps");

static __always_inline __u32 duty_gen_of(__u32 func_id)
{
	__u32 *g;

	if (!targ_duty)
		return 0;
	g = bpf_map_lookup_elem(&duty_gen, &func_id);
	return g ? *g & 0xffff : 0;
}

/* An entry probe of FUNC_ID hit (every trap, whatever is then kept). */
static __always_inline void duty_count(__u32 func_id)
{
	struct cmon_duty_calls *n;
	__u32 tgid;

	if (!targ_duty)
		return;
	n = bpf_map_lookup_elem(&duty_calls, &func_id);
	if (!n)
		return;
	__sync_fetch_and_add(&n->calls, 1);
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (n->tgid != tgid)
		n->tgid = tgid;
}

/* FR was entered in an earlier attached window of its function. */
static __always_inline bool frame_stale(const struct cmon_frame *fr)
{
	return targ_duty && (fr->flags >> CMON_FRAME_GEN_SHIFT) != duty_gen_of(fr->func_id);
}

/* A new frame of an entry with COOKIE (its func_id set). */
static __always_inline void frame_init(struct cmon_frame *fr, __u64 cookie)
{
	struct uprobe_task *ut = bpf_get_current_task_btf()->utask;

	fr->flags |= duty_gen_of(fr->func_id) << CMON_FRAME_GEN_SHIFT;

	/* Past the kernel's nested uretprobes (this call's is not made yet):
	 * a return through one will not come.  Direct loads: no helper. */
	if (ut && ut->depth >= CMON_KERNEL_URET_DEPTH)
		fr->flags |= CMON_FRAME_NO_URET;
	if (cookie & CMON_COOKIE_STEP) {
		fr->flags |= CMON_FRAME_STEP;
		fr->step_ns = targ_step_lead_ns;
	} else {
		fr->step_ns = 0;
	}
	fr->child_ns = 0;
}

/* FR's latency at TS: from its step, or its entry. */
static __always_inline __u64 frame_latency(const struct cmon_frame *fr, __u64 ts)
{
	__u64 start = fr->ts + fr->step_ns;

	return ts > start ? ts - start : 0;
}

/*
 * A caller's latency is its own only without its traced callees' probes.
 * What each function's probes cost a caller (entry, step and return
 * probes as a caller times them: probe_calib__caller_cost), by function;
 * a frame gathers its callees' in child_ns (and theirs in turn), and is
 * timed net of it.  Sized and filled by user space with targ_child_cost.
 */
const volatile bool targ_child_cost = false;
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} call_cost SEC(".maps");

/* Indirect jumps that may leave their function (CMON_COOKIE_IND), by site
 * (sized by user space). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_ind_site);
} ind_sites SEC(".maps");

/* An indirect jump leaves its function: its target (the register, or the
 * word at register + disp) is outside [start, start + size). */
static __always_inline bool ind_jump_leaves(struct pt_regs *ctx, __u64 cookie)
{
	__u32 id = (cookie >> CMON_COOKIE_IND_SHIFT) & CMON_COOKIE_IND_MASK;
	struct cmon_ind_site *s = bpf_map_lookup_elem(&ind_sites, &id);
	__u64 target, start;

	if (!s)
		return false;
	target = regs_at(ctx, s->reg_off);
	if (s->mem && bpf_probe_read_user(&target, sizeof(target), (void *)(target + s->disp)))
		return false; /* the jump itself will fault */
	start = PT_REGS_IP(ctx) - s->off;
	return target < start || target - start >= s->size;
}

/*
 * Does the exit probe with COOKIE end its call?  A conditional jump out of
 * a function (a conditional tail call) is one of its exits, but its probe
 * fires whether or not it is taken: the condition (CMON_COOKIE_JCC) is read
 * from the flags (x86 condition codes: even ones as below, odd ones their
 * negation).  An indirect jump ends it when it leaves the function.
 */
static __always_inline bool exit_taken(struct pt_regs *ctx, __u64 cookie)
{
	__u32 cc = (cookie >> CMON_COOKIE_JCC_SHIFT) & CMON_COOKIE_JCC_MASK;
	__u64 fl;
	bool cf, pf, zf, sf, of, t;

	if (cookie & CMON_COOKIE_IND)
		return ind_jump_leaves(ctx, cookie);
	if (!cc)
		return true;
	/* only a conditional jump needs the flags */
	fl = ctx->flags;
	cf = fl & 1, pf = fl & 4, zf = fl & 0x40, sf = fl & 0x80, of = fl & 0x800;
	cc--;
	switch (cc >> 1) {
	case 0: t = of; break;
	case 1: t = cf; break;
	case 2: t = zf; break;
	case 3: t = cf || zf; break;
	case 4: t = sf; break;
	case 5: t = pf; break;
	case 6: t = sf != of; break;
	default: t = zf || sf != of; break;
	}
	return (cc & 1) ? !t : t;
}

/* SS's top frame, whatever its slot (NULL: none). */
static __always_inline struct cmon_frame *shadow_stack_peek(struct cmon_shadow_stack *ss)
{
	__u32 top = ss->depth;

	if (top == 0 || top > CMON_STACK_DEPTH)
		return NULL;
	return &ss->frames[(top - 1) & SHADOW_STACK_MASK];
}

/* FR returned and was popped from SS: its probes' cost and its callees'
 * go to the frame below, its nearest traced caller's. */
static __always_inline void frame_pass_cost(struct cmon_shadow_stack *ss,
					    const struct cmon_frame *fr)
{
	struct cmon_frame *caller;
	__u64 cost = fr->child_ns;
	__u32 *own;

	if (!targ_child_cost)
		return;
	own = bpf_map_lookup_elem(&call_cost, &fr->func_id);
	if (own)
		cost += *own;
	caller = shadow_stack_peek(ss);
	if (caller)
		caller->child_ns += cost;
}

/* FR's latency at TS without its callees' probes. */
static __always_inline __u64 frame_latency_net(const struct cmon_frame *fr, __u64 ts)
{
	__u64 lat = frame_latency(fr, ts);

	return lat > fr->child_ns ? lat - fr->child_ns : 0;
}

/* An entry of FUNC_ID at SLOT with COOKIE is its pending call going on (a
 * branch back to its entry: CMON_COOKIE_REENTERED), not a new call. */
static __always_inline bool reentered(struct task_struct *task, __u64 cookie, __u32 func_id,
				      __u64 slot)
{
	struct cmon_shadow_stack *ss;
	struct cmon_frame *fr;

	if (!(cookie & CMON_COOKIE_REENTERED))
		return false;
	ss = shadow_stack_get(task, slot, false);
	fr = ss ? shadow_stack_peek(ss) : NULL;
	return fr && fr->slot == slot && fr->func_id == func_id;
}

/* The step probe of the function in the cookie: its newest call's
 * latency starts now.  Only the first hit after the entry counts (the
 * planner puts the probe where no branch leads back, but a signal handler
 * may run the function again in between: its frame is then the top). */
SEC("uprobe")
int BPF_KPROBE(cmon_step)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 func_id = bpf_get_attach_cookie(ctx) & CMON_COOKIE_FUNC_MASK;
	struct task_struct *task = bpf_get_current_task_btf();
	struct cmon_shadow_stack *ss = shadow_stack_get(task, PT_REGS_SP(ctx), false);
	struct cmon_frame *fr;
	__u64 d;

	if (!ss)
		return 0;
	fr = shadow_stack_peek(ss);
	if (!fr || !(fr->flags & CMON_FRAME_STEP) || fr->func_id != func_id)
		return 0;
	fr->flags &= ~CMON_FRAME_STEP;
	d = ts > fr->ts ? ts - fr->ts : 0;
	fr->step_ns = d > 0xffffffffULL ? 0xffffffffU : (__u32)d;
	return 0;
}

/* After a return: a coroutine stack with nothing pending is let go. */
static __always_inline void shadow_stack_put(struct task_struct *task, __u64 slot,
					     struct cmon_shadow_stack *ss)
{
	struct cmon_stack_key k = { .tgid = (__u32)task->tgid };

	if (!targ_stack_switch || ss->depth)
		return;
	k.lo = stack_region_of(k.tgid, slot);
	if (k.lo)
		bpf_map_delete_elem(&coro_stacks, &k);
}

/*
 * Go (functions under ABIInternal, cookie CMON_COOKIE_GO): frames belong
 * to the goroutine, whose g is in r14, not to the thread it runs on; and a
 * goroutine's stack is copied elsewhere when it grows, so a frame's slot
 * is measured from its stack's top (g.stack.hi, at g + 8), which the copy
 * keeps: slot' = CMON_GO_SLOT_TOP - (hi - slot) orders like an address.
 * 0 when g cannot be read.
 */
#define CMON_GO_SLOT_TOP (1ULL << 62)

static __always_inline __u64 go_g(struct pt_regs *ctx) { return ctx->r14; }

static __always_inline __u64 go_slot(struct pt_regs *ctx, __u64 slot)
{
	__u64 hi = 0, g = go_g(ctx);

	if (!g || bpf_probe_read_user(&hi, sizeof(hi), (void *)(g + 8)) || hi < slot ||
	    hi - slot >= CMON_GO_SLOT_TOP)
		return 0;
	return CMON_GO_SLOT_TOP - (hi - slot);
}

/* An entry of FUNC_ID at the top frame's own (goroutine) slot: the stack
 * was too small, morestack grew it and restarted the function: the same
 * call, not a new one.  (go_entry_restarts also looks under morestack's
 * own frames.) */
static __always_inline bool go_restarted(struct cmon_shadow_stack *ss, __u64 slot, __u32 func_id)
{
	__u32 top = ss->depth;
	struct cmon_frame *fr;

	if (top == 0 || top > CMON_STACK_DEPTH)
		return false;
	fr = &ss->frames[(top - 1) & SHADOW_STACK_MASK];
	return fr->slot == slot && fr->func_id == func_id;
}

/* After a return: a goroutine with nothing pending is let go. */
static __always_inline void go_stack_put(struct task_struct *task, struct pt_regs *ctx,
					 struct cmon_shadow_stack *ss)
{
	struct cmon_stack_key k = { .tgid = (__u32)task->tgid, .lo = go_g(ctx) };

	if (!ss->depth)
		bpf_map_delete_elem(&coro_stacks, &k);
}

/* After a return, the stack it popped put back: a goroutine's (GO), or the
 * thread's or a coroutine's by SLOT. */
static __always_inline void stack_put_after_return(struct task_struct *task, struct pt_regs *ctx,
						   struct cmon_shadow_stack *ss, __u64 slot, bool go)
{
	if (go)
		go_stack_put(task, ctx, ss);
	else
		shadow_stack_put(task, slot, ss);
}

/* A coroutine's stack is being made: remember its region (the cookie
 * says how the maker takes it, enum cmon_stack_maker). */
SEC("uprobe")
int BPF_KPROBE(cmon_stack_made)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, n;
	struct cmon_stack_regions *rs;
	__u64 lo, hi, size = 0;

	if (bpf_get_attach_cookie(ctx) == CMON_STACK_MAKER_FCONTEXT) {
		hi = PT_REGS_PARM1(ctx); /* the top: stacks grow down */
		size = PT_REGS_PARM2(ctx);
		lo = hi - size;
	} else {
		__u64 ucp = PT_REGS_PARM1(ctx);

		/* glibc x86-64 ucontext_t: uc_stack.ss_sp at 16, ss_size at 32 */
		if (bpf_probe_read_user(&lo, sizeof(lo), (void *)(ucp + 16)) ||
		    bpf_probe_read_user(&size, sizeof(size), (void *)(ucp + 32)))
			return 0;
		hi = lo + size;
	}
	if (!lo || !size || hi <= lo)
		return 0;
	rs = map_lookup_or_make(&stack_regions, &tgid, &empty_regions, NULL);
	if (!rs)
		return 0;
	n = rs->n;
	for (__u32 i = 0; i < CMON_MAX_STACK_REGIONS; i++) {
		if (i >= n)
			break;
		if (rs->r[i].lo == lo) {
			rs->r[i].hi = hi; /* the same stack made again */
			return 0;
		}
	}
	if (n < CMON_MAX_STACK_REGIONS) {
		rs->r[n & (CMON_MAX_STACK_REGIONS - 1)].lo = lo;
		rs->r[n & (CMON_MAX_STACK_REGIONS - 1)].hi = hi;
		rs->n = n + 1;
	} else {
		n = rs->next & (CMON_MAX_STACK_REGIONS - 1);
		rs->r[n].lo = lo;
		rs->r[n].hi = hi;
		rs->next = (n + 1) & (CMON_MAX_STACK_REGIONS - 1);
	}
	return 0;
}

/*
 * An entry at the top frame's own slot is either a tail call made by that
 * frame (it jumped to the new function, which will return for it) or a new
 * call from the same stack depth after the old one was abandoned (longjmp).
 * A kernel uretprobe rewrote the top frame's return address to its
 * trampoline, the first slot of the process's [uprobes] area: a tail call
 * still finds it there, a new call has pushed a real return address.
 * Returns true (and marks the top frame) for a tail call.
 */
static __always_inline bool shadow_stack_is_tail_call(struct task_struct *task,
						      struct cmon_shadow_stack *ss, __u64 slot)
{
	__u32 top = ss->depth;
	struct cmon_frame *fr;
	__u64 now = 0, trampoline;

	if (top == 0 || top > CMON_STACK_DEPTH)
		return false;
	fr = &ss->frames[(top - 1) & SHADOW_STACK_MASK];
	if (fr->slot != slot)
		return false;
	trampoline = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	if (!trampoline || bpf_probe_read_user(&now, sizeof(now), (void *)slot) ||
	    now != trampoline)
		return false;
	fr->flags |= CMON_FRAME_TAIL_CALLED;
	return true;
}

/* The return-address slot seen by the entry probe with COOKIE: its stack
 * pointer, or past the prologue the register + offset the CFI gives. */
static __always_inline __u64 entry_slot(struct pt_regs *ctx, __u64 cookie)
{
	__u64 off = (cookie >> CMON_COOKIE_SLOT_OFF_SHIFT) & 0xffff;
	__u64 fp = PT_REGS_FP(ctx), sp = PT_REGS_SP(ctx);
	__u64 rbp = -(__u64)((cookie & CMON_COOKIE_SLOT_RBP) != 0);

	/* Branch-free: a branch here would double the verifier's states for
	 * the whole program, and a computed context offset is refused. */
	barrier_var(fp);
	barrier_var(sp);
	return ((fp & rbp) | (sp & ~rbp)) + off;
}

/* The return-address slot seen by an exit probe of KIND at stack pointer SP. */
static __always_inline __u64 exit_slot(__u64 sp, __u32 kind)
{
	return kind == CMON_EXIT_URETPROBE ? sp - 8 : sp; /* ret has popped it */
}

/*
 * What happens to a frame whose call never returned: each program that
 * includes this header defines it (trace writes a record, profile counts).
 */
static void shadow_stack_on_dead(struct task_struct *task, struct cmon_frame *fr, __u32 depth);

struct unwind_ctx {
	struct task_struct *task;
	struct cmon_shadow_stack *ss;
	__u64 slot;
	__u32 inclusive;
};

static __always_inline bool frame_dead(const struct cmon_frame *fr, __u64 slot, bool inclusive)
{
	return fr->slot < slot || (inclusive && fr->slot == slot);
}

/* One step of shadow_stack_unwind: 0 to go on, 1 to stop. */
static long unwind_step(__u64 i, void *data)
{
	struct unwind_ctx *c = data;
	struct cmon_shadow_stack *ss = c->ss;
	__u32 top = ss->depth;
	struct cmon_frame *fr;

	if (top == 0 || top > CMON_STACK_DEPTH)
		return 1;
	fr = &ss->frames[(top - 1) & SHADOW_STACK_MASK];
	if (!frame_dead(fr, c->slot, c->inclusive))
		return 1;
	shadow_stack_on_dead(c->task, fr, top - 1);
	if ((fr->flags & CMON_FRAME_FOCUS) && (ss->focus & 0xffff))
		ss->focus--;
	ss->depth = top - 1;
	return 0;
}

/*
 * Pop every frame at or below SLOT (INCLUSIVE: an entry) or strictly below
 * it (an exit), handing each to shadow_stack_on_dead.  Usually there is
 * none: checked inline; the loop is a bpf_loop so the verifier checks its
 * body once instead of CMON_STACK_DEPTH times.
 */
static __always_inline void shadow_stack_unwind(struct task_struct *task, struct cmon_shadow_stack *ss,
						__u64 slot, bool inclusive)
{
	struct unwind_ctx c = { .task = task, .ss = ss, .slot = slot, .inclusive = inclusive };
	__u32 top = ss->depth;

	if (top == 0 || top > CMON_STACK_DEPTH ||
	    !frame_dead(&ss->frames[(top - 1) & SHADOW_STACK_MASK], slot, inclusive))
		return;
	bpf_loop(CMON_STACK_DEPTH, unwind_step, &c, 0);
}

/*
 * A Go entry of FUNC_ID at SLOT: frames below SLOT were abandoned, whether
 * this is a new call or a restart, and are let go first, so a restart is
 * found under runtime.morestack's frames when that is traced too
 * (morestack never returns: newstack restarts its caller).
 */
static __always_inline bool go_entry_restarts(struct task_struct *task, struct cmon_shadow_stack *ss,
					      __u64 slot, __u32 func_id)
{
	shadow_stack_unwind(task, ss, slot, false);
	return go_restarted(ss, slot, func_id);
}

/*
 * --focus (trace and profile alike): is an entry with COOKIE inside a
 * focus function (any depth, recursion counted), or entering one?  False:
 * outside, nothing happens.  True: *FLAGS gets CMON_FRAME_QUIET for a call
 * probed for the focus only or deeper than MAX_DEPTH (-1: any) below the
 * outermost focus frame, CMON_FRAME_FOCUS for a focus function.
 */
static __always_inline bool focus_enter(const struct cmon_shadow_stack *ss, __u64 cookie,
					__s32 max_depth, __u32 *flags)
{
	__u32 rel;

	if (!(cookie & CMON_COOKIE_FOCUS) && !(ss->focus & 0xffff))
		return false;
	rel = ss->focus & 0xffff ? ss->depth - (ss->focus >> 16) : 0;
	if ((cookie & CMON_COOKIE_QUIET) || (max_depth >= 0 && rel > (__u32)max_depth))
		*flags |= CMON_FRAME_QUIET;
	if (cookie & CMON_COOKIE_FOCUS)
		*flags |= CMON_FRAME_FOCUS;
	return true;
}

/* A focus frame is being pushed (FLAGS of shadow_stack_reserve's frame):
 * the focus counts it; the outermost one sets where depths count from. */
static __always_inline void focus_push(struct cmon_shadow_stack *ss, __u32 flags)
{
	if (!(flags & CMON_FRAME_FOCUS))
		return;
	if (!(ss->focus & 0xffff))
		ss->focus = ss->depth << 16;
	ss->focus++;
}

/* The next free frame, or NULL when CMON_STACK_DEPTH calls are pending.
 * The caller fills it and then calls shadow_stack_commit. */
static __always_inline struct cmon_frame *shadow_stack_reserve(struct cmon_shadow_stack *ss)
{
	__u32 top = ss->depth;
	struct cmon_frame *fr;

	if (top >= CMON_STACK_DEPTH)
		return NULL;
	fr = &ss->frames[top & SHADOW_STACK_MASK];
	/* The caller tests the pointer, not top again: clang re-derived the
	 * test from top, and 6.1's verifier then walked the full stack's
	 * impossible branch (top in [128, 127]) with fr NULL. */
	barrier_var(fr);
	return fr;
}

static __always_inline void shadow_stack_commit(struct cmon_shadow_stack *ss) { ss->depth++; }

/* The top frame when it is SLOT's, else NULL (its entry was not recorded:
 * the call began before attach, or the stack was full). */
static __always_inline struct cmon_frame *shadow_stack_top(struct cmon_shadow_stack *ss, __u64 slot)
{
	__u32 top = ss->depth;
	struct cmon_frame *fr;

	if (top == 0 || top > CMON_STACK_DEPTH)
		return NULL;
	fr = &ss->frames[(top - 1) & SHADOW_STACK_MASK];
	return fr->slot == slot ? fr : NULL;
}

static __always_inline void shadow_stack_pop(struct cmon_shadow_stack *ss)
{
	__u32 top = ss->depth;

	if (top == 0 || top > CMON_STACK_DEPTH)
		return;
	if ((ss->frames[(top - 1) & SHADOW_STACK_MASK].flags & CMON_FRAME_FOCUS) && (ss->focus & 0xffff))
		ss->focus--;
	ss->depth = top - 1;
}

struct keyed_release_ctx {
	struct task_struct *task;
	__u32 tgid;
};

static long keyed_release_one(struct bpf_map *map, struct cmon_stack_key *k,
			      struct cmon_shadow_stack *ss, struct keyed_release_ctx *c)
{
	if (k->tgid != c->tgid)
		return 0;
	shadow_stack_unwind(c->task, ss, ~0ULL, true);
	bpf_map_delete_elem(map, k);
	return 0;
}

/*
 * TASK's process is gone (its last thread exits) or replaced (exec): the
 * calls pending on its coroutine stacks and goroutines never returned,
 * exactly as a thread's own (shadow_stack_release).  A walk of the map,
 * once a process: not on any call's path.
 */
static __always_inline void keyed_stacks_release(struct task_struct *task)
{
	struct keyed_release_ctx c = { .task = task, .tgid = (__u32)task->tgid };

	if (!targ_keyed_stacks)
		return;
	bpf_for_each_map_elem(&coro_stacks, keyed_release_one, &c, 0);
	if (targ_stack_switch)
		bpf_map_delete_elem(&stack_regions, &c.tgid);
}

struct quiet_ctx {
	struct cmon_shadow_stack *ss;
};

static long quiet_step(__u64 i, void *data)
{
	struct cmon_shadow_stack *ss = ((struct quiet_ctx *)data)->ss;

	if (i >= ss->depth || i >= CMON_STACK_DEPTH)
		return 1;
	ss->frames[i & SHADOW_STACK_MASK].flags |= CMON_FRAME_QUIET;
	return 0;
}

/*
 * PARENT forked CHILD (a followed process) inside a --focus function: the
 * child runs on a copy of that stack, inside the function too.  It starts
 * with a copy of the parent's pending frames, silent (those calls are the
 * parent's: the child's returns from them write nothing), so the focus
 * holds until the child returns from the function, and the child's calls
 * have their depth.  Outside a focus nothing is copied: a child's shadow
 * stack starts empty.
 */
static __always_inline void shadow_stack_fork(struct task_struct *parent, struct task_struct *child)
{
	struct cmon_shadow_stack *ps = bpf_task_storage_get(&stacks, parent, 0, 0);
	struct quiet_ctx c;

	if (!ps || !(ps->focus & 0xffff))
		return;
	c.ss = bpf_task_storage_get(&stacks, child, ps, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (c.ss)
		bpf_loop(CMON_STACK_DEPTH, quiet_step, &c, 0);
}

/* TASK is going away: whatever it still had pending never returned. */
static __always_inline void shadow_stack_release(struct task_struct *task)
{
	struct cmon_shadow_stack *ss = bpf_task_storage_get(&stacks, task, 0, 0);

	if (!ss)
		return;
	shadow_stack_unwind(task, ss, ~0ULL, true);
	bpf_task_storage_delete(&stacks, task);
}

#endif
