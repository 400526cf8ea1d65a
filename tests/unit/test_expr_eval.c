// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for filter/expr_eval.c: --if decided over a recorded call's
 * values (cmon export --if). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include "filter/expr.h"
#include "filter/expr_eval.h"

/* TEXT over ARGS (JSON), RET (JSON or NULL) and a latency of 500 ns. */
static bool holds(const char *text, const char *args, const char *ret)
{
	struct expr *e = NULL;
	struct expr_call c = { .has_latency = true, .latency_ns = 500 };
	bool r;

	assert_int_equal(expr__parse(text, "--if", &e), 0);
	c.args = args ? json_loads(args, 0, NULL) : NULL;
	c.ret = ret ? json_loads(ret, JSON_DECODE_ANY, NULL) : NULL;
	r = expr__eval(e, &c);
	json_decref(c.args);
	json_decref(c.ret);
	expr__free(e);
	return r;
}

static void test_numbers_and_logic(void **state)
{
	const char *a = "{\"n\":5,\"neg\":-3}";

	assert_true(holds("n == 5", a, "120"));
	assert_true(holds("n > 4 && neg < 0", a, NULL));
	assert_false(holds("n > 5 || neg >= 0", a, NULL));
	assert_true(holds("ret == 120 && latency_ns <= 500", a, "120"));
	assert_true(holds("!(n != 5)", a, NULL));
	assert_true(holds("n", a, NULL));
	assert_false(holds("0", a, NULL)); /* a number alone: 0 is false */
}

static void test_unknown_is_left_out(void **state)
{
	const char *a = "{\"x\":10}";

	/* n: another function's parameter; ret: the call never returned */
	assert_false(holds("n == 5", a, NULL));
	assert_false(holds("!(n == 5)", a, NULL));
	assert_false(holds("ret == 0 || ret != 0", a, NULL));
	assert_true(holds("n == 5 || x == 10", a, NULL)); /* true either way */
	assert_false(holds("n == 5 && x == 10", a, NULL));
	assert_false(holds("n != 5 && x == 10", a, NULL));
}

static void test_strings_pointers_members(void **state)
{
	const char *a = "{\"s\":\"GET\",\"p\":\"0x7f00\",\"np\":\"0x0\","
			"\"req\":{\"len\":4097,\"hdr\":{\"kind\":2}},\"t\":true}";

	assert_true(holds("s == \"GET\"", a, NULL));
	assert_false(holds("s != \"GET\"", a, NULL));
	assert_true(holds("s != 0 && !(s == 0)", a, NULL)); /* a string read: the pointer was set */
	assert_false(holds("s > 0", a, NULL));              /* its address is not known */
	assert_true(holds("p == 0x7f00 && np == 0 && p", a, NULL));
	assert_false(holds("np", a, NULL));
	assert_true(holds("req->len > 4096 && req->hdr.kind == 2", a, NULL));
	assert_false(holds("req->missing == 0 || p->len == 1", a, NULL)); /* not followed */
	assert_true(holds("t == 1", a, NULL));
}

static void test_registers(void **state)
{
	int64_t regs[6] = { 7, -1, 0, 0, 0, 3 };
	struct expr_call c = { .regs = regs };
	struct expr *e = NULL;

	assert_int_equal(expr__parse("arg0 == 7 && arg1 < 0 && arg5 == 3 && !arg2", "--if", &e), 0);
	assert_true(expr__eval(e, &c));
	expr__free(e);
	assert_int_equal(expr__parse("latency_ns > 0", "--if", &e), 0);
	assert_false(expr__eval(e, &c)); /* no latency: unknown */
	expr__free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers_and_logic),
		cmocka_unit_test(test_unknown_is_left_out),
		cmocka_unit_test(test_strings_pointers_members),
		cmocka_unit_test(test_registers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
