/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fetch.bpf.h: run a function's fetch plan (cmon_abi.h) and write what it reads
 * as one capture record, sized to what the plan can read, straight into the
 * ring buffer through a dynptr: no per-CPU scratch buffer, so the program
 * may sleep.  Loaded sleepable (targ_sleepable), it faults in pages that are
 * not resident (bpf_copy_from_user*); otherwise it reads what is resident.
 */
#ifndef CMON_FETCH_BPF_H
#define CMON_FETCH_BPF_H

#include "cmon_abi.h"
#include "capture_staging.bpf.h"

const volatile bool targ_capture = false;   /* any function has a plan */
const volatile bool targ_sleepable = false; /* programs loaded sleepable */
/* The kernel has the user dynptr reads below (probe/host.h): else items
 * are read through a per-CPU chunk (fetch_plan_chunked), never sleepable. */
const volatile bool targ_read_dynptr = true;

extern int bpf_copy_from_user_dynptr(const struct bpf_dynptr *dptr, __u64 off, __u64 size,
				     const void *unsafe_ptr) __ksym __weak;
extern int bpf_copy_from_user_str_dynptr(const struct bpf_dynptr *dptr, __u64 off, __u64 size,
					 const void *unsafe_ptr) __ksym __weak;
extern int bpf_probe_read_user_dynptr(const struct bpf_dynptr *dptr, __u64 off, __u64 size,
				      const void *unsafe_ptr) __ksym __weak;
extern int bpf_probe_read_user_str_dynptr(const struct bpf_dynptr *dptr, __u64 off, __u64 size,
					  const void *unsafe_ptr) __ksym __weak;

/* Plans by func_id * 2 + at_return; sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cmon_fetch_plan);
} fetch_plans SEC(".maps");

/* The registers by DWARF x86-64 number, copied once: the verifier allows
 * only constant offsets into the context. */
static __always_inline void dwarf_regs(struct pt_regs *regs, __u64 r[16])
{
	r[0] = regs->ax;
	r[1] = regs->dx;
	r[2] = regs->cx;
	r[3] = regs->bx;
	r[4] = regs->si;
	r[5] = regs->di;
	r[6] = regs->bp;
	r[7] = regs->sp;
	r[8] = regs->r8;
	r[9] = regs->r9;
	r[10] = regs->r10;
	r[11] = regs->r11;
	r[12] = regs->r12;
	r[13] = regs->r13;
	r[14] = regs->r14;
	r[15] = regs->r15;
}

static __always_inline int read_user(void *dst, __u32 size, __u64 addr)
{
	if (targ_sleepable)
		return bpf_copy_from_user(dst, size, (void *)addr);
	return bpf_probe_read_user(dst, size, (void *)addr);
}

static __always_inline __u32 round8(__u32 v) { return (v + 7) & ~7u; }

#define FETCH_CHUNK 4096u

/* Kernels without the user dynptr kfuncs (never sleepable there, their
 * uprobe programs run with preemption off): a plan's walk keeps its state
 * in this CPU's slot, items one bpf_loop step each, reads one chunk a step.
 * Values loaded from a map carry no ranges from one step to the next: kept
 * on the stack, a plan of 16 items with chunked reads took 6.1's verifier
 * (and 6.18's) past its million instructions. */
struct fetch_state {
	__u64 r[16];
	__u64 addrs[CMON_MAX_FETCH];
	__u64 entry_args[CMON_MAX_ARGS];
	__u64 sp;
	__u32 key, has_entry_args, off, total, n;
	/* the item being read: SIZE bytes at user ADDR to OFF, DONE so far */
	__u64 addr, done, size;
	__u32 item_off, str;
	long ret;
	char chunk[FETCH_CHUNK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fetch_state);
} fetch_state SEC(".maps");

static __always_inline struct fetch_state *fetch_state_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&fetch_state, &zero);
}

/* The bpf_loop steps' context: the record being written. */
struct fetch_walk {
	struct bpf_dynptr *ptr;
};

/* One chunk of an item's read: what bpf_probe_read_user[_str]_dynptr do.
 * A string stops at its NUL: ret is its length with the NUL (SIZE when
 * cut, the last byte then a NUL); bytes: 0; < 0 on a fault. */
static long chunk_step(__u64 i, void *ctx)
{
	struct fetch_walk *w = ctx;
	struct fetch_state *st = fetch_state_get();
	__u64 done, size, n;
	long got;

	if (!st)
		return 1;
	done = st->done;
	size = st->size;
	if (done >= size || size > CMON_ITEM_MAX + 2)
		return 1;
	n = size - done;
	if (n > FETCH_CHUNK)
		n = FETCH_CHUNK;
	/* the bound on the very register passed (clang passed a copy) */
	barrier_var(n);
	if (n > FETCH_CHUNK || !n)
		return 1;
	if (!st->str) {
		got = bpf_probe_read_user(st->chunk, n, (void *)(st->addr + done));
		if (got) {
			st->ret = got;
			return 1;
		}
		bpf_dynptr_write(w->ptr, st->item_off + done, st->chunk, n, 0);
		st->done = done + n;
		if (done + n >= size)
			st->ret = 0;
		return 0;
	}
	got = bpf_probe_read_user_str(st->chunk, n, (void *)(st->addr + done));
	barrier_var(got);
	if (got <= 0 || got > FETCH_CHUNK) {
		st->ret = got ? got : -1;
		return 1;
	}
	/* A NUL inside, or the end: done.  A full chunk ends with the NUL the
	 * helper put in place of a byte: that byte is read again. */
	if (got < n || done + n >= size) {
		bpf_dynptr_write(w->ptr, st->item_off + done, st->chunk, (__u32)got, 0);
		st->ret = done + got;
		return 1;
	}
	/* got == n here; got's bounds are the ones 6.1's verifier kept */
	bpf_dynptr_write(w->ptr, st->item_off + done, st->chunk, got - 1, 0);
	st->done = done + got - 1;
	return 0;
}

/* The bytes item IT may read: its size, cut by its length register. */
static __always_inline __u32 item_size(const __u64 *r, struct cmon_fetch *it, bool *cut)
{
	__u64 size = it->size, want;

	*cut = false;
	if (it->kind == CMON_FETCH_REG)
		return 8;
	if (it->len_reg >= 0) {
		want = r[it->len_reg & 15] * (it->elem_size ? it->elem_size : 1);
		if (want < size)
			size = want;
		else if (want > size)
			*cut = true;
	}
	if (it->kind == CMON_FETCH_STR)
		size += 2; /* one byte past the cap, and the NUL: a longer string
			    * reads cap + 1 characters, one that fits at most cap */
	/* plans hold at most CMON_ITEM_MAX bytes an item; + 2 so that a cut is
	 * seen at the largest string cap too */
	return size > CMON_ITEM_MAX + 2 ? CMON_ITEM_MAX + 2 : (__u32)size;
}

/* run_fetch_plan's arguments past the fifth, which a BPF call cannot pass. */
struct fetch_call {
	__u64 tag;
	__u64 *ts_out;
	const __u64 *entry_args;
};

/* At the return: the argument registers given back their entry values
 * (struct cmon_fetch_plan's entry_regs). */
static __always_inline void fetch_entry_regs(__u64 r[16], __u32 m, const __u64 *entry_args)
{
	for (int i = 0; i < CMON_MAX_ARGS; i++)
		if (m >> (24 + i) & 1)
			r[(m >> (4 * i)) & 15] = entry_args[i];
}

/* Where item IT reads: its base (a register, the stack pointer SP, an
 * entry argument, an earlier item's address in ADDRS), its offset, and
 * the pointer there when it is dereferenced.  0: a fault (*FAULT). */
static __always_inline __u64 item_addr(const __u64 *r, const __u64 *addrs, struct cmon_fetch *it,
				       __u64 sp, const __u64 *entry_args, bool *fault)
{
	__u64 addr, val;

	*fault = false;
	if (it->base == CMON_BASE_REG)
		addr = r[it->reg & 15];
	else if (it->base == CMON_BASE_SP)
		addr = sp;
	else if (it->base == CMON_BASE_ENTRY_ARG)
		addr = entry_args && it->reg < CMON_MAX_ARGS ? entry_args[it->reg & 7] : 0;
	else
		addr = addrs[it->base_item & (CMON_MAX_FETCH - 1)];
	addr += it->off;
	if (it->deref) {
		if (read_user(&val, sizeof(val), addr) || !val) {
			*fault = true;
			return 0;
		}
		addr = val + it->deref_off;
	}
	if (!addr)
		*fault = true;
	return addr;
}

/* A record of TOTAL bytes in PTR: in this CPU's batch when it may (*STAGED),
 * else in the ring buffer.  < 0 when neither has room. */
static __always_inline int fetch_reserve(__u32 total, struct bpf_dynptr *ptr,
					 struct cmon_capture_batch **staged)
{
	*staged = capbatch_take(total);
	if (*staged) {
		__u32 at = (*staged)->len, size = total;

		/* The verifier's bound (no change: capbatch_take took less),
		 * hidden from the compiler, which would drop it. */
		barrier_var(size);
		size &= CMON_CAPBATCH_REC_MAX - 1;
		if (at > CMON_CAPBATCH_BYTES ||
		    bpf_dynptr_from_mem((*staged)->data + at, size, 0, ptr)) {
			capbatch_release(*staged);
			return -1; /* never: capbatch_take made room */
		}
		return 0;
	}
	if (!bpf_ringbuf_reserve_dynptr(&events, total, 0, ptr))
		return 0;
	bpf_ringbuf_discard_dynptr(ptr, 0); /* even a failed one */
	if (targ_block_ns && room_wait(total)) {
		if (!bpf_ringbuf_reserve_dynptr(&events, total, 0, ptr))
			return 0;
		bpf_ringbuf_discard_dynptr(ptr, 0);
	}
	return -1;
}

/* The record's header (N items in OFF bytes), and the record sent. */
static __always_inline void fetch_finish(struct bpf_dynptr *ptr, struct cmon_capture_batch *staged,
					 __u32 func_id, __u32 at_return, __u32 n, __u32 off,
					 __u64 tag, __u64 *ts_out)
{
	struct cmon_capture_rec hdr = {};

	*ts_out = tag ? tag : bpf_ktime_get_ns();
	hdr.type = CMON_REC_CAPTURE;
	hdr.ts_entry_ns = *ts_out;
	hdr.tid = (__u32)bpf_get_current_pid_tgid();
	hdr.func_id = func_id;
	hdr.at_return = at_return;
	hdr.n = n;
	hdr.len = off - sizeof(hdr);
	bpf_dynptr_write(ptr, 0, &hdr, sizeof(hdr), 0);
	if (staged) {
		staged->len += off; /* a multiple of 8: header and items are */
		staged->n++;
		capbatch_release(staged);
	} else {
		bpf_ringbuf_submit_dynptr(ptr, BPF_RB_NO_WAKEUP);
	}
}

/* The plan's reads straight into the record through the user dynptr
 * kfuncs; out of line (a subprogram of its own stack frame): inlined, its
 * buffers and the staging's would take the exit program past BPF's 512
 * bytes. */
static __noinline int fetch_plan_run(struct pt_regs *regs, __u32 func_id, __u32 at_return,
				     __u64 sp, struct fetch_call *c)
{
	__u64 tag = c->tag, *ts_out = c->ts_out;
	const __u64 *entry_args = c->entry_args;
	__u32 key = func_id * 2 + at_return, off, n = 0,
	      total = sizeof(struct cmon_capture_rec);
	__u64 addrs[CMON_MAX_FETCH] = {};
	struct cmon_capture_batch *staged;
	struct cmon_fetch_plan *plan;
	struct bpf_dynptr ptr;
	__u64 r[16];
	bool cut, fault;

	*ts_out = 0;
	dwarf_regs(regs, r);
	plan = bpf_map_lookup_elem(&fetch_plans, &key);
	if (!plan || !plan->n)
		return 1;
	if (entry_args && plan->entry_regs)
		fetch_entry_regs(r, plan->entry_regs, entry_args);
	for (int i = 0; i < CMON_MAX_FETCH; i++) {
		if (i >= plan->n)
			break;
		total += sizeof(struct cmon_capture_item) + round8(item_size(r, &plan->items[i], &cut));
	}
	if (total > CMON_CAPTURE_MAX)
		total = CMON_CAPTURE_MAX;
	if (fetch_reserve(total, &ptr, &staged))
		return -1;
	off = sizeof(struct cmon_capture_rec);
	for (int i = 0; i < CMON_MAX_FETCH; i++) {
		struct cmon_capture_item item = {};
		struct cmon_fetch *it;
		__u64 addr, val;
		__u32 size;
		long got;

		if (i >= plan->n)
			break;
		it = &plan->items[i];
		size = item_size(r, it, &cut);
		if (off + sizeof(item) + round8(size) > total)
			break;
		if (it->kind == CMON_FETCH_REG) {
			val = r[it->reg & 15];
			bpf_dynptr_write(&ptr, off + sizeof(item), &val, sizeof(val), 0);
			item.len = 8;
			goto written;
		}
		addr = item_addr(r, addrs, it, sp, entry_args, &fault);
		addrs[i & (CMON_MAX_FETCH - 1)] = addr;
		if (fault) {
			item.flags |= CMON_ITEM_FAULT;
			goto written;
		}
		if (it->kind == CMON_FETCH_STR) {
			got = targ_sleepable ?
				bpf_copy_from_user_str_dynptr(&ptr, off + sizeof(item), size, (void *)addr) :
				bpf_probe_read_user_str_dynptr(&ptr, off + sizeof(item), size, (void *)addr);
			if (got <= 0) {
				item.flags |= CMON_ITEM_FAULT;
				goto written;
			}
			item.len = got - 1; /* the NUL */
			if (item.len > it->size) {
				item.len = it->size;
				item.flags |= CMON_ITEM_TRUNCATED;
			}
		} else {
			got = targ_sleepable ?
				bpf_copy_from_user_dynptr(&ptr, off + sizeof(item), size, (void *)addr) :
				bpf_probe_read_user_dynptr(&ptr, off + sizeof(item), size, (void *)addr);
			if (got) {
				item.flags |= CMON_ITEM_FAULT;
				goto written;
			}
			item.len = size;
			if (cut)
				item.flags |= CMON_ITEM_TRUNCATED;
		}
written:
		bpf_dynptr_write(&ptr, off, &item, sizeof(item), 0);
		off += sizeof(item) + round8(item.len);
		n++;
	}
	fetch_finish(&ptr, staged, func_id, at_return, n, off, tag, ts_out);
	return 0;
}

/* One item's size, added to the record's (fetch_plan_chunked). */
static long chunked_size_step(__u64 i, void *ctx)
{
	struct fetch_state *st = fetch_state_get();
	struct cmon_fetch_plan *plan;
	__u32 key;
	bool cut;

	if (!st)
		return 1;
	key = st->key;
	plan = bpf_map_lookup_elem(&fetch_plans, &key);
	if (!plan || i >= plan->n || i >= CMON_MAX_FETCH)
		return 1;
	st->total += sizeof(struct cmon_capture_item) +
		     round8(item_size(st->r, &plan->items[i & (CMON_MAX_FETCH - 1)], &cut));
	return 0;
}

/* One item read into the record (fetch_plan_chunked). */
static long chunked_item_step(__u64 i, void *ctx)
{
	struct fetch_walk *w = ctx;
	struct fetch_state *st = fetch_state_get();
	struct cmon_capture_item item = {};
	struct cmon_fetch_plan *plan;
	struct cmon_fetch *it;
	__u32 key, off, size;
	__u64 addr, val;
	bool cut, fault;
	long got;

	if (!st)
		return 1;
	key = st->key;
	plan = bpf_map_lookup_elem(&fetch_plans, &key);
	if (!plan || i >= plan->n || i >= CMON_MAX_FETCH)
		return 1;
	it = &plan->items[i & (CMON_MAX_FETCH - 1)];
	off = st->off;
	size = item_size(st->r, it, &cut);
	if (off + sizeof(item) + round8(size) > st->total)
		return 1;
	if (it->kind == CMON_FETCH_REG) {
		val = st->r[it->reg & 15];
		bpf_dynptr_write(w->ptr, off + sizeof(item), &val, sizeof(val), 0);
		item.len = 8;
		goto written;
	}
	addr = item_addr(st->r, st->addrs, it, st->sp,
			 st->has_entry_args ? st->entry_args : NULL, &fault);
	st->addrs[i & (CMON_MAX_FETCH - 1)] = addr;
	if (fault) {
		item.flags |= CMON_ITEM_FAULT;
		goto written;
	}
	st->addr = addr;
	st->done = 0;
	st->size = size;
	st->item_off = off + sizeof(item);
	st->str = it->kind == CMON_FETCH_STR;
	st->ret = -1;
	bpf_loop((CMON_ITEM_MAX + 2) / (FETCH_CHUNK - 1) + 1, chunk_step, w, 0);
	got = st->ret;
	if (it->kind == CMON_FETCH_STR) {
		if (got <= 0) {
			item.flags |= CMON_ITEM_FAULT;
			goto written;
		}
		item.len = got - 1; /* the NUL */
		if (item.len > it->size) {
			item.len = it->size;
			item.flags |= CMON_ITEM_TRUNCATED;
		}
	} else {
		if (got) {
			item.flags |= CMON_ITEM_FAULT;
			goto written;
		}
		item.len = size;
		if (cut)
			item.flags |= CMON_ITEM_TRUNCATED;
	}
written:
	bpf_dynptr_write(w->ptr, off, &item, sizeof(item), 0);
	st->off = off + sizeof(item) + round8(item.len);
	st->n++;
	return 0;
}

/* fetch_plan_run where the user dynptr kfuncs are missing: the plan's
 * items read 4 KiB at a time through this CPU's chunk. */
static __noinline int fetch_plan_chunked(struct pt_regs *regs, __u32 func_id, __u32 at_return,
					 __u64 sp, struct fetch_call *c)
{
	__u64 tag = c->tag, *ts_out = c->ts_out;
	const __u64 *entry_args = c->entry_args;
	struct fetch_state *st = fetch_state_get();
	struct cmon_capture_batch *staged;
	struct cmon_fetch_plan *plan;
	struct fetch_walk w;
	struct bpf_dynptr ptr;
	__u32 key = func_id * 2 + at_return, total, n;

	*ts_out = 0;
	if (!st)
		return -1;
	plan = bpf_map_lookup_elem(&fetch_plans, &key);
	if (!plan || !plan->n)
		return 1;
	n = plan->n;
	dwarf_regs(regs, st->r);
	st->key = key;
	st->sp = sp;
	st->has_entry_args = entry_args != NULL;
	if (entry_args) {
		for (int i = 0; i < CMON_MAX_ARGS; i++)
			st->entry_args[i] = entry_args[i];
		if (plan->entry_regs)
			fetch_entry_regs(st->r, plan->entry_regs, entry_args);
	}
	st->total = sizeof(struct cmon_capture_rec);
	bpf_loop(CMON_MAX_FETCH, chunked_size_step, NULL, 0);
	total = st->total;
	if (total > CMON_CAPTURE_MAX)
		total = CMON_CAPTURE_MAX;
	st->total = total;
	if (fetch_reserve(total, &ptr, &staged))
		return -1;
	w.ptr = &ptr;
	st->off = sizeof(struct cmon_capture_rec);
	st->n = 0;
	bpf_loop(n < CMON_MAX_FETCH ? n : CMON_MAX_FETCH, chunked_item_step, &w, 0);
	fetch_finish(&ptr, staged, func_id, at_return, st->n, st->off, tag, ts_out);
	return 0;
}

/*
 * Run the plan of FUNC_ID (at entry or at return) and submit a capture
 * record tagged with TAG, the call's entry time; at entry pass 0: the time
 * is taken after the reads (so a slow read does not count in the call's
 * latency) and returned in TS_OUT.  SLOT is the call's return-address slot,
 * the stack pointer at entry.  ENTRY_ARGS: at the return, the call's
 * argument registers at its entry (NULL at entry).  Returns 0, 1 when the
 * function has no plan, or -1 when the record could not be written (the
 * caller counts it lost).
 */
static __always_inline int run_fetch_plan(struct pt_regs *regs, __u32 func_id, __u32 at_return,
					   __u64 sp, __u64 tag, __u64 *ts_out,
					   const __u64 *entry_args)
{
	struct fetch_call c = { .tag = tag, .ts_out = ts_out, .entry_args = entry_args };

	if (!targ_read_dynptr)
		return fetch_plan_chunked(regs, func_id, at_return, sp, &c);
	return fetch_plan_run(regs, func_id, at_return, sp, &c);
}

#endif
