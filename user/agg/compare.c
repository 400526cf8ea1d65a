// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* compare.c: see compare.h. */
#include <math.h>
#include <stdlib.h>
#include "compare.h"

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

void compare__sort(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

uint64_t compare__quantile(const uint64_t *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n);

	return v[k ? k - 1 : 0];
}

double compare__rank_test(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	double n = (double)(na + nb), ra = 0, ties = 0, u, mu, var;
	size_t i = 0, j = 0, rank = 0; /* ranks given so far */

	if (!na || !nb)
		return NAN;
	/* Merge the two sorted sides; a run of equal values shares the mean
	 * of its ranks. */
	while (i < na || j < nb) {
		uint64_t x = j >= nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
		size_t in_a = 0, in_b = 0;
		double t, mean;

		while (i < na && a[i] == x) {
			i++;
			in_a++;
		}
		while (j < nb && b[j] == x) {
			j++;
			in_b++;
		}
		t = (double)(in_a + in_b);
		mean = (double)rank + (t + 1) / 2;
		ra += mean * (double)in_a;
		ties += t * t * t - t;
		rank += in_a + in_b;
	}
	u = ra - (double)na * ((double)na + 1) / 2;
	mu = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (var <= 0)
		return 1; /* every value equal */
	/* with the continuity correction */
	return erfc(fmax(fabs(u - mu) - 0.5, 0) / sqrt(var) / sqrt(2));
}
