/* test_hist.c: histogram buckets (shared with BPF) and percentiles. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "agg/hist.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define P40 (1ULL << 40)

/* Deterministic xorshift64*: the same "random" values on every run. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* A value spread over every magnitude up to 2^40 (log-uniform-ish). */
static uint64_t rng_value(void)
{
	unsigned bits = (unsigned)(rng() % 41);

	return bits ? rng() >> (64 - bits) : 0;
}

static void test_constants(void **state)
{
	assert_int_equal(HIST_SUB_COUNT, 32);
	assert_int_equal(HIST_NBUCKETS, 36 * 32 + 1);
	assert_int_equal(HIST_OVERFLOW_BUCKET, HIST_NBUCKETS - 1);
	assert_int_equal(HIST_ARG_NBUCKETS, 65);
	/* The BPF value must fit a per-CPU map value (32 KiB). */
	assert_true((HIST_NBUCKETS + HIST_ARG_NBUCKETS + 9) * 8 <= 32768);
}

static void test_log2(void **state)
{
	static const struct {
		uint64_t v;
		unsigned want;
	} cases[] = {
		{ 0, 0 }, { 1, 0 }, { 2, 1 }, { 3, 1 }, { 4, 2 }, { 255, 7 }, { 256, 8 },
		{ 0xFFFFFFFFULL, 31 }, { 0x100000000ULL, 32 }, { 1ULL << 63, 63 }, { UINT64_MAX, 63 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (hist_log2(cases[i].v) != cases[i].want)
			fail_msg("log2(%llu) = %u, want %u", (unsigned long long)cases[i].v,
				 hist_log2(cases[i].v), cases[i].want);
	for (unsigned e = 0; e < 64; e++) {
		assert_int_equal(hist_log2(1ULL << e), e);
		if (e > 1)
			assert_int_equal(hist_log2((1ULL << e) - 1), e - 1);
	}
}

static void test_bucket_edges(void **state)
{
	static const struct {
		uint64_t v;
		unsigned bucket;
		uint64_t low, high;
	} cases[] = {
		{ 0, 0, 0, 0 },
		{ 1, 1, 1, 1 },
		{ 31, 31, 31, 31 },
		{ 32, 32, 32, 32 },       /* [32, 64): still one value per bucket */
		{ 63, 63, 63, 63 },
		{ 64, 64, 64, 65 },       /* [64, 128): width 2 */
		{ 65, 64, 64, 65 },
		{ 66, 65, 66, 67 },
		{ 127, 95, 126, 127 },
		{ 128, 96, 128, 131 },    /* [128, 256): width 4 */
		{ 1000000, 509, 999424, 1015807 }, /* 1 ms: 2^19 row, width 2^14 */
		{ P40 - 1, HIST_OVERFLOW_BUCKET - 1, 63ULL << 34, P40 - 1 },
		{ P40, HIST_OVERFLOW_BUCKET, P40, UINT64_MAX },
		{ UINT64_MAX, HIST_OVERFLOW_BUCKET, P40, UINT64_MAX },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned b = hist__bucket(cases[i].v);

		if (b != cases[i].bucket)
			fail_msg("bucket(%llu) = %u, want %u", (unsigned long long)cases[i].v, b,
				 cases[i].bucket);
		assert_int_equal(hist__bucket_low(b), cases[i].low);
		assert_int_equal(hist__bucket_high(b), cases[i].high);
	}
	/* The BPF-side function is the same code. */
	assert_int_equal(hist_lat_bucket(1000000), 509);
}

static void test_buckets_tile_the_range(void **state)
{
	assert_int_equal(hist__bucket_low(0), 0);
	for (unsigned b = 0; b < HIST_NBUCKETS; b++) {
		uint64_t lo = hist__bucket_low(b), hi = hist__bucket_high(b);

		assert_true(lo <= hi);
		assert_int_equal(hist__bucket(lo), b);
		assert_int_equal(hist__bucket(hi), b);
		if (b + 1 < HIST_NBUCKETS)
			assert_int_equal(hist__bucket_low(b + 1), hi + 1); /* no gap, no overlap */
		if (b != HIST_OVERFLOW_BUCKET) {
			uint64_t mid = hist__bucket_mid(b);

			assert_true(lo <= mid && mid <= hi);
			/* Midpoint error bound: half the width <= low / 64. */
			assert_true((hi - lo + 1) / 2 * 64 <= (lo ? lo : 1) || hi == lo);
		}
	}
	assert_int_equal(hist__bucket_mid(HIST_OVERFLOW_BUCKET), P40);
}

/* value -> bucket -> [low, high] holds the value, and the midpoint is
 * within 1/64 of it. */
static void test_round_trip_random(void **state)
{
	double worst = 0;

	for (int i = 0; i < 200000; i++) {
		uint64_t v = rng_value();
		unsigned b = hist__bucket(v);
		uint64_t mid = hist__bucket_mid(b);
		double err;

		assert_true(b < HIST_OVERFLOW_BUCKET);
		if (hist__bucket_low(b) > v || hist__bucket_high(b) < v)
			fail_msg("%llu not in bucket %u", (unsigned long long)v, b);
		if (v < HIST_SUB_COUNT * 2) {
			assert_int_equal(mid, v); /* small values are exact */
			continue;
		}
		err = (double)(mid > v ? mid - v : v - mid) / (double)v;
		if (err > worst)
			worst = err;
	}
	if (worst > 1.0 / 64)
		fail_msg("worst relative error %.5f > 1/64", worst);
	assert_true(worst > 0.01); /* the bound is approached: the test can fail */
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_percentile_random(void **state)
{
	static const double qs[] = { 0, 0.5, 0.9, 0.99, 0.999, 1 };
	enum { N = 10007 };
	uint64_t *vals = malloc(N * sizeof(*vals));
	uint64_t *h = calloc(HIST_NBUCKETS, sizeof(*h));

	assert_non_null(vals);
	assert_non_null(h);
	for (int round = 0; round < 20; round++) {
		memset(h, 0, HIST_NBUCKETS * sizeof(*h));
		for (int i = 0; i < N; i++) {
			/* Latency-like: 1 us .. ~1 s */
			vals[i] = 1000 + rng() % (1ULL << (10 + round));
			h[hist__bucket(vals[i])]++;
		}
		qsort(vals, N, sizeof(*vals), cmp_u64);
		assert_int_equal(hist__total(h, HIST_NBUCKETS), N);
		for (size_t k = 0; k < ARRAY_SIZE(qs); k++) {
			size_t rank = (size_t)(qs[k] * N + 0.999999999);
			uint64_t truth = vals[(rank ? rank : 1) - 1];
			uint64_t got = hist__percentile(h, HIST_NBUCKETS, qs[k]);
			double err = (double)(got > truth ? got - truth : truth - got) / (double)truth;

			if (err > 0.02)
				fail_msg("q=%g: %llu vs true %llu (%.4f)", qs[k],
					 (unsigned long long)got, (unsigned long long)truth, err);
			/* Nearest rank: the true value's own bucket. */
			assert_int_equal(got, hist__bucket_mid(hist__bucket(truth)));
		}
	}
	free(h);
	free(vals);
}

static void test_percentile_known(void **state)
{
	uint64_t h[HIST_NBUCKETS] = {};

	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.5), 0); /* empty */
	/* 100 x 1 ms, 100 x 2 ms, 50 x 5 ms (the sleeper target's naps) */
	h[hist__bucket(1000000)] += 100;
	h[hist__bucket(2000000)] += 100;
	h[hist__bucket(5000000)] += 50;
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.4), hist__bucket_mid(hist__bucket(1000000)));
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.5), hist__bucket_mid(hist__bucket(2000000)));
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.8), hist__bucket_mid(hist__bucket(2000000)));
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.9), hist__bucket_mid(hist__bucket(5000000)));
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.999), hist__bucket_mid(hist__bucket(5000000)));
	/* 0.8 * 250 = 200 exactly: still the 2 ms group; one more is not. */
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.804), hist__bucket_mid(hist__bucket(5000000)));
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, -1), hist__bucket_mid(hist__bucket(1000000)));
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 7), hist__bucket_mid(hist__bucket(5000000)));

	/* 1..100 once each: small values are exact. */
	memset(h, 0, sizeof(h));
	for (uint64_t v = 1; v <= 100; v++)
		h[hist__bucket(v)]++;
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.5), 50);
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.3), 30);
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.01), 1);
	/* 0.07 * 100 is 7.000000000000001 in binary floating point, 0.56 * 100
	 * 56.00000000000001: still ranks 7 and 56, not 8 and 57. */
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.07), 7);
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.56), 56);
	/* 0.9 * 100 is 90.00000000000001 too: rank 90. */
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.9), hist__bucket_mid(hist__bucket(90)));
	assert_int_equal(hist__bucket_mid(hist__bucket(90)), 90); /* [90, 91] -> 90 */

	/* Overflow values report 2^40. */
	memset(h, 0, sizeof(h));
	h[hist__bucket(UINT64_MAX)] = 1;
	assert_int_equal(hist__percentile(h, HIST_NBUCKETS, 0.5), P40);
}

static void test_count_le(void **state)
{
	uint64_t h[HIST_NBUCKETS] = {};
	static const struct {
		uint64_t bound, want;
	} cases[] = {
		{ 0, 1 }, { 31, 32 }, { 63, 64 },
		{ 64, 64 },   /* [64, 65] straddles 64: left out */
		{ 65, 66 },
		{ 98, 98 },   /* [98, 99] straddles 98 */
		{ 99, 100 },
		{ 1000, 100 },
		{ UINT64_MAX, 101 },
	};

	for (uint64_t v = 0; v < 100; v++)
		h[hist__bucket(v)]++;
	h[HIST_OVERFLOW_BUCKET] = 1;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (hist__count_le(h, HIST_NBUCKETS, cases[i].bound) != cases[i].want)
			fail_msg("count_le(%llu) = %llu, want %llu",
				 (unsigned long long)cases[i].bound,
				 (unsigned long long)hist__count_le(h, HIST_NBUCKETS, cases[i].bound),
				 (unsigned long long)cases[i].want);
}

static void test_arg_log2(void **state)
{
	static const struct {
		uint64_t v;
		unsigned b;
		uint64_t low, high;
	} cases[] = {
		{ 0, 0, 0, 0 },
		{ 1, 1, 1, 1 },
		{ 2, 2, 2, 3 },
		{ 3, 2, 2, 3 },
		{ 4, 3, 4, 7 },
		{ 999, 10, 512, 1023 },
		{ 0xFFFFFFFFULL, 32, 1ULL << 31, 0xFFFFFFFFULL }, /* int -1, zero-extended */
		{ 1ULL << 63, 64, 1ULL << 63, UINT64_MAX },
		{ UINT64_MAX, 64, 1ULL << 63, UINT64_MAX },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned b = hist_arg_log2_bucket(cases[i].v);

		assert_int_equal(b, cases[i].b);
		assert_int_equal(hist__arg_log2_low(b), cases[i].low);
		assert_int_equal(hist__arg_log2_high(b), cases[i].high);
	}
	for (unsigned b = 0; b + 1 < HIST_ARG_NBUCKETS; b++)
		assert_int_equal(hist__arg_log2_low(b + 1), hist__arg_log2_high(b) + 1);
}

/* An argument at its C type's width and sign: -7 in an int (the register
 * holding 0x00000000fffffff9) is -7; an unsigned char is its low byte. */
static void test_arg_value(void **state)
{
	(void)state;
	assert_int_equal((int64_t)hist_arg_value(0xfffffff9ull, 4, 1), -7);
	assert_int_equal(hist_arg_value(0xfffffff9ull, 4, 0), 0xfffffff9ull);
	assert_int_equal(hist_arg_value(0x12345678ffull, 1, 0), 0xff);
	assert_int_equal((int64_t)hist_arg_value(0x12345678ffull, 1, 1), -1);
	assert_int_equal((int64_t)hist_arg_value(0xabcd8000ull, 2, 1), -32768);
	assert_int_equal(hist_arg_value(~0ull, 8, 0), ~0ull);
	assert_int_equal(hist_arg_linear_bucket(hist_arg_value(0xfffffff9ull, 4, 1),
						(uint64_t)-10, 1), 3);
}

static void test_arg_linear(void **state)
{
	static const struct {
		int64_t v, min;
		uint64_t step;
		unsigned want;
	} cases[] = {
		{ -11, -10, 5, HIST_ARG_NBUCKETS }, /* below MIN */
		{ -10, -10, 5, 0 },
		{ -6, -10, 5, 0 },
		{ -5, -10, 5, 1 },
		{ 0, -10, 5, 2 },
		{ 314, -10, 5, 64 },
		{ 315, -10, 5, HIST_ARG_NBUCKETS }, /* past the 65th bucket */
		{ INT64_MAX, INT64_MIN, 1, HIST_ARG_NBUCKETS },
		{ INT64_MIN, INT64_MIN, 1, 0 },
		{ 7, 0, 0, HIST_ARG_NBUCKETS }, /* no step: nothing fits */
		{ 100, 100, 1000000, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned b = hist_arg_linear_bucket((uint64_t)cases[i].v, (uint64_t)cases[i].min,
						    cases[i].step);

		if (b != cases[i].want)
			fail_msg("case %zu: bucket %u, want %u", i, b, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_log2),
		cmocka_unit_test(test_bucket_edges),
		cmocka_unit_test(test_buckets_tile_the_range),
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_percentile_random),
		cmocka_unit_test(test_percentile_known),
		cmocka_unit_test(test_count_le),
		cmocka_unit_test(test_arg_log2),
		cmocka_unit_test(test_arg_value),
		cmocka_unit_test(test_arg_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
