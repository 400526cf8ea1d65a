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

/* SLEEPABLE: faults the page in (a sleepable program's). */
static __always_inline int read_user(void *dst, __u32 size, __u64 addr, bool sleepable)
{
	if (sleepable)
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

/* A plan's run, in and out.  The dynptr runners are global functions,
 * verified once, alone, not again on each call site's every path (static,
 * the plan's loop took cmon_entry to 983,034 of the verifier's million
 * instructions): their arguments are values, or memory of a size the
 * verifier checks at the call.  The chunked runner (kernels without the
 * user dynptr kfuncs) stays static: 6.1 adds a global function's stack to
 * its callers' 512 bytes. */
struct fetch_call {
	__u64 sp;  /* the call's return-address slot */
	__u64 tag; /* its entry time; 0 at entry */
	__u64 ts;  /* out: the record's time */
};

/* At the return: the argument registers the call was entered with. */
struct fetch_args {
	__u64 v[CMON_MAX_ARGS];
};

/* At the return: the argument registers given back their entry values
 * (struct cmon_fetch_plan's entry_regs). */
static __always_inline void fetch_entry_regs(__u64 r[16], __u32 m, const __u64 *entry_args)
{
	for (int i = 0; i < CMON_MAX_ARGS; i++)
		if (m >> (24 + i) & 1)
			r[(m >> (4 * i)) & 15] = entry_args[i];
}

/* Entry argument K: its bound checked on the register that indexes (the
 * compiler would test one copy and index with another, a global function's
 * verifier seeing an index of up to 255 into 6). */
static __always_inline __u64 entry_arg(const __u64 *entry_args, __u32 k)
{
	barrier_var(k);
	if (k >= CMON_MAX_ARGS)
		return 0;
	return entry_args[k];
}

/* Where item IT reads: its base (a register, the stack pointer SP, an
 * entry argument, an earlier item's address in ADDRS), its offset, and
 * the pointer there when it is dereferenced.  0: a fault (*FAULT). */
static __always_inline __u64 item_addr(const __u64 *r, const __u64 *addrs, struct cmon_fetch *it,
				       __u64 sp, const __u64 *entry_args, bool sleepable,
				       bool *fault)
{
	__u64 addr, val;

	*fault = false;
	if (it->base == CMON_BASE_REG)
		addr = r[it->reg & 15];
	else if (it->base == CMON_BASE_SP)
		addr = sp;
	else if (it->base == CMON_BASE_ENTRY_ARG)
		addr = entry_args ? entry_arg(entry_args, it->reg) : 0;
	else
		addr = addrs[it->base_item & (CMON_MAX_FETCH - 1)];
	addr += it->off;
	if (it->deref) {
		if (read_user(&val, sizeof(val), addr, sleepable) || !val) {
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
 * kfuncs, faulting pages in when SLEEPABLE.  Its two global functions
 * below: a sleepable program's and the others' (the verifier refuses a
 * global function that holds a sleepable call, reachable or not, in a
 * program that may not sleep). */
static __always_inline int fetch_plan_body(struct pt_regs *regs, __u32 func_id, __u32 at_return,
					   struct fetch_call *c, const struct fetch_args *ea,
					   bool sleepable)
{
	const __u64 *entry_args;
	__u64 sp;
	__u32 key = func_id * 2 + at_return, off, n = 0,
	      total = sizeof(struct cmon_capture_rec);
	__u64 addrs[CMON_MAX_FETCH] = {};
	struct cmon_capture_batch *staged;
	struct cmon_fetch_plan *plan;
	struct bpf_dynptr ptr;
	__u64 r[16];
	bool cut, fault;

	if (!c)
		return -1;
	c->ts = 0;
	sp = c->sp;
	entry_args = ea ? ea->v : NULL;
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
		addr = item_addr(r, addrs, it, sp, entry_args, sleepable, &fault);
		addrs[i & (CMON_MAX_FETCH - 1)] = addr;
		if (fault) {
			item.flags |= CMON_ITEM_FAULT;
			goto written;
		}
		if (it->kind == CMON_FETCH_STR) {
			got = sleepable ?
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
			got = sleepable ?
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
	fetch_finish(&ptr, staged, func_id, at_return, n, off, c->tag, &c->ts);
	return 0;
}

__noinline int fetch_plan_faulting(struct pt_regs *regs, __u32 func_id, __u32 at_return,
				   struct fetch_call *c, const struct fetch_args *ea)
{
	/* Before 6.7 every global function is verified, called or not: the
	 * kfuncs this kernel lacks or this program may not call are not
	 * seen, nor does the body's stack count in its callers' 512 bytes
	 * (6.1 sums a global function's in). */
	if (!targ_read_dynptr || !targ_sleepable)
		return -1;
	return fetch_plan_body(regs, func_id, at_return, c, ea, true);
}

__noinline int fetch_plan_resident(struct pt_regs *regs, __u32 func_id, __u32 at_return,
				   struct fetch_call *c, const struct fetch_args *ea)
{
	if (!targ_read_dynptr) /* (as fetch_plan_faulting's) */
		return -1;
	return fetch_plan_body(regs, func_id, at_return, c, ea, false);
}

/* A bpf_loop step's item index I (checked below CMON_MAX_FETCH), masked:
 * the compiler would leave the mask out as redundant, and 6.1's verifier
 * then sees the index unbounded when it is read back from the stack. */
static __always_inline __u64 fetch_index(__u64 i)
{
	barrier_var(i);
	return i & (CMON_MAX_FETCH - 1);
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
		     round8(item_size(st->r, &plan->items[fetch_index(i)], &cut));
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
	i = fetch_index(i);
	it = &plan->items[i];
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
			 st->has_entry_args ? st->entry_args : NULL, false, &fault);
	st->addrs[i] = addr;
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

/* fetch_plan_body where the user dynptr kfuncs are missing: the plan's
 * items read 4 KiB at a time through this CPU's chunk. */
static __noinline int fetch_plan_chunked(struct pt_regs *regs, __u32 func_id, __u32 at_return,
				  struct fetch_call *c, const struct fetch_args *ea)
{
	struct fetch_state *st = fetch_state_get();
	struct cmon_capture_batch *staged;
	struct cmon_fetch_plan *plan;
	struct fetch_walk w;
	struct bpf_dynptr ptr;
	__u32 key = func_id * 2 + at_return, total, n;

	if (!c || !st)
		return -1;
	c->ts = 0;
	plan = bpf_map_lookup_elem(&fetch_plans, &key);
	if (!plan || !plan->n)
		return 1;
	n = plan->n;
	dwarf_regs(regs, st->r);
	st->key = key;
	st->sp = c->sp;
	st->has_entry_args = ea != NULL;
	if (ea) {
		for (int i = 0; i < CMON_MAX_ARGS; i++)
			st->entry_args[i] = ea->v[i];
		if (plan->entry_regs)
			fetch_entry_regs(st->r, plan->entry_regs, ea->v);
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
	fetch_finish(&ptr, staged, func_id, at_return, st->n, st->off, c->tag, &c->ts);
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
	const struct fetch_args *ea = (const struct fetch_args *)entry_args;
	struct fetch_call c = { .sp = sp, .tag = tag };
	int err;

	if (!targ_read_dynptr)
		err = fetch_plan_chunked(regs, func_id, at_return, &c, ea);
	else if (targ_sleepable)
		err = fetch_plan_faulting(regs, func_id, at_return, &c, ea);
	else
		err = fetch_plan_resident(regs, func_id, at_return, &c, ea);
	*ts_out = c.ts;
	return err;
}

#endif
