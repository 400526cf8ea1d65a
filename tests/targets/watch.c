/*
 * watch.c: globals written at known places with known values, and a
 * function to stop in (test_watch.py, test_break.py).
 *
 *   watch [--wait] writes    counter = 10, 20, 30, 40 in main, then 50 from
 *                            a second thread (in writer()); each write's
 *                            line is marked W1..W5
 *   watch [--wait] early     a thread made first (before "ready") writes
 *                            counter = 60 (W6) once main says go
 *   watch [--wait] forkexec  a child writes counter = 70 (W7) and execs
 *                            `watch writes`; the parent then writes 80 (W8)
 *   watch [--wait] types     neg = -5, ptr = &counter, letter = 'A', then
 *                            neg = 7 (each global's type shown its way)
 *   watch [--wait] calls N   tick(i, "tick") for i in 0..N-1, 1 ms apart
 *   watch [--wait] loop      tick() every 10 ms until killed
 *
 * --wait prints "ready PID" and waits for a line on stdin first.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#define NOINLINE __attribute__((noinline, noclone, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

volatile long counter = 1;
volatile unsigned short small_u16 = 7;
long spare[2];
volatile int neg;
void *volatile ptr;
volatile char letter = 'z';

NOINLINE void *writer(void *arg)
{
	BARRIER();
	counter = 50; /* W5 */
	return arg;
}

static volatile int go;

NOINLINE void *early_writer(void *arg)
{
	while (!go)
		usleep(1000);
	counter = 60; /* W6 */
	return arg;
}

NOINLINE int tick(int i, const char *name)
{
	BARRIER();
	printf("%s %d\n", name, i);
	return i * 2;
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "--wait");
	const char *what = argc > 1 + wait ? argv[1 + wait] : "writes";
	char line[16];

	pthread_t early;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(what, "early") && pthread_create(&early, NULL, early_writer, NULL))
		return 2;
	if (wait) {
		printf("ready %d\n", (int)getpid());
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	if (!strcmp(what, "writes")) {
		pthread_t t;

		counter = 10; /* W1 */
		counter = 20; /* W2 */
		small_u16 = 8;
		counter = 30; /* W3 */
		counter = 40; /* W4 */
		if (pthread_create(&t, NULL, writer, NULL) || pthread_join(t, NULL))
			return 2;
		printf("counter %ld\n", counter);
		return 0;
	}
	if (!strcmp(what, "early")) {
		go = 1;
		pthread_join(early, NULL);
		printf("counter %ld\n", counter);
		return 0;
	}
	if (!strcmp(what, "forkexec")) {
		pid_t child = fork();
		int st = 0;

		if (child == 0) {
			counter = 70; /* W7 */
			execl("/proc/self/exe", argv[0], "writes", (char *)NULL);
			_exit(127);
		}
		if (child < 0 || waitpid(child, &st, 0) != child || st)
			return 2;
		counter = 80; /* W8 */
		printf("counter %ld\n", counter);
		return 0;
	}
	if (!strcmp(what, "types")) {
		neg = -5;
		ptr = (void *)&counter;
		letter = 'A';
		neg = 7;
		printf("neg %d\n", neg);
		return 0;
	}
	if (!strcmp(what, "calls")) {
		int n = argc > 2 + wait ? atoi(argv[2 + wait]) : 1, sum = 0;

		for (int i = 0; i < n; i++) {
			sum += tick(i, "tick");
			usleep(1000);
		}
		printf("sum %d\n", sum);
		return 3;
	}
	if (!strcmp(what, "loop")) {
		for (int i = 0;; i++) {
			tick(i, "loop");
			usleep(10000);
		}
	}
	return 1;
}
