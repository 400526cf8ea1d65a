/* test_staging.c: the window that puts staged call records back in time
 * order (user/event/staging.c), without a kernel: records are added as the
 * ring buffer would hand them over. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "event/capture_staging.h"
#include "event/staging.h"

struct seen {
	uint64_t order[64];
	int n;
	int fail_at; /* the callback fails on this record (-1: never) */
};

static int collect(void *ctx, const struct cmon_call_rec *rec)
{
	struct seen *s = ctx;

	if (s->n == s->fail_at)
		return -EIO;
	s->order[s->n++] = rec->order_ns;
	return 0;
}

static struct cmon_call_rec rec_at(uint64_t ns)
{
	struct cmon_call_rec r;

	memset(&r, 0, sizeof(r));
	r.type = CMON_REC_CALL;
	r.order_ns = ns;
	r.args[0] = ns;
	return r;
}

/* A thread's record sent in a full batch of one CPU arrives before its
 * earlier record swept from another CPU's partial batch: out in time order,
 * and what is at or after the cutoff waits for the next poll. */
static void test_order_and_cutoff(void **state)
{
	struct staging *s = staging__new(-1, 0);
	struct cmon_batch b;
	struct seen seen = { .fail_at = -1 };
	struct cmon_call_rec r;

	assert_non_null(s);
	memset(&b, 0, sizeof(b));
	b.type = CMON_REC_BATCH;
	b.n = CMON_BATCH;
	for (int i = 0; i < CMON_BATCH; i++)
		b.r[i] = rec_at(100 + 10 * (uint64_t)i); /* 100 .. 250 */
	assert_int_equal(staging__add_batch(s, &b), 0);
	r = rec_at(95);
	assert_int_equal(staging__add(s, &r), 0);
	r = rec_at(400);
	assert_int_equal(staging__add(s, &r), 0);
	assert_int_equal(staging__waiting(s), CMON_BATCH + 2);

	assert_int_equal(staging__deliver(s, 300, collect, &seen), 0);
	assert_int_equal(seen.n, CMON_BATCH + 1);
	assert_int_equal(seen.order[0], 95);
	for (int i = 1; i < seen.n; i++)
		assert_int_equal(seen.order[i], 100 + 10 * (uint64_t)(i - 1));
	assert_int_equal(staging__waiting(s), 1); /* 400 waits */

	r = rec_at(350);
	assert_int_equal(staging__add(s, &r), 0);
	assert_int_equal(staging__deliver(s, UINT64_MAX, collect, &seen), 0);
	assert_int_equal(seen.n, CMON_BATCH + 3);
	assert_int_equal(seen.order[CMON_BATCH + 1], 350);
	assert_int_equal(seen.order[CMON_BATCH + 2], 400);
	assert_int_equal(staging__waiting(s), 0);
	staging__free(s);
}

/* Equal times keep their arrival order; records already in order go out as
 * a prefix. */
static void test_stable_and_sorted_prefix(void **state)
{
	struct staging *s = staging__new(-1, 0);
	struct seen seen = { .fail_at = -1 };
	struct cmon_call_rec r;

	assert_non_null(s);
	for (int i = 0; i < 4; i++) {
		r = rec_at(i < 2 ? 10 : 20);
		r.args[1] = (uint64_t)i;
		assert_int_equal(staging__add(s, &r), 0);
	}
	assert_int_equal(staging__deliver(s, 20, collect, &seen), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(staging__waiting(s), 2);
	r = rec_at(5); /* older than the two that wait: the window is unsorted now */
	assert_int_equal(staging__add(s, &r), 0);
	assert_int_equal(staging__deliver(s, UINT64_MAX, collect, &seen), 0);
	assert_int_equal(seen.n, 5);
	assert_int_equal(seen.order[2], 5);
	assert_int_equal(seen.order[3], 20);
	assert_int_equal(seen.order[4], 20);
	staging__free(s);
}

/* The callback's error stops the delivery: the record it refused is used up
 * (as the ring buffer's would be), the ones after it are still in the
 * window. */
static void test_error_keeps_the_rest(void **state)
{
	struct staging *s = staging__new(-1, 0);
	struct seen seen = { .fail_at = 1 };
	struct cmon_call_rec r;

	assert_non_null(s);
	for (uint64_t ns = 3; ns >= 1; ns--) { /* unsorted: 3, 2, 1 */
		r = rec_at(ns);
		assert_int_equal(staging__add(s, &r), 0);
	}
	assert_int_equal(staging__deliver(s, UINT64_MAX, collect, &seen), -EIO);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.order[0], 1);
	assert_int_equal(staging__waiting(s), 1);
	seen.fail_at = -1;
	assert_int_equal(staging__deliver(s, UINT64_MAX, collect, &seen), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.order[1], 3);
	staging__free(s);
}

struct caps {
	uint32_t func[8];
	size_t size[8];
	int n;
};

static int collect_cap(void *ctx, const struct cmon_capture_rec *rec, size_t size)
{
	struct caps *c = ctx;

	if (c->n == 8)
		return -EIO;
	c->func[c->n] = rec->func_id;
	c->size[c->n++] = size;
	return 0;
}

/* Append a capture record of LEN item bytes for FUNC to B, 8-aligned as the
 * programs write them. */
static void put_cap(struct cmon_capture_batch *b, uint32_t func, uint32_t len)
{
	struct cmon_capture_rec r = { .type = CMON_REC_CAPTURE, .func_id = func, .len = len };

	memcpy(b->data + b->len, &r, sizeof(r));
	memset(b->data + b->len + sizeof(r), 0xab, len);
	b->len += (uint32_t)((sizeof(r) + len + 7) & ~(size_t)7);
	b->n++;
}

/* A batch from the ring buffer: each record whole, at its 8-aligned
 * place, nothing read past what the batch holds. */
static void test_capture_batch_records(void **state)
{
	static struct cmon_capture_batch b;
	size_t head = offsetof(struct cmon_capture_batch, data);
	struct caps c = { .n = 0 };

	(void)state;
	b.type = CMON_REC_CAPTURE_BATCH;
	put_cap(&b, 1, 0);
	put_cap(&b, 2, 13); /* padded to 48 */
	put_cap(&b, 3, 64);
	assert_int_equal(b.len, 32 + 48 + 96);
	assert_int_equal(capture_staging__batch(&b, head + b.len, collect_cap, &c), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.func[0], 1);
	assert_int_equal(c.size[0], 32);
	assert_int_equal(c.func[1], 2);
	assert_int_equal(c.size[1], 45);
	assert_int_equal(c.func[2], 3);
	assert_int_equal(c.size[2], 96);
	/* A batch claiming more than it came with is not read. */
	c.n = 0;
	assert_int_equal(capture_staging__batch(&b, head + b.len - 8, collect_cap, &c), 0);
	assert_int_equal(c.n, 0);
	/* A record running past the batch's end stops the walk there. */
	b.len -= 8;
	assert_int_equal(capture_staging__batch(&b, head + b.len, collect_cap, &c), 0);
	assert_int_equal(c.n, 2);
	/* The callback's error comes back. */
	c.n = 8;
	assert_int_equal(capture_staging__batch(&b, head + b.len, collect_cap, &c), -EIO);
}

/* A thread's partial batch, sent as it left its CPU: its N records only,
 * in time order with a full batch from the CPU it moved to. */
static void test_partial_batch(void **state)
{
	struct staging *s = staging__new(-1, 0);
	struct seen seen = { .fail_at = -1 };
	struct cmon_batch b;

	(void)state;
	assert_non_null(s);
	memset(&b, 0, sizeof(b));
	b.type = CMON_REC_BATCH;
	b.n = 5;
	for (int i = 0; i < CMON_BATCH; i++)
		b.r[i] = rec_at(10 + (uint64_t)i); /* 10 .. 14 staged; the rest stale */
	assert_int_equal(staging__add_batch(s, &b), 0);
	b.n = CMON_BATCH;
	for (int i = 0; i < CMON_BATCH; i++)
		b.r[i] = rec_at(15 + (uint64_t)i);
	assert_int_equal(staging__add_batch(s, &b), 0);
	assert_int_equal(staging__waiting(s), 5 + CMON_BATCH);
	assert_int_equal(staging__deliver(s, UINT64_MAX, collect, &seen), 0);
	assert_int_equal(seen.n, 5 + CMON_BATCH);
	for (int i = 0; i < seen.n; i++)
		assert_int_equal(seen.order[i], 10 + (uint64_t)i);
	staging__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_cutoff),
		cmocka_unit_test(test_stable_and_sorted_prefix),
		cmocka_unit_test(test_error_keeps_the_rest),
		cmocka_unit_test(test_capture_batch_records),
		cmocka_unit_test(test_partial_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
