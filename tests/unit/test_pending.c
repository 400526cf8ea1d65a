// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_pending.c: captures waiting for their call records (event/pending). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "event/pending.h"

struct cap {
	struct cmon_capture_rec h;
	uint8_t items[56];
};

static struct cap cap_of(uint32_t tid, uint64_t ts, uint32_t func_id, uint32_t at_return)
{
	struct cap c = { .h = { .type = CMON_REC_CAPTURE, .n = 1, .ts_entry_ns = ts, .tid = tid,
				.func_id = func_id, .at_return = at_return, .len = 56 } };

	memset(c.items, (int)(ts & 0xff), sizeof(c.items));
	return c;
}

/* Each capture is found by its call and side, once, with its bytes. */
static void test_take_matches_call_and_side(void **state)
{
	struct pending_caps *pc = pending__new(0);
	struct cmon_capture_rec *r;

	(void)state;
	assert_non_null(pc);
	for (uint64_t ts = 1; ts <= 5000; ts++) {
		struct cap e = cap_of(7, ts, 3, 0), x = cap_of(7, ts, 3, 1);

		assert_int_equal(pending__put(pc, &e.h), 0);
		assert_int_equal(pending__put(pc, &x.h), 0);
	}
	assert_int_equal(pending__count(pc), 10000);
	assert_null(pending__take(pc, 8, 42, 3, 0)); /* another thread */
	assert_null(pending__take(pc, 7, 42, 4, 0)); /* another function */
	r = pending__take(pc, 7, 42, 3, 1);
	assert_non_null(r);
	assert_int_equal(r->at_return, 1);
	assert_int_equal(r->len, 56);
	assert_int_equal(((uint8_t *)(r + 1))[55], 42);
	pending__release(r);
	assert_null(pending__take(pc, 7, 42, 3, 1)); /* taken once */
	r = pending__take(pc, 7, 42, 3, 0);
	assert_non_null(r);
	pending__release(r);
	assert_int_equal(pending__count(pc), 9998);
	assert_int_equal(pending__evicted(pc), 0);
	pending__free(pc);
}

/* A capture whose call record never comes does not wait forever: past the
 * bound the oldest go, counted, and the newest stay findable. */
static void test_bound_lets_the_oldest_go(void **state)
{
	/* At least what one waiting capture holds: the record and 4 words. */
	size_t one = sizeof(struct cap) + 4 * sizeof(void *);
	struct pending_caps *pc = pending__new(100 * one);
	struct cmon_capture_rec *r;
	uint64_t before;
	struct cap c;

	(void)state;
	assert_non_null(pc);
	for (uint64_t ts = 1; ts <= 1000; ts++) {
		c = cap_of(1, ts, 0, 0);
		assert_int_equal(pending__put(pc, &c.h), 0);
	}
	assert_true(pending__count(pc) >= 100 && pending__count(pc) < 1000);
	assert_int_equal(pending__evicted(pc) + pending__count(pc), 1000);
	assert_null(pending__take(pc, 1, 1, 0, 0));      /* the oldest went */
	r = pending__take(pc, 1, 1000, 0, 0);            /* the newest stayed */
	assert_non_null(r);
	pending__release(r);
	/* A taken capture frees its room: nothing more goes. */
	c = cap_of(1, 1001, 0, 0);
	before = pending__evicted(pc);
	assert_int_equal(pending__put(pc, &c.h), 0);
	assert_int_equal(pending__evicted(pc), before);
	pending__free(pc);
}

/* A call left out at its return is forgotten whether its entry capture
 * is waiting already or comes after the word (staged on another CPU): it
 * neither waits forever nor is counted as let go. */
static void test_forget_before_and_after(void **state)
{
	struct pending_caps *pc = pending__new(0);
	struct cap e = cap_of(7, 10, 3, 0), x = cap_of(7, 11, 3, 1);

	(void)state;
	assert_non_null(pc);
	assert_int_equal(pending__put(pc, &e.h), 0);
	pending__forget(pc, 7, 10, 3); /* it was there */
	assert_int_equal(pending__count(pc), 0);
	pending__forget(pc, 7, 11, 3); /* it comes later */
	assert_int_equal(pending__put(pc, &x.h), 0); /* the return side: kept */
	e = cap_of(7, 11, 3, 0);
	assert_int_equal(pending__put(pc, &e.h), 0);
	assert_null(pending__take(pc, 7, 11, 3, 0));
	assert_int_equal(pending__count(pc), 1);
	/* once only: a later call with the same key waits as any */
	assert_int_equal(pending__put(pc, &e.h), 0);
	assert_int_equal(pending__count(pc), 2);
	/* the oldest words go past PENDING_FORGOTTEN */
	for (uint64_t ts = 100; ts < 100 + PENDING_FORGOTTEN + 1; ts++)
		pending__forget(pc, 8, ts, 3);
	e = cap_of(8, 100, 3, 0);
	assert_int_equal(pending__put(pc, &e.h), 0);
	assert_int_equal(pending__count(pc), 3);
	e = cap_of(8, 101, 3, 0);
	assert_int_equal(pending__put(pc, &e.h), 0);
	assert_int_equal(pending__count(pc), 3);
	assert_int_equal(pending__evicted(pc), 0);
	pending__free(pc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_matches_call_and_side),
		cmocka_unit_test(test_bound_lets_the_oldest_go),
		cmocka_unit_test(test_forget_before_and_after),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
