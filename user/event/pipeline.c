// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pipeline.c: the event path's wiring (pipeline.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include "core/hmap.h"
#include "core/log.h"
#include "event/pipeline.h"
#include "probe/follow.h"
#include "python/cpython.h"

struct pipeline {
	const struct probe_set *set;
	struct tracer *tracer;
	struct decoder decoder;
	bool decode;
	struct pytrace *py;
	struct pipeline_ops ops;
	struct hmap held; /* the test hook's processes waited for */
};

static bool late_children; /* CMON_TEST_PY_LATE_CHILDREN, read by main */

void pipeline__test_py_late_children(void) { late_children = true; }

static int on_record(void *ctx, const struct cmon_call_rec *rec)
{
	struct pipeline *p = ctx;
	struct call_record cr;
	bool ok = p->decode && !decoder__decode(&p->decoder, rec, &cr);

	return p->ops.call ? p->ops.call(p->ops.ctx, rec, ok ? &cr : NULL) : 0;
}

static int on_capture(void *ctx, const struct cmon_capture_rec *rec, size_t size)
{
	struct pipeline *p = ctx;

	return p->ops.capture(p->ops.ctx, rec, size);
}

static int on_stack(void *ctx, const struct cmon_stack_rec *rec)
{
	struct pipeline *p = ctx;

	return p->ops.stack(p->ops.ctx, rec);
}

/* The process a Python record (TYPE, at least its smallest SIZE, tracer.c)
 * is of. */
static pid_t py_rec_pid(__u32 type, const void *data)
{
	switch (type) {
	case CMON_REC_PY:
		return (pid_t)((const struct cmon_py_rec *)data)->pid;
	case CMON_REC_PY_CODE:
		return (pid_t)((const struct cmon_py_code_rec *)data)->pid;
	case CMON_REC_PY_ARGS:
		return (pid_t)((const struct cmon_py_args_rec *)data)->pid;
	case CMON_REC_PY_EXIT:
		return (pid_t)((const struct cmon_py_exit_rec *)data)->pid;
	case CMON_REC_PY_EXEC:
		return (pid_t)((const struct cmon_py_exec_rec *)data)->pid;
	default:
		return (pid_t)((const struct cmon_py_func_rec *)data)->pid;
	}
}

/* The test hook: the first record of a process --py did not add (a forked
 * child) waits until that process is gone (reaped; a minute at most), as
 * a consumer far behind its producers would. */
static void hold_late_child(struct pipeline *p, pid_t pid)
{
	bool added = false;
	uint32_t key = (uint32_t)pid;
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	if (pytrace__added(p->py, pid) || !hmap__get(&p->held, &key, sizeof(key), &added) ||
	    !added)
		return;
	for (int i = 0; i < 6000 && !(kill(pid, 0) && errno == ESRCH); i++)
		nanosleep(&tick, NULL);
}

/* A followed process forked: its child's interpreter is its parent's. */
static void on_fork(void *ctx, pid_t child, pid_t parent)
{
	struct pipeline *p = ctx;

	pytrace__on_fork(p->py, child, parent);
}

/* A code object to name, or a Python call to decode and hand on. */
static int on_py(void *ctx, __u32 type, const void *data, size_t size)
{
	struct pipeline *p = ctx;
	struct cmon_py_rec copy;
	struct call_record cr;
	pid_t pid = py_rec_pid(type, data);
	int n;

	if (type == CMON_REC_PY_EXIT) { /* after its last record */
		tracer__read_forks(p->tracer); /* those of its children, before */
		pytrace__on_exit(p->py, pid);
		return 0;
	}
	if (type == CMON_REC_PY_EXEC) { /* after the old program's records */
		tracer__read_forks(p->tracer);
		pytrace__on_exec(p->py, pid);
		return 0;
	}
	if (late_children)
		hold_late_child(p, pid);
	/* a child's first record: its fork's record is in hand by now */
	if (!pytrace__knows(p->py, pid))
		tracer__read_forks(p->tracer);

	if (type == CMON_REC_PY_CODE) {
		pytrace__on_code(p->py, data);
		return 0;
	}
	if (type == CMON_REC_PY_ARGS) { /* parameters past the sixth, before their call */
		pytrace__on_args(p->py, data, size);
		return 0;
	}
	if (type == CMON_REC_PY_FUNC) { /* a selected function made (3.12+) */
		pytrace__on_func(p->py, data, size);
		return 0;
	}
	if (!p->ops.py_call || pytrace__copy_rec(data, size, &copy))
		return 0;
	n = pytrace__decode(p->py, &copy, p->decode ? p->decoder.mono_to_real_ns : 0, &cr);
	return p->ops.py_call(p->ops.ctx, &copy, &cr, n);
}

struct pipeline *pipeline__new(const struct probe_set *set, const struct pipeline_opts *o)
{
	struct pipeline *p = calloc(1, sizeof(*p));
	struct tracer_opts to = o->tracer;
	int err;

	if (!p) {
		log_error("out of memory");
		return NULL;
	}
	p->set = set;
	p->decode = o->decode;
	p->py = o->py;
	p->ops = o->ops;
	if (o->decode) {
		err = decoder__init(&p->decoder, set, o->calib);
		if (err) {
			log_error("out of memory");
			free(p);
			errno = -err;
			return NULL;
		}
	}
	to.on_record = on_record;
	to.on_capture = o->ops.capture ? on_capture : NULL;
	to.on_stack = o->ops.stack ? on_stack : NULL;
	to.on_py = o->py ? on_py : NULL;
	to.on_fork = o->py && to.follow ? on_fork : NULL;
	to.ctx = p;
	if (o->py) {
		to.py_offsets = pytrace__bpf_offsets(o->py);
		to.py_mode = pytrace__mode(o->py);
		/* break: every form decided in the kernel at a call's first sight */
		err = pytrace__rows(o->py, to.break_count > 0, &to.py_pats, &to.n_py_pats);
		if (err) {
			pipeline__free(p);
			errno = -err;
			return NULL;
		}
	}
	p->tracer = tracer__new(set, &to);
	if (!p->tracer) {
		err = errno;
		pipeline__free(p);
		errno = err;
		return NULL;
	}
	return p;
}

int pipeline__attach(struct pipeline *p)
{
	int err = tracer__attach(p->tracer);
	int procs_fd, code_fd, lost_fd;

	if (err || !p->py)
		return err;
	err = tracer__py_maps(p->tracer, &procs_fd, &code_fd, &lost_fd);
	return err ? err : pytrace__start(p->py, procs_fd, code_fd, lost_fd);
}

int pipeline__poll(struct pipeline *p, int timeout_ms)
{
	int n = tracer__poll(p->tracer, timeout_ms);

	if (p->py)
		pytrace__tick(p->py);
	return n;
}

int pipeline__drain(struct pipeline *p) { return tracer__drain(p->tracer); }

void pipeline__stop(struct pipeline *p)
{
	pytrace__restore(p->py);
	tracer__detach_probes(p->tracer);
	tracer__drain(p->tracer);
}

static bool is_root(const pid_t *roots, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (roots[i] == pid)
			return true;
	return false;
}

void pipeline__finish(struct pipeline *p, const pid_t *roots, size_t n_roots, bool children)
{
	struct follow *f = tracer__follow(p->tracer);

	for (size_t i = 0; i < n_roots; i++)
		if (roots[i] > 0)
			tracer__flush_pending(p->tracer, roots[i]);
	for (size_t i = 0; children && i < follow__count(f); i++) /* children still running */
		if (!is_root(roots, n_roots, follow__pid(f, i)))
			tracer__flush_pending(p->tracer, follow__pid(f, i));
	tracer__detach(p->tracer);
	tracer__drain(p->tracer);
}

void pipeline__free(struct pipeline *p)
{
	if (!p)
		return;
	tracer__free(p->tracer);
	if (p->decode)
		decoder__release(&p->decoder);
	hmap__release(&p->held);
	free(p);
}

struct tracer *pipeline__tracer(const struct pipeline *p) { return p ? p->tracer : NULL; }
const struct decoder *pipeline__decoder(const struct pipeline *p) { return &p->decoder; }
