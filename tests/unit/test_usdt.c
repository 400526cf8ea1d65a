// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_usdt.c: SDT argument specs as <sys/sdt.h> writes them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "elf/usdt.h"

static void test_arg_specs(void **state)
{
	struct usdt_arg a;

	(void)state;
	assert_int_equal(usdt__parse_arg("-4@%edi", &a), 0);
	assert_true(a.kind == USDT_ARG_REG && a.reg == 112 && a.size == 4 && a.is_signed);
	assert_int_equal(usdt__parse_arg("8@%r12", &a), 0);
	assert_true(a.kind == USDT_ARG_REG && a.reg == 24 && a.size == 8 && !a.is_signed);
	assert_int_equal(usdt__parse_arg("-8@-16(%rbp)", &a), 0);
	assert_true(a.kind == USDT_ARG_MEM && a.reg == 32 && a.value == -16 && a.size == 8);
	assert_int_equal(usdt__parse_arg("-4@112(%rsp)", &a), 0);
	assert_true(a.kind == USDT_ARG_MEM && a.reg == 152 && a.value == 112);
	assert_int_equal(usdt__parse_arg("2@(%rax)", &a), 0);
	assert_true(a.kind == USDT_ARG_MEM && a.reg == 80 && a.value == 0 && a.size == 2);
	assert_int_equal(usdt__parse_arg("-4@$-7", &a), 0);
	assert_true(a.kind == USDT_ARG_CONST && a.value == -7 && a.is_signed);
	assert_int_equal(usdt__parse_arg("1@%sil", &a), 0);
	assert_true(a.kind == USDT_ARG_REG && a.reg == 104 && a.size == 1);
	/* Refused: no size, a size that is not 1/2/4/8, an unknown register, an
	 * index register, garbage after a constant. */
	assert_int_equal(usdt__parse_arg("%rax", &a), -EINVAL);
	assert_int_equal(usdt__parse_arg("3@%rax", &a), -EINVAL);
	assert_int_equal(usdt__parse_arg("8@%xmm0", &a), -EINVAL);
	assert_int_equal(usdt__parse_arg("8@(%rax,%rbx,8)", &a), -EINVAL);
	assert_int_equal(usdt__parse_arg("8@$5x", &a), -EINVAL);
	assert_int_equal(usdt__parse_arg("8@16(%rax", &a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arg_specs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
