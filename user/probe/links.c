// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cmon_abi.h"
#include "core/grow.h"
#include "core/log.h"
#include "probe/host.h"
#include "probe/attach.h"
#include "probe/inherit.h"
#include "probe/detach.h"
#include "links.h"
#include "core/clock.h"

/* Functions from which attaching one perf-event uprobe each (no
 * uprobe_multi) is worth a word: detaching them takes seconds. */
#define SLOW_ATTACH_FUNCS 64

struct probe_links {
	int *fds;                /* uprobe_multi links, inherited perf events */
	pid_t *fd_pids;          /* each one's pid filter (0: none) */
	struct uprobe_inherit **fd_inh; /* an inherited event's probe (NULL: a link) */
	bool *fd_ret;            /* a return probe's (detach.h: closed first, together) */
	size_t n_fds, cap_fds;
	struct bpf_link **perf;  /* fallback: one perf-event uprobe per address */
	pid_t *perf_pids;
	size_t n_perf, cap_perf;
	size_t n_probes;
	unsigned long long attach_ns;
	/* per_func: each function's own links (NULL: detached now), and what
	 * attaching one again needs (SET outlives the links). */
	const struct probe_set *set;
	struct probe_links_opts o;
	struct probe_links **funcs;
	size_t *func_probes; /* each function's probes when attached (read
			      * without the duty thread's lock: never freed) */
};

/* attach_object's ONLY: every probe of the object, or its function ONLY's
 * (>= 0), or what belongs to no function (the stack makers); or, while
 * following, every probe but the shared ones (a process's own links), or
 * those only (one link for every process). */
#define ONLY_ALL (-1L)
#define ONLY_OBJECT (-2L)
#define ONLY_OWN (-3L)
#define ONLY_SHARED (-4L)

/*
 * A library probe that only cmon's own writes lead to: --py's vectorcall
 * entry, the nops before _PyFunction_Vectorcall that only the functions
 * cmon pointed there reach (in the traced processes and the children they
 * fork, which inherit those pointers).  While following, it gets one link
 * without a pid filter, as the executable's probes do: no other process
 * runs it, and a forked child is traced from its first call instead of
 * from when its own links are attached (its calls before were lost
 * uncounted: a pool worker's first task).
 */
static bool shared_probe(const struct probe_func *f)
{
	return f->python == PROBE_PY_VC;
}

/* Function F (index I) is among those ONLY selects. */
static bool only_selects(long only, const struct probe_func *f, size_t i)
{
	return only == ONLY_ALL || only == (long)i || (only == ONLY_OWN && !shared_probe(f)) ||
	       (only == ONLY_SHARED && shared_probe(f));
}

void probe_links__prepare(struct bpf_program *prog)
{
	if (uprobe_multi__supported())
		bpf_program__set_expected_attach_type(prog, CMON_BPF_TRACE_UPROBE_MULTI);
}

void probe_links__prepare_session(struct bpf_program *prog)
{
	bpf_program__set_expected_attach_type(prog, CMON_BPF_TRACE_UPROBE_SESSION);
}

void probe_links__prepare_stacks(struct bpf_map *regions, struct bpf_map *coro_stacks,
				 struct bpf_program *stack_made, const struct probe_set *set)
{
	/* Processes with coroutines, and coroutine stacks or goroutines with
	 * calls pending (allocated as used: ~11 KiB each). */
	bpf_map__set_max_entries(regions, set->stack_switch ? 1024 : 1);
	bpf_map__set_max_entries(coro_stacks, set->stack_switch || set->go ? 4096 : 1);
	bpf_program__set_autoload(stack_made, set->stack_switch);
	if (set->stack_switch)
		probe_links__prepare(stack_made);
}

static int keep_perf(struct probe_links *t, struct bpf_link *link, pid_t pid)
{
	size_t cap = t->cap_perf;

	if (GROW(t->perf, t->n_perf, cap, 16) || GROW(t->perf_pids, t->n_perf, t->cap_perf, 16))
		return -ENOMEM;
	t->perf_pids[t->n_perf] = pid;
	t->perf[t->n_perf++] = link;
	return 0;
}

/* Kernels without uprobe_multi: one perf-event uprobe per address. */
static int attach_perf(struct probe_links *t, struct bpf_program *prog, const char *path,
		       const uint64_t *offsets, const uint64_t *cookies, const uint64_t *ref_ctrs,
		       size_t cnt, pid_t pid, bool retprobe)
{
	for (size_t i = 0; i < cnt; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookies[i], .retprobe = retprobe,
			    .ref_ctr_offset = ref_ctrs ? (size_t)ref_ctrs[i] : 0);
		struct bpf_link *link;
		int err;

		link = bpf_program__attach_uprobe_opts(prog, pid ? pid : -1, path, offsets[i], &uo);
		if (!link)
			return -errno;
		err = keep_perf(t, link, pid);
		if (err) {
			bpf_link__destroy(link);
			return err;
		}
	}
	return 0;
}

/* FD kept, of process PID; INH: the probe an inherited event holds a
 * reference to (NULL: a link); RET: return probes. */
static int keep_fd(struct probe_links *t, int fd, pid_t pid, struct uprobe_inherit *inh, bool ret)
{
	size_t cap = t->cap_fds, cap2 = t->cap_fds, cap3 = t->cap_fds;

	if (GROW(t->fds, t->n_fds, cap, 16) || GROW(t->fd_inh, t->n_fds, cap2, 16) ||
	    GROW(t->fd_ret, t->n_fds, cap3, 16) || GROW(t->fd_pids, t->n_fds, t->cap_fds, 16))
		return -ENOMEM;
	t->fd_pids[t->n_fds] = pid;
	t->fd_inh[t->n_fds] = inh;
	t->fd_ret[t->n_fds] = ret;
	t->fds[t->n_fds++] = fd;
	return 0;
}

static int keep_link(struct probe_links *t, int fd, pid_t pid, bool ret)
{
	return keep_fd(t, fd, pid, NULL, ret);
}

/* (-1: a return probe's, closed already by probe_links__take_returns) */
static void close_fd(struct probe_links *t, size_t i)
{
	if (t->fds[i] >= 0)
		close(t->fds[i]);
	uprobe_inherit__put(t->fd_inh[i]);
}

/* Has T an inherited event of U on thread TID? */
static bool has_event(const struct probe_links *t, const struct uprobe_inherit *u, pid_t tid,
		      const pid_t *tids, size_t from)
{
	for (size_t i = from; i < t->n_fds; i++)
		if (t->fd_inh[i] == u && tids[i - from] == tid)
			return true;
	return false;
}

/*
 * Inherited probes (inherit.h) at CNT OFFSETS of PATH for process PID: an
 * event on each of its threads, so that what any of them forks is traced
 * from its first instruction (a thread made later inherits its maker's).
 * The threads are listed until a pass finds none new.
 */
static int attach_inherit(struct probe_links *t, struct bpf_program *prog, const char *path,
			  const uint64_t *offsets, const uint64_t *cookies, size_t cnt, pid_t pid,
			  bool retprobe)
{
	char dir[32];
	pid_t *tids = NULL; /* each new fd's thread, from the first one made here */
	size_t from = t->n_fds, n_tids = 0, cap_tids = 0;
	int err = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	for (size_t i = 0; i < cnt && !err; i++) {
		bool added = true;

		for (int pass = 0; added && pass < 8 && !err; pass++) {
			DIR *d = opendir(dir);
			struct dirent *de;

			added = false;
			if (!d) {
				err = -ESRCH;
				break;
			}
			while (!err && (de = readdir(d))) {
				pid_t tid = (pid_t)atoi(de->d_name);
				struct uprobe_inherit *u;
				int fd;

				if (tid <= 0)
					continue;
				err = uprobe_inherit__get(path, offsets[i], retprobe, prog, cookies[i],
							  &u);
				if (err)
					break;
				if (has_event(t, u, tid, tids, from)) {
					uprobe_inherit__put(u);
					continue;
				}
				fd = uprobe_inherit__open(u, tid);
				if (fd == -ESRCH) { /* a thread gone meanwhile */
					uprobe_inherit__put(u);
					continue;
				}
				err = fd < 0 ? fd : GROW(tids, n_tids, cap_tids, 16);
				if (!err) {
					tids[n_tids++] = tid;
					err = keep_fd(t, fd, pid, u, retprobe);
				}
				if (err) {
					if (fd >= 0)
						close(fd);
					uprobe_inherit__put(u);
					break;
				}
				added = true;
			}
			closedir(d);
		}
	}
	free(tids);
	return err;
}

/* Growable parallel arrays of offsets and cookies for one link. */
struct probe_list {
	uint64_t *offsets, *cookies, *ref_ctrs; /* ref_ctrs: USDT semaphores */
	size_t n, cap;
};

static int probe_list__add_ref(struct probe_list *l, uint64_t offset, uint64_t cookie,
			       uint64_t ref_ctr)
{
	/* Three arrays side by side: the same capacity, l->cap set last. */
	size_t cap_c = l->cap, cap_r = l->cap;

	if (GROW(l->cookies, l->n, cap_c, 64) || GROW(l->ref_ctrs, l->n, cap_r, 64) ||
	    GROW(l->offsets, l->n, l->cap, 64))
		return -ENOMEM;
	l->offsets[l->n] = offset;
	l->cookies[l->n] = cookie;
	l->ref_ctrs[l->n] = ref_ctr;
	l->n++;
	return 0;
}

static int probe_list__add(struct probe_list *l, uint64_t offset, uint64_t cookie)
{
	return probe_list__add_ref(l, offset, cookie, 0);
}

static void probe_list__free(struct probe_list *l)
{
	free(l->offsets);
	free(l->cookies);
	free(l->ref_ctrs);
}

static uint64_t cookie_of(size_t func_id, enum cmon_exit_kind kind)
{
	return (uint64_t)func_id | ((uint64_t)kind << CMON_COOKIE_KIND_SHIFT);
}

/* The exit probes of function FUNC_ID's PLAN (a part at file offset BASE),
 * their cookies with FLAGS.  Its indirect jumps are probed when they have
 * sites from IND_BASE on in cmon_ind_site (UINT32_MAX: none): the BPF side
 * looks at their target. */
static int add_exit_plan(struct probe_list *l, const struct exit_plan *plan, uint64_t base,
			 uint32_t ind_base, size_t func_id, uint64_t flags)
{
	int err = 0;

	for (size_t k = 0; k < plan->n_ret && !err; k++)
		err = probe_list__add(l, base + plan->ret_offs[k],
				      cookie_of(func_id, CMON_EXIT_RET_INSN) | flags);
	for (size_t k = 0; k < plan->n_tail && !err; k++)
		err = probe_list__add(l, base + plan->tail_offs[k],
				      cookie_of(func_id, CMON_EXIT_TAIL_JMP) | flags |
				      (uint64_t)plan->tail_cond[k] << CMON_COOKIE_JCC_SHIFT);
	for (size_t k = 0; ind_base != UINT32_MAX && k < plan->n_ind && !err; k++)
		err = probe_list__add(l, base + plan->ind[k].off,
				      cookie_of(func_id, CMON_EXIT_TAIL_JMP) | flags | CMON_COOKIE_IND |
				      (uint64_t)(ind_base + k) << CMON_COOKIE_IND_SHIFT);
	return err;
}

/* The addresses of one object, by the program that goes there. */
struct object_lists {
	struct probe_list entry, uret, insn, usdt, made, pyent, pyret, pyretins, step, pysess,
		pyvc, pyvcsess, pynew, pystart;
};

static void object_lists__free(struct object_lists *ls)
{
	probe_list__free(&ls->entry);
	probe_list__free(&ls->uret);
	probe_list__free(&ls->insn);
	probe_list__free(&ls->usdt);
	probe_list__free(&ls->made);
	probe_list__free(&ls->pyent);
	probe_list__free(&ls->pyret);
	probe_list__free(&ls->pyretins);
	probe_list__free(&ls->pysess);
	probe_list__free(&ls->pyvc);
	probe_list__free(&ls->pyvcsess);
	probe_list__free(&ls->pynew);
	probe_list__free(&ls->pystart);
	probe_list__free(&ls->step);
}

/* A Python hook of the interpreter: its entry, and its exit where asked. */
static int add_python_func(struct object_lists *ls, const struct probe_links_opts *o,
			   const struct probe_func *f, size_t i)
{
	uint64_t c = cookie_of(i, 0);
	int err;

	if (f->python == PROBE_PY_NEWFUNC)
		err = probe_list__add(&ls->pynew, f->file_offset, c);
	else if (f->python == PROBE_PY_START)
		err = probe_list__add(&ls->pystart, f->file_offset, c);
	else if (f->python == PROBE_PY_EVAL && o->py.eval_sess)
		err = probe_list__add(&ls->pysess, f->file_offset, c);
	else if (f->python == PROBE_PY_VC && o->py.vc_sess)
		err = probe_list__add(&ls->pyvcsess, f->file_offset, c);
	else
		err = probe_list__add(f->python == PROBE_PY_EVAL ? &ls->pyent : &ls->pyvc,
				      f->file_offset, c);
	/* inherited: at its return instructions, where known */
	for (size_t k = 0; !err && o->py.exit && o->py.inherit && o->py.ret_insn &&
			   f->python == PROBE_PY_EVAL && k < f->exits.n_ret; k++)
		err = probe_list__add(&ls->pyretins, f->file_offset + f->exits.ret_offs[k],
				      cookie_of(i, CMON_EXIT_RET_INSN));
	if (!err && o->py.exit && f->python <= PROBE_PY_VC &&
	    !(o->py.inherit && o->py.ret_insn && f->python == PROBE_PY_EVAL && f->exits.n_ret) &&
	    !(f->python == PROBE_PY_EVAL ? o->py.eval_sess : o->py.vc_sess))
		err = probe_list__add(&ls->pyret, f->file_offset, cookie_of(i, CMON_EXIT_URETPROBE));
	return err;
}

/* A native function: its step point, its entry (the cookie says how the
 * entry program finds the frame) and its exits. */
static int add_native_func(struct object_lists *ls, const struct probe_links_opts *o,
			   const struct probe_func *f, size_t i)
{
	uint64_t at = f->file_offset + f->entry.skip;
	uint64_t slot = (uint64_t)f->slot_off << CMON_COOKIE_SLOT_OFF_SHIFT |
			(f->slot_reg == 6 ? CMON_COOKIE_SLOT_RBP : 0);
	bool stepped = o->step_prog && !o->entry_only && probe_func__step_timed(f);
	int err = 0;

	if (stepped)
		err = probe_list__add(&ls->step, f->file_offset + f->step.off, cookie_of(i, 0));
	if (err)
		return err;
	err = probe_list__add(&ls->entry, f->body_skip ? f->file_offset + f->body_skip : at,
			      cookie_of(i, 0) | (f->body_skip ? slot : 0) |
			      (stepped ? CMON_COOKIE_STEP : 0) |
			      (f->reentered && !f->go ? CMON_COOKIE_REENTERED : 0) |
			      (f->never_returns ? CMON_COOKIE_NEVER_RETURNS : 0) |
			      (f->no_frame ? CMON_COOKIE_NO_FRAME : 0) |
			      (f->returns_unseen ? CMON_COOKIE_RETURN_UNSEEN : 0) |
			      (f->focus ? CMON_COOKIE_FOCUS : 0) |
			      (f->quiet ? CMON_COOKIE_QUIET : 0) |
			      (f->go ? CMON_COOKIE_GO : 0) |
			      (!f->body_skip && (!strcmp(f->entry.insn, "push rbp") ||
						 !strcmp(f->entry.insn, "endbr64"))
				       ? CMON_COOKIE_AT_FUNC_ENTRY : 0));
	if (err || o->entry_only)
		return err;
	if (f->ret_mode == RETURN_URETPROBE)
		err = probe_list__add(&ls->uret, at, cookie_of(i, CMON_EXIT_URETPROBE));
	if (f->ret_mode == RETURN_INSN && !err)
		err = add_exit_plan(&ls->insn, &f->exits, f->file_offset, f->ind_base, i,
				    f->go ? CMON_COOKIE_GO : 0);
	/* its cold part's exits are its own (resolve.h) */
	if (f->ret_mode == RETURN_INSN && !err)
		err = add_exit_plan(&ls->insn, &f->cold_exits, f->cold_file_offset, UINT32_MAX, i,
				    f->go ? CMON_COOKIE_GO : 0);
	return err;
}

/* Every address of object obj_idx that `only` selects, into ls. */
static int collect_object(struct object_lists *ls, const struct probe_set *s,
			  const struct probe_links_opts *o, size_t obj_idx, long only)
{
	const struct probe_object *obj = &s->objects[obj_idx];
	int err = 0;

	for (size_t i = 0; i < s->n_funcs && !err; i++) {
		const struct probe_func *f = &s->funcs[i];

		if (f->object != obj_idx || !only_selects(only, f, i))
			continue;
		if (f->python)
			err = add_python_func(ls, o, f, i);
		else if (f->usdt)
			err = probe_list__add_ref(&ls->usdt, f->file_offset, cookie_of(i, 0),
						  f->sema_offset);
		else
			err = add_native_func(ls, o, f, i);
	}
	/* Where the target makes coroutine stacks (libc's makecontext: an
	 * object of the target, traced functions or not). */
	for (size_t k = 0; !err && s->stack_switch && o->stack_made_prog &&
			   (only == ONLY_ALL || only == ONLY_OBJECT || only == ONLY_OWN) &&
			   k < obj->n_stack_makers; k++)
		err = probe_list__add(&ls->made, obj->stack_maker_off[k], obj->stack_maker_kind[k]);
	return err;
}

/* One list's link, by the way this kernel and this program allow: a
 * file descriptor, or -errno. */
static int attach_list(struct probe_links *t, const struct probe_list *l,
		       struct bpf_program *prog, const char *path, pid_t pid, bool ret,
		       bool session, bool inherited, bool ref, bool multi)
{
	if (inherited && pid)
		return attach_inherit(t, prog, path, l->offsets, l->cookies, l->n, pid, ret);
	if (inherited) /* its programs are not uprobe_multi's */
		return attach_perf(t, prog, path, l->offsets, l->cookies, l->ref_ctrs, l->n, pid,
				   ret);
	if (session)
		return uprobe_session__attach(bpf_program__fd(prog), path, l->offsets, l->cookies,
					      l->n, pid);
	if (multi && ref)
		return uprobe_multi__attach_ref(bpf_program__fd(prog), path, l->offsets,
						l->ref_ctrs, l->cookies, l->n, pid);
	if (multi)
		return uprobe_multi__attach(bpf_program__fd(prog), path, l->offsets, l->cookies,
					    l->n, pid, ret);
	return attach_perf(t, prog, path, l->offsets, l->cookies, l->ref_ctrs, l->n, pid, ret);
}

/* The one-line reason a list of n probes could not be attached. */
static void say_attach_error(int err, pid_t pid, bool child, const char *path, size_t n)
{
	if (err == -ESRCH && child)
		; /* a followed child that is gone already */
	else if (err == -ESRCH)
		log_error("process %d exited while cmon was attaching", pid);
	else if (err == -EOPNOTSUPP)
		log_error("this kernel has no uprobe_multi links (Linux 6.6 or "
			  "later is needed)");
	else if (err == -EPERM || err == -EACCES)
		log_error("permission denied attaching to %s: tracing needs root "
			  "or CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN", path);
	else
		log_error("cannot attach %zu probe%s to %s: %s", n, n == 1 ? "" : "s", path,
			  strerror(-err));
}

/* The links of one object in one process: entries, uretprobes, uprobes
 * on return instructions, and the USDT, stack and Python ones. */
static int attach_object(struct probe_links *t, const struct probe_set *s,
			 const struct probe_links_opts *o, pid_t pid, size_t obj_idx, bool child,
			 long only)
{
	const struct probe_object *obj = &s->objects[obj_idx];
	struct object_lists ls = {};
	int err, fd;

	err = collect_object(&ls, s, o, obj_idx, only);
	if (err || (!ls.entry.n && !ls.usdt.n && !ls.made.n && !ls.pyent.n && !ls.pysess.n &&
		    !ls.pyvc.n && !ls.pyvcsess.n && !ls.pystart.n))
		goto cleanup;

	/* Entries last.  Until a function's entry is attached, its step and
	 * exit probes find no frame of it and do nothing; the other way
	 * round, a call entered before its exit probes were there would be
	 * left open (written as never returning).  And the kernel runs the
	 * newest probe of an address first: where an entry and an exit share
	 * one (a function that is a lone ret), the entry must run first. */
	struct {
		struct probe_list *l;
		struct bpf_program *prog;
		bool ret, session;
	} links[] = { { &ls.step, o->step_prog, false, false },
		      { &ls.uret, o->exit_prog, true, false },
		      { &ls.insn, o->exit_prog, false, false },
		      { &ls.usdt, o->usdt_prog, false, false },
		      { &ls.made, o->stack_made_prog, false, false },
		      { &ls.pyret, o->py.exit, true, false },
		      { &ls.pyretins, o->py.ret_insn, false, false },
		      { &ls.pynew, o->py.newfunc, true, false },
		      { &ls.pystart, o->py.start, false, false },
		      { &ls.pysess, o->py.eval_sess, false, true },
		      { &ls.pyvcsess, o->py.vc_sess, false, true },
		      { &ls.pyent, o->py.eval_entry, false, false },
		      { &ls.pyvc, o->py.vc_entry, false, false },
		      { &ls.entry, o->entry_prog, false, false } };
	bool multi = uprobe_multi__supported();
	static bool said;

	/* -v says which way the probes go (test_fallback checks the path). */
	if (!multi && !said) {
		said = true;
		log_info("attaching perf-event uprobes, one per address (no uprobe_multi links)");
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		/* the evaluator's, inherited across fork (probe_py_progs.inherit) */
		bool inherited = o->py.inherit && (links[i].l == &ls.pyent ||
						   links[i].l == &ls.pyret ||
						   links[i].l == &ls.pyretins);

		if (!links[i].l->n)
			continue;
		if (!links[i].prog) {
			log_error("%s are not supported by this command",
				  links[i].l == &ls.usdt ? "USDT probes" : "Python functions (--py)");
			err = -EOPNOTSUPP;
			goto cleanup;
		}
		fd = attach_list(t, links[i].l, links[i].prog, obj->attach_path, pid, links[i].ret,
				 links[i].session, inherited, links[i].l == &ls.usdt, multi);
		if (fd < 0) {
			err = fd;
			say_attach_error(err, pid, child, obj->path, links[i].l->n);
			goto cleanup;
		}
		if (multi && !inherited) {
			err = keep_link(t, fd, pid, links[i].ret || links[i].session);
			if (err) {
				close(fd);
				goto cleanup;
			}
		}
		t->n_probes += links[i].l->n;
	}
cleanup:
	object_lists__free(&ls);
	return err;
}

bool probe_filter__comm(const char *comm, uint64_t *lo, uint64_t *hi)
{
	char buf[16] = {};

	if (!comm || !comm[0])
		return false;
	memcpy(buf, comm, strnlen(comm, sizeof(buf) - 1));
	memcpy(lo, buf, 8);
	memcpy(hi, buf + 8, 8);
	return true;
}

int lifecycle__attach(struct bpf_program *exec_begin, struct bpf_program *thread_exec,
		      struct bpf_program *launch_exec, pid_t launch_pid, struct bpf_link *links[3])
{
	links[1] = links[2] = NULL;
	links[0] = bpf_program__attach(exec_begin);
	if (links[0])
		links[2] = bpf_program__attach(thread_exec);
	if (!links[0] || !links[2]) {
		int err = -errno;

		log_error("cannot attach the exec probe: %s", strerror(-err));
		lifecycle__detach(links);
		return err;
	}
	if (launch_pid) {
		links[1] = bpf_program__attach(launch_exec);
		if (!links[1]) {
			int err = -errno;

			log_error("cannot attach the exec tracepoint: %s", strerror(-err));
			lifecycle__detach(links);
			return err;
		}
	}
	return 0;
}

void lifecycle__detach(struct bpf_link *links[3])
{
	for (int i = 0; i < 3; i++) {
		bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
}

/* Some process target's executable: while following, its links have no
 * pid filter (a child's own mm is never seen by a filtered link) and the
 * BPF side keeps only the followed processes (follow.bpf.h).  Only
 * processes running that program trap on them. */
static bool is_exe_object(const struct probe_set *set, size_t obj)
{
	for (size_t i = 0; i < set->n_targets; i++)
		if (set->targets[i].pid && set->targets[i].exe_object == (long)obj)
			return true;
	return false;
}

/* OBJ is among the objects of a process target before TI. */
static bool seen_before(const struct probe_set *set, size_t ti, size_t obj)
{
	for (size_t i = 0; i < ti; i++)
		for (size_t k = 0; set->targets[i].pid && k < set->targets[i].n_objects; k++)
			if (set->targets[i].objects[k] == obj)
				return true;
	return false;
}

/* OBJ's links have no pid filter: some process target's executable, or
 * with --host-wide-probes any object of a process target. */
static bool unfiltered_object(const struct probe_set *set, const struct probe_links_opts *o,
			      size_t obj)
{
	return o->follow && (o->host_wide || is_exe_object(set, obj));
}

/* --host-wide-probes, once at start: what every other process pays. */
static void warn_host_wide(const struct probe_set *set, const struct probe_links_opts *o)
{
	for (size_t ti = 0; o->follow && o->host_wide && ti < set->n_targets; ti++) {
		const struct probe_target *tg = &set->targets[ti];

		for (size_t k = 0; tg->pid && k < tg->n_objects; k++) {
			size_t obj = tg->objects[k], n = 0;

			for (size_t i = 0; i < set->n_funcs; i++)
				n += set->funcs[i].object == obj;
			if (!n || is_exe_object(set, obj) || seen_before(set, ti, obj))
				continue;
			log_warn("--host-wide-probes: %zu function%s in %s probed for every process "
				 "on this host: each call of any process traps while cmon runs "
				 "(only the followed processes are recorded)", n, n == 1 ? "" : "s",
				 set->objects[obj].path);
		}
	}
}

bool probe_links__child_has_own(const struct probe_set *set, bool host_wide)
{
	if (host_wide)
		return false; /* every object's links are every process's */
	for (size_t i = 0; i < set->n_funcs; i++)
		for (size_t ti = 0; ti < set->n_targets; ti++)
			for (size_t k = 0; set->targets[ti].pid && k < set->targets[ti].n_objects; k++)
				if (set->targets[ti].objects[k] == set->funcs[i].object &&
				    !is_exe_object(set, set->funcs[i].object))
					return true;
	return false;
}

bool probe_links__py_inherits(const struct probe_set *set, bool follow, bool host_wide)
{
	for (size_t i = 0; follow && !host_wide && i < set->n_funcs; i++) {
		size_t obj = set->funcs[i].object;

		if (set->funcs[i].python != PROBE_PY_EVAL || is_exe_object(set, obj))
			continue;
		for (size_t ti = 0; ti < set->n_targets; ti++)
			for (size_t k = 0; set->targets[ti].pid && k < set->targets[ti].n_objects; k++)
				if (set->targets[ti].objects[k] == obj)
					return uprobe_inherit__supported();
	}
	return false;
}

/* Where it matters, once: attaching and detaching this many functions one
 * perf-event uprobe at a time takes seconds. */
static void note_slow_attach(const struct probe_set *set)
{
	char what[48];

	if (set->n_funcs < SLOW_ATTACH_FUNCS || uprobe_multi__supported())
		return;
	snprintf(what, sizeof(what), "%zu functions", set->n_funcs);
	host__note(HOST_UPROBE_MULTI, LOG_WARN, what);
}

int probe_links__attach_child(const struct probe_set *set, const struct probe_links_opts *opts,
			      pid_t pid, struct probe_links **out)
{
	struct probe_links *l;
	int err = 0;

	*out = NULL;
	note_slow_attach(set);
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	for (size_t ti = 0; ti < set->n_targets && !err; ti++) {
		const struct probe_target *tg = &set->targets[ti];

		for (size_t k = 0; tg->pid && k < tg->n_objects && !err; k++)
			if (!is_exe_object(set, tg->objects[k]) &&
			    !seen_before(set, ti, tg->objects[k]))
				err = attach_object(l, set, opts, pid, tg->objects[k], true,
						   opts->per_func ? ONLY_ALL : ONLY_OWN);
	}
	if (err) {
		probe_links__free(l);
		return err;
	}
	*out = l;
	return 0;
}

/* Every target's objects: their probes (ONLY as attach_object's) into L. */
static int attach_targets(struct probe_links *l, const struct probe_set *set,
			  const struct probe_links_opts *opts, long only)
{
	int err = 0;

	for (size_t ti = 0; ti < set->n_targets && !err; ti++) {
		const struct probe_target *tg = &set->targets[ti];

		for (size_t k = 0; k < tg->n_objects && !err; k++) {
			size_t obj = tg->objects[k];

			if (only >= 0 && set->funcs[only].object != obj)
				continue;
			if (tg->pid && !unfiltered_object(set, opts, obj) && opts->follow &&
			    only == ONLY_ALL) {
				/* its own links, and the shared ones once for every process */
				err = attach_object(l, set, opts, tg->pid, obj, false, ONLY_OWN);
				if (!err && !seen_before(set, ti, obj))
					err = attach_object(l, set, opts, 0, obj, false, ONLY_SHARED);
			} else if (!tg->pid || !unfiltered_object(set, opts, obj)) {
				err = attach_object(l, set, opts, tg->pid, obj, false, only);
			} else if (!seen_before(set, ti, obj)) { /* once for every process */
				err = attach_object(l, set, opts, 0, obj, false, only);
			}
		}
	}
	return err;
}

int probe_links__func_attach(struct probe_links *l, size_t func_id)
{
	struct probe_links *f;
	int err;

	if (!l->funcs || func_id >= l->set->n_funcs)
		return -EINVAL;
	if (l->funcs[func_id])
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	err = attach_targets(f, l->set, &l->o, (long)func_id);
	if (err) {
		probe_links__free(f);
		return err;
	}
	l->funcs[func_id] = f;
	l->func_probes[func_id] = f->n_probes;
	return 0;
}

void probe_links__func_detach(struct probe_links *l, size_t func_id)
{
	if (!l->funcs || func_id >= l->set->n_funcs)
		return;
	probe_links__free(l->funcs[func_id]);
	l->funcs[func_id] = NULL;
}

bool probe_links__func_attached(const struct probe_links *l, size_t func_id)
{
	return l && l->funcs && func_id < l->set->n_funcs && l->funcs[func_id];
}

int probe_links__attach(const struct probe_set *set, const struct probe_links_opts *opts,
			struct probe_links **out)
{
	unsigned long long start = clock__mono_ns();
	struct probe_links *l;
	int err = 0;

	*out = NULL;
	note_slow_attach(set);
	warn_host_wide(set, opts);
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->set = set;
	l->o = *opts;
	if (opts->per_func) {
		l->funcs = calloc(set->n_funcs ? set->n_funcs : 1, sizeof(*l->funcs));
		l->func_probes = calloc(set->n_funcs ? set->n_funcs : 1, sizeof(*l->func_probes));
		err = l->funcs && l->func_probes ? attach_targets(l, set, opts, ONLY_OBJECT)
						 : -ENOMEM;
		for (size_t i = 0; i < set->n_funcs && !err; i++)
			err = probe_links__func_attach(l, i);
	} else {
		err = attach_targets(l, set, opts, ONLY_ALL);
	}
	if (err) {
		probe_links__free(l);
		return err;
	}
	l->attach_ns = clock__mono_ns() - start;
	*out = l;
	return 0;
}

/* L's links into process PID closed, in the reverse order of attach. */
static void drop_pid(struct probe_links *l, pid_t pid)
{
	size_t k = 0;

	/* An inherited event stays: it follows its thread through exec, and
	 * closing it would take its copies out of every descendant. */
	for (size_t i = l->n_fds; i-- > 0;)
		if (l->fd_pids[i] == pid && !l->fd_inh[i] && l->fds[i] >= 0)
			close(l->fds[i]);
	for (size_t i = 0; i < l->n_fds; i++)
		if (l->fd_pids[i] != pid || l->fd_inh[i]) {
			l->fds[k] = l->fds[i];
			l->fd_inh[k] = l->fd_inh[i];
			l->fd_ret[k] = l->fd_ret[i];
			l->fd_pids[k++] = l->fd_pids[i];
		}
	l->n_fds = k;
	k = 0;
	for (size_t i = l->n_perf; i-- > 0;)
		if (l->perf_pids[i] == pid)
			bpf_link__destroy(l->perf[i]);
	for (size_t i = 0; i < l->n_perf; i++)
		if (l->perf_pids[i] != pid) {
			l->perf[k] = l->perf[i];
			l->perf_pids[k++] = l->perf_pids[i];
		}
	l->n_perf = k;
}

/* PID's objects' probes (ONLY as attach_object's) into L again. */
static int attach_pid(struct probe_links *l, const struct probe_set *set,
		      const struct probe_links_opts *opts, pid_t pid, long only)
{
	int err = 0;

	for (size_t ti = 0; ti < set->n_targets && !err; ti++) {
		const struct probe_target *tg = &set->targets[ti];

		for (size_t j = 0; tg->pid == pid && j < tg->n_objects && !err; j++) {
			size_t obj = tg->objects[j];

			if (only >= 0 && set->funcs[only].object != obj)
				continue;
			if (!unfiltered_object(set, opts, obj))
				err = attach_object(l, set, opts, pid, obj, false, only);
		}
	}
	return err;
}

int probe_links__reattach(struct probe_links *l, const struct probe_set *set,
			  const struct probe_links_opts *opts, pid_t pid)
{
	int err;

	/* Split by function (duty cycling): the object's own links here,
	 * each function's in its own, those attached now made again (a
	 * detached one attaches whole at its next window). */
	drop_pid(l, pid);
	for (size_t i = 0; l->funcs && i < set->n_funcs; i++)
		if (l->funcs[i])
			drop_pid(l->funcs[i], pid);
	/* while following, the shared probes' links have no pid: they stay */
	err = attach_pid(l, set, opts, pid,
			 l->funcs ? ONLY_OBJECT : opts->follow ? ONLY_OWN : ONLY_ALL);
	for (size_t i = 0; l->funcs && i < set->n_funcs && !err; i++)
		if (l->funcs[i]) {
			err = attach_pid(l->funcs[i], set, opts, pid, (long)i);
			l->func_probes[i] = l->funcs[i]->n_probes;
		}
	return err;
}

size_t probe_links__probe_count(const struct probe_links *l)
{
	size_t n = l ? l->n_probes : 0;

	for (size_t i = 0; l && l->func_probes && i < l->set->n_funcs; i++)
		n += l->func_probes[i];
	return n;
}
unsigned long long probe_links__attach_ns(const struct probe_links *l) { return l ? l->attach_ns : 0; }

void probe_links__take_returns(struct probe_links *l, struct link_closer *c)
{
	for (size_t i = 0; l && l->funcs && i < l->set->n_funcs; i++)
		probe_links__take_returns(l->funcs[i], c);
	for (size_t i = 0; l && i < l->n_fds; i++)
		if (l->fd_ret[i] && l->fds[i] >= 0) {
			link_closer__add(c, l->fds[i]);
			l->fds[i] = -1;
		}
}

void probe_links__free(struct probe_links *l)
{
	if (!l)
		return;
	for (size_t i = 0; l->funcs && i < l->set->n_funcs; i++)
		probe_links__free(l->funcs[i]);
	free(l->funcs);
	free(l->func_probes);
	/* In the reverse order of attach: entries first, so that no call
	 * begins that its exit probes are already gone for (what
	 * probe_links__take_returns took is closed already). */
	for (size_t i = l->n_fds; i-- > 0;)
		close_fd(l, i);
	for (size_t i = l->n_perf; i-- > 0;)
		bpf_link__destroy(l->perf[i]);
	free(l->fds);
	free(l->fd_inh);
	free(l->fd_ret);
	free(l->fd_pids);
	free(l->perf);
	free(l->perf_pids);
	free(l);
}
