// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyinspect.c: a process read on demand (pytrace_impl.h): the Python
 * functions of a paused one (cmon list --py), a stopped thread's Python
 * stack (cmon break --py). */
#include <errno.h>
#include <unistd.h>
#include "core/hmap.h"
#include "core/log.h"
#include "proc/freeze.h"
#include "proc/procmem.h"
#include "python/pyheap.h"
#include "python/pystack.h"
#include "python/pytrace_impl.h"

struct list_walk {
	pid_t pid;
	const struct py_layout *l;
	struct hmap seen; /* code address */
	pytrace_func_fn fn;
	void *ctx;
};

static int list_one(void *ctx, uint64_t func, uint64_t code, uint64_t vectorcall)
{
	struct list_walk *w = ctx;
	struct py_code *c;
	bool added;
	int err;

	(void)func;
	(void)vectorcall;
	if (!hmap__get(&w->seen, &code, sizeof(code), &added))
		return -ENOMEM;
	if (!added)
		return 0;
	c = pycode__new(w->pid, code, NULL, w->l);
	if (!c)
		return -ENOMEM;
	err = w->fn(w->ctx, c);
	pycode__free(c);
	return err;
}

int pytrace__list_functions(pid_t pid, pytrace_func_fn fn, void *ctx)
{
	struct list_walk w = { .pid = pid, .fn = fn, .ctx = ctx };
	struct py_interp pi;
	uint64_t bias = 0, interp = 0, seen = 0;
	char why[256];
	int err = pyinterp__of_process(pid, &pi, why, sizeof(why));

	if (err) {
		log_error("--py: process %d: %s", (int)pid, why);
		return err;
	}
	err = pyinterp__bias(&pi, pid, &bias);
	if (!err)
		err = pyinterp__check(&pi, pid, bias, &interp, why, sizeof(why));
	if (err) {
		log_error("--py: process %d (%s): %s", (int)pid, pi.path, why);
		pyinterp__clear(&pi);
		return err;
	}
	w.l = pylayout__for(pi.layout.major, pi.layout.minor);
	/* the lists walked with the process paused; again while its collector runs */
	err = -EAGAIN;
	for (int tries = 0; err == -EAGAIN && tries < 200; tries++) {
		struct freeze fz = { 0 };

		if (tries)
			usleep(2000);
		err = freeze__stop(pid, false, &fz);
		if (err)
			break;
		hmap__release(&w.seen);
		err = pyheap__functions(pid, w.l, interp, pi.func_type + bias, list_one, &w, &seen);
		freeze__thaw(&fz);
	}
	if (err)
		log_error("--py: cannot read the functions of process %d: %s", (int)pid,
			  strerror(-err));
	else
		log_info("--py: process %d: %llu objects walked, %zu code objects", (int)pid,
			 (unsigned long long)seen, w.seen.n);
	hmap__release(&w.seen);
	pyinterp__clear(&pi);
	return err;
}


const char *pytrace__way(const struct pytrace *pt, pid_t pid, uint64_t *addr)
{
	*addr = 0;
	for (size_t i = 0; i < pt->n_procs; i++) {
		const struct py_proc *p = &pt->procs[i];

		if (p->pid != pid)
			continue;
		*addr = pt->mode == CMON_PY_MODE_VECTORCALL ? p->kern.vc_entry
							    : p->interp.eval_func + p->bias;
	}
	return pt->mode == CMON_PY_MODE_VECTORCALL ? PY_VC_FUNC : PY_EVAL_FUNC;
}

struct name_ctx {
	struct pytrace *pt;
	struct py_proc *p;
};

static int name_frame(void *ctx, uint64_t code, int *firstlineno, struct strbuf *out)
{
	struct name_ctx *nc = ctx;
	struct py_code *c = pyrecord__code(nc->pt, nc->p, code, NULL);

	if (!c)
		return -ENOMEM;
	*firstlineno = c->firstlineno;
	return strbuf__printf(out, "%s (%s", c->qualname, c->filename);
}

int pytrace__stack(struct pytrace *pt, const struct cmon_py_rec *rec, struct strbuf *out)
{
	const struct py_layout *l = pt->layout;
	pid_t pid = (pid_t)rec->pid;
	struct py_proc *p = pyproc__of(pt, pid);
	struct name_ctx nc = { pt, p };
	uint64_t tstate = rec->tstate;
	struct py_code *c;
	int err;

	if (!p)
		return -ESRCH;
	c = pyrecord__code(pt, p, rec->code, NULL);
	if (!c)
		return -ENOMEM;
	/* The callee: its frame is not linked yet (the evaluator links it
	 * past the instruction the probe sits on; the vectorcall entry has
	 * none yet); its first line, or the line a resumed generator stands
	 * at. */
	err = strbuf__printf(out, "%s (%s:%d)\n", c->qualname, c->filename,
			     rec->frame ? pystack__line(pid, l, rec->code,
							procmem__ptr(pid, rec->frame + l->frame_instr),
							c->firstlineno)
					: c->firstlineno);
	if (!tstate && p->interp_addr)
		tstate = pystack__tstate_of(pid, l, p->interp_addr, (pid_t)rec->tid);
	if (!err && tstate)
		err = pystack__callers(pid, l, tstate, name_frame, &nc, out);
	if (!err && out->len && out->buf[out->len - 1] == '\n')
		out->buf[--out->len] = 0; /* the writer ends each frame's line */
	return err;
}

