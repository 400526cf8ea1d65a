/*
 * cgroup.h: cgroup v2 directories as trace targets (--cgroup PATH,
 * --container ID): where the v2 hierarchy is mounted (read from
 * /proc/mounts: hybrid hosts keep it at /sys/fs/cgroup/unified), a
 * directory's id and depth (what the BPF filter compares with the
 * task's ancestor at that depth), the processes in it and below it, a
 * container's directory from its id, and a process's own cgroup.
 */
#ifndef CMON_CGROUP_H
#define CMON_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cgroup_sel {
	char *path;     /* the directory, absolute */
	char *rel;      /* below the v2 root, "/" for the root: "/libpod_parent/libpod-ab12" */
	uint64_t id;    /* the kernel's cgroup id (the directory's inode) */
	unsigned level; /* depth below the root (the root: 0) */
};

/*
 * PATH as a cgroup v2 directory.  0, or -errno after one error line:
 * -ENOENT (no such directory), -ENOTDIR, -EINVAL (not in the v2 hierarchy:
 * cgroup v1, or no cgroup at all), -ENODEV (no v2 hierarchy mounted).
 */
int cgroup__resolve(const char *path, struct cgroup_sel *out);

/*
 * The cgroup of container ID (its full id or a unique prefix, at least 4
 * hex digits) in the v2 hierarchy, as Docker, containerd, CRI-O and
 * Podman name them (docker-ID.scope, docker/ID, cri-containerd-ID.scope,
 * crio-ID.scope, libpod-ID.scope, libpod-ID; never conmon's).  0, or
 * -errno after one error line: -ENOENT (none), -EEXIST (several), -EINVAL.
 */
int cgroup__find_container(const char *id, struct cgroup_sel *out);

/* Every process in S's directory and below it, now.  0 and a malloc'd
 * array, or -errno (-ENOENT: the directory is gone). */
int cgroup__pids(const struct cgroup_sel *s, pid_t **pids, size_t *n);

void cgroup_sel__clear(struct cgroup_sel *s);

/* Process PID's cgroup v2 path below the root (/proc/PID/cgroup's "0::"
 * line) into BUF; 0, -ESRCH (gone), -ENOENT (no v2 line), -ENAMETOOLONG. */
int cgroup__of_pid(pid_t pid, char *buf, size_t len);

/* Each process's cgroup v2 path (cgroup__of_pid), read once: what a
 * record is labelled with.  A process gone before it is asked is NULL. */
struct cgroup_names;
struct cgroup_names *cgroup_names__new(void); /* NULL and errno */
const char *cgroup_names__of(struct cgroup_names *c, pid_t pid);
void cgroup_names__free(struct cgroup_names *c); /* NULL fine */

/* Exposed for tests: the container id a cgroup directory's NAME stands
 * for (pointer into NAME, *LEN hex digits), or NULL. */
const char *cgroup__container_of(const char *name, size_t *len);

#endif
