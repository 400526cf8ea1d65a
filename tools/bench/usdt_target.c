// Benchmark target for USDT probes: N firings of bench:tick(i, acc) in a
// loop, timed by the program itself (ns_per_call= as target.c prints).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/sdt.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	volatile long acc = 0;
	long n;

	if (argc != 2 || (n = strtol(argv[1], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		acc += i;
		DTRACE_PROBE2(bench, tick, i, acc);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_call=%.1f calls=%ld\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n, n);
	return 0;
}
