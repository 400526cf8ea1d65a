/* test_runstats.c: statistics over runs and significant digits (cmon stats). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>
#include "agg/runstats.h"

/* The README's worked example: 1.0000, 1.0001, 1.0002. */
static void test_worked_example(void **state)
{
	const long double v[] = { 1.0000, 1.0001, 1.0002 };
	struct runstats rs;

	(void)state;
	runstats__compute(v, 3, false, 15.95, &rs);
	assert_int_equal(rs.n, 3);
	assert_true(fabsl(rs.mean - 1.0001) < 1e-12);
	assert_true(fabsl(rs.sd - 1e-4) < 1e-12);
	assert_true(rs.min == 1.0L && rs.max == (long double)1.0002);
	assert_true(fabs(rs.digits - 4.0000434) < 1e-5); /* -log10(1e-4 / 1.0001) */
}

static void test_identical_zero_and_caps(void **state)
{
	const long double same[] = { 2.5, 2.5 }, around0[] = { -1, 1 }, one[] = { 7 };
	const long double tiny[] = { 1.0, 1.0 + 1e-15 };
	struct runstats rs;

	(void)state;
	runstats__compute(same, 2, true, 15.95, &rs);
	assert_true(rs.digits == RUNSTATS_ALL);
	runstats__compute(around0, 2, false, 15.95, &rs);
	assert_true(rs.mean == 0 && rs.digits == 0);
	runstats__compute(one, 1, true, 15.95, &rs);
	assert_true(rs.digits == RUNSTATS_NA);
	/* float: capped at 7.22 digits even when the spread says more */
	runstats__compute(tiny, 2, false, runstats__type_digits("float", false), &rs);
	assert_true(fabs(rs.digits - 24 * log10(2.0)) < 1e-9);
	/* spread larger than the mean: 0, never negative */
	const long double wide[] = { 1, 100 };
	runstats__compute(wide, 2, false, 15.95, &rs);
	assert_true(rs.digits == 0);
	/* spread exactly the mean: -log10(1) is -0.0, printed "-0.00" */
	const long double unit[] = { -6, -3, 0 };
	runstats__compute(unit, 3, false, 15.95, &rs);
	assert_true(rs.digits == 0 && !signbit(rs.digits));
}

/* The worked example at 1e-300 and 1e300 (squares of the spread
 * underflowed and overflowed in double: 15.95 and 0 digits), and 64-bit
 * integers past 2^53 (std 100, not 202.4). */
static void test_extremes(void **state)
{
	const long double small[] = { 1e-300, 1.0001e-300, 1.0002e-300 };
	const long double big[] = { 1e300, 1.0001e300, 1.0002e300 };
	const long double ints[] = { 1000000000000000000.0L, 1000000000000000100.0L,
				     1000000000000000200.0L };
	struct runstats rs;

	(void)state;
	runstats__compute(small, 3, false, 15.95, &rs);
	assert_true(fabs(rs.digits - 4.0000434) < 1e-5);
	runstats__compute(big, 3, false, 15.95, &rs);
	assert_true(fabs(rs.digits - 4.0000434) < 1e-5);
	runstats__compute(ints, 3, false, 19.27, &rs);
	assert_true(rs.sd == 100 && rs.min == ints[0] && rs.max == ints[2]);
	assert_true(fabs(rs.digits - 16) < 1e-9);
	/* near 2^64, where the values' own sum is not exact */
	const long double top[] = { 18446744073709551615.0L, 18446744073709551614.0L,
				    18446744073709551613.0L };
	runstats__compute(top, 3, false, 19.27, &rs);
	assert_true(rs.sd == 1 && rs.mean == top[1]);
}

static void test_type_digits(void **state)
{
	(void)state;
	assert_true(fabs(runstats__type_digits("const double", false) - 15.9546) < 1e-3);
	assert_true(fabs(runstats__type_digits("float", false) - 7.2247) < 1e-3);
	assert_true(fabs(runstats__type_digits("<f4", false) - 7.2247) < 1e-3);
	assert_true(fabs(runstats__type_digits("<i4", true) - 9.3319) < 1e-3);
	assert_true(fabs(runstats__type_digits("int", true) - 9.6330) < 1e-3);
	assert_true(fabs(runstats__type_digits("uint16_t", true) - 4.8165) < 1e-3);
	assert_true(fabs(runstats__type_digits(NULL, true) - 19.2659) < 1e-3);
	assert_true(fabs(runstats__type_digits(NULL, false) - 15.9546) < 1e-3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_identical_zero_and_caps),
		cmocka_unit_test(test_extremes),
		cmocka_unit_test(test_type_digits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
