// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_budget.c: the overhead budget (agg/budget.h): what a budget may be,
 * the fractions water filling gives (the cheapest whole, the rest cut to
 * one level, the total at the budget), when a change is worth making, the
 * rate a meter reads, and how a duty-cycled row's counts are scaled.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "agg/budget.h"

static void test_parse(void **state)
{
	const char *why = NULL;
	double v = 0;

	assert_int_equal(budget__parse("1%", &v, &why), 0);
	assert_true(v == 0.01);
	assert_int_equal(budget__parse("0.5%", &v, &why), 0);
	assert_true(v == 0.005);
	assert_int_equal(budget__parse("100%", &v, &why), 0);
	assert_true(v == 1);
	static const char *const bad[] = { "1", "1 %", "%", "-1%", "x%", "1%%", "", "nan%",
					   "0x1%", "1e400%" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(budget__parse(bad[i], &v, &why), -EINVAL);
		assert_string_equal(why, "a budget is a percentage of one CPU: 0.5%, 1%, 100%");
	}
	assert_int_equal(budget__parse("0%", &v, &why), -EINVAL);
	assert_string_equal(why, "a budget of 0 % leaves no probe: more than 0 %");
	assert_int_equal(budget__parse("100.5%", &v, &why), -EINVAL);
	assert_string_equal(why, "a budget is at most 100 % (one CPU)");
}

static void test_share_under(void **state)
{
	struct budget_unit u[3] = { { .cpu = 0.002 }, { .cpu = 0.003 }, { .cpu = 0.004 } };

	assert_true(fabs(budget__share(u, 3, 0.01) - 0.009) < 1e-12);
	for (int i = 0; i < 3; i++)
		assert_true(u[i].fraction == 1);
}

/* 1 % over three functions of 0.2 %, 4 % and 20 %: the first stays whole,
 * the other two are cut to 0.4 % each (0.2 + 0.4 + 0.4 = 1). */
static void test_share_over(void **state)
{
	struct budget_unit u[3] = { { .cpu = 0.20 }, { .cpu = 0.002 }, { .cpu = 0.04 } };

	assert_true(fabs(budget__share(u, 3, 0.01) - 0.01) < 1e-12);
	assert_true(u[1].fraction == 1);
	assert_true(fabs(u[2].fraction - 0.1) < 1e-12);
	assert_true(fabs(u[0].fraction - 0.02) < 1e-12);
	/* one hot function alone: 20 % into 1 % */
	struct budget_unit one = { .cpu = 0.2 };
	assert_true(fabs(budget__share(&one, 1, 0.01) - 0.01) < 1e-12);
	assert_true(fabs(one.fraction - 0.05) < 1e-12);
}

/* Past the least fraction the budget is not kept, and the cost says so. */
static void test_share_floor(void **state)
{
	struct budget_unit u = { .cpu = 50 }; /* 50 CPUs' worth */

	assert_true(fabs(budget__share(&u, 1, 0.01) - 50 * BUDGET_MIN_FRACTION) < 1e-12);
	assert_true(u.fraction == BUDGET_MIN_FRACTION);
}

static void test_changed(void **state)
{
	assert_false(budget__changed(1, 1));
	assert_true(budget__changed(1, 0.5));
	assert_true(budget__changed(0.5, 1));
	assert_false(budget__changed(0.05, 0.052));
	assert_true(budget__changed(0.05, 0.045));
}

static void test_meter(void **state)
{
	struct budget_meter m = {};

	budget_meter__update(&m, 100, 0);
	assert_false(m.have);
	budget_meter__update(&m, 200, 10 * 1000000ull); /* 10 ms: too little */
	assert_false(m.have);
	budget_meter__update(&m, 1100, 100 * 1000000ull); /* 1000 calls in 100 ms */
	assert_true(m.have);
	assert_true(fabs(m.rate - 10000) < 1e-6);
	budget_meter__update(&m, 1100 + 3000, 200 * 1000000ull); /* 30000/s: averaged */
	assert_true(fabs(m.rate - 20000) < 1e-6);
	budget_meter__update(&m, 5, 1); /* counters restarted: begins again */
	assert_true(m.seen == 5 && m.attached_ns == 1);
}

#define MS 1000000ull

static void update(struct budget_scale *s, uint64_t calls, uint64_t att_ms, uint64_t el_ms,
		   bool final)
{
	uint64_t seen[BUDGET_SCALE_N] = { calls, 0 };

	budget_scale__update(s, seen, att_ms * MS, el_ms * MS, final);
}

/* A row's estimate: whole counts as seen; a window's scaled by its
 * stretch's elapsed / attached; calls read with no attached time since
 * wait for the next window (scaled alone, they spent the stretch's time on
 * a few calls: 2,400 below instead of 3,400); at the end, the run's ratio. */
static void test_scale(void **state)
{
	struct budget_scale s = {};

	update(&s, 50, 0, 0, false); /* never cycled */
	assert_true(s.est[0] == 50);
	s = (struct budget_scale){};
	update(&s, 100, 10, 100, false); /* 100 calls in 10 ms of 100 */
	assert_true(fabs(s.est[0] - 1000) < 1e-9);
	update(&s, 120, 10, 200, false); /* 20 late calls, no window since */
	assert_true(fabs(s.est[0] - 1000) < 1e-9);
	assert_true(s.seen[0] == 100 && s.elapsed_ns == 100 * MS);
	update(&s, 220, 20, 300, false); /* the next window: 120 over 10 ms of 200 */
	assert_true(fabs(s.est[0] - 3400) < 1e-9);
	update(&s, 220, 20, 350, false); /* nothing: nothing added */
	assert_true(fabs(s.est[0] - 3400) < 1e-9);
	update(&s, 230, 20, 400, true); /* final: 10 at the run's 400 / 20 */
	assert_true(fabs(s.est[0] - 3600) < 1e-9);
	/* filtered scaled alike */
	struct budget_scale f = {};
	uint64_t seen[BUDGET_SCALE_N] = { 10, 4 };

	budget_scale__update(&f, seen, 5 * MS, 50 * MS, false);
	assert_true(fabs(f.est[0] - 100) < 1e-9 && fabs(f.est[1] - 40) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_share_under),
		cmocka_unit_test(test_share_over),
		cmocka_unit_test(test_share_floor),
		cmocka_unit_test(test_changed),
		cmocka_unit_test(test_meter),
		cmocka_unit_test(test_scale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
