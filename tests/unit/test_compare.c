// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for agg/compare.c: quantiles and the rank test behind
 * `cmon diff`. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "agg/compare.h"

static void test_quantile(void **state)
{
	uint64_t v[] = { 5, 1, 4, 2, 3, 10, 9, 8, 7, 6 };

	compare__sort(v, 10);
	assert_int_equal(v[0], 1);
	assert_int_equal(v[9], 10);
	assert_int_equal(compare__quantile(v, 10, 0.5), 5);
	assert_int_equal(compare__quantile(v, 10, 0.9), 9);
	assert_int_equal(compare__quantile(v, 10, 0.99), 10);
	assert_int_equal(compare__quantile(v, 1, 0.5), 1);
}

/* Two-sided p-values of the asymptotic test with the continuity
 * correction (as scipy.stats.mannwhitneyu(method="asymptotic") gives). */
static void test_rank_test(void **state)
{
	uint64_t a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };
	uint64_t c[] = { 1, 3, 5, 7, 9 }, d[] = { 2, 4, 6, 8, 10 };
	uint64_t e[] = { 1, 2, 2, 3 }, f[] = { 2, 3, 3, 4, 5 };
	uint64_t s[] = { 7, 7, 7 };

	/* apart: U = 0, z = (12.5 - 0.5) / sqrt(22.9167) */
	assert_float_equal(compare__rank_test(a, 5, b, 5), 0.0122, 0.0001);
	/* interleaved: U = 10, mu 12.5 */
	assert_float_equal(compare__rank_test(c, 5, d, 5), 0.6761, 0.0001);
	/* ties */
	assert_float_equal(compare__rank_test(e, 4, f, 5), 0.0993, 0.0001);
	assert_float_equal(compare__rank_test(s, 3, s, 3), 1.0, 1e-12);
	assert_true(isnan(compare__rank_test(a, 0, b, 5)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_rank_test),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
