// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* resolve_targets.c: the files a probe set reaches: a process's mapped
 * objects (-p), a launched program, --binary, --cgroup, named libraries. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "core/grow.h"
#include "core/log.h"
#include "elf/elfcheck.h"
#include "proc/libpath.h"
#include "proc/procmaps.h"
#include "resolve_build.h"

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
	for (size_t i = 0; i < t->n_objects; i++)
		if (t->objects[i] == idx)
			return 0;
	if (GROW(t->objects, t->n_objects, t->cap_objects, 8))
		return -ENOMEM;
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

int resolve_targets__add_pid(struct builder *b, pid_t pid)
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

int resolve_targets__add_launch(struct builder *b)
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

int resolve_targets__add_binary(struct builder *b)
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
int resolve_targets__add_cgroup(struct builder *b)
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
int resolve_targets__check_named_file(const struct probe_object *obj)
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
