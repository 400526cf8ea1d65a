// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_ch_url.c: ClickHouse URLs (output/ch_url.h): every part, the
 * defaults, the options, a password from a file, and each malformed
 * shape refused with its reason (never the password).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "output/ch_url.h"

static void test_full(void **state)
{
	struct ch_url u;
	char why[256] = "";

	assert_int_equal(ch_url__parse("clickhouse://ann:s%40cret@db1.example:9123/prod.calls"
				       "?batch=500&flush_ms=250&buffer=8M&linger_ms=0",
				       &u, why, sizeof(why)), 0);
	assert_string_equal(u.host, "db1.example");
	assert_int_equal(u.port, 9123);
	assert_string_equal(u.db, "prod");
	assert_string_equal(u.table, "calls");
	assert_string_equal(u.user, "ann");
	assert_string_equal(u.password, "s@cret");
	assert_int_equal(u.batch_rows, 500);
	assert_int_equal(u.flush_ms, 250);
	assert_int_equal(u.buffer_bytes, 8u << 20);
	assert_int_equal(u.linger_ms, 0);
	assert_string_equal(ch_url__name(&u), "db1.example:9123/prod.calls");
	ch_url__free(&u);
}

static void test_defaults(void **state)
{
	struct ch_url u;
	char why[256] = "";

	assert_true(ch_url__is("clickhouse://h/t"));
	assert_false(ch_url__is("clickhouse:/h/t"));
	assert_false(ch_url__is("out.csv"));
	assert_int_equal(ch_url__parse("clickhouse://127.0.0.1/calls", &u, why, sizeof(why)), 0);
	assert_string_equal(u.host, "127.0.0.1");
	assert_int_equal(u.port, 8123);
	assert_string_equal(u.db, "default");
	assert_string_equal(u.table, "calls");
	assert_null(u.user);
	assert_null(u.password);
	assert_int_equal(u.batch_rows, 10000);
	assert_int_equal(u.flush_ms, 1000);
	assert_int_equal(u.buffer_bytes, 64u << 20);
	assert_int_equal(u.linger_ms, 5000);
	ch_url__free(&u);
	assert_int_equal(ch_url__parse("clickhouse://[::1]:8124/d.t", &u, why, sizeof(why)), 0);
	assert_string_equal(u.host, "::1");
	assert_int_equal(u.port, 8124);
	assert_string_equal(ch_url__name(&u), "[::1]:8124/d.t");
	ch_url__free(&u);
}

static void test_password_file(void **state)
{
	char path[] = "/tmp/cmon-ut-chpw-XXXXXX";
	int fd = mkstemp(path);
	struct ch_url u;
	char why[256] = "", url[128];

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hunter2\n", 8), 8);
	close(fd);
	snprintf(url, sizeof(url), "clickhouse://bob@h:1/d.t?password_file=%s", path);
	assert_int_equal(ch_url__parse(url, &u, why, sizeof(why)), 0);
	assert_string_equal(u.user, "bob");
	assert_string_equal(u.password, "hunter2");
	ch_url__free(&u);
	unlink(path);
	/* gone: the reason names the file, not a password */
	assert_int_equal(ch_url__parse(url, &u, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, path));
	ch_url__free(&u);
}

static void test_malformed(void **state)
{
	static const struct {
		const char *url, *why;
	} bad[] = {
		{ "clickhouse://h", "no /DB.TABLE after the host" },
		{ "clickhouse://h:80/", "no table" },
		{ "clickhouse://h:80/db.", "no table" },
		{ "clickhouse://:80/d.t", "no host" },
		{ "clickhouse://h:0/d.t", "bad port (1-65535)" },
		{ "clickhouse://h:70000/d.t", "bad port (1-65535)" },
		{ "clickhouse://h:x/d.t", "bad port" },
		{ "clickhouse://h/d-b.t", "bad database name (letters, digits, _)" },
		{ "clickhouse://h/d.t;drop", "bad table name (letters, digits, _)" },
		{ "clickhouse://h/d.t.u", "bad table name (letters, digits, _)" },
		{ "clickhouse://h/d.t?batch=0", "batch must be 1 to 100000 rows" },
		{ "clickhouse://h/d.t?buffer=12", "buffer must be 1M to 16G bytes" },
		{ "clickhouse://h/d.t?flush_ms=5", "flush_ms must be 10 to 60000" },
		{ "clickhouse://h/d.t?nope=1", "unknown option 'nope' (password_file, batch, "
					       "flush_ms, buffer, linger_ms)" },
		{ "clickhouse://h/d.t?batch", "option 'batch' has no value" },
		{ "clickhouse://:pw@h/d.t", "an empty user name" },
		{ "clickhouse://u:p%zz@h/d.t", "bad %-escape in the user" },
		{ "clickhouse://h o/d.t", "bad host name" },
		{ "http://h/d.t", "not a clickhouse:// URL" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ch_url u;
		char why[256] = "";

		assert_int_equal(ch_url__parse(bad[i].url, &u, why, sizeof(why)), -EINVAL);
		assert_string_equal(why, bad[i].why);
		ch_url__free(&u);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_password_file),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
