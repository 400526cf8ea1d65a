// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_router.c: the router and its sinks (output/router.h, sink.h): records
 * reach the sink of their process, what reached each is counted only once a
 * flush carries it, a failed sink refuses the rest, and a format's writer
 * (file_sink) and any other sink are driven the same way.
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
#include "output/router.h"
#include "output/sink.h"

/* A sink that keeps what it was given; each record is 10 bytes long. */
struct fake_sink {
	struct out_sink base;
	char path[64];
	pid_t pid;
	uint32_t funcs[16];
	size_t n;
	int write_err;   /* returned by write */
	int flush_err;   /* returned by flush, with on_disk */
	uint64_t on_disk;
	bool view;       /* holds its records until the end (bytes UINT64_MAX) */
	bool count_only; /* keeps no function ids: counts (writes), any number */
	size_t writes;
	int finished, flushes;
};

static struct fake_sink *made[8];
static size_t n_made;
static int open_err; /* the next open fails with it */

static int fake_write(struct out_sink *s, const struct call_record *rec, uint32_t func_id)
{
	struct fake_sink *f = (struct fake_sink *)s;

	if (f->write_err)
		return f->write_err;
	if (f->count_only) {
		f->writes++;
		return 0;
	}
	assert_true(f->n < 16);
	assert_int_equal(rec->pid, f->pid ? (uint32_t)f->pid : rec->pid);
	f->funcs[f->n++] = func_id;
	return 0;
}

static uint64_t fake_bytes(const struct out_sink *s)
{
	const struct fake_sink *f = (const struct fake_sink *)s;

	return f->view ? UINT64_MAX : 10 * (f->n + f->writes);
}

static int fake_finish(struct out_sink *s)
{
	((struct fake_sink *)s)->finished++;
	return 0;
}

static int fake_flush(struct out_sink *s, uint64_t *on_disk)
{
	struct fake_sink *f = (struct fake_sink *)s;

	f->flushes++;
	*on_disk = f->flush_err ? f->on_disk : 0;
	return f->flush_err;
}

static void fake_free(struct out_sink *s)
{
	struct fake_sink *f = (struct fake_sink *)s;

	for (size_t i = 0; i < n_made; i++)
		if (made[i] == f)
			made[i] = NULL;
	free(f);
}

static const struct out_sink_ops fake_ops = {
	.write = fake_write,
	.bytes = fake_bytes,
	.finish = fake_finish,
	.flush = fake_flush,
	.free = fake_free,
};

static struct fake_sink *fake_new(pid_t pid, const char *path)
{
	struct fake_sink *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->base.ops = &fake_ops;
	f->pid = pid;
	snprintf(f->path, sizeof(f->path), "%s", path);
	assert_true(n_made < 8);
	made[n_made++] = f;
	return f;
}

static int fake_open(void *ctx, pid_t pid, uint32_t func, const char *path,
		     struct out_sink **out)
{
	int *opens = ctx;

	(*opens)++;
	*out = NULL;
	if (open_err) {
		int err = open_err;

		open_err = 0;
		return err;
	}
	*out = &fake_new(pid, path)->base;
	return 0;
}

static void reset(void)
{
	n_made = 0;
	open_err = 0;
	memset(made, 0, sizeof(made));
}

static struct call_record rec_of(uint32_t pid)
{
	return (struct call_record){ .pid = pid, .tid = pid, .comm = "t", .func = "f",
				     .module = "m", .status = CALL_OK };
}

/* One output: every record to it, counted at the flush, per function. */
static void test_single(void **state)
{
	struct out_router_opts o = { .n_funcs = 3 };
	struct fake_sink *f;
	struct out_router *r;
	struct call_record rec = rec_of(7);

	reset();
	f = fake_new(0, "");
	r = out_router__single(&f->base, &o);
	assert_non_null(r);
	assert_int_equal(out_router__write(r, &rec, 2), 0);
	assert_int_equal(out_router__write(r, &rec, 0), 0);
	assert_int_equal(out_router__write(r, &rec, 2), 0);
	assert_int_equal(out_router__written(r), 0); /* not flushed yet */
	assert_int_equal(out_router__settle(r, false), 0);
	assert_int_equal(f->flushes, 1);
	assert_int_equal(f->finished, 0);
	assert_int_equal(out_router__written(r), 3);
	assert_int_equal(out_router__written_func(r, 2), 2);
	assert_int_equal(out_router__written_func(r, 0), 1);
	assert_int_equal(out_router__written_func(r, 1), 0);
	assert_int_equal(out_router__settle(r, true), 0);
	assert_int_equal(f->finished, 1);
	assert_int_equal(out_router__unwritten(r), 0);
	assert_int_equal(out_router__files(r), 0);
	out_router__free(r);
	assert_null(made[0]); /* the router freed its sink */
}

/* A drain writes with no flush between (a spool's worth at the end):
 * past 16,384 records pending the route is settled as it goes, so what
 * the router keeps of them (its ledger) stays bounded; a view, which holds
 * its records to the end anyway, is not flushed before then. */
static void test_long_drain_settles_as_it_goes(void **state)
{
	struct out_router_opts o = { .n_funcs = 1 };
	struct call_record rec = rec_of(7);

	for (int view = 0; view < 2; view++) {
		struct fake_sink *f;
		struct out_router *r;

		reset();
		f = fake_new(0, "");
		f->count_only = true;
		f->view = view;
		r = out_router__single(&f->base, &o);
		assert_non_null(r);
		for (int i = 0; i < 40000; i++)
			assert_int_equal(out_router__write(r, &rec, 0), 0);
		assert_int_equal(f->flushes, view ? 0 : 2);
		assert_int_equal(out_router__written(r), view ? 0 : 2 * 16384);
		assert_int_equal(out_router__settle(r, true), 0);
		assert_int_equal(out_router__written(r), 40000);
		out_router__free(r);
	}
}

/* One sink per process, named from the template, made at its first record. */
static void test_per_process(void **state)
{
	int opens = 0;
	struct out_router_opts o = { .n_funcs = 2, .open = fake_open, .open_ctx = &opens };
	struct out_router *r;
	struct call_record a = rec_of(10), b = rec_of(20);

	reset();
	r = out_router__per_process("run.%p.csv", &o);
	assert_non_null(r);
	assert_int_equal(out_router__write(r, &a, 0), 0);
	assert_int_equal(out_router__write(r, &b, 1), 0);
	assert_int_equal(out_router__write(r, &a, 1), 0);
	assert_int_equal(opens, 2);
	assert_int_equal(n_made, 2);
	assert_string_equal(made[0]->path, "run.10.csv");
	assert_string_equal(made[1]->path, "run.20.csv");
	assert_int_equal(made[0]->n, 2);
	assert_int_equal(made[0]->funcs[1], 1);
	assert_int_equal(made[1]->n, 1);
	assert_int_equal(out_router__settle(r, true), 0);
	assert_int_equal(made[0]->finished, 1);
	assert_int_equal(made[1]->finished, 1);
	assert_int_equal(out_router__written(r), 3);
	assert_int_equal(out_router__written_func(r, 1), 2);
	assert_int_equal(out_router__files(r), 2);
	out_router__free(r);
}

/* -o %f: a sink per function, whatever the process; two functions of one
 * name (in two libraries) do not share a file: the later one's gets its
 * number. */
static void test_per_function(void **state)
{
	static const char *const names[] = { "parse", "send", "parse" };
	int opens = 0;
	struct out_router_opts o = { .n_funcs = 3, .func_names = names, .open = fake_open,
				     .open_ctx = &opens };
	struct out_router *r;
	struct call_record a = rec_of(10), b = rec_of(20);

	reset();
	r = out_router__per_process("x.%f.csv", &o);
	assert_non_null(r);
	assert_int_equal(out_router__write(r, &a, 0), 0);
	assert_int_equal(out_router__write(r, &b, 1), 0);
	assert_int_equal(out_router__write(r, &b, 0), 0);
	assert_int_equal(out_router__write(r, &a, 2), 0);
	assert_int_equal(opens, 3);
	assert_string_equal(made[0]->path, "x.parse.csv");
	assert_string_equal(made[1]->path, "x.send.csv");
	assert_string_equal(made[2]->path, "x.parse.csv.2");
	assert_int_equal(made[0]->n, 2);
	assert_int_equal(made[1]->n, 1);
	assert_int_equal(made[2]->n, 1);
	assert_int_equal(out_router__settle(r, true), 0);
	assert_int_equal(out_router__written(r), 4);
	assert_int_equal(out_router__files(r), 3);
	out_router__free(r);
}

/* A process whose sink cannot be made: its records are refused (the open
 * is tried again at its next record), the others' go on. */
static void test_open_fails(void **state)
{
	int opens = 0;
	struct out_router_opts o = { .n_funcs = 1, .open = fake_open, .open_ctx = &opens };
	struct out_router *r;
	struct call_record a = rec_of(10), b = rec_of(20);

	reset();
	r = out_router__per_process("x.%p", &o);
	assert_non_null(r);
	open_err = -EACCES;
	assert_int_equal(out_router__write(r, &a, 0), -EACCES);
	assert_int_equal(out_router__write(r, &b, 0), 0);
	assert_int_equal(out_router__settle(r, true), 0);
	assert_int_equal(out_router__written(r), 1);
	assert_int_equal(out_router__unwritten(r), 1);
	assert_int_equal(out_router__files(r), 1);
	out_router__free(r);
}

/* A sink that fails refuses every later record; a flush that fails counts
 * as written only the records the output holds whole (ON_DISK bytes). */
static void test_failures_counted(void **state)
{
	struct out_router_opts o = { .n_funcs = 1 };
	struct call_record rec = rec_of(1);
	struct fake_sink *f;
	struct out_router *r;

	reset();
	f = fake_new(0, "");
	r = out_router__single(&f->base, &o);
	assert_non_null(r);
	for (int i = 0; i < 4; i++)
		assert_int_equal(out_router__write(r, &rec, 0), 0);
	f->flush_err = -ENOSPC;
	f->on_disk = 25; /* records end at 10, 20, 30, 40: two are whole */
	assert_int_equal(out_router__settle(r, false), -ENOSPC);
	assert_int_equal(out_router__written(r), 2);
	assert_int_equal(out_router__unwritten(r), 2);
	/* The route failed: nothing more reaches the sink. */
	assert_int_equal(out_router__write(r, &rec, 0), -ENOSPC);
	assert_int_equal(f->n, 4);
	out_router__refuse(r); /* drained after the trace stopped */
	assert_int_equal(out_router__settle(r, true), -ENOSPC);
	assert_int_equal(out_router__written(r), 2);
	assert_int_equal(out_router__unwritten(r), 4);

	out_router__free(r);
	reset();
	f = fake_new(0, "");
	f->write_err = -EIO;
	r = out_router__single(&f->base, &o);
	assert_int_equal(out_router__write(r, &rec, 0), -EIO);
	assert_int_equal(out_router__unwritten(r), 1);
	assert_int_equal(out_router__settle(r, true), -EIO);
	out_router__free(r);
}

/* A sink that drops one record and goes on (write returns 1: a buffer
 * full while a server is down): counted as dropped and unwritten, and
 * the output keeps taking records. */
static void test_dropped_goes_on(void **state)
{
	struct out_router_opts o = { .n_funcs = 1 };
	struct call_record rec = rec_of(1);
	struct fake_sink *f;
	struct out_router *r;

	reset();
	f = fake_new(0, "");
	r = out_router__single(&f->base, &o);
	assert_non_null(r);
	assert_int_equal(out_router__write(r, &rec, 0), 0);
	f->write_err = 1;
	assert_int_equal(out_router__write(r, &rec, 0), 0);
	assert_int_equal(out_router__write(r, &rec, 0), 0);
	f->write_err = 0;
	assert_int_equal(out_router__write(r, &rec, 0), 0);
	assert_int_equal(out_router__settle(r, true), 0);
	assert_int_equal(out_router__written(r), 2);
	assert_int_equal(out_router__dropped(r), 2);
	assert_int_equal(out_router__unwritten(r), 2);
	assert_int_equal(f->n, 2);
	out_router__free(r);
}

/* A sink that makes its records durable in batches (a store commits once
 * a second): a flush that says only ON_DISK is durable (1) counts those,
 * keeps the rest pending (neither written nor not), and a later failure
 * counts only the pending ones as not written. */
static void test_partial_flush_keeps_the_rest_pending(void **state)
{
	struct out_router_opts o = { .n_funcs = 1 };
	struct call_record rec = rec_of(1);
	struct fake_sink *f;
	struct out_router *r;

	(void)state;
	reset();
	f = fake_new(0, "");
	r = out_router__single(&f->base, &o);
	assert_non_null(r);
	for (int i = 0; i < 4; i++)
		assert_int_equal(out_router__write(r, &rec, 0), 0);
	f->flush_err = 1;
	f->on_disk = 20; /* two committed */
	assert_int_equal(out_router__settle(r, false), 0);
	assert_int_equal(out_router__written(r), 2);
	assert_int_equal(out_router__unwritten(r), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(out_router__write(r, &rec, 0), 0);
	f->on_disk = 30; /* one more */
	assert_int_equal(out_router__settle(r, false), 0);
	assert_int_equal(out_router__written(r), 3);
	assert_int_equal(out_router__unwritten(r), 0);
	f->flush_err = -ENOSPC; /* the batch of the last three is lost */
	assert_int_equal(out_router__settle(r, true), -ENOSPC);
	assert_int_equal(out_router__written(r), 3);
	assert_int_equal(out_router__unwritten(r), 3);
	out_router__free(r);
}

/* A view holds its records until the end: nothing is settled before. */
static void test_view_settled_at_the_end(void **state)
{
	struct out_router_opts o = { .n_funcs = 1 };
	struct call_record rec = rec_of(1);
	struct fake_sink *f;
	struct out_router *r;

	reset();
	f = fake_new(0, "");
	f->view = true;
	r = out_router__single(&f->base, &o);
	assert_int_equal(out_router__write(r, &rec, 0), 0);
	assert_int_equal(out_router__settle(r, false), 0);
	assert_int_equal(out_router__written(r), 0);
	assert_int_equal(out_router__settle(r, true), 0);
	assert_int_equal(out_router__written(r), 1);
	out_router__free(r);
}

/* A format's writer as a sink: the same router, CSV to a stream. */
static void test_file_sink(void **state)
{
	struct file_sink_opts fo = { .fmt = OUT_CSV };
	struct out_router_opts o = { .n_funcs = 1 };
	struct call_record rec = rec_of(42);
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	struct out_router *r;

	assert_non_null(f);
	r = out_router__single(file_sink__new(&fo, f), &o);
	assert_non_null(r);
	assert_int_equal(out_router__write(r, &rec, 0), 0);
	assert_int_equal(out_router__settle(r, true), 0);
	assert_int_equal(out_router__written(r), 1);
	out_router__free(r); /* the stream stays open: it is the caller's */
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(buf, "ts_ns,pid,tid,comm,func"));
	assert_non_null(strstr(buf, ",42,42,t,f,"));
	free(buf);
}

/* file_sink__open: the per-process file is created (emptied) and closed
 * with the sink; a path it cannot create is an error. */
static void test_file_sink_open(void **state)
{
	struct file_sink_opts fo = { .fmt = OUT_JSON };
	struct out_router_opts o = { .n_funcs = 1, .open = file_sink__open, .open_ctx = &fo };
	struct call_record rec = rec_of(77);
	char dir[] = "/tmp/cmon-test-router-XXXXXX", path[96], line[512];
	struct out_router *r;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.%%p.json", dir);
	r = out_router__per_process(path, &o);
	assert_non_null(r);
	assert_int_equal(out_router__write(r, &rec, 0), 0);
	assert_int_equal(out_router__settle(r, true), 0);
	out_router__free(r);
	snprintf(path, sizeof(path), "%s/out.77.json", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_non_null(strstr(line, "\"pid\":77"));
	fclose(f);
	unlink(path);
	rmdir(dir);

	snprintf(path, sizeof(path), "%s/gone/out.%%p", dir);
	r = out_router__per_process(path, &o);
	assert_int_equal(out_router__write(r, &rec, 0), -ENOENT);
	assert_int_equal(out_router__unwritten(r), 1);
	out_router__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_long_drain_settles_as_it_goes),
		cmocka_unit_test(test_per_process),
		cmocka_unit_test(test_per_function),
		cmocka_unit_test(test_open_fails),
		cmocka_unit_test(test_failures_counted),
		cmocka_unit_test(test_dropped_goes_on),
		cmocka_unit_test(test_partial_flush_keeps_the_rest_pending),
		cmocka_unit_test(test_view_settled_at_the_end),
		cmocka_unit_test(test_file_sink),
		cmocka_unit_test(test_file_sink_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
