// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_store.c: the capture store.  What the writer stores, libcmon reads
 * back exactly; folders are never overwritten, are owner-only and never
 * created through a symlink; truncated, foreign, damaged (fuzzed) stores
 * give error codes, never a crash; a writer killed with SIGKILL leaves a
 * store that opens with every call it had committed.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <cmon/cmon.h>
#include "cli/commands.h"
#include "store/store_npy.h"
#include "store/store_writer.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define T0 1700000000000000000ull
#define NCALLS 1000

static char tmp_root[64];

static char *path_in(const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", tmp_root, name) > 0);
	return p;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static void rm_rf(const char *path)
{
	assert_int_equal(nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static int setup_tmp(void **state)
{
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/cmon-test-store-XXXXXX");
	assert_non_null(mkdtemp(tmp_root));
	return 0;
}

static int teardown_tmp(void **state)
{
	rm_rf(tmp_root);
	return 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static const struct store_meta test_meta = {
	.cmon_version = "9.8.7",
	.command_line = "cmon capture -p 42 --func parse_*",
	.target_path = "/usr/bin/app",
	.build_id = "abcdef0123",
	.hostname = "host1",
	.start_time_ns = T0,
};

static const char SIG_PARSE[] =
	"{\"params\": [{\"name\": \"buf\", \"type\": \"const char *\", \"kind\": \"string\"},"
	" {\"name\": \"len\", \"type\": \"size_t\", \"kind\": \"uint\"}], \"ret\": \"int\"}";
static const char SIG_SUM[] =
	"[{\"name\": \"v\", \"type\": \"int32_t *\", \"kind\": \"pointer\"}]";

/* The values of call I (0-based) of the round-trip store. */
static void call_args(size_t i, char *buf, size_t cap)
{
	snprintf(buf, cap, "{\"buf\": \"req %zu\", \"len\": %" PRIu64 "}", i,
		 i == 7 ? UINT64_MAX : (uint64_t)i * 3);
}

static uint32_t call_pid(size_t i)
{
	return i % 3 == 0 ? 300 : 100;
}

/* A store of 3 functions: parse (NCALLS calls, a 64-byte |u1 blob each),
 * sum (NCALLS / 10 calls, an <i4 [4] blob), and none (no calls). */
static char *write_roundtrip_store(const char *dir)
{
	struct store_writer *w;
	int64_t parse, sum, none;
	char *path;

	assert_int_equal(store_writer__create(dir, &test_meta, &w), 0);
	parse = store_writer__add_function(w, "parse", "app", SIG_PARSE, true);
	sum = store_writer__add_function(w, "sum", "libx.so", SIG_SUM, true);
	none = store_writer__add_function(w, "none", "app", NULL, false);
	assert_int_equal(parse, 1);
	assert_int_equal(sum, 2);
	assert_int_equal(none, 3);
	for (size_t i = 0; i < NCALLS; i++) {
		unsigned char data[64];
		char args[128], ret[32];
		const uint64_t shape[] = { 64 };
		struct store_blob b = { "buf", "|u1", 1, shape, i % 5 == 0, data, sizeof(data) };
		struct store_call c = {
			.func_id = parse, .pid = call_pid(i), .tid = 1000 + (uint32_t)i % 7,
			.comm = call_pid(i) == 300 ? "worker" : "app", .ts_ns = T0 + i * 1000,
			.cgroup = call_pid(i) == 300 ? "/pods/w" : NULL,
			.latency_ns = i % 11 == 0 ? STORE_NONE : i * 10,
			.status = i % 11 == 0 ? "noreturn" : "ok",
			.ret_json = i % 11 == 0 ? NULL : ret, .args_json = args,
			.rss_entry = 4096 * i, .rss_exit = i % 11 == 0 ? STORE_NONE : 4096 * i + 1,
			.vms_entry = 8192 * i, .vms_exit = i % 11 == 0 ? STORE_NONE : 8192 * i + 2,
			.blobs = &b, .n_blobs = 1,
		};

		for (size_t k = 0; k < sizeof(data); k++)
			data[k] = (unsigned char)(i + k);
		call_args(i, args, sizeof(args));
		snprintf(ret, sizeof(ret), "%lld", -(long long)i);
		assert_int_equal(store_writer__add_call(w, &c), (int64_t)i + 1);
		if (i % 10 == 0) {
			int32_t v[4] = { (int32_t)i, -(int32_t)i, INT32_MAX, INT32_MIN };
			const uint64_t sh[] = { 4 };
			struct store_blob vb = { "v", "<i4", 1, sh, false, v, sizeof(v) };
			struct store_call sc = {
				.func_id = sum, .pid = 100, .tid = 100, .comm = "app",
				.ts_ns = T0 + i * 1000 + 1, .latency_ns = 5, .status = "ok",
				.ret_json = "0.1", .args_json = "{\"v\": \"0x10\"}",
				.rss_entry = 1, .rss_exit = 2, .vms_entry = 3, .vms_exit = 4,
				.blobs = &vb, .n_blobs = 1,
			};

			assert_int_equal(store_writer__add_call(w, &sc), (int64_t)i / 10 + 1);
		}
	}
	assert_int_equal(store_writer__calls(w), NCALLS + NCALLS / 10);
	assert_int_equal(store_writer__set_meta(w, "events_lost", "0"), 0);
	path = strdup(store_writer__path(w));
	/* ended first, as the capture sink does: close does not end it again
	 * (end_time_ns stays T0 + 5 s) */
	assert_int_equal(store_writer__end(w, T0 + 5000000000ull), 0);
	assert_int_equal(store_writer__committed(w), NCALLS + NCALLS / 10);
	assert_int_equal(store_writer__close(w, 0), 0);
	return path;
}

static void check_parse_call(const struct cmon_call *c, size_t i)
{
	const struct cmon_blob *b;
	char args[128], buf[64];
	bool nor = i % 11 == 0;

	assert_string_equal(c->func, "parse");
	assert_string_equal(c->module, "app");
	assert_int_equal(c->n, i + 1);
	assert_int_equal(c->pid, call_pid(i));
	assert_string_equal(c->comm, call_pid(i) == 300 ? "worker" : "app");
	assert_int_equal(c->tid, 1000 + i % 7);
	assert_int_equal(c->ts_ns, T0 + i * 1000);
	assert_int_equal(c->latency_ns, nor ? CMON_NONE : i * 10);
	assert_string_equal(c->status, nor ? "noreturn" : "ok");
	if (nor) {
		assert_null(c->ret);
	} else {
		snprintf(buf, sizeof(buf), "%lld", -(long long)i);
		assert_string_equal(c->ret, buf);
	}
	assert_string_equal(c->ret_type, "int");
	assert_int_equal(c->rss_entry, 4096 * i);
	assert_int_equal(c->rss_exit, nor ? CMON_NONE : 4096 * i + 1);
	assert_int_equal(c->vms_entry, 8192 * i);
	assert_int_equal(c->vms_exit, nor ? CMON_NONE : 8192 * i + 2);
	call_args(i, args, sizeof(args));
	assert_string_equal(c->args_json, args);
	assert_int_equal(c->n_args, 2);
	assert_string_equal(c->args[0].name, "buf");
	assert_string_equal(c->args[0].type, "const char *");
	assert_string_equal(c->args[0].kind, "string");
	snprintf(buf, sizeof(buf), "\"req %zu\"", i);
	assert_string_equal(c->args[0].value, buf);
	assert_string_equal(c->args[1].name, "len");
	assert_string_equal(c->args[1].type, "size_t");
	/* 64-bit values come back as written, not through a double. */
	snprintf(buf, sizeof(buf), "%" PRIu64, i == 7 ? UINT64_MAX : (uint64_t)i * 3);
	assert_string_equal(c->args[1].value, buf);
	assert_ptr_equal(cmon_call_arg(c, "len"), &c->args[1]);
	assert_null(cmon_call_arg(c, "nope"));
	assert_int_equal(c->n_blobs, 1);
	assert_int_equal(cmon_call_blob(c, "buf", &b), 0);
	assert_string_equal(b->name, "buf");
	assert_string_equal(b->dtype, "|u1");
	assert_int_equal(b->ndim, 1);
	assert_int_equal(b->shape[0], 64);
	assert_int_equal(b->truncated, i % 5 == 0);
	assert_int_equal(b->len, 64);
	for (size_t k = 0; k < 64; k++)
		assert_int_equal(((const unsigned char *)b->data)[k], (unsigned char)(i + k));
	assert_int_equal(cmon_call_blob(c, "other", &b), CMON_ERR_NOBLOB);
}

/* The writer's page cache is bounded (1 MiB): a capture's transaction of
 * a second's calls does not hold megabytes of dirty pages in cmon's
 * memory; SQLite spills them to the WAL (4 MiB here was 4 MB of every
 * flat-out capture's peak RSS). */
static void test_page_cache_bounded(void **state)
{
	char *dir = path_in("cache");
	struct store_writer *w;
	unsigned char data[64] = { 1 };
	const uint64_t shape[] = { 64 };
	struct store_blob b = { "buf", "|u1", 1, shape, false, data, sizeof(data) };
	int64_t f;

	(void)state;
	assert_int_equal(store_writer__create(dir, &test_meta, &w), 0);
	f = store_writer__add_function(w, "parse", "app", SIG_PARSE, true);
	sqlite3_memory_highwater(1);
	/* ~20 MB of rows, blobs and index entries in one transaction */
	for (size_t i = 0; i < 60000; i++) {
		char args[128];
		struct store_call c = {
			.func_id = f, .pid = 100, .tid = 100, .comm = "app", .ts_ns = T0 + i,
			.latency_ns = 10, .status = "ok", .ret_json = "0", .args_json = args,
			.blobs = &b, .n_blobs = 1,
		};

		call_args(i, args, sizeof(args));
		data[i % sizeof(data)] = (unsigned char)i;
		assert_int_equal(store_writer__add_call(w, &c), (int64_t)i + 1);
	}
	assert_in_range(sqlite3_memory_highwater(0), 0, 2 << 20);
	assert_int_equal(store_writer__close(w, 0), 0);
	free(dir);
}

static void test_roundtrip(void **state)
{
	char *dir = path_in("rt"), *path = write_roundtrip_store(dir);
	const struct cmon_function *fs, *f;
	const struct cmon_process *ps;
	struct cmon_store *s;
	struct cmon_iter *it;
	struct cmon_call *c;
	const char *k, *v;
	size_t n;
	int r;

	assert_string_equal(path, dir);
	assert_int_equal(cmon_store_open(path, &s), 0);
	/* meta */
	assert_string_equal(cmon_store_meta(s, "format_version"), "1");
	assert_string_equal(cmon_store_meta(s, "cmon_version"), "9.8.7");
	assert_string_equal(cmon_store_meta(s, "command_line"), "cmon capture -p 42 --func parse_*");
	assert_string_equal(cmon_store_meta(s, "target_path"), "/usr/bin/app");
	assert_string_equal(cmon_store_meta(s, "build_id"), "abcdef0123");
	assert_string_equal(cmon_store_meta(s, "hostname"), "host1");
	assert_string_equal(cmon_store_meta(s, "start_time_ns"), "1700000000000000000");
	assert_string_equal(cmon_store_meta(s, "end_time_ns"), "1700000005000000000");
	assert_string_equal(cmon_store_meta(s, "events_lost"), "0");
	assert_non_null(cmon_store_meta(s, "last_commit_ns"));
	assert_null(cmon_store_meta(s, "nope"));
	assert_int_equal(cmon_store_meta_count(s), 10);
	assert_int_equal(cmon_store_meta_at(s, 0, &k, &v), 0);
	assert_string_equal(k, "build_id"); /* key order */
	assert_int_equal(cmon_store_meta_at(s, 10, &k, &v), CMON_ERR_INVAL);
	/* functions */
	assert_int_equal(cmon_store_functions(s, &fs, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(fs[0].name, "parse");
	assert_string_equal(fs[0].module, "app");
	assert_int_equal(fs[0].calls, NCALLS);
	assert_int_equal(fs[0].typed, 1);
	assert_string_equal(fs[0].signature, SIG_PARSE);
	assert_string_equal(fs[0].ret_type, "int");
	assert_int_equal(fs[0].n_params, 2);
	assert_string_equal(fs[0].params[1].name, "len");
	assert_string_equal(fs[0].params[1].type, "size_t");
	assert_string_equal(fs[0].params[1].kind, "uint");
	assert_string_equal(fs[1].name, "sum");
	assert_string_equal(fs[1].module, "libx.so");
	assert_int_equal(fs[1].calls, NCALLS / 10);
	assert_int_equal(fs[1].n_params, 1); /* bare-array signature */
	assert_string_equal(fs[1].ret_type, "");
	assert_string_equal(fs[2].name, "none");
	assert_int_equal(fs[2].calls, 0);
	assert_int_equal(fs[2].typed, 0);
	assert_int_equal(fs[2].n_params, 0);
	assert_string_equal(fs[2].signature, "");
	assert_int_equal(cmon_store_function(s, "sum", &f), 0);
	assert_ptr_equal(f, &fs[1]);
	assert_int_equal(cmon_store_function(s, "libx.so:sum", &f), 0);
	assert_ptr_equal(f, &fs[1]);
	assert_int_equal(cmon_store_function(s, "app:sum", &f), CMON_ERR_NOFUNC);
	assert_int_equal(cmon_store_function(s, "summ", &f), CMON_ERR_NOFUNC);
	assert_non_null(strstr(cmon_store_error(s), "summ"));
	/* processes */
	assert_int_equal(cmon_store_processes(s, &ps, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ps[0].pid, 100);
	assert_string_equal(ps[0].comm, "app");
	assert_int_equal(ps[0].calls, NCALLS - (NCALLS + 2) / 3 + NCALLS / 10);
	assert_int_equal(ps[0].first_ts_ns, T0 + 1); /* sum's call 1 */
	assert_int_equal(ps[1].pid, 300);
	assert_null(ps[0].cgroup);
	assert_string_equal(ps[1].comm, "worker");
	assert_string_equal(ps[1].cgroup, "/pods/w");
	assert_int_equal(ps[1].calls, (NCALLS + 2) / 3);
	assert_int_equal(ps[1].first_ts_ns, T0);
	assert_int_equal(ps[1].last_ts_ns, T0 + 999 * 1000);
	/* every call, by number */
	for (size_t i = 0; i < NCALLS; i++) {
		assert_int_equal(cmon_store_call(s, "parse", i + 1, &c), 0);
		check_parse_call(c, i);
		cmon_call_free(c);
	}
	/* call number 0 is a bad argument (cmon.h), for both */
	assert_int_equal(cmon_store_call(s, "parse", 0, &c), CMON_ERR_INVAL);
	assert_null(c);
	assert_non_null(strstr(cmon_store_error(s), "no call 0"));
	it = (struct cmon_iter *)1;
	assert_int_equal(cmon_store_calls(s, "parse", 0, &it), CMON_ERR_INVAL);
	assert_null(it);
	assert_int_equal(cmon_store_call(s, "none", 0, &c), CMON_ERR_INVAL);
	assert_int_equal(cmon_store_call(s, "parse", NCALLS + 1, &c), CMON_ERR_NOCALL);
	assert_string_equal(cmon_store_error(s), "parse has 1000 calls: no call 1001");
	assert_int_equal(cmon_store_call(s, "none", 1, &c), CMON_ERR_NOCALL);
	/* ... and iterated, from call 990 */
	assert_int_equal(cmon_store_calls(s, "parse", 990, &it), 0);
	n = 989;
	while ((r = cmon_iter_next(it, &c)) == 1) {
		check_parse_call(c, n++);
		cmon_call_free(c);
	}
	assert_int_equal(r, 0);
	assert_int_equal(n, NCALLS);
	assert_int_equal(cmon_iter_next(it, &c), 0);
	cmon_iter_free(it);
	/* the int32 array */
	assert_int_equal(cmon_store_call(s, "sum", 51, &c), 0);
	{
		const struct cmon_blob *b;
		const int32_t *vals;

		assert_string_equal(c->ret, "0.1"); /* not 0.10000000000000001 */
		assert_string_equal(c->args[0].value, "\"0x10\"");
		assert_int_equal(cmon_call_blob(c, "v", &b), 0);
		assert_string_equal(b->dtype, "<i4");
		assert_int_equal(b->len, 16);
		vals = b->data;
		assert_int_equal(vals[0], 500);
		assert_int_equal(vals[1], -500);
		assert_int_equal(vals[2], INT32_MAX);
		assert_int_equal(vals[3], INT32_MIN);
	}
	cmon_call_free(c);
	cmon_store_close(s);
	/* The calls.db path opens as well as the folder. */
	{
		char *db = path_in("rt/calls.db");

		assert_int_equal(cmon_store_open(db, &s), 0);
		assert_int_equal(cmon_store_functions(s, &fs, &n), 0);
		assert_int_equal(n, 3);
		cmon_store_close(s);
		free(db);
	}
	free(path);
	free(dir);
}

/* Argument objects of every shape: order, extras, absent params, escapes. */
static void test_args_json(void **state)
{
	static const struct {
		const char *args;
		size_t n;
		const char *names[4];
		const char *values[4];
	} cases[] = {
		{ "{}", 2, { "a", "b" }, { NULL, NULL } },
		{ "{\"b\": 2, \"a\": 1}", 2, { "a", "b" }, { "1", "2" } },
		{ " { \"a\" : -0.5e+3 , \"x\" : [1, {\"y\": null}] } ", 3, { "a", "b", "x" },
		  { "-0.5e+3", NULL, "[1, {\"y\": null}]" } },
		{ "{\"a\": \"\\u00e9\\\"\", \"k\\u00e9y\\n\": true}", 3, { "a", "b", "k\xc3\xa9y\n" },
		  { "\"\\u00e9\\\"\"", NULL, "true" } },
		{ "{\"a\": -9223372036854775808, \"b\": 18446744073709551616}", 2, { "a", "b" },
		  { "-9223372036854775808", "18446744073709551616" } },
		{ "{\"\\ud83d\\ude00\": 1, \"a\": false}", 3, { "a", "b", "\xf0\x9f\x98\x80" },
		  { "false", NULL, "1" } },
	};
	static const char *const bad[] = {
		"", "[]", "{", "{\"a\"}", "{\"a\": }", "{\"a\": 1,}", "{\"a\": 01}", "{\"a\": 1} x",
		"{\"a\": \"\x01\"}", "{\"a\": \"\\x\"}", "{\"a\": tru}", "{a: 1}", "{\"a\": 1.}",
		"{\"a\": [1,]}", "{\"a\": \"\\u12\"}",
	};
	char *dir = path_in("args");
	struct store_writer *w;
	struct cmon_store *s;
	struct cmon_call *c;
	int64_t f, g;

	assert_int_equal(store_writer__create(dir, NULL, &w), 0);
	f = store_writer__add_function(w, "f", "m",
				       "{\"params\": [{\"name\": \"a\", \"type\": \"int\"},"
				       " {\"name\": \"b\"}]}", true);
	g = store_writer__add_function(w, "g", "m", "not json", true);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct store_call sc = { .func_id = f, .args_json = cases[i].args,
					 .latency_ns = STORE_NONE, .rss_exit = STORE_NONE };

		assert_int_equal(store_writer__add_call(w, &sc), (int64_t)i + 1);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct store_call sc = { .func_id = g, .args_json = bad[i] };

		assert_int_equal(store_writer__add_call(w, &sc), (int64_t)i + 1);
	}
	{
		struct store_call sc = { .func_id = g, .args_json = "{}", .ret_json = "{bad" };

		assert_int_equal(store_writer__add_call(w, &sc), (int64_t)ARRAY_SIZE(bad) + 1);
	}
	assert_int_equal(store_writer__close(w, 0), 0);

	assert_int_equal(cmon_store_open(dir, &s), 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(cmon_store_call(s, "f", i + 1, &c), 0);
		assert_int_equal(c->n_args, cases[i].n);
		for (size_t k = 0; k < cases[i].n; k++) {
			assert_string_equal(c->args[k].name, cases[i].names[k]);
			if (cases[i].values[k])
				assert_string_equal(c->args[k].value, cases[i].values[k]);
			else
				assert_null(c->args[k].value);
		}
		assert_string_equal(c->args[0].type, "int");
		assert_string_equal(c->args[1].type, "");
		assert_int_equal(c->latency_ns, CMON_NONE);
		assert_int_equal(c->rss_exit, CMON_NONE);
		assert_int_equal(c->rss_entry, 0);
		assert_string_equal(c->status, "ok");
		assert_null(c->ret);
		cmon_call_free(c);
	}
	/* A signature that is not JSON: no params, calls still readable; damaged
	 * argument or return JSON: an error naming the call. */
	for (size_t i = 0; i < ARRAY_SIZE(bad) + 1; i++) {
		c = (void *)1;
		assert_int_equal(cmon_store_call(s, "g", i + 1, &c), CMON_ERR_CORRUPT);
		assert_null(c);
		assert_non_null(strstr(cmon_store_error(s), "of g"));
	}
	cmon_store_close(s);
	free(dir);
}

static void test_run_n_and_modes(void **state)
{
	char *dir = path_in("run"), *slash = path_in("run///");
	static const char *const want[] = { "run", "run-1", "run-2" };
	struct store_writer *w;
	struct stat st;

	for (size_t i = 0; i < 3; i++) {
		char *exp = path_in(want[i]), *db;

		assert_int_equal(store_writer__create(i == 2 ? slash : dir, NULL, &w), 0);
		assert_string_equal(store_writer__path(w), exp);
		assert_int_equal(stat(exp, &st), 0);
		assert_true(S_ISDIR(st.st_mode));
		assert_int_equal(st.st_mode & 07777, 0700);
		assert_true(asprintf(&db, "%s/calls.db", exp) > 0);
		assert_int_equal(stat(db, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
		/* While writing: the WAL and its index are owner-only too. */
		{
			char *wal;

			assert_true(asprintf(&wal, "%s-wal", db) > 0);
			assert_int_equal(stat(wal, &st), 0);
			assert_int_equal(st.st_mode & 07777, 0600);
			free(wal);
		}
		assert_int_equal(store_writer__close(w, 0), 0);
		/* Closed: one self-contained file. */
		{
			char *wal;

			assert_true(asprintf(&wal, "%s-wal", db) > 0);
			assert_int_equal(stat(wal, &st), -1);
			free(wal);
		}
		free(db);
		free(exp);
	}
	/* A umask cannot loosen it, and a wide one is not used either. */
	{
		mode_t old = umask(0);
		char *exp = path_in("run-3");

		assert_int_equal(store_writer__create(dir, NULL, &w), 0);
		assert_string_equal(store_writer__path(w), exp);
		assert_int_equal(stat(exp, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0700);
		assert_int_equal(store_writer__close(w, 0), 0);
		umask(old);
		free(exp);
	}
	/* No parent: an error, nothing made. */
	{
		char *bad = path_in("no/such/parent");

		w = (void *)1;
		assert_int_equal(store_writer__create(bad, NULL, &w), -ENOENT);
		assert_null(w);
		free(bad);
	}
	free(slash);
	free(dir);
}

static void test_symlink_not_followed(void **state)
{
	char *target = path_in("victim"), *link = path_in("link"), *exp = path_in("link-1");
	struct store_writer *w;
	struct stat st;
	char got[256];
	ssize_t n;

	assert_int_equal(mkdir(target, 0755), 0);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(store_writer__create(link, NULL, &w), 0);
	assert_string_equal(store_writer__path(w), exp);
	assert_int_equal(store_writer__close(w, 0), 0);
	/* The link is still the same link, its target untouched and empty. */
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	n = readlink(link, got, sizeof(got) - 1);
	assert_true(n > 0);
	got[n] = '\0';
	assert_string_equal(got, target);
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_nlink, 2); /* no sub-folder was made in it */
	{
		char *inside = path_in("victim/calls.db");

		assert_int_equal(stat(inside, &st), -1);
		free(inside);
	}
	/* A dangling link: still not followed (it would create the target). */
	{
		char *dl = path_in("dangling"), *dt = path_in("dangling-target");
		char *dexp = path_in("dangling-1");

		assert_int_equal(symlink(dt, dl), 0);
		assert_int_equal(store_writer__create(dl, NULL, &w), 0);
		assert_string_equal(store_writer__path(w), dexp);
		assert_int_equal(store_writer__close(w, 0), 0);
		assert_int_equal(lstat(dt, &st), -1);
		free(dexp);
		free(dt);
		free(dl);
	}
	free(exp);
	free(link);
	free(target);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	if (len)
		assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* A small valid store: 2 functions, 20 calls with blobs. */
static char *small_store(const char *name)
{
	char *dir = path_in(name), *db;
	struct store_writer *w;
	int64_t f, g;

	assert_int_equal(store_writer__create(dir, &test_meta, &w), 0);
	f = store_writer__add_function(w, "f", "m", SIG_PARSE, true);
	g = store_writer__add_function(w, "g", "m", SIG_SUM, true);
	for (int i = 0; i < 20; i++) {
		char args[64];
		const uint64_t sh[] = { 8 };
		const char data[] = "0123456789abcdef";
		struct store_blob b = { "buf", i % 2 ? "<i2" : "|u1", 1, sh, false, data,
					i % 2 ? 16 : 8 };
		struct store_call c = { .func_id = i % 3 ? f : g, .pid = 7, .tid = (uint32_t)i,
					.comm = "x", .ts_ns = T0 + (uint64_t)i, .status = "ok",
					.ret_json = "1", .args_json = args, .blobs = &b,
					.n_blobs = 1 };

		snprintf(args, sizeof(args), "{\"buf\": \"s%d\", \"len\": %d}", i, i);
		assert_true(store_writer__add_call(w, &c) > 0);
	}
	assert_int_equal(store_writer__close(w, 0), 0);
	assert_true(asprintf(&db, "%s/calls.db", dir) > 0);
	free(dir);
	return db;
}

static bool valid_code(int err)
{
	return err <= CMON_OK && err >= CMON_ERR_NOBLOB;
}

/* Open PATH and read all of it; returns the first error (0: all read). */
static int read_everything(const char *path, unsigned flags)
{
	const struct cmon_function *fs;
	const struct cmon_process *ps;
	struct cmon_store *s;
	char msg[512];
	uint64_t sum = 0;
	size_t nf, np;
	int err, first = 0;

	err = cmon_store_open_ex(path, flags, &s, msg, sizeof(msg));
	if (err) {
		assert_true(valid_code(err));
		assert_null(s);
		assert_true(strlen(msg) > 0);
		return err;
	}
	for (size_t i = 0; i < cmon_store_meta_count(s); i++) {
		const char *k, *v;

		assert_int_equal(cmon_store_meta_at(s, i, &k, &v), 0);
		sum += strlen(k) + strlen(v);
	}
	err = cmon_store_processes(s, &ps, &np);
	assert_true(valid_code(err));
	first = first ? first : err;
	for (size_t i = 0; !err && i < np; i++)
		sum += strlen(ps[i].comm) + ps[i].calls;
	err = cmon_store_functions(s, &fs, &nf);
	assert_true(valid_code(err));
	first = first ? first : err;
	for (size_t i = 0; !err && i < nf; i++) {
		struct cmon_iter *it = NULL;
		struct cmon_call *c;
		char key[300];
		int r;

		sum += strlen(fs[i].name) + strlen(fs[i].module) + strlen(fs[i].signature);
		for (size_t p = 0; p < fs[i].n_params; p++)
			sum += strlen(fs[i].params[p].name) + strlen(fs[i].params[p].type);
		snprintf(key, sizeof(key), "%s:%s", fs[i].module, fs[i].name);
		r = cmon_store_calls(s, key, 1, &it);
		assert_true(valid_code(r));
		while (it && (r = cmon_iter_next(it, &c)) == 1) {
			sum += strlen(c->status) + strlen(c->comm) + strlen(c->args_json) + c->n;
			if (c->ret)
				sum += strlen(c->ret);
			for (size_t a = 0; a < c->n_args; a++)
				sum += strlen(c->args[a].name) + strlen(c->args[a].type) +
				       (c->args[a].value ? strlen(c->args[a].value) : 0);
			for (size_t b = 0; b < c->n_blobs; b++) {
				const unsigned char *d = c->blobs[b].data;

				for (size_t k = 0; k < c->blobs[b].len; k++)
					sum += d[k];
				for (unsigned k = 0; k < c->blobs[b].ndim; k++)
					sum += c->blobs[b].shape[k];
				sum += strlen(c->blobs[b].dtype) + strlen(c->blobs[b].name);
			}
			cmon_call_free(c);
		}
		assert_true(r == 0 || valid_code(r));
		if (r < 0) {
			assert_true(strlen(cmon_store_error(s)) > 0);
			first = first ? first : r;
		}
		cmon_iter_free(it);
		/* and by number, a few */
		for (uint64_t n = 1; n <= fs[i].calls && n <= 5; n++) {
			r = cmon_store_call(s, key, n, &c);
			assert_true(valid_code(r));
			if (!r)
				cmon_call_free(c);
			else
				first = first ? first : r;
		}
	}
	cmon_store_close(s);
	(void)sum;
	return first;
}

static void test_bad_files(void **state)
{
	char *db = small_store("bad-src"), *p = path_in("bad.db");
	struct cmon_store *s;
	size_t len;
	unsigned char *data = read_file(db, &len), rnd[8192];
	char msg[512];

	assert_int_equal(read_everything(db, CMON_OPEN_CHECK), 0);
	/* zero-length */
	write_file(p, "", 0);
	assert_int_equal(cmon_store_open_ex(p, 0, &s, msg, sizeof(msg)), CMON_ERR_NOTSTORE);
	assert_null(s);
	assert_non_null(strstr(msg, "empty"));
	assert_non_null(strstr(msg, p));
	/* random bytes */
	for (size_t i = 0; i < sizeof(rnd); i++)
		rnd[i] = (unsigned char)rng();
	write_file(p, rnd, sizeof(rnd));
	assert_int_equal(cmon_store_open_ex(p, 0, &s, msg, sizeof(msg)), CMON_ERR_NOTSTORE);
	assert_non_null(strstr(msg, "not an SQLite database"));
	/* random bytes behind a valid magic */
	memcpy(rnd, "SQLite format 3", 16);
	write_file(p, rnd, sizeof(rnd));
	assert_true(read_everything(p, 0) < 0);
	/* truncated: at a page boundary, mid-page, inside the header */
	{
		static const size_t cuts[] = { 4096, 5000, 60, 16 };

		for (size_t i = 0; i < ARRAY_SIZE(cuts); i++) {
			assert_true(cuts[i] < len);
			write_file(p, data, cuts[i]);
			assert_int_equal(cmon_store_open_ex(p, 0, &s, msg, sizeof(msg)),
					 CMON_ERR_CORRUPT);
			assert_non_null(strstr(msg, "truncated"));
		}
	}
	/* a foreign SQLite database */
	{
		sqlite3 *db2;

		unlink(p);
		assert_int_equal(sqlite3_open(p, &db2), SQLITE_OK);
		assert_int_equal(sqlite3_exec(db2, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db2);
		assert_int_equal(cmon_store_open_ex(p, 0, &s, msg, sizeof(msg)), CMON_ERR_NOTSTORE);
		assert_non_null(strstr(msg, "cmon"));
	}
	/* a store of another format version */
	{
		sqlite3 *db2;

		write_file(p, data, len);
		assert_int_equal(sqlite3_open(p, &db2), SQLITE_OK);
		assert_int_equal(sqlite3_exec(db2, "UPDATE meta SET value='2' WHERE key="
					      "'format_version'", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db2);
		assert_int_equal(cmon_store_open_ex(p, 0, &s, msg, sizeof(msg)), CMON_ERR_VERSION);
		assert_non_null(strstr(msg, "version '2'"));
	}
	/* a store from before processes had a cgroup column: read, none */
	{
		const struct cmon_process *ps;
		sqlite3 *db2;
		size_t np;

		write_file(p, data, len);
		assert_int_equal(sqlite3_open(p, &db2), SQLITE_OK);
		assert_int_equal(sqlite3_exec(db2, "ALTER TABLE processes DROP COLUMN cgroup",
					      NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db2);
		assert_int_equal(cmon_store_open(p, &s), 0);
		assert_int_equal(cmon_store_processes(s, &ps, &np), 0);
		assert_true(np > 0);
		for (size_t i = 0; i < np; i++)
			assert_null(ps[i].cgroup);
		cmon_store_close(s);
	}
	/* damage inside the values: a bad shape, a hole in the numbering */
	{
		sqlite3 *db2;
		struct cmon_call *c;

		write_file(p, data, len);
		assert_int_equal(sqlite3_open(p, &db2), SQLITE_OK);
		assert_int_equal(sqlite3_exec(db2, "UPDATE blobs SET shape='[8,' WHERE call_id ="
					      " (SELECT id FROM calls WHERE func_id = 1 AND n = 1);"
					      " DELETE FROM calls WHERE func_id = 1 AND n = 2",
					      NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(db2);
		assert_int_equal(cmon_store_open(p, &s), 0);
		assert_int_equal(cmon_store_call(s, "f", 1, &c), CMON_ERR_CORRUPT);
		assert_non_null(strstr(cmon_store_error(s), "shape '[8,'"));
		assert_int_equal(cmon_store_call(s, "f", 2, &c), CMON_ERR_CORRUPT);
		assert_non_null(strstr(cmon_store_error(s), "call 2 of f is missing"));
		assert_int_equal(cmon_store_call(s, "f", 3, &c), 0);
		assert_int_equal(c->n, 3);
		cmon_call_free(c);
		cmon_store_close(s);
	}
	/* a missing file, a folder without calls.db, bad arguments */
	assert_int_equal(cmon_store_open_ex("/nonexistent/x", 0, &s, msg, sizeof(msg)),
			 CMON_ERR_NOENT);
	assert_int_equal(cmon_store_open_ex(tmp_root, 0, &s, msg, sizeof(msg)), CMON_ERR_NOTSTORE);
	assert_non_null(strstr(msg, "no calls.db"));
	assert_int_equal(cmon_store_open(NULL, &s), CMON_ERR_INVAL);
	assert_int_equal(cmon_store_open(db, NULL), CMON_ERR_INVAL);
	cmon_store_close(NULL);
	cmon_call_free(NULL);
	cmon_iter_free(NULL);
	assert_non_null(cmon_strerror(-999));
	assert_string_equal(cmon_strerror(CMON_ERR_CORRUPT), "store is truncated or corrupted");
	free(data);
	free(p);
	free(db);
}

/* A copy of DATA at P with SQL applied to it. */
static void damaged_copy(const char *p, const unsigned char *data, size_t len, const char *sql)
{
	sqlite3 *db2;

	unlink(p);
	write_file(p, data, len);
	assert_int_equal(sqlite3_open(p, &db2), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db2, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db2);
}

/* Call 1 of f and every call of f by the iterator: CMON_ERR_CORRUPT with
 * NEEDLE in the message (NULL: both read, 0). */
static void expect_f(const char *p, const char *needle)
{
	struct cmon_store *s;
	struct cmon_iter *it;
	struct cmon_call *c = NULL;
	int r;

	assert_int_equal(cmon_store_open(p, &s), 0);
	r = cmon_store_call(s, "f", 1, &c);
	if (needle) {
		assert_int_equal(r, CMON_ERR_CORRUPT);
		assert_null(c);
		if (!strstr(cmon_store_error(s), needle))
			fail_msg("'%s' not in '%s'", needle, cmon_store_error(s));
	} else {
		assert_int_equal(r, 0);
		cmon_call_free(c);
	}
	assert_int_equal(cmon_store_calls(s, "f", 1, &it), 0);
	while ((r = cmon_iter_next(it, &c)) == 1)
		cmon_call_free(c);
	assert_int_equal(r, needle ? CMON_ERR_CORRUPT : 0);
	cmon_iter_free(it);
	cmon_store_close(s);
}

/* A blob whose shape disagrees with its data is damage: a client indexing
 * DATA by SHAPE would read out of bounds.  f's call 1 holds "<i2" [8] (16
 * bytes). */
static void test_blob_shape_checked(void **state)
{
	char *db = small_store("shape-src"), *p = path_in("shape.db");
	size_t len;
	unsigned char *data = read_file(db, &len);
#define CALL1 " WHERE call_id = (SELECT id FROM calls WHERE func_id = 1 AND n = 1)"

	(void)state;
	expect_f(db, NULL);
	/* the same bytes read as another shape of the same size: fine */
	damaged_copy(p, data, len, "UPDATE blobs SET shape = '[2, 4]'" CALL1);
	expect_f(p, NULL);
	damaged_copy(p, data, len, "UPDATE blobs SET shape = '[100]'" CALL1);
	expect_f(p, "shape '[100]' of <i2, 200 bytes, but holds 16");
	/* truncated or not, the shape is that of what is there */
	damaged_copy(p, data, len, "UPDATE blobs SET shape = '[100]', truncated = 1" CALL1);
	expect_f(p, "holds 16");
	damaged_copy(p, data, len, "UPDATE blobs SET shape = '[4]'" CALL1);
	expect_f(p, "8 bytes, but holds 16");
	/* products that wrap around 64 bits */
	damaged_copy(p, data, len, "UPDATE blobs SET shape = '[4294967296,4294967296]'" CALL1);
	expect_f(p, "too large");
	damaged_copy(p, data, len, "UPDATE blobs SET shape = '[9223372036854775808]'" CALL1);
	expect_f(p, "too large");
	damaged_copy(p, data, len, "UPDATE blobs SET shape = '[4294967296, 4294967296, 0]'" CALL1);
	expect_f(p, "0 bytes, but holds 16");
	/* a scalar (no dims) is one element */
	damaged_copy(p, data, len, "UPDATE blobs SET shape = '[]'" CALL1);
	expect_f(p, "2 bytes, but holds 16");
	damaged_copy(p, data, len, "UPDATE blobs SET dtype = '<i8'" CALL1);
	expect_f(p, "64 bytes, but holds 16");
	damaged_copy(p, data, len, "UPDATE blobs SET dtype = 'x4'" CALL1);
	expect_f(p, "dtype 'x4'");
	/* data that is not a blob */
	damaged_copy(p, data, len, "UPDATE blobs SET data = CAST(data AS TEXT)" CALL1);
	expect_f(p, "holds no blob");
	damaged_copy(p, data, len, "UPDATE blobs SET data = NULL, shape = '[0]'" CALL1);
	expect_f(p, "holds no blob");
	damaged_copy(p, data, len, "UPDATE blobs SET data = 1234567890123456, shape = '[4]'" CALL1);
	expect_f(p, "holds no blob");
	/* an empty blob of shape [0] is whole */
	damaged_copy(p, data, len, "UPDATE blobs SET data = x'', shape = '[0]'" CALL1);
	expect_f(p, NULL);
#undef CALL1
	free(data);
	free(p);
	free(db);
}

/* Iterate f from FIRST: the error (0: read to the end) and the calls read. */
static int iterate_f(const char *p, uint64_t first, uint64_t *got, char *msg, size_t cap)
{
	struct cmon_store *s;
	struct cmon_iter *it;
	struct cmon_call *c;
	int r;

	*got = 0;
	assert_int_equal(cmon_store_open(p, &s), 0);
	assert_int_equal(cmon_store_calls(s, "f", first, &it), 0);
	while ((r = cmon_iter_next(it, &c)) == 1) {
		assert_int_equal(c->n, first + *got);
		(*got)++;
		cmon_call_free(c);
	}
	/* and it stays at its end */
	assert_int_equal(cmon_iter_next(it, &c), 0);
	snprintf(msg, cap, "%s", r ? cmon_store_error(s) : "");
	cmon_iter_free(it);
	cmon_store_close(s);
	return r;
}

/* A gap or a repeat in a function's call numbers is damage: the iterator
 * says so, as cmon_store_call does, rather than skip or merge calls (export,
 * stats and report read through it).  f has calls 1..13. */
static void test_iter_numbering_checked(void **state)
{
	char *db = small_store("num-src"), *p = path_in("num.db");
	size_t len;
	unsigned char *data = read_file(db, &len);
	char msg[512];
	uint64_t got;
	static const struct {
		const char *sql;
		uint64_t first, got;
		const char *needle; /* NULL: read whole */
	} cases[] = {
		{ "SELECT 1", 1, 13, NULL },
		/* call 1 moved to another function: its first call is missing */
		{ "UPDATE calls SET func_id = 99 WHERE func_id = 1 AND n = 1", 1, 0,
		  "calls of f: call 1 is missing" },
		{ "UPDATE calls SET func_id = 99 WHERE func_id = 1 AND n = 1", 2, 12, NULL },
		/* a hole in the middle */
		{ "DELETE FROM calls WHERE func_id = 1 AND n = 5", 1, 4,
		  "calls of f: call 5 is missing" },
		{ "DELETE FROM calls WHERE func_id = 1 AND n = 5", 3, 2, "call 5 is missing" },
		{ "DELETE FROM calls WHERE func_id = 1 AND n = 5", 6, 8, NULL },
		/* the last call renumbered past a hole */
		{ "UPDATE calls SET n = 14 WHERE func_id = 1 AND n = 13", 1, 12,
		  "call 13 is missing" },
		/* a repeat, without the unique index */
		{ "DROP INDEX calls_func_n; UPDATE calls SET n = 1 WHERE func_id = 1 AND n = 2", 1,
		  1, "calls of f: call 1 comes again after call 1" },
		{ "DROP INDEX calls_func_n; UPDATE calls SET n = 7 WHERE func_id = 1 AND n = 13", 1,
		  7, "call 7 comes again after call 7" },
		/* a number that is not one */
		{ "UPDATE calls SET n = 'x' WHERE func_id = 1 AND n = 13", 1, 12,
		  "a call numbered 'x'" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int r;

		damaged_copy(p, data, len, cases[i].sql);
		r = iterate_f(p, cases[i].first, &got, msg, sizeof(msg));
		if (cases[i].needle) {
			assert_int_equal(r, CMON_ERR_CORRUPT);
			if (!strstr(msg, cases[i].needle))
				fail_msg("case %zu: '%s' not in '%s'", i, cases[i].needle, msg);
			assert_non_null(strstr(msg, "store is corrupted"));
		} else {
			assert_int_equal(r, 0);
		}
		if (got != cases[i].got)
			fail_msg("case %zu: %" PRIu64 " calls read, not %" PRIu64, i, got,
				 cases[i].got);
	}
	free(data);
	free(p);
	free(db);
}

/* A FIFO as calls.db or a side file is refused before anything opens it:
 * open(2) of a FIFO waits for a writer forever. */
static void test_fifo_refused(void **state)
{
	static const char *const sides[] = { "-journal", "-wal", "-shm", "" };
	char *db = small_store("fifo-src"), *dir = path_in("fifo-src"), *p;
	struct cmon_store *s;
	char msg[512];

	(void)state;
	alarm(20); /* a hang fails the test (SIGALRM) rather than the run */
	for (size_t i = 0; i < ARRAY_SIZE(sides); i++) {
		assert_true(asprintf(&p, "%s%s", db, sides[i]) > 0);
		if (!*sides[i]) {
			char *moved = path_in("fifo-src.db");

			assert_int_equal(rename(db, moved), 0);
			free(moved);
		}
		assert_int_equal(mkfifo(p, 0600), 0);
		assert_int_equal(cmon_store_open_ex(dir, 0, &s, msg, sizeof(msg)),
				 CMON_ERR_NOTSTORE);
		assert_null(s);
		assert_non_null(strstr(msg, p));
		assert_non_null(strstr(msg, "is a FIFO, not a regular file"));
		/* the file named directly too */
		assert_int_equal(cmon_store_open_ex(db, 0, &s, msg, sizeof(msg)),
				 CMON_ERR_NOTSTORE);
		if (*sides[i])
			assert_int_equal(unlink(p), 0);
		free(p);
	}
	alarm(0);
	free(dir);
	free(db);
}

/* A function stored without a signature: export's columns are the first
 * call's argument names, and the rows after it are read by them (they
 * pointed into the first call, freed before the second row was read:
 * AddressSanitizer's heap-use-after-free in the sanitized build). */
static void test_export_columns_from_first_call(void **state)
{
	static const char *const args[3] = { "{\"a\": 1, \"b\": 2}", "{\"a\": 3, \"b\": 4}",
					      "{\"a\": 5, \"b\": 6}" };
	char *dir = path_in("nosig"), *out = path_in("nosig-csv"), *csv = path_in("nosig-csv/f.csv");
	char *argv[] = { "export", dir, "-F", "csv", "-o", out, NULL };
	struct store_writer *w;
	size_t len;
	char *text;
	int64_t f;

	assert_int_equal(store_writer__create(dir, &test_meta, &w), 0);
	f = store_writer__add_function(w, "f", "app", NULL, false);
	for (size_t i = 0; i < 3; i++) {
		struct store_call c = {
			.func_id = f, .pid = 7, .tid = 7, .comm = "app", .ts_ns = T0 + i,
			.latency_ns = 10, .status = "ok", .ret_json = "0", .args_json = args[i],
			.rss_entry = 1, .rss_exit = 1, .vms_entry = 2, .vms_exit = 2,
		};

		assert_int_equal(store_writer__add_call(w, &c), (int64_t)i + 1);
	}
	assert_int_equal(store_writer__close(w, T0 + 10), 0);
	assert_int_equal(cmd_export(6, argv), 0);
	text = read_file(csv, &len);
	text = realloc(text, len + 1);
	assert_non_null(text);
	text[len] = '\0';
	assert_string_equal(text,
			    "schema,ts_ns,pid,tid,comm,func,depth,ret,latency_ns,latency_lt_ns,rss_entry,"
			    "rss_exit,vms_entry,vms_exit,status,module,args.a,args.b,truncated,faults,"
			    "unavailable,call\r\n"
			    "1,1700000000000000000,7,7,app,f,,0,10,,1,1,2,2,ok,app,1,2,,,,1\r\n"
			    "1,1700000000000000001,7,7,app,f,,0,10,,1,1,2,2,ok,app,3,4,,,,2\r\n"
			    "1,1700000000000000002,7,7,app,f,,0,10,,1,1,2,2,ok,app,5,6,,,,3\r\n");
	free(text);
	free(csv);
	free(out);
	free(dir);
}

/* 2,000 damaged copies of a valid store (1 to 4 bytes flipped at random
 * places, fixed seed), and 200 random truncations: every one opens or is
 * refused with a code, and reads through without a crash. */
static void test_fuzz(void **state)
{
	char *db = small_store("fuzz-src"), *p = path_in("fuzz.db");
	size_t len, errors = 0, opened = 0;
	unsigned char *data = read_file(db, &len), *copy = malloc(len);

	assert_non_null(copy);
	rng_state = 0x1234567887654321ull;
	for (int iter = 0; iter < 2000; iter++) {
		int nflip = 1 + (int)(rng() % 4), err;

		memcpy(copy, data, len);
		for (int k = 0; k < nflip; k++)
			copy[rng() % len] ^= (unsigned char)(1 + rng() % 255);
		write_file(p, copy, len);
		err = read_everything(p, iter % 10 == 0 ? CMON_OPEN_CHECK : 0);
		if (err)
			errors++;
		else
			opened++;
	}
	for (int iter = 0; iter < 200; iter++) {
		write_file(p, data, rng() % len);
		if (read_everything(p, 0))
			errors++;
	}
	/* Both outcomes happen (a flip in unused space is harmless). */
	assert_true(errors > 200);
	assert_true(opened > 100);
	free(copy);
	free(data);
	free(p);
	free(db);
}

/* A child writes calls without end, committing every 0.2 s and telling the
 * parent how many calls each commit made durable; the parent reads the live
 * store, then kills the child with SIGKILL mid-batch: the store opens and
 * has at least the calls of the last commit the parent heard of. */
static void test_crash(void **state)
{
	char *dir = path_in("crash"), path[640];
	int fds[2];
	pid_t pid;
	uint64_t committed = 0, seen_live = 0;
	struct cmon_store *s;
	const struct cmon_function *fs;
	size_t n;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct store_writer *w;
		struct timespec t0, t;
		int64_t f;
		uint64_t i = 0;
		char msg[600];

		close(fds[0]);
		if (store_writer__create(dir, &test_meta, &w))
			_exit(1);
		f = store_writer__add_function(w, "hot", "app", SIG_PARSE, true);
		snprintf(msg, sizeof(msg), "P%s\n", store_writer__path(w));
		if (write(fds[1], msg, strlen(msg)) < 0)
			_exit(1);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			unsigned char data[64] = { 0 };
			const uint64_t sh[] = { 64 };
			struct store_blob b = { "buf", "|u1", 1, sh, false, data, 64 };
			struct store_call c = { .func_id = f, .pid = 9, .tid = 9, .comm = "c",
						.ts_ns = T0 + i, .status = "ok", .ret_json = "0",
						.args_json = "{\"buf\": \"x\", \"len\": 64}",
						.blobs = &b, .n_blobs = 1 };

			memcpy(data, &i, sizeof(i));
			if (store_writer__add_call(w, &c) < 0)
				_exit(1);
			i++;
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000000000ll + (t.tv_nsec - t0.tv_nsec) >=
			    200000000ll) {
				if (store_writer__commit(w))
					_exit(1);
				snprintf(msg, sizeof(msg), "C%" PRIu64 "\n", i);
				if (write(fds[1], msg, strlen(msg)) < 0)
					_exit(1);
				t0 = t;
			}
		}
	}
	close(fds[1]);
	{
		FILE *in = fdopen(fds[0], "r");
		char line[600];
		int commits = 0;

		assert_non_null(in);
		assert_non_null(fgets(line, sizeof(line), in));
		assert_int_equal(line[0], 'P');
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof(path), "%s", line + 1);
		while (commits < 5 && fgets(line, sizeof(line), in)) {
			assert_int_equal(line[0], 'C');
			committed = strtoull(line + 1, NULL, 10);
			commits++;
			if (commits == 3) {
				/* A reader while the writer runs sees what is committed. */
				assert_int_equal(cmon_store_open(path, &s), 0);
				assert_int_equal(cmon_store_functions(s, &fs, &n), 0);
				seen_live = fs[0].calls;
				assert_true(seen_live >= committed);
				cmon_store_close(s);
			}
		}
		assert_int_equal(commits, 5);
		/* Let it run on, mid-batch, then kill it. */
		usleep(100000);
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, NULL, 0), pid);
		/* The last line may be one we did not read yet: take it too. */
		while (fgets(line, sizeof(line), in))
			if (line[0] == 'C' && strchr(line, '\n'))
				committed = strtoull(line + 1, NULL, 10);
		fclose(in);
	}
	assert_true(committed > 0);
	assert_int_equal(read_everything(path, CMON_OPEN_CHECK), 0);
	assert_int_equal(cmon_store_open(path, &s), 0);
	assert_null(cmon_store_meta(s, "end_time_ns"));
	assert_non_null(cmon_store_meta(s, "last_commit_ns"));
	assert_int_equal(cmon_store_functions(s, &fs, &n), 0);
	assert_int_equal(n, 1);
	assert_true(fs[0].calls >= committed);
	assert_true(fs[0].calls >= seen_live);
	{
		struct cmon_call *c;
		const struct cmon_blob *b;
		uint64_t v;

		/* The last committed call is whole. */
		assert_int_equal(cmon_store_call(s, "hot", committed, &c), 0);
		assert_int_equal(cmon_call_blob(c, "buf", &b), 0);
		assert_int_equal(b->len, 64);
		memcpy(&v, b->data, sizeof(v));
		assert_int_equal(v, committed - 1);
		cmon_call_free(c);
	}
	cmon_store_close(s);
	free(dir);
}

static void test_writer_errors(void **state)
{
	char *dir = path_in("werr");
	struct store_writer *w;
	const uint64_t sh[] = { 1 };
	struct store_blob nb = { NULL, "|u1", 1, sh, false, "x", 1 };
	struct store_call c = { .func_id = 1 };

	assert_int_equal(store_writer__create(dir, NULL, &w), 0);
	assert_int_equal(store_writer__add_call(w, &c), -EINVAL); /* no function yet */
	assert_int_equal(store_writer__add_function(w, NULL, "m", NULL, false), -EINVAL);
	assert_int_equal(store_writer__add_function(w, "f", NULL, NULL, false), 1);
	c.func_id = 2;
	assert_int_equal(store_writer__add_call(w, &c), -EINVAL);
	c.func_id = 1;
	c.blobs = &nb;
	c.n_blobs = 1;
	assert_int_equal(store_writer__add_call(w, &c), -EINVAL); /* blob without a name */
	c.n_blobs = 0;
	assert_int_equal(store_writer__add_call(w, &c), 1);
	assert_int_equal(store_writer__maybe_commit(w, 0), 0);
	assert_int_equal(store_writer__set_meta(w, "k", NULL), -EINVAL);
	assert_int_equal(store_writer__close(w, 0), 0);
	assert_int_equal(store_writer__close(NULL, 0), 0);
	{
		/* Same name in two modules: MODULE:NAME picks one. */
		struct cmon_store *s;
		const struct cmon_function *f;
		struct cmon_call *call;
		char *d2 = path_in("amb");
		struct store_call a = { .func_id = 1, .args_json = "{}" };

		assert_int_equal(store_writer__create(d2, NULL, &w), 0);
		assert_int_equal(store_writer__add_function(w, "dup", "liba.so", NULL, false), 1);
		assert_int_equal(store_writer__add_function(w, "dup", "libb.so", NULL, false), 2);
		assert_int_equal(store_writer__add_function(w, "ns::x::y(int)", "app", NULL, true),
				 3);
		assert_int_equal(store_writer__add_call(w, &a), 1);
		a.func_id = 2;
		assert_int_equal(store_writer__add_call(w, &a), 1);
		assert_int_equal(store_writer__add_call(w, &a), 2);
		a.func_id = 3;
		assert_int_equal(store_writer__add_call(w, &a), 1);
		assert_int_equal(store_writer__close(w, 0), 0);
		assert_int_equal(cmon_store_open(d2, &s), 0);
		assert_int_equal(cmon_store_function(s, "dup", &f), CMON_ERR_AMBIGUOUS);
		assert_non_null(strstr(cmon_store_error(s), "MODULE:dup"));
		assert_int_equal(cmon_store_function(s, "libb.so:dup", &f), 0);
		assert_int_equal(f->calls, 2);
		assert_int_equal(cmon_store_function(s, "liba.so:dup", &f), 0);
		assert_int_equal(f->calls, 1);
		assert_int_equal(cmon_store_function(s, "ns::x::y(int)", &f), 0);
		assert_int_equal(cmon_store_function(s, "app:ns::x::y(int)", &f), 0);
		assert_int_equal(cmon_store_call(s, "libb.so:dup", 2, &call), 0);
		assert_string_equal(call->module, "libb.so");
		cmon_call_free(call);
		cmon_store_close(s);
		free(d2);
	}
	free(dir);
}

static void test_dtype(void **state)
{
	static const struct {
		const char *dtype;
		size_t size;
		int numeric;
	} cases[] = {
		{ "<i4", 4, 1 }, { "|u1", 1, 1 }, { "<f8", 8, 1 }, { ">i2", 2, 1 }, { "=u8", 8, 1 },
		{ "i4", 4, 1 }, { "|b1", 1, 1 }, { "<c16", 16, 1 }, { "<f2", 2, 1 },
		{ "|S16", 16, 0 }, { "<U4", 16, 0 }, { "|V8", 8, 0 }, { "<i3", 3, 0 },
		{ "", 0, 0 }, { "<", 0, 0 }, { "<x4", 0, 0 }, { "<i", 0, 0 }, { "<i0", 0, 0 },
		{ "<i4 ", 0, 0 }, { "<<i4", 0, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(cmon_dtype_size(cases[i].dtype), cases[i].size);
		assert_int_equal(cmon_dtype_numeric(cases[i].dtype), cases[i].numeric);
	}
	assert_int_equal(cmon_dtype_size(NULL), 0);
}

static void test_npy_header(void **state)
{
	static const struct {
		const char *dtype;
		unsigned ndim;
		uint64_t shape[3];
		const char *dict;
	} cases[] = {
		{ "<i4", 1, { 5 }, "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }" },
		{ "<f8", 2, { 2, 3 }, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }" },
		{ "|u1", 0, { 0 }, "{'descr': '|u1', 'fortran_order': False, 'shape': (), }" },
		{ "=i8", 1, { 0 }, "{'descr': '<i8', 'fortran_order': False, 'shape': (0,), }" },
		{ "i2", 3, { 1, 2, 3 },
		  "{'descr': '<i2', 'fortran_order': False, 'shape': (1, 2, 3), }" },
		{ ">u4", 1, { 7 }, "{'descr': '>u4', 'fortran_order': False, 'shape': (7,), }" },
		{ "<b1", 1, { 7 }, "{'descr': '|b1', 'fortran_order': False, 'shape': (7,), }" },
	};
	char buf[256];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int n = store_npy__header(cases[i].dtype, cases[i].ndim, cases[i].shape, buf,
					  sizeof(buf));
		size_t dl = strlen(cases[i].dict);

		assert_true(n > 0);
		assert_int_equal(n % 64, 0);
		assert_int_equal((size_t)n, (10 + dl + 1 + 63) / 64 * 64);
		assert_memory_equal(buf, "\x93NUMPY\x01\x00", 8);
		assert_int_equal((unsigned char)buf[8] | (unsigned char)buf[9] << 8, n - 10);
		assert_memory_equal(buf + 10, cases[i].dict, dl);
		for (int k = 10 + (int)dl; k < n - 1; k++)
			assert_int_equal(buf[k], ' ');
		assert_int_equal(buf[n - 1], '\n');
	}
	assert_int_equal(store_npy__header("|S4", 1, cases[0].shape, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(store_npy__header("<i4", 1, cases[0].shape, buf, 32), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_args_json),
		cmocka_unit_test(test_run_n_and_modes),
		cmocka_unit_test(test_symlink_not_followed),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_blob_shape_checked),
		cmocka_unit_test(test_iter_numbering_checked),
		cmocka_unit_test(test_fifo_refused),
		cmocka_unit_test(test_export_columns_from_first_call),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_crash),
		cmocka_unit_test(test_writer_errors),
		cmocka_unit_test(test_dtype),
		cmocka_unit_test(test_page_cache_bounded),
		cmocka_unit_test(test_npy_header),
	};

	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
