// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * forks: processes that fork, for cmon's --follow tests (test_forks.py).
 *
 *   forks fork     spawn() forks (a call in progress in both processes);
 *                  the child calls f(200..204), the parent waits for it,
 *                  then calls f(100..102)
 *   forks daemon   double fork + setsid: the parent exits first, the
 *                  daemon calls f(300..302) 300 ms later
 *   forks exec     the child calls f(7) and execs /bin/true; the parent f(8)
 *   forks texec    a second thread enters g(5), which execs /bin/true
 *   forks libc     the child calls getppid() 3 times 200 ms after the fork,
 *                  the parent twice after waiting
 *   forks focusfork  forker() forks: the child calls f(400..402) in it,
 *                  returns from it and calls f(500); the parent waits in
 *                  it, then calls f(100..102)
 *   forks --wait MODE   print "ready PID", wait for a line on stdin, run MODE
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
		int pid = fork();

		if (!pid) {
			setsid();
			if (fork())
				_exit(0); /* the first child: gone at once */
			usleep(300 * 1000);
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
			usleep(200 * 1000);
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

int main(int argc, char **argv)
{
	char line[16];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "--wait")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		return run(argv[2]);
	}
	if (argc != 2) {
		fprintf(stderr, "usage: forks MODE\n");
		return 2;
	}
	return run(argv[1]);
}
