/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * expr.bpf.h: --if and --on-change in the kernel: run a function's
 * postfix program (cmon_abi.h: struct cmon_expr_prog, compiled by
 * user/filter/expr.c) on the call's arguments, return value and latency,
 * before anything is written or aggregated.
 *
 * One instruction per bpf_loop step: the verifier checks the step once,
 * and the loop is bounded by CMON_EXPR_MAX_OPS.  Every stack index is
 * masked, every memory read is a probe read (a fault reads as 0).  A
 * program that misbehaves (cannot happen from the compiler) keeps the
 * record: nothing is dropped by a bug.
 */
#ifndef CMON_EXPR_BPF_H
#define CMON_EXPR_BPF_H

#include "cmon_abi.h"

const volatile bool targ_expr = false; /* any function has an --if or --on-change program */

/* By func_id * 2 + (0: --if, 1: --on-change); sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_expr_prog);
} expr_progs SEC(".maps");

/* --on-change: the last value written, per (process, function). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* user space sets 1 when no --on-change */
	__type(key, struct cmon_change_key);
	__type(value, __u64);
} change_last SEC(".maps");

/* A run's state.  No pointer in it: a pointer stored in a map value reads
 * back as a number. */
struct expr_ctx {
	__u64 args[CMON_MAX_ARGS];
	__u64 ret, lat;
	__u64 st[CMON_EXPR_STACK];
	__u64 buf[(CMON_EXPR_STR_MAX + 8) / 8];
	__u32 sp;
	__u32 bad;
};

/* What each bpf_loop step gets: the program and the state. */
struct expr_loop {
	const struct cmon_expr_prog *prog;
	struct expr_ctx *c;
};

/*
 * The state of a run in this CPU's slot, not on the stack: verifiers before
 * Linux 6.7 check a bpf_loop callback once, with the values the caller had
 * left on its stack (sp 0, an empty stack), and hard-wire the branches they
 * then never took (a comparison always "misbehaved" on 6.1: every call
 * kept); a map value's contents are unknown to them.  And 184 bytes less
 * on a chain of calls (6.1: 512 bytes in all; cmon_exit's tail-call loop
 * reached 544).  Sleepable programs (fetch.bpf.h: only with the user
 * dynptr kfuncs, far newer than 6.1) keep it on their stack: they may
 * sleep in a read, and another thread's run on this CPU would take the
 * slot.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct expr_ctx);
} expr_scratch SEC(".maps");

_Static_assert((CMON_EXPR_STACK & (CMON_EXPR_STACK - 1)) == 0, "a power of two");
_Static_assert((CMON_EXPR_MAX_OPS & (CMON_EXPR_MAX_OPS - 1)) == 0, "a power of two");

static __always_inline __u64 expr_ext(__u64 v, __u32 size, bool is_signed)
{
	__u32 shift;

	if (size == 0 || size >= 8)
		return v;
	shift = 64 - 8 * size;
	return is_signed ? (__u64)((__s64)(v << shift) >> shift) : (v << shift) >> shift;
}

static __always_inline bool expr_cmp(__u8 op, __u64 a, __u64 b, bool is_signed)
{
	__s64 sa = (__s64)a, sb = (__s64)b;

	switch (op) {
	case CMON_OP_EQ: return a == b;
	case CMON_OP_NE: return a != b;
	case CMON_OP_LT: return is_signed ? sa < sb : a < b;
	case CMON_OP_LE: return is_signed ? sa <= sb : a <= b;
	case CMON_OP_GT: return is_signed ? sa > sb : a > b;
	default: return is_signed ? sa >= sb : a >= b; /* CMON_OP_GE */
	}
}

extern int bpf_copy_from_user_str(void *dst, __u32 dst__sz, const void *unsafe_ptr__ign,
				  __u64 flags) __ksym __weak;

/* A sleepable program (trace with fault-in, fetch.bpf.h) reads the string
 * as its record does, faulting its page in: a string the program had not
 * touched yet read as a fault, and compared unequal to the very value the
 * record then showed. */
#ifdef CMON_FETCH_BPF_H
const volatile bool targ_copy_str = true; /* the kernel has bpf_copy_from_user_str */
#define EXPR_FAULT_IN (targ_sleepable && targ_copy_str)
#define EXPR_ON_STACK targ_sleepable
#else
#define EXPR_FAULT_IN false
#define EXPR_ON_STACK false
#endif

/* The user string at ADDR equals constant IDX of the program. */
static __always_inline bool expr_str_eq(const struct cmon_expr_prog *prog, struct expr_ctx *c,
					__u64 addr, __s64 idx)
{
	const __u64 *k = (const __u64 *)prog->strs[idx & (CMON_EXPR_MAX_STRS - 1)];

	for (int w = 0; w < (CMON_EXPR_STR_MAX + 8) / 8; w++)
		c->buf[w] = 0;
	/* One byte more than a constant can hold: a longer string differs. */
	if ((EXPR_FAULT_IN ? bpf_copy_from_user_str(c->buf, CMON_EXPR_STR_MAX + 2, (void *)addr, 0)
			   : bpf_probe_read_user_str(c->buf, CMON_EXPR_STR_MAX + 2, (void *)addr)) <= 0)
		return false;
	for (int w = 0; w < (CMON_EXPR_STR_MAX + 8) / 8; w++)
		if (c->buf[w] != k[w])
			return false;
	return true;
}

static long expr_step(__u64 i, void *data)
{
	const struct expr_loop *l = data;
	const struct cmon_expr_prog *prog = l->prog;
	struct expr_ctx *c = l->c;
	const struct cmon_expr_insn *in;
	__u32 sp = c->sp;
	__u64 v = 0, a, b;
	__u32 n;

	if (i >= prog->n)
		return 1;
	in = &prog->insns[i & (CMON_EXPR_MAX_OPS - 1)];
	switch (in->op) {
	case CMON_OP_ARG:
		v = expr_ext(c->args[(__u64)in->imm < CMON_MAX_ARGS ? in->imm : 0], in->size,
			     in->is_signed);
		goto push;
	case CMON_OP_RET:
		v = expr_ext(c->ret, in->size, in->is_signed);
		goto push;
	case CMON_OP_LAT:
		v = c->lat;
		goto push;
	case CMON_OP_CONST:
		v = (__u64)in->imm;
		goto push;
	case CMON_OP_LOAD:
		if (sp == 0)
			goto bad;
		a = c->st[(sp - 1) & (CMON_EXPR_STACK - 1)] + (__u64)in->imm;
		n = in->size;
		if (n == 0) {
			v = a; /* an address: a char array in a struct */
		} else {
			if (n > 8)
				n = 8;
			if (EXPR_FAULT_IN ? bpf_copy_from_user(&v, n, (void *)a)
					  : bpf_probe_read_user(&v, n, (void *)a))
				v = 0;
			v = expr_ext(v, n, in->is_signed);
		}
		c->st[(sp - 1) & (CMON_EXPR_STACK - 1)] = v;
		return 0;
	case CMON_OP_STR_EQ:
		if (sp == 0)
			goto bad;
		a = c->st[(sp - 1) & (CMON_EXPR_STACK - 1)];
		c->st[(sp - 1) & (CMON_EXPR_STACK - 1)] = expr_str_eq(prog, c, a, in->imm);
		return 0;
	case CMON_OP_NOT:
		if (sp == 0)
			goto bad;
		a = c->st[(sp - 1) & (CMON_EXPR_STACK - 1)];
		c->st[(sp - 1) & (CMON_EXPR_STACK - 1)] = !a;
		return 0;
	default: /* binary */
		if (sp < 2 || in->op < CMON_OP_EQ || in->op > CMON_OP_OR)
			goto bad;
		a = c->st[(sp - 2) & (CMON_EXPR_STACK - 1)];
		b = c->st[(sp - 1) & (CMON_EXPR_STACK - 1)];
		if (in->op == CMON_OP_AND)
			v = a && b;
		else if (in->op == CMON_OP_OR)
			v = a || b;
		else
			v = expr_cmp(in->op, a, b, in->is_signed);
		c->st[(sp - 2) & (CMON_EXPR_STACK - 1)] = v;
		c->sp = sp - 1;
		return 0;
	}
push:
	if (sp >= CMON_EXPR_STACK)
		goto bad;
	c->st[sp & (CMON_EXPR_STACK - 1)] = v;
	c->sp = sp + 1;
	return 0;
bad:
	c->bad = 1;
	return 1;
}

/* Run PROG on state C; false when it misbehaved (*OUT not set). */
static __always_inline bool expr_go(struct expr_ctx *c, const struct cmon_expr_prog *prog,
				    const __u64 *args, __u64 ret, __u64 lat, __u64 *out)
{
	struct expr_loop l = { .prog = prog, .c = c };

	__builtin_memcpy(c->args, args, sizeof(c->args));
	c->ret = ret;
	/* The function's own time, as the records' latency_ns shows it. */
	c->lat = lat > prog->lat_bias_ns ? lat - prog->lat_bias_ns : 0;
	c->sp = 0;
	c->bad = 0;
	bpf_loop(CMON_EXPR_MAX_OPS, expr_step, &l, 0);
	if (c->bad || c->sp != 1)
		return false;
	*out = c->st[0];
	return true;
}

/* Out of line, both: the state is not on the probe's frame (512 bytes in
 * all), and the per-CPU one's frame holds no room for the other's. */
static __noinline bool expr_run_percpu(const struct cmon_expr_prog *prog, const __u64 *args,
				       __u64 ret, __u64 lat, __u64 *out)
{
	__u32 zero = 0;
	struct expr_ctx *c = bpf_map_lookup_elem(&expr_scratch, &zero);

	return c && expr_go(c, prog, args, ret, lat, out);
}

static __noinline bool expr_run_stack(const struct cmon_expr_prog *prog, const __u64 *args,
				      __u64 ret, __u64 lat, __u64 *out)
{
	struct expr_ctx c;

	return expr_go(&c, prog, args, ret, lat, out);
}

/* Run PROG; false when it misbehaved (*OUT not set). */
static __always_inline bool expr_run(const struct cmon_expr_prog *prog, const __u64 *args,
				     __u64 ret, __u64 lat, __u64 *out)
{
	if (EXPR_ON_STACK)
		return expr_run_stack(prog, args, ret, lat, out);
	return expr_run_percpu(prog, args, ret, lat, out);
}

enum expr_verdict {
	EXPR_KEEP = 0,      /* write (or count) the call */
	EXPR_FILTERED = 1,  /* --if was false */
	EXPR_UNCHANGED = 2, /* --on-change: the same value as the last one */
};

/*
 * Decide FUNC_ID's call in process PID at this stage (AT_EXIT: the return,
 * RET and LAT valid; else the entry, or an entry-only record).  RETURNED
 * false at the exit stage: the call never returned, so a condition on
 * ret or latency_ns cannot hold.  Programs of the other stage keep it.
 */
static __always_inline enum expr_verdict expr_decide(__u32 func_id, __u32 pid, const __u64 *args,
						     __u64 ret, __u64 lat, bool at_exit,
						     bool returned)
{
	struct cmon_change_key key = { .pid = pid, .func_id = func_id };
	const struct cmon_expr_prog *p;
	__u32 k = func_id * 2;
	__u64 v = 1, *last;

	p = bpf_map_lookup_elem(&expr_progs, &k);
	if (p && p->n && !!(p->flags & CMON_EXPR_AT_EXIT) == at_exit) {
		if (at_exit && !returned)
			return EXPR_FILTERED;
		if (expr_run(p, args, ret, lat, &v) && !v)
			return EXPR_FILTERED;
	}
	k++;
	p = bpf_map_lookup_elem(&expr_progs, &k);
	if (!p || !p->n || !!(p->flags & CMON_EXPR_AT_EXIT) != at_exit)
		return EXPR_KEEP;
	if (at_exit && !returned)
		return EXPR_KEEP; /* no value to compare: written */
	if (!expr_run(p, args, ret, lat, &v))
		return EXPR_KEEP;
	last = bpf_map_lookup_elem(&change_last, &key);
	if (last && *last == v)
		return EXPR_UNCHANGED;
	bpf_map_update_elem(&change_last, &key, &v, BPF_ANY);
	return EXPR_KEEP;
}

/*
 * A call verdict EV left out, counted: the one place every program counts
 * one.  FILTERED and UNCHANGED are the program's counters for EXPR_FILTERED
 * and EXPR_UNCHANGED (NULL: it has none).  SHARED: counters the CPUs share
 * (profile's per-process values), added atomically; per-CPU ones plainly.
 */
static __always_inline void expr_count(enum expr_verdict ev, __u64 *filtered, __u64 *unchanged,
				       bool shared)
{
	__u64 *c = ev == EXPR_FILTERED ? filtered : ev == EXPR_UNCHANGED ? unchanged : NULL;

	if (!c)
		return;
	if (shared)
		__sync_fetch_and_add(c, 1);
	else
		(*c)++;
}

/* The same for a function's per-CPU stats (trace, capture, --py). */
static __always_inline void expr_count_stats(struct cmon_func_stats *st, enum expr_verdict ev)
{
	if (st)
		expr_count(ev, &st->filtered, &st->unchanged, false);
}

#endif
