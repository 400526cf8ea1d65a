// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "launch.h"

/* The signals cmon handles or ignores itself, and whether cmon was
 * started with each ignored (launch__save_dispositions). */
static const int kept_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
static bool inherited_ign[sizeof(kept_signals) / sizeof(kept_signals[0])];

void launch__save_dispositions(void)
{
	for (size_t i = 0; i < sizeof(kept_signals) / sizeof(kept_signals[0]); i++) {
		struct sigaction sa;

		inherited_ign[i] = !sigaction(kept_signals[i], NULL, &sa) &&
				   sa.sa_handler == SIG_IGN;
	}
}

int launch__start(const char *path, char *const argv[], struct launch *l)
{
	int go[2] = { -1, -1 }, errp[2] = { -1, -1 };
	pid_t pid;
	int err;

	l->pid = -1;
	l->go_fd = l->err_fd = l->pidfd = -1;
	if (pipe2(go, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto fail;
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(errp[0]);
		/* The dispositions cmon was given: the program must behave as
		 * untraced (a job started with SIGINT ignored keeps it so). */
		for (size_t i = 0; i < sizeof(kept_signals) / sizeof(kept_signals[0]); i++)
			signal(kept_signals[i], inherited_ign[i] ? SIG_IGN : SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* cmon went away before attaching */
		if (l->own_group)
			setpgid(0, 0);
		close(go[0]);
		if (l->stop_at_exec && ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(127);
		execv(path, argv);
		e = errno;
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->err_fd = errp[0];
	l->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	return err;
}

int launch__release(struct launch *l)
{
	char c = 1;
	int e = 0;
	ssize_t n;

	if (l->ran_to) /* past its exec already: let it go */
		return launch__continue(l);
	if (write(l->go_fd, &c, 1) != 1)
		return -errno;
	close(l->go_fd);
	l->go_fd = -1;
	/* EOF (close-on-exec) means the exec went through. */
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		waitpid(l->pid, NULL, 0);
		l->pid = -1;
		return -e;
	}
	if (l->stop_at_exec) {
		int st = 0;
		pid_t r;

		/* The SIGTRAP stop after exec (ptrace stops report without
		 * WUNTRACED). */
		do
			r = waitpid(l->pid, &st, 0);
		while (r < 0 && errno == EINTR);
		if (r != l->pid)
			return -ECHILD;
		if (!WIFSTOPPED(st)) {
			l->pid = -1; /* it died during exec */
			return -ECHILD;
		}
		l->stopped = true;
	}
	return 0;
}

/* The file process PID runs now (malloc'd), NULL when unreadable. */
static char *exe_of(pid_t pid)
{
	char link[64], buf[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

int launch__run_to(struct launch *l, launch_target_fn is_target, void *ctx, char **exe)
{
	int err = launch__release(l), st = 0;

	*exe = NULL;
	if (err)
		return err;
	l->ran_to = true;
	if (ptrace(PTRACE_SETOPTIONS, l->pid, NULL, (void *)(uintptr_t)PTRACE_O_TRACEEXEC))
		return -errno;
	for (;;) {
		pid_t r;
		int sig = 0;

		free(*exe);
		*exe = exe_of(l->pid);
		if (*exe && is_target(ctx, *exe))
			return 0; /* held at its exec */
		if (ptrace(PTRACE_CONT, l->pid, NULL, NULL))
			return -errno;
		for (;;) {
			do
				r = waitpid(l->pid, &st, 0);
			while (r < 0 && errno == EINTR);
			if (r != l->pid)
				return -ECHILD;
			if (!WIFSTOPPED(st)) {
				l->stopped = false;
				l->pid = -1; /* it ended without running one */
				return -ENOENT;
			}
			if ((st >> 8) == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
				break;
			/* a signal of its own, given back */
			sig = WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st);
			if (ptrace(PTRACE_CONT, l->pid, NULL, (void *)(uintptr_t)sig))
				return -errno;
		}
	}
}

int launch__continue(struct launch *l)
{
	if (!l->stopped)
		return 0;
	l->stopped = false;
	if (ptrace(PTRACE_DETACH, l->pid, NULL, NULL))
		return -errno;
	return 0;
}

int launch__reap(struct launch *l, int *status, int block)
{
	pid_t r;

	if (l->pid <= 0)
		return 0;
	do
		r = waitpid(l->pid, status, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == l->pid) {
		l->pid = -1;
		return 1;
	}
	return 0;
}

void launch__abort(struct launch *l)
{
	if (l->stopped && l->pid > 0) {
		/* Held after exec and not to run: killed where it stands. */
		kill(l->pid, SIGKILL);
		ptrace(PTRACE_DETACH, l->pid, NULL, NULL);
		l->stopped = false;
	}
	if (l->go_fd >= 0) {
		/* Closing the pipe makes the waiting child exit by itself. */
		close(l->go_fd);
		l->go_fd = -1;
	}
	if (l->pid > 0) {
		waitpid(l->pid, NULL, 0);
		l->pid = -1;
	}
	launch__close(l);
}

void launch__close(struct launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	if (l->pidfd >= 0)
		close(l->pidfd);
	l->go_fd = l->err_fd = l->pidfd = -1;
}
