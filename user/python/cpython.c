// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cpython.c: see cpython.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "core/clock.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "proc/freeze.h"
#include "proc/procmaps.h"
#include "proc/procmem.h"
#include "probe/attach.h"
#include "probe/resolve.h"
#include "python/cpython.h"
#include "python/pycode.h"
#include "python/pyheap.h"
#include "python/pyhook.h"
#include "python/pystack.h"
#include "python/pyvalue.h"

/* A launched interpreter's stops (struct cmon_py_proc.stop): at its
 * start (Py_InitializeFromConfig: its libpython mapped, no Python run
 * yet), then, for the eval_frame hook, at its first Python call. */
enum {
	STOP_NONE = 0,
	STOP_AT_START = 1, /* the kernel stops it there (then STOPPED_START) */
	STOPPED_START = 2,
	STOP_AT_CALL = 3,  /* at its first Python call (then STOPPED_CALL) */
	STOPPED_CALL = 4,
};

struct py_proc {
	pid_t pid;
	bool launched, waiting, hooked, gone;
	bool child; /* forked by a traced one: not added (pytrace__add_process) */
	bool cont; /* stopped by the kernel for a function made: SIGCONT at the tick */
	struct py_interp interp;
	uint64_t bias, interp_addr; /* PyInterpreterState of the main interpreter */
	struct cmon_py_proc kern;
	struct hmap codes; /* code address -> struct py_code * */
	struct hmap versions; /* code address -> its co_version before cmon cleared it */
	struct pyhook_func *funcs; /* sent through the vectorcall entry */
	size_t n_funcs, cap_funcs;
	struct hmap func_at; /* a function's address -> its index in funcs + 1 */
	uint64_t checked_ns; /* when they were last checked (another cmon) */
	/* Sent again at the last check: said at the next unless a function
	 * made there is announced meanwhile (a new one where a freed one was,
	 * its announcement on the way: not one another cmon sent back). */
	uint64_t resent[16];
	unsigned n_resent;
	struct pyvalue_ctx values;
};

/* A call's parameters past the first six, waiting for its record. */
struct more_args {
	uint32_t pid, tid, n;
	uint64_t ts;
	struct cmon_py_val v[CMON_PY_MORE_ARGS];
};

struct pytrace {
	char **patterns;
	size_t n_patterns;
	uint64_t *hits; /* per pattern: code objects it selected */
	const char **unmatched;
	size_t strlen;
	bool resumes;
	enum cmon_py_mode mode;
	const struct py_layout *layout; /* every process's: one version a trace */
	struct py_proc *procs;
	size_t n_procs;
	int procs_fd, code_fd, lost_fd;
	uint64_t filtered;
	struct cmon_py_pat *rows;
	unsigned n_rows;
	struct more_args *more;
	size_t n_more, cap_more;
	/* the last decoded record's strings */
	struct strbuf args, ret, where, cellbuf, task;
	char *names[CMON_PY_ALL_ARGS];
	const char *cells[CMON_PY_ALL_ARGS];
	size_t cell_off[CMON_PY_ALL_ARGS];
	size_t columns[CMON_PY_ALL_ARGS];
	struct call_typed typed;
	size_t args_column;
	bool init_said; /* the 3.13 __init__ warning */
	struct hmap forks; /* a child's pid -> its parent's (the kernel's fork records) */
	uint64_t undecoded; /* records of a process or code object not known */
};

struct pytrace *pytrace__new(const char *const *patterns, size_t n, size_t strlen, bool resumes)
{
	struct pytrace *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->patterns = calloc(n ? n : 1, sizeof(char *));
	pt->hits = calloc(n ? n : 1, sizeof(*pt->hits));
	pt->unmatched = calloc(n ? n : 1, sizeof(*pt->unmatched));
	if (!pt->patterns || !pt->hits || !pt->unmatched) {
		pytrace__free(pt);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		pt->patterns[i] = strdup(patterns[i]);
		if (!pt->patterns[i]) {
			pt->n_patterns = i;
			pytrace__free(pt);
			errno = ENOMEM;
			return NULL;
		}
	}
	pt->n_patterns = n;
	pt->strlen = strlen && strlen < CMON_PY_STR_MAX ? strlen : CMON_PY_STR_MAX;
	pt->resumes = resumes;
	pt->procs_fd = pt->code_fd = pt->lost_fd = -1;
	pt->args_column = SIZE_MAX;
	return pt;
}

static void free_codes(struct py_proc *p)
{
	for (size_t i = 0; i < p->codes.cap; i++)
		if (p->codes.slots[i].key)
			pycode__free((struct py_code *)(uintptr_t)p->codes.slots[i].value);
	hmap__release(&p->codes);
	hmap__release(&p->versions);
	hmap__release(&p->func_at);
	free(p->funcs);
	pyvalue__release(&p->values);
}

void pytrace__free(struct pytrace *pt)
{
	if (!pt)
		return;
	pytrace__restore(pt);
	for (size_t i = 0; i < pt->n_procs; i++) {
		free_codes(&pt->procs[i]);
		pyinterp__clear(&pt->procs[i].interp);
	}
	free(pt->procs);
	for (size_t i = 0; i < pt->n_patterns; i++)
		free(pt->patterns[i]);
	free(pt->patterns);
	free(pt->hits);
	free(pt->unmatched);
	free(pt->rows);
	free(pt->more);
	hmap__release(&pt->forks);
	strbuf__release(&pt->args);
	strbuf__release(&pt->ret);
	strbuf__release(&pt->where);
	strbuf__release(&pt->cellbuf);
	strbuf__release(&pt->task);
	free(pt);
}

const struct cmon_py_offsets *pytrace__bpf_offsets(const struct pytrace *pt)
{
	return pt->layout ? &pt->layout->bpf : NULL;
}

unsigned pytrace__mode(const struct pytrace *pt)
{
	return pt->mode;
}

/* ---- processes ---- */

static struct py_proc *new_proc(struct pytrace *pt)
{
	struct py_proc *v = realloc(pt->procs, (pt->n_procs + 1) * sizeof(*v));

	if (!v)
		return NULL;
	pt->procs = v;
	memset(&v[pt->n_procs], 0, sizeof(v[0]));
	return &v[pt->n_procs++];
}

/* The addresses the kernel needs, once the bias is known. */
static void fill_kern(struct pytrace *pt, struct py_proc *p)
{
	const struct py_interp *pi = &p->interp;

	for (int t = 0; t < CMON_PYT_N; t++)
		p->kern.types[t] = pi->types[t] + p->bias;
	p->kern.none = pi->none + p->bias;
	p->kern.true_ = pi->true_ + p->bias;
	p->kern.false_ = pi->false_ + p->bias;
	p->kern.vc_func = pi->vc_func ? pi->vc_func + p->bias : 0;
	p->kern.vc_entry = pi->vc_entry ? pi->vc_entry + p->bias : 0;
	p->kern.str_max = (uint32_t)pt->strlen;
	p->kern.mode = pt->mode;
}

/* The interpreter's GIL (3.12+): its holder is the thread state running
 * Python, which the vectorcall entry has no argument for. */
static void fill_gil(const struct pytrace *pt, struct py_proc *p)
{
	if (pt->layout->interp_gil && p->interp_addr)
		p->kern.gil = procmem__ptr(p->pid, p->interp_addr + pt->layout->interp_gil);
}

/* How this trace sees calls: the vectorcall entry where CPython and the
 * binary allow it, else the evaluator. */
static void choose_mode(struct pytrace *pt, const struct py_interp *pi)
{
	if (pt->n_procs > 1)
		return; /* the first process decided */
	pt->mode = CMON_PY_MODE_EVAL;
	if (pi->layout.minor < 12)
		return;
	if (pt->resumes)
		log_info("--py-resumes: every Python call through the evaluator (a trap per call)");
	else if (!pi->vc_entry)
		log_warn("--py: %s: every Python call goes through the evaluator (a trap per "
			 "call): %s", pi->path, pi->vc_why);
	else
		pt->mode = CMON_PY_MODE_VECTORCALL;
}

int pytrace__add_process(struct pytrace *pt, pid_t pid, const char *exe, bool launched)
{
	struct py_interp pi;
	char why[256] = "";
	struct py_proc *p;
	int err;

	err = launched ? pyinterp__open(exe, NULL, &pi, why, sizeof(why))
		       : pyinterp__of_process(pid, &pi, why, sizeof(why));
	if (err) {
		if (launched)
			log_error("--py: %s: %s", exe, why);
		else
			log_error("--py: process %d: %s", (int)pid, why);
		return err == -ENOENT || err == -ESRCH ? err : -ENOEXEC;
	}
	if (pt->layout && pt->layout != pylayout__for(pi.layout.major, pi.layout.minor)) {
		log_error("--py: process %d runs CPython %u.%u, another %u.%u: one version a "
			  "trace", (int)pid, pi.layout.major, pi.layout.minor, pt->layout->major,
			  pt->layout->minor);
		pyinterp__clear(&pi);
		return -EINVAL;
	}
	p = new_proc(pt);
	if (!p) {
		pyinterp__clear(&pi);
		return -ENOMEM;
	}
	p->pid = pid;
	p->launched = launched;
	p->interp = pi;
	pt->layout = pylayout__for(pi.layout.major, pi.layout.minor);
	p->values.pid = pid;
	p->values.layout = pt->layout;
	choose_mode(pt, &p->interp);
	if (!launched) {
		err = pyinterp__bias(&p->interp, pid, &p->bias);
		if (!err)
			err = pyinterp__check(&p->interp, pid, p->bias, &p->interp_addr, why,
					      sizeof(why));
		if (err) {
			log_error("--py: process %d (%s): %s", (int)pid, p->interp.path,
				  err == -ENOENT ? "its CPython is not mapped" : why);
			return err == -ESRCH ? -ESRCH : -ENOEXEC;
		}
	}
	fill_kern(pt, p);
	fill_gil(pt, p);
	log_info("--py: process %d: CPython %u.%u.%u (%s), calls seen through %s", (int)pid,
		 pi.version >> 24, (pi.version >> 16) & 0xff, (pi.version >> 8) & 0xff,
		 p->interp.path, pt->mode == CMON_PY_MODE_VECTORCALL ? "the vectorcall entry"
								     : "the evaluator");
	return 0;
}

static struct py_proc *find_proc(const struct pytrace *pt, pid_t pid)
{
	for (size_t i = 0; i < pt->n_procs; i++)
		if (pt->procs[i].pid == pid)
			return &pt->procs[i];
	return NULL;
}

void pytrace__on_fork(struct pytrace *pt, pid_t child, pid_t parent)
{
	uint32_t key = (uint32_t)child;
	uint64_t *slot = hmap__get(&pt->forks, &key, sizeof(key), NULL);

	if (slot)
		*slot = (uint32_t)parent; /* the pid reused: its latest fork */
}

bool pytrace__knows(const struct pytrace *pt, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	return find_proc(pt, pid) || hmap__find(&pt->forks, &key, sizeof(key));
}

bool pytrace__added(const struct pytrace *pt, pid_t pid)
{
	const struct py_proc *p = find_proc(pt, pid);

	return p && !p->child;
}

uint64_t pytrace__undecoded(const struct pytrace *pt) { return pt->undecoded; }

/* PID's parent: from the kernel's fork record (pytrace__on_fork: known
 * whether or not PID still lives); without one (the fork ring was full,
 * or children are not followed), from /proc while PID lives.  0: none. */
static pid_t parent_of(const struct pytrace *pt, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	const uint64_t *fork = hmap__find(&pt->forks, &key, sizeof(key));
	char path[64], buf[512], *q;
	pid_t ppid = 0;
	FILE *f;

	if (fork)
		return (pid_t)*fork;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && (q = strrchr(buf, ')')))
			sscanf(q + 1, " %*c %d", &ppid);
		fclose(f);
	}
	return ppid;
}

/* The process of a record; a child forked by a traced one (same
 * interpreter, same addresses), or by such a child, is added as its
 * parent's copy.  DEPTH: generations looked through so far. */
static struct py_proc *proc_at(struct pytrace *pt, pid_t pid, unsigned depth)
{
	struct py_proc *parent, *p;
	pid_t ppid;
	size_t at;

	p = find_proc(pt, pid);
	if (p || depth == 64)
		return p;
	ppid = parent_of(pt, pid);
	parent = ppid > 0 && ppid != pid ? proc_at(pt, ppid, depth + 1) : NULL;
	if (!parent)
		return NULL;
	at = (size_t)(parent - pt->procs);
	p = new_proc(pt);
	if (!p)
		return NULL;
	parent = &pt->procs[at]; /* moved by the realloc */
	p->pid = pid;
	p->child = true;
	p->bias = parent->bias;
	p->interp_addr = parent->interp_addr;
	p->kern = parent->kern;
	p->kern.stop = STOP_NONE;
	p->interp = parent->interp;
	p->interp.path = strdup(parent->interp.path);
	p->interp.open_path = strdup(parent->interp.open_path);
	p->values.pid = pid;
	p->values.layout = pt->layout;
	/* its hook or redirects are its parent's memory's copy: taken back */
	p->hooked = parent->hooked && parent->interp_addr;
	log_info("--py: process %d, forked by %d: traced as its parent", (int)pid, (int)ppid);
	return p;
}

static struct py_proc *proc_of(struct pytrace *pt, pid_t pid)
{
	return proc_at(pt, pid, 0);
}

/* ---- the probes ---- */

int pytrace__rows(struct pytrace *pt, bool for_break, const struct cmon_py_pat **rows,
		  unsigned *n)
{
	int err;

	free(pt->rows);
	pt->rows = NULL;
	pt->n_rows = 0;
	err = pycode__rows((const char *const *)pt->patterns, pt->n_patterns, for_break,
			   &pt->rows, &pt->n_rows);
	*rows = pt->rows;
	*n = pt->n_rows;
	return err;
}

static int add_probe(struct probe_set *set, size_t obj, const char *name, uint64_t addr,
		     uint64_t off, enum probe_python kind)
{
	struct probe_func *f = probe_set__add_func(set, obj, name, addr, off);

	if (!f)
		return -ENOMEM;
	f->python = kind;
	f->ret_mode = kind == PROBE_PY_NEWFUNC ? RETURN_URETPROBE : RETURN_NONE;
	f->quiet = true; /* not a row of the summary: its calls are not Python calls */
	return 0;
}

long pytrace__mark(struct pytrace *pt, struct probe_set *set)
{
	long id = 0;
	size_t n = set->n_funcs;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		struct probe_func *f = &set->funcs[i];
		const struct py_interp *pi = NULL;
		size_t obj = f->object;

		if (strcmp(f->name, PY_EVAL_FUNC) || f->python)
			continue;
		for (size_t k = 0; k < pt->n_procs && !pi; k++)
			if (!strcmp(set->objects[obj].path, pt->procs[k].interp.path))
				pi = &pt->procs[k].interp;
		if (!pi)
			pi = pt->n_procs ? &pt->procs[0].interp : NULL;
		if (!pi)
			continue;
		id = (long)i;
		if (pt->mode == CMON_PY_MODE_VECTORCALL) {
			/* the evaluator's place becomes the vectorcall entry's */
			free(f->name);
			f->name = strdup(PY_VC_FUNC);
			if (!f->name)
				return -ENOMEM;
			f->python = PROBE_PY_VC;
			f->addr = pi->vc_entry;
			f->file_offset = pi->vc_entry_off;
			f->ret_mode = RETURN_NONE;
			for (int k = 0; k < PY_NEWFUNC_N && !err; k++)
				if (pi->newfunc_off[k])
					err = add_probe(set, obj, py_newfunc_names[k], pi->newfunc[k],
							pi->newfunc_off[k], PROBE_PY_NEWFUNC);
		} else {
			f->python = PROBE_PY_EVAL;
			f->ret_mode = RETURN_NONE;
		}
		/* a launched interpreter's start */
		for (size_t k = 0; k < pt->n_procs && !err; k++)
			if (pt->procs[k].launched && pi->start_off) {
				err = add_probe(set, obj, "Py_InitializeFromConfig", pi->start,
						pi->start_off, PROBE_PY_START);
				break;
			}
	}
	if (err) {
		log_error("out of memory");
		return err;
	}
	return id;
}

/* ---- starting, and what is written ---- */

static bool select_code(void *ctx, uint64_t code);
static void restore_versions(struct pytrace *pt, struct py_proc *p);

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

/* What process P needs written (STOPPED: it is stopped already). */
static int index_func(struct py_proc *p, size_t i);

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
		fill_kern(pt, p);
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
		fill_gil(pt, p);
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
				fill_gil(pt, p);
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
		if (p->n_funcs || p->versions.n) {
			struct pyhook_vc vc;
			unsigned n = 0;

			vc_desc(pt, p, &vc);
			if (p->versions.n) {
				struct freeze fz = { 0 };

				if (!freeze__stop(p->pid, p->launched, &fz)) {
					restore_versions(pt, p);
					freeze__thaw(&fz);
				}
			}
			if (!pyhook__vc_release(p->pid, p->launched, &vc, p->funcs, p->n_funcs, &n))
				log_info("--py: process %d: %u functions back on CPython's fast path",
					 (int)p->pid, n);
			p->n_funcs = 0;
			hmap__release(&p->func_at);
		}
	}
}

/* ---- code objects ---- */

/* QUALNAME is a method __init__. */
static bool is_init(const char *qualname)
{
	size_t n = strlen(qualname);

	return n > 9 && !strcmp(qualname + n - 9, ".__init__");
}

/* CODE's names and verdict: from REC (the kernel's announcement: read
 * again, an address seen before held a code object since freed), else
 * cached, else read from the process. */
static struct py_code *code_of(struct pytrace *pt, struct py_proc *p, uint64_t code,
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
	if (c->traced && pt->layout && pt->layout->minor == 13 && !pt->init_said &&
	    is_init(c->qualname)) {
		/* CALL_ALLOC_AND_ENTER_INIT: guarded by the class's version, not
		 * the function's, so clearing that does not keep it off */
		pt->init_said = true;
		log_warn("--py: CPython 3.13 enters a class's __init__ without a call once a "
			 "`Class(...)` call site is specialized: those calls of the selected "
			 "__init__ methods (%s the first) are not seen (nor counted)", c->qualname);
	}
	return c;
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
	struct py_code *c = code_of(sc->pt, sc->p, code, NULL);
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
	if (sc->pt->code_fd >= 0)
		bpf_map_update_elem(sc->pt->code_fd, &key, &val, BPF_NOEXIST);
	if (c->traced)
		clear_version(sc->pt, sc->p, code);
	return c->traced;
}

void pytrace__on_code(struct pytrace *pt, const struct cmon_py_code_rec *rec)
{
	struct py_proc *p = proc_of(pt, (pid_t)rec->pid);
	struct cmon_py_code_key key = { .pid = rec->pid, .code = rec->code };
	struct cmon_py_verdict_val val = { .fp = rec->fp };
	struct py_code *c;

	if (!p)
		return;
	c = code_of(pt, p, rec->code, rec);
	val.verdict = c && c->traced ? CMON_PY_TRACED : CMON_PY_SKIP;
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
		struct py_proc *p = proc_of(pt, (pid_t)next.pid);
		struct py_code *c = p ? code_of(pt, p, next.code, NULL) : NULL;
		__u64 n = 0;

		first = false;
		key = next;
		if (bpf_map_lookup_elem(pt->lost_fd, &key, &n) || !n)
			continue;
		snprintf(where, sizeof(where), "%s:%d", c ? c->filename : "?", c ? c->firstlineno : 0);
		fn(ctx, key.pid, c ? c->qualname : "?", where, n);
	}
}

const char *const *pytrace__unmatched(struct pytrace *pt, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < pt->n_patterns; i++)
		if (!pt->hits[i])
			pt->unmatched[(*n)++] = pt->patterns[i];
	return pt->unmatched;
}

/* ---- records ---- */

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
	if (pt->n_more == pt->cap_more) {
		size_t cap = pt->cap_more ? 2 * pt->cap_more : 16;
		struct more_args *v = realloc(pt->more, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		pt->more = v;
		pt->cap_more = cap;
	}
	m = &pt->more[pt->n_more++];
	m->pid = in->pid;
	m->tid = in->tid;
	m->ts = in->ts_entry_ns;
	m->n = in->n;
	memcpy(m->v, in->args, in->n * sizeof(m->v[0]));
	return 0;
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
	if (p->n_funcs == p->cap_funcs) {
		size_t cap = p->cap_funcs ? 2 * p->cap_funcs : 64;
		struct pyhook_func *v = realloc(p->funcs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->funcs = v;
		p->cap_funcs = cap;
	}
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
	p = proc_of(pt, (pid_t)r->pid);
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
	c = code_of(pt, p, r->code, NULL);
	if (r->stopped)
		stopped = wait_stopped(p->pid);
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
	bool have_more = (rec->flags & CMON_PY_MORE) && take_more(pt, rec, &more);
	int err = 0;

	if (have_more && n == CMON_PY_MAX_ARGS)
		n += more.n;
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
	if (!err && rec->n_params > n)
		err = strbuf__printf(&pt->args, "%s\"...\":\"<%u more not recorded>\"",
				     n ? "," : "", rec->n_params - n);
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
	struct py_proc *p = proc_of(pt, (pid_t)rec->pid);
	struct py_code *c;
	uint32_t n = 0;
	int err;

	if (!p)
		return -ESRCH;
	c = code_of(pt, p, rec->code, NULL);
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

/* ---- cmon list --py ---- */

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

/* ---- cmon break --py ---- */

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
	struct py_code *c = code_of(nc->pt, nc->p, code, NULL);

	if (!c)
		return -ENOMEM;
	*firstlineno = c->firstlineno;
	return strbuf__printf(out, "%s (%s", c->qualname, c->filename);
}

int pytrace__stack(struct pytrace *pt, const struct cmon_py_rec *rec, struct strbuf *out)
{
	const struct py_layout *l = pt->layout;
	pid_t pid = (pid_t)rec->pid;
	struct py_proc *p = proc_of(pt, pid);
	struct name_ctx nc = { pt, p };
	uint64_t tstate = rec->tstate;
	struct py_code *c;
	int err;

	if (!p)
		return -ESRCH;
	c = code_of(pt, p, rec->code, NULL);
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
