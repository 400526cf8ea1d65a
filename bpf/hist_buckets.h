/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hist_buckets.h: histogram bucket functions shared by BPF programs and user
 * space (pure integer code, __u32/__u64 only, no helpers, no loops).
 *
 * Latency: log-linear buckets.  Values below 2^HIST_SUB_BITS (32) have a
 * bucket each (exact).  Above, every power of two [2^e, 2^(e+1)) is split
 * into 2^HIST_SUB_BITS equal sub-buckets of width w = 2^(e - HIST_SUB_BITS),
 * whose low end is at least 32 w.  Reporting a bucket by its midpoint is
 * therefore off by at most w / 2 <= value / 64: a relative error of at most
 * 1 / 2^(HIST_SUB_BITS + 1) = 1.5625 % (<= 2 % by construction).  Buckets
 * cover [0, 2^HIST_MAX_POW) ns (2^40 ns = 18.3 min); larger values go to
 * the last bucket, which counts overflows only.
 *
 * Arguments, read at the width and sign of their C type (hist_arg_value):
 * log2 buckets of the value as a number >= 0: bucket 0 holds 0, bucket k
 * (1..64) holds [2^(k-1), 2^k - 1] (a negative value is out of range).
 * Linear buckets (MIN + k * STEP, signed) use the same array size.
 */
#ifndef CMON_HIST_BUCKETS_H
#define CMON_HIST_BUCKETS_H

#define HIST_SUB_BITS 5
#define HIST_SUB_COUNT (1u << HIST_SUB_BITS)
#define HIST_MAX_POW 40
/* Rows: one for [0, 32), then one per power of two 2^5 .. 2^39; plus the
 * overflow bucket. */
#define HIST_ROWS (HIST_MAX_POW - HIST_SUB_BITS + 1)
#define HIST_OVERFLOW_BUCKET (HIST_ROWS * HIST_SUB_COUNT)
#define HIST_NBUCKETS (HIST_OVERFLOW_BUCKET + 1)
#define HIST_MAX_VALUE (1ULL << HIST_MAX_POW) /* first value that overflows */

#define HIST_ARG_NBUCKETS 65

#define HIST_INLINE static inline __attribute__((always_inline))

/* floor(log2(v)) for v > 0; 0 for v == 0.  Branch-free steps: BPF has no
 * count-leading-zeros instruction. */
HIST_INLINE __u32 hist_log2(__u64 v)
{
	__u32 r, s;

	r = (v > 0xFFFFFFFFULL) << 5;
	v >>= r;
	s = (v > 0xFFFF) << 4;
	v >>= s;
	r |= s;
	s = (v > 0xFF) << 3;
	v >>= s;
	r |= s;
	s = (v > 0xF) << 2;
	v >>= s;
	r |= s;
	s = (v > 0x3) << 1;
	v >>= s;
	r |= s;
	r |= (__u32)(v >> 1);
	return r;
}

/* The log-linear bucket of a latency in ns: 0 .. HIST_NBUCKETS - 1. */
HIST_INLINE __u32 hist_lat_bucket(__u64 v)
{
	__u32 e;

	if (v < HIST_SUB_COUNT)
		return (__u32)v;
	if (v >= HIST_MAX_VALUE)
		return HIST_OVERFLOW_BUCKET;
	e = hist_log2(v); /* HIST_SUB_BITS .. HIST_MAX_POW - 1 */
	return ((e - HIST_SUB_BITS + 1) << HIST_SUB_BITS) +
	       ((__u32)(v >> (e - HIST_SUB_BITS)) & (HIST_SUB_COUNT - 1));
}

/* The log2 bucket of an argument taken as unsigned: 0 .. 64. */
HIST_INLINE __u32 hist_arg_log2_bucket(__u64 v)
{
	return v ? hist_log2(v) + 1 : 0;
}

/* Argument V as its C type reads it: the low BYTES bytes (1, 2, 4, 8),
 * sign-extended when IS_SIGNED: -7 in an int is -7, not 4294967289. */
HIST_INLINE __u64 hist_arg_value(__u64 v, __u32 bytes, __u32 is_signed)
{
	__u32 shift = bytes >= 1 && bytes < 8 ? 64 - 8 * bytes : 0;

	if (!shift)
		return v;
	return is_signed ? (__u64)((__s64)(v << shift) >> shift) : (v << shift) >> shift;
}

/* The linear bucket of V (signed) for buckets MIN + k * STEP (STEP > 0), or
 * HIST_ARG_NBUCKETS when V is below MIN or past the last bucket. */
HIST_INLINE __u32 hist_arg_linear_bucket(__u64 v, __u64 min, __u64 step)
{
	__u64 k;

	if ((__s64)v < (__s64)min || !step)
		return HIST_ARG_NBUCKETS;
	/* v >= min: the unsigned difference is the exact distance. */
	k = (v - min) / step;
	return k < HIST_ARG_NBUCKETS ? (__u32)k : HIST_ARG_NBUCKETS;
}

#endif
