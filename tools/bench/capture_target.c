// Benchmark target for typed capture (tools/bench/bench_capture.sh): calls
// capture_fn(name, buf, 64) N times and prints the per-call cost, as
// target.c does.  With RATE, the calls are paced at RATE per second (busy
// waiting on the clock), to find the rate `cmon capture` sustains.
//
//   capture_target N [RATE]
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF_LEN 64

// Out of line, never cloned, and reading every byte it is given: gcc would
// otherwise drop the caller's stores into memory the callee does not read.
// The volatile stack slot gives it a frame (push %rbp, emulated by the
// kernel) with -fno-omit-frame-pointer, as target.c's bench_fn.
__attribute__((noinline, noclone, used)) long capture_fn(const char *name, const uint8_t *buf,
							  size_t len)
{
	volatile long sum = (unsigned char)name[0];

	for (size_t i = 0; i < len; i++)
		sum += buf[i];
	return sum;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char name[32];
	uint8_t buf[BUF_LEN];
	long n, acc = 0;
	double rate = 0, t0, elapsed;
	char *end;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s N [RATE]\n", argv[0]);
		return 2;
	}
	errno = 0;
	n = strtol(argv[1], &end, 10);
	if (errno || *end || n < 0) {
		fprintf(stderr, "bad N: %s\n", argv[1]);
		return 2;
	}
	if (argc == 3) {
		rate = strtod(argv[2], &end);
		if (*end || !(rate > 0)) {
			fprintf(stderr, "bad RATE: %s\n", argv[2]);
			return 2;
		}
	}
	strcpy(name, "GET /index.html");
	for (int i = 0; i < BUF_LEN; i++)
		buf[i] = (uint8_t)(i * 7);

	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		if (rate > 0)
			while (now_ns() - t0 < (double)i * 1e9 / rate)
				;
		buf[0] = (uint8_t)i;
		acc += capture_fn(name, buf, sizeof(buf));
	}
	elapsed = now_ns() - t0;
	printf("ns_per_call=%.1f calls=%ld rate=%.0f acc=%ld\n", n ? elapsed / (double)n : 0.0, n,
	       elapsed > 0 ? (double)n * 1e9 / elapsed : 0.0, acc);
	return 0;
}
