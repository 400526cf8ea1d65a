// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "hist.h"

unsigned hist__bucket(uint64_t v) { return hist_lat_bucket(v); }

uint64_t hist__bucket_low(unsigned b)
{
	unsigned row = b >> HIST_SUB_BITS, sub = b & (HIST_SUB_COUNT - 1);

	if (b >= HIST_OVERFLOW_BUCKET)
		return HIST_MAX_VALUE;
	if (row == 0)
		return b;
	/* Row r >= 1 is [2^(r+4), 2^(r+5)) in 32 steps of 2^(r-1). */
	return (uint64_t)(HIST_SUB_COUNT + sub) << (row - 1);
}

uint64_t hist__bucket_high(unsigned b)
{
	if (b >= HIST_OVERFLOW_BUCKET)
		return UINT64_MAX;
	return hist__bucket_low(b + 1) - 1;
}

uint64_t hist__bucket_mid(unsigned b)
{
	uint64_t lo = hist__bucket_low(b);

	if (b >= HIST_OVERFLOW_BUCKET)
		return lo;
	return lo + (hist__bucket_high(b) - lo) / 2;
}

uint64_t hist__total(const uint64_t *buckets, size_t n)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += buckets[i];
	return t;
}

uint64_t hist__percentile(const uint64_t *buckets, size_t n, double q)
{
	uint64_t total = hist__total(buckets, n), rank, cum = 0;
	double r;

	if (!total)
		return 0;
	if (!(q > 0))
		q = 0;
	if (q > 1)
		q = 1;
	/* ceil(q * total), forgiving the rounding of q (0.9 * 250 is
	 * 225.00000000000003 in binary floating point). */
	r = q * (double)total;
	rank = (uint64_t)r;
	if ((double)rank < r * (1 - 1e-12))
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > total)
		rank = total;
	for (size_t i = 0; i < n; i++) {
		cum += buckets[i];
		if (cum >= rank)
			return hist__bucket_mid((unsigned)i);
	}
	return 0; /* not reached: cum ends at total */
}

uint64_t hist__count_le(const uint64_t *buckets, size_t n, uint64_t bound_ns)
{
	uint64_t c = 0;

	for (size_t i = 0; i < n && i < HIST_NBUCKETS; i++) {
		if (hist__bucket_high((unsigned)i) > bound_ns)
			break;
		c += buckets[i];
	}
	return c;
}

uint64_t hist__arg_log2_low(unsigned b) { return b ? 1ULL << (b - 1) : 0; }

uint64_t hist__arg_log2_high(unsigned b)
{
	if (b == 0)
		return 0;
	if (b >= 64)
		return UINT64_MAX;
	return (1ULL << b) - 1;
}
