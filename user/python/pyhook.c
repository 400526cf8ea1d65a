// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyhook.c: see pyhook.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/log.h"
#include "proc/freeze.h"
#include "proc/procmaps.h"
#include "proc/procmem.h"
#include "python/pyheap.h"
#include "python/pyhook.h"

/*
 * What this cmon holds, by (process, address): the eval_frame hook (ADDR
 * its word) or the vectorcall redirects of a process (ADDR 0).  Its start
 * time tells a process from a later one with the same pid.
 */
struct hook_ref {
	pid_t pid;
	unsigned long long start; /* /proc/PID/stat starttime */
	uint64_t addr, prev;
	unsigned refs;
};

static struct hook_ref *hook_refs;
static size_t n_hook_refs;
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long long proc_start_of(pid_t pid)
{
	unsigned long long start = 0;

	proc__stat(pid, 0, &start);
	return start;
}

static struct hook_ref *ref_find(pid_t pid, uint64_t addr, unsigned long long start)
{
	for (size_t i = 0; i < n_hook_refs; i++)
		if (hook_refs[i].pid == pid && hook_refs[i].addr == addr &&
		    hook_refs[i].start == start && hook_refs[i].refs)
			return &hook_refs[i];
	return NULL;
}

static int ref_add(pid_t pid, uint64_t addr, unsigned long long start, uint64_t prev)
{
	struct hook_ref *v = realloc(hook_refs, (n_hook_refs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	hook_refs = v;
	v[n_hook_refs++] = (struct hook_ref){ .pid = pid, .start = start, .addr = addr,
					      .refs = 1, .prev = prev };
	return 0;
}

/* Write LEN bytes at ADDR of PID with every thread stopped (unless
 * STOPPED: they are). */
static int frozen_write(pid_t pid, bool launched, bool stopped, uint64_t addr, const void *buf,
			size_t len)
{
	struct freeze fz = { 0 };
	int err = stopped ? 0 : freeze__stop(pid, launched, &fz);

	if (err)
		return err;
	err = procmem__write(pid, addr, buf, len);
	if (!stopped)
		freeze__thaw(&fz);
	return err;
}

int pyhook__eval_set(pid_t pid, bool launched, bool stopped, uint64_t at, uint64_t eval)
{
	unsigned long long start = proc_start_of(pid);
	uint64_t cur = 0;
	int err = 0;

	pthread_mutex_lock(&hook_lock);
	if (ref_find(pid, at, start)) {
		ref_find(pid, at, start)->refs++; /* already set by this cmon: shared */
		goto done;
	}
	err = procmem__read(pid, at, &cur, sizeof(cur));
	if (!err && cur && cur != eval) {
		/* Someone else's evaluator (a debugger, a JIT): cmon does not replace it. */
		log_error("--py: process %d has its own frame evaluator (%#llx): not traced",
			  (int)pid, (unsigned long long)cur);
		err = -EBUSY;
		goto done;
	}
	if (!err)
		err = frozen_write(pid, launched, stopped, at, &eval, sizeof(eval));
	/* Our own evaluator left by a cmon that was killed stands for NULL
	 * (CPython's own setter stores it so). */
	if (!err && ref_add(pid, at, start, cur == eval ? 0 : cur)) {
		frozen_write(pid, launched, stopped, at, &cur, sizeof(cur));
		err = -ENOMEM;
	}
	if (err && err != -EBUSY)
		log_error("--py: cannot set the eval_frame hook of process %d: %s%s", (int)pid,
			  strerror(-err), err == -EPERM ? " (is it being debugged?)" : "");
	if (!err)
		log_info("--py: process %d: eval_frame hook set", (int)pid);
done:
	pthread_mutex_unlock(&hook_lock);
	return err;
}

void pyhook__eval_unset(pid_t pid, bool launched, uint64_t at, uint64_t eval)
{
	struct hook_ref *ref;
	uint64_t cur = 0;

	pthread_mutex_lock(&hook_lock);
	ref = ref_find(pid, at, proc_start_of(pid));
	if (!ref || --ref->refs) {
		pthread_mutex_unlock(&hook_lock);
		return; /* another user of this cmon still needs it */
	}
	/* Only cmon's own value is put back: anything else was set since.
	 * When the process cannot be paused, the hook stays (harmless). */
	if (!procmem__read(pid, at, &cur, sizeof(cur)) && cur == eval) {
		int err = frozen_write(pid, launched, false, at, &ref->prev, sizeof(ref->prev));

		if (!err)
			log_info("--py: process %d: eval_frame restored", (int)pid);
		else if (err != -ESRCH)
			log_warn("--py: process %d: eval_frame left set (cannot pause it: %s); it "
				 "only keeps Python calls from being inlined", (int)pid,
				 strerror(-err));
	}
	pthread_mutex_unlock(&hook_lock);
}

bool pyhook__eval_check(pid_t pid, bool launched, uint64_t at, uint64_t eval)
{
	uint64_t cur = 1;

	return !procmem__read(pid, at, &cur, sizeof(cur)) && cur == 0 &&
	       !frozen_write(pid, launched, false, at, &eval, sizeof(eval));
}

/* ---- vectorcall redirects ---- */

struct vc_walk {
	pid_t pid;
	const struct pyhook_vc *vc;
	pyhook_select_fn select;
	void *ctx;
	uint64_t from, to; /* redirect: vc_func -> vc_entry; release: the other way */
	unsigned n;
};

static int vc_one(void *ctx, uint64_t func, uint64_t code, uint64_t vectorcall)
{
	struct vc_walk *w = ctx;
	const struct cmon_py_offsets *o = &w->vc->layout->bpf;
	uint8_t lo = (uint8_t)w->to;
	uint32_t zero = 0;

	if (vectorcall != w->from || (w->select && !w->select(w->ctx, code)))
		return 0;
	/* no call site specializes to it: its version first */
	if (w->select && procmem__write(w->pid, func + o->func_version, &zero, 4))
		return 0;
	if (!procmem__write(w->pid, func + o->func_vectorcall, &lo, 1))
		w->n++;
	return 0;
}

/* The walk with the process stopped, again while its collector runs. */
static int vc_walk(pid_t pid, bool launched, bool stopped, struct vc_walk *w)
{
	uint64_t seen = 0;
	int err = -EAGAIN;

	for (int tries = 0; err == -EAGAIN && tries < 200; tries++) {
		struct freeze fz = { 0 };

		if (tries)
			usleep(2000);
		err = stopped ? 0 : freeze__stop(pid, launched, &fz);
		if (err)
			break;
		err = pyheap__functions(pid, w->vc->layout, w->vc->interp, w->vc->func_type,
					vc_one, w, &seen);
		if (!stopped)
			freeze__thaw(&fz);
		if (stopped && err == -EAGAIN)
			break; /* it cannot move on while stopped */
	}
	log_debug("--py: process %d: %llu objects walked, %u functions %s", (int)pid,
		  (unsigned long long)seen, w->n, w->select ? "redirected" : "sent back");
	return err;
}

int pyhook__vc_redirect(pid_t pid, bool launched, bool stopped, const struct pyhook_vc *vc,
			pyhook_select_fn select, void *ctx, unsigned *n)
{
	struct vc_walk w = { .pid = pid, .vc = vc, .select = select, .ctx = ctx,
			     .from = vc->vc_func, .to = vc->vc_entry };
	unsigned long long start = proc_start_of(pid);
	struct hook_ref *ref;
	int err;

	pthread_mutex_lock(&hook_lock);
	ref = ref_find(pid, 0, start);
	err = ref ? 0 : ref_add(pid, 0, start, 0);
	if (ref)
		ref->refs++;
	pthread_mutex_unlock(&hook_lock);
	*n = 0;
	if (err || !select)
		return err;
	err = vc_walk(pid, launched, stopped, &w);
	*n = w.n;
	if (err && err != -ESRCH)
		log_error("--py: cannot find the functions of process %d: %s", (int)pid,
			  err == -EAGAIN ? "its garbage collector kept running" : strerror(-err));
	return err;
}

int pyhook__vc_release(pid_t pid, bool launched, const struct pyhook_vc *vc, unsigned *n)
{
	struct vc_walk w = { .pid = pid, .vc = vc, .from = vc->vc_entry, .to = vc->vc_func };
	struct hook_ref *ref;
	int err;

	*n = 0;
	pthread_mutex_lock(&hook_lock);
	ref = ref_find(pid, 0, proc_start_of(pid));
	if (!ref || --ref->refs) {
		pthread_mutex_unlock(&hook_lock);
		return 0; /* another user of this cmon still needs them */
	}
	err = vc_walk(pid, launched, false, &w);
	pthread_mutex_unlock(&hook_lock);
	*n = w.n;
	if (err && err != -ESRCH)
		log_warn("--py: process %d: its traced functions were not all sent back to "
			 "CPython's fast path (%s); they run as before, a little slower",
			 (int)pid, strerror(-err));
	return err;
}
