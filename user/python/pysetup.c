// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pysetup.c: what each traced process needs written (pytrace_impl.h):
 * the eval_frame hook (3.11, --py-resumes) or the selected functions sent
 * through the vectorcall entry with their code objects' versions cleared
 * (3.12+), a launched interpreter's stops, checked each tick, all taken
 * back at the end. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "core/grow.h"
#include "core/clock.h"
#include "core/log.h"
#include "proc/freeze.h"
#include "proc/procmaps.h"
#include "proc/procmem.h"
#include "python/pytrace_impl.h"

struct select_ctx {
	struct pytrace *pt;
	struct py_proc *p;
};

static void vc_desc(const struct pytrace *pt, const struct py_proc *p, struct pyhook_vc *vc)
{
	vc->layout = pt->layout;
	vc->interp = p->interp_addr;
	vc->func_type = p->interp.func_type + p->bias;
	vc->vc_func = p->kern.vc_func;
	vc->vc_entry = p->kern.vc_entry;
}

/* Is PID in the foreground of a terminal (a shell's job there)?  A stop
 * of it would be the shell's too: it takes the terminal back. */
static bool foreground_job(pid_t pid)
{
	char path[64], buf[512], *q;
	int pgrp = 0, tty = 0, tpgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (q = strrchr(buf, ')')))
		sscanf(q + 1, " %*c %*d %d %*d %d %d", &pgrp, &tty, &tpgid);
	fclose(f);
	return tty && tpgid == pgrp;
}

/*
 * A selected code object's co_version cleared (its old one kept): CPython
 * gives each function made from it that version as it makes it (3.12+),
 * and a function with version 0 is never specialized (inlined) at a call
 * site.  P is stopped.
 */
static void clear_version(struct pytrace *pt, struct py_proc *p, uint64_t code)
{
	uint32_t at = pt->layout->code_version, old = 0, zero = 0;
	uint64_t *slot;
	bool added;

	if (!at || procmem__read(p->pid, code + at, &old, 4) || !old)
		return;
	slot = hmap__get(&p->versions, &code, sizeof(code), &added);
	if (slot && !procmem__write(p->pid, code + at, &zero, 4))
		*slot = old;
}

/* Each code object's version put back where it still is 0 and the object
 * still that code object (its type and name objects): P is stopped. */
static void restore_versions(struct pytrace *pt, struct py_proc *p)
{
	const struct py_layout *l = pt->layout;

	for (size_t i = 0; i < p->versions.cap; i++) {
		uint64_t code, type = 0;
		uint32_t cur = 1, old = (uint32_t)p->versions.slots[i].value;

		if (!p->versions.slots[i].key || !old)
			continue;
		memcpy(&code, p->versions.slots[i].key, sizeof(code));
		if (procmem__read(p->pid, code + l->bpf.obj_type, &type, 8) ||
		    type != p->interp.code_type + p->bias ||
		    procmem__read(p->pid, code + l->code_version, &cur, 4) || cur)
			continue;
		procmem__write(p->pid, code + l->code_version, &old, 4);
	}
	hmap__release(&p->versions);
}

static bool select_code(void *ctx, uint64_t code)
{
	struct select_ctx *sc = ctx;
	struct py_code *c = pyrecord__code(sc->pt, sc->p, code, NULL);
	struct cmon_py_code_key key = { .pid = (__u32)sc->p->pid, .code = code };
	struct cmon_py_verdict_val val = {};

	if (!c)
		return false;
	/* the kernel knows it now: no first-call decision */
	val.verdict = c->traced ? CMON_PY_TRACED : CMON_PY_SKIP;
	val.fp = procmem__ptr(sc->p->pid, code + sc->pt->layout->bpf.code_filename);
	{
		uint64_t qn = procmem__ptr(sc->p->pid, code + sc->pt->layout->bpf.code_qualname);

		val.fp ^= qn << 1 | qn >> 63;
	}
	val.flags = pyrecord__flags(sc->pt, c);
	if (sc->pt->code_fd >= 0)
		bpf_map_update_elem(sc->pt->code_fd, &key, &val, val.flags ? BPF_ANY : BPF_NOEXIST);
	if (c->traced)
		clear_version(sc->pt, sc->p, code);
	return c->traced;
}

/* P's function I found by its address. */
static int index_func(struct py_proc *p, size_t i)
{
	uint64_t *slot = hmap__get(&p->func_at, &p->funcs[i].func, sizeof(p->funcs[i].func), NULL);

	if (!slot)
		return -ENOMEM;
	*slot = i + 1;
	return 0;
}

static int add_func(struct py_proc *p, const struct pyhook_func *f)
{
	if (GROW(p->funcs, p->n_funcs, p->cap_funcs, 64))
		return -ENOMEM;
	p->funcs[p->n_funcs++] = *f;
	return index_func(p, p->n_funcs - 1);
}

/* Has every thread of P stopped (a SIGSTOP the kernel sent)?  Waits a
 * little: the signal is taken as the thread leaves the probe. */
static bool wait_stopped(pid_t pid)
{
	for (int i = 0; i < 400; i++) {
		char st = proc__stat(pid, 0, NULL);

		if (!st || st == 'Z' || st == 'X')
			return false;
		if (st == 'T' && freeze__all_stopped(pid))
			return true;
		usleep(250);
	}
	return false;
}

int pytrace__on_func(struct pytrace *pt, const void *data, size_t size)
{
	const struct cmon_py_func_rec *r = data;
	const struct cmon_py_offsets *o;
	struct freeze fz = { 0 };
	struct py_proc *p;
	struct py_code *c;
	bool stopped = false;

	if (size < sizeof(*r))
		return -EINVAL;
	p = pyproc__of(pt, (pid_t)r->pid);
	if (!p || !pt->layout) {
		if (r->stopped) /* stopped for cmon, which cannot do its part */
			kill((pid_t)r->pid, SIGCONT);
		return 0;
	}
	o = &pt->layout->bpf;
	for (size_t i = 0; p->n_resent && i < sizeof(p->resent) / sizeof(p->resent[0]); i++)
		if (p->resent[i] == r->func) {
			p->resent[i] = 0;
			p->n_resent--;
			break;
		}
	c = pyrecord__code(pt, p, r->code, NULL);
	if (r->stopped)
		stopped = wait_stopped(p->pid);
	if (r->cls) {
		/* a traced __init__ called with an instance of a class that has a
		 * version tag (3.13): that class kept from entering it unseen */
		if (stopped || !freeze__stop(p->pid, p->launched, &fz)) {
			size_t from = p->n_classes;

			pyclass__hold_init(p->pid, pt->layout, r->cls, r->func, &p->classes,
					   &p->n_classes, &p->cap_classes);
			if (p->n_classes > from)
				log_debug("--py: process %d: %s's class kept from entering it "
					  "without a call", (int)p->pid, c ? c->qualname : "__init__");
			if (!stopped)
				freeze__thaw(&fz);
		}
		if (r->stopped)
			p->cont = true;
		return 0;
	}
	if (c && c->traced && p->kern.vc_entry &&
	    procmem__ptr(p->pid, r->func + o->func_vectorcall) == p->kern.vc_func &&
	    (stopped || !freeze__stop(p->pid, p->launched, &fz))) {
		struct pyhook_func f = { r->func, r->code };
		struct pyhook_vc vc;

		/* its code's version too: CPython sets the function's from it as
		 * it ends making it */
		uint64_t *at = hmap__find(&p->func_at, &r->func, sizeof(r->func));

		vc_desc(pt, p, &vc);
		clear_version(pt, p, r->code);
		if (at) {
			/* where one sent was (freed): one entry an address, so that
			 * the list stays as long as the live ones (closures are made
			 * at every call of their outer function) */
			p->funcs[*at - 1].code = r->code;
			if (!pyhook__vc_resend(p->pid, &vc, &f))
				log_debug("--py: process %d: %s made where one was: sent through "
					  "the vectorcall entry", (int)p->pid, c->qualname);
		} else if (!pyhook__vc_send(p->pid, &vc, &f) && !add_func(p, &f)) {
			log_debug("--py: process %d: %s made: sent through the vectorcall entry",
				  (int)p->pid, c->qualname);
		}
		if (!stopped)
			freeze__thaw(&fz);
	}
	if (r->stopped)
		p->cont = true; /* at the tick: the others of this drain first */
	return 0;
}


static bool is_sent(void *ctx, uint64_t func)
{
	struct py_proc *p = ctx;

	return hmap__find(&p->func_at, &func, sizeof(func)) != NULL;
}

/* 3.13: the classes whose __init__ P's functions sent include, kept from
 * entering it without a call (pyclass.h).  STOPPED: P is stopped. */
static void hold_classes(struct pytrace *pt, struct py_proc *p, bool stopped)
{
	size_t from = p->n_classes;
	bool any = false;
	int err = -EAGAIN;

	if (!pt->layout->type_versions_used)
		return;
	/* a walk of every object: only when an __init__ is traced */
	for (size_t i = 0; i < p->n_funcs && !any; i++)
		any = pyrecord__flags(pt, pyrecord__code(pt, p, p->funcs[i].code, NULL)) &
		      CMON_PY_VF_INIT;
	if (!any)
		return;
	/* with the process stopped; again while its collector runs */
	for (int tries = 0; err == -EAGAIN && tries < 200; tries++) {
		struct freeze fz = { 0 };

		if (tries)
			usleep(2000);
		err = stopped ? 0 : freeze__stop(p->pid, p->launched, &fz);
		if (err)
			break;
		err = pyclass__walk(p->pid, pt->layout, p->interp_addr,
				    p->interp.func_type + p->bias, is_sent, p, &p->classes,
				    &p->n_classes, &p->cap_classes);
		if (!stopped)
			freeze__thaw(&fz);
		if (stopped && err == -EAGAIN)
			break;
	}
	if (err && err != -EINVAL && err != -ESRCH)
		log_warn("--py: process %d: the classes of its traced __init__ methods were not "
			 "found (%s): their calls through a specialized `Class(...)` site are not "
			 "seen", (int)p->pid,
			 err == -EAGAIN ? "its garbage collector kept running" : strerror(-err));
	if (p->n_classes > from)
		log_info("--py: process %d: %zu classes kept from entering their traced __init__ "
			 "without a call", (int)p->pid, p->n_classes - from);
}

/* What process P needs written (STOPPED: it is stopped already). */
static int set_up(struct pytrace *pt, struct py_proc *p, bool stopped)
{
	int err;

	if (pt->mode == CMON_PY_MODE_EVAL) {
		err = pyhook__eval_set(p->pid, p->launched, stopped,
				       p->interp_addr + pt->layout->interp_eval_frame,
				       p->interp.eval_func + p->bias);
		p->hooked = !err;
		return err;
	}
	{
		struct pyhook_vc vc;
		struct select_ctx sc = { pt, p };

		vc_desc(pt, p, &vc);
		if (!foreground_job(p->pid))
			p->kern.flags |= CMON_PY_PROC_STOP_NEWFUNC;
		/* the functions there are now; those made later are announced */
		if (!p->interp_addr)
			return 0;
		size_t from = p->n_funcs;

		err = pyhook__vc_walk(p->pid, p->launched, stopped, &vc, select_code, &sc,
				      &p->funcs, &p->n_funcs, &p->cap_funcs);
		for (size_t i = from; i < p->n_funcs && !err; i++)
			err = index_func(p, i);
		if (!err)
			log_info("--py: process %d: %zu functions sent through the vectorcall entry",
				 (int)p->pid, p->n_funcs);
		if (!err)
			hold_classes(pt, p, stopped);
		return err;
	}
}

static int put_kern(struct pytrace *pt, struct py_proc *p)
{
	__u32 key = (__u32)p->pid;

	if (pt->procs_fd >= 0 && bpf_map_update_elem(pt->procs_fd, &key, &p->kern, BPF_ANY)) {
		int err = -errno;

		log_error("--py: cannot register process %d: %s", (int)p->pid, strerror(errno));
		return err;
	}
	return 0;
}

int pytrace__start(struct pytrace *pt, int procs_fd, int code_fd, int lost_fd)
{
	pt->procs_fd = procs_fd;
	pt->code_fd = code_fd;
	pt->lost_fd = lost_fd;
	for (size_t i = 0; i < pt->n_procs; i++) {
		struct py_proc *p = &pt->procs[i];
		int err;

		p->kern.stop = p->launched ? STOP_AT_START : STOP_NONE;
		p->waiting = p->launched;
		if (!p->launched)
			err = set_up(pt, p, false);
		else
			err = 0;
		if (!err)
			err = put_kern(pt, p);
		if (err)
			return err;
	}
	return 0;
}

/* A launched process stopped by its probe at STAGE (STOPPED_START,
 * STOPPED_CALL), every thread of it? */
static bool stopped_at(struct pytrace *pt, struct py_proc *p, unsigned *stage)
{
	struct cmon_py_proc k;
	__u32 key = (__u32)p->pid;
	char st = proc__stat(p->pid, 0, NULL);

	if (!st || st == 'Z' || st == 'X') {
		p->waiting = false; /* gone */
		return false;
	}
	/* Stopped by the probe's SIGSTOP, not by another (cmon break's at a
	 * C function, which its cue resumes)?  Every thread: all read it. */
	if (st != 'T' || !freeze__all_stopped(p->pid) || pt->procs_fd < 0 ||
	    bpf_map_lookup_elem(pt->procs_fd, &key, &k))
		return false;
	*stage = k.stop;
	return k.stop == STOPPED_START || k.stop == STOPPED_CALL;
}

/* A launched interpreter stopped by its probe: set up, continued. */
static void go_on(struct pytrace *pt, struct py_proc *p, unsigned stage)
{
	char why[256];
	int err = 0;

	if (stage == STOPPED_START) {
		/* its libpython is mapped now: the addresses */
		err = pyinterp__bias(&p->interp, p->pid, &p->bias);
		if (err)
			log_warn("--py: process %d: %s is not mapped: not traced", (int)p->pid,
				 p->interp.path);
		pyproc__fill_kern(pt, p);
		/* the hook needs an interpreter: at the first Python call */
		p->kern.stop = err ? STOP_NONE : pt->mode == CMON_PY_MODE_EVAL ? STOP_AT_CALL
									: STOP_NONE;
		if (!err && pt->mode == CMON_PY_MODE_VECTORCALL) {
			set_up(pt, p, true);
			p->kern.flags |= CMON_PY_PROC_STOP_NEWFUNC; /* cmon's child: no shell's */
		}
	} else {
		err = pyinterp__check(&p->interp, p->pid, p->bias, &p->interp_addr, why,
				      sizeof(why));
		if (err)
			log_warn("--py: process %d: %s: not traced", (int)p->pid, why);
		else
			set_up(pt, p, true); /* on failure: as far as calls reach the evaluator */
		pyproc__fill_gil(pt, p);
		p->kern.stop = STOP_NONE;
	}
	put_kern(pt, p);
	p->waiting = p->kern.stop != STOP_NONE;
	kill(p->pid, SIGCONT);
}

void pytrace__tick(struct pytrace *pt)
{
	for (size_t i = 0; i < pt->n_procs; i++) {
		struct py_proc *p = &pt->procs[i];
		unsigned stage;

		/* Another cmon on the same interpreter restored it as it ended:
		 * set again (calls in between went unseen: said). */
		if (p->hooked &&
		    pyhook__eval_check(p->pid, p->launched,
				       p->interp_addr + pt->layout->interp_eval_frame,
				       p->interp.eval_func + p->bias))
			log_warn("--py: process %d: its eval_frame hook was cleared (another cmon "
				 "ended?): set again; Python-to-Python calls made meanwhile were "
				 "not seen", (int)p->pid);
		if (p->waiting && stopped_at(pt, p, &stage))
			go_on(pt, p, stage);
		if (p->cont) {
			p->cont = false;
			kill(p->pid, SIGCONT);
		}
		/* Another cmon sent its functions back as it ended: sent again
		 * (calls in between went unseen: said).  Once a second. */
		if (p->n_funcs && clock__mono_ns() - p->checked_ns > 1000000000ull) {
			struct pyhook_vc vc;
			int n;

			if (p->n_resent)
				log_warn("--py: process %d: %u of its traced functions were sent back "
					 "to CPython's fast path (another cmon ended?): sent again; "
					 "their calls meanwhile were not seen", (int)p->pid,
					 p->n_resent);
			p->n_resent = 0;
			memset(p->resent, 0, sizeof(p->resent));
			vc_desc(pt, p, &vc);
			n = pyhook__vc_check(p->pid, p->launched, &vc, p->funcs, p->n_funcs,
					     p->resent, sizeof(p->resent) / sizeof(p->resent[0]));
			if (n != -EAGAIN) /* else stopped for a function made: at a later tick */
				p->checked_ns = clock__mono_ns();
			if (n > 0)
				p->n_resent = (unsigned)n;
		}
		/* a launched one's interpreter and GIL, made after its start */
		if (!p->waiting && !p->kern.gil && !p->gone && pt->layout->interp_gil) {
			char why[256];

			if (p->interp_addr || !pyinterp__check(&p->interp, p->pid, p->bias,
							       &p->interp_addr, why, sizeof(why))) {
				pyproc__fill_gil(pt, p);
				if (p->kern.gil)
					put_kern(pt, p);
			}
		}
	}
}

void pytrace__restore(struct pytrace *pt)
{
	for (size_t i = 0; pt && i < pt->n_procs; i++) {
		struct py_proc *p = &pt->procs[i];

		if (p->waiting) {
			/* Stopped (or about to stop) for a set-up that will not come. */
			__u32 key = (__u32)p->pid;

			if (pt->procs_fd >= 0)
				bpf_map_delete_elem(pt->procs_fd, &key);
			p->waiting = false;
			/* a probe that had read the entry may still send its
			 * SIGSTOP: look a few times */
			for (int k = 0; k < 10; k++) {
				if (proc__stat(p->pid, 0, NULL) == 'T')
					kill(p->pid, SIGCONT);
				usleep(2000);
			}
		}
		if (p->hooked) {
			p->hooked = false;
			pyhook__eval_unset(p->pid, p->launched,
					   p->interp_addr + pt->layout->interp_eval_frame,
					   p->interp.eval_func + p->bias);
		}
		if (p->n_funcs || p->versions.n || p->n_classes) {
			struct pyhook_vc vc;
			unsigned n = 0;

			vc_desc(pt, p, &vc);
			if (p->versions.n || p->n_classes) {
				struct freeze fz = { 0 };

				if (!freeze__stop(p->pid, p->launched, &fz)) {
					restore_versions(pt, p);
					pyclass__release(p->pid, pt->layout, p->classes,
							 p->n_classes);
					freeze__thaw(&fz);
				}
				free(p->classes);
				p->classes = NULL;
				p->n_classes = p->cap_classes = 0;
			}
			if (!pyhook__vc_release(p->pid, p->launched, &vc, p->funcs, p->n_funcs, &n))
				log_info("--py: process %d: %u functions back on CPython's fast path",
					 (int)p->pid, n);
			p->n_funcs = 0;
			hmap__release(&p->func_at);
		}
	}
}
