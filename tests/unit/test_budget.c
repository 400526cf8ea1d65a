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
#include "probe/duty.h"

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
	budget_meter__update(&m, 1100 + 3000, 200 * 1000000ull); /* 30000/s: taken at once */
	assert_true(fabs(m.rate - 30000) < 1e-6);
	budget_meter__update(&m, 4100 + 1000, 300 * 1000000ull); /* 10000/s: a quarter */
	assert_true(fabs(m.rate - 25000) < 1e-6);
	budget_meter__update(&m, 5100 + 3000, 400 * 1000000ull); /* 30000/s: under twice */
	assert_true(fabs(m.rate - 26250) < 1e-6);
	budget_meter__update(&m, 5, 1); /* counters restarted: begins again */
	assert_true(m.seen == 5 && m.attached_ns == 1);
}

#define MS 1000000ull

/* A row's estimate: what was seen since the last update times the scale
 * of now; a counter, whatever the scale does. */
static void test_scale(void **state)
{
	struct budget_scale s = {};
	uint64_t seen[BUDGET_SCALE_N] = { 50, 0 };

	budget_scale__update(&s, seen, 1); /* whole */
	assert_true(s.est[0] == 50);
	seen[0] = 150;
	seen[1] = 10;
	budget_scale__update(&s, seen, 10); /* 100 calls in windows of a tenth */
	assert_true(fabs(s.est[0] - 1050) < 1e-9 && fabs(s.est[1] - 100) < 1e-9);
	budget_scale__update(&s, seen, 12); /* nothing new: nothing added */
	assert_true(fabs(s.est[0] - 1050) < 1e-9);
	seen[0] = 160;
	budget_scale__update(&s, seen, 1); /* whole again */
	assert_true(fabs(s.est[0] - 1060) < 1e-9);
	seen[0] = 5;
	seen[1] = 0;
	budget_scale__update(&s, seen, 2); /* restarted counters: from there */
	assert_true(fabs(s.est[0] - 1060) < 1e-9 && s.seen[0] == 5);
	(void)state;
}


/* A window's attached time: its calls at the rate between its edges. */
static void test_window(void **state)
{
	/* Attach 0..2 ms (10 entries counted inside it, 0 before), detach
	 * 102..130 ms: 1000 calls in the clean 100 ms, 1020 in all (10 more
	 * inside the detach): the window held 102 ms of calls. */
	assert_int_equal(duty__window_ns(0, 2 * MS, 0, 10, 102 * MS, 130 * MS, 1010, 1020), 102 * MS);
	/* A burst: 10 clean calls, 1000 in all: no more than the edges allow. */
	assert_int_equal(duty__window_ns(0, 2 * MS, 0, 500, 102 * MS, 130 * MS, 510, 1000), 130 * MS);
	/* Too few calls to price: the edges' times. */
	assert_int_equal(duty__window_ns(0, 2 * MS, 0, 0, 102 * MS, 130 * MS, 3, 9), 100 * MS);
	/* Never less than the clean interval. */
	assert_int_equal(duty__window_ns(0, 2 * MS, 0, 0, 102 * MS, 130 * MS, 1000, 1000), 100 * MS);
	(void)state;
}

/* What was spent over the budget is paid back, nothing saved up. */
static void test_ledger(void **state)
{
	struct budget_ledger l = {};

	/* The first round: the budget. */
	assert_true(fabs(budget_ledger__round(&l, 0, 1000 * MS, 0.01) - 0.01) < 1e-12);
	/* 0.5 s at 10 % of a CPU (0.05 s spent, 0.005 allowed): a debt of
	 * 0.045 s, paid back over 3 s: 1.5 % less, down to the floor. */
	assert_true(fabs(budget_ledger__round(&l, 0.05, 1500 * MS, 0.01) - 0.005) < 1e-12);
	assert_true(fabs(l.debt - 0.045) < 1e-12);
	/* 1 s at nothing: 0.01 paid back; 0.035 left: 1 - 3.5/3 < floor. */
	budget_ledger__round(&l, 0, 2500 * MS, 0.01);
	assert_true(fabs(l.debt - 0.035) < 1e-12);
	/* 4 s at nothing: paid, and the unspent not saved. */
	assert_true(fabs(budget_ledger__round(&l, 0, 6500 * MS, 0.01) - 0.01) < 1e-12);
	assert_true(l.debt == 0);
	/* 0.3 % over for 1 s (0.013 spent): 0.003 owed, the budget less 0.1 %. */
	assert_true(fabs(budget_ledger__round(&l, 0.013, 7500 * MS, 0.01) - 0.009) < 1e-12);
	/* The first round bills the calls made before it (a process calling
	 * before the budget's first round: 0.2 s whole at 13 % of a CPU):
	 * all owed, 0.026 s, paid back from there. */
	struct budget_ledger first = {};

	assert_true(fabs(budget_ledger__round(&first, 0.026, 1000 * MS, 0.01) - 0.005) < 1e-12);
	assert_true(fabs(first.debt - 0.026) < 1e-12);
	(void)state;
}

/* Equal to 1e-9 of it (sums of products of ms and ns). */
#define eq_ns(x, want) assert_true(fabs((double)(x) - (want)) <= 1e-9 * fabs((double)(want)) + 1e-9)
#define eq_int(x, want) assert_int_equal(x, want)

/* A cycle of a duty-cycled function as probe/duty.c samples it: detached
 * 200 ms, attaching 10 ms, attached 15 ms (RATE calls a ms), detaching
 * 25 ms; the process spending BASE of a CPU and PER_CALL ns a call. */
static void cycle(struct budget_cost *c, double base, double per_call, double rate)
{
	static const double ms[4] = { 200, 10, 15, 25 };

	for (int k = 0; k < 4; k++) {
		double calls = k == 2 ? rate * ms[k] : 0;

		budget_cost__add(c, ms[k] * MS, base * ms[k] * MS + per_call * calls, calls);
	}
}

/* The cost of a call, from the process's CPU time over the stretches. */
static void test_cost_measured(void **state)
{
	struct budget_cost c = {};

	/* 2 % of a CPU its own, 7.2 us a call, 20 calls a ms (the bench's
	 * paced target): after 7 stretches not known, the calibration's
	 * 5.6 us; after 8 (two cycles) both found, exactly. */
	cycle(&c, 0.02, 7200, 20);
	budget_cost__add(&c, 200 * MS, 0.02 * 200 * MS, 0);
	budget_cost__add(&c, 10 * MS, 0.02 * 10 * MS, 0);
	budget_cost__add(&c, 15 * MS, 0.02 * 15 * MS + 7200 * 300, 300);
	eq_ns(c.per_call_ns, 0);
	eq_ns(budget_cost__price(&c, 5600), 5600);
	budget_cost__add(&c, 25 * MS, 0.02 * 25 * MS, 0);
	eq_ns(c.per_call_ns, 7200);
	assert_true(fabs(c.base - 0.02) < 1e-12);
	eq_ns(budget_cost__price(&c, 5600), 7200);
	/* No calibration: the measured one as it is. */
	eq_ns(budget_cost__price(&c, 0), 7200);
	(void)state;
}

/* Every stretch at one rate (a whole function): a and b not told apart. */
static void test_cost_one_rate(void **state)
{
	struct budget_cost c = {};

	for (int k = 0; k < 40; k++)
		budget_cost__add(&c, 250 * MS, 0.02 * 250 * MS + 7200 * 5000.0, 5000);
	eq_ns(c.per_call_ns, 0);
	eq_ns(budget_cost__price(&c, 5600), 5600);
	(void)state;
}

/* At most 4 times the calibration; under half of it, the calibration
 * (a CPU-bound process reads as free); none found below 0. */
static void test_cost_bounded(void **state)
{
	struct budget_cost hi = {}, lo = {}, neg = {};

	for (int k = 0; k < 2; k++) {
		cycle(&hi, 0.02, 30000, 20);
		cycle(&lo, 0.02, 1000, 20);
		/* CPU time that falls while calls are made: not a cost (a process
	 * busy all the time: its calls slowed, not its CPU time grown) */
		cycle(&neg, 0.02, -20, 20);
	}
	eq_ns(hi.per_call_ns, 30000);
	eq_ns(budget_cost__price(&hi, 5000), 20000);
	eq_ns(lo.per_call_ns, 1000);
	eq_ns(budget_cost__price(&lo, 5000), 5000);
	eq_ns(budget_cost__price(&lo, 1900), 1000);
	eq_ns(neg.per_call_ns, 0);
	eq_ns(budget_cost__price(&neg, 5000), 5000);
	/* A stretch of no time, or of time running backwards: ignored. */
	budget_cost__add(&hi, 0, 1e6, 10);
	budget_cost__add(&hi, 10 * MS, -1, 10);
	eq_int(hi.n, 8);
	(void)state;
}

/* Older stretches fade: a cost that changes is followed. */
static void test_cost_follows(void **state)
{
	struct budget_cost c = {};

	for (int k = 0; k < 2; k++)
		cycle(&c, 0.02, 7200, 20);
	/* 4 more cycles at 10 us: between (the figures worked out apart,
	 * in Python, from the same sums) */
	for (int k = 0; k < 4; k++)
		cycle(&c, 0.02, 10000, 20);
	assert_true(fabs(c.per_call_ns - 9140.6245) < 1e-3);
	/* 150 more (600 stretches: the first weigh 0.2 %): 10 us, nearly */
	for (int k = 0; k < 150; k++)
		cycle(&c, 0.02, 10000, 20);
	assert_true(fabs(c.per_call_ns - 9999.5562) < 1e-3);
	(void)state;
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
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_ledger),
		cmocka_unit_test(test_cost_measured),
		cmocka_unit_test(test_cost_one_rate),
		cmocka_unit_test(test_cost_bounded),
		cmocka_unit_test(test_cost_follows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
