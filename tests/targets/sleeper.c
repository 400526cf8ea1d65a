/*
 * sleeper.c: calls whose number and duration the profile tests know.
 *
 *   sleeper [--wait] SCENARIO [ARGS]
 *
 *   naps           nap(1000) x 100, nap(2000) x 100, nap(5000) x 50, interleaved;
 *                  prints the durations it measured around each call
 *                  ("naps n=250 min=.. p50=.. p90=.. p99=.. max=.." in ns)
 *   count N        count_me(i) for i = 0 .. N-1
 *   loop MS N      nap(MS * 1000) N times, then count_me(0)
 *   paced K TICKS  every millisecond (on an absolute clock: a late tick is
 *                  caught up, so the rate holds), count_me K times, and
 *                  every tenth tick() once; TICKS ticks.  Prints "paced
 *                  count_me=N tick=M" (the budget tests: one hot function
 *                  at a steady rate, one cold)
 *   hold MS        nap(MS * 1000), then wait for a line on stdin, then nap
 *                  once more: what cmon wrote before the line it wrote
 *                  while the program ran
 *
 * --wait prints "ready PID" and waits for a line on stdin first (the test
 * attaches in between).  Functions are noinline and global so they stay in
 * .symtab.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

NOINLINE int nap(long usec)
{
	struct timespec ts = { .tv_sec = usec / 1000000, .tv_nsec = (usec % 1000000) * 1000 };

	while (nanosleep(&ts, &ts))
		;
	return 0;
}

NOINLINE int count_me(int i)
{
	BARRIER();
	return i + 1;
}

NOINLINE int tick(int i)
{
	BARRIER();
	return i;
}

static int paced(int k, int ticks)
{
	struct timespec at;
	long long n = 0;
	int cold = 0;

	clock_gettime(CLOCK_MONOTONIC, &at);
	for (int t = 0; t < ticks; t++) {
		at.tv_nsec += 1000000;
		if (at.tv_nsec >= 1000000000) {
			at.tv_nsec -= 1000000000;
			at.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
			;
		for (int i = 0; i < k; i++)
			n += count_me(i) > 0;
		if (t % 10 == 9)
			cold += tick(t) > 0;
	}
	printf("paced count_me=%lld tick=%d\n", n, cold);
	return 0;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank, as cmon's percentiles. */
static long long pct(const long long *v, int n, int permille)
{
	int rank = (int)(((long long)permille * n + 999) / 1000);

	return v[(rank < 1 ? 1 : rank) - 1];
}

static int naps(void)
{
	enum { N = 250 };
	long long took[N];
	int k = 0;

	/* Interleaved so that no phase of the run skews one group. */
	for (int i = 0; i < 50; i++) {
		static const long pattern[] = { 1000, 2000, 1000, 2000, 5000 };

		for (int j = 0; j < 5; j++) {
			long long t0 = now_ns();

			nap(pattern[j]);
			took[k++] = now_ns() - t0;
		}
	}
	qsort(took, N, sizeof(took[0]), cmp_ll);
	printf("naps n=%d min=%lld p50=%lld p90=%lld p99=%lld max=%lld\n", N, took[0],
	       pct(took, N, 500), pct(took, N, 900), pct(took, N, 990), took[N - 1]);
	return 0;
}

static int run(int argc, char **argv)
{
	long sum = 0;

	if (argc >= 1 && !strcmp(argv[0], "naps"))
		return naps();
	if (argc >= 2 && !strcmp(argv[0], "count")) {
		int n = atoi(argv[1]);

		for (int i = 0; i < n; i++)
			sum += count_me(i);
		printf("count n=%d sum=%ld\n", n, sum);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[0], "loop")) {
		long ms = atol(argv[1]);
		int n = atoi(argv[2]);

		for (int i = 0; i < n; i++)
			nap(ms * 1000);
		printf("loop n=%d count_me=%d\n", n, count_me(0));
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[0], "paced"))
		return paced(atoi(argv[1]), atoi(argv[2]));
	if (argc >= 2 && !strcmp(argv[0], "hold")) {
		char line[64];

		nap(atol(argv[1]) * 1000);
		if (!fgets(line, sizeof(line), stdin))
			return 3;
		nap(atol(argv[1]) * 1000);
		printf("hold done\n");
		return 0;
	}
	fprintf(stderr, "usage: sleeper [--wait] naps | count N | loop MS N | hold MS | paced K TICKS\n");
	return 2;
}

int main(int argc, char **argv)
{
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--wait")) {
		printf("ready %d\n", getpid());
		if (!fgets(line, sizeof(line), stdin))
			return 3;
		return run(argc - 2, argv + 2);
	}
	return run(argc - 1, argv + 1);
}
