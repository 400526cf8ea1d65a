// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/log.h"
#include "follow.h"

struct follow_proc {
	pid_t pid;
	bool gone;
	bool seen;               /* in the map at the last scan */
	struct probe_links *links; /* a child's library links; NULL for a root */
};

struct follow {
	int map_fd, stats_fd;
	const struct probe_set *set;
	const struct probe_links_opts *opts;
	struct follow_proc *procs;
	size_t n, cap;
	uint64_t failed;
};

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
	*out = f;
	return 0;
}

static struct follow_proc *find(struct follow *f, pid_t pid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->procs[i].pid == pid && !f->procs[i].gone)
			return &f->procs[i];
	return NULL;
}

static struct follow_proc *add(struct follow *f, pid_t pid)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct follow_proc *p = realloc(f->procs, cap * sizeof(*p));

		if (!p)
			return NULL;
		f->procs = p;
		f->cap = cap;
	}
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
	return 0;
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
	if (err)
		log_error("cannot follow the traced processes: %s", strerror(-err));
	return err;
}

int follow__scan(struct follow *f)
{
	__u32 key, next, *prev = NULL;
	int alive = 0, err;

	for (size_t i = 0; i < f->n; i++)
		f->procs[i].seen = false;
	while (!bpf_map_get_next_key(f->map_fd, prev, &next)) {
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
		err = probe_links__attach_child(f->set, f->opts, (pid_t)next, &p->links);
		if (err && err != -ESRCH) {
			f->failed++;
			log_warn("child %u is traced in its executable only: its libraries' "
				 "probes could not be attached (%s)", next, strerror(-err));
		}
	}
	/* Gone from the map: the process exited; its links are let go. */
	for (size_t i = 0; i < f->n; i++) {
		struct follow_proc *p = &f->procs[i];

		if (!p->seen && !p->gone) {
			p->gone = true;
			probe_links__free(p->links);
			p->links = NULL;
		}
	}
	return alive;
}

size_t follow__count(const struct follow *f) { return f ? f->n : 0; }
pid_t follow__pid(const struct follow *f, size_t i) { return f->procs[i].pid; }

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

void follow__detach(struct follow *f)
{
	for (size_t i = 0; f && i < f->n; i++) {
		probe_links__free(f->procs[i].links);
		f->procs[i].links = NULL;
	}
}

void follow__free(struct follow *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		probe_links__free(f->procs[i].links);
	free(f->procs);
	free(f);
}
