// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyproc.c: the traced processes (pytrace_impl.h): those added, and the
 * children they fork, each known from the kernel's fork record (in order
 * with the records: whether or not the child still lives when its records
 * are read) as its parent's copy: same interpreter, same addresses. */
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "core/log.h"
#include "proc/procmem.h"
#include "python/pytrace_impl.h"

static struct py_proc *new_proc(struct pytrace *pt)
{
	if (GROW(pt->procs, pt->n_procs, pt->cap_procs, 4))
		return NULL;
	memset(&pt->procs[pt->n_procs], 0, sizeof(pt->procs[0]));
	return &pt->procs[pt->n_procs++];
}

void pyproc__fill_kern(struct pytrace *pt, struct py_proc *p)
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

/* Its holder is the thread state running Python, which the vectorcall
 * entry has no argument for. */
void pyproc__fill_gil(const struct pytrace *pt, struct py_proc *p)
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

/* PID, running interpreter PI (taken): a process of the trace.  LAUNCHED:
 * not started yet (set up at its start, pysetup.c). */
static struct py_proc *add_proc(struct pytrace *pt, pid_t pid, struct py_interp *pi,
				bool launched)
{
	struct py_proc *p = new_proc(pt);

	if (!p) {
		pyinterp__clear(pi);
		return NULL;
	}
	p->pid = pid;
	p->launched = launched;
	p->interp = *pi;
	pt->layout = pylayout__for(pi->layout.major, pi->layout.minor);
	p->values.pid = pid;
	p->values.layout = pt->layout;
	choose_mode(pt, &p->interp);
	return p;
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
	p = add_proc(pt, pid, &pi, launched);
	if (!p)
		return -ENOMEM;
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
	pyproc__fill_kern(pt, p);
	pyproc__fill_gil(pt, p);
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

struct py_proc *pyproc__of(struct pytrace *pt, pid_t pid)
{
	return proc_at(pt, pid, 0);
}

void pyproc__release(struct py_proc *p)
{
	for (size_t i = 0; i < p->codes.cap; i++)
		if (p->codes.slots[i].key)
			pycode__free((struct py_code *)(uintptr_t)p->codes.slots[i].value);
	hmap__release(&p->codes);
	hmap__release(&p->versions);
	hmap__release(&p->func_at);
	free(p->funcs);
	free(p->classes);
	pyvalue__release(&p->values);
	pyinterp__clear(&p->interp);
}


/* Were calls of P lost (py_lost: named at the end from P's codes)? */
static bool has_lost(const struct pytrace *pt, const struct py_proc *p)
{
	for (size_t i = 0; pt->lost_fd >= 0 && i < p->codes.cap; i++) {
		struct cmon_py_code_key key = { .pid = (__u32)p->pid };
		__u64 n = 0;

		if (!p->codes.slots[i].key)
			continue;
		memcpy(&key.code, p->codes.slots[i].key, sizeof(key.code));
		if (!bpf_map_lookup_elem(pt->lost_fd, &key, &n) && n)
			return true;
	}
	return false;
}

/* P's code objects' verdicts out of the kernel's map, P out of the list. */
static void drop_proc(struct pytrace *pt, struct py_proc *p)
{
	for (size_t i = 0; pt->code_fd >= 0 && i < p->codes.cap; i++) {
		struct cmon_py_code_key k = { .pid = (__u32)p->pid };

		if (!p->codes.slots[i].key)
			continue;
		memcpy(&k.code, p->codes.slots[i].key, sizeof(k.code));
		bpf_map_delete_elem(pt->code_fd, &k);
	}
	pyproc__release(p);
	*p = pt->procs[--pt->n_procs];
}

void pytrace__on_exec(struct pytrace *pt, pid_t pid)
{
	struct py_proc *p = find_proc(pt, pid);
	uint32_t key = (uint32_t)pid;
	char exe[64], path[PATH_MAX], why[256] = "";
	struct py_interp pi;
	ssize_t n;

	/* a launched one's own exec: it waits for its start already */
	if (p && p->launched && p->waiting && p->kern.stop == STOP_AT_START)
		return;
	/* the old program's: its code objects, its place as a fork */
	if (p)
		drop_proc(pt, p);
	hmap__del(&pt->forks, &key, sizeof(key));
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	n = readlink(exe, path, sizeof(path) - 1); /* its name, said; opened through /proc */
	path[n > 0 ? n : 0] = '\0';
	if (pyinterp__open(n > 0 ? path : exe, exe, &pi, why, sizeof(why))) {
		log_info("--py: process %d exec'd a program that is not CPython (%s)", (int)pid,
			 why);
		return;
	}
	if (pt->layout != pylayout__for(pi.layout.major, pi.layout.minor)) {
		log_warn("--py: process %d exec'd CPython %u.%u, the trace's is %u.%u: not traced",
			 (int)pid, pi.layout.major, pi.layout.minor, pt->layout->major,
			 pt->layout->minor);
		pyinterp__clear(&pi);
		return;
	}
	/* as a launched one: the kernel stops it at its start (its first
	 * probe), set up then (pytrace__tick); its entry there is left to
	 * the kernel until then, which may have stopped it already */
	p = add_proc(pt, pid, &pi, true);
	if (!p)
		return;
	pyproc__fill_kern(pt, p);
	p->kern.stop = STOP_AT_START;
	p->waiting = true;
	log_info("--py: process %d exec'd CPython %u.%u (%s): traced from its start", (int)pid,
		 pi.layout.major, pi.layout.minor, p->interp.path);
}

void pytrace__on_exit(struct pytrace *pt, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	const uint64_t *fork = hmap__find(&pt->forks, &key, sizeof(key));
	struct py_proc *p = find_proc(pt, pid);
	uint64_t parent = fork ? *fork : 0;

	if (p && (!p->child || has_lost(pt, p)))
		return;
	if (!p && !fork)
		return;
	for (size_t i = 0; i < pt->forks.cap; i++)
		if (pt->forks.slots[i].key && pt->forks.slots[i].value == (uint64_t)(uint32_t)pid)
			pt->forks.slots[i].value = parent;
	hmap__del(&pt->forks, &key, sizeof(key));
	if (p) /* its verdicts: the kernel's map would fill with the dead's */
		drop_proc(pt, p);
	pt->let_go++;
}

void pytrace__sizes(const struct pytrace *pt, size_t *procs, size_t *forks, uint64_t *gone)
{
	*procs = pt->n_procs;
	*forks = pt->forks.n;
	*gone = pt->let_go;
}
