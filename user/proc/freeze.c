// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* freeze.c: see freeze.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "core/grow.h"
#include "proc/freeze.h"
#include "proc/procmaps.h"

bool freeze__all_stopped(pid_t pid)
{
	char path[300], buf[512], *q;
	struct dirent *de;
	bool all = true;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (all && (de = readdir(dir))) {
		ssize_t n;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* gone */
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		q = strrchr(buf, ')');
		all = !q || q[1] != ' ' || q[2] == 'T' || q[2] == 't' || q[2] == 'Z' || q[2] == 'X';
	}
	closedir(dir);
	return all;
}

static bool seized(const struct freeze *fz, pid_t tid)
{
	for (size_t i = 0; i < fz->n; i++)
		if (fz->tids[i] == tid)
			return true;
	return false;
}

/* Stop one more thread; 1 when it was stopped, 0 gone, -errno. */
static int seize_thread(struct freeze *fz, pid_t tid)
{
	int status = 0, sig = 0;
	size_t cap_sigs = fz->cap; /* sigs beside tids: the same capacity */

	if (GROW(fz->sigs, fz->n, cap_sigs, 16) || GROW(fz->tids, fz->n, fz->cap, 16))
		return -ENOMEM;
	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return errno == ESRCH ? 0 : -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return errno == ESRCH ? 0 : -errno;
	}
	for (;;) {
		pid_t w = waitpid(tid, &status, __WALL);

		if (w == tid)
			break;
		if (w < 0 && errno == EINTR)
			continue; /* SIGINT: cmon stops after the write, not inside it */
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0; /* it exited */
	/* a signal-delivery stop: the signal is the thread's, given back */
	if ((status >> 16) != PTRACE_EVENT_STOP && WSTOPSIG(status) != SIGTRAP)
		sig = WSTOPSIG(status);
	fz->tids[fz->n] = tid;
	fz->sigs[fz->n] = sig;
	fz->n++;
	return 1;
}

void freeze__thaw(struct freeze *fz)
{
	for (size_t i = 0; i < fz->n; i++)
		ptrace(PTRACE_DETACH, fz->tids[i], 0, (void *)(uintptr_t)fz->sigs[i]);
	if (fz->sigstop)
		kill(fz->pid, SIGCONT);
	free(fz->tids);
	free(fz->sigs);
	memset(fz, 0, sizeof(*fz));
}

/* Every thread of process PID stopped (LAUNCHED: cmon's child, by
 * SIGSTOP; else by ptrace).  0, or -errno with nothing left stopped. */
int freeze__stop(pid_t pid, bool launched, struct freeze *fz)
{
	bool more = true;
	int err = 0;

	memset(fz, 0, sizeof(*fz));
	fz->pid = pid;
	if (launched) {
		if (kill(pid, SIGSTOP))
			return -errno;
		fz->sigstop = true;
		for (int i = 0; i < 2000 && !freeze__all_stopped(pid); i++)
			usleep(500);
		if (freeze__all_stopped(pid))
			return 0;
		freeze__thaw(fz);
		return -ETIMEDOUT;
	}
	/* Threads made while seizing are seized by the next pass. */
	for (int pass = 0; more && !err && pass < 100; pass++) {
		char path[64];
		struct dirent *de;
		DIR *dir;

		more = false;
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		dir = opendir(path);
		if (!dir) {
			err = -errno;
			break;
		}
		while (!err && (de = readdir(dir))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			int r;

			if (tid <= 0 || seized(fz, tid))
				continue;
			r = seize_thread(fz, tid);
			if (r < 0)
				err = r;
			else if (r > 0)
				more = true;
		}
		closedir(dir);
	}
	if (err)
		freeze__thaw(fz);
	/* A process that has exited but is not reaped yet (a zombie) cannot
	 * be seized (EPERM): it is gone, as for the callers' ESRCH. */
	if (err == -EPERM) {
		char st = proc__stat(pid, 0, NULL);

		if (!st || st == 'Z' || st == 'X')
			err = -ESRCH;
	}
	return err;
}

