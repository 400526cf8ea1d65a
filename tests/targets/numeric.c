/*
 * numeric.c: a computation whose inputs differ between runs in a known digit,
 * for `cmon stats` (test_stats.py).
 *
 *   numeric [DELTA [CALLS]]   (DELTA also from CMON_NUMERIC_DELTA)
 *
 * calls compute_step(&s, vals, 3) CALLS (3) times (k = 0, 1, 2...) with
 *   s.x    = 3.0 + k + DELTA        (double, in memory: a struct member)
 *   s.f    = (float)(0.5 + k)       (float, the same in every run)
 *   s.n    = 10 * k                 (int)
 *   s.tag  = UINT64_MAX - k - DELTA * 1e4   (uint64 above INT64_MAX: JSON
 *                                    a parser may refuse; 0, 1, 2 lower by run)
 *   vals[] = { 1.0 + DELTA, 2.0, 4.0 * (k + 1) }
 * and compute_step returns s.n + n, the same in every run.  Running it with DELTA 0,
 * 1e-4, 2e-4 makes s.x and vals[0] differ in their 4th-5th digit and leaves
 * everything else identical.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone, used))

struct sample {
	double x;
	float f;
	int n;
	unsigned long long tag;
};

NOINLINE long compute_step(const struct sample *s, const double *vals, int n)
{
	double acc = s->x + s->f;

	for (int i = 0; i < n; i++)
		acc += vals[i];
	__asm__ volatile("" : : "g"(acc) : "memory");
	return s->n + n;
}

int main(int argc, char **argv)
{
	const char *env = getenv("CMON_NUMERIC_DELTA");
	double delta = argc > 1 ? atof(argv[1]) : env ? atof(env) : 0.0;
	int calls = argc > 2 ? atoi(argv[2]) : 3;
	long total = 0;

	for (int k = 0; k < calls; k++) {
		struct sample s = { 3.0 + k + delta, (float)(0.5 + k), 10 * k,
				    ~0ull - (unsigned long long)k -
					    (unsigned long long)(delta * 1e4 + 0.5) };
		double vals[3] = { 1.0 + delta, 2.0, 4.0 * (k + 1) };

		total += compute_step(&s, vals, 3);
	}
	printf("numeric total=%ld\n", total);
	return 0;
}
