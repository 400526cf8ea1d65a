/*
 * busy.c: a ~5 us busy function behind entry points of every probe-site
 * class, for the latency-calibration tests (test_latency.py).
 *
 *   busy N      calls each entry point N times, interleaved, and prints, per
 *               entry point, the median time of a call as its caller saw it
 *               ("busy_ss p50=5012"); untraced, that is the function's own.
 *   busy threads T N
 *               T threads each call quick_fp(t, i) for i = 0 .. N-1 as fast as
 *               they can (quick_fp starts with push %rbp: the cheapest probe,
 *               so the most records per second); prints the sum.
 *
 * The entry points are written in assembly so that their first instruction
 * is exactly the class wanted, whatever the compiler: an ordinary
 * instruction (single-stepped), push %rbp (emulated), endbr64 then push
 * %rbp (cmon probes past the endbr64), and a 5-byte nop (optimized).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* A single-stepped entry with no step probe (nine single-stepped
 * instructions before the first cheap one: beyond the step planner's
 * reach) calling an emulated one: their spans must nest (test_latency.py).
 *   busy nest N    nest_outer(i) for i < N */
__asm__(".text\n"
	".globl nest_inner\n.type nest_inner, @function\n.p2align 4\nnest_inner:\n"
	" push %rbp\n mov %rsp, %rbp\n call spin_5us\n pop %rbp\n ret\n"
	".size nest_inner, . - nest_inner\n"
	".globl nest_outer\n.type nest_outer, @function\n.p2align 4\nnest_outer:\n"
	" lea (%rdi), %rdi\n lea (%rdi), %rdi\n lea (%rdi), %rdi\n lea (%rdi), %rdi\n"
	" lea (%rdi), %rdi\n lea (%rdi), %rdi\n lea (%rdi), %rdi\n lea (%rdi), %rdi\n"
	" lea (%rdi), %rdi\n push %rbp\n mov %rsp, %rbp\n call nest_inner\n pop %rbp\n ret\n"
	".size nest_outer, . - nest_outer\n");
long nest_outer(long);

/* An emulated entry around a traced single-stepped one: the callee's
 * probes (~15 us here) run inside the caller's latency.
 *   busy wrap N    wrap_fp(i) for i < N; prints its p50 as timed here */
__asm__(".text\n"
	".globl wrap_fp\n.type wrap_fp, @function\n.p2align 4\nwrap_fp:\n"
	" push %rbp\n mov %rsp, %rbp\n call busy_ss\n pop %rbp\n ret\n"
	".size wrap_fp, . - wrap_fp\n");
long wrap_fp(long);

/* In C (typed from DWARF, as most traced code is), with a frame so that it
 * starts with push %rbp. */
__attribute__((noinline, used, optimize("no-omit-frame-pointer"))) long quick_fp(long t, long i)
{
	volatile long sum = t + i; /* a stack slot: gcc gives the function a frame */

	return sum;
}

static long per_thread;

static void *quick_thread(void *arg)
{
	long t = (long)arg, sum = 0;

	for (long i = 0; i < per_thread; i++)
		sum += quick_fp(t, i);
	return (void *)sum;
}

static int threads(int argc, char **argv)
{
	long n = argc == 4 ? atol(argv[2]) : 0, total = 0;
	pthread_t th[64];

	per_thread = argc == 4 ? atol(argv[3]) : 0;
	if (n <= 0 || n > 64 || per_thread <= 0) {
		fprintf(stderr, "usage: busy threads T N\n");
		return 2;
	}
	for (long t = 0; t < n; t++)
		if (pthread_create(&th[t], NULL, quick_thread, (void *)t))
			return 1;
	for (long t = 0; t < n; t++) {
		void *r;

		pthread_join(th[t], &r);
		total += (long)r;
	}
	printf("threads=%ld total=%ld\n", n, total);
	return 0;
}

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

	if (argc > 1 && !strcmp(argv[1], "threads"))
		return threads(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "nest")) {
		for (long i = 0; i < atol(argv[2]); i++)
			acc += nest_outer(i);
		printf("nest %ld\n", acc);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "wrap")) {
		long m = atol(argv[2]);
		long long *w = calloc(m > 0 ? (size_t)m : 1, sizeof(long long));

		if (!w || m <= 0)
			return 2;
		for (long i = 0; i < m; i++) {
			long long t0 = now_ns();

			acc += wrap_fp(i);
			w[i] = now_ns() - t0;
		}
		qsort(w, (size_t)m, sizeof(long long), cmp_ll);
		printf("wrap_fp p50=%lld\n", w[m / 2]);
		free(w);
		return acc == 0;
	}
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
