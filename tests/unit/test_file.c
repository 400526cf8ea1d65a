// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_file.c: core/file's whole-file read and stream buffer. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "core/file.h"

static off_t size_on_disk(FILE *f)
{
	struct stat st;

	assert_int_equal(fstat(fileno(f), &st), 0);
	return st.st_size;
}

/* 48 KiB written through a 64 KiB buffer reach the file only when flushed:
 * with setvbuf(f, NULL, _IOFBF, 64 KiB), glibc's 4 KiB buffer would have
 * written 12 times already. */
static void test_buffer_holds_its_size(void **state)
{
	char line[1024];
	FILE *f = tmpfile();
	void *buf;

	(void)state;
	assert_non_null(f);
	buf = file__buffer(f, 64 << 10);
	assert_non_null(buf);
	memset(line, 'x', sizeof(line));
	for (int i = 0; i < 48; i++)
		assert_int_equal(fwrite(line, 1, sizeof(line), f), sizeof(line));
	assert_int_equal(size_on_disk(f), 0);
	assert_int_equal(fflush(f), 0);
	assert_int_equal(size_on_disk(f), 48 << 10);
	/* Past the buffer: written in whole buffers. */
	for (int i = 0; i < 80; i++)
		assert_int_equal(fwrite(line, 1, sizeof(line), f), sizeof(line));
	assert_int_equal(size_on_disk(f), (48 + 64) << 10);
	assert_int_equal(fclose(f), 0);
	free(buf);
}

static void test_read_all(void **state)
{
	char path[] = "/tmp/cmon-test-file.XXXXXX";
	int fd = mkstemp(path);
	char *data;
	size_t len;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc\n", 4), 4);
	close(fd);
	assert_int_equal(file__read_all(path, 0, &data, &len), 0);
	assert_int_equal(len, 4);
	assert_string_equal(data, "abc\n");
	free(data);
	assert_int_equal(file__read_all(path, 3, &data, &len), -EFBIG);
	assert_int_equal(file__read_all("/tmp", 0, &data, &len), -EINVAL);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buffer_holds_its_size),
		cmocka_unit_test(test_read_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
