// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup.c: cgroup v2 directories as targets: the hierarchy's mount from
 * /proc/mounts, a directory's id and depth, the processes below it, a
 * container's directory by the names container managers give it.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "core/grow.h"
#include "core/hmap.h"
#include "core/log.h"
#include "proc/cgroup.h"

#define CGROUP2_MAGIC 0x63677270 /* CGROUP2_SUPER_MAGIC */
#define CGROUP1_MAGIC 0x27e0eb   /* CGROUP_SUPER_MAGIC */
#define WALK_DEPTH 12            /* deeper than any manager nests */

void cgroup_sel__clear(struct cgroup_sel *s)
{
	free(s->path);
	free(s->rel);
	s->path = s->rel = NULL;
}

/* The v2 mount holding PATH (NULL: the first one), malloc'd; NULL with
 * errno ENODEV when none is. */
static char *v2_mount(const char *path)
{
	FILE *f = setmntent("/proc/mounts", "r");
	struct mntent *m;
	char *best = NULL;
	size_t best_len = 0;

	if (!f)
		return NULL;
	while ((m = getmntent(f))) {
		size_t n = strlen(m->mnt_dir);

		if (strcmp(m->mnt_type, "cgroup2"))
			continue;
		if (path && (strncmp(path, m->mnt_dir, n) ||
			     (path[n] && path[n] != '/' && strcmp(m->mnt_dir, "/"))))
			continue;
		if (!best || n > best_len) {
			free(best);
			best = strdup(m->mnt_dir);
			best_len = n;
		}
		if (!path)
			break;
	}
	endmntent(f);
	if (!best)
		errno = ENODEV;
	return best;
}

/* Fill S for the v2 directory REAL (a real path) under mount MNT. */
static int fill(struct cgroup_sel *s, const char *real, const char *mnt)
{
	size_t n = strcmp(mnt, "/") ? strlen(mnt) : 0;
	struct stat st;

	memset(s, 0, sizeof(*s));
	if (stat(real, &st))
		return -errno;
	s->path = strdup(real);
	s->rel = strdup(real[n] ? real + n : "/");
	if (!s->path || !s->rel) {
		cgroup_sel__clear(s);
		return -ENOMEM;
	}
	s->id = st.st_ino; /* the kernfs node id: the cgroup's id */
	for (const char *p = s->rel; *p; p++)
		if (*p == '/' && p[1])
			s->level++;
	return 0;
}

int cgroup__resolve(const char *path, struct cgroup_sel *out)
{
	char real[PATH_MAX];
	struct statfs fs;
	struct stat st;
	char *mnt = NULL;
	int err;

	if (!realpath(path, real) || stat(real, &st)) {
		err = -errno;
		log_error("cgroup %s: %s", path, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_error("cgroup %s: not a directory (a cgroup v2 directory, such as %s/...)", path,
			  (mnt = v2_mount(NULL)) ? mnt : "/sys/fs/cgroup");
		free(mnt);
		return -ENOTDIR;
	}
	if (statfs(real, &fs) || (unsigned long)fs.f_type != CGROUP2_MAGIC) {
		mnt = v2_mount(NULL);
		if (!statfs(real, &fs) && (unsigned long)fs.f_type == CGROUP1_MAGIC)
			log_error("cgroup %s: a cgroup v1 directory: cmon selects by cgroup v2%s%s",
				  path, mnt ? ", mounted here at " : " (none is mounted here)",
				  mnt ? mnt : "");
		else if (mnt)
			log_error("cgroup %s: not a cgroup v2 directory (the hierarchy is mounted at "
				  "%s)", path, mnt);
		else
			log_error("cgroup %s: not a cgroup v2 directory (none is mounted here)", path);
		free(mnt);
		return -EINVAL;
	}
	mnt = v2_mount(real);
	if (!mnt) {
		log_error("cgroup %s: its cgroup v2 mount is not in /proc/mounts", path);
		return -ENODEV;
	}
	err = fill(out, real, mnt);
	if (err)
		log_error("cgroup %s: %s", path, strerror(-err));
	free(mnt);
	return err;
}

const char *cgroup__container_of(const char *name, size_t *len)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-", "libpod-",
						"" };
	size_t n = strlen(name);

	if (n > 6 && !strcmp(name + n - 6, ".scope"))
		n -= 6;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t k = strlen(prefixes[i]);

		if (strncmp(name, prefixes[i], k) || n - k != 64)
			continue;
		for (size_t j = k; j < n; j++)
			if (!isxdigit((unsigned char)name[j]) || isupper((unsigned char)name[j]))
				return NULL;
		*len = 64;
		return name + k; /* conmon's "libpod-conmon-ID" has no 64 hex digits after a prefix */
	}
	return NULL;
}

struct found {
	char **paths;
	char (*ids)[65];
	size_t n, cap;
};

static int walk_containers(int dfd, const char *path, unsigned depth, const char *want,
			   struct found *f)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	int err = 0;

	if (!d) {
		close(dfd);
		return 0;
	}
	while (!err && (e = readdir(d))) {
		const char *id;
		size_t len;
		char *sub;
		int fd;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (asprintf(&sub, "%s/%s", path, e->d_name) < 0)
			return closedir(d), -ENOMEM;
		id = cgroup__container_of(e->d_name, &len);
		if (id && !strncmp(id, want, strlen(want))) {
			size_t cap_ids = f->cap; /* ids beside paths: the same capacity */
			bool dup = false;

			/* The same container's directory twice (a child named like
			 * it): the outermost, met first, is its cgroup. */
			for (size_t i = 0; i < f->n && !dup; i++)
				dup = !strncmp(f->ids[i], id, len);
			if (!dup && (GROW(f->ids, f->n, cap_ids, 4) ||
				     GROW(f->paths, f->n, f->cap, 4))) {
				err = -ENOMEM;
			} else if (!dup) {
				memcpy(f->ids[f->n], id, len);
				f->ids[f->n][len] = '\0';
				f->paths[f->n++] = sub;
				sub = NULL;
			}
		}
		if (!err && depth < WALK_DEPTH &&
		    (fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
			err = walk_containers(fd, sub ? sub : f->paths[f->n - 1], depth + 1, want, f);
		free(sub);
	}
	closedir(d);
	return err;
}

int cgroup__find_container(const char *id, struct cgroup_sel *out)
{
	struct found f = {};
	char *mnt = v2_mount(NULL);
	size_t n = strlen(id);
	int fd, err = 0;

	for (size_t i = 0; i < n && !err; i++)
		if (!isxdigit((unsigned char)id[i]) || isupper((unsigned char)id[i]))
			err = -EINVAL;
	if (err || n < 4 || n > 64) {
		log_error("container %s: not a container id (4 to 64 lowercase hex digits)", id);
		free(mnt);
		return -EINVAL;
	}
	if (!mnt) {
		log_error("container %s: no cgroup v2 hierarchy is mounted here", id);
		return -ENODEV;
	}
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = fd < 0 ? -errno : walk_containers(fd, strcmp(mnt, "/") ? mnt : "", 0, id, &f);
	if (err) {
		log_error("container %s: %s: %s", id, mnt, strerror(-err));
	} else if (!f.n) {
		log_error("container %s: no container's cgroup matches (searched the cgroup v2 "
			  "hierarchy at %s)", id, mnt);
		err = -ENOENT;
	} else if (f.n > 1) {
		/* (directory order is no order: the two lowest ids) */
		size_t a = 0, b = 1;

		for (size_t i = 1; i < f.n; i++)
			if (strcmp(f.ids[i], f.ids[a]) < 0)
				a = i;
		b = a ? 0 : 1;
		for (size_t i = 0; i < f.n; i++)
			if (i != a && strcmp(f.ids[i], f.ids[b]) < 0)
				b = i;
		log_error("container %s: matches %zu containers (%.12s, %.12s%s): give more of "
			  "its id", id, f.n, f.ids[a], f.ids[b], f.n > 2 ? ", ..." : "");
		err = -EEXIST;
	} else {
		err = fill(out, f.paths[0], mnt);
		if (err)
			log_error("container %s: %s: %s", id, f.paths[0], strerror(-err));
	}
	for (size_t i = 0; i < f.n; i++)
		free(f.paths[i]);
	free(f.paths);
	free(f.ids);
	free(mnt);
	return err;
}

struct pid_vec {
	pid_t *v;
	size_t n, cap;
};

static int read_procs(int dfd, struct pid_vec *pv)
{
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	long pid;
	int err = 0;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0; /* removed meanwhile */
	}
	while (!err && fscanf(f, "%ld", &pid) == 1)
		if (pid > 0 && !(err = GROW(pv->v, pv->n, pv->cap, 16)))
			pv->v[pv->n++] = (pid_t)pid;
	fclose(f);
	return err;
}

static int walk_procs(int dfd, unsigned depth, struct pid_vec *pv)
{
	DIR *d;
	struct dirent *e;
	int err = read_procs(dfd, pv);

	if (err || depth >= WALK_DEPTH || !(d = fdopendir(dfd))) {
		close(dfd);
		return err;
	}
	while (!err && (e = readdir(d))) {
		int fd;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			err = walk_procs(fd, depth + 1, pv);
	}
	closedir(d);
	return err;
}

int cgroup__pids(const struct cgroup_sel *s, pid_t **pids, size_t *n)
{
	struct pid_vec pv = {};
	int fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = fd < 0 ? -errno : walk_procs(fd, 0, &pv);

	if (err) {
		free(pv.v);
		return err;
	}
	*pids = pv.v;
	*n = pv.n;
	return 0;
}

int cgroup__of_pid(pid_t pid, char *buf, size_t len)
{
	char path[32], line[PATH_MAX + 8];
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (err == -ENOENT && fgets(line, sizeof(line), f)) {
		size_t n;

		if (strncmp(line, "0::", 3))
			continue;
		n = strcspn(line + 3, "\n");
		if (n >= len) {
			err = -ENAMETOOLONG;
		} else {
			memcpy(buf, line + 3, n);
			buf[n] = '\0';
			err = 0;
		}
	}
	fclose(f);
	return err;
}

struct cgroup_names {
	struct hmap by_pid; /* pid -> 1 + index in names */
	char **names;
	size_t n, cap;
};

struct cgroup_names *cgroup_names__new(void)
{
	return calloc(1, sizeof(struct cgroup_names));
}

const char *cgroup_names__of(struct cgroup_names *c, pid_t pid)
{
	char buf[PATH_MAX];
	bool added;
	uint64_t *v = hmap__get(&c->by_pid, &pid, sizeof(pid), &added);

	if (!v)
		return NULL;
	if (!added)
		return *v ? c->names[*v - 1] : NULL;
	/* Asked once: a process gone by now stays unknown. */
	if (cgroup__of_pid(pid, buf, sizeof(buf)) || GROW(c->names, c->n, c->cap, 16) ||
	    !(c->names[c->n] = strdup(buf)))
		return NULL;
	*v = ++c->n;
	return c->names[c->n - 1];
}

void cgroup_names__free(struct cgroup_names *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	hmap__release(&c->by_pid);
	free(c);
}
