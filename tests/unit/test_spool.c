/* test_spool.c: the consumer's spool (user/event/spool.c): records come
 * back in the order they were put, with their kind and bytes, from memory
 * and from the compressed spill file; it is full at its bounds; a
 * callback's stop keeps the rest. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "event/spool.h"

struct check {
	uint64_t next;  /* the sequence number expected */
	uint64_t stop_at; /* return 1 at this one (0: never) */
};

/* Record I: kind I % 3, I % 300 + 8 bytes, each byte (I + j) & 0xff,
 * the first 8 the sequence number. */
static size_t rec_of(uint64_t i, uint8_t *buf)
{
	size_t n = i % 300 + 8;

	for (size_t j = 0; j < n; j++)
		buf[j] = (uint8_t)(i + j);
	memcpy(buf, &i, sizeof(i));
	return n;
}

static int verify(void *ctx, uint32_t kind, const void *rec, size_t size)
{
	struct check *c = ctx;
	uint8_t want[400];
	size_t n = rec_of(c->next, want);

	assert_int_equal(kind, c->next % 3);
	assert_int_equal(size, n);
	assert_memory_equal(rec, want, n);
	c->next++;
	return c->stop_at && c->next == c->stop_at ? 1 : 0;
}

static void put_range(struct spool *s, uint64_t from, uint64_t to)
{
	uint8_t buf[400];

	for (uint64_t i = from; i < to; i++)
		assert_int_equal(spool__put(s, (uint32_t)(i % 3), buf, rec_of(i, buf)), 0);
}

/* 200,000 records (~33 MB raw): most of them through the spill file. */
static void test_order_through_disk(void **state)
{
	struct spool_opts o = { .dir = "/tmp", .mem_bytes = 1 << 20 };
	struct spool *s = spool__new(&o);
	struct spool_stats st;
	struct check c = {};

	assert_non_null(s);
	spool__stats(s, &st);
	assert_true(st.on_disk);
	put_range(s, 0, 100000);
	/* half out, more in, then the rest: the order holds across both */
	assert_int_equal(spool__take(s, 50000, verify, &c), 0);
	assert_int_equal(c.next, 50000);
	put_range(s, 100000, 200000);
	assert_int_equal(spool__take(s, 0, verify, &c), 0);
	assert_int_equal(c.next, 200000);
	assert_true(spool__empty(s));
	spool__stats(s, &st);
	assert_int_equal(st.records, 200000);
	assert_int_equal(st.waiting, 0);
	assert_int_equal(st.lost, 0);
	assert_true(st.disk_bytes > 0);
	/* compressed: less than the raw bytes */
	assert_true(st.disk_bytes < st.raw_bytes);
	/* empty again: used again from the start */
	put_range(s, 200000, 200010);
	assert_int_equal(spool__take(s, 0, verify, &c), 0);
	assert_int_equal(c.next, 200010);
	spool__free(s);
}

/* Memory only: full at its quota (the write chunk and the queue), and
 * room again once read. */
static void test_memory_bound(void **state)
{
	struct spool_opts o = { .memory_only = true, .mem_bytes = 1 << 20 };
	struct spool *s = spool__new(&o);
	uint8_t buf[400];
	struct check c = {};
	uint64_t i = 0;
	int err;

	assert_non_null(s);
	while ((err = spool__put(s, (uint32_t)(i % 3), buf, rec_of(i, buf))) == 0)
		i++;
	assert_int_equal(err, -ENOSPC);
	assert_false(spool__has_room(s, 4096));
	/* 1 MiB of queue and a 256 KiB write chunk, of ~166-byte frames */
	assert_true(i > 6000 && i < 9000);
	assert_int_equal(spool__take(s, 0, verify, &c), 0);
	assert_int_equal(c.next, i);
	assert_true(spool__has_room(s, 4096));
	spool__free(s);
}

/* A callback's nonzero value stops the take; the record it had is used
 * up, the rest stay in order. */
static void test_stop_keeps_the_rest(void **state)
{
	struct spool_opts o = { .dir = "/tmp", .mem_bytes = 256 << 10 };
	struct spool *s = spool__new(&o);
	struct check c = { .stop_at = 12345 };

	assert_non_null(s);
	put_range(s, 0, 30000);
	assert_int_equal(spool__take(s, 0, verify, &c), 1);
	assert_int_equal(c.next, 12345);
	c.stop_at = 0;
	assert_int_equal(spool__take(s, 0, verify, &c), 0);
	assert_int_equal(c.next, 30000);
	spool__free(s);
}

/* A record larger than a chunk has one of its own. */
static uint8_t big[600 << 10];
static const uint8_t small[16] = { 1, 2, 3 };

static int check_large(void *ctx, uint32_t kind, const void *rec, size_t size)
{
	int *n = ctx;

	assert_int_equal(kind, *n);
	if (kind == 1) {
		assert_int_equal(size, sizeof(big));
		assert_memory_equal(rec, big, sizeof(big));
	} else {
		assert_int_equal(size, sizeof(small));
		assert_memory_equal(rec, small, sizeof(small));
	}
	(*n)++;
	return 0;
}

static void test_large_record(void **state)
{
	struct spool *s = spool__new(&(struct spool_opts){ .dir = "/tmp", .mem_bytes = 1 });
	int n = 0;

	assert_non_null(s);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	assert_int_equal(spool__put(s, 0, small, sizeof(small)), 0);
	assert_int_equal(spool__put(s, 1, big, sizeof(big)), 0);
	assert_int_equal(spool__put(s, 2, small, sizeof(small)), 0);
	assert_int_equal(spool__take(s, 0, check_large, &n), 0);
	assert_int_equal(n, 3);
	spool__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_through_disk),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_stop_keeps_the_rest),
		cmocka_unit_test(test_large_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
