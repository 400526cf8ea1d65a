// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for core/similar.c: the distance behind "did you mean". */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "core/similar.h"

static void test_distance(void **state)
{
	assert_int_equal(similar__distance("handle_request", "handle_request", 2), 0);
	assert_int_equal(similar__distance("handle_requst", "handle_request", 2), 1);  /* a letter left out */
	assert_int_equal(similar__distance("handle_reqeust", "handle_request", 2), 1); /* two swapped */
	assert_int_equal(similar__distance("handel_raquest", "handle_request", 2), 2);
	assert_int_equal(similar__distance("parse", "prase", 1), 1);
	assert_int_equal(similar__distance("", "abc", 5), 3);
	assert_int_equal(similar__distance("abc", "", 5), 3);
	/* beyond MAX: MAX + 1, whatever the distance */
	assert_int_equal(similar__distance("main", "handle_request", 2), 3);
	assert_int_equal(similar__distance("abcd", "wxyz", 1), 2);
}

static void test_too_long(void **state)
{
	char a[300];

	memset(a, 'a', sizeof(a) - 1);
	a[sizeof(a) - 1] = 0;
	assert_int_equal(similar__distance(a, a, 2), 3);
}

static void test_slack(void **state)
{
	assert_int_equal(similar__slack(3), 0); /* "add" is not a slip of "and" */
	assert_int_equal(similar__slack(5), 1);
	assert_int_equal(similar__slack(13), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_slack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
