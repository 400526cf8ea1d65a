/*
 * busy.c: a ~5 us busy function behind entry points of every probe-site
 * class, for the latency-calibration tests (test_latency.py).
 *
 *   busy N      calls each entry point N times, interleaved, and prints, per
 *               entry point, the median time of a call as its caller saw it
 *               ("busy_ss p50=5012"); untraced, that is the function's own.
 *
 * The entry points are written in assembly so that their first instruction
 * is exactly the class wanted, whatever the compiler: an ordinary
 * instruction (single-stepped), push %rbp (emulated), endbr64 then push
 * %rbp (cmon probes past the endbr64), and a 5-byte nop (optimized).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BUSY_NS 5000

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spin for BUSY_NS: the same work whatever the probes cost around it. */
__attribute__((noinline, used)) long spin_5us(long x)
{
	long long t0 = now_ns();

	while (now_ns() - t0 < BUSY_NS)
		x++;
	return x;
}

#define ENTRY(name, first)                                                   \
	".globl " #name "\n.type " #name ", @function\n.p2align 4\n" #name ":\n" \
	first " push %rbp\n mov %rsp, %rbp\n call spin_5us\n pop %rbp\n ret\n" \
	".size " #name ", . - " #name "\n"

__asm__(".text\n"
	ENTRY(busy_ss, " lea (%rdi), %rdi\n")
	ENTRY(busy_fp, "")
	ENTRY(busy_cet, " endbr64\n")
	ENTRY(busy_nop5, " .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"));

long busy_ss(long), busy_fp(long), busy_cet(long), busy_nop5(long);

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "busy_ss", "busy_fp", "busy_cet", "busy_nop5" };
	long (*const fns[])(long) = { busy_ss, busy_fp, busy_cet, busy_nop5 };
	long n = argc == 2 ? atol(argv[1]) : 0, acc = 0;
	long long *t[4];

	if (argc != 2 || n <= 0) {
		fprintf(stderr, "usage: busy N\n");
		return 2;
	}
	for (int f = 0; f < 4; f++) {
		t[f] = calloc((size_t)n, sizeof(long long));
		if (!t[f])
			return 1;
	}
	for (long i = 0; i < n; i++) {
		for (int f = 0; f < 4; f++) {
			long long t0 = now_ns();

			acc += fns[f](i);
			t[f][i] = now_ns() - t0;
		}
	}
	for (int f = 0; f < 4; f++) {
		qsort(t[f], (size_t)n, sizeof(long long), cmp_ll);
		printf("%s p50=%lld\n", names[f], t[f][n / 2]);
		free(t[f]);
	}
	return acc == 0; /* acc is never 0: keeps the calls */
}
