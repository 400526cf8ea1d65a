// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "core/grow.h"
#include "core/log.h"
#include "probe/host.h"
#include "inherit.h"

struct uprobe_inherit {
	char *path;
	uint64_t offset;
	bool retprobe;
	unsigned refs;
	char name[32];          /* the tracefs event, under group cmon_PID */
	uint64_t id;            /* its trace event id */
	struct bpf_link *link;  /* the program, on an event of cmon's own */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct uprobe_inherit **probes;
static size_t n_probes, cap_probes;
static unsigned seq;
static const char *tracefs = ""; /* none (yet) */

static const char *find_tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char f[64];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(f, sizeof(f), "%s/uprobe_events", dirs[i]);
		if (!access(f, W_OK))
			return dirs[i];
	}
	/* Not mounted (a minimal VM): the kernel's own place for it. */
	if (!mount("nodev", dirs[0], "tracefs", 0, NULL)) {
		log_info("mounted tracefs at %s (for inherited uprobes)", dirs[0]);
		snprintf(f, sizeof(f), "%s/uprobe_events", dirs[0]);
		if (!access(f, W_OK))
			return dirs[0];
	}
	return "";
}

static int write_events(const char *line);

/* Events a cmon that died left (a SIGKILL: they outlive it, unused). */
static void remove_stale(void)
{
	char f[64], line[PATH_MAX + 96], gone[128];
	FILE *fp;

	snprintf(f, sizeof(f), "%s/uprobe_events", tracefs);
	fp = fopen(f, "re");
	while (fp && fgets(line, sizeof(line), fp)) {
		char name[64];
		int pid;

		if (sscanf(line, "%*c:cmon_%d/%63s", &pid, name) != 2 || pid <= 0 ||
		    !kill(pid, 0) || errno != ESRCH)
			continue;
		snprintf(gone, sizeof(gone), "-:cmon_%d/%s\n", pid, name);
		if (!write_events(gone))
			log_debug("removed tracefs uprobe event cmon_%d/%s (its cmon is gone)", pid,
				  name);
	}
	if (fp)
		fclose(fp);
}

/* Does the kernel take inherited events read per task (Linux >= 6.12)?
 * Without them a child's events can end up with another child's target
 * (open_event): not reliable enough to count on. */
static bool read_per_task(char *why, size_t n)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.inherit = 1,
		.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_TID,
		.disabled = 1,
	};
	long fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0) {
		snprintf(why, n, "inherited perf events not read per task (Linux < 6.12): %s",
			 strerror(errno));
		return false;
	}
	close((int)fd);
	return true;
}

bool uprobe_inherit__probe(char *why, size_t n)
{
	const char *dir;

	if (!read_per_task(why, n))
		return false;
	dir = find_tracefs();
	pthread_mutex_lock(&lock);
	tracefs = dir;
	pthread_mutex_unlock(&lock);
	if (!dir[0])
		snprintf(why, n, "no tracefs uprobe_events (and tracefs cannot be mounted)");
	return dir[0];
}

bool uprobe_inherit__supported(void)
{
	static bool cleaned;
	bool have = host__have(HOST_INHERIT_UPROBE);

	pthread_mutex_lock(&lock);
	if (have && !cleaned) {
		cleaned = true;
		remove_stale();
	}
	pthread_mutex_unlock(&lock);
	return have;
}

/* Write LINE to tracefs's uprobe_events. */
static int write_events(const char *line)
{
	char f[64];
	int fd, err = 0;

	snprintf(f, sizeof(f), "%s/uprobe_events", tracefs);
	fd = open(f, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, line, strlen(line)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static int read_id(const char *name, uint64_t *id)
{
	char f[128];
	FILE *fp;
	int ok;

	snprintf(f, sizeof(f), "%s/events/cmon_%d/%s/id", tracefs, (int)getpid(), name);
	fp = fopen(f, "re");
	if (!fp)
		return -errno;
	ok = fscanf(fp, "%lu", id) == 1;
	fclose(fp);
	return ok ? 0 : -EINVAL;
}

static int open_event(uint64_t id, pid_t tid, bool inherit)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = id,
		.sample_period = 1,
		.wakeup_events = 1,
		.inherit = inherit,
		/* An inherited event read per task keeps the kernel from swapping
		 * two tasks' contexts at a switch (perf_event_context_sched_out:
		 * clones of one context are swapped, not scheduled), which would
		 * leave a child's events with another child's target: the
		 * uprobe filter (by target mm) drops a live child when the other
		 * exits.  Linux >= 6.12; older ones refuse it (EINVAL), and it needs the TID. */
		.sample_type = inherit ? PERF_SAMPLE_READ | PERF_SAMPLE_TID : 0,
	};
	long fd = syscall(__NR_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

/* The tracefs event removed; its last events may still be going away
 * (a child's inherited ones as it exits): the kernel says busy meanwhile. */
static void remove_event(const struct uprobe_inherit *u)
{
	char line[64];
	int err;

	snprintf(line, sizeof(line), "-:cmon_%d/%s\n", (int)getpid(), u->name);
	for (int tries = 0; (err = write_events(line)) == -EBUSY && tries < 200; tries++)
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	if (err)
		log_warn("cannot remove tracefs uprobe event cmon_%d/%s: %s", (int)getpid(),
			 u->name, strerror(-err));
}

static void free_probe(struct uprobe_inherit *u)
{
	free(u->path);
	free(u);
}

/* Make U's tracefs event and attach PROG to it on an event of cmon's own. */
static int make_probe(struct uprobe_inherit *u, struct bpf_program *prog, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = cookie);
	char line[PATH_MAX + 96];
	int fd, err;

	if (strpbrk(u->path, " \t\n"))
		return -EINVAL; /* tracefs's syntax has no quoting */
	snprintf(u->name, sizeof(u->name), "%c%u_%lx", u->retprobe ? 'r' : 'p', seq++,
		 (unsigned long)u->offset);
	snprintf(line, sizeof(line), "%c:cmon_%d/%s %s:0x%lx\n", u->retprobe ? 'r' : 'p',
		 (int)getpid(), u->name, u->path, (unsigned long)u->offset);
	err = write_events(line);
	if (err)
		return err;
	err = read_id(u->name, &u->id);
	fd = err ? err : open_event(u->id, getpid(), false);
	if (fd < 0) {
		remove_event(u);
		return fd;
	}
	u->link = bpf_program__attach_perf_event_opts(prog, fd, &po);
	if (!u->link) {
		err = -errno;
		close(fd);
		remove_event(u);
		return err;
	}
	return 0;
}

int uprobe_inherit__get(const char *path, uint64_t offset, bool retprobe,
			struct bpf_program *prog, uint64_t cookie, struct uprobe_inherit **out)
{
	struct uprobe_inherit *u = NULL;
	int err = 0;

	*out = NULL;
	if (!uprobe_inherit__supported())
		return -EOPNOTSUPP;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_probes && !u; i++)
		if (probes[i]->offset == offset && probes[i]->retprobe == retprobe &&
		    !strcmp(probes[i]->path, path))
			u = probes[i];
	if (!u) {
		u = calloc(1, sizeof(*u));
		err = !u ? -ENOMEM : GROW(probes, n_probes, cap_probes, 8);
		if (!err) {
			u->path = strdup(path);
			u->offset = offset;
			u->retprobe = retprobe;
			err = u->path ? make_probe(u, prog, cookie) : -ENOMEM;
		}
		if (err) {
			if (u)
				free_probe(u);
			pthread_mutex_unlock(&lock);
			return err;
		}
		probes[n_probes++] = u;
	}
	u->refs++;
	pthread_mutex_unlock(&lock);
	*out = u;
	return 0;
}

int uprobe_inherit__open(struct uprobe_inherit *u, pid_t tid)
{
	return open_event(u->id, tid, true);
}

void uprobe_inherit__put(struct uprobe_inherit *u)
{
	if (!u)
		return;
	pthread_mutex_lock(&lock);
	if (--u->refs) {
		pthread_mutex_unlock(&lock);
		return;
	}
	for (size_t i = 0; i < n_probes; i++)
		if (probes[i] == u) {
			probes[i] = probes[--n_probes];
			break;
		}
	pthread_mutex_unlock(&lock);
	bpf_link__destroy(u->link);
	remove_event(u);
	free_probe(u);
}
