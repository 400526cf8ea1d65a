// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "core/grow.h"
#include "core/log.h"
#include "core/similar.h"
#include "dwarf/inlined.h"
#include "elf/elfcheck.h"
#include "elf/usdt.h"
#include "dwarf/debuginfo.h"
#include "dwarf/lines.h"
#include "proc/libpath.h"
#include "proc/procmaps.h"
#include "resolve.h"

#define ENTRY_DECODE_BYTES 32
#define MAX_BODY_BYTES (1u << 20) /* larger bodies: no ret-insn probes */

const char *return_mode__name(enum return_mode m)
{
	switch (m) {
	case RETURN_URETPROBE:
		return "uretprobe";
	case RETURN_INSN:
		return "ret-insn";
	default:
		return "none";
	}
}

int return_choice__parse(const char *s, enum return_choice *out)
{
	static const struct {
		const char *name;
		enum return_choice choice;
	} table[] = {
		{ "auto", RETURN_AUTO },
		{ "uretprobe", RETURN_FORCE_URETPROBE },
		{ "insn", RETURN_FORCE_INSN },
		{ "ret-insn", RETURN_FORCE_INSN },
		{ "none", RETURN_OFF },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (!strcmp(s, table[i].name)) {
			*out = table[i].choice;
			return 0;
		}
	}
	return -EINVAL;
}

/* ARR with room for one more (core/grow), or NULL. */
static void *grow(void *arr, size_t count, size_t *cap, size_t elem)
{
	return grow__room(&arr, count, cap, elem, 8) ? NULL : arr;
}

struct builder {
	struct probe_set *set;
	size_t cap_objects, cap_funcs, cap_targets;
	const struct resolve_opts *o;
	bool focus_mode; /* resolving --focus patterns: matches become focus */
	/* Debug files' symbol tables (an IFUNC's implementation is a local
	 * symbol, there only), kept while resolving. */
	struct symtab **aux;
	size_t n_aux, cap_aux;
};

/* The object with this (dev, ino), added when new; its index or -errno. */
/* Where this object makes a coroutine's stack: makecontext(ucp, ...) and
 * boost.context's make_fcontext(sp, size, fn).  Their stacks are learnt
 * there, so calls made on them pair on their own stack (shadow_stack.bpf.h). */
static void find_stack_makers(struct probe_object *obj)
{
	size_t n;
	const struct symtab_func *f = symtab__funcs(obj->symtab, &n);

	for (size_t i = 0; i < n && obj->n_stack_makers < 2; i++) {
		int kind = !strcmp(f[i].name, "makecontext")	 ? CMON_STACK_MAKER_UCONTEXT
			   : !strcmp(f[i].name, "make_fcontext") ? CMON_STACK_MAKER_FCONTEXT
								  : -1;

		if (kind < 0 || f[i].ifunc || !f[i].file_offset || !f[i].dynamic)
			continue;
		obj->stack_maker_off[obj->n_stack_makers] = f[i].file_offset;
		obj->stack_maker_kind[obj->n_stack_makers++] = (uint8_t)kind;
	}
}

/* NAMED: the executable, or a file the user named, whose symbols come
 * from its debug file when it is a stripped program (symtab.h). */
static long add_object(struct builder *b, const char *path, const char *attach_path,
		       uint64_t dev, uint64_t ino, bool named)
{
	struct symtab_opts so = { .debug_symbols = named };
	struct probe_set *s = b->set;
	struct probe_object *obj;
	const char *slash;

	for (size_t i = 0; i < s->n_objects; i++)
		if (s->objects[i].dev == dev && s->objects[i].ino == ino)
			return (long)i;
	s->objects = grow(s->objects, s->n_objects, &b->cap_objects, sizeof(*s->objects));
	if (!s->objects)
		return -ENOMEM;
	obj = &s->objects[s->n_objects];
	obj->path = strdup(path);
	obj->attach_path = strdup(attach_path);
	if (!obj->path || !obj->attach_path)
		return -ENOMEM;
	slash = strrchr(obj->path, '/');
	obj->module = slash ? slash + 1 : obj->path;
	obj->dev = dev;
	obj->ino = ino;
	obj->symtab = symtab__open_opts(attach_path, &so);
	if (!obj->symtab)
		log_debug("%s: no symbols (%s)", path, strerror(errno));
	else
		obj->runtime = symtab__runtime_flags(obj->symtab);
	if (obj->symtab && symtab__symbols_from(obj->symtab) &&
	    !(obj->symbols_from = strdup(symtab__symbols_from(obj->symtab))))
		return -ENOMEM;
	/* OpenSSL's libcrypto imports makecontext/setcontext for its async
	 * jobs (ASYNC_start_job, only with SSL_MODE_ASYNC), which run on heap
	 * stacks below the caller's frames, where a pending uretprobe
	 * survives: mapping it does not make a process one that switches
	 * stacks (redis, curl, every TLS client would lose cheap returns). */
	if (!strncmp(obj->module, "libcrypto.so", 12))
		obj->runtime &= ~SYMTAB_RT_STACKS;
	if (obj->symtab)
		find_stack_makers(obj);
	return (long)s->n_objects++;
}

static struct probe_target *add_target(struct builder *b, pid_t pid)
{
	struct probe_set *s = b->set;

	s->targets = grow(s->targets, s->n_targets, &b->cap_targets, sizeof(*s->targets));
	if (!s->targets)
		return NULL;
	memset(&s->targets[s->n_targets], 0, sizeof(s->targets[s->n_targets]));
	s->targets[s->n_targets].pid = pid;
	s->targets[s->n_targets].exe_object = -1;
	return &s->targets[s->n_targets++];
}

static int target_add_object(struct probe_target *t, size_t idx)
{
	size_t *p;

	for (size_t i = 0; i < t->n_objects; i++)
		if (t->objects[i] == idx)
			return 0;
	p = realloc(t->objects, (t->n_objects + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	t->objects = p;
	t->objects[t->n_objects++] = idx;
	return 0;
}

/* A file by path (launch and --binary modes): identity from stat. */
static int add_file(struct builder *b, struct probe_target *t, const char *path, bool named)
{
	struct stat st;
	long idx;

	if (stat(path, &st))
		return -errno;
	idx = add_object(b, path, path, st.st_dev, st.st_ino, named);
	if (idx < 0)
		return (int)idx;
	return target_add_object(t, (size_t)idx);
}

static int add_pid_target(struct builder *b, pid_t pid)
{
	struct stat exe_st;
	char exe[32];
	bool have_exe;
	struct proc_object *objs = NULL;
	struct probe_target *t;
	size_t n = 0;
	pid_t tgid;
	int err = 0;

	/* Each record cmon writes would be more calls to record: a loop. */
	if (pid == getpid() && !b->o->list_only) {
		log_error("process %d is cmon itself: it cannot trace its own calls", pid);
		return -EINVAL;
	}
	/* A thread's id reads as a process in /proc, but the kernel attaches
	 * probes to processes: it would fail as "exited while attaching". */
	tgid = b->o->list_only ? 0 : proc__tgid(pid);
	if (tgid > 0 && tgid != pid) {
		log_error("%d is a thread of process %d: give the process (-p %d)", pid, tgid, tgid);
		return -EINVAL;
	}
	err = proc_objects__read(pid, &objs, &n);
	if (err == -ESRCH || (!err && !proc__alive(pid))) {
		log_error("no such process: %d", pid);
		err = -ESRCH;
		goto cleanup;
	}
	if (err) {
		log_error("cannot read the mappings of process %d: %s", pid, strerror(-err));
		goto cleanup;
	}
	t = add_target(b, pid);
	if (!t) {
		err = -ENOMEM;
		goto cleanup;
	}
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	have_exe = !stat(exe, &exe_st);
	for (size_t i = 0; i < n; i++) {
		long idx = add_object(b, objs[i].path, objs[i].open_path, objs[i].dev,
				      objs[i].inode, objs[i].exe);

		if (idx < 0) {
			err = (int)idx;
			goto cleanup;
		}
		err = target_add_object(t, (size_t)idx);
		if (err)
			goto cleanup;
		if (have_exe && objs[i].dev == (uint64_t)exe_st.st_dev &&
		    objs[i].inode == (uint64_t)exe_st.st_ino)
			t->exe_object = idx;
	}
cleanup:
	proc_objects__free(objs, n);
	return err;
}

static bool object_takes(const char *file_name, void *pattern)
{
	return funcpattern__match_object(pattern, file_name);
}

/* Libraries named by an object prefix that are not among the target's
 * objects yet: the program's own libraries (its DT_NEEDED closure), or one
 * it will dlopen, found the way the loader would find it. */
static int add_named_libraries(struct builder *b, struct probe_target *t, const char *exe)
{
	const struct resolve_opts *o = b->o;
	char **closure = NULL;
	size_t n_closure = 0;
	int err = 0;

	for (size_t i = 0; i < o->n_patterns && !err; i++) {
		const char *name = o->patterns[i].object;
		char *path = NULL;
		bool known = false;

		if (!name || o->patterns[i].exclude)
			continue;
		for (size_t k = 0; k < t->n_objects && !known; k++)
			known = funcpattern__match_object(&o->patterns[i],
							  b->set->objects[t->objects[k]].path);
		if (known)
			continue;
		if (!closure && libpath__needed_closure(exe, &closure, &n_closure))
			n_closure = 0;
		for (size_t k = 0; k < n_closure && !path; k++)
			if (funcpattern__match_object(&o->patterns[i], closure[k]))
				path = strdup(closure[k]);
		if (!path) {
			err = libpath__find_library(exe, name, &path);
			/* dlopen("./libfoo.so"): named as the program does not */
			if (err == -ENOENT)
				err = libpath__find_beside(exe, name, object_takes,
							   (void *)&o->patterns[i], &path);
			if (err) {
				log_error("no library '%s' for %s: %s", name, exe, strerror(-err));
				break;
			}
		}
		err = add_file(b, t, path, true);
		free(path);
	}
	libpath__free(closure, n_closure);
	return err;
}

/* A program or file named by the user: an x86-64 ELF file, whole; else
 * one error line that says what it is ("aarch64 ELF file", "corrupt"). */
static int file_usable(const char *path)
{
	char why[160];
	int err = elfcheck__file(path, why, sizeof(why));

	if (err)
		log_error("%s: %s", path, why);
	return err;
}

static int add_launch_target(struct builder *b)
{
	const struct resolve_opts *o = b->o;
	struct probe_target *t;
	char **paths = NULL;
	size_t n = 0;
	int err = 0;

	err = file_usable(o->launch_exe);
	if (err)
		return err;
	err = libpath__needed_closure(o->launch_exe, &paths, &n);
	if (err) {
		log_error("%s: %s", o->launch_exe,
			  err == -ENOEXEC ? "not an ELF executable" : strerror(-err));
		goto cleanup;
	}
	b->set->launch_pid = o->launch_execed ? 0 : o->launch_pid;
	t = add_target(b, o->launch_pid);
	if (!t) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		err = add_file(b, t, paths[i], i == 0);
		if (err) {
			log_error("%s: %s", paths[i], strerror(-err));
			goto cleanup;
		}
		if (!i) /* the closure starts with the program itself */
			t->exe_object = (long)t->objects[t->n_objects - 1];
	}
	err = add_named_libraries(b, t, o->launch_exe);
cleanup:
	libpath__free(paths, n);
	return err;
}

static int add_binary_target(struct builder *b)
{
	const struct resolve_opts *o = b->o;
	struct probe_target *t;
	struct stat st;
	int err = 0;

	if (stat(o->binary, &st)) {
		err = -errno;
		log_error("%s: %s", o->binary, strerror(errno));
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		log_error("%s: not a regular file", o->binary);
		return -EINVAL;
	}
	err = file_usable(o->binary);
	if (err)
		return err;
	t = add_target(b, 0);
	if (!t)
		return -ENOMEM;
	b->set->binary_mode = true;
	b->set->exe_dev = st.st_dev;
	b->set->exe_ino = st.st_ino;
	err = add_file(b, t, o->binary, true);
	if (err)
		return err;
	return add_named_libraries(b, t, o->binary);
}

/* --cgroup: the files of the cgroup's processes, read in each one's own
 * mount namespace (/proc/PID/root), one pid-0 target for them all. */
static int add_cgroup_target(struct builder *b)
{
	const struct resolve_opts *o = b->o;
	struct probe_target *t = add_target(b, 0);
	size_t alive = 0;
	int err = 0;

	if (!t)
		return -ENOMEM;
	b->set->binary_mode = true; /* pid 0 links; no executable filter */
	for (size_t i = 0; i < o->n_cgroup_pids && !err; i++) {
		struct proc_object *objs = NULL;
		size_t n = 0;

		if (o->cgroup_pids[i] == getpid() && !o->list_only)
			continue; /* cmon's own calls would be more calls to record */
		err = proc_objects__read(o->cgroup_pids[i], &objs, &n);
		if (err == -ESRCH || err == -ENOENT || err == -EACCES) {
			err = 0; /* gone meanwhile, or a kernel thread */
			continue;
		}
		alive += n > 0;
		for (size_t k = 0; k < n && !err; k++) {
			long idx = add_object(b, objs[k].path, objs[k].open_path, objs[k].dev,
					      objs[k].inode, objs[k].exe);

			err = idx < 0 ? (int)idx : target_add_object(t, (size_t)idx);
		}
		proc_objects__free(objs, n);
	}
	if (err == -ENOMEM)
		return err;
	if (err) {
		log_error("%s: %s", o->cgroup_desc, strerror(-err));
		return err;
	}
	if (!alive) {
		log_error("%s: no process in it maps a file to probe", o->cgroup_desc);
		return -ESRCH;
	}
	return 0;
}

/* Why a file named on the command line cannot be used, or 0. */
static int check_named_file(const struct probe_object *obj)
{
	struct symtab *st;
	int err = 0;

	if (obj->symtab)
		return 0;
	st = symtab__open(obj->attach_path);
	err = st ? 0 : -errno;
	symtab__free(st);
	if (err == -ENOEXEC || err == -ENOTSUP || err == -EBADMSG)
		err = file_usable(obj->attach_path);
	else if (err == -ENODATA)
		log_error("%s: no symbol table (stripped); install its debug symbols or "
			  "trace an unstripped build", obj->path);
	else if (err)
		log_error("%s: %s", obj->path, strerror(-err));
	return err;
}

static bool runtime_unwinds(const struct probe_set *s, const struct probe_target *t,
			    unsigned which)
{
	for (size_t i = 0; t && i < t->n_objects; i++)
		if (s->objects[t->objects[i]].runtime & which)
			return true;
	return false;
}

/*
 * Can an unwinder walk through the frames of OBJ's functions in T?  Only
 * where T runs a runtime that unwinds (C++ exceptions, Rust panics, Go's
 * stack moves) and OBJ is built for it: C++ or Rust code, or C built with
 * exception tables (glibc, whose qsort may call a throwing comparator).
 * Plain C (a daemon that maps libstdc++ through a dependency, as redis
 * does through jemalloc) gives an exception no way through: throwing
 * through C frames built without -fexceptions is not supported by the
 * compilers, so its returns can be uretprobes, 10x cheaper than a
 * single-stepped ret.  Go moves whole stacks: every function of a Go
 * process is observed on its ret instructions.  So is every function of
 * a process that switches stacks (ucontext, boost.context): the kernel
 * lets a pending uretprobe go when the stack pointer moves above it, as a
 * coroutine's stack may, and the call's return would then crash.
 */
static bool unwinder_passes(const struct builder *b, const struct probe_target *t,
			    size_t obj_idx)
{
	if (runtime_unwinds(b->set, t, SYMTAB_RT_STACKS))
		return true; /* the kernel drops a uretprobe the stack moves above */
	if (!runtime_unwinds(b->set, t, SYMTAB_RT_UNWINDERS))
		return false;
	if (runtime_unwinds(b->set, t, SYMTAB_RT_GO))
		return true;
	return b->set->objects[obj_idx].runtime &
	       (SYMTAB_RT_CXX_EH | SYMTAB_RT_RUST | SYMTAB_EH_TABLES);
}

bool probe_func__step_timed(const struct probe_func *f)
{
	return f->step.off && !f->go && !f->python && !f->usdt && !f->in_lines &&
	       !f->lines_owner && !f->body_skip && !f->never_returns &&
	       f->ret_mode != RETURN_NONE;
}

/* Shown as a person names it: demangled, without a Rust legacy hash
 * (`m::outer`, not `m::outer::h96fa8120dcff8e6b`; both forms match). */
static char *display_name(const struct symtab_func *f)
{
	if (!f->demangled)
		return strdup(f->name);
	return strndup(f->demangled, funcpattern__rust_hash_cut(f->demangled));
}

/* gcc's hot/cold split puts a function's rare paths in a symbol of their
 * own, <name>.cold (<name>.part.0.cold, ...): a part of the function, not
 * a function.  NAME ends so. */
static bool is_cold_part(const char *name)
{
	const char *c = strstr(name, ".cold");

	while (c && c[5] && !(c[5] == '.' && c[6] >= '0' && c[6] <= '9'))
		c = strstr(c + 1, ".cold");
	return c != NULL;
}

/* F's cold part in OBJ: the <F>.cold symbol one of F's jumps out of BODY
 * leads into (EXITS: F's exits planned without it).  NULL: none. */
static const struct symtab_func *cold_part_of(const struct probe_object *obj,
					      const struct symtab_func *f, const uint8_t *body,
					      const struct exit_plan *exits)
{
	size_t n = strlen(f->name);

	for (size_t k = 0; k < exits->n_tail; k++) {
		const struct symtab_func *c;
		uint64_t target;

		if (insn__jump_target(body, f->size, f->addr, exits->tail_offs[k], &target))
			continue;
		c = symtab__find_addr(obj->symtab, target);
		if (c && c->size && !strncmp(c->name, f->name, n) && c->name[n] == '.' &&
		    is_cold_part(c->name + n))
			return c;
	}
	return NULL;
}

/* Plan the cold part C of PF (hot BODY at F): both parts' exits, each
 * with the other part inside.  0 or -errno (then no cold part). */
static int plan_cold_part(struct probe_func *pf, const struct probe_object *obj,
			  const struct symtab_func *f, const uint8_t *body,
			  const struct symtab_func *c)
{
	struct exit_plan hot = {}, cold = {};
	uint8_t *code;
	int err;

	if (c->size > MAX_BODY_BYTES)
		return -E2BIG;
	code = malloc(c->size);
	if (!code)
		return -ENOMEM;
	err = symtab__read_code(obj->symtab, c->addr, code, c->size) == (long)c->size ?
		insn__plan_exits_in(code, c->size, c->addr, f->addr, f->addr + f->size, &cold) :
		-EIO;
	free(code);
	if (!err)
		err = insn__plan_exits_in(body, f->size, f->addr, c->addr, c->addr + c->size, &hot);
	if (err || !cold.complete || !hot.complete) {
		exit_plan__clear(&hot);
		exit_plan__clear(&cold);
		return err ? err : -EINVAL;
	}
	exit_plan__clear(&pf->exits);
	pf->exits = hot;
	pf->cold_exits = cold;
	pf->cold_addr = c->addr;
	pf->cold_size = c->size;
	pf->cold_file_offset = c->file_offset;
	return 0;
}

/* gcc's returns_twice functions (the setjmp family, vfork, getcontext),
 * by the names glibc gives them. */
static bool returns_twice(const char *name)
{
	static const char *const names[] = {
		"setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp", "savectx",
		"vfork", "__vfork", "__libc_vfork", "getcontext", "__getcontext",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* Go's runtime.morestack and its variants (asm: ABI0, maybe suffixed). */
static bool go_stack_grower(const char *name)
{
	static const char *const names[] = { "runtime.morestack", "runtime.morestack_noctxt",
					     "runtime.morestackc" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		if (!strncmp(name, names[i], n) && (!name[n] || !strcmp(name + n, ".abi0")))
			return true;
	}
	return false;
}

/* Plan the probes of F in OBJ.  Returns 0, 1 when the function must be
 * skipped (reason logged at WHY_LEVEL), or -errno. */
static int plan_func(struct probe_func *pf, const struct probe_object *obj,
		     const struct symtab_func *f, enum return_mode mode, bool forced, bool list_only)
{
	/* warnings name it as the user does (demangled) */
	const char *nm = f->demangled ? f->demangled : f->name;
	uint8_t head[ENTRY_DECODE_BYTES];
	uint8_t *body = NULL;
	bool indirect;
	long got;
	int err = 0;

	got = symtab__read_code(obj->symtab, f->addr, head, sizeof(head));
	if (got <= 0 || insn__plan_entry(head, (size_t)got, f->addr, &pf->entry)) {
		log_debug("%s in %s: cannot decode its first instruction", f->name, obj->path);
		return 1;
	}
	if (pf->entry.cost == PROBE_COST_UNPROBEABLE && !list_only) {
		log_warn("%s in %s: the kernel cannot probe its first instruction (%s); skipped",
			 nm, obj->path, pf->entry.insn);
		return 1;
	}
	/* A uretprobe hijacks the return address at entry, and a function
	 * that returns twice hands it on: setjmp saves the trampoline as the
	 * place longjmp returns to (which then has no pending return: SIGILL),
	 * vfork's child returns through it first.  Their returns are seen on
	 * their own ret instructions, which change nothing. */
	if (mode == RETURN_URETPROBE && returns_twice(f->name))
		mode = RETURN_INSN;
	pf->ret_mode = mode;
	/* The body is decoded in every mode: a function that never returns
	 * normally must get no exit probe whatever the mode. */
	if (f->addr && f->addr == symtab__entry(obj->symtab)) {
		/* _start: entered without a return address, no caller: no frame
		 * (every call would nest under it, and a tree hold the whole run) */
		pf->never_returns = pf->no_frame = true;
	} else if ((obj->runtime & SYMTAB_RT_GO) && go_stack_grower(f->name)) {
		/* It has a ret (after a call to abort), but newstack restarts
		 * its caller on the grown stack. */
		pf->never_returns = pf->no_frame = true;
	} else if (f->size && f->size <= MAX_BODY_BYTES) {
		body = malloc(f->size);
		if (!body)
			return -ENOMEM;
		got = symtab__read_code(obj->symtab, f->addr, body, f->size);
		err = got == (long)f->size ?
			insn__plan_exits(body, f->size, f->addr, &pf->exits) : -EIO;
		if (!err && pf->exits.complete) {
			const struct symtab_func *c = cold_part_of(obj, f, body, &pf->exits);

			if (c && plan_cold_part(pf, obj, f, body, c))
				log_debug("%s in %s: its cold part %s could not be decoded", f->name,
					  obj->path, c->name);
		}
		if (!err && pf->entry.cost == PROBE_COST_SINGLESTEP &&
		    insn__plan_step(body, f->size, f->addr, pf->entry.skip, &pf->step))
			memset(&pf->step, 0, sizeof(pf->step));
		if (!err)
			pf->reentered = insn__branches_into(body, f->size, f->addr, 0, pf->entry.skip);
		free(body);
		/* No way out at all; an indirect jump may be a tail call
		 * (`return f(v)` through a pointer is `jmp *%rax`). */
		if (!err && pf->exits.complete && !pf->exits.n_ret && !pf->exits.n_tail &&
		    !pf->exits.n_indirect && !pf->cold_exits.n_ret && !pf->cold_exits.n_tail &&
		    !pf->cold_exits.n_indirect)
			pf->never_returns = true;
	} else {
		err = -E2BIG;
	}
	if (pf->never_returns) {
		log_debug("%s in %s never returns normally: no exit probe", f->name, obj->path);
		exit_plan__clear(&pf->exits);
		exit_plan__clear(&pf->cold_exits);
		pf->ret_mode = RETURN_NONE;
		return 0;
	}
	if (mode != RETURN_INSN) {
		exit_plan__clear(&pf->exits);
		exit_plan__clear(&pf->cold_exits);
		return 0;
	}
	/* No exit a probe can see (its indirect jumps index tables: their
	 * targets cannot be followed). */
	if (err || !pf->exits.complete ||
	    (!pf->exits.n_ret && !pf->exits.n_tail && !pf->exits.n_ind && !pf->cold_exits.n_ret &&
	     !pf->cold_exits.n_tail))
		goto no_exits;
	return 0;
no_exits:
	indirect = !err && pf->exits.complete && pf->exits.n_indirect;
	exit_plan__clear(&pf->exits);
	exit_plan__clear(&pf->cold_exits);
	/* Its calls are still recorded, at entry, where they were made; no
	 * frame is kept for them: one left pending after an unseen return
	 * would put the calls after it under it. */
	pf->never_returns = pf->returns_unseen = pf->no_frame = true;
	pf->ret_mode = RETURN_NONE;
	if (list_only)
		return 0;
	log_warn("%s in %s: cannot find its return instructions%s, and %s; its calls are "
		 "recorded at entry (status entry), their returns are not seen", nm, obj->path,
		 indirect ? " (it leaves through an indirect jump cmon cannot follow)" : "",
		 forced ? "--return-probe insn wants them" :
			  "a uretprobe is not safe in this program (C++/Rust/Go unwinding)");
	return 0;
}

/* Add F of object OBJ_IDX unless the same address is already traced. */
/* A new, zeroed function of object OBJ_IDX at ADDR (file offset OFF),
 * not yet counted in n_funcs; NULL when out of memory. */
static struct probe_func *new_func(struct builder *b, size_t obj_idx, uint64_t addr,
				   uint64_t off)
{
	struct probe_set *s = b->set;
	struct probe_func *pf;

	s->funcs = grow(s->funcs, s->n_funcs, &b->cap_funcs, sizeof(*s->funcs));
	if (!s->funcs)
		return NULL;
	pf = &s->funcs[s->n_funcs];
	memset(pf, 0, sizeof(*pf));
	pf->object = obj_idx;
	pf->addr = addr;
	pf->file_offset = off;
	return pf;
}

/* GLOB: F was found by a glob, and is named by its plainest alias (free,
 * not __libc_free or cfree); an exact pattern's name is kept. */
static int add_func(struct builder *b, size_t obj_idx, const struct symtab_func *f,
		    const char *as, enum return_mode mode, bool glob)
{
	struct probe_set *s = b->set;
	struct probe_func *pf;
	int err = 0;

	/* Already probed under another name at this address (a C++
	 * constructor's C1 and C2, a libc alias): covered, one probe. */
	for (size_t i = 0; i < s->n_funcs; i++) {
		if (s->funcs[i].object == obj_idx && s->funcs[i].addr == f->addr) {
			s->funcs[i].focus |= b->focus_mode;
			return 1;
		}
	}
	pf = new_func(b, obj_idx, f->addr, f->file_offset);
	if (!pf)
		return -ENOMEM;
	pf->size = f->size;
	err = plan_func(pf, &s->objects[obj_idx], f, mode,
			b->o->ret_choice == RETURN_FORCE_INSN, b->o->list_only);
	if (err)
		return err < 0 ? err : 0;
	pf->name = as ? strdup(as)
		      : display_name(glob ? symtab__alias(s->objects[obj_idx].symtab, f) : f);
	if (!pf->name)
		return -ENOMEM;
	/* Named by --focus only: probed to know when the thread is inside. */
	pf->focus = pf->quiet = b->focus_mode;
	/* Go's own functions are named package.func; the C functions of a
	 * cgo program are not, and keep the C ABI. */
	pf->go = (s->objects[obj_idx].runtime & SYMTAB_RT_GO) && strchr(f->name, '.');
	s->n_funcs++;
	return 1;
}

static enum return_mode mode_for(const struct builder *b, const struct probe_target *t,
				 size_t obj_idx)
{
	switch (b->o->ret_choice) {
	case RETURN_OFF:
		return RETURN_NONE;
	case RETURN_FORCE_URETPROBE:
		return RETURN_URETPROBE;
	case RETURN_FORCE_INSN:
		return RETURN_INSN;
	default:
		return unwinder_passes(b, t, obj_idx) ? RETURN_INSN : RETURN_URETPROBE;
	}
}

static const char *target_desc(const struct resolve_opts *o, char *buf, size_t len)
{
	if (o->binary)
		snprintf(buf, len, "%s", o->binary);
	else if (o->cgroup_desc)
		snprintf(buf, len, "%s", o->cgroup_desc);
	else if (o->launch_exe)
		snprintf(buf, len, "%s and its libraries", o->launch_exe);
	else if (o->n_pids == 1)
		snprintf(buf, len, "process %d", o->pids[0]);
	else
		snprintf(buf, len, "%zu processes", o->n_pids);
	return buf;
}

struct match {
	size_t obj;
	const struct symtab_func *f; /* NULL: OWN */
	struct symtab_func own;      /* from a debug file, placed in the object */
	const char *as; /* the name to show (an IFUNC's); NULL: F's */
};

struct loaded_copy {
	uint64_t dev, ino;
	const char *name;
	uint64_t base;
	bool found;
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded_copy *c = data;
	struct stat st;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0] && !stat(info->dlpi_name, &st) &&
	    (uint64_t)st.st_dev == c->dev && (uint64_t)st.st_ino == c->ino) {
		c->name = info->dlpi_name;
		c->base = (uint64_t)info->dlpi_addr;
		c->found = true;
		return 1;
	}
	return 0;
}

/* The function at ADDR of OBJ in its debug file's symbols (which name
 * the local ones, an IFUNC's implementations among them), into *OUT,
 * placed in OBJ.  0 or -errno. */
static int debug_symbol(struct builder *b, const struct probe_object *obj, uint64_t addr,
			struct symtab_func *out)
{
	struct debuginfo *di = debuginfo__open(obj->attach_path);
	const char *path = di ? debuginfo__dwarf_path(di) : NULL;
	const struct symtab_func *f;
	struct symtab *st = NULL;

	if (path && strcmp(path, obj->attach_path))
		st = symtab__open(path);
	debuginfo__free(di);
	if (!st)
		return -ENOENT;
	if (GROW(b->aux, b->n_aux, b->cap_aux, 4)) {
		symtab__free(st);
		return -ENOMEM;
	}
	b->aux[b->n_aux++] = st;
	f = symtab__find_addr(st, addr);
	if (!f || f->addr != addr || !symtab__offset_at_addr(obj->symtab, addr, &out->file_offset))
		return -ENOENT;
	out->name = f->name;
	out->demangled = NULL;
	out->version = NULL;
	out->addr = f->addr;
	out->size = f->size;
	out->ifunc = out->dynamic = false;
	return 0;
}

/*
 * The implementation IFUNC F of OBJ resolves to on this host: a function
 * of OBJ's symbols (*IMPL), or one from its debug file (into *OWN); false
 * when not known.  cmon's own copy of that very file (same inode: libc,
 * mostly) is asked through the dynamic linker, which runs F's resolver:
 * the target's runs the same code on the same CPU (GLIBC_TUNABLES set
 * differently in the target could choose otherwise).
 */
static bool ifunc_target(struct builder *b, const struct probe_object *obj,
			 const struct symtab_func *f, const struct symtab_func **impl,
			 struct symtab_func *own)
{
	struct loaded_copy c = { .dev = obj->dev, .ino = obj->ino };
	uint64_t addr;
	void *h, *p;

	*impl = NULL;
	if (!dl_iterate_phdr(find_loaded, &c) || !c.found)
		return false;
	h = dlopen(c.name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return false;
	p = dlsym(h, f->name);
	dlclose(h);
	if (!p || (uint64_t)p < c.base)
		return false;
	addr = (uint64_t)p - c.base;
	*impl = symtab__find_addr(obj->symtab, addr);
	if (*impl && (*impl)->addr == addr && !(*impl)->ifunc)
		return true;
	*impl = NULL;
	return !debug_symbol(b, obj, addr, own);
}

/* Does a '!PATTERN' of the user's remove F of the object at PATH? */
static bool excluded(const struct resolve_opts *o, const char *path, const struct symtab_func *f)
{
	for (size_t i = 0; i < o->n_patterns; i++) {
		const struct funcpattern *x = &o->patterns[i];

		if (x->exclude && funcpattern__match_object(x, path) && funcpattern__match_func(x, f))
			return true;
	}
	return false;
}

/* For an exact name that matches nothing: the function of the searched
 * objects nearest to it in spelling (similar.h), or NULL. */
static const char *nearest_name(const struct probe_set *s, const struct funcpattern *p)
{
	size_t len = strlen(p->func), best = similar__slack(len) + 1;
	const char *name = NULL;

	if (p->glob || best == 1)
		return NULL;
	for (size_t oi = 0; oi < s->n_objects && best > 1; oi++) {
		const struct symtab_func *funcs;
		size_t nf;

		if (!s->objects[oi].symtab || !funcpattern__match_object(p, s->objects[oi].path))
			continue;
		funcs = symtab__funcs(s->objects[oi].symtab, &nf);
		for (size_t i = 0; i < nf; i++) {
			size_t d;

			if (funcs[i].ifunc || is_cold_part(funcs[i].name))
				continue;
			d = similar__distance(p->func, funcs[i].name, best - 1);
			if (d < best) {
				best = d;
				name = funcs[i].name;
			}
		}
	}
	return name;
}

/* F of OBJ is an IFUNC (its symbol the resolver that picks an
 * implementation at load): the error names the implementations the object
 * has, by glibc's naming (__F_avx2, __F_sse2, ...). */
static void ifunc_error(const struct probe_object *obj, const struct symtab_func *f)
{
	char list[400];
	size_t nf, len = 0, n = 0, more = 0;
	const struct symtab_func *funcs = symtab__funcs(obj->symtab, &nf);
	size_t fl = strlen(f->name);

	list[0] = 0;
	for (size_t i = 0; i < nf; i++) {
		const char *m = funcs[i].name;
		bool dup = false;

		if (funcs[i].ifunc || strncmp(m, "__", 2) || strncmp(m + 2, f->name, fl) ||
		    m[2 + fl] != '_' || is_cold_part(m))
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = funcs[j].addr == funcs[i].addr && !strcmp(funcs[j].name, m);
		if (dup)
			continue;
		if (n < 8 && len + strlen(m) + 3 < sizeof(list)) {
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", n ? ", " : "",
						m);
			n++;
		} else {
			more++;
		}
	}
	if (!n)
		log_error("'%s' in %s is an IFUNC: its symbol is the resolver that picks an "
			  "implementation at load, not the function, and the implementations have "
			  "no symbols in it to trace", f->name, obj->path);
	else
		log_error("'%s' in %s is an IFUNC: its symbol is the resolver, not the function; "
			  "trace its implementations: %s%s (or '__%s_*')", f->name, obj->path, list,
			  more ? ", ..." : "", f->name);
}

static int resolve_pattern(struct builder *b, const struct funcpattern *p)
{
	struct probe_set *s = b->set;
	struct match *m = NULL;
	size_t n_m = 0, cap_m = 0, searched = 0, added = 0, n_excluded = 0;
	const char *stripped = NULL;
	const struct symtab_func *ifunc = NULL;
	size_t ifunc_obj = 0;
	char desc[256];
	int err = 0;

	for (size_t ti = 0; ti < s->n_targets; ti++) {
		struct probe_target *t = &s->targets[ti];

		for (size_t k = 0; k < t->n_objects; k++) {
			size_t oi = t->objects[k];
			struct probe_object *obj = &s->objects[oi];
			const struct symtab_func *funcs;
			size_t nf;

			if (!funcpattern__match_object(p, obj->path))
				continue;
			searched++;
			if (!obj->symtab) {
				if (p->object) {
					err = check_named_file(obj);
					if (err)
						goto cleanup;
				}
				if (!stripped)
					stripped = obj->path;
				continue;
			}
			funcs = symtab__funcs(obj->symtab, &nf);
			for (size_t i = 0; i < nf; i++) {
				bool dup = false;

				if (!funcpattern__match_func(p, &funcs[i]))
					continue;
				/* a part of a function, probed with it (resolve.h) */
				if (is_cold_part(funcs[i].name))
					continue;
				if (excluded(b->o, obj->path, &funcs[i])) {
					n_excluded++;
					continue;
				}
				const struct symtab_func *f = &funcs[i];
				struct symtab_func own = {};
				const char *as = NULL;

				/* An IFUNC: the implementation it picks here, shown
				 * under the name the program calls. */
				if (f->ifunc) {
					if (p->glob || !ifunc_target(b, obj, f, &f, &own)) {
						/* the pick is not known: said with the
						 * error (its implementations) if nothing
						 * else matches, else warned after */
						if (!p->glob && !ifunc) {
							ifunc = &funcs[i];
							ifunc_obj = oi;
						}
						continue;
					}
					as = funcs[i].name;
				}
				for (size_t j = 0; j < n_m && !dup; j++)
					dup = m[j].obj == oi &&
					      (m[j].f ? m[j].f : &m[j].own)->addr ==
						      (f ? f : &own)->addr;
				if (dup)
					continue;
				m = grow(m, n_m, &cap_m, sizeof(*m));
				if (!m) {
					err = -ENOMEM;
					goto cleanup;
				}
				m[n_m].obj = oi;
				m[n_m].f = f;
				m[n_m].own = own;
				m[n_m].as = as;
				n_m++;
			}
		}
	}

	if (!n_m) {
		char callers[512];
		const char *inl_path = NULL, *near;

		/* An exact name with no symbol may have been inlined everywhere:
		 * say so, and where it went. */
		for (size_t oi = 0; !p->glob && oi < s->n_objects && !inl_path; oi++)
			if (s->objects[oi].symtab &&
			    funcpattern__match_object(p, s->objects[oi].path) &&
			    inlined__callers(s->objects[oi].attach_path, p->func, callers,
					     sizeof(callers)) > 0)
				inl_path = s->objects[oi].path;
		target_desc(b->o, desc, sizeof(desc));
		if (ifunc)
			ifunc_error(&s->objects[ifunc_obj], ifunc);
		else if (inl_path)
			log_error("'%s' is inlined everywhere in %s (DW_AT_inline): no copy of "
				  "its own to probe; trace its callers: %s", p->func, inl_path,
				  callers);
		else if (!searched && p->object)
			log_error("no object '%s' in %s", p->object, desc);
		else if (n_excluded)
			log_error("every function matching '%s' in %s is excluded (%zu)", p->func,
				  desc, n_excluded);
		else if (stripped && searched == 1)
			log_error("no function matches '%s' in %s: %s has no symbol table "
				  "(stripped)", p->func, desc, stripped);
		else if (stripped)
			/* a launched program fully stripped: its libraries were
			 * searched, not it */
			log_error("no function matches '%s' in %s (searched %zu objects): %s has "
				  "no symbol table (stripped)", p->func, desc, searched, stripped);
		else if ((near = nearest_name(s, p)))
			log_error("no function matches '%s' in %s (searched %zu object%s); did "
				  "you mean %s?", p->func, desc, searched, searched == 1 ? "" : "s",
				  near);
		else
			log_error("no function matches '%s' in %s (searched %zu object%s)",
				  p->func, desc, searched, searched == 1 ? "" : "s");
		err = -ENOENT;
		goto cleanup;
	}
	if (ifunc)
		log_warn("%s in %s is an IFUNC resolver, not the function; the other matches "
			 "are traced", ifunc->name, s->objects[ifunc_obj].path);
	/* An exact name in two files is a question only the user can answer. */
	if (!p->glob && !p->object) {
		for (size_t i = 1; i < n_m; i++) {
			if (m[i].obj == m[0].obj)
				continue;
			log_error("'%s' is in %s and %s: name one as OBJECT:%s (e.g. %s:%s)",
				  p->func, s->objects[m[0].obj].path, s->objects[m[i].obj].path,
				  p->func, s->objects[m[0].obj].module, p->func);
			err = -EEXIST;
			goto cleanup;
		}
	}
	for (size_t i = 0; i < n_m; i++) {
		const struct probe_target *t = NULL;

		for (size_t ti = 0; ti < s->n_targets && !t; ti++)
			for (size_t k = 0; k < s->targets[ti].n_objects; k++)
				if (s->targets[ti].objects[k] == m[i].obj)
					t = &s->targets[ti];
		err = add_func(b, m[i].obj, m[i].f ? m[i].f : &m[i].own, m[i].as,
			       mode_for(b, t, m[i].obj), p->glob);
		if (err < 0)
			goto cleanup;
		added += (size_t)err;
		err = 0;
	}
	if (!added && !p->glob) {
		log_error("'%s' cannot be probed safely (see the warning above)", p->func);
		err = -EINVAL;
	}
cleanup:
	free(m);
	return err;
}

/* A USDT site as a probe: entry-only, its arguments from the note. */
static int add_usdt(struct builder *b, size_t obj_idx, const struct usdt_probe *u)
{
	struct probe_set *s = b->set;
	struct probe_func *pf;

	for (size_t i = 0; i < s->n_funcs; i++)
		if (s->funcs[i].object == obj_idx && s->funcs[i].usdt &&
		    s->funcs[i].file_offset == u->file_offset)
			return 0; /* named by two patterns */
	pf = new_func(b, obj_idx, u->addr, u->file_offset);
	if (!pf)
		return -ENOMEM;
	pf->ret_mode = RETURN_NONE;
	pf->usdt = true;
	pf->sema_offset = u->sema_offset;
	pf->usdt_spec.n_args = (uint32_t)(u->n_args < CMON_MAX_ARGS ? u->n_args : CMON_MAX_ARGS);
	for (uint32_t k = 0; k < pf->usdt_spec.n_args; k++) {
		struct cmon_usdt_arg *a = &pf->usdt_spec.args[k];

		a->kind = u->args[k].kind == USDT_ARG_REG   ? CMON_USDT_REG
			  : u->args[k].kind == USDT_ARG_MEM ? CMON_USDT_MEM
							    : CMON_USDT_CONST;
		a->reg_off = (uint16_t)u->args[k].reg;
		a->value = u->args[k].value;
		a->size = u->args[k].size;
		a->is_signed = u->args[k].is_signed;
	}
	if (asprintf(&pf->name, "%s:%s", u->provider, u->name) < 0) {
		pf->name = NULL;
		return -ENOMEM;
	}
	pf->usdt_args = strdup(u->args_text);
	if (!pf->usdt_args)
		return -ENOMEM;
	s->n_funcs++;
	return 1;
}

/* A source line's address as a site probe: named "FILE:LINE (function)". */
static int add_line_site(struct builder *b, size_t oi, uint64_t addr, const char *base,
			 unsigned line, bool in_lines)
{
	struct probe_set *s = b->set;
	const struct probe_object *obj = &s->objects[oi];
	const struct symtab_func *f = obj->symtab ? symtab__find_addr(obj->symtab, addr) : NULL;
	struct probe_func *pf;

	if (!f) {
		log_warn("%s:%u at %#llx in %s: in no function symbol; left out", base, line,
			 (unsigned long long)addr, obj->path);
		return 0;
	}
	for (size_t i = 0; i < s->n_funcs; i++)
		if (s->funcs[i].object == oi && s->funcs[i].usdt && s->funcs[i].addr == addr)
			return 1; /* named twice */
	pf = new_func(b, oi, addr, f->file_offset + (addr - f->addr));
	if (!pf)
		return -ENOMEM;
	pf->ret_mode = RETURN_NONE;
	pf->usdt = true; /* a site: the site program, no return */
	pf->usdt_spec.kind = CMON_SITE_LINE;
	pf->in_lines = in_lines;
	if (asprintf(&pf->name, "%s:%u (%s)", base, line, f->demangled ? f->demangled : f->name) < 0) {
		pf->name = NULL;
		return -ENOMEM;
	}
	s->n_funcs++;
	return 1;
}

/* --line FILE:LINE: every is_stmt address of the line (inlined copies too),
 * in every object of the targets that has DWARF for FILE. */
static int resolve_line(struct builder *b, const char *spec)
{
	const char *colon = strrchr(spec, ':'), *base;
	char *file, *end;
	unsigned long line;
	size_t sites = 0;
	unsigned below = 0, above = 0;
	bool file_seen = false, *had;
	int err = 0;

	line = colon ? strtoul(colon + 1, &end, 10) : 0;
	if (!colon || colon == spec || !line || *end) {
		log_error("--line '%s': expected FILE:LINE", spec);
		return -EINVAL;
	}
	file = strndup(spec, (size_t)(colon - spec));
	if (!file)
		return -ENOMEM;
	base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	/* The local debug files first; debuginfod (a download per library
	 * mapped) only for the files without DWARF, when none had FILE. */
	had = calloc(b->set->n_objects + 1, sizeof(*had));
	if (!had) {
		free(file);
		return -ENOMEM;
	}
	for (size_t i = 0; i < 2 * b->set->n_objects && !err && !(i >= b->set->n_objects &&
								   file_seen); i++) {
		size_t oi = i % b->set->n_objects;
		struct debuginfo_opts dopts = { .no_fetch = i < b->set->n_objects };
		struct debuginfo *di;
		uint64_t *addrs = NULL;
		size_t n = 0;
		unsigned lo = 0, hi = 0;
		int e;

		if (had[oi])
			continue;
		di = debuginfo__open_opts(b->set->objects[oi].attach_path, &dopts);
		had[oi] = di && debuginfo__kind(di) == DEBUGINFO_DWARF;
		e = di ? lines__addrs(di, file, (unsigned)line, &addrs, &n, &lo, &hi) : -ENODATA;

		if (e == -ENOMEM)
			err = e;
		if (e == 0 || e == -ENOENT)
			file_seen = true;
		if (e == -ENOENT) {
			if (lo > below)
				below = lo;
			if (hi && (!above || hi < above))
				above = hi;
		}
		for (size_t k = 0; k < n && !err; k++) {
			int r = add_line_site(b, oi, addrs[k], base, (unsigned)line, false);

			if (r < 0)
				err = r;
			else
				sites += (size_t)r;
		}
		free(addrs);
		debuginfo__free(di);
	}
	if (!err && !file_seen) {
		log_error("--line %s: no DWARF line table names %s", spec, file);
		err = -ENOENT;
	} else if (!err && !sites) {
		if (below && above)
			log_error("--line %s: no code at line %lu; the nearest lines with code "
				  "are %u and %u", spec, line, below, above);
		else if (below || above)
			log_error("--line %s: no code at line %lu; the nearest line with code "
				  "is %u", spec, line, below ? below : above);
		else
			log_error("--line %s: no code at line %lu", spec, line);
		err = -ENOENT;
	}
	free(had);
	free(file);
	return err;
}

/* --lines FUNC: FUNC traced (its return closes its last line) and each of
 * its lines of code a site. */
static int resolve_lines_of(struct builder *b, const struct funcpattern *p)
{
	size_t before = b->set->n_funcs, after;
	int err = resolve_pattern(b, p);

	/* The functions this pattern added (one named by --func too is left
	 * to its records only). */
	after = b->set->n_funcs;
	for (size_t i = before; i < after && !err; i++) {
		struct probe_func *f = &b->set->funcs[i];
		struct debuginfo *di;
		struct line_row *rows = NULL;
		const char *file = NULL, *base;
		size_t n = 0;

		if (f->usdt || f->lines_owner)
			continue;
		f->lines_owner = true;
		di = debuginfo__open(b->set->objects[f->object].attach_path);
		if (!di || lines__in_range(di, f->addr, f->addr + (f->size ? f->size : 1), &rows,
					   &n, &file)) {
			log_error("--lines %s: %s has no DWARF line table", p->func, f->name);
			debuginfo__free(di);
			return -ENOENT;
		}
		base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
		for (size_t k = 0; k < n && !err; k++) {
			uint64_t *addrs = NULL;
			size_t na = 0;
			unsigned lo, hi;
			/* Every address of the line inside this function. */
			int e = lines__addrs(di, file, rows[k].line, &addrs, &na, &lo, &hi);

			for (size_t a = 0; !e && a < na && !err; a++) {
				if (addrs[a] < f->addr || addrs[a] >= f->addr + (f->size ? f->size : 1))
					continue;
				err = add_line_site(b, f->object, addrs[a], base, rows[k].line, true);
				err = err < 0 ? err : 0;
				f = &b->set->funcs[i]; /* the array may have moved */
			}
			free(addrs);
		}
		free(rows);
		debuginfo__free(di);
	}
	return err;
}

/* --usdt [FILE:]PROVIDER:NAME: the SDT notes of every object of the
 * targets (the executable and its libraries). */
static int resolve_usdt(struct builder *b, const char *spec)
{
	char *copy = strdup(spec), *name, *prov, *file = NULL;
	struct funcpattern fp = {};
	size_t matched = 0, unreadable = 0;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	name = strrchr(copy, ':');
	if (name && (name == copy || !name[1])) {
		log_error("--usdt '%s': expected [FILE:]PROVIDER:NAME", spec);
		free(copy);
		return -EINVAL;
	}
	if (!name) { /* NAME alone: any provider */
		name = copy;
		prov = "*";
	} else {
		*name++ = 0;
		prov = strrchr(copy, ':');
		if (prov) {
			*prov++ = 0;
			file = copy;
		} else {
			prov = copy;
		}
	}
	fp.object = file;
	for (size_t oi = 0; oi < b->set->n_objects && !err; oi++) {
		struct usdt_probe *u = NULL;
		size_t n = 0;

		if (!funcpattern__match_object(&fp, b->set->objects[oi].path))
			continue;
		if (usdt__read(b->set->objects[oi].attach_path, &u, &n)) {
			unreadable++;
			continue;
		}
		for (size_t k = 0; k < n && !err; k++) {
			if (fnmatch(prov, u[k].provider, 0) || fnmatch(name, u[k].name, 0))
				continue;
			if (u[k].n_args < 0 || !u[k].file_offset) {
				log_warn("USDT %s:%s in %s: argument spec '%s' cannot be read; "
					 "left out", u[k].provider, u[k].name,
					 b->set->objects[oi].path, u[k].args_text);
				continue;
			}
			err = add_usdt(b, oi, &u[k]);
			if (err > 0) {
				matched++;
				err = 0;
			}
		}
		usdt__free(u, n);
	}
	if (!err && !matched) {
		log_error("no USDT probe matches '%s' in %zu object%s", spec,
			  b->set->n_objects, b->set->n_objects == 1 ? "" : "s");
		err = -ENOENT;
	}
	free(copy);
	return err;
}

int probe_set__resolve(const struct resolve_opts *o, struct probe_set **out)
{
	struct builder b = { .o = o };
	int err = 0;

	*out = NULL;
	{
		size_t positive = 0;

		for (size_t i = 0; i < o->n_patterns; i++)
			positive += !o->patterns[i].exclude;
		if (o->n_patterns && !positive && !o->n_usdts && !o->n_lines && !o->n_lines_of) {
			log_error("only exclusions given: name what to trace too (--func PATTERN)");
			return -EINVAL;
		}
	}
	b.set = calloc(1, sizeof(*b.set));
	if (!b.set)
		return -ENOMEM;
	for (size_t i = 0; i < o->n_pids && !err; i++)
		err = add_pid_target(&b, o->pids[i]);
	if (!err && o->launch_exe)
		err = add_launch_target(&b);
	if (!err && o->binary)
		err = add_binary_target(&b);
	if (!err && o->cgroup_desc)
		err = add_cgroup_target(&b);
	/* A stripped --binary is usable (add_binary_target checked it is an
	 * ELF file of this machine): the functions named may be in its
	 * libraries, and a pattern naming its own says it has no symbols. */
	for (size_t i = 0; i < o->n_patterns && !err; i++)
		if (!o->patterns[i].exclude)
			err = resolve_pattern(&b, &o->patterns[i]);
	for (size_t i = 0; i < o->n_usdts && !err; i++)
		err = resolve_usdt(&b, o->usdts[i]);
	for (size_t i = 0; i < o->n_lines && !err; i++)
		err = resolve_line(&b, o->lines[i]);
	for (size_t i = 0; i < o->n_lines_of && !err; i++)
		err = resolve_lines_of(&b, &o->lines_of[i]);
	b.focus_mode = true;
	for (size_t i = 0; i < o->n_focus && !err; i++)
		err = resolve_pattern(&b, &o->focus[i]);
	b.focus_mode = false;
	/* Planning is over: what the run needs was copied out.  Symbol tables
	 * and the disassembler would only weigh on a long trace's memory. */
	insn__release();
	for (size_t i = 0; i < b.set->n_objects; i++) {
		symtab__free(b.set->objects[i].symtab);
		b.set->objects[i].symtab = NULL;
	}
	for (size_t i = 0; i < b.n_aux; i++)
		symtab__free(b.aux[i]);
	free(b.aux);
	malloc_trim(0);
	if (err == -ENOMEM)
		log_error("out of memory");
	if (err) {
		probe_set__free(b.set);
		return err;
	}
	for (size_t i = 0; i < b.set->n_targets; i++)
		if (runtime_unwinds(b.set, &b.set->targets[i], SYMTAB_RT_STACKS))
			b.set->stack_switch = true;
	for (size_t i = 0; i < b.set->n_funcs; i++)
		b.set->go |= b.set->funcs[i].go;
	probe_set__number_ind_sites(b.set);
	*out = b.set;
	return 0;
}

void probe_set__number_ind_sites(struct probe_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n_funcs; i++) {
		struct probe_func *f = &set->funcs[i];

		f->ind_base = UINT32_MAX;
		if (f->ret_mode != RETURN_INSN || !f->exits.n_ind ||
		    n + f->exits.n_ind > CMON_COOKIE_IND_MASK + 1)
			continue;
		f->ind_base = (uint32_t)n;
		n += f->exits.n_ind;
	}
	set->n_ind_sites = n;
}

struct probe_func *probe_set__add_func(struct probe_set *set, size_t obj, const char *name,
				       uint64_t addr, uint64_t file_offset)
{
	struct probe_func *v = realloc(set->funcs, (set->n_funcs + 1) * sizeof(*v)), *f;

	if (!v)
		return NULL;
	set->funcs = v;
	f = &v[set->n_funcs];
	memset(f, 0, sizeof(*f));
	f->object = obj;
	f->addr = addr;
	f->file_offset = file_offset;
	f->name = strdup(name);
	if (!f->name)
		return NULL;
	set->n_funcs++;
	return f;
}

size_t probe_set__probe_count(const struct probe_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n_funcs; i++) {
		const struct probe_func *f = &set->funcs[i];

		n += 1;
		if (f->ret_mode == RETURN_URETPROBE)
			n += 1;
		else if (f->ret_mode == RETURN_INSN)
			n += f->exits.n_ret + f->exits.n_tail;
	}
	return n;
}

void probe_set__free(struct probe_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n_funcs; i++) {
		free(set->funcs[i].name);
		free(set->funcs[i].usdt_args);
		exit_plan__clear(&set->funcs[i].exits);
		exit_plan__clear(&set->funcs[i].cold_exits);
	}
	for (size_t i = 0; i < set->n_objects; i++) {
		free(set->objects[i].path);
		free(set->objects[i].attach_path);
		free(set->objects[i].symbols_from);
		symtab__free(set->objects[i].symtab);
	}
	for (size_t i = 0; i < set->n_targets; i++)
		free(set->targets[i].objects);
	free(set->funcs);
	free(set->objects);
	free(set->targets);
	free(set);
}
