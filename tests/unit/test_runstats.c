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
	const double v[] = { 1.0000, 1.0001, 1.0002 };
	struct runstats rs;

	(void)state;
	runstats__compute(v, 3, false, 15.95, &rs);
	assert_int_equal(rs.n, 3);
	assert_true(fabs(rs.mean - 1.0001) < 1e-12);
	assert_true(fabs(rs.sd - 1e-4) < 1e-12);
	assert_true(rs.min == 1.0 && rs.max == 1.0002);
	assert_true(fabs(rs.digits - 4.0000434) < 1e-5); /* -log10(1e-4 / 1.0001) */
}

static void test_identical_zero_and_caps(void **state)
{
	const double same[] = { 2.5, 2.5 }, around0[] = { -1, 1 }, one[] = { 7 };
	const double tiny[] = { 1.0, 1.0 + 1e-15 };
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
	const double wide[] = { 1, 100 };
	runstats__compute(wide, 2, false, 15.95, &rs);
	assert_true(rs.digits == 0);
	/* spread exactly the mean: -log10(1) is -0.0, printed "-0.00" */
	const double unit[] = { -6, -3, 0 };
	runstats__compute(unit, 3, false, 15.95, &rs);
	assert_true(rs.digits == 0 && !signbit(rs.digits));
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
		cmocka_unit_test(test_type_digits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
