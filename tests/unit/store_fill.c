// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * store_fill.c: write a capture store with known calls, for the integration
 * tests of `cmon ls/show/export` (tests/integration/test_store.py, which
 * holds the same values).  Usage: store_fill OUTDIR; prints the folder used
 * (OUTDIR or OUTDIR-N).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "store/store_writer.h"

#define T0 1700000000000000000ull

static int die(const char *what, int err)
{
	fprintf(stderr, "store_fill: %s: %s\n", what, strerror(-err));
	return 1;
}

int main(int argc, char **argv)
{
	static const int32_t values1[5] = { 1, -2, 3, 40000, -5 };
	static const int32_t values2[3] = { 7, 8, 9 };
	static const double matrix[6] = { 0.5, 1.5, 2.5, 3.5, 4.5, 5.5 };
	static const char buf2[] = "a,b \"q\"\nline2";
	const struct store_meta meta = {
		.cmon_version = "0.1.0",
		.command_line = "cmon capture -p 100 --func parse_* -o run",
		.target_path = "/usr/bin/app",
		.build_id = "0123456789abcdef0123456789abcdef01234567",
		.hostname = "testhost",
		.start_time_ns = T0,
	};
	struct store_writer *w;
	int64_t parse, sum, resize, killp, raw;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: store_fill OUTDIR\n");
		return 2;
	}
	err = store_writer__create(argv[1], &meta, &w);
	if (err)
		return die(argv[1], err);
	parse = store_writer__add_function(w, "parse_request", "app",
		"{\"params\": [{\"name\": \"buf\", \"type\": \"const char *\", \"kind\": \"string\"},"
		" {\"name\": \"len\", \"type\": \"size_t\", \"kind\": \"uint\"},"
		" {\"name\": \"flags\", \"type\": \"int\", \"kind\": \"int\"}], \"ret\": \"int\"}", true);
	sum = store_writer__add_function(w, "sum_array", "libm2.so",
		"{\"params\": [{\"name\": \"values\", \"type\": \"const int32_t *\", \"kind\": \"pointer\"},"
		" {\"name\": \"n\", \"type\": \"int\", \"kind\": \"int\"}], \"ret\": \"int\"}", true);
	resize = store_writer__add_function(w, "ns::Widget::resize(int, int)", "app",
		"{\"params\": [{\"name\": \"this\", \"type\": \"ns::Widget *\", \"kind\": \"pointer\"},"
		" {\"name\": \"w\", \"type\": \"int\", \"kind\": \"int\"},"
		" {\"name\": \"h\", \"type\": \"int\", \"kind\": \"int\"}], \"ret\": \"void\"}", true);
	killp = store_writer__add_function(w, "kill_proc", "app",
		"{\"params\": [{\"name\": \"pid\", \"type\": \"pid_t\", \"kind\": \"int\"},"
		" {\"name\": \"sig\", \"type\": \"int\", \"kind\": \"int\"}], \"ret\": \"int\"}", true);
	raw = store_writer__add_function(w, "raw_fn", "app",
		"[{\"name\": \"arg0\", \"type\": \"u64\", \"kind\": \"raw\"},"
		" {\"name\": \"arg1\", \"type\": \"u64\", \"kind\": \"raw\"}]", false);
	if (parse < 0 || sum < 0 || resize < 0 || killp < 0 || raw < 0)
		return die("add_function", -5);

	{
		const uint64_t s6[] = { 6 }, s13[] = { 13 }, s8[] = { 8 };
		const struct store_blob b1 = { "buf", "|u1", 1, s6, false, "GET /a", 6 };
		const struct store_blob b2 = { "buf", "|u1", 1, s13, false, buf2, 13 };
		const struct store_blob b3 = { "buf", "|u1", 1, s8, true, "ABCDEFGH", 8 };
		const struct store_call calls[] = {
			{ parse, 100, 101, "app", T0 + 1000, 1500, "ok", "0",
			  "{\"buf\": \"GET /a\", \"len\": 6, \"flags\": -1}",
			  4096, 8192, 100000, 100000, &b1, 1 },
			{ parse, 200, 201, "worker", T0 + 2000, 2500, "ok", "-22",
			  "{\"buf\": \"a,b \\\"q\\\"\\nline2\", \"len\": 18446744073709551615,"
			  " \"flags\": 2147483647}",
			  8192, 8192, 200000, 200000, &b2, 1 },
			{ parse, 100, 102, "app", T0 + 3000, STORE_NONE, "noreturn", NULL,
			  "{\"buf\": \"xyz\", \"len\": 3, \"flags\": 0}",
			  12288, STORE_NONE, 300000, STORE_NONE, &b3, 1 },
		};
		for (size_t i = 0; i < 3; i++)
			if (store_writer__add_call(w, &calls[i]) != (int64_t)i + 1)
				return die("add_call parse_request", -5);
	}
	{
		const uint64_t s5[] = { 5 }, s3[] = { 3 };
		const struct store_blob v1 = { "values", "<i4", 1, s5, false, values1, sizeof(values1) };
		const struct store_blob v2 = { "values", "<i4", 1, s3, false, values2, sizeof(values2) };
		const struct store_call c1 = { sum, 100, 101, "app", T0 + 4000, 700, "ok", "39997",
			"{\"values\": \"0x7ffd0000\", \"n\": 5}", 4096, 4096, 1, 1, &v1, 1 };
		const struct store_call c2 = { sum, 100, 101, "app", T0 + 5000, 800, "ok", "24",
			"{\"values\": \"0x7ffd0010\", \"n\": 3}", 4096, 4096, 1, 1, &v2, 1 };

		if (store_writer__add_call(w, &c1) != 1 || store_writer__add_call(w, &c2) != 2)
			return die("add_call sum_array", -5);
	}
	{
		const uint64_t s23[] = { 2, 3 };
		const struct store_blob m = { "matrix", "<f8", 2, s23, false, matrix, sizeof(matrix) };
		const struct store_call c = { resize, 100, 101, "app", T0 + 6000, 900, "ok", NULL,
			"{\"this\": \"0x1000\", \"w\": 2, \"h\": 3}", 1, 2, 3, 4, &m, 1 };
		const struct store_call k = { killp, 100, 101, "app", T0 + 7000, 100, "ok", "0",
			"{\"pid\": 4242, \"sig\": 9}", 1, 1, 1, 1, NULL, 0 };
		const struct store_call r = { raw, 200, 201, "worker", T0 + 8000, 50, "ok", "42",
			"{\"arg0\": 1, \"arg1\": -7}", 1, 1, 1, 1, NULL, 0 };

		if (store_writer__add_call(w, &c) != 1 || store_writer__add_call(w, &k) != 1 ||
		    store_writer__add_call(w, &r) != 1)
			return die("add_call", -5);
	}
	err = store_writer__set_meta(w, "events_lost", "0");
	if (err)
		return die("set_meta", err);
	printf("%s\n", store_writer__path(w));
	err = store_writer__close(w, T0 + 5000000000ull);
	if (err)
		return die("close", err);
	return 0;
}
