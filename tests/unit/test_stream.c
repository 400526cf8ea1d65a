/* test_stream.c: -o unix:PATH delivery: a reader that joins inside a line
 * starts at the next one; a reader gets what was flushed, in order. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>
#include "output/stream.h"

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	strcpy(sa.sun_path, path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
}

static void test_join_mid_line(void **state)
{
	char path[] = "/tmp/cmon-test-stream-XXXXXX", sock[64], a[256], b[256];
	FILE *f;
	int ra, rb;

	(void)state;
	assert_non_null(mkdtemp(path));
	snprintf(sock, sizeof(sock), "%s/s", path);
	f = stream__open(sock);
	assert_non_null(f);
	ra = connect_to(sock);
	fputs("one\ntw", f);          /* ra is accepted here, at a line start */
	fflush(f);
	rb = connect_to(sock);
	fputs("o\nthree\n", f);       /* rb joins inside "two" */
	fflush(f);
	fclose(f);                    /* readers get the rest; then EOF */
	read_all(ra, a, sizeof(a));
	read_all(rb, b, sizeof(b));
	assert_string_equal(a, "one\ntwo\nthree\n");
	assert_string_equal(b, "three\n");
	close(ra);
	close(rb);
	assert_int_equal(access(sock, F_OK), -1); /* the socket file is removed */
	rmdir(path);
}

static void test_refuses_other_files(void **state)
{
	char path[] = "/tmp/cmon-test-stream-XXXXXX", file[64];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(path));
	snprintf(file, sizeof(file), "%s/plain", path);
	f = fopen(file, "w");
	fputs("keep", f);
	fclose(f);
	assert_null(stream__open(file));
	assert_int_equal(errno, EEXIST);
	unlink(file);
	rmdir(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join_mid_line),
		cmocka_unit_test(test_refuses_other_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
