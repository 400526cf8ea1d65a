// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_stacks: --stack's book keeps a stack until its call's record comes;
 * a call --if left out has its stack forgotten, not counted as dropped. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "event/stacks.h"

static struct cmon_stack_rec rec_of(uint32_t tid, uint64_t ts)
{
	struct cmon_stack_rec r;

	memset(&r, 0, sizeof(r));
	r.type = CMON_REC_STACK;
	r.tid = tid;
	r.pid = 0; /* no process to read */
	r.ts_entry_ns = ts;
	r.n = 1;
	r.ips[0] = 0x1234;
	return r;
}

static void test_forget(void **state)
{
	struct stack_book *b = stack_book__new();
	struct cmon_stack_rec a = rec_of(7, 1000), c = rec_of(7, 2000);
	struct strbuf out = {};

	(void)state;
	assert_non_null(b);
	stack_book__add(b, &a);
	stack_book__forget(b, 7, 999);  /* another call: kept */
	stack_book__forget(b, 8, 1000); /* another thread: kept */
	assert_int_equal(stack_book__take(b, 0, 7, 1000, NULL, &out), 0);
	stack_book__add(b, &a);
	stack_book__forget(b, 7, 1000);
	assert_int_equal(stack_book__take(b, 0, 7, 1000, NULL, &out), -ENOENT);
	stack_book__add(b, &a); /* the same slot again: nothing was dropped */
	stack_book__add(b, &c);
	assert_int_equal(stack_book__dropped(b), 0);
	strbuf__release(&out);
	stack_book__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
