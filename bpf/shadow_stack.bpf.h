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
 */
#ifndef CMON_SHADOW_STACK_BPF_H
#define CMON_SHADOW_STACK_BPF_H

#include "cmon_abi.h"

/* Task-local: no thread table to fill, freed with the task. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cmon_shadow_stack);
} stacks SEC(".maps");

#define SHADOW_STACK_MASK (CMON_STACK_DEPTH - 1)

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

/* The next free frame, or NULL when CMON_STACK_DEPTH calls are pending.
 * The caller fills it and then calls shadow_stack_commit. */
static __always_inline struct cmon_frame *shadow_stack_reserve(struct cmon_shadow_stack *ss)
{
	__u32 top = ss->depth;

	if (top >= CMON_STACK_DEPTH)
		return NULL;
	return &ss->frames[top & SHADOW_STACK_MASK];
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
