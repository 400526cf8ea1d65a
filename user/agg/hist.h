/*
 * hist.h: the histograms of a profile, read from user space.
 *
 * Latency histograms are log-linear (bpf/hist_buckets.h, shared with the BPF
 * programs): values below 32 ns have a bucket each; above, each power of two
 * is split into 32 sub-buckets.  A bucket is reported by its midpoint, so a
 * percentile is within 1/64 = 1.5625 % of the true value (<= 2 % by
 * construction); values up to 2^40 ns (18 min), larger ones land in an
 * overflow bucket.  Argument histograms are log2 of the unsigned value
 * (bucket 0: 0; bucket k: [2^(k-1), 2^k - 1]) or linear (MIN + k * STEP).
 */
#ifndef CMON_HIST_H
#define CMON_HIST_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include "hist_buckets.h"

/* The latency bucket of V ns: 0 .. HIST_NBUCKETS - 1 (as the kernel does). */
unsigned hist__bucket(uint64_t v);

/* Smallest and largest value (inclusive) of latency bucket B; the overflow
 * bucket is [2^40, UINT64_MAX].  B must be < HIST_NBUCKETS. */
uint64_t hist__bucket_low(unsigned b);
uint64_t hist__bucket_high(unsigned b);

/* The value bucket B stands for: its midpoint, (low + high) / 2, exact for
 * one-value buckets; the overflow bucket stands for its low end, 2^40. */
uint64_t hist__bucket_mid(unsigned b);

/* Sum of the N buckets. */
uint64_t hist__total(const uint64_t *buckets, size_t n);

/* The Q-quantile (0 <= Q <= 1, clamped) by nearest rank: the midpoint of
 * the bucket holding the ceil(Q * total)-th smallest value (at least the
 * first).  0 when the histogram is empty. */
uint64_t hist__percentile(const uint64_t *buckets, size_t n, double q);

/* For Prometheus-style cumulative buckets: the number of values certainly
 * <= BOUND_NS, i.e. in buckets whose high end is <= BOUND_NS.  Exact when
 * BOUND_NS + 1 starts a bucket; otherwise the bucket straddling the bound
 * (at most 1.6 % of the bound wide) is left out.  UINT64_MAX counts all. */
uint64_t hist__count_le(const uint64_t *buckets, size_t n, uint64_t bound_ns);

/* Bounds of log2 argument bucket B (0 .. HIST_ARG_NBUCKETS - 1), inclusive. */
uint64_t hist__arg_log2_low(unsigned b);
uint64_t hist__arg_log2_high(unsigned b);

#endif
