/*
 * compare.h: two runs' samples of one quantity (a function's latencies):
 * their percentiles, and whether they differ beyond the noise, by the
 * Mann-Whitney rank test (no assumption on the shape of the
 * distributions; latencies have long tails).
 */
#ifndef CMON_COMPARE_H
#define CMON_COMPARE_H
#include <stddef.h>
#include <stdint.h>

/* The nearest-rank P-quantile (0 < P <= 1) of the N (>= 1) values V,
 * sorted ascending. */
uint64_t compare__quantile(const uint64_t *v, size_t n, double p);

/* Sort V[0..N) ascending. */
void compare__sort(uint64_t *v, size_t n);

/* The two-sided p-value of the rank test of A[0..NA) against B[0..NB)
 * (both sorted ascending), by the normal approximation with the
 * correction for ties: 1 when every value is equal; NAN when a side has
 * no value. */
double compare__rank_test(const uint64_t *a, size_t na, const uint64_t *b, size_t nb);

#endif
