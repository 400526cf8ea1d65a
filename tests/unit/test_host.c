/* test_host.c: what probing the host costs in memory (user/probe/host.c).
 * The kernel's BTF is ~6 MB parsed: read to answer the BTF questions and
 * freed after, never kept beside the copy libbpf parses to load a
 * program (that pair was 6 MB of every trace's peak RSS). */
#include <malloc.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>
#include "probe/host.h"

static size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd; /* small chunks + mmapped ones */
}

static void test_btf_not_kept(void **state)
{
	(void)state;
	size_t before;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		skip(); /* no kernel BTF here: nothing is read */
		return;
	}
	before = heap_in_use();
	/* A question the BTF answers, and its neighbours with it. */
	assert_true(host__have(HOST_BTF));
	(void)host__have(HOST_RDONLY_CAST);
	(void)host__have(HOST_READ_DYNPTR);
	(void)host__have(HOST_PREPARE_EXEC);
	/* The answers stay; the BTF does not (under a sanitizer mallinfo2
	 * reads zero: the check holds trivially there). */
	assert_in_range(heap_in_use() - before, 0, 256 * 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_btf_not_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
