// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * forks: processes that fork, for cmon's --follow tests (test_forks.py).
 *
 *   forks fork     spawn() forks (a call in progress in both processes);
 *                  the child calls f(200..204), the parent waits for it,
 *                  then calls f(100..102)
 *   forks daemon   double fork + setsid: the parent exits first, the
 *                  daemon calls f(300..302) once it has been reaped
 *   forks exec     the child calls f(7) and execs /bin/true; the parent f(8)
 *   forks texec    a second thread enters g(5), which execs /bin/true
 *   forks libc     the child calls getppid() 3 times, the parent twice after
 *                  waiting; with FORKS_WAIT_LINE=1 in the environment the
 *                  child first waits for a line on stdin (the test's cue:
 *                  the tracer has attached the child's library probes)
 *   forks focusfork  forker() forks: the child calls f(400..402) in it,
 *                  returns from it and calls f(500); the parent waits in
 *                  it, then calls f(100..102)
 *   forks short N  N children forked at once, child k calls ffs(1 << k)
 *                  (returns k + 1) once and exits at once: they end long
 *                  before a wide glob's library probes could be attached
 *                  to them; the parent reaps them all and prints "short N"
 *   forks --wait MODE   print "ready PID", wait for a line on stdin, run MODE
 *   forks --wait master two workers forked before "ready PID W1 W2" (before a
 *                  tracer attaches to the master); after the line each
 *                  calls f(400 + k) three times, the master none: it waits
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/wait.h>

__attribute__((noinline)) int f(int i)
{
	__asm__ volatile("" ::: "memory");
	return i * 2;
}

__attribute__((noinline)) int spawn(void)
{
	int pid = fork();

	__asm__ volatile("" ::: "memory");
	return pid;
}

__attribute__((noinline)) int g(int i)
{
	printf("thread %d execs\n", (int)gettid());
	fflush(stdout);
	execl("/bin/true", "true", (char *)NULL);
	return i;
}

static void *texec_thread(void *arg)
{
	(void)arg;
	g(5);
	return NULL;
}

static int wait_child(int pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		;
	return status;
}

/* Process PID has exited and its parent has reaped it (a tracer that
 * launched it has seen it end). */
static int reaped(int pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return access(path, F_OK) != 0;
}

/* Wait (a hang guard of 10 minutes) until COND holds: an order, not a time. */
#define WAIT_UNTIL(cond)                                        \
	for (int tries_ = 0; !(cond) && tries_ < 600 * 100; tries_++) \
		usleep(10 * 1000)


/* fork() inside it: the child calls f(400..402) before it returns. */
__attribute__((noinline)) int forker(void)
{
	int pid = fork(), sum = 0;

	if (!pid) {
		for (int i = 0; i < 3; i++)
			sum += f(400 + i);
		printf("child sum %d\n", sum);
		fflush(stdout);
		return 0;
	}
	if (pid > 0)
		wait_child(pid);
	return pid;
}

static int run(const char *mode)
{
	int sum = 0;

	if (!strcmp(mode, "fork")) {
		int pid = spawn();

		if (pid < 0)
			return 1;
		if (!pid) {
			for (int i = 0; i < 5; i++)
				sum += f(200 + i);
			printf("child sum %d\n", sum);
			exit(0);
		}
		wait_child(pid);
		for (int i = 0; i < 3; i++)
			sum += f(100 + i);
		printf("parent sum %d\n", sum);
		return 0;
	}
	if (!strcmp(mode, "focusfork")) {
		if (!forker()) {
			f(500);
			exit(0);
		}
		for (int i = 0; i < 3; i++)
			sum += f(100 + i);
		printf("parent sum %d\n", sum);
		return 0;
	}
	if (!strcmp(mode, "daemon")) {
		int parent = (int)getpid(), pid = fork();

		if (!pid) {
			setsid();
			if (fork())
				_exit(0); /* the first child: gone at once */
			WAIT_UNTIL(reaped(parent));
			for (int i = 0; i < 3; i++)
				sum += f(300 + i);
			printf("daemon sum %d\n", sum);
			exit(0);
		}
		wait_child(pid);
		printf("parent exits\n");
		return 0;
	}
	if (!strcmp(mode, "exec")) {
		int pid = fork();

		if (!pid) {
			f(7);
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		printf("child status %d\n", wait_child(pid));
		f(8);
		return 0;
	}
	if (!strcmp(mode, "texec")) {
		pthread_t t;

		pthread_create(&t, NULL, texec_thread, NULL);
		pthread_join(t, NULL); /* never: the exec ends the process's program */
		return 1;
	}
	if (!strcmp(mode, "libc")) {
		int pid = fork();

		if (!pid) {
			char line[16];

			if (getenv("FORKS_WAIT_LINE") && !fgets(line, sizeof(line), stdin))
				exit(1);
			for (int i = 0; i < 3; i++)
				sum += getppid() > 0;
			printf("child %d\n", sum);
			exit(0);
		}
		wait_child(pid);
		for (int i = 0; i < 2; i++)
			sum += getppid() > 0;
		printf("parent %d\n", sum);
		return 0;
	}
	fprintf(stderr, "forks: unknown mode %s\n", mode);
	return 2;
}

static int run_master(void)
{
	int go[2], pids[2], sum = 0;
	char line[16], c;

	if (pipe(go))
		return 1;
	for (int k = 0; k < 2; k++) {
		pids[k] = fork();
		if (pids[k] < 0)
			return 1;
		if (!pids[k]) {
			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(1);
			for (int i = 0; i < 3; i++)
				sum += f(400 + k);
			printf("worker %d\n", sum ? k : -1);
			_exit(0);
		}
	}
	close(go[0]);
	printf("ready %d %d %d\n", (int)getpid(), pids[0], pids[1]);
	if (!fgets(line, sizeof(line), stdin) || write(go[1], "gg", 2) != 2)
		return 1;
	for (int k = 0; k < 2; k++)
		wait_child(pids[k]);
	printf("master done\n");
	return 0;
}

/* Through a volatile pointer: the compiler may not fold ffs into an
 * instruction, the call goes to libc. */
static int (*volatile ffs_call)(int) = ffs;

static int run_short(int n)
{
	int done = 0;

	for (int k = 0; k < n; k++) {
		int pid = fork();

		if (pid < 0)
			return 1;
		if (!pid)
			_exit(ffs_call(1 << k) == k + 1 ? 0 : 1);
	}
	for (int k = 0; k < n; k++) {
		int status;

		if (wait(&status) > 0 && WIFEXITED(status) && !WEXITSTATUS(status))
			done++;
	}
	printf("short %d\n", done);
	return done == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	char line[16];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "--wait") && !strcmp(argv[2], "master"))
		return run_master();
	if (argc == 3 && !strcmp(argv[1], "--wait")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		return run(argv[2]);
	}
	if (argc == 3 && !strcmp(argv[1], "short"))
		return run_short(atoi(argv[2]));
	if (argc != 2) {
		fprintf(stderr, "usage: forks MODE\n");
		return 2;
	}
	return run(argv[1]);
}
