// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_metrics.c: the Prometheus exposition (exact text, escaping, value
 * formatting), the per-process label cap, and the series a probe exposes
 * (cumulative buckets from the kernel's histograms). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "agent/metrics.h"
#include "agent/series.h"
#include "agg/hist.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_escape_label_value(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "plain" },
		{ "", "" },
		{ "a\"b", "a\\\"b" },
		{ "back\\slash", "back\\\\slash" },
		{ "two\nlines", "two\\nlines" },
		{ "tab\there\r", "tab\there\r" }, /* only \ " and newline are escaped */
		{ "ns::A::f(int, char const*)", "ns::A::f(int, char const*)" },
		{ "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		/* Invalid UTF-8: each bad byte becomes U+FFFD. */
		{ "\xff", "\xef\xbf\xbd" },
		{ "a\xc0\x80z", "a\xef\xbf\xbd\xef\xbf\xbdz" },          /* overlong NUL */
		{ "\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd" },              /* truncated */
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* surrogate */
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* > U+10FFFF */
		{ "\\\"\n\xfe", "\\\\\\\"\\n\xef\xbf\xbd" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct mbuf b = {};

		metrics__escape_label_value(&b, cases[i].in);
		assert_int_equal(b.err, 0);
		assert_string_equal(b.buf ? b.buf : "", cases[i].out);
		mbuf__release(&b);
	}
}

static void test_escape_help(void **state)
{
	struct mbuf b = {};

	metrics__escape_help(&b, "say \"hi\"\\\nnext");
	assert_string_equal(b.buf, "say \"hi\"\\\\\\nnext");
	mbuf__release(&b);
}

static void test_format_double(void **state)
{
	static const struct {
		double v;
		const char *out;
	} cases[] = {
		{ 0, "0" },
		{ 1, "1" },
		{ -3, "-3" },
		{ 0.5, "0.5" },
		{ 1e-6, "1e-06" },
		{ 0.1, "0.1" },
		{ 1.5e-9, "1.5e-09" },
		{ 123.456, "123.456" },
		{ 1.0 / 3, "0.3333333333333333" },
		{ 9007199254740992.0, "9007199254740992" },
		{ 1e300, "1e+300" },
		{ 1700000000.125, "1700000000.125" },
	};
	struct mbuf b = {};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		mbuf__reset(&b);
		metrics__format_double(&b, cases[i].v);
		assert_string_equal(b.buf, cases[i].out);
		assert_true(strtod(b.buf, NULL) == cases[i].v);
	}
	mbuf__reset(&b);
	metrics__format_double(&b, INFINITY);
	metrics__format_double(&b, -INFINITY);
	metrics__format_double(&b, NAN);
	assert_string_equal(b.buf, "+Inf-InfNaN");
	mbuf__release(&b);
}

static void test_mbuf(void **state)
{
	struct mbuf b = {};
	char *s;
	size_t len;

	s = mbuf__take(&b, &len);
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	free(s);
	for (int i = 0; i < 1000; i++)
		mbuf__printf(&b, "%04d,", i);
	assert_int_equal(b.len, 5000);
	assert_memory_equal(b.buf + 4995, "0999,", 5);
	s = mbuf__take(&b, &len);
	assert_int_equal(len, 5000);
	assert_null(b.buf);
	free(s);
}

/* Two probes sharing a counter family, a gauge, a histogram, an empty
 * family (left out), exact text. */
static void test_exposition(void **state)
{
	static const char *const le[] = { "0.001", "0.5", "1" };
	static const uint64_t cum[] = { 1, 3, 3 };
	struct metric_label a[] = { { "probe", "a" }, { "function", "f\"1\"" } };
	struct metric_label b[] = { { "probe", "b" }, { "function", "g\\" }, { "pid", "other" } };
	struct metric_label st = { "state", "applied" };
	struct expo *e = expo__new();
	struct mbuf out = {};

	assert_non_null(e);
	assert_int_equal(expo__family(e, "app_calls_total", METRIC_COUNTER, "Calls.\nTwo lines"), 0);
	assert_int_equal(expo__family(e, "unused", METRIC_GAUGE, "Never sampled."), 0);
	assert_int_equal(expo__family(e, "lat_seconds", METRIC_HISTOGRAM, "Latency \\ s."), 0);
	assert_int_equal(expo__family(e, "cmon_probe_state", METRIC_GAUGE, "State."), 0);
	/* Again with the same type: fine; another type: refused. */
	assert_int_equal(expo__family(e, "app_calls_total", METRIC_COUNTER, "ignored"), 0);
	assert_int_equal(expo__family(e, "app_calls_total", METRIC_GAUGE, "x"), -EEXIST);
	assert_int_equal(expo__add(e, "nope", NULL, 0, 1), -ENOENT);

	assert_int_equal(expo__add_u64(e, "app_calls_total", a, 2, 18446744073709551615ull), 0);
	assert_int_equal(expo__add_u64(e, "cmon_probe_state", &st, 1, 1), 0);
	assert_int_equal(expo__add_hist(e, "lat_seconds", a, 2, le, cum, 3, true, 0.25, 4), 0);
	assert_int_equal(expo__add_u64(e, "app_calls_total", b, 3, 0), 0);
	assert_int_equal(expo__add_hist(e, "lat_seconds", NULL, 0, le, cum, 1, false, 0, 1), 0);
	assert_int_equal(expo__add(e, "cmon_probe_state", NULL, 0, 0.5), 0);
	assert_int_equal(expo__add_hist(e, "app_calls_total", NULL, 0, le, cum, 1, false, 0, 1), -EINVAL);
	assert_int_equal(expo__series(e), 2 + 2 + 6 + 3);

	assert_int_equal(expo__render(e, &out), 0);
	assert_string_equal(out.buf,
		"# HELP app_calls_total Calls.\\nTwo lines\n"
		"# TYPE app_calls_total counter\n"
		"app_calls_total{probe=\"a\",function=\"f\\\"1\\\"\"} 18446744073709551615\n"
		"app_calls_total{probe=\"b\",function=\"g\\\\\",pid=\"other\"} 0\n"
		"# HELP lat_seconds Latency \\\\ s.\n"
		"# TYPE lat_seconds histogram\n"
		"lat_seconds_bucket{probe=\"a\",function=\"f\\\"1\\\"\",le=\"0.001\"} 1\n"
		"lat_seconds_bucket{probe=\"a\",function=\"f\\\"1\\\"\",le=\"0.5\"} 3\n"
		"lat_seconds_bucket{probe=\"a\",function=\"f\\\"1\\\"\",le=\"1\"} 3\n"
		"lat_seconds_bucket{probe=\"a\",function=\"f\\\"1\\\"\",le=\"+Inf\"} 4\n"
		"lat_seconds_sum{probe=\"a\",function=\"f\\\"1\\\"\"} 0.25\n"
		"lat_seconds_count{probe=\"a\",function=\"f\\\"1\\\"\"} 4\n"
		"lat_seconds_bucket{le=\"0.001\"} 1\n"
		"lat_seconds_bucket{le=\"+Inf\"} 1\n"
		"lat_seconds_count 1\n"
		"# HELP cmon_probe_state State.\n"
		"# TYPE cmon_probe_state gauge\n"
		"cmon_probe_state{state=\"applied\"} 1\n"
		"cmon_probe_state 0.5\n");
	mbuf__release(&out);
	expo__free(e);
	expo__free(NULL);
}

static bool alive_if_even(void *ctx, uint32_t pid)
{
	(*(int *)ctx)++;
	return pid % 2 == 0;
}

/* Function labels: the first MAX names seen, for good; the rest never. */
static void test_name_cap(void **state)
{
	struct name_cap *c = name_cap__new(3);

	assert_non_null(c);
	assert_int_equal(name_cap__max(c), 3);
	assert_true(name_cap__admit(c, "zeta"));
	assert_true(name_cap__admit(c, "alpha"));
	assert_true(name_cap__admit(c, "zeta"));
	assert_false(name_cap__has(c, "mid"));
	assert_true(name_cap__admit(c, "mid"));
	assert_int_equal(name_cap__used(c), 3);
	assert_false(name_cap__admit(c, "beta"));
	assert_false(name_cap__has(c, "beta"));
	assert_true(name_cap__has(c, "alpha"));
	assert_true(name_cap__admit(c, "mid"));
	assert_false(name_cap__admit(c, "beta"));
	assert_int_equal(name_cap__used(c), 3);
	name_cap__free(c);
	name_cap__free(NULL);
}

static void test_pid_cap(void **state)
{
	struct pid_cap *c = pid_cap__new(3);
	uint32_t freed[8];
	int calls = 0;

	assert_non_null(c);
	/* First come, first labelled; the fourth goes to "other". */
	assert_true(pid_cap__admit(c, 10));
	assert_true(pid_cap__admit(c, 11));
	assert_true(pid_cap__admit(c, 12));
	assert_false(pid_cap__admit(c, 13));
	assert_int_equal(pid_cap__used(c), 3);
	/* Sticky, both ways. */
	assert_true(pid_cap__admit(c, 11));
	assert_false(pid_cap__admit(c, 13));
	/* 11 exits: its slot goes, it is routed to "other" from now on, and
	 * 13 stays there (its counts are already in "other"). */
	assert_int_equal(pid_cap__sweep(c, alive_if_even, &calls, freed, 8), 1);
	assert_int_equal(calls, 3);
	assert_int_equal(freed[0], 11);
	assert_int_equal(pid_cap__used(c), 2);
	assert_false(pid_cap__admit(c, 11));
	assert_false(pid_cap__admit(c, 13));
	/* A new process takes the free slot. */
	assert_true(pid_cap__admit(c, 20));
	assert_false(pid_cap__admit(c, 22));
	/* The counts start afresh: routed pids may be judged again. */
	pid_cap__forget_routed(c);
	assert_false(pid_cap__admit(c, 13)); /* still full */
	pid_cap__free(c);

	/* Many processes on a busy host: the labelled set stays at the cap. */
	c = pid_cap__new(64);
	for (uint32_t pid = 1; pid <= 100000; pid++)
		pid_cap__admit(c, pid);
	assert_int_equal(pid_cap__used(c), 64);
	assert_true(pid_cap__admit(c, 64));
	assert_false(pid_cap__admit(c, 65));
	pid_cap__free(c);
	pid_cap__free(NULL);
}

/* Latency 1000 ns lands in the bucket [992, 1007], which straddles the
 * 1 us bound: it is counted from the next bound on; 900 ns is below; 3 ms
 * is between 1 ms and 5 ms; 20 s is past the last bound. */
static void test_series_from_profile(void **state)
{
	static struct func_profile fp;
	struct series_val v;

	memset(&fp, 0, sizeof(fp));
	fp.calls = 7;
	fp.lost = 1;
	fp.lat_sum_ns = 123;
	fp.lat_hist[hist__bucket(900)] += 2;
	fp.lat_hist[hist__bucket(1000)] += 1;
	fp.lat_hist[hist__bucket(3000000)] += 1;
	fp.lat_hist[hist__bucket(20000000000ull)] += 1;
	fp.arg_hist[0] = 1;  /* 0 */
	fp.arg_hist[1] = 2;  /* 1 */
	fp.arg_hist[11] = 3; /* 1024 .. 2047 */
	fp.arg_hist[64] = 4; /* >= 2^63 (a negative long) */
	series_val__from_profile(&v, &fp);
	assert_int_equal(v.calls, 7);
	assert_int_equal(v.lost, 1);
	assert_int_equal(v.lat_sum_ns, 123);
	assert_int_equal(v.lat_count, 5);
	{
		static const uint64_t want[SERIES_LAT_NBOUNDS] = { 2, 3, 3, 3, 3, 3, 3, 4, 4,
								   4, 4, 4, 4, 4, 4 };

		for (size_t i = 0; i < SERIES_LAT_NBOUNDS; i++)
			if (v.lat_le[i] != want[i])
				fail_msg("le=%s: %llu, expected %llu", series_lat_le[i],
					 (unsigned long long)v.lat_le[i], (unsigned long long)want[i]);
	}
	assert_int_equal(v.arg_count, 10);
	assert_int_equal(v.arg_le[0], 1);  /* le="0" */
	assert_int_equal(v.arg_le[1], 3);  /* le="1" */
	assert_int_equal(v.arg_le[10], 3); /* le="1023" */
	assert_int_equal(v.arg_le[11], 6); /* le="2047" */
	assert_int_equal(v.arg_le[63], 6); /* le="9223372036854775807" */
	assert_string_equal(series_arg_le[11], "2047");
	assert_string_equal(series_arg_le[63], "9223372036854775807");
	assert_string_equal(series_lat_le[0], "1e-06");
	/* The printed bounds are the ns bounds in seconds. */
	for (size_t i = 0; i < SERIES_LAT_NBOUNDS; i++)
		assert_true((uint64_t)(strtod(series_lat_le[i], NULL) * 1e9 + 0.5) ==
			    series_lat_bound_ns[i]);
	for (size_t k = 0; k < SERIES_ARG_NBOUNDS; k++)
		assert_true(strtoull(series_arg_le[k], NULL, 10) == (k ? (1ull << k) - 1 : 0));
}

/* The kernel hands over the function's own latencies (the probes' cost
 * taken out before bucketing): a 0.5 us call is le="1e-06", and the sum is
 * the kernel's. */
static void test_series_from_profile_own(void **state)
{
	static struct func_profile fp;
	struct series_val v;

	memset(&fp, 0, sizeof(fp));
	fp.calls = 3;
	fp.lat_sum_ns = 500 + 500 + 10000;
	fp.lat_hist[hist__bucket(500)] += 2;
	fp.lat_hist[hist__bucket(10000)] += 1;
	series_val__from_profile(&v, &fp);
	assert_string_equal(series_lat_le[0], "1e-06");
	assert_int_equal(v.lat_le[0], 2);
	assert_int_equal(v.lat_count, 3);
	assert_int_equal(v.lat_sum_ns, 11000);
	assert_int_equal(v.lat_le[SERIES_LAT_NBOUNDS - 1], 3);
}

static void test_series_table(void **state)
{
	struct series_table base = {}, t = {};
	struct series_val one = { .calls = 1, .lat_count = 1, .lat_le = { 1 } };
	struct series_val two = { .calls = 2, .arg_count = 2 };

	/* Carried-over counts of a replaced binary's profiler... */
	assert_int_equal(series_table__add(&base, "f", 100, &one), 0);
	assert_int_equal(series_table__add(&base, "gone", SERIES_PID_NONE, &two), 0);
	/* ...plus the live ones: same keys sum, order is (function, pid) with
	 * "other" last. */
	assert_int_equal(series_table__merge(&t, &base), 0);
	assert_int_equal(series_table__add(&t, "f", SERIES_PID_OTHER, &two), 0);
	assert_int_equal(series_table__add(&t, "f", 100, &two), 0);
	assert_int_equal(series_table__add(&t, "a", 7, &one), 0);
	series_table__normalize(&t);
	assert_int_equal(t.n, 4);
	assert_string_equal(t.rows[0].func, "a");
	assert_string_equal(t.rows[1].func, "f");
	assert_int_equal(t.rows[1].pid, 100);
	assert_int_equal(t.rows[1].v.calls, 3);
	assert_int_equal(t.rows[1].v.lat_count, 1);
	assert_int_equal(t.rows[1].v.lat_le[0], 1);
	assert_int_equal(t.rows[1].v.arg_count, 2);
	assert_int_equal(t.rows[2].pid, SERIES_PID_OTHER);
	assert_string_equal(t.rows[3].func, "gone");
	/* Process 100 exits: its row joins "other". */
	series_table__relabel(&t, 100, SERIES_PID_OTHER);
	series_table__normalize(&t);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.rows[1].pid, SERIES_PID_OTHER);
	assert_int_equal(t.rows[1].v.calls, 5);
	series_table__clear(&t);
	series_table__clear(&base);
	assert_int_equal(t.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_label_value),
		cmocka_unit_test(test_escape_help),
		cmocka_unit_test(test_format_double),
		cmocka_unit_test(test_mbuf),
		cmocka_unit_test(test_exposition),
		cmocka_unit_test(test_pid_cap),
		cmocka_unit_test(test_series_from_profile),
		cmocka_unit_test(test_series_from_profile_own),
		cmocka_unit_test(test_series_table),
		cmocka_unit_test(test_name_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
