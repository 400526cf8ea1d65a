// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/grow.h"
#include "core/clock.h"
#include "core/log.h"
#include "proc/procmaps.h"
#include "follow.h"

static bool no_child_links; /* CMON_TEST_NO_CHILD_LINKS, read by main */

void follow__test_no_child_links(void) { no_child_links = true; }

struct follow_proc {
	pid_t pid;
	bool seen;               /* in the map at the last scan */
	struct probe_links *links; /* a child's library links; NULL for a root */
};

#define FOLLOW_CLOSERS 8

struct follow {
	int map_fd, stats_fd;
	const struct probe_set *set;
	const struct probe_links_opts *opts;
	struct follow_proc *procs;
	size_t n, cap;
	uint64_t failed;
	uint64_t children_seen; /* by a scan, alive: their links were attached */
	/* The last walk of the map: the programs' count of changes before it,
	 * and what it found.  A walk costs ~a bucket a step over the whole
	 * table (tens of us), and a scan follows every poll. */
	uint64_t changes_walked;
	int alive_walked;
	bool walked;
	bool own_links;         /* children need links of their own */
	/* Detaching a link waits for the kernel's uprobe grace periods (~80
	 * ms here): exited children's links are let go by these threads, so a
	 * scan is never held up and a child forked meanwhile gets its links;
	 * several at once share the grace periods. */
	pthread_t closers[FOLLOW_CLOSERS];
	size_t n_closers;
	bool closing_done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct probe_links **to_close;
	size_t n_close, cap_close;
};

static void *closer_main(void *arg)
{
	struct follow *f = arg;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (!f->n_close && !f->closing_done)
			pthread_cond_wait(&f->cond, &f->lock);
		if (!f->n_close)
			break;
		struct probe_links *l = f->to_close[--f->n_close];

		pthread_mutex_unlock(&f->lock);
		probe_links__free(l);
		pthread_mutex_lock(&f->lock);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* Let L go in a closer thread (here when none can be had). */
static void close_later(struct follow *f, struct probe_links *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&f->lock);
	while (f->n_closers < FOLLOW_CLOSERS &&
	       !pthread_create(&f->closers[f->n_closers], NULL, closer_main, f))
		f->n_closers++;
	if (f->n_closers && !GROW(f->to_close, f->n_close, f->cap_close, 16)) {
		f->to_close[f->n_close++] = l;
		l = NULL;
		pthread_cond_signal(&f->cond);
	}
	pthread_mutex_unlock(&f->lock);
	probe_links__free(l);
}

/* Wait until every link handed to the closer is gone. */
static void closer_stop(struct follow *f)
{
	if (!f->n_closers)
		return;
	pthread_mutex_lock(&f->lock);
	f->closing_done = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	for (size_t i = 0; i < f->n_closers; i++)
		pthread_join(f->closers[i], NULL);
	f->n_closers = 0;
	f->closing_done = false;
}

int follow__new(int map_fd, int stats_fd, const struct probe_set *set,
		const struct probe_links_opts *opts, struct follow **out)
{
	struct follow *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->map_fd = map_fd;
	f->stats_fd = stats_fd;
	f->set = set;
	f->opts = opts;
	f->own_links = probe_links__child_has_own(set, opts->host_wide);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	*out = f;
	return 0;
}

static struct follow_proc *find(struct follow *f, pid_t pid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->procs[i].pid == pid)
			return &f->procs[i];
	return NULL;
}

static struct follow_proc *add(struct follow *f, pid_t pid)
{
	if (GROW(f->procs, f->n, f->cap, 16))
		return NULL;
	memset(&f->procs[f->n], 0, sizeof(f->procs[f->n]));
	f->procs[f->n].pid = pid;
	return &f->procs[f->n++];
}

int follow__add_root(struct follow *f, pid_t pid)
{
	__u32 key = (__u32)pid, parent = 0;

	if (!add(f, pid))
		return -ENOMEM;
	if (bpf_map_update_elem(f->map_fd, &key, &parent, BPF_ANY))
		return -errno;
	f->walked = false; /* a change the programs did not count */
	return 0;
}

/* Processes other than the roots and their children running OBJ: they
 * trap on its probes too (links without a pid filter), at a probe's full
 * cost, for nothing.  None when no probe is in OBJ (only in libraries,
 * whose links are per process); a root's children are the user's (said
 * at the end when they made the calls the root did not). */
static size_t other_instances(const struct probe_set *set, size_t obj_idx)
{
	const struct probe_object *obj = &set->objects[obj_idx];
	struct dirent *de;
	size_t n = 0;
	bool probed = false;
	DIR *d;

	for (size_t i = 0; i < set->n_funcs && !probed; i++)
		probed = set->funcs[i].object == obj_idx;
	if (!probed || !(d = opendir("/proc")))
		return 0;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name), parent;
		char path[64];
		struct stat st;
		bool ours = false;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		if (stat(path, &st) || (uint64_t)st.st_dev != obj->dev ||
		    (uint64_t)st.st_ino != obj->ino)
			continue;
		parent = proc__ppid(pid);
		for (size_t i = 0; i < set->n_targets && !ours; i++)
			ours = set->targets[i].pid > 0 &&
			       (set->targets[i].pid == pid || set->targets[i].pid == parent);
		n += !ours;
	}
	closedir(d);
	return n;
}

int follow__start(struct bpf_program *fork_prog, int map_fd, int stats_fd,
		  const struct probe_set *set, const struct probe_links_opts *opts,
		  struct bpf_link **fork_link, struct follow **out)
{
	int err;

	*fork_link = bpf_program__attach(fork_prog);
	if (!*fork_link) {
		err = -errno;
		log_error("cannot attach the fork tracepoint: %s", strerror(-err));
		return err;
	}
	err = follow__new(map_fd, stats_fd, set, opts, out);
	for (size_t i = 0; !err && i < set->n_targets; i++)
		if (set->targets[i].pid > 0)
			err = follow__add_root(*out, set->targets[i].pid);
	if (err) {
		log_error("cannot follow the traced processes: %s", strerror(-err));
		return err;
	}
	for (size_t i = 0; i < set->n_targets; i++) {
		const struct probe_target *t = &set->targets[i];
		bool said = false;
		size_t n;

		for (size_t k = 0; k < i; k++)
			said = said || set->targets[k].exe_object == t->exe_object;
		if (t->pid <= 0 || t->exe_object < 0 || said)
			continue;
		n = other_instances(set, (size_t)t->exe_object);
		if (n)
			log_warn("%zu other process%s running %s trap%s on its probes too while "
				 "children are followed (not recorded; --no-follow avoids it)", n,
				 n == 1 ? "" : "es", set->objects[t->exe_object].path,
				 n == 1 ? "s" : "");
	}
	return 0;
}

/* Did PID end while its links were made?  The attach can succeed on a
 * process that exits during it (a short child under a wide glob): it
 * made its calls before them, so it counts as gone, not as followed. */
static bool child_gone(pid_t pid)
{
	char st = proc__stat(pid, 0, NULL);

	return !st || st == 'Z' || st == 'X';
}

int follow__scan(struct follow *f)
{
	__u32 key, next, *prev = NULL, zero = 0;
	struct cmon_follow_stats st = {};
	bool counted = !bpf_map_lookup_elem(f->stats_fd, &zero, &st);
	unsigned long long t0;
	int alive = 0, steps, err;

	/* Read before the walk: a change during it makes the next scan walk. */
	if (counted && f->walked && st.changes == f->changes_walked)
		return f->alive_walked;
	for (size_t i = 0; i < f->n; i++)
		f->procs[i].seen = false;
	/* A key deleted under the walk restarts it: bounded. */
	for (steps = 0;
	     steps < 4 * CMON_FOLLOW_MAX && !bpf_map_get_next_key(f->map_fd, prev, &next);
	     steps++) {
		struct follow_proc *p = find(f, (pid_t)next);

		key = next;
		prev = &key;
		alive++;
		if (p) {
			p->seen = true;
			continue;
		}
		p = add(f, (pid_t)next);
		if (!p)
			return -ENOMEM;
		p->seen = true;
		f->children_seen++;
		if (!f->own_links || no_child_links)
			continue;
		t0 = clock__mono_ns();
		err = probe_links__attach_child(f->set, f->opts, (pid_t)next, &p->links);
		log_info("child %u: its libraries' probes attached in %.2f ms", next,
			 (double)(clock__mono_ns() - t0) / 1e6);
		if (err == -ESRCH || (!err && child_gone((pid_t)next)))
			f->children_seen--; /* gone meanwhile: attached to nothing */
		if (err && err != -ESRCH) {
			f->failed++;
			log_warn("child %u is traced in its executable only: its libraries' "
				 "probes could not be attached (%s)", next, strerror(-err));
		}
	}
	/* Gone from the map: the process exited; its links are let go. */
	for (size_t i = 0, k = 0, n = f->n; i < n; i++) {
		struct follow_proc *p = &f->procs[i];

		if (p->seen)
			f->procs[k++] = *p;
		else
			close_later(f, p->links);
		f->n = k;
	}
	f->walked = counted && steps < 4 * CMON_FOLLOW_MAX; /* cut short: walked again */
	f->changes_walked = st.changes;
	f->alive_walked = alive;
	return alive;
}

int follow__reattach(struct follow *f, pid_t pid)
{
	struct follow_proc *p = f ? find(f, pid) : NULL;

	if (!p || !p->links)
		return 0; /* a root (the caller's links), or not a child with links */
	/* Now, not by a closer: the old links would fire in the new program
	 * beside the new ones. */
	probe_links__free(p->links);
	p->links = NULL;
	return probe_links__attach_child(f->set, f->opts, pid, &p->links) ?: 1;
}

size_t follow__count(const struct follow *f) { return f ? f->n : 0; }
pid_t follow__pid(const struct follow *f, size_t i) { return f->procs[i].pid; }

uint64_t follow__missed(const struct follow *f)
{
	uint64_t forks, unfollowed, failed;

	if (!f || !f->own_links)
		return 0;
	follow__stats(f, &forks, &unfollowed, &failed);
	return forks > f->children_seen ? forks - f->children_seen : 0;
}

void follow__stats(const struct follow *f, uint64_t *forks, uint64_t *unfollowed,
		   uint64_t *failed)
{
	struct cmon_follow_stats st = {};
	__u32 zero = 0;

	if (f)
		bpf_map_lookup_elem(f->stats_fd, &zero, &st);
	*forks = st.forks;
	*unfollowed = st.unfollowed;
	*failed = f ? f->failed : 0;
}

void follow__take_returns(struct follow *f, struct link_closer *c)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		probe_links__take_returns(f->procs[i].links, c);
	/* and those waiting for a closer (one being closed does its own) */
	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->n_close; i++)
		probe_links__take_returns(f->to_close[i], c);
	pthread_mutex_unlock(&f->lock);
}

void follow__detach(struct follow *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++) {
		close_later(f, f->procs[i].links);
		f->procs[i].links = NULL;
	}
	closer_stop(f);
}

void follow__free(struct follow *f)
{
	if (!f)
		return;
	follow__detach(f);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	free(f->to_close);
	free(f->procs);
	free(f);
}
