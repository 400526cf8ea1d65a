/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python.bpf.h: Python calls (--py), part of trace.bpf.c.
 *
 * cmon_py_entry is a uprobe on CPython's _PyEval_EvalFrameDefault(tstate,
 * frame, throwflag), which sees every Python call once user space has set
 * interp->eval_frame (user/python/cpython.c); cmon_py_exit its uretprobe.
 * A code object met for the first time is announced (cmon_py_code_rec) and
 * recorded while user space decides (PENDING): the first call of a traced
 * function is never lost.  Code objects user space refused (SKIP) cost a
 * map lookup.  Entry and return pair by the return-address slot, per
 * thread, so recursion pairs exactly.
 */
#ifndef CMON_PYTHON_BPF_H
#define CMON_PYTHON_BPF_H

#include "cmon_abi.h"
#include "break.bpf.h"
#include "events.bpf.h"
#include "filter.bpf.h"
#include "mem.bpf.h"

const volatile struct cmon_py_offsets targ_py = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct cmon_py_proc);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct cmon_py_code_key);
	__type(value, struct cmon_py_verdict_val);
} py_code SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cmon_py_stack);
} py_stacks SEC(".maps");

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

/* The object at OBJ, rendered into V by its type. */
static __noinline void py_value(__u64 obj, struct cmon_py_val *v, const struct cmon_py_proc *p)
{
	__u64 type = 0, hdr[4];
	__s64 size = 0;
	bool have_hdr = false;

	v->num = 0;
	v->len = 0;
	v->nbytes = 0;
	if (!obj) {
		v->kind = CMON_PYV_ABSENT;
		return;
	}
	if (obj == p->none) {
		v->kind = CMON_PYV_NONE;
		return;
	}
	if (obj == p->true_ || obj == p->false_) {
		v->kind = obj == p->true_ ? CMON_PYV_TRUE : CMON_PYV_FALSE;
		return;
	}
	/* One read for the header (and a small int's digits); field by field
	 * when those 32 bytes are not all readable. */
	if (!bpf_probe_read_user(hdr, sizeof(hdr), (void *)obj)) {
		type = hdr[(targ_py.obj_type / 8) & 3];
		size = (__s64)hdr[(targ_py.var_size / 8) & 3];
		have_hdr = targ_py.long_digits == 24;
	} else if (bpf_probe_read_user(&type, sizeof(type), (void *)(obj + targ_py.obj_type))) {
		v->kind = CMON_PYV_UNREADABLE;
		return;
	} else {
		bpf_probe_read_user(&size, sizeof(size), (void *)(obj + targ_py.var_size));
	}
	if (type == p->types[CMON_PYT_INT]) {
		__u32 d[3] = {};
		__s64 n = size < 0 ? -size : size;
		__u64 mag;

		__u64 at = obj + targ_py.long_digits;

		if (have_hdr && n <= 2) {
			d[0] = (__u32)hdr[3];
			d[1] = n == 2 ? (__u32)(hdr[3] >> 32) : 0;
			if (n == 1)
				d[1] = 0;
		} else if (n > 3 || (n >= 1 && bpf_probe_read_user(&d[0], 4, (void *)at)) ||
		    (n >= 2 && bpf_probe_read_user(&d[1], 4, (void *)(at + 4))) ||
		    (n >= 3 && bpf_probe_read_user(&d[2], 4, (void *)(at + 8))) ||
		    /* 30-bit digits: beyond 2^63, or 2^63 itself unless negative */
		    (n == 3 && (d[2] > 8 || (d[2] == 8 && (size > 0 || d[1] || d[0]))))) {
			__u32 top = 0;

			/* Too big for 64 bits: its size in bits, from its top digit. */
			v->kind = CMON_PYV_BIGINT;
			v->len = 0;
			v->num = size < 0;
			if (n <= 0x7fffffff &&
			    !bpf_probe_read_user(&top, 4, (void *)(at + 4 * (__u64)(n - 1)))) {
				__u32 bits = 0;

				for (int i = 0; i < 30 && top; i++, top >>= 1)
					bits++;
				v->len = (__u32)(30 * (n - 1)) + bits;
			}
			return;
		}
		mag = (__u64)d[0] | (__u64)d[1] << 30 | (__u64)d[2] << 60;
		v->kind = CMON_PYV_INT;
		v->num = size < 0 ? -mag : mag;
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
			return;
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
		__u64 name = 0;
		long n;

		v->kind = CMON_PYV_OTHER;
		v->num = type;
		/* tp_name now: the process may be gone when user space reads */
		bpf_probe_read_user(&name, 8, (void *)(type + targ_py.type_name));
		n = name ? bpf_probe_read_user_str(v->data, sizeof(v->data), (void *)name) : 0;
		v->nbytes = n > 1 ? (__u8)(n - 1) : 0;
	}
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
 * cmon break --py: the rows a function's first call is matched by here
 * (cmon_abi.h), and the thread's stops.
 */
const volatile struct cmon_py_break_pat targ_py_break[CMON_PY_BREAK_MAX] = {};
const volatile __u32 targ_py_break_n = 0;

/* A code object's names, where py_break_row reads them (per CPU). */
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

/*
 * Does row K of targ_py_break name NM?  A global function: the verifier
 * checks it once, not once per row and path of its caller (16 rows of
 * byte loops inline exceed its budget).  1 or 0.
 */
__noinline int py_break_row(const struct py_names *nm, __u32 k)
{
	const volatile struct cmon_py_break_pat *m;
	__u32 qlen, flen, fl, off;
	bool module;

	if (!nm || k >= CMON_PY_BREAK_MAX)
		return 0;
	m = &targ_py_break[k];
	qlen = nm->qlen;
	flen = nm->flen;
	if (m->qual_len != qlen || qlen >= CMON_PY_QUALNAME_MAX - 1)
		return 0;
	for (__u32 i = 0; i < CMON_PY_QUALNAME_MAX; i++) {
		if (i >= qlen)
			break;
		if (nm->qual[i] != m->qualname[i])
			return 0;
	}
	fl = m->file_len;
	if (!fl)
		return 1;
	if (fl > flen || flen >= CMON_PY_FILENAME_MAX - 1)
		return 0;
	module = m->flags & CMON_PY_BREAK_MODULE;
	off = flen - fl;
	if (off) {
		char b = nm->file[(off - 1) & (CMON_PY_FILENAME_MAX - 1)];

		if (b != '/' && !(module && b == '.'))
			return 0;
	}
	for (__u32 i = 0; i < CMON_PY_FILENAME_MAX; i++) {
		char c, w;

		if (i >= fl)
			break;
		c = nm->file[(off + i) & (CMON_PY_FILENAME_MAX - 1)];
		w = m->file[i];
		/* a module's '.' is a directory's '/', not the one of ".py" */
		if (c != w && !(module && w == '.' && c == '/' && i + 3 < fl))
			return 0;
	}
	return 1;
}

/* Does a row name QUAL (QLEN bytes) of FILE (FLEN bytes)? */
static __always_inline bool py_break_match(const char *qual, __u32 qlen, const char *file,
					   __u32 flen)
{
	__u32 zero = 0;
	struct py_names *nm = bpf_map_lookup_elem(&py_names, &zero);

	if (!nm)
		return false;
	bpf_probe_read_kernel(nm->qual, sizeof(nm->qual), qual);
	bpf_probe_read_kernel(nm->file, sizeof(nm->file), file);
	nm->qlen = qlen;
	nm->flen = flen;
	for (__u32 k = 0; k < CMON_PY_BREAK_MAX; k++) {
		if (k >= targ_py_break_n)
			break;
		if (py_break_row(nm, k))
			return true;
	}
	return false;
}

/* Announce code object CODE of process PID with its names.  0, -1 when
 * it could not be; with MATCH (cmon break), 1 when a break row names it. */
static __noinline int py_announce(__u32 pid, __u64 code, __u64 fp, bool match)
{
	struct cmon_py_code_rec *cr = bpf_ringbuf_reserve(&events, sizeof(*cr), 0);
	__u64 obj = 0, names = 0;
	__u32 qlen, flen;
	int matched = 0;
	__s32 n;

	if (!cr)
		return -1;
	cr->type = CMON_REC_PY_CODE;
	cr->pid = pid;
	cr->code = code;
	cr->fp = fp;
	cr->firstlineno = 0;
	cr->argcount = cr->kwonlyargcount = cr->flags = 0;
	bpf_probe_read_user(&cr->firstlineno, 4, (void *)(code + targ_py.code_firstlineno));
	bpf_probe_read_user(&cr->argcount, 4, (void *)(code + targ_py.code_argcount));
	bpf_probe_read_user(&cr->kwonlyargcount, 4, (void *)(code + targ_py.code_kwonlyargcount));
	bpf_probe_read_user(&cr->flags, 4, (void *)(code + targ_py.code_flags));
	bpf_probe_read_user(&obj, 8, (void *)(code + targ_py.code_qualname));
	qlen = py_ascii(obj, cr->qualname, sizeof(cr->qualname));
	obj = 0;
	bpf_probe_read_user(&obj, 8, (void *)(code + targ_py.code_filename));
	flen = py_ascii(obj, cr->filename, sizeof(cr->filename));
	if (match && targ_py_break_n)
		matched = py_break_match(cr->qualname, qlen, cr->filename, flen);
	bpf_probe_read_user(&names, 8, (void *)(code + targ_py.code_localsplusnames));
	n = cr->argcount + cr->kwonlyargcount + !!(cr->flags & 0x4) + !!(cr->flags & 0x8);
	cr->n_names = n < 0 ? 0 : n > CMON_PY_MAX_ARGS ? CMON_PY_MAX_ARGS : (__u32)n;
	for (__u32 i = 0; i < CMON_PY_MAX_ARGS; i++) {
		obj = 0;
		if (i < cr->n_names && names)
			bpf_probe_read_user(&obj, 8, (void *)(names + targ_py.tuple_items + 8 * i));
		else
			obj = 0;
		py_ascii(obj, cr->names[i], CMON_PY_ARGNAME_MAX);
	}
	bpf_ringbuf_submit(cr, 0);
	return matched;
}

static __always_inline struct cmon_func_stats *py_stats(__u64 cookie)
{
	return stats_of(cookie & CMON_COOKIE_FUNC_MASK);
}

/* FR as a record: returned (RET the object, or NULL for an exception) or
 * not (CMON_PY_NORETURN: the stack moved past it).  HOW packs the probe's
 * func_id (bits 32-63), the flags (16-31) and the depth (0-15): BPF
 * functions take five arguments. */
#define PY_HOW(func_id, flags, d) ((__u64)(func_id) << 32 | (__u64)(flags) << 16 | (d))

static __noinline void py_emit(struct cmon_py_frame *fr, __u64 how, __u64 ret, __u64 ts,
			       struct cmon_py_proc *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 flags = (how >> 16) & 0xffff, d = how & 0xffff;
	struct cmon_py_rec *rec = NULL;
	struct mm_struct *mm;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 n = fr->n_args;

	/* As long as its arguments need: a constant size per count. */
	switch (n) {
	case 0: rec = bpf_ringbuf_reserve(&events, CMON_PY_REC_SIZE(0), 0); break;
	case 1: rec = bpf_ringbuf_reserve(&events, CMON_PY_REC_SIZE(1), 0); break;
	case 2: rec = bpf_ringbuf_reserve(&events, CMON_PY_REC_SIZE(2), 0); break;
	case 3: rec = bpf_ringbuf_reserve(&events, CMON_PY_REC_SIZE(3), 0); break;
	case 4: rec = bpf_ringbuf_reserve(&events, CMON_PY_REC_SIZE(4), 0); break;
	case 5: rec = bpf_ringbuf_reserve(&events, CMON_PY_REC_SIZE(5), 0); break;
	default: n = CMON_PY_MAX_ARGS;
		rec = bpf_ringbuf_reserve(&events, CMON_PY_REC_SIZE(CMON_PY_MAX_ARGS), 0); break;
	}
	if (!rec) {
		struct cmon_func_stats *st = stats_of(how >> 32);

		if (st)
			st->lost_ringbuf++;
		return;
	}
	rec->type = CMON_REC_PY;
	rec->flags = flags;
	if ((flags & CMON_PY_RETURNED) && ret && fr->generator) {
		__u64 instr = 0;
		__u8 op = 0;

		if (!bpf_probe_read_user(&instr, 8, (void *)(fr->frame + targ_py.frame_prev_instr)) &&
		    !bpf_probe_read_user(&op, 1, (void *)instr) && op == targ_py.op_yield_value)
			rec->flags |= CMON_PY_YIELDED;
	}
	rec->ts_entry_ns = fr->ts;
	rec->ts_exit_ns = ts;
	rec->code = fr->code;
	rec->pid = pid_tgid >> 32;
	rec->tid = (__u32)pid_tgid;
	rec->depth = d;
	rec->n_args = n;
	__builtin_memcpy(rec->comm, task->group_leader->comm, CMON_COMM_LEN);
	for (__u32 i = 0; i < CMON_PY_MAX_ARGS; i++)
		if (i < n)
			__builtin_memcpy(&rec->args[i], &fr->args[i], sizeof(rec->args[i]));
	if (flags & CMON_PY_RETURNED) {
		py_value(ret, &rec->ret, p);
	} else {
		rec->ret.kind = CMON_PYV_ABSENT;
		rec->ret.nbytes = 0;
	}
	mm = task->mm;
	rec->rss_entry = fr->rss;
	rec->vms_entry = fr->vms;
	rec->rss_exit = (flags & CMON_PY_RETURNED) && mm ? mm_rss_bytes(mm) : 0;
	rec->vms_exit = (flags & CMON_PY_RETURNED) && mm ? mm_vms_bytes(mm) : 0;
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

/* Frames the stack has moved past (their return was never seen: the
 * kernel installs at most 64 nested uretprobes per thread) are written as
 * such: at an entry at SLOT, pending frames at or below it; at a return
 * from SLOT, those below it. */
static __always_inline void py_unwind(struct task_struct *task, struct cmon_py_stack *ss,
				      __u64 slot, bool entry, struct cmon_py_proc *p, __u64 cookie)
{
	for (int i = 0; i < 8; i++) {
		__u32 d = ss->depth;
		struct cmon_py_frame *fr;

		if (!d || d > CMON_PY_STACK_DEPTH)
			return;
		fr = &ss->frames[(d - 1) & (CMON_PY_STACK_DEPTH - 1)];
		if (entry ? fr->slot > slot : fr->slot >= slot)
			return;
		py_emit(fr, PY_HOW(cookie & CMON_COOKIE_FUNC_MASK, CMON_PY_NORETURN, d - 1), 0, 0, p);
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
static __noinline int py_break_hit(struct cmon_py_proc *p, __u64 frame, __u64 code,
				   __u64 tstate, __u64 cookie)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct cmon_func_stats *st = py_stats(cookie);
	__s32 argc = 0, kwonly = 0, flags = 0;
	struct cmon_py_rec *rec;
	struct mm_struct *mm;
	__u32 n;

	if (st)
		st->calls++;
	if (__sync_fetch_and_add(&break_hits, 1) >= targ_break_count)
		return 0;
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&break_lost, 1); /* said as break's (not stopped) */
		return 0;
	}
	bpf_probe_read_user(&argc, 4, (void *)(code + targ_py.code_argcount));
	bpf_probe_read_user(&kwonly, 4, (void *)(code + targ_py.code_kwonlyargcount));
	bpf_probe_read_user(&flags, 4, (void *)(code + targ_py.code_flags));
	argc += kwonly + !!(flags & 0x4) + !!(flags & 0x8); /* CO_VARARGS, CO_VARKEYWORDS */
	n = argc < 0 ? 0 : argc > CMON_PY_MAX_ARGS ? CMON_PY_MAX_ARGS : (__u32)argc;
	rec->type = CMON_REC_PY;
	rec->flags = CMON_PY_BREAK;
	rec->ts_entry_ns = rec->ts_exit_ns = bpf_ktime_get_ns();
	rec->code = code;
	rec->tstate = tstate;
	rec->frame = frame;
	rec->pid = pid_tgid >> 32;
	rec->tid = (__u32)pid_tgid;
	rec->depth = 0;
	rec->n_args = n;
	__builtin_memcpy(rec->comm, task->group_leader->comm, CMON_COMM_LEN);
	rec->ret.kind = CMON_PYV_ABSENT;
	rec->ret.nbytes = 0;
	for (__u32 i = 0; i < CMON_PY_MAX_ARGS; i++) {
		__u64 obj = 0;

		if (i < n)
			bpf_probe_read_user(&obj, 8, (void *)(frame + targ_py.frame_localsplus + 8 * i));
		py_value(i < n ? obj : 0, &rec->args[i], p);
	}
	mm = task->mm;
	rec->rss_entry = rec->rss_exit = mm ? mm_rss_bytes(mm) : 0;
	rec->vms_entry = rec->vms_exit = mm ? mm_vms_bytes(mm) : 0;
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
	bpf_send_signal(CMON_SIGSTOP);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(cmon_py_entry)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct cmon_py_code_key key = { .pid = pid };
	struct cmon_func_stats *st;
	struct cmon_py_proc *p;
	struct cmon_py_stack *ss;
	struct cmon_py_frame *fr;
	struct mm_struct *mm;
	__u64 frame = PT_REGS_PARM2(ctx);
	struct cmon_py_verdict_val *verdict, pending = { .verdict = CMON_PY_PENDING };
	__u64 fn = 0, qn = 0;
	__u32 d;
	__s32 argc = 0, kwonly = 0, flags = 0;

	p = bpf_map_lookup_elem(&py_procs, &pid);
	if (!p)
		return 0;
	if (p->stop == 1) {
		/* A launched interpreter's first Python call: stopped until
		 * user space has set its eval_frame hook (then SIGCONT). */
		p->stop = 2;
		bpf_send_signal(19 /* SIGSTOP */);
		if (targ_break_count)
			return 0; /* one stop at a time (the interpreter's own first call) */
	}
	if (!task_wanted(task))
		return 0;
	if (bpf_probe_read_user(&key.code, 8, (void *)(frame + targ_py.frame_code)) || !key.code)
		return 0;
	{
		/* co_filename .. co_qualname in one read when they are close */
		__u64 nm[4];
		__u32 dq = targ_py.code_qualname - targ_py.code_filename;

		if (dq < 32 && !(dq & 7) &&
		    !bpf_probe_read_user(nm, sizeof(nm), (void *)(key.code + targ_py.code_filename))) {
			fn = nm[0];
			qn = nm[(dq / 8) & 3];
		} else {
			bpf_probe_read_user(&fn, 8, (void *)(key.code + targ_py.code_filename));
			bpf_probe_read_user(&qn, 8, (void *)(key.code + targ_py.code_qualname));
		}
	}
	pending.fp = fn ^ (qn << 1 | qn >> 63);
	verdict = bpf_map_lookup_elem(&py_code, &key);
	if (verdict && verdict->fp != pending.fp) {
		/* A new code object where a freed one was: decide again. */
		bpf_map_delete_elem(&py_code, &key);
		verdict = NULL;
	}
	if (verdict && verdict->verdict == CMON_PY_SKIP)
		return 0;
	if (targ_break_count) {
		/* A function seen first is named and matched here, at once:
		 * its first call stops if it matches, and no call stops
		 * while user space has not decided. */
		if (!verdict || verdict->verdict == CMON_PY_PENDING) {
			struct cmon_py_verdict_val now = { .fp = pending.fp };
			int m = py_announce(pid, key.code, pending.fp, true);

			if (m < 0) {
				st = py_stats(cookie);
				if (st)
					st->lost_ringbuf++; /* examined at its next call */
				return 0;
			}
			now.verdict = m ? CMON_PY_TRACED : CMON_PY_SKIP;
			bpf_map_update_elem(&py_code, &key, &now, BPF_ANY);
			if (!m)
				return 0;
		}
		return py_break_hit(p, frame, key.code, PT_REGS_PARM1(ctx), cookie);
	}
	st = py_stats(cookie);
	if (!verdict && !bpf_map_update_elem(&py_code, &key, &pending, BPF_NOEXIST) &&
	    py_announce(pid, key.code, pending.fp, false)) {
		/* Unannounced, it would stay pending for good: forget it. */
		bpf_map_delete_elem(&py_code, &key);
		if (st)
			st->lost_ringbuf++;
		return 0;
	}
	if (st)
		st->calls++;
	ss = bpf_task_storage_get(&py_stacks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ss) {
		if (st)
			st->lost_nomem++;
		return 0;
	}
	py_unwind(task, ss, PT_REGS_SP(ctx), true, p, cookie);
	d = ss->depth;
	/* Calls deeper than the stack are not recorded (counted): their
	 * returns find no frame with their slot and pass. */
	if (d >= CMON_PY_STACK_DEPTH) {
		if (st)
			st->lost_depth++;
		return 0;
	}
	fr = &ss->frames[d & (CMON_PY_STACK_DEPTH - 1)];
	fr->slot = PT_REGS_SP(ctx);
	fr->frame = frame;
	fr->code = key.code;
	bpf_probe_read_user(&argc, 4, (void *)(key.code + targ_py.code_argcount));
	bpf_probe_read_user(&kwonly, 4, (void *)(key.code + targ_py.code_kwonlyargcount));
	bpf_probe_read_user(&flags, 4, (void *)(key.code + targ_py.code_flags));
	argc += kwonly + !!(flags & 0x4) + !!(flags & 0x8); /* CO_VARARGS, CO_VARKEYWORDS */
	fr->n_args = argc < 0 ? 0 : argc > CMON_PY_MAX_ARGS ? CMON_PY_MAX_ARGS : (__u32)argc;
	fr->generator = 0;
	{
		__u8 owner = 0;

		bpf_probe_read_user(&owner, 1, (void *)(frame + targ_py.frame_owner));
		fr->generator = owner == targ_py.owner_generator;
	}
	{
		/* the parameters' slots in one read (one by one if it fails) */
		__u64 locals[CMON_PY_MAX_ARGS] = {};
		__u32 n = fr->n_args;
		bool all = n && n <= CMON_PY_MAX_ARGS &&
			   !bpf_probe_read_user(locals, (n * 8) & 0x3f,
						(void *)(frame + targ_py.frame_localsplus));

		for (__u32 i = 0; i < CMON_PY_MAX_ARGS; i++) {
			__u64 obj = 0;

			if (i >= n) {
				fr->args[i].kind = CMON_PYV_ABSENT;
				continue;
			}
			if (all)
				obj = locals[i];
			else
				bpf_probe_read_user(&obj, 8,
						    (void *)(frame + targ_py.frame_localsplus + 8 * i));
			py_value(obj, &fr->args[i], p);
		}
	}
	mm = task->mm;
	fr->rss = mm ? mm_rss_bytes(mm) : 0;
	fr->vms = mm ? mm_vms_bytes(mm) : 0;
	fr->ts = bpf_ktime_get_ns();
	ss->depth = d + 1;
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(cmon_py_exit)
{
	__u64 ts = bpf_ktime_get_ns();
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 slot = PT_REGS_SP(ctx) - 8; /* uretprobe: the return address is popped */
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct cmon_py_code_key key = { .pid = pid };
	struct cmon_py_stack *ss;
	struct cmon_py_frame *fr;
	struct cmon_py_proc *p;
	__u64 ret = PT_REGS_RC(ctx);
	struct cmon_py_verdict_val *verdict;
	__u32 d;

	ss = bpf_task_storage_get(&py_stacks, task, 0, 0);
	if (!ss || !ss->depth)
		return 0;
	p = bpf_map_lookup_elem(&py_procs, &pid);
	if (!p)
		return 0;
	py_unwind(task, ss, slot, false, p, bpf_get_attach_cookie(ctx));
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
		/* refused while it ran: counted with the calls user space
		 * filtered (outside_focus is --py's "not selected") */
		struct cmon_func_stats *st = py_stats(bpf_get_attach_cookie(ctx));

		if (st)
			st->outside_focus++;
		return 0;
	}
	py_emit(fr, PY_HOW(bpf_get_attach_cookie(ctx) & CMON_COOKIE_FUNC_MASK,
			   CMON_PY_RETURNED | (ret ? 0 : CMON_PY_EXCEPTION), d), ret, ts, p);
	return 0;
}

#endif
