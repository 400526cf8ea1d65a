// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyhook.c: see pyhook.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/grow.h"
#include "core/hmap.h"
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
static size_t n_hook_refs, cap_hook_refs;
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
	if (GROW(hook_refs, n_hook_refs, cap_hook_refs, 8))
		return -ENOMEM;
	hook_refs[n_hook_refs++] = (struct hook_ref){ .pid = pid, .start = start, .addr = addr,
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

/* The holders of each function sent, by (process, function): several
 * users of one cmon (the agent's probes) share them. */
static struct hmap vc_holds;

static uint64_t *hold_slot(pid_t pid, uint64_t func, bool *added)
{
	uint64_t key[2] = { (uint64_t)pid, func };

	return hmap__get(&vc_holds, key, sizeof(key), added);
}

/* Is F, in PID, still the function cmon sent (its type and code)? */
static bool same_func(pid_t pid, const struct pyhook_vc *vc, const struct pyhook_func *f)
{
	const struct cmon_py_offsets *o = &vc->layout->bpf;

	return procmem__ptr(pid, f->func + o->obj_type) == vc->func_type &&
	       procmem__ptr(pid, f->func + o->func_code) == f->code;
}

/* The write itself: the version first (no call site specializes to it),
 * then the one byte of the pointer that differs. */
static int send(pid_t pid, const struct pyhook_vc *vc, uint64_t func)
{
	const struct cmon_py_offsets *o = &vc->layout->bpf;
	uint32_t zero = 0;
	uint8_t lo = (uint8_t)vc->vc_entry;
	int err = procmem__write(pid, func + o->func_version, &zero, 4);

	return err ? err : procmem__write(pid, func + o->func_vectorcall, &lo, 1);
}

int pyhook__vc_send(pid_t pid, const struct pyhook_vc *vc, const struct pyhook_func *f)
{
	uint64_t *slot;
	bool added;
	int err = 0;

	if (procmem__ptr(pid, f->func + vc->layout->bpf.func_vectorcall) == vc->vc_func)
		err = send(pid, vc, f->func);
	if (err)
		return err;
	pthread_mutex_lock(&hook_lock);
	slot = hold_slot(pid, f->func, &added);
	if (slot)
		(*slot)++;
	pthread_mutex_unlock(&hook_lock);
	return slot ? 0 : -ENOMEM;
}

int pyhook__vc_resend(pid_t pid, const struct pyhook_vc *vc, const struct pyhook_func *f)
{
	if (procmem__ptr(pid, f->func + vc->layout->bpf.func_vectorcall) != vc->vc_func)
		return 0;
	return send(pid, vc, f->func);
}

struct vc_walk {
	pid_t pid;
	const struct pyhook_vc *vc;
	pyhook_select_fn select;
	void *ctx;
	struct pyhook_func **funcs;
	size_t *n, *cap;
};

static int vc_one(void *ctx, uint64_t func, uint64_t code, uint64_t vectorcall)
{
	struct vc_walk *w = ctx;
	struct pyhook_func f = { func, code };

	if ((vectorcall != w->vc->vc_func && vectorcall != w->vc->vc_entry) ||
	    !w->select(w->ctx, code))
		return 0;
	if (GROW(*w->funcs, *w->n, *w->cap, 64))
		return -ENOMEM;
	if (!pyhook__vc_send(w->pid, w->vc, &f))
		(*w->funcs)[(*w->n)++] = f;
	return 0;
}

int pyhook__vc_walk(pid_t pid, bool launched, bool stopped, const struct pyhook_vc *vc,
		    pyhook_select_fn select, void *ctx, struct pyhook_func **funcs, size_t *n,
		    size_t *cap)
{
	struct vc_walk w = { .pid = pid, .vc = vc, .select = select, .ctx = ctx,
			     .funcs = funcs, .n = n, .cap = cap };
	uint64_t seen = 0;
	int err = -EAGAIN;

	/* with the process stopped; again while its collector runs */
	for (int tries = 0; err == -EAGAIN && tries < 200; tries++) {
		struct freeze fz = { 0 };

		if (tries)
			usleep(2000);
		err = stopped ? 0 : freeze__stop(pid, launched, &fz);
		if (err)
			break;
		err = pyheap__functions(pid, vc->layout, vc->interp, vc->func_type, vc_one, &w,
					&seen);
		if (!stopped)
			freeze__thaw(&fz);
		if (stopped && err == -EAGAIN)
			break; /* it cannot move on while stopped */
	}
	log_debug("--py: process %d: %llu objects walked, %zu functions sent", (int)pid,
		  (unsigned long long)seen, *n);
	if (err && err != -ESRCH)
		log_error("--py: cannot find the functions of process %d: %s", (int)pid,
			  err == -EAGAIN ? "its garbage collector kept running" : strerror(-err));
	return err;
}

int pyhook__vc_release(pid_t pid, bool launched, const struct pyhook_vc *vc,
		       const struct pyhook_func *funcs, size_t n, unsigned *back)
{
	struct freeze fz = { 0 };
	bool frozen = false;
	int err = 0;

	*back = 0;
	pthread_mutex_lock(&hook_lock);
	for (size_t i = 0; i < n; i++) {
		bool added;
		uint64_t *slot = hold_slot(pid, funcs[i].func, &added);
		uint8_t lo = (uint8_t)vc->vc_func;

		if (!slot || added || !*slot || --*slot)
			continue; /* another user still holds it */
		if (!frozen) {
			err = freeze__stop(pid, launched, &fz);
			if (err)
				break;
			frozen = true;
		}
		/* only as cmon left it: a freed object's memory is someone else's */
		if (same_func(pid, vc, &funcs[i]) &&
		    procmem__ptr(pid, funcs[i].func + vc->layout->bpf.func_vectorcall) ==
			    vc->vc_entry &&
		    !procmem__write(pid, funcs[i].func + vc->layout->bpf.func_vectorcall, &lo, 1))
			(*back)++;
	}
	if (frozen)
		freeze__thaw(&fz);
	pthread_mutex_unlock(&hook_lock);
	if (err && err != -ESRCH)
		log_warn("--py: process %d: its traced functions were not sent back to CPython's "
			 "fast path (%s); they run as before, through cmon's nop", (int)pid,
			 strerror(-err));
	return err;
}

int pyhook__vc_check(pid_t pid, bool launched, const struct pyhook_vc *vc,
		     const struct pyhook_func *funcs, size_t n, uint64_t *at, size_t max_at)
{
	struct freeze fz = { 0 };
	bool frozen = false;
	int again = 0;

	for (size_t i = 0; i < n; i++) {
		if (procmem__ptr(pid, funcs[i].func + vc->layout->bpf.func_vectorcall) !=
			    vc->vc_func ||
		    !same_func(pid, vc, &funcs[i]))
			continue;
		if (!frozen && proc__stat(pid, 0, NULL) == 'T')
			return -EAGAIN;
		if (!frozen && freeze__stop(pid, launched, &fz))
			break;
		frozen = true;
		if (same_func(pid, vc, &funcs[i]) && !send(pid, vc, funcs[i].func)) {
			if ((size_t)again < max_at)
				at[again] = funcs[i].func;
			again++;
		}
	}
	if (frozen)
		freeze__thaw(&fz);
	return again;
}
