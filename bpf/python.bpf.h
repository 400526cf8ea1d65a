/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python.bpf.h: Python calls (--py), part of trace.bpf.c; it stands alone
 * (the ring and stats_of from events.bpf.h, break's counts from
 * break.bpf.h, task_wanted from filter.bpf.h, RSS from mem.bpf.h).
 *
 * Two ways in (cmon_abi.h, user/python/cpython.h):
 *  - the evaluator, _PyEval_EvalFrameDefault(tstate, frame, throwflag),
 *    which sees every Python call and resume once user space has set
 *    interp->eval_frame: cmon_py_eval (an uprobe session: a call not
 *    selected asks for no return probe) or cmon_py_entry + cmon_py_exit;
 *  - the vectorcall entry of the functions selected (3.12+): the nop just
 *    before _PyFunction_Vectorcall, which their `vectorcall` points at
 *    (cmon_py_vc, or cmon_py_vc_entry + cmon_py_exit), and the return of
 *    CPython's function constructors (cmon_py_newfunc), which points a new
 *    function there when its code object is selected.
 * A code object met for the first time is matched here against the --py
 * patterns' rows (targ_py_pats) and announced (cmon_py_code_rec) when
 * selected; what the rows cannot decide (a name that is not ASCII, a glob
 * in a module part) is PENDING: recorded while user space decides.  Entry
 * and return pair by the return-address slot, per thread, so recursion
 * pairs exactly.
 */
#ifndef CMON_PYTHON_BPF_H
#define CMON_PYTHON_BPF_H

#include "cmon_abi.h"
#include "break.bpf.h"
#include "events.bpf.h"
#include "filter.bpf.h"
#include "mem.bpf.h"

extern bool bpf_session_is_return(void) __ksym __weak;

const volatile struct cmon_py_offsets targ_py = {};

/* A launched interpreter's stops (cmon_py_proc.stop, user/python/cpython.c):
 * at its start (its libpython mapped, no Python run yet), and for the
 * eval_frame hook at its first Python call; each value is followed by
 * its "stopped" one. */
#define PY_STOP_AT_START 1
#define PY_STOP_AT_CALL 3


struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct cmon_py_proc);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct cmon_py_code_key);
	__type(value, struct cmon_py_verdict_val);
} py_code SEC(".maps");

/* 3.13: the classes a traced __init__ was called with, announced, by
 * (process, class): the version tag they had then (a class's next one, or
 * a class made at a freed one's address, is announced again). */
struct py_class_key {
	__u32 pid;
	__u32 pad;
	__u64 cls;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct py_class_key);
	__type(value, __u32);
} py_init_classes SEC(".maps");

/* Calls lost, per code object: user space names them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct cmon_py_code_key);
	__type(value, __u64);
} py_lost SEC(".maps");

static __always_inline void py_lose(__u32 pid, __u64 code)
{
	struct cmon_py_code_key k = { .pid = pid, .code = code };
	__u64 *v = bpf_map_lookup_elem(&py_lost, &k), one = 1;

	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&py_lost, &k, &one, BPF_NOEXIST);
}

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cmon_py_stack);
} py_stacks SEC(".maps");

/* Where one call's parameters are gathered (per CPU): their objects, or
 * for *args / **kw bound on the vectorcall entry (no object yet) a kind
 * and a length. */
struct py_bound {
	__u64 obj[CMON_PY_ALL_ARGS];
	__u64 names[CMON_PY_ALL_ARGS];
	__u32 len[CMON_PY_ALL_ARGS];
	__u8 kind[CMON_PY_ALL_ARGS];
	struct cmon_py_val more[CMON_PY_MORE_ARGS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_bound);
} py_bound SEC(".maps");

/* Calls made in followed children py_procs had no room for (past its
 * max_entries interpreters alive at once): not traced, counted here and
 * as lost (py_enter). */
__u64 py_procs_full = 0;

/* This process's interpreter; a followed child (fork) takes its parent's:
 * same addresses.  *FULL: a child of a traced interpreter, py_procs full. */
static __always_inline struct cmon_py_proc *py_proc(struct task_struct *task, __u32 pid,
						    bool *full)
{
	struct cmon_py_proc *p = bpf_map_lookup_elem(&py_procs, &pid), *pp;
	__u32 ppid;

	if (p)
		return p;
	ppid = (__u32)task->real_parent->tgid;
	pp = bpf_map_lookup_elem(&py_procs, &ppid);
	if (!pp || !task_wanted(task))
		return NULL;
	/* copied from the map value itself: a copy on the stack would cost
	 * its ~130 bytes in every call chain below (512 in all on 6.1) */
	if (bpf_map_update_elem(&py_procs, &pid, pp, BPF_NOEXIST)) {
		p = bpf_map_lookup_elem(&py_procs, &pid); /* another thread's */
		*full = !p;
		return p;
	}
	p = bpf_map_lookup_elem(&py_procs, &pid);
	if (p)
		p->stop = 0;
	return p;
}

/*
 * A traced interpreter, or a followed child of one, exec'd: none of the
 * old program's addresses hold.  Should the new program be the traced
 * interpreter (`subprocess.run([sys.executable, ...])`, a shell's
 * `python3 x.py`), its first probe stops it, as a launched one's start
 * (PY_STOP_AT_START); user space sets it up from the exec record.
 * (Another program: no probe of cmon's is in it; the entry goes with it.)
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(cmon_py_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = task->tgid, ppid = task->real_parent->tgid;
	struct cmon_py_proc *p = bpf_map_lookup_elem(&py_procs, &pid);
	struct cmon_py_exec_rec *r;

	if (!p) {
		struct cmon_py_proc *pp = bpf_map_lookup_elem(&py_procs, &ppid);

		/* a child: traced only when children are followed */
		if (!pp || !targ_follow || !task_wanted(task) ||
		    bpf_map_update_elem(&py_procs, &pid, pp, BPF_NOEXIST))
			return 0;
		p = bpf_map_lookup_elem(&py_procs, &pid);
		if (!p)
			return 0;
	}
	/* Stopped only when user space will know of it (else never let go):
	 * without room for the record it is left untraced. */
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		bpf_map_delete_elem(&py_procs, &pid);
		return 0;
	}
	p->stop = PY_STOP_AT_START;
	p->flags = 0;
	p->gil = 0;
	r->type = CMON_REC_PY_EXEC;
	r->pid = pid;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

/* The last thread of process TASK is gone: its interpreter's entry goes,
 * and user space is told (after its last record) to let go of it too: a
 * program forking thousands of children keeps maps as large as its live
 * ones. */
static __always_inline void py_exit(struct task_struct *task)
{
	__u32 pid = task->tgid;
	struct cmon_py_exit_rec *r;

	if (BPF_CORE_READ(task, signal, live.counter) || bpf_map_delete_elem(&py_procs, &pid))
		return;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r)
		return; /* (user space keeps what it knew of it) */
	r->type = CMON_REC_PY_EXIT;
	r->pid = pid;
	bpf_ringbuf_submit(r, 0);
}

static __always_inline void py_read_bytes(struct cmon_py_val *v, __u64 src, __u64 n,
					  const struct cmon_py_proc *p)
{
	__u32 max = p->str_max;

	if (max > CMON_PY_STR_MAX)
		max = CMON_PY_STR_MAX;
	if (n > max)
		n = max;
	n &= 0x3f;
	if (n > CMON_PY_STR_MAX)
		n = CMON_PY_STR_MAX;
	v->nbytes = 0;
	if (n && !bpf_probe_read_user(v->data, n, (void *)src))
		v->nbytes = (__u8)n;
}

/* An int object's value into V (INT, or BIGINT past 64 bits).  HDR: its
 * first 32 bytes when read, else NULL. */
static __always_inline void py_int(__u64 obj, const __u64 *hdr, struct cmon_py_val *v)
{
	__u32 d[3] = {};
	__u64 n, mag, at = obj + targ_py.long_digits, word = 0;
	bool neg;

	if (hdr)
		word = hdr[2];
	else
		bpf_probe_read_user(&word, 8, (void *)(obj + (targ_py.long_tag ?: targ_py.var_size)));
	if (targ_py.long_tag) {
		/* 3.12+: digits << 3 | sign (0 positive, 1 zero, 2 negative) */
		n = word >> 3;
		neg = (word & 3) == 2;
	} else {
		neg = (__s64)word < 0;
		n = neg ? -word : word;
	}
	if (hdr && n <= 2 && targ_py.long_digits == 24) {
		d[0] = (__u32)hdr[3];
		d[1] = n == 2 ? (__u32)(hdr[3] >> 32) : 0;
		if (n == 0)
			d[0] = 0;
	} else if (n > 3 || (n >= 1 && bpf_probe_read_user(&d[0], 4, (void *)at)) ||
		   (n >= 2 && bpf_probe_read_user(&d[1], 4, (void *)(at + 4))) ||
		   (n >= 3 && bpf_probe_read_user(&d[2], 4, (void *)(at + 8))) ||
		   /* 30-bit digits: beyond 2^63, or 2^63 itself unless negative */
		   (n == 3 && (d[2] > 8 || (d[2] == 8 && (!neg || d[1] || d[0]))))) {
		__u32 top = 0;

		/* Too big for 64 bits: its size in bits, from its top digit. */
		v->kind = CMON_PYV_BIGINT;
		v->len = 0;
		v->num = neg;
		if (n <= 0x7fffffff && n &&
		    !bpf_probe_read_user(&top, 4, (void *)(at + 4 * (n - 1)))) {
			__u32 bits = 0;

			for (int i = 0; i < 30 && top; i++, top >>= 1)
				bits++;
			v->len = (__u32)(30 * (n - 1)) + bits;
		}
		return;
	}
	mag = (__u64)d[0] | (__u64)d[1] << 30 | (__u64)d[2] << 60;
	v->kind = CMON_PYV_INT;
	v->num = neg ? -mag : mag;
}

#define PY_TPFLAGS_LONG_SUBCLASS (1ull << 24)

/* The object at OBJ, rendered into V by its type (a cell by what it
 * holds: a parameter a closure captures).  Global functions, this one and
 * the binding's: the verifier checks each once, not at every call. */
__noinline int py_value(__u64 obj, struct cmon_py_val *v, const struct cmon_py_proc *p)
{
	__u64 type = 0, hdr[4];
	__s64 size = 0;
	bool have_hdr = false;

	if (!v || !p)
		return 0;
	v->num = 0;
	v->len = 0;
	v->nbytes = 0;
	for (int cell = 0; cell < 2; cell++) {
		if (!obj) {
			v->kind = CMON_PYV_ABSENT;
			return 0;
		}
		if (obj == p->none) {
			v->kind = CMON_PYV_NONE;
			return 0;
		}
		if (obj == p->true_ || obj == p->false_) {
			v->kind = obj == p->true_ ? CMON_PYV_TRUE : CMON_PYV_FALSE;
			return 0;
		}
		/* One read for the header (and a small int's digits); field by
		 * field when those 32 bytes are not all readable. */
		if (!bpf_probe_read_user(hdr, sizeof(hdr), (void *)obj)) {
			type = hdr[(targ_py.obj_type / 8) & 3];
			size = (__s64)hdr[(targ_py.var_size / 8) & 3];
			have_hdr = true;
		} else if (bpf_probe_read_user(&type, sizeof(type), (void *)(obj + targ_py.obj_type))) {
			v->kind = CMON_PYV_UNREADABLE;
			return 0;
		} else {
			have_hdr = false;
			bpf_probe_read_user(&size, sizeof(size), (void *)(obj + targ_py.var_size));
		}
		if (type != p->types[CMON_PYT_CELL] || cell)
			break;
		{
			__u64 at = obj + targ_py.cell_ref;

			obj = 0;
			bpf_probe_read_user(&obj, 8, (void *)at);
		}
	}
	if (type == p->types[CMON_PYT_INT]) {
		py_int(obj, have_hdr ? hdr : NULL, v);
	} else if (type == p->types[CMON_PYT_FLOAT]) {
		v->kind = CMON_PYV_FLOAT;
		bpf_probe_read_user(&v->num, 8, (void *)(obj + targ_py.float_value));
	} else if (type == p->types[CMON_PYT_STR]) {
		__u32 state = 0;
		__u64 utf8 = 0, n = 0;

		bpf_probe_read_user(&state, 4, (void *)(obj + targ_py.str_state));
		bpf_probe_read_user(&size, sizeof(size), (void *)(obj + targ_py.str_length));
		v->len = (__u32)size;
		if ((state & 0x60) == 0x60) { /* compact ASCII */
			v->kind = CMON_PYV_STR;
			py_read_bytes(v, obj + targ_py.str_ascii_data, (__u64)size, p);
			return 0;
		}
		bpf_probe_read_user(&utf8, 8, (void *)(obj + targ_py.str_utf8));
		bpf_probe_read_user(&n, 8, (void *)(obj + targ_py.str_utf8_length));
		if ((state & 0x20) && utf8) {
			v->kind = CMON_PYV_STR;
			py_read_bytes(v, utf8, n, p);
		} else {
			v->kind = CMON_PYV_STR_WIDE;
		}
	} else if (type == p->types[CMON_PYT_BYTES]) {
		v->kind = CMON_PYV_BYTES;
		v->len = (__u32)size;
		py_read_bytes(v, obj + targ_py.bytes_data, (__u64)size, p);
	} else if (type == p->types[CMON_PYT_TUPLE] || type == p->types[CMON_PYT_LIST]) {
		v->kind = type == p->types[CMON_PYT_TUPLE] ? CMON_PYV_TUPLE : CMON_PYV_LIST;
		v->len = (__u32)size;
	} else if (type == p->types[CMON_PYT_DICT]) {
		v->kind = CMON_PYV_DICT;
		bpf_probe_read_user(&size, sizeof(size), (void *)(obj + targ_py.dict_used));
		v->len = (__u32)size;
	} else {
		__u64 name = 0, tflags = 0;
		long n;

		bpf_probe_read_user(&tflags, 8, (void *)(type + targ_py.type_flags));
		if (tflags & PY_TPFLAGS_LONG_SUBCLASS) {
			/* an IntEnum member: its value, and what names it */
			struct cmon_py_intsub *is = (struct cmon_py_intsub *)v->data;

			py_int(obj, have_hdr ? hdr : NULL, v);
			v->nbytes = v->kind == CMON_PYV_BIGINT ? CMON_PY_INTSUB_BIG : 0;
			v->kind = CMON_PYV_INTSUB;
			is->type = type;
			is->obj = obj;
			return 0;
		}
		v->kind = CMON_PYV_OTHER;
		v->num = type;
		/* tp_name now: the process may be gone when user space reads */
		bpf_probe_read_user(&name, 8, (void *)(type + targ_py.type_name));
		n = name ? bpf_probe_read_user_str(v->data, sizeof(v->data), (void *)name) : 0;
		v->nbytes = n > 1 ? (__u8)(n - 1) : 0;
	}
	return 0;
}

/* A str object's text into BUF when it is compact ASCII (else ""); its
 * length (SIZE - 1 when it was cut). */
static __always_inline __u32 py_ascii(__u64 obj, char *buf, __u32 size)
{
	__u32 state = 0;
	long n;

	buf[0] = 0;
	if (!obj || bpf_probe_read_user(&state, 4, (void *)(obj + targ_py.str_state)) ||
	    (state & 0x60) != 0x60)
		return 0;
	n = bpf_probe_read_user_str(buf, size, (void *)(obj + targ_py.str_ascii_data));
	return n > 1 ? (__u32)(n - 1) : 0;
}

/*
 * The --py patterns' rows (cmon_abi.h): what a code object met first is
 * matched against.  TARG_PY_UNDECIDED: the patterns need user space (a
 * form the rows cannot hold): every code object no row selects is PENDING.
 */
const volatile struct cmon_py_pat targ_py_pats[CMON_PY_PAT_MAX] = {};
const volatile __u32 targ_py_pats_n = 0;

/* A code object's names, where the rows are matched (per CPU). */
struct py_names {
	char qual[CMON_PY_QUALNAME_MAX];
	char file[CMON_PY_FILENAME_MAX];
	__u32 qlen, flen; /* a name cut where its buffer ended matches no row */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_names);
} py_names SEC(".maps");

/* One step of matching row K's glob against the qualname: the classic
 * walk that backs up to the last '*'.  The walk's state is in this CPU's
 * slot, not on the stack: verifiers before Linux 6.7 check a bpf_loop
 * step once, with the values the caller left on its stack (no '*' seen),
 * and hard-wire the branches that pass never took (6.1 then never backs
 * up: "*.area" misses "Shape.area" as soon as clang stores the flag
 * alone; a field order did); a map value's contents are unknown to them
 * (as expr.bpf.h's expr_scratch). */
struct py_glob_walk {
	__u32 i, j, star_i, star_j;
	int star; /* a '*' seen */
	int result; /* -1: going on */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_glob_walk);
} py_glob_scratch SEC(".maps");

/* What each step gets: the names, the row, and the walk. */
struct py_glob {
	const struct py_names *nm;
	struct py_glob_walk *w;
	__u32 k, plen;
};

static long py_glob_step(__u32 idx, struct py_glob *g)
{
	const volatile struct cmon_py_pat *m = &targ_py_pats[g->k & (CMON_PY_PAT_MAX - 1)];
	struct py_glob_walk *w = g->w;
	__u32 i = w->i, j = w->j, slen = g->nm->qlen;
	char pc = j < g->plen ? m->qualname[j & (CMON_PY_QUALNAME_MAX - 1)] : 0;

	if (i >= slen) {
		/* the name is used up: only '*'s may be left */
		if (j < g->plen && pc == '*') {
			w->j = j + 1;
			return 0;
		}
		w->result = j >= g->plen;
		return 1;
	}
	if (j < g->plen && pc == '*') {
		w->star = 1;
		w->star_j = j;
		w->star_i = i;
		w->j = j + 1;
	} else if (j < g->plen && (pc == '?' || pc == g->nm->qual[i & (CMON_PY_QUALNAME_MAX - 1)])) {
		w->i = i + 1;
		w->j = j + 1;
	} else if (w->star) {
		w->star_i++;
		w->i = w->star_i;
		w->j = w->star_j + 1;
	} else {
		w->result = 0;
		return 1;
	}
	return 0;
}

/* One byte of row K's file against the end of NM's (from OFF): a bpf_loop
 * step, so that the verifier checks it once.  Inlined, its branches made
 * 6.1's verifier walk every path of every byte: over 1,000,000 insns. */
struct py_file_cmp {
	const struct py_names *nm;
	__u32 k, off, fl;
	bool module;
	int result; /* 1 until a byte differs */
};

static long py_file_step(__u32 idx, struct py_file_cmp *f)
{
	__u64 i = idx, k = f->k;
	char c, w;

	/* opaque 64-bit values: each bound tested on the register indexed */
	barrier_var(i);
	barrier_var(k);
	if (i >= f->fl || i >= CMON_PY_FILENAME_MAX || k >= CMON_PY_PAT_MAX)
		return 1;
	c = f->nm->file[(f->off + i) & (CMON_PY_FILENAME_MAX - 1)];
	w = targ_py_pats[k].file[i];
	/* a module's '.' is a directory's '/', not the one of ".py" */
	if (c != w && !(f->module && w == '.' && c == '/' && i + 3 < f->fl)) {
		f->result = 0;
		return 1;
	}
	return 0;
}

/*
 * Does row K name NM?  A global function: the verifier checks it once,
 * not once per row and path of its caller (the rows' byte loops inline
 * exceed its budget).  1 or 0.
 */
__noinline int py_pat_row(const struct py_names *nm, __u32 k)
{
	const volatile struct cmon_py_pat *m;
	__u32 qlen, flen, fl, off;
	bool module;

	if (!nm || k >= CMON_PY_PAT_MAX)
		return 0;
	m = &targ_py_pats[k];
	qlen = nm->qlen;
	flen = nm->flen;
	if (!qlen || qlen >= CMON_PY_QUALNAME_MAX - 1 || (m->flags & CMON_PY_PAT_USER))
		return 0;
	if (m->flags & CMON_PY_PAT_GLOB) {
		__u32 zero = 0;
		struct py_glob_walk *w = bpf_map_lookup_elem(&py_glob_scratch, &zero);
		struct py_glob g = { .nm = nm, .w = w, .k = k, .plen = m->qual_len };

		if (!w || g.plen >= CMON_PY_QUALNAME_MAX)
			return 0;
		*w = (struct py_glob_walk){ .result = -1 };
		bpf_loop(CMON_PY_QUALNAME_MAX * CMON_PY_QUALNAME_MAX, py_glob_step, &g, 0);
		if (w->result != 1)
			return 0;
	} else {
		if (m->qual_len != qlen)
			return 0;
		for (__u32 i = 0; i < CMON_PY_QUALNAME_MAX; i++) {
			if (i >= qlen)
				break;
			if (nm->qual[i] != m->qualname[i])
				return 0;
		}
	}
	fl = m->file_len;
	if (!fl)
		return 1;
	if (fl > flen || flen >= CMON_PY_FILENAME_MAX - 1)
		return 0;
	module = m->flags & CMON_PY_PAT_MODULE;
	off = flen - fl;
	if (off) {
		char b = nm->file[(off - 1) & (CMON_PY_FILENAME_MAX - 1)];

		if (b != '/' && !(module && b == '.'))
			return 0;
	}
	struct py_file_cmp f = { .nm = nm, .k = k, .off = off, .fl = fl, .module = module,
				 .result = 1 };

	bpf_loop(CMON_PY_FILENAME_MAX, py_file_step, &f, 0);
	return f.result;
}

/* NM's verdict from the rows: TRACED, SKIP, or PENDING when a pattern
 * only user space can match might select it (or its names are not ASCII). */
static __always_inline __u32 py_pat_verdict(const struct py_names *nm)
{
	bool user = false;

	for (__u32 k = 0; k < CMON_PY_PAT_MAX; k++) {
		if (k >= targ_py_pats_n)
			break;
		if (targ_py_pats[k].flags & CMON_PY_PAT_USER)
			user = true;
		else if (py_pat_row(nm, k))
			return CMON_PY_TRACED;
	}
	return user || !nm->qlen || !nm->flen ? CMON_PY_PENDING : CMON_PY_SKIP;
}

/* Code object CODE's names into the per-CPU py_names. */
static __always_inline struct py_names *py_read_names(__u64 code)
{
	__u32 zero = 0;
	struct py_names *nm = bpf_map_lookup_elem(&py_names, &zero);
	__u64 obj = 0;

	if (!nm)
		return NULL;
	bpf_probe_read_user(&obj, 8, (void *)(code + targ_py.code_qualname));
	nm->qlen = py_ascii(obj, nm->qual, sizeof(nm->qual));
	obj = 0;
	bpf_probe_read_user(&obj, 8, (void *)(code + targ_py.code_filename));
	nm->flen = py_ascii(obj, nm->file, sizeof(nm->file));
	return nm;
}

/* CMON_TEST_PY_COUNTS_UNREAD (a test hook): every forked child's reads
 * of its code objects' counts fail, as they rarely do by themselves. */
const volatile bool targ_py_test_counts_unread = false;

/* How many parameters code object CODE has (with *args, **kw), and its
 * counts into C (argcount, posonly, kwonly, flags); *UNREAD (when given)
 * says whether they could not be read (C then all 0). */
static __always_inline __u32 py_nparams(__u64 code, __s32 c[4], bool *unread)
{
	long err;
	__s32 n;

	err = bpf_probe_read_user(&c[0], 4, (void *)(code + targ_py.code_argcount));
	err |= bpf_probe_read_user(&c[1], 4, (void *)(code + targ_py.code_posonlyargcount));
	err |= bpf_probe_read_user(&c[2], 4, (void *)(code + targ_py.code_kwonlyargcount));
	err |= bpf_probe_read_user(&c[3], 4, (void *)(code + targ_py.code_flags));
	if (unread && targ_py_test_counts_unread) {
		struct task_struct *task = bpf_get_current_task_btf();
		__u32 ppid = (__u32)task->real_parent->tgid;

		if (bpf_map_lookup_elem(&py_procs, &ppid))
			err = -14; /* -EFAULT: a child of a traced interpreter */
	}
	if (unread)
		*unread = err != 0;
	if (err)
		c[0] = c[1] = c[2] = c[3] = 0;
	n = c[0] + c[2] + !!(c[3] & 0x4) + !!(c[3] & 0x8); /* CO_VARARGS, CO_VARKEYWORDS */
	return n < 0 ? 0 : n > CMON_PY_ALL_ARGS ? CMON_PY_ALL_ARGS : (__u32)n;
}

/* Announce code object CODE of process PID (names in NM).  0, or -1 when
 * the ring buffer had no room. */
__noinline int py_announce(__u32 pid, __u64 code, __u64 fp, const struct py_names *nm)
{
	struct cmon_py_code_rec *cr;

	__u64 names = 0, obj;
	__s32 c[4] = {};

	if (!nm)
		return -1;
	cr = reserve_waiting(sizeof(*cr));
	if (!cr)
		return -1;
	cr->type = CMON_REC_PY_CODE;
	cr->pid = pid;
	cr->code = code;
	cr->fp = fp;
	cr->firstlineno = 0;
	bpf_probe_read_user(&cr->firstlineno, 4, (void *)(code + targ_py.code_firstlineno));
	cr->n_names = py_nparams(code, c, NULL);
	cr->argcount = c[0];
	cr->posonlyargcount = c[1];
	cr->kwonlyargcount = c[2];
	cr->flags = c[3];
	bpf_probe_read_kernel(cr->qualname, sizeof(cr->qualname), nm->qual);
	bpf_probe_read_kernel(cr->filename, sizeof(cr->filename), nm->file);
	bpf_probe_read_user(&names, 8, (void *)(code + targ_py.code_localsplusnames));
	for (__u32 i = 0; i < CMON_PY_ALL_ARGS; i++) {
		obj = 0;
		if (i < cr->n_names && names)
			bpf_probe_read_user(&obj, 8, (void *)(names + targ_py.tuple_items + 8 * i));
		py_ascii(obj, cr->names[i], CMON_PY_ARGNAME_MAX);
	}
	bpf_ringbuf_submit(cr, 0);
	return 0;
}

/* The fingerprint of code object CODE: its file and qualname objects'
 * addresses mixed (a new object at a freed one's address differs). */
static __always_inline __u64 py_fingerprint(__u64 code)
{
	__u64 nm[4], fn = 0, qn = 0;
	__u32 dq = targ_py.code_qualname - targ_py.code_filename;

	/* co_filename .. co_qualname in one read when they are close */
	if (dq < 32 && !(dq & 7) &&
	    !bpf_probe_read_user(nm, sizeof(nm), (void *)(code + targ_py.code_filename))) {
		fn = nm[0];
		qn = nm[(dq / 8) & 3];
	} else {
		bpf_probe_read_user(&fn, 8, (void *)(code + targ_py.code_filename));
		bpf_probe_read_user(&qn, 8, (void *)(code + targ_py.code_qualname));
	}
	return fn ^ (qn << 1 | qn >> 63);
}

/* The verdict on code object CODE of PID: known, or decided now from the
 * rows (and announced unless skipped).  0 when it could not be announced
 * (the ring buffer was full: decided again at a later call). */
__noinline int py_decide(__u32 pid, __u64 code)
{
	struct cmon_py_code_key key = { .pid = pid, .code = code };
	struct cmon_py_verdict_val *v, now = {};
	struct py_names *nm;

	now.fp = py_fingerprint(code);
	v = bpf_map_lookup_elem(&py_code, &key);
	if (v && v->fp == now.fp)
		return v->verdict;
	nm = py_read_names(code);
	if (!nm)
		return 0;
	now.verdict = py_pat_verdict(nm);
	if (now.verdict != CMON_PY_SKIP && py_announce(pid, code, now.fp, nm))
		return 0;
	bpf_map_update_elem(&py_code, &key, &now, BPF_ANY);
	return now.verdict;
}

static __always_inline struct cmon_func_stats *py_stats(__u64 cookie)
{
	return stats_of(cookie & CMON_COOKIE_FUNC_MASK);
}

/* ---- a call's parameters ---- */

/* I as an index the verifier sees bounded (the compiler drops a mask it
 * can prove redundant). */
static __always_inline __u32 py_idx(__u32 i)
{
	asm volatile("" : "+r"(i));
	return i & (CMON_PY_ALL_ARGS - 1);
}

/* The call as its probe sees it: the evaluator's frame, or the
 * vectorcall entry's arguments (callable, args, nargsf, kwnames). */
struct py_call {
	__u64 code, frame, tstate;
	__u64 func, args, nargs, kwnames;
	__s32 c[4]; /* argcount, posonlyargcount, kwonlyargcount, co_flags */
	__u32 n;    /* parameters */
};

/* Where a probe puts its call (per CPU): on the program's stack it would
 * be under every chain of calls, past 6.1's 512 bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_call);
} py_calls SEC(".maps");

static __always_inline struct py_call *py_call_new(void)
{
	__u32 zero = 0;
	struct py_call *c = bpf_map_lookup_elem(&py_calls, &zero);

	if (c)
		__builtin_memset(c, 0, sizeof(*c));
	return c;
}

/* The vectorcall entry's keywords: each is a parameter's (found by the
 * name object: names are interned), else one for **kw. */
struct py_kw {
	struct py_call *c;
	struct py_bound *b;
	__u64 kwitems, kwvals;
	__u32 nkw, extra;
};

static long py_kw_step(__u32 j, struct py_kw *k)
{
	struct py_call *c = k->c;
	struct py_bound *b = k->b;
	__u64 name = 0, val = 0;
	__u32 hit = CMON_PY_ALL_ARGS;

	if (j >= k->nkw)
		return 1;
	bpf_probe_read_user(&name, 8, (void *)(k->kwitems + 8 * (__u64)j));
	bpf_probe_read_user(&val, 8, (void *)(k->kwvals + 8 * (__u64)j));
	for (__u32 i = 0; i < CMON_PY_ALL_ARGS; i++) {
		if (name && b->names[i] == name) {
			hit = i;
			break;
		}
	}
	/* a parameter past the positional-only ones, else one for **kw */
	if (hit < CMON_PY_ALL_ARGS && (__s32)hit >= c->c[1] && (__s32)hit < c->c[0] + c->c[2])
		b->obj[py_idx(hit)] = val;
	else
		k->extra++;
	return 0;
}

/* The keyword-only parameter NAME's default: its entry in DICT
 * (func_kwdefaults), into *OUT. */
__noinline int py_kwdefault(__u64 dict, __u64 name, __u64 *out)
{
	__u64 keys = 0, n = 0, at;
	__u8 hdr[3] = {};

	if (!out || !dict || bpf_probe_read_user(&keys, 8, (void *)(dict + targ_py.dict_keys)) || !keys)
		return 0;
	if (bpf_probe_read_user(hdr, 3, (void *)(keys + 8)) ||
	    bpf_probe_read_user(&n, 8, (void *)(keys + 24)))
		return 0;
	/* dk_log2_size, dk_log2_index_bytes, dk_kind; entries past the indices */
	at = keys + 32 + (1ull << (hdr[1] & 31));
	for (__u32 e = 0; e < 16; e++) {
		__u64 ent[3] = {};
		__u32 sz = hdr[2] ? 16 : 24;

		if (e >= n)
			break;
		if (bpf_probe_read_user(ent, sz == 16 ? 16 : 24, (void *)(at + sz * e)))
			break;
		if (ent[sz == 16 ? 0 : 1] == name) {
			*out = ent[sz == 16 ? 1 : 2];
			return 1;
		}
	}
	return 0;
}

/* The vectorcall entry's binding, one parameter a bpf_loop step. */
struct py_vcbind {
	struct py_bound *b;
	__u64 args, defs, kwdefs;
	__u32 n, argc, kwonly, nargs;
	__s64 m; /* defaults */
};

/* A positional argument. */
static long py_pos_step(__u32 i, struct py_vcbind *v)
{
	if (i >= v->n || i >= v->argc || i >= v->nargs || i >= CMON_PY_ALL_ARGS)
		return 1;
	bpf_probe_read_user(&v->b->obj[py_idx(i)], 8, (void *)(v->args + 8 * i));
	return 0;
}

/* A parameter not passed: its default. */
static long py_def_step(__u32 i, struct py_vcbind *v)
{
	struct py_bound *b = v->b;
	__u32 k = py_idx(i);

	if (i >= v->n || i >= v->argc + v->kwonly || i >= CMON_PY_ALL_ARGS)
		return 1;
	if (b->obj[k])
		return 0;
	if (i < v->argc && v->defs && v->m > 0 && v->m < 1024 && (__s64)i >= (__s64)v->argc - v->m)
		bpf_probe_read_user(&b->obj[k], 8,
				    (void *)(v->defs + targ_py.tuple_items +
					     8 * (__u64)((__s64)i - ((__s64)v->argc - v->m))));
	else if (i >= v->argc && v->kwdefs)
		py_kwdefault(v->kwdefs, b->names[k], &b->obj[k]);
	return 0;
}

/* C's parameters into B (objects, or a synthesized *args / **kw). */
__noinline int py_bind(struct py_call *c, struct py_bound *b)
{
	struct py_vcbind v = {};
	__u32 n, slot;
	__u64 names = 0;

	if (!c || !b)
		return 0;
	n = c->n & (CMON_PY_ALL_ARGS * 2 - 1);
	if (n > CMON_PY_ALL_ARGS)
		n = CMON_PY_ALL_ARGS;
	for (__u32 i = 0; i < CMON_PY_ALL_ARGS; i++) {
		b->obj[i] = 0;
		b->names[i] = 0;
		b->kind[i] = 0;
		b->len[i] = 0;
	}
	if (c->frame) {
		/* the evaluator's frame: its first slots (one read, or one by one) */
		if (n && bpf_probe_read_user(b->obj, (n * 8) & 0x1ff,
					     (void *)(c->frame + targ_py.frame_localsplus))) {
			for (__u32 i = 0; i < CMON_PY_ALL_ARGS; i++) {
				if (i >= n)
					break;
				bpf_probe_read_user(&b->obj[i], 8,
						    (void *)(c->frame + targ_py.frame_localsplus + 8 * i));
			}
		}
		return 0;
	}
	/* the vectorcall entry: bound as CPython will */
	v.b = b;
	v.n = n;
	v.args = c->args;
	v.argc = c->c[0] < 0 ? 0 : (__u32)c->c[0];
	v.kwonly = c->c[2] < 0 ? 0 : (__u32)c->c[2];
	v.nargs = (__u32)(c->nargs & 0xffffffff);
	bpf_probe_read_user(&names, 8, (void *)(c->code + targ_py.code_localsplusnames));
	if (names && n)
		bpf_probe_read_user(b->names, (n * 8) & 0x1ff, (void *)(names + targ_py.tuple_items));
	bpf_loop(CMON_PY_ALL_ARGS, py_pos_step, &v, 0);
	slot = v.argc + v.kwonly;
	if (c->c[3] & 0x4) { /* *args: what is past the positional parameters */
		if (slot < CMON_PY_ALL_ARGS) {
			b->kind[slot] = CMON_PYV_TUPLE;
			b->len[slot] = v.nargs > v.argc ? v.nargs - v.argc : 0;
		}
		slot++;
	}
	{
		struct py_kw k = { .c = c, .b = b, .kwvals = c->args + 8 * (__u64)v.nargs };
		__s64 nkw = 0;

		if (c->kwnames) {
			bpf_probe_read_user(&nkw, 8, (void *)(c->kwnames + targ_py.var_size));
			k.kwitems = c->kwnames + targ_py.tuple_items;
			k.nkw = nkw > 0 && nkw < 64 ? (__u32)nkw : 0;
			bpf_loop(64, py_kw_step, &k, 0);
		}
		if ((c->c[3] & 0x8) && slot < CMON_PY_ALL_ARGS) { /* **kw: the keywords left */
			b->kind[slot] = CMON_PYV_DICT;
			b->len[slot] = k.extra;
		}
	}
	/* defaults: the last positional ones from func_defaults, keyword-only
	 * ones from func_kwdefaults */
	bpf_probe_read_user(&v.defs, 8, (void *)(c->func + targ_py.func_defaults));
	bpf_probe_read_user(&v.kwdefs, 8, (void *)(c->func + targ_py.func_kwdefaults));
	if (v.defs)
		bpf_probe_read_user(&v.m, 8, (void *)(v.defs + targ_py.var_size));
	bpf_loop(CMON_PY_ALL_ARGS, py_def_step, &v, 0);
	return 0;
}

/* Parameter I of B as a value. */
static __always_inline void py_param(const struct py_bound *b, __u32 i, struct cmon_py_val *v,
				     const struct cmon_py_proc *p)
{
	i &= CMON_PY_ALL_ARGS - 1;
	if (b->kind[i]) {
		v->kind = b->kind[i];
		v->len = b->len[i];
		v->num = 0;
		v->nbytes = 0;
		return;
	}
	py_value(b->obj[i], v, p);
}

/* Parameters past CMON_PY_MAX_ARGS: a record of their own, now (before the
 * call's), of a constant size per class of count.  True when written. */
#define PY_MORE_WRITE(N)                                                            \
	do {                                                                        \
		r = reserve_waiting(CMON_PY_ARGS_REC_SIZE(N));      \
		if (!r)                                                             \
			return false;                                               \
		for (__u32 i = 0; i < (N); i++) {                                   \
			if (i >= more)                                              \
				break;                                              \
			py_param(b, CMON_PY_MAX_ARGS + i, &r->args[i], p);          \
		}                                                                   \
	} while (0)

__noinline int py_more_args(const struct py_bound *b, __u32 n, __u64 ts,
			    const struct cmon_py_proc *p)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct cmon_py_args_rec *r = NULL;
	__u32 more = n > CMON_PY_MAX_ARGS ? n - CMON_PY_MAX_ARGS : 0;

	if (!more || !b || !p)
		return false;
	if (more > CMON_PY_MORE_ARGS)
		more = CMON_PY_MORE_ARGS;
	if (more <= 4)
		PY_MORE_WRITE(4);
	else if (more <= 12)
		PY_MORE_WRITE(12);
	else
		PY_MORE_WRITE(CMON_PY_MORE_ARGS);
	r->type = CMON_REC_PY_ARGS;
	r->pid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->n = more;
	r->ts_entry_ns = ts;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return true;
}

/* ---- asyncio ---- */

#define PY_CO_COROUTINE 0x80
#define PY_FRAME_OWNED_BY_CSTACK 3

/* A[0..N) == B[0..N) (no memcmp in BPF). */
static __always_inline bool py_same(const char *a, const char *b, __u32 n)
{
	for (__u32 i = 0; i < 24; i++) {
		if (i >= n)
			return true;
		if (a[i] != b[i])
			return false;
	}
	return true;
}

/* Is the type of object OBJ named PREFIX... (N bytes), "_asyncio." aside? */
static __always_inline bool py_type_is(__u64 obj, const char *prefix, __u32 n)
{
	__u64 type = 0, name = 0;
	char buf[32] = {};
	__u32 at = 0;

	if (bpf_probe_read_user(&type, 8, (void *)(obj + targ_py.obj_type)) || !type ||
	    bpf_probe_read_user(&name, 8, (void *)(type + targ_py.type_name)) || !name ||
	    bpf_probe_read_user_str(buf, sizeof(buf), (void *)name) < 0)
		return false;
	if (py_same(buf, "_asyncio.", 9))
		at = 9;
	for (__u32 i = 0; i < 20; i++) {
		if (i >= n)
			return true;
		if (buf[(at + i) & 31] != prefix[i])
			return false;
	}
	return true;
}

/*
 * The asyncio task a coroutine runs in: from its caller's frame (TSTATE's
 * current one: the evaluator links the new frame only past its entry),
 * past the coroutines awaiting it, the frame that stepped it is
 * asyncio.events.Handle._run,
 * whose self._callback is the task's step (a TaskStepMethWrapper, its
 * task first) or its bound __wakeup (m_self).  0 when not in a task.
 */
__noinline __u64 py_task(__u64 tstate)
{
	__u64 f = 0, code = 0, qual = 0, handle = 0, cb = 0, task = 0;
	char name[12] = {};

	if (!tstate)
		return 0;
	if (targ_py.tstate_cframe) {
		bpf_probe_read_user(&f, 8, (void *)(tstate + targ_py.tstate_cframe));
		if (f)
			bpf_probe_read_user(&f, 8, (void *)(f + targ_py.cframe_current));
	} else {
		bpf_probe_read_user(&f, 8, (void *)(tstate + targ_py.cframe_current));
	}
	for (int i = 0; i < 32 && f; i++) {
		__u8 owner = 0;

		bpf_probe_read_user(&owner, 1, (void *)(f + targ_py.frame_owner));
		/* past the coroutines, and 3.12's entry frames (C's, owner 3) */
		if (owner != targ_py.owner_generator && owner != PY_FRAME_OWNED_BY_CSTACK)
			break; /* the first frame not a coroutine's */
		bpf_probe_read_user(&f, 8, (void *)(f + targ_py.frame_previous));
	}
	if (!f || bpf_probe_read_user(&code, 8, (void *)(f + targ_py.frame_code)) || !code ||
	    bpf_probe_read_user(&qual, 8, (void *)(code + targ_py.code_qualname)) || !qual ||
	    bpf_probe_read_user(name, 11, (void *)(qual + targ_py.str_ascii_data)) ||
	    !py_same(name, "Handle._run", 11))
		return 0;
	if (bpf_probe_read_user(&handle, 8, (void *)(f + targ_py.frame_localsplus)) || !handle ||
	    bpf_probe_read_user(&cb, 8, (void *)(handle + targ_py.handle_callback)) || !cb)
		return 0;
	if (py_type_is(cb, "TaskStepMethWrapper", 19))
		bpf_probe_read_user(&task, 8, (void *)(cb + targ_py.wrapper_task));
	else if (py_type_is(cb, "builtin_", 8))
		bpf_probe_read_user(&task, 8, (void *)(cb + targ_py.method_self));
	return task && (py_type_is(task, "_asyncio.Task", 13) || py_type_is(task, "Task", 4))
		       ? task : 0;
}

/* Task TASK's name into NAME: its str (ASCII), or "#N" when it is still
 * its number (3.12+).  V: scratch for the number (not on the stack: 6.1
 * allows 512 bytes for a whole chain of calls). */
static __noinline void py_task_name(__u64 task, char *name, struct cmon_py_val *v,
				    const struct cmon_py_proc *p)
{
	__u64 obj = 0, type = 0;

	if (bpf_probe_read_user(&obj, 8, (void *)(task + targ_py.task_name)) || !obj ||
	    bpf_probe_read_user(&type, 8, (void *)(obj + targ_py.obj_type)))
		return;
	if (type == p->types[CMON_PYT_STR]) {
		py_ascii(obj, name, CMON_PY_TASK_NAME_MAX);
	} else if (type == p->types[CMON_PYT_INT]) {
		__u64 num;

		v->num = 0;
		py_int(obj, NULL, v);
		num = v->num;
		name[0] = '#';
		for (int i = 0; i < 20; i++) { /* the digits, backwards, then turned */
			name[1 + i] = '0' + num % 10;
			num /= 10;
			if (!num) {
				name[2 + i] = 0;
				for (int a = 1, z = 1 + i; a < z && a < 22 && z < 22; a++, z--) {
					char t = name[a];

					name[a] = name[z];
					name[z] = t;
				}
				break;
			}
		}
	}
}

/* ---- records ---- */

/* The thread state running Python now: the evaluator's argument, or the
 * GIL's holder (3.12+). */
static __always_inline __u64 py_tstate(__u64 known, const struct cmon_py_proc *p)
{
	__u64 t = 0;

	if (known || !p->gil)
		return known;
	bpf_probe_read_user(&t, 8, (void *)(p->gil + targ_py.gil_holder));
	return t;
}

/* The exception leaving a call (TSTATE's): its type's name into REC, and
 * the object to show as its value (args[0]; 0 for none).  Out of line, as
 * py_task_name: their reads' stack is not py_emit's, which is in the
 * longest chain of calls (6.1 allows 512 bytes for a whole chain). */
static __noinline __u64 py_exception(struct cmon_py_rec *rec, __u64 tstate)
{
	__u64 exc = 0, type = 0, name = 0, args = 0, msg = 0;

	rec->exc_type[0] = 0;
	if (!tstate)
		return 0;
	bpf_probe_read_user(&exc, 8, (void *)(tstate + targ_py.tstate_exc));
	if (targ_py.tstate_exc_type)
		bpf_probe_read_user(&type, 8, (void *)(tstate + targ_py.tstate_exc_type));
	else if (exc)
		bpf_probe_read_user(&type, 8, (void *)(exc + targ_py.obj_type));
	if (type && !bpf_probe_read_user(&name, 8, (void *)(type + targ_py.type_name)) && name)
		bpf_probe_read_user_str(rec->exc_type, sizeof(rec->exc_type), (void *)name);
	if (!exc)
		return 0;
	/* 3.11 may hold a value not yet made into the exception: the message */
	{
		__u64 etype = 0;

		bpf_probe_read_user(&etype, 8, (void *)(exc + targ_py.obj_type));
		if (targ_py.tstate_exc_type && etype != type)
			return exc;
	}
	if (!bpf_probe_read_user(&args, 8, (void *)(exc + targ_py.exc_args)) && args) {
		__s64 n = 0;

		bpf_probe_read_user(&n, 8, (void *)(args + targ_py.var_size));
		if (n > 0)
			bpf_probe_read_user(&msg, 8, (void *)(args + targ_py.tuple_items));
	}
	return msg;
}

/* FR as a record: returned (RET the object, or NULL for an exception) or
 * not (CMON_PY_NORETURN: the stack moved past it).  HOW packs the probe's
 * func_id (bits 32-63), the flags (16-31) and the depth (0-15): BPF
 * functions take five arguments. */
#define PY_HOW(func_id, flags, d) ((__u64)(func_id) << 32 | (__u64)(flags) << 16 | (d))

__noinline int py_emit(struct cmon_py_frame *fr, __u64 how, __u64 ret, __u64 ts,
		       struct cmon_py_proc *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 flags = (how >> 16) & 0xffff, d = how & 0xffff;
	struct cmon_py_rec *rec = NULL;
	struct mm_struct *mm;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 n;

	if (!fr || !p)
		return 0;
	n = fr->n_args;

	/* As long as its arguments need: a constant size per count. */
	switch (n) {
	case 0: rec = reserve_waiting(CMON_PY_REC_SIZE(0)); break;
	case 1: rec = reserve_waiting(CMON_PY_REC_SIZE(1)); break;
	case 2: rec = reserve_waiting(CMON_PY_REC_SIZE(2)); break;
	case 3: rec = reserve_waiting(CMON_PY_REC_SIZE(3)); break;
	case 4: rec = reserve_waiting(CMON_PY_REC_SIZE(4)); break;
	case 5: rec = reserve_waiting(CMON_PY_REC_SIZE(5)); break;
	default: n = CMON_PY_MAX_ARGS;
		rec = reserve_waiting(CMON_PY_REC_SIZE(CMON_PY_MAX_ARGS)); break;
	}
	if (!rec) {
		struct cmon_func_stats *st = stats_of(how >> 32);

		if (st)
			st->lost_ringbuf++;
		py_lose(pid_tgid >> 32, fr->code);
		return 0;
	}
	rec->type = CMON_REC_PY;
	rec->flags = flags | (fr->flags & CMON_PY_FR_MORE ? CMON_PY_MORE : 0) |
		     (fr->flags & CMON_PY_FR_GENERATOR ? CMON_PY_RESUMED : 0) |
		     (fr->flags & CMON_PY_FR_COUNTS_UNREAD ? CMON_PY_COUNTS_UNREAD : 0);
	rec->why = CMON_PY_NR_DETACHED;
	if ((flags & CMON_PY_RETURNED) && ret && (fr->flags & CMON_PY_FR_GENERATOR)) {
		/* a generator's frame left suspended: it yielded */
		__s8 state = 0;

		if (!bpf_probe_read_user(&state, 1, (void *)(fr->frame - targ_py.gen_iframe +
							     targ_py.gen_frame_state)) &&
		    state < 0)
			rec->flags |= CMON_PY_YIELDED;
	}
	rec->ts_entry_ns = fr->ts;
	rec->ts_exit_ns = ts;
	rec->code = fr->code;
	rec->tstate = fr->tstate;
	rec->frame = fr->frame;
	rec->task = fr->task;
	rec->task_name[0] = 0;
	if (fr->task)
		py_task_name(fr->task, rec->task_name, &rec->ret, p); /* ret: set below */
	rec->pid = pid_tgid >> 32;
	rec->tid = (__u32)pid_tgid;
	rec->depth = d;
	rec->n_args = n;
	rec->n_params = fr->n_params;
	__builtin_memcpy(rec->comm, task->group_leader->comm, CMON_COMM_LEN);
	for (__u32 i = 0; i < CMON_PY_MAX_ARGS; i++)
		if (i < n)
			__builtin_memcpy(&rec->args[i], &fr->args[i], sizeof(rec->args[i]));
	rec->exc_type[0] = 0;
	rec->ret.kind = CMON_PYV_ABSENT;
	rec->ret.nbytes = 0;
	if ((flags & CMON_PY_RETURNED) && ret)
		py_value(ret, &rec->ret, p);
	else if (flags & CMON_PY_RETURNED)
		py_value(py_exception(rec, py_tstate(fr->tstate, p)), &rec->ret, p);
	mm = task->mm;
	rec->rss_entry = fr->rss;
	rec->vms_entry = fr->vms;
	rec->rss_exit = (flags & CMON_PY_RETURNED) && mm ? mm_rss_bytes(mm) : 0;
	rec->vms_exit = (flags & CMON_PY_RETURNED) && mm ? mm_vms_bytes(mm) : 0;
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Frames the stack has moved past (their return was never seen) are
 * written as such: at an entry at SLOT, pending frames at or below it; at
 * a return from SLOT, those below it.  One that had no return probe (the
 * kernel's were all in use) is counted lost instead. */
static __always_inline void py_unwind(struct cmon_py_stack *ss, __u64 slot, bool entry,
				      struct cmon_py_proc *p, __u64 cookie)
{
	for (int i = 0; i < 8; i++) {
		__u32 d = ss->depth;
		struct cmon_py_frame *fr;

		if (!d || d > CMON_PY_STACK_DEPTH)
			return;
		fr = &ss->frames[(d - 1) & (CMON_PY_STACK_DEPTH - 1)];
		if (entry ? fr->slot > slot : fr->slot >= slot)
			return;
		if (fr->flags & CMON_PY_FR_NO_SLOT) {
			struct cmon_func_stats *st = py_stats(cookie);

			if (st)
				st->lost_uret++;
			py_lose(bpf_get_current_pid_tgid() >> 32, fr->code);
		} else {
			py_emit(fr, PY_HOW(cookie & CMON_COOKIE_FUNC_MASK, CMON_PY_NORETURN, d - 1),
				0, 0, p);
		}
		ss->depth = d - 1;
	}
}

/*
 * cmon break --py: for the first targ_break_count calls of the functions
 * the patterns name, a record at entry (its arguments, the thread state
 * its callers are found from) and SIGSTOP to the process, as break_hit
 * does for a C function.  User space reads the Python stack while it is
 * stopped, and resumes it.
 */
__noinline int py_break_hit(struct py_call *c, struct cmon_py_proc *p, __u64 cookie)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct cmon_func_stats *st = py_stats(cookie);
	struct cmon_py_rec *rec;
	struct py_bound *b;
	struct mm_struct *mm;
	__u32 zero = 0, n;

	if (!c || !p)
		return 0;
	if (st)
		st->calls++;
	if (__sync_fetch_and_add(&break_hits, 1) >= targ_break_count)
		return 0;
	b = bpf_map_lookup_elem(&py_bound, &zero);
	rec = b ? reserve_waiting(sizeof(*rec)) : NULL;
	if (!rec) {
		__sync_fetch_and_add(&break_lost, 1); /* said as break's (not stopped) */
		return 0;
	}
	py_bind(c, b);
	n = c->n > CMON_PY_MAX_ARGS ? CMON_PY_MAX_ARGS : c->n;
	rec->type = CMON_REC_PY;
	rec->flags = CMON_PY_BREAK;
	rec->ts_entry_ns = rec->ts_exit_ns = bpf_ktime_get_ns();
	rec->code = c->code;
	rec->tstate = py_tstate(c->tstate, p);
	rec->frame = c->frame;
	rec->pid = pid_tgid >> 32;
	rec->tid = (__u32)pid_tgid;
	rec->depth = 0;
	rec->n_args = n;
	rec->n_params = c->n;
	rec->why = 0;
	rec->task = 0;
	rec->exc_type[0] = 0;
	__builtin_memcpy(rec->comm, task->group_leader->comm, CMON_COMM_LEN);
	rec->ret.kind = CMON_PYV_ABSENT;
	rec->ret.nbytes = 0;
	for (__u32 i = 0; i < CMON_PY_MAX_ARGS; i++) {
		if (i < n)
			py_param(b, i, &rec->args[i], p);
		else
			rec->args[i].kind = CMON_PYV_ABSENT;
	}
	if (py_more_args(b, c->n, rec->ts_entry_ns, p))
		rec->flags |= CMON_PY_MORE;
	mm = task->mm;
	rec->rss_entry = rec->rss_exit = mm ? mm_rss_bytes(mm) : 0;
	rec->vms_entry = rec->vms_exit = mm ? mm_vms_bytes(mm) : 0;
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
	bpf_send_signal(CMON_SIGSTOP);
	return 0;
}

/*
 * A Python call entered (C: the evaluator's frame or the vectorcall
 * entry's arguments, at stack slot SP).  1 when it needs no return probe
 * (an uprobe session then makes none); PY_ENTER_BREAK when it is a break's
 * (py_enter_call stops it: py_break_hit called from here would put its
 * chain of calls under this frame's, past 6.1's 512 bytes of stack).
 */
#define PY_ENTER_BREAK 2
static __noinline int py_enter(struct py_call *c, __u64 sp, __u64 cookie)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 pid = bpf_get_current_pid_tgid() >> 32, zero = 0, verdict, d;
	struct uprobe_task *ut = task->utask;
	struct cmon_func_stats *st;
	struct cmon_py_proc *p;
	struct cmon_py_stack *ss;
	struct cmon_py_frame *fr;
	struct py_bound *b;
	struct mm_struct *mm;
	bool unread = false, full = false;

	p = py_proc(task, pid, &full);
	if (!p) {
		st = full ? py_stats(cookie) : NULL;
		if (full)
			__sync_fetch_and_add(&py_procs_full, 1);
		if (st)
			st->lost_nomem++;
		return 1;
	}
	if (p->stop == PY_STOP_AT_START || p->stop == PY_STOP_AT_CALL) {
		/* A launched interpreter's first Python call: stopped until
		 * user space has set it up (then SIGCONT). */
		__u32 was = p->stop;

		p->stop = was + 1;
		bpf_send_signal(CMON_SIGSTOP);
		if (was == PY_STOP_AT_START || targ_break_count)
			return 1; /* one stop at a time (the interpreter's own first call) */
	}
	if (p->stop == PY_STOP_AT_START + 1)
		return 1; /* not set up yet */
	if (!task_wanted(task) || !c->code)
		return 1;
	verdict = py_decide(pid, c->code);
	if (!verdict) {
		st = py_stats(cookie);
		if (st)
			st->lost_ringbuf++; /* examined at its next call */
		return 1;
	}
	if (verdict == CMON_PY_SKIP)
		return 1;
	c->n = py_nparams(c->code, c->c, &unread);
	/* Its counts unread (the code object's page not there in that
	 * instant): the evaluator's frame has its parameters in its first
	 * slots all the same, and a vectorcall's positional arguments are its
	 * first parameters; user space keeps as many as the code object has
	 * (its keywords and defaults are not bound then). */
	if (unread && c->frame) {
		c->n = CMON_PY_MAX_ARGS;
	} else if (unread) {
		c->n = c->nargs < CMON_PY_MAX_ARGS ? (__u32)c->nargs : CMON_PY_MAX_ARGS;
		c->c[0] = (__s32)c->n;
	}
	if (targ_break_count) {
		/* no call stops while user space has not decided */
		return verdict == CMON_PY_TRACED ? PY_ENTER_BREAK : 1;
	}
	st = py_stats(cookie);
	if (st)
		st->calls++;
	ss = bpf_task_storage_get(&py_stacks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	b = bpf_map_lookup_elem(&py_bound, &zero);
	if (!ss || !b) {
		if (st)
			st->lost_nomem++;
		py_lose(pid, c->code);
		return 1;
	}
	py_unwind(ss, sp, true, p, cookie);
	d = ss->depth;
	/* Calls deeper than the stack are not recorded (counted): their
	 * returns find no frame with their slot and pass. */
	if (d >= CMON_PY_STACK_DEPTH) {
		if (st)
			st->lost_depth++;
		py_lose(pid, c->code);
		return 1;
	}
	fr = &ss->frames[d & (CMON_PY_STACK_DEPTH - 1)];
	fr->slot = sp;
	fr->frame = c->frame;
	fr->code = c->code;
	fr->tstate = c->tstate;
	fr->n_params = c->n;
	fr->n_args = c->n > CMON_PY_MAX_ARGS ? CMON_PY_MAX_ARGS : c->n;
	fr->flags = unread ? CMON_PY_FR_COUNTS_UNREAD : 0;
	fr->task = c->c[3] & PY_CO_COROUTINE ? py_task(py_tstate(c->tstate, p)) : 0;
	/* Past the kernel's nested return probes (this call's is not made
	 * yet): its return will not come. */
	if (ut && ut->depth >= CMON_KERNEL_URET_DEPTH)
		fr->flags |= CMON_PY_FR_NO_SLOT;
	if (c->frame) {
		__u8 owner = 0;

		bpf_probe_read_user(&owner, 1, (void *)(c->frame + targ_py.frame_owner));
		if (owner == targ_py.owner_generator)
			fr->flags |= CMON_PY_FR_GENERATOR;
	}
	py_bind(c, b);
	for (__u32 i = 0; i < CMON_PY_MAX_ARGS; i++) {
		if (i < fr->n_args)
			py_param(b, i, &fr->args[i], p);
		else
			fr->args[i].kind = CMON_PYV_ABSENT;
	}
	mm = task->mm;
	fr->rss = mm ? mm_rss_bytes(mm) : 0;
	fr->vms = mm ? mm_vms_bytes(mm) : 0;
	fr->ts = bpf_ktime_get_ns();
	if (py_more_args(b, c->n, fr->ts, p))
		fr->flags |= CMON_PY_FR_MORE;
	ss->depth = d + 1;
	return fr->flags & CMON_PY_FR_NO_SLOT ? 1 : 0;
}

/* A return from stack slot SLOT with RET (NULL: an exception). */
static __noinline int py_leave(__u64 slot, __u64 ret, __u64 ts, __u64 cookie)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct cmon_py_code_key key = { .pid = pid };
	struct cmon_py_verdict_val *verdict;
	struct cmon_py_stack *ss;
	struct cmon_py_frame *fr;
	struct cmon_py_proc *p;
	__u32 d;

	ss = bpf_task_storage_get(&py_stacks, task, 0, 0);
	if (!ss || !ss->depth)
		return 0;
	p = bpf_map_lookup_elem(&py_procs, &pid);
	if (!p)
		return 0;
	py_unwind(ss, slot, false, p, cookie);
	if (!ss->depth)
		return 0;
	d = ss->depth - 1;
	if (d >= CMON_PY_STACK_DEPTH)
		return 0;
	fr = &ss->frames[d & (CMON_PY_STACK_DEPTH - 1)];
	if (fr->slot != slot)
		return 0; /* an untraced call's return */
	ss->depth = d;
	key.code = fr->code;
	verdict = bpf_map_lookup_elem(&py_code, &key);
	if (verdict && verdict->verdict == CMON_PY_SKIP) {
		/* refused while it ran: user space's verdict, counted with
		 * the calls it filtered (outside_focus is --py's "not
		 * selected") */
		struct cmon_func_stats *st = py_stats(cookie);

		if (st)
			expr_count(EXPR_FILTERED, &st->outside_focus, NULL, false);
		return 0;
	}
	py_emit(fr, PY_HOW(cookie & CMON_COOKIE_FUNC_MASK,
			   CMON_PY_RETURNED | (ret ? 0 : CMON_PY_EXCEPTION), d), ret, ts, p);
	return 0;
}

/* Py_InitializeFromConfig's entry: a launched interpreter's start. */
SEC("uprobe")
int BPF_KPROBE(cmon_py_start)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct cmon_py_proc *p = bpf_map_lookup_elem(&py_procs, &pid);

	if (p && p->stop == PY_STOP_AT_START) {
		p->stop = PY_STOP_AT_START + 1;
		bpf_send_signal(CMON_SIGSTOP);
	}
	return 0;
}

/* py_enter, then a break's stop (1: no return probe wanted). */
static __always_inline int py_enter_call(struct py_call *c, __u64 sp, __u64 cookie)
{
	__u32 pid;
	int r = py_enter(c, sp, cookie);

	if (r != PY_ENTER_BREAK)
		return r;
	pid = bpf_get_current_pid_tgid() >> 32;
	py_break_hit(c, bpf_map_lookup_elem(&py_procs, &pid), cookie);
	return 1;
}

/* ---- the evaluator ---- */

static __always_inline int py_eval_enter(struct pt_regs *ctx, __u64 cookie)
{
	struct py_call *c = py_call_new();

	if (!c)
		return 1;
	c->frame = PT_REGS_PARM2(ctx);
	c->tstate = PT_REGS_PARM1(ctx);
	if (bpf_probe_read_user(&c->code, 8, (void *)(c->frame + targ_py.frame_code)))
		c->code = 0;
	return py_enter_call(c, PT_REGS_SP(ctx), cookie);
}

SEC("uprobe")
int BPF_KPROBE(cmon_py_entry)
{
	return py_eval_enter(ctx, bpf_get_attach_cookie(ctx));
}

/* The evaluator's or the vectorcall entry's return (uretprobe): the
 * return address is popped. */
SEC("uprobe")
int BPF_KPROBE(cmon_py_exit)
{
	__u64 ts = bpf_ktime_get_ns();

	return py_leave(PT_REGS_SP(ctx) - 8, PT_REGS_RC(ctx), ts, bpf_get_attach_cookie(ctx));
}

/* The evaluator's return instruction (inherited probes, links.c): the
 * return address not popped yet; no return probe is held, so calls at any
 * depth are seen. */
SEC("uprobe")
int BPF_KPROBE(cmon_py_ret_insn)
{
	__u64 ts = bpf_ktime_get_ns();

	return py_leave(PT_REGS_SP(ctx), PT_REGS_RC(ctx), ts, bpf_get_attach_cookie(ctx));
}

/* Both in one uprobe session: a call not selected gets no return probe,
 * so the kernel's 64 nested ones go to selected calls only. */
SEC("uprobe")
int BPF_KPROBE(cmon_py_eval)
{
	__u64 ts = bpf_ktime_get_ns();

	if (bpf_session_is_return())
		return py_leave(PT_REGS_SP(ctx) - 8, PT_REGS_RC(ctx), ts,
				bpf_get_attach_cookie(ctx));
	return py_eval_enter(ctx, bpf_get_attach_cookie(ctx));
}

/* ---- the vectorcall entry (3.12+) ---- */

/*
 * 3.13: FUNC, a traced __init__ (CODE), called with ARGS[0] an instance of
 * a class that has a version tag: that class's `Class(...)` sites could be
 * specialized to enter FUNC without a call (CALL_ALLOC_AND_ENTER_INIT,
 * guarded by that tag alone).  Announced once per (class, tag), the
 * process stopped until user space has taken the tag away.  The first
 * call at a site is never specialized: it comes here first.
 */
static __noinline int py_init_class(__u64 func, __u64 code, __u64 args, __u64 nargs)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), self = 0, cls = 0;
	struct cmon_py_code_key key = { .pid = pid_tgid >> 32, .code = code };
	struct py_class_key ck = { .pid = pid_tgid >> 32 };
	struct cmon_py_verdict_val *v;
	struct cmon_py_func_rec *r;
	struct cmon_py_proc *p;
	__u32 tag = 0, *was, stop;
	bool full;

	if (!targ_py.type_version || !nargs || !args)
		return 0;
	v = bpf_map_lookup_elem(&py_code, &key);
	if (!v || !(v->flags & CMON_PY_VF_INIT))
		return 0;
	if (bpf_probe_read_user(&self, 8, (void *)args) || !self ||
	    bpf_probe_read_user(&cls, 8, (void *)(self + targ_py.obj_type)) || !cls ||
	    bpf_probe_read_user(&tag, 4, (void *)(cls + targ_py.type_version)) || !tag)
		return 0;
	ck.cls = cls;
	was = bpf_map_lookup_elem(&py_init_classes, &ck);
	if (was && *was == tag)
		return 0;
	p = py_proc(bpf_get_current_task_btf(), ck.pid, &full);
	if (!p)
		return 0;
	r = reserve_waiting(sizeof(*r));
	if (!r)
		return 0; /* announced at its next call */
	bpf_map_update_elem(&py_init_classes, &ck, &tag, BPF_ANY);
	stop = !!(p->flags & CMON_PY_PROC_STOP_NEWFUNC);
	r->type = CMON_REC_PY_FUNC;
	r->pid = ck.pid;
	r->tid = (__u32)pid_tgid;
	r->func = func;
	r->code = code;
	r->cls = cls;
	r->stopped = stop;
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	if (stop)
		bpf_send_signal(CMON_SIGSTOP);
	return 0;
}

static __always_inline int py_vc_enter(struct pt_regs *ctx, __u64 cookie)
{
	struct py_call *c = py_call_new();

	if (!c)
		return 1;
	c->func = PT_REGS_PARM1(ctx);
	c->args = PT_REGS_PARM2(ctx);
	c->nargs = PT_REGS_PARM3(ctx) & ~(1ull << 63);
	c->kwnames = PT_REGS_PARM4(ctx);
	if (bpf_probe_read_user(&c->code, 8, (void *)(c->func + targ_py.func_code)))
		c->code = 0;
	py_init_class(c->func, c->code, c->args, c->nargs);
	return py_enter_call(c, PT_REGS_SP(ctx), cookie);
}

SEC("uprobe")
int BPF_KPROBE(cmon_py_vc_entry)
{
	return py_vc_enter(ctx, bpf_get_attach_cookie(ctx));
}

SEC("uprobe")
int BPF_KPROBE(cmon_py_vc)
{
	__u64 ts = bpf_ktime_get_ns();

	if (bpf_session_is_return())
		return py_leave(PT_REGS_SP(ctx) - 8, PT_REGS_RC(ctx), ts,
				bpf_get_attach_cookie(ctx));
	return py_vc_enter(ctx, bpf_get_attach_cookie(ctx));
}

/*
 * A function object just made (the return of CPython's constructors): one
 * whose code object is selected (or undecided) is announced to user space,
 * which points it at the vectorcall entry and clears its version (so that
 * no call site specializes to it: inlines it).  The process is stopped
 * until then (CMON_PY_PROC_STOP_NEWFUNC): no call of it is missed.  (The
 * kernel's bpf_probe_write_user would do it here, but a kernel locked
 * down refuses it.)
 */
SEC("uprobe")
int BPF_KPROBE(cmon_py_newfunc)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 pid_tgid = bpf_get_current_pid_tgid(), func = PT_REGS_RC(ctx), code = 0;
	__u32 pid = pid_tgid >> 32, verdict, stop;
	struct cmon_py_func_rec *r;
	struct cmon_py_proc *p;
	bool full;

	if (!func)
		return 0;
	p = py_proc(task, pid, &full);
	if (!p || p->mode != CMON_PY_MODE_VECTORCALL || !task_wanted(task))
		return 0;
	if (p->stop == PY_STOP_AT_START) { /* no start probe fired: set up now */
		p->stop = PY_STOP_AT_START + 1;
		bpf_send_signal(CMON_SIGSTOP);
	}
	if (p->stop)
		return 0;
	if (bpf_probe_read_user(&code, 8, (void *)(func + targ_py.func_code)) || !code)
		return 0;
	verdict = py_decide(pid, code);
	if (verdict == CMON_PY_SKIP)
		return 0;
	stop = !!(p->flags & CMON_PY_PROC_STOP_NEWFUNC);
	r = reserve_waiting(sizeof(*r));
	if (!r) {
		struct cmon_func_stats *st = py_stats(bpf_get_attach_cookie(ctx));

		if (st)
			st->lost_ringbuf++; /* a selected function not seen */
		return 0;
	}
	r->type = CMON_REC_PY_FUNC;
	r->pid = pid;
	r->tid = (__u32)pid_tgid;
	r->func = func;
	r->code = code;
	r->cls = 0;
	r->stopped = stop;
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	if (stop)
		bpf_send_signal(CMON_SIGSTOP);
	return 0;
}

#endif
