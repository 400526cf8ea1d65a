// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_writer.c: exact output of the CSV, JSON Lines and text writers. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "core/decimal.h"
#include "output/writer.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Output of FMT for N records, header and writer__finish included. */
static char *render(enum out_format fmt, const struct call_record *recs, size_t n)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	struct writer *w;

	assert_non_null(f);
	w = writer__new(fmt, f);
	assert_non_null(w);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(writer__write(w, &recs[i]), 0);
	assert_int_equal(writer__finish(w), 0);
	writer__free(w);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(strlen(buf), size); /* no NUL slipped in */
	return buf;
}

/*
 * The four statuses, with the values a hostile or odd program can produce:
 * CSV specials, control characters, invalid and valid UTF-8, extreme ints.
 * Fields a status does not have are filled in to prove they are not shown.
 */
static const struct call_record records[] = {
	{
		.ts_ns = 1700000000123456789ull, .pid = 4242, .tid = 4243,
		.comm = "app", .func = "main", .module = "app", .depth = 0,
		.args = { 1, -2, INT64_MIN, INT64_MAX, 0, -1 }, .ret = -22,
		.latency_ns = 1234, .rss_entry = 4096, .rss_exit = 8192,
		.vms_entry = 100000, .vms_exit = 200000, .status = CALL_OK,
	},
	{
		.ts_ns = 1700000000223456789ull, .pid = 1, .tid = 2,
		.comm = "a,b\"c", .func = "x\r\ny", .module = " lib\x01.so ",
		.depth = -1, .args = { -1, -100, 3, 4, 5, INT64_MIN }, .ret = 5,
		.latency_ns = 77, .rss_entry = 4096, .rss_exit = 1,
		.vms_entry = 100000, .vms_exit = 2, .status = CALL_NORETURN,
	},
	{
		.ts_ns = 1, .pid = UINT32_MAX, .tid = 3,
		.comm = "\xff\xc0\x80", .func = "\xe2\x82", .module = "é€😀",
		.depth = 7, .ret = 5, .latency_ns = 9, .rss_exit = 9, .vms_exit = 9,
		.status = CALL_ENTRY_ONLY,
	},
	{
		.comm = "t", .func = "tail", .module = "m", .depth = 2,
		.args = { 10, 20, 30, 40, 50, 60 }, .ret = 9, .latency_ns = 5000,
		.latency_lt_ns = 5100, .rss_entry = 100, .rss_exit = 200, .vms_entry = 300,
		.vms_exit = UINT64_MAX, .status = CALL_TAILCALL,
	},
};

static void test_csv_records(void **state)
{
	char *out = render(OUT_CSV, records, ARRAY_SIZE(records));

	assert_string_equal(out,
		"schema,ts_ns,pid,tid,comm,func,depth,arg0,arg1,arg2,arg3,arg4,arg5,ret,"
		"latency_ns,latency_lt_ns,rss_entry,rss_exit,vms_entry,vms_exit,status,module\r\n"
		"1,1700000000123456789,4242,4243,app,main,0,1,-2,-9223372036854775808,"
		"9223372036854775807,0,-1,-22,1234,,4096,8192,100000,200000,ok,app\r\n"
		"1,1700000000223456789,1,2,\"a,b\"\"c\",\"x\r\ny\",,-1,-100,3,4,5,"
		"-9223372036854775808,,,,4096,,100000,,noreturn,\" lib\x01.so \"\r\n"
		"1,1,4294967295,3,\xff\xc0\x80,\xe2\x82,7,0,0,0,0,0,0,,,,0,,0,,entry,"
		"é€😀\r\n"
		"1,0,0,0,t,tail,2,10,20,30,40,50,60,,5000,5100,100,200,300,"
		"18446744073709551615,tailcall,m\r\n");
	free(out);
}

static void test_json_records(void **state)
{
	char *out = render(OUT_JSON, records, ARRAY_SIZE(records));

	assert_string_equal(out,
		"{\"schema\":1,\"ts_ns\":1700000000123456789,\"pid\":4242,\"tid\":4243,"
		"\"comm\":\"app\",\"func\":\"main\",\"depth\":0,\"arg0\":1,\"arg1\":-2,"
		"\"arg2\":-9223372036854775808,\"arg3\":9223372036854775807,"
		"\"arg4\":0,\"arg5\":-1,\"ret\":-22,\"latency_ns\":1234,\"latency_lt_ns\":null,"
		"\"rss_entry\":4096,\"rss_exit\":8192,\"vms_entry\":100000,"
		"\"vms_exit\":200000,\"status\":\"ok\",\"module\":\"app\"}\n"

		"{\"schema\":1,\"ts_ns\":1700000000223456789,\"pid\":1,\"tid\":2,"
		"\"comm\":\"a,b\\\"c\",\"func\":\"x\\r\\ny\",\"depth\":null,"
		"\"arg0\":-1,\"arg1\":-100,\"arg2\":3,\"arg3\":4,\"arg4\":5,"
		"\"arg5\":-9223372036854775808,\"ret\":null,\"latency_ns\":null,\"latency_lt_ns\":null,"
		"\"rss_entry\":4096,\"rss_exit\":null,\"vms_entry\":100000,"
		"\"vms_exit\":null,\"status\":\"noreturn\","
		"\"module\":\" lib\\u0001.so \"}\n"

		"{\"schema\":1,\"ts_ns\":1,\"pid\":4294967295,\"tid\":3,"
		"\"comm\":\"\\u00ff\\u00c0\\u0080\",\"func\":\"\\u00e2\\u0082\","
		"\"depth\":7,\"arg0\":0,\"arg1\":0,\"arg2\":0,\"arg3\":0,\"arg4\":0,"
		"\"arg5\":0,\"ret\":null,\"latency_ns\":null,\"latency_lt_ns\":null,\"rss_entry\":0,"
		"\"rss_exit\":null,\"vms_entry\":0,\"vms_exit\":null,"
		"\"status\":\"entry\",\"module\":\"é€😀\"}\n"

		"{\"schema\":1,\"ts_ns\":0,\"pid\":0,\"tid\":0,\"comm\":\"t\",\"func\":\"tail\","
		"\"depth\":2,\"arg0\":10,\"arg1\":20,\"arg2\":30,\"arg3\":40,"
		"\"arg4\":50,\"arg5\":60,\"ret\":null,\"latency_ns\":5000,\"latency_lt_ns\":5100,"
		"\"rss_entry\":100,\"rss_exit\":200,\"vms_entry\":300,"
		"\"vms_exit\":18446744073709551615,\"status\":\"tailcall\","
		"\"module\":\"m\"}\n");
	free(out);
}

/* Names a record may lack come out as empty strings, not crashes. */
static void test_null_names(void **state)
{
	const struct call_record rec = { .depth = -1, .status = CALL_OK };
	char *csv = render(OUT_CSV, &rec, 1), *json = render(OUT_JSON, &rec, 1);

	assert_string_equal(strchr(csv, '\n') + 1,
			    "1,0,0,0,,,,0,0,0,0,0,0,0,0,,0,0,0,0,ok,\r\n");
	assert_string_equal(json,
		"{\"schema\":1,\"ts_ns\":0,\"pid\":0,\"tid\":0,\"comm\":\"\",\"func\":\"\","
		"\"depth\":null,\"arg0\":0,\"arg1\":0,\"arg2\":0,\"arg3\":0,"
		"\"arg4\":0,\"arg5\":0,\"ret\":0,\"latency_ns\":0,\"latency_lt_ns\":null,\"rss_entry\":0,"
		"\"rss_exit\":0,\"vms_entry\":0,\"vms_exit\":0,\"status\":\"ok\","
		"\"module\":\"\"}\n");
	free(csv);
	free(json);
}

static void test_header_only(void **state)
{
	char *csv = render(OUT_CSV, NULL, 0);
	char *json = render(OUT_JSON, NULL, 0);
	char *text = render(OUT_TEXT, NULL, 0);

	assert_string_equal(csv,
		"schema,ts_ns,pid,tid,comm,func,depth,arg0,arg1,arg2,arg3,arg4,arg5,ret,"
		"latency_ns,latency_lt_ns,rss_entry,rss_exit,vms_entry,vms_exit,status,module\r\n");
	assert_string_equal(json, "");
	assert_string_equal(text,
		"TIME            PID/TID       LATENCY     dRSS CALL\n");
	free(csv);
	free(json);
	free(text);
}

/* The header is written once, even when finish follows records. */
static void test_header_once(void **state)
{
	char *out = render(OUT_CSV, records, 2), *p = out;
	int headers = 0;

	while ((p = strstr(p, "ts_ns,")))
		headers++, p++;
	assert_int_equal(headers, 1);
	free(out);
}

static void test_csv_escape_table(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "", "" },
		{ "plain", "plain" },
		{ "in side", "in side" },
		{ "a,b", "\"a,b\"" },
		{ "say \"hi\"", "\"say \"\"hi\"\"\"" },
		{ "\"", "\"\"\"\"" },
		{ "cr\rx", "\"cr\rx\"" },
		{ "lf\nx", "\"lf\nx\"" },
		{ " lead", "\" lead\"" },
		{ "trail ", "\"trail \"" },
		{ " ", "\" \"" },
		{ "\x01\x1b[31m\t\x7f", "\x01\x1b[31m\t\x7f" }, /* not special in CSV */
		{ "\xff\xc0\x80\xe2\x82", "\xff\xc0\x80\xe2\x82" }, /* bytes pass */
		{ "é€😀", "é€😀" },
		{ "é,\"", "\"é,\"\"\"" },
	};
	struct strbuf sb = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		strbuf__reset(&sb);
		assert_int_equal(csv_escape(&sb, cases[i].in), 0);
		assert_int_equal(sb.len, strlen(cases[i].out));
		assert_memory_equal(sb.buf, cases[i].out, sb.len);
		assert_int_equal(sb.buf[sb.len], '\0');
	}
	/* Appends, does not overwrite. */
	strbuf__reset(&sb);
	assert_int_equal(csv_escape(&sb, "a"), 0);
	assert_int_equal(csv_escape(&sb, "b,c"), 0);
	assert_string_equal(sb.buf, "a\"b,c\"");
	strbuf__release(&sb);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb.cap, 0);
	strbuf__release(&sb); /* twice is fine */
}

static void test_json_escape_table(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "", "\"\"" },
		{ "plain /x", "\"plain /x\"" },
		{ "q\"b\\s", "\"q\\\"b\\\\s\"" },
		{ "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"" },
		{ "\x01\x0b\x1b\x1f\x7f", "\"\\u0001\\u000b\\u001b\\u001f\\u007f\"" },
		{ "\xff", "\"\\u00ff\"" },
		{ "\x80", "\"\\u0080\"" },                 /* lone continuation */
		{ "\xc0\x80", "\"\\u00c0\\u0080\"" },      /* overlong NUL */
		{ "\xc1\xbf", "\"\\u00c1\\u00bf\"" },      /* overlong */
		{ "\xe0\x9f\xbf", "\"\\u00e0\\u009f\\u00bf\"" }, /* overlong */
		{ "\xf0\x8f\xbf\xbf", "\"\\u00f0\\u008f\\u00bf\\u00bf\"" },
		{ "\xe2\x82", "\"\\u00e2\\u0082\"" },      /* truncated at the end */
		{ "\xe2\x82x", "\"\\u00e2\\u0082x\"" },    /* truncated inside */
		{ "\xc3", "\"\\u00c3\"" },
		{ "\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"" }, /* surrogate */
		{ "\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"" }, /* > U+10FFFF */
		{ "\xf5\x80\x80\x80", "\"\\u00f5\\u0080\\u0080\\u0080\"" },
		{ "é", "\"é\"" },
		{ "€", "\"€\"" },
		{ "😀", "\"😀\"" },
		{ "\xc2\x80", "\"\xc2\x80\"" },            /* U+0080: valid */
		{ "\xed\x9f\xbf", "\"\xed\x9f\xbf\"" },    /* U+D7FF */
		{ "\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"" }, /* U+10FFFF */
		{ "\xc3\xa9\xa9", "\"é\\u00a9\"" },
		{ "a\xe2\x82\xac\xff" "b", "\"a€\\u00ffb\"" },
	};
	struct strbuf sb = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		strbuf__reset(&sb);
		assert_int_equal(json_escape(&sb, cases[i].in), 0);
		assert_string_equal(sb.buf, cases[i].out);
		assert_int_equal(sb.len, strlen(cases[i].out));
	}
	assert_int_equal(json_escape(&sb, "x"), 0);
	assert_string_equal(sb.buf, "\"a€\\u00ffb\"\"x\"");
	strbuf__release(&sb);
}

static void test_text_table(void **state)
{
	static const struct call_record recs[] = {
		{
			.ts_ns = 1700000000123456789ull, .pid = 4242, .tid = 4243,
			.comm = "ev\til\x1b", .func = "f\x1b[2J\n", .depth = 1,
			.args = { 0, 1, 999999, 1000000, -999999, -1000000 },
			.latency_ns = 812, .rss_entry = 4096, .rss_exit = 4096,
			.status = CALL_OK,
		},
		{
			/* C1 CSI, invalid UTF-8, unknown depth */
			.ts_ns = 1700000000000001000ull, .pid = 1, .tid = 4194304,
			.comm = "\xc2\x9bé", .func = "\xc2\x9b\xff\xc0\x80ok", .depth = -1,
			.status = CALL_NORETURN,
		},
		{
			/* a long name whole, the indent capped */
			.ts_ns = 999, .pid = 7, .tid = 7,
			.comm = "€€€€€€€€€€€€€€€€",
			.func = "abcdefghijklmnopqrstuvwxyz0123456789ABCD", .depth = 20,
			.latency_ns = 999600, .rss_entry = 1 << 20,
			.rss_exit = (1 << 20) + (64 << 20), .status = CALL_TAILCALL,
		},
		{
			.ts_ns = 0, .pid = 7, .tid = 7, .comm = "c",
			.func = "---------------------------------", .depth = 0,
			.status = CALL_ENTRY_ONLY,
		},
		{
			/* a pointer in hex */
			.ts_ns = 0, .pid = 7, .tid = 7, .comm = "c",
			.func = "abcdefghijklmnopqrstuvwxyz", .depth = 3,
			.ret = 0x55d0c0a4b2a0, .latency_ns = 1200000000,
			.rss_entry = 8192, .rss_exit = 4096, .status = CALL_OK,
		},
	};
	char *out;

	setenv("TZ", "UTC", 1);
	tzset();
	out = render(OUT_TEXT, recs, ARRAY_SIZE(recs));
	assert_string_equal(out,
		"TIME            PID/TID       LATENCY     dRSS CALL\n"
		"22:13:20.123456 4242/4243       812ns        0   f?[2J?"
		"(0, 1, 999999, 0xf4240, -999999, 0xfffffffffff0bdc0) = 0\n"
		"22:13:20.000001 1/4194304           -        - ????ok(0, 0, 0, 0, 0, 0) <noreturn>\n"
		"00:00:00.000000 7/7            1.00ms   +64.0M                 "
		"abcdefghijklmnopqrstuvwxyz0123456789ABCD(0, 0, 0, 0, 0, 0) <tail>\n"
		"00:00:00.000000 7/7                 -        - "
		"---------------------------------(0, 0, 0, 0, 0, 0)\n"
		"00:00:00.000000 7/7             1.20s    -4.0K       "
		"abcdefghijklmnopqrstuvwxyz(0, 0, 0, 0, 0, 0) = 0x55d0c0a4b2a0\n");
	free(out);
}

/* The data line of one record in text mode (header dropped). */
static char *text_line(const struct call_record *rec)
{
	char *out = render(OUT_TEXT, rec, 1), *line = strdup(strchr(out, '\n') + 1);

	free(out);
	assert_non_null(line);
	return line;
}

/* Columns of a text line: LATENCY at 30 (7), dRSS at 38 (8). */
static void assert_column(const char *line, size_t at, size_t width, const char *want)
{
	char cell[32];
	size_t n = strlen(want);

	assert_true(width < sizeof(cell) && n <= width);
	memset(cell, ' ', width - n);
	memcpy(cell + width - n, want, n + 1);
	assert_int_equal(line[at + width], ' ');
	line += at;
	assert_memory_equal(line, cell, width);
}

static void test_text_latency(void **state)
{
	static const struct { uint64_t ns; const char *want; } cases[] = {
		{ 0, "0ns" }, { 812, "812ns" }, { 999, "999ns" },
		{ 1000, "1.00us" }, { 1234, "1.23us" }, { 1235, "1.24us" },
		{ 12345, "12.3us" }, { 99949, "99.9us" }, { 99950, "100us" },
		{ 999499, "999us" }, { 999500, "1.00ms" }, { 4560000, "4.56ms" },
		{ 1200000000, "1.20s" }, { 999500000000, "1000s" },
		{ 3600000000000, "3600s" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct call_record rec = { .latency_ns = cases[i].ns, .status = CALL_OK };
		char *line = text_line(&rec);

		assert_column(line, 30, 7, cases[i].want);
		free(line);
	}
}

static void test_text_rss(void **state)
{
	static const struct { int64_t delta; const char *want; } cases[] = {
		{ 0, "0" }, { 512, "+512B" }, { -1, "-1B" }, { 1023, "+1023B" },
		{ 1024, "+1.0K" }, { -4096, "-4.0K" }, { 1536, "+1.5K" },
		{ 1048524, "+1023.9K" }, { 1048575, "+1.0M" },
		{ 64 << 20, "+64.0M" }, { -(3ll << 30), "-3.0G" },
		{ 5ll << 40, "+5.0T" },
	};
	const uint64_t base = 1ull << 50;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct call_record rec = {
			.rss_entry = base, .rss_exit = base + (uint64_t)cases[i].delta,
			.status = CALL_TAILCALL,
		};
		char *line = text_line(&rec);

		assert_column(line, 38, 8, cases[i].want);
		free(line);
	}
}

static void test_text_values(void **state)
{
	static const struct { int64_t v; const char *want; } cases[] = {
		{ 0, "0" }, { -22, "-22" }, { 999999, "999999" },
		{ -999999, "-999999" }, { 1000000, "0xf4240" },
		{ 0x7ffd12345678, "0x7ffd12345678" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct call_record rec = { .ret = cases[i].v, .status = CALL_OK };
		char *line = text_line(&rec), want[64];

		snprintf(want, sizeof(want), "(0, 0, 0, 0, 0, 0) = %s\n", cases[i].want);
		assert_string_equal(line + 47, want);
		free(line);
	}
}

/* REC's text row (its call part from 47 on), with the
 * terminal WIDTH (0: none), strings cut at STRCUT and COLOR. */
static char *text_call(const struct call_record *rec, unsigned width, unsigned strcut, bool color)
{
	char *buf = NULL, *line;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	struct writer *w;

	assert_non_null(f);
	w = writer__new(OUT_TEXT, f);
	assert_non_null(w);
	writer__set_color(w, color);
	writer__set_text(w, width, strcut);
	assert_int_equal(writer__write(w, rec), 0);
	assert_int_equal(writer__finish(w), 0);
	writer__free(w);
	assert_int_equal(fclose(f), 0);
	line = strchr(buf, '\n') + 1;
	line = strdup(line);
	free(buf);
	assert_non_null(line);
	return line;
}

/* Typed values: name=value, strings cut at the text's length (an escape
 * and a UTF-8 glyph are one character; object keys stay whole), the
 * return value as the function's type after " = ". */
static void test_text_typed(void **state)
{
	static const char *const names[] = { "s", "o", "n" };
	static const char *const cells[] = {
		"\"0123456789\"", "{\"a_long_key_name\":\"abcdefghijk\",\"v\":[1,2]}",
		"\"\\u00ffé\\n\\\"xyz\"",
	};
	struct call_typed t = {
		.names = names, .cells = cells, .n_cells = 3, .retval = "\"done and dusted\"",
	};
	struct call_record rec = { .func = "f", .status = CALL_OK, .typed = &t };
	char *line;

	line = text_call(&rec, 0, 4, false);
	assert_string_equal(line + 47, "f(s=\"0123…\", o={\"a_long_key_name\":\"abcd…\",\"v\":[1,2]}, "
				  "n=\"\\u00ffé\\n\\\"…\") = \"done…\"\n");
	free(line);
	line = text_call(&rec, 0, 0, false); /* 0: whole */
	assert_string_equal(line + 47, "f(s=\"0123456789\", o={\"a_long_key_name\":\"abcdefghijk\","
				  "\"v\":[1,2]}, n=\"\\u00ffé\\n\\\"xyz\") = \"done and dusted\"\n");
	free(line);
	line = text_call(&rec, 0, 10, false); /* exactly 10: not cut */
	assert_string_equal(line + 47, "f(s=\"0123456789\", o={\"a_long_key_name\":\"abcdefghij…\","
				  "\"v\":[1,2]}, n=\"\\u00ffé\\n\\\"xyz\") = \"done and d…\"\n");
	free(line);
	t.returns_void = true; /* no value to show */
	t.n_cells = 1;
	line = text_call(&rec, 0, 0, false);
	assert_string_equal(line + 47, "f(s=\"0123456789\")\n");
	free(line);
}

/* On a terminal a row is cut at its width: the arguments first, so that
 * the return value still shows, the notes dropped; the row itself when
 * even that does not fit.  "…" marks the cut; escapes take no column. */
static void test_text_fit(void **state)
{
	static const char *const names[] = { "s", "n" };
	static const char *const cells[] = { "\"héllo wörld\"", "12345" };
	struct call_typed t = {
		.names = names, .cells = cells, .n_cells = 2, .retval = "-7",
		.truncated = "[\"s\"]",
	};
	struct call_record rec = {
		.func = "parse", .status = CALL_OK, .typed = &t, .depth = 1,
	};
	char *line;

	/* 47 + "  parse(s=\"héllo wörld\", n=12345) = -7 truncated=[\"s\"]" */
	line = text_call(&rec, 0, 0, false);
	assert_string_equal(line + 47, "  parse(s=\"héllo wörld\", n=12345) = -7 truncated=[\"s\"]\n");
	free(line);
	line = text_call(&rec, 47 + 54, 0, false); /* fits exactly */
	assert_string_equal(line + 47, "  parse(s=\"héllo wörld\", n=12345) = -7 truncated=[\"s\"]\n");
	free(line);
	line = text_call(&rec, 47 + 53, 0, false); /* the notes dropped */
	assert_string_equal(line + 47, "  parse(s=\"héllo wörld\", n=12345) = -7…\n");
	free(line);
	line = text_call(&rec, 47 + 39, 0, false);
	assert_string_equal(line + 47, "  parse(s=\"héllo wörld\", n=12345) = -7…\n");
	free(line);
	line = text_call(&rec, 47 + 38, 0, false); /* the arguments cut */
	assert_string_equal(line + 47, "  parse(s=\"héllo wörld\", n=1234…) = -7\n");
	free(line);
	line = text_call(&rec, 47 + 20, 0, false);
	assert_string_equal(line + 47, "  parse(s=\"hé…) = -7\n");
	free(line);
	line = text_call(&rec, 47 + 15, 0, false);
	assert_string_equal(line + 47, "  parse(…) = -7\n");
	free(line);
	line = text_call(&rec, 47 + 16, 0, false); /* one glyph of the arguments */
	assert_string_equal(line + 47, "  parse(s…) = -7\n");
	free(line);
	line = text_call(&rec, 47 + 14, 0, false); /* the row itself */
	assert_string_equal(line + 47, "  parse(s=\"hé…\n");
	free(line);
	line = text_call(&rec, 47 + 14, 0, true);
	assert_string_equal(line,
			    "00:00:00.000000 0/0               0ns        0   "
			    "\033[1mparse\033[22m(s=\"hé\033[22m\033[39m…\n");
	free(line);
	line = text_call(&rec, 20, 0, false); /* narrower than the fixed columns */
	assert_string_equal(line, "00:00:00.000000 0/0…\n");
	free(line);
}

static void test_status_names(void **state)
{
	static const struct { enum call_status s; const char *name; } cases[] = {
		{ CALL_OK, "ok" }, { CALL_NORETURN, "noreturn" },
		{ CALL_ENTRY_ONLY, "entry" }, { CALL_TAILCALL, "tailcall" },
		{ (enum call_status)42, "unknown" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_string_equal(call_status__name(cases[i].s), cases[i].name);
}

static void test_format_parse(void **state)
{
	static const struct { const char *name; int err; enum out_format fmt; } cases[] = {
		{ "text", 0, OUT_TEXT }, { "csv", 0, OUT_CSV }, { "json", 0, OUT_JSON },
		{ "CSV", -EINVAL, 0 }, { "jsonl", -EINVAL, 0 }, { "", -EINVAL, 0 },
		{ "cs", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		enum out_format fmt = (enum out_format)99;

		assert_int_equal(out_format__parse(cases[i].name, &fmt), cases[i].err);
		assert_int_equal(fmt, cases[i].err ? 99 : (int)cases[i].fmt);
	}
}

/* A stream whose writes fail with the errno in the cookie (0: none). */
static ssize_t failing_write(void *cookie, const char *buf, size_t size)
{
	int e = *(int *)cookie;

	if (e)
		errno = e;
	return -1;
}

static void test_write_error(void **state)
{
	static const int errs[] = { ENOSPC, EPIPE, 0 };
	const cookie_io_functions_t io = { .write = failing_write };

	for (size_t i = 0; i < ARRAY_SIZE(errs); i++) {
		int e = errs[i], want = e ? -e : -EIO;
		FILE *f = fopencookie(&e, "w", io);
		uint64_t on_disk;
		struct writer *w;

		assert_non_null(f);
		setvbuf(f, NULL, _IONBF, 0);
		w = writer__new(OUT_CSV, f);
		assert_non_null(w);
		/* The row waits for the flush (or for a buffer's worth). */
		assert_int_equal(writer__write(w, &records[0]), 0);
		assert_int_equal(writer__flush(w, &on_disk), want);
		/* Sticky: later calls report it without touching the stream. */
		e = EBADF;
		assert_int_equal(writer__write(w, &records[0]), want);
		assert_int_equal(writer__finish(w), want);
		writer__free(w);
		fclose(f);
	}
}

/* Integers in decimal, as printf writes them: every power of ten and its
 * neighbours, the extremes, and a pseudo-random sweep of every length. */
static void check_decimal(uint64_t u)
{
	char want[32], got[DECIMAL_MAX + 1];
	int64_t i = (int64_t)u;
	char *end;

	snprintf(want, sizeof(want), "%" PRIu64, u);
	end = decimal__u64(got, u);
	*end = '\0';
	assert_string_equal(got, want);
	snprintf(want, sizeof(want), "%" PRId64, i);
	end = decimal__i64(got, i);
	*end = '\0';
	assert_string_equal(got, want);
}

static void test_decimal(void **state)
{
	uint64_t p = 1, x = 0x9e3779b97f4a7c15ull;

	for (int k = 0; k < 20; k++, p *= 10) {
		check_decimal(p - 1);
		check_decimal(p);
		check_decimal(p + 1);
		check_decimal(p * 9 + p - 1); /* all nines of the next length */
	}
	check_decimal(0);
	check_decimal(UINT64_MAX);
	check_decimal((uint64_t)INT64_MAX);
	check_decimal((uint64_t)INT64_MIN);
	for (int k = 0; k < 100000; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		check_decimal(x >> (k % 64));
	}
}

/* A stream that counts what reaches it. */
static ssize_t counting_write(void *cookie, const char *buf, size_t size)
{
	*(uint64_t *)cookie += size;
	return (ssize_t)size;
}

/* Rows reach stdio a buffer's worth at a time without a flush, and every
 * byte formatted is there after the flush, in one piece per row. */
static void test_rows_handed_over(void **state)
{
	const cookie_io_functions_t io = { .write = counting_write };
	uint64_t got = 0, on_disk;
	FILE *f = fopencookie(&got, "w", io);
	struct writer *w;
	int n = 0;

	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	w = writer__new(OUT_CSV, f);
	assert_non_null(w);
	assert_int_equal(writer__write(w, &records[0]), 0);
	assert_int_equal(got, 0); /* waiting for the flush */
	while (got == 0 && n < 100000) {
		assert_int_equal(writer__write(w, &records[0]), 0);
		n++;
	}
	assert_true(got >= 65536 && got == writer__bytes(w)); /* handed over whole */
	assert_true(n > 100);                                 /* not row by row */
	assert_int_equal(writer__write(w, &records[1]), 0);
	assert_true(writer__bytes(w) > got);
	assert_int_equal(writer__flush(w, &on_disk), 0);
	assert_int_equal(got, writer__bytes(w));
	writer__free(w);
	fclose(f);
}

/* The failure shows at the flush when the stream buffers. */
static void test_finish_error(void **state)
{
	int e = ENOSPC;
	const cookie_io_functions_t io = { .write = failing_write };
	FILE *f = fopencookie(&e, "w", io);
	struct writer *w = writer__new(OUT_JSON, f);

	assert_non_null(w);
	assert_int_equal(writer__write(w, &records[0]), 0);
	assert_int_equal(writer__finish(w), -ENOSPC);
	writer__free(w);
	fclose(f);
}

static void test_new_invalid(void **state)
{
	errno = 0;
	assert_null(writer__new(OUT_CSV, NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(writer__new((enum out_format)7, stdout));
	assert_int_equal(errno, EINVAL);
	writer__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_records),
		cmocka_unit_test(test_json_records),
		cmocka_unit_test(test_null_names),
		cmocka_unit_test(test_header_only),
		cmocka_unit_test(test_header_once),
		cmocka_unit_test(test_csv_escape_table),
		cmocka_unit_test(test_json_escape_table),
		cmocka_unit_test(test_text_table),
		cmocka_unit_test(test_text_latency),
		cmocka_unit_test(test_text_rss),
		cmocka_unit_test(test_text_values),
		cmocka_unit_test(test_text_typed),
		cmocka_unit_test(test_text_fit),
		cmocka_unit_test(test_status_names),
		cmocka_unit_test(test_format_parse),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_rows_handed_over),
		cmocka_unit_test(test_decimal),
		cmocka_unit_test(test_finish_error),
		cmocka_unit_test(test_new_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
