// Benchmark target: calls bench_fn N times per thread and prints the
// per-call cost.  Built several ways (see bench.mk) so that bench_fn starts
// with an instruction the kernel single-steps, emulates, or optimizes.
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// Kept out of line and opaque so every call really happens: the probe target.
__attribute__((noinline)) long bench_fn(long a, long b)
{
	volatile long sum = a + b; // a stack slot, so a frame when asked for

	return sum;
}

static long calls_per_thread;

static void *worker(void *arg)
{
	long acc = 0;

	for (long i = 0; i < calls_per_thread; i++)
		acc = bench_fn(acc, i);
	*(long *)arg = acc;
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long threads = 1;
	char *end;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s N [THREADS]\n", argv[0]);
		return 2;
	}
	errno = 0;
	calls_per_thread = strtol(argv[1], &end, 10);
	if (errno || *end || calls_per_thread < 0) {
		fprintf(stderr, "bad N: %s\n", argv[1]);
		return 2;
	}
	if (argc == 3) {
		threads = strtol(argv[2], &end, 10);
		if (*end || threads < 1 || threads > 256) {
			fprintf(stderr, "bad THREADS: %s\n", argv[2]);
			return 2;
		}
	}

	pthread_t tid[256];
	long result[256];
	double t0 = now_ns();

	if (threads == 1) {
		worker(&result[0]);
	} else {
		for (long t = 0; t < threads; t++) {
			int err = pthread_create(&tid[t], NULL, worker, &result[t]);

			if (err) {
				fprintf(stderr, "pthread_create: error %d\n", err);
				return 1;
			}
		}
		for (long t = 0; t < threads; t++)
			pthread_join(tid[t], NULL);
	}

	double elapsed = now_ns() - t0;
	long total = calls_per_thread * threads;

	// Threads run concurrently, so the cost of one call is the wall time
	// divided by the calls of one thread.
	printf("ns_per_call=%.1f calls=%ld\n",
	       calls_per_thread ? elapsed / (double)calls_per_thread : 0.0, total);
	return 0;
}
