// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_fuzz_corpus: every input kept under tests/fuzz/corpus/ (seeds, and
 * what libFuzzer found in `make fuzz`) run once through its fuzz target,
 * in the plain and the ASan+UBSan builds: `make test` replays what was
 * fuzzed without fuzzing (a target aborts on a wrong outcome). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LLVMFuzzerTestOneInput fuzz_expr_one
#include "../fuzz/fuzz_expr.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_spec_one
#include "../fuzz/fuzz_spec.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_store_one
#include "../fuzz/fuzz_store.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_elf_one
#include "../fuzz/fuzz_elf.c"
#undef LLVMFuzzerTestOneInput

static size_t replay(const char *sub, int (*one)(const uint8_t *, size_t))
{
	const char *root = getenv("CMON_FUZZ_CORPUS");
	char dir[4096], path[4096 + 256];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", root ? root : "tests/fuzz/corpus", sub);
	d = opendir(dir);
	if (!d)
		fail_msg("%s: cannot open (run from the top of the tree)", dir);
	while ((de = readdir(d))) {
		FILE *f;
		uint8_t *buf;
		long len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		assert_non_null(f);
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		fseek(f, 0, SEEK_SET);
		buf = malloc(len > 0 ? (size_t)len : 1);
		assert_non_null(buf);
		assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
		fclose(f);
		one(buf, (size_t)len);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

static void test_expr_corpus(void **state)
{
	(void)state;
	assert_true(replay("expr", fuzz_expr_one) >= 20);
}

static void test_spec_corpus(void **state)
{
	(void)state;
	assert_true(replay("spec", fuzz_spec_one) >= 10);
}

static void test_store_corpus(void **state)
{
	(void)state;
	assert_true(replay("store", fuzz_store_one) >= 20);
}

static void test_elf_corpus(void **state)
{
	(void)state;
	assert_true(replay("elf", fuzz_elf_one) >= 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expr_corpus),
		cmocka_unit_test(test_spec_corpus),
		cmocka_unit_test(test_store_corpus),
		cmocka_unit_test(test_elf_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
