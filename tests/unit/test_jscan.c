// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_jscan.c: libcmon's JSON scanner alone: what RFC 8259 allows it takes
 * (values kept as their exact text: a 64-bit integer above INT64_MAX, a
 * float's digits), what it does not it refuses, keys are decoded, nesting
 * is bounded, and an object splits into its members (its array grown in
 * the arena: arena__grow).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "store/arena.h"
#include "store/jscan.h"

static bool valid(const char *s)
{
	return jscan__valid(s, strlen(s));
}

static void test_valid_values(void **state)
{
	const char *ok[] = { "0", "-0", "18446744073709551615", "-1.5e-300", "1E+2", "true",
			     "false", "null", "\"\"", "\"a\\u00e9\\n\\\"\"", "[]", "{}",
			     " [1, [2, {\"a\": null}]] ", "{\"k\":[true,false]}" };

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_true(valid(ok[i]));
}

static void test_invalid_values(void **state)
{
	const char *bad[] = { "", " ", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul",
			      "\"unterminated", "\"\\x\"", "\"\\u12g4\"", "\"tab\there\"",
			      "[1,]", "[1 2]", "{\"a\"}", "{\"a\":}", "{a:1}", "{\"a\":1,}",
			      "1 2", "[", "]", "NaN", "Infinity" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (valid(bad[i]))
			fail_msg("accepted %s", bad[i]);
	}
}

static void test_depth_bounded(void **state)
{
	char deep[2 * (JSCAN_MAX_DEPTH + 2) + 1];
	size_t n = JSCAN_MAX_DEPTH + 2;

	(void)state;
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = 0;
	assert_false(valid(deep));
	/* At the bound it is fine. */
	n = JSCAN_MAX_DEPTH;
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = 0;
	assert_true(valid(deep));
}

static void test_members(void **state)
{
	const char *obj = "{\"a\": 18446744073709551615, \"n\\u00e9\\u0000\": [1.50, \"x\"] ,"
			  "\"s\":{\"t\":null}}";
	struct arena *a = NULL;
	struct jscan_member *m = NULL;
	long n;

	(void)state;
	n = jscan__members(&a, obj, obj + strlen(obj), &m);
	assert_int_equal(n, 3);
	assert_string_equal(m[0].key, "a");
	assert_int_equal(m[0].ve - m[0].v, 20);
	assert_memory_equal(m[0].v, "18446744073709551615", 20);
	/* \u0000 in a key becomes U+FFFD: keys are C strings. */
	assert_string_equal(m[1].key, "n\xc3\xa9\xef\xbf\xbd");
	assert_int_equal(m[1].ve - m[1].v, 11);
	assert_memory_equal(m[1].v, "[1.50, \"x\"]", 11);
	assert_string_equal(m[2].key, "s");
	assert_memory_equal(m[2].v, "{\"t\":null}", 10);
	assert_false(m[0].used);
	arena__free(a);

	a = NULL;
	assert_int_equal(jscan__members(&a, "{}", "{}" + 2, &m), 0);
	assert_int_equal(jscan__members(&a, "[1]", "[1]" + 3, &m), -1);
	assert_int_equal(jscan__members(&a, "{\"a\":1} x", "{\"a\":1} x" + 9, &m), -1);
	arena__free(a);
}

/* An object of 20 members: its array grows past 8 and 16 (ARENA_GROW),
 * every member kept in order. */
static void test_many_members(void **state)
{
	char obj[512], key[16];
	struct arena *a = NULL;
	struct jscan_member *m = NULL;
	size_t len = 0;
	long n;

	(void)state;
	obj[len++] = '{';
	for (int i = 0; i < 20; i++)
		len += (size_t)snprintf(obj + len, sizeof(obj) - len, "%s\"k%d\":%d", i ? "," : "",
					i, i * 7);
	obj[len++] = '}';
	n = jscan__members(&a, obj, obj + len, &m);
	assert_int_equal(n, 20);
	for (int i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_string_equal(m[i].key, key);
		assert_int_equal(strtol(m[i].v, NULL, 10), i * 7);
	}
	arena__free(a);
}

/* arena__grow: room for one more, the capacity doubling from MIN, the
 * elements kept. */
static void test_arena_grow(void **state)
{
	struct arena *a = NULL;
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;

	(void)state;
	for (uint64_t i = 0; i < 100; i++) {
		assert_int_equal(ARENA_GROW(&a, v, n, cap, 4), 0);
		assert_true(cap > n);
		v[n++] = i * i;
	}
	assert_int_equal(cap, 128); /* 4, 8, ..., 128 */
	for (uint64_t i = 0; i < 100; i++)
		assert_int_equal(v[i], i * i);
	assert_int_equal(ARENA_GROW(&a, v, n, cap, 4), 0); /* room already */
	assert_int_equal(cap, 128);
	arena__free(a);
}

static void test_decode_surrogates(void **state)
{
	const char *pair = "\"\\ud83d\\ude00\"", *lone = "\"\\ud83dx\"";
	struct arena *a = NULL;

	(void)state;
	assert_string_equal(jscan__decode(&a, pair, pair + strlen(pair)), "\xf0\x9f\x98\x80");
	assert_string_equal(jscan__decode(&a, lone, lone + strlen(lone)), "\xef\xbf\xbdx");
	arena__free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_values),
		cmocka_unit_test(test_invalid_values),
		cmocka_unit_test(test_depth_bounded),
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_many_members),
		cmocka_unit_test(test_arena_grow),
		cmocka_unit_test(test_decode_surrogates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
