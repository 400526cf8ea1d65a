// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyrecord.c: the kernel's records (pytrace_impl.h): code objects named
 * and decided, a call's further parameters kept for it, calls decoded
 * into call records, and what could not be decoded counted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "core/grow.h"
#include "core/log.h"
#include "python/pytrace_impl.h"

/* QUALNAME is a method __init__. */
static bool is_init(const char *qualname)
{
	size_t n = strlen(qualname);

	return n > 9 && !strcmp(qualname + n - 9, ".__init__");
}

/* REC read again: an address seen before held a code object since freed. */
struct py_code *pyrecord__code(struct pytrace *pt, struct py_proc *p, uint64_t code,
			       const struct cmon_py_code_rec *rec)
{
	uint64_t *slot;
	struct py_code *c;
	bool added;

	slot = hmap__get(&p->codes, &code, sizeof(code), &added);
	if (!slot)
		return NULL;
	if (!added && *slot && !rec)
		return (struct py_code *)(uintptr_t)*slot;
	pycode__free((struct py_code *)(uintptr_t)*slot);
	*slot = 0;
	c = pycode__new(p->pid, code, rec, pt->layout);
	if (!c)
		return NULL;
	*slot = (uintptr_t)c;
	for (size_t i = 0; i < pt->n_patterns; i++) {
		if (pycode__matches(pt->patterns[i], c->qualname, c->filename)) {
			c->traced = true;
			pt->hits[i]++;
		}
	}
	return c;
}


uint32_t pyrecord__flags(const struct pytrace *pt, const struct py_code *c)
{
	/* 3.13: its calls tell the classes to keep from entering it without one */
	return c && c->traced && pt->layout && pt->layout->bpf.type_version &&
			       is_init(c->qualname) ? CMON_PY_VF_INIT : 0;
}

void pytrace__on_code(struct pytrace *pt, const struct cmon_py_code_rec *rec)
{
	struct py_proc *p = pyproc__of(pt, (pid_t)rec->pid);
	struct cmon_py_code_key key = { .pid = rec->pid, .code = rec->code };
	struct cmon_py_verdict_val val = { .fp = rec->fp };
	struct py_code *c;

	if (!p)
		return;
	c = pyrecord__code(pt, p, rec->code, rec);
	val.verdict = c && c->traced ? CMON_PY_TRACED : CMON_PY_SKIP;
	val.flags = pyrecord__flags(pt, c);
	if (pt->code_fd >= 0)
		bpf_map_update_elem(pt->code_fd, &key, &val, BPF_ANY);
}

void pytrace__each_lost(struct pytrace *pt, pytrace_lost_fn fn, void *ctx)
{
	struct cmon_py_code_key key, next;
	bool first = true;
	char where[CMON_PY_FILENAME_MAX + 16];

	if (pt->lost_fd < 0)
		return;
	while (!bpf_map_get_next_key(pt->lost_fd, first ? NULL : &key, &next)) {
		struct py_proc *p = pyproc__of(pt, (pid_t)next.pid);
		struct py_code *c = p ? pyrecord__code(pt, p, next.code, NULL) : NULL;
		__u64 n = 0;

		first = false;
		key = next;
		if (bpf_map_lookup_elem(pt->lost_fd, &key, &n) || !n)
			continue;
		snprintf(where, sizeof(where), "%s:%d", c ? c->filename : "?", c ? c->firstlineno : 0);
		fn(ctx, key.pid, c ? c->qualname : "?", where, n);
	}
}

int pytrace__on_args(struct pytrace *pt, const void *data, size_t size)
{
	const struct cmon_py_args_rec *in = data;
	struct more_args *m;

	if (size < CMON_PY_ARGS_REC_SIZE(0) || in->n > CMON_PY_MORE_ARGS ||
	    size < CMON_PY_ARGS_REC_SIZE(in->n))
		return -EINVAL;
	/* a call pending past 4096 others of its kind: its record is long lost */
	if (pt->n_more == 4096) {
		memmove(pt->more, pt->more + 1, (pt->n_more - 1) * sizeof(*pt->more));
		pt->n_more--;
	}
	if (GROW(pt->more, pt->n_more, pt->cap_more, 16))
		return -ENOMEM;
	m = &pt->more[pt->n_more++];
	m->pid = in->pid;
	m->tid = in->tid;
	m->ts = in->ts_entry_ns;
	m->n = in->n;
	memcpy(m->v, in->args, in->n * sizeof(m->v[0]));
	return 0;
}


/* REC's further parameters into OUT (and dropped from the list): *N. */
static bool take_more(struct pytrace *pt, const struct cmon_py_rec *rec, struct more_args *out)
{
	for (size_t i = pt->n_more; i-- > 0;) {
		struct more_args *m = &pt->more[i];

		if (m->tid == rec->tid && m->pid == rec->pid && m->ts == rec->ts_entry_ns) {
			*out = *m;
			memmove(m, m + 1, (pt->n_more - i - 1) * sizeof(*m));
			pt->n_more--;
			return true;
		}
	}
	return false;
}

int pytrace__copy_rec(const void *data, size_t size, struct cmon_py_rec *out)
{
	const struct cmon_py_rec *in = data;

	if (size < CMON_PY_REC_SIZE(0) || in->n_args > CMON_PY_MAX_ARGS ||
	    size < CMON_PY_REC_SIZE(in->n_args))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	memcpy(out, data, CMON_PY_REC_SIZE(in->n_args)); /* what it carries, no more */
	out->comm[CMON_COMM_LEN - 1] = 0;
	out->exc_type[CMON_PY_EXC_TYPE_MAX - 1] = 0;
	out->task_name[CMON_PY_TASK_NAME_MAX - 1] = 0;
	return 0;
}

uint64_t pytrace__filtered(const struct pytrace *pt) { return pt->filtered; }
uint64_t pytrace__undecoded(const struct pytrace *pt) { return pt->undecoded; }
void pytrace__set_args_column(struct pytrace *pt, size_t col) { pt->args_column = col; }

static enum call_status status_of(const struct cmon_py_rec *rec)
{
	return rec->flags & CMON_PY_BREAK ? CALL_ENTRY_ONLY
	       : rec->flags & CMON_PY_EXCEPTION ? CALL_RAISED
	       : rec->flags & CMON_PY_YIELDED ? CALL_YIELD
	       : rec->flags & CMON_PY_RETURNED ? CALL_OK
					       : CALL_NORETURN;
}

/* The parameters: each value's JSON text (cells), then {"name":value,...}. */
static int render_args(struct pytrace *pt, struct py_proc *p, const struct py_code *c,
		       const struct cmon_py_rec *rec, uint32_t *n_out)
{
	struct more_args more = { 0 };
	uint32_t n = rec->n_args < CMON_PY_MAX_ARGS ? rec->n_args : CMON_PY_MAX_ARGS;
	uint32_t n_params = rec->n_params;
	bool have_more = (rec->flags & CMON_PY_MORE) && take_more(pt, rec, &more);
	int err = 0;

	if (have_more && n == CMON_PY_MAX_ARGS)
		n += more.n;
	/* The kernel could not read the code object's counts: the frame's
	 * first slots came instead, as many as the code object has are its
	 * parameters (the rest are its locals, or past them). */
	if (rec->flags & CMON_PY_COUNTS_UNREAD) {
		n_params = c->n_names;
		n = n < n_params ? n : n_params;
	}
	strbuf__reset(&pt->cellbuf);
	for (uint32_t i = 0; i < n && !err; i++) {
		pt->cell_off[i] = pt->cellbuf.len;
		err = pyvalue__render(&p->values,
				      i < CMON_PY_MAX_ARGS ? &rec->args[i]
							   : &more.v[i - CMON_PY_MAX_ARGS],
				      &pt->cellbuf);
		if (!err)
			err = strbuf__putc(&pt->cellbuf, 0);
	}
	strbuf__reset(&pt->args);
	err = err ? err : strbuf__putc(&pt->args, '{');
	for (uint32_t i = 0; i < n && !err; i++) {
		char argn[16];
		const char *name = i < c->n_names ? c->names[i] : NULL;

		if (!name) {
			snprintf(argn, sizeof(argn), "arg%u", i);
			name = argn;
		}
		pt->cells[i] = pt->cellbuf.buf + pt->cell_off[i];
		pt->names[i] = i < c->n_names ? c->names[i] : NULL;
		pt->columns[i] = SIZE_MAX;
		if (i)
			err = strbuf__putc(&pt->args, ',');
		if (!err)
			err = pyvalue__json_string(&pt->args, name, strlen(name));
		if (!err)
			err = strbuf__printf(&pt->args, ":%s", pt->cells[i]);
	}
	/* parameters the records had no room for: said, not dropped silently */
	if (!err && n_params > n)
		err = strbuf__printf(&pt->args, "%s\"...\":\"<%u more not recorded>\"",
				     n ? "," : "", n_params - n);
	err = err ? err : strbuf__putc(&pt->args, '}');
	*n_out = n;
	return err;
}

/* An asyncio task as {"name":"Task-1","id":ID}: its name as the kernel
 * read it while the task ran (3.12+: "#N" for a name not made yet). */
static int task_json(struct pytrace *pt, const struct cmon_py_rec *rec)
{
	const char *name = rec->task_name;
	int err = strbuf__puts(&pt->task, "{\"name\":");

	if (!err && name[0] == '#')
		err = strbuf__printf(&pt->task, "\"Task-%s\"", name + 1);
	else if (!err && name[0])
		err = pyvalue__json_string(&pt->task, name, strnlen(name, CMON_PY_TASK_NAME_MAX));
	else if (!err)
		err = strbuf__puts(&pt->task, "null");
	return err ? err : strbuf__printf(&pt->task, ",\"id\":%llu}", (unsigned long long)rec->task);
}

static int decode(struct pytrace *pt, const struct cmon_py_rec *rec, int64_t mono_to_real,
		  struct call_record *out)
{
	struct py_proc *p = pyproc__of(pt, (pid_t)rec->pid);
	struct py_code *c;
	uint32_t n = 0;
	int err;

	if (!p)
		return -ESRCH;
	c = pyrecord__code(pt, p, rec->code, NULL);
	if (!c)
		return -ENOMEM;
	if (!c->traced && !(rec->flags & CMON_PY_BREAK)) {
		struct more_args drop;

		if (rec->flags & CMON_PY_MORE)
			take_more(pt, rec, &drop);
		pt->filtered++;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	out->ts_ns = rec->ts_entry_ns + (uint64_t)mono_to_real;
	out->pid = rec->pid;
	out->tid = rec->tid;
	out->comm = rec->comm;
	out->cgroup = NULL;
	out->func = c->qualname;
	strbuf__reset(&pt->where);
	err = strbuf__printf(&pt->where, "%s:%d", c->filename, c->firstlineno);
	out->module = pt->where.buf;
	out->depth = (int)rec->depth;
	out->status = status_of(rec);
	out->latency_ns = rec->ts_exit_ns > rec->ts_entry_ns ? rec->ts_exit_ns - rec->ts_entry_ns : 0;
	out->rss_entry = rec->rss_entry;
	out->rss_exit = rec->rss_exit;
	out->vms_entry = rec->vms_entry;
	out->vms_exit = rec->vms_exit;
	err = err ? err : render_args(pt, p, c, rec, &n);
	strbuf__reset(&pt->ret);
	if (!err && out->status == CALL_RAISED)
		err = pyvalue__render_exception(&p->values, rec->exc_type[0] ? rec->exc_type : "?",
						&rec->ret, &pt->ret);
	else if (!err)
		err = pyvalue__render(&p->values, &rec->ret, &pt->ret);
	if (err)
		return err;
	for (uint32_t i = 0; i < n; i++)
		if (!pt->names[i])
			pt->names[i] = (char *)"?";
	strbuf__reset(&pt->task);
	if (rec->task && task_json(pt, rec))
		return -ENOMEM;
	pt->typed = (struct call_typed){
		.task = rec->task ? pt->task.buf : NULL,
		.args = pt->args.buf,
		.retval = pt->ret.buf,
		.names = (const char *const *)pt->names,
		.cells = pt->cells,
		.columns = pt->columns,
		.n_cells = n,
		.python = true,
		.args_column = pt->args_column,
	};
	out->typed = &pt->typed;
	out->sampled = 0;
	out->call_no = 0;  /* a store's call (export) */
	out->no_regs = false;
	return 1;
}

int pytrace__decode(struct pytrace *pt, const struct cmon_py_rec *rec, int64_t mono_to_real,
		    struct call_record *out)
{
	int n = decode(pt, rec, mono_to_real, out);

	if (n < 0) {
		/* a process whose interpreter is not known, a code object not
		 * named: counted, never gone silently */
		if (!pt->undecoded++)
			log_info("--py: a record of process %d not decoded: %s", (int)rec->pid,
				 n == -ESRCH ? "its interpreter is not known" : strerror(-n));
	}
	return n;
}

