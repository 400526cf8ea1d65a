// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* series.c: a probe's series values, from kernel aggregates to cumulative
 * Prometheus buckets, and the table that sums them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "agent/series.h"
#include "agg/hist.h"

const char *const series_lat_le[SERIES_LAT_NBOUNDS] = {
	"1e-06", "5e-06", "1e-05", "5e-05", "0.0001", "0.0005", "0.001", "0.005",
	"0.01",  "0.05",  "0.1",   "0.5",   "1",      "5",      "10",
};

const uint64_t series_lat_bound_ns[SERIES_LAT_NBOUNDS] = {
	1000ull,        5000ull,        10000ull,       50000ull,       100000ull,
	500000ull,      1000000ull,     5000000ull,     10000000ull,    50000000ull,
	100000000ull,   500000000ull,   1000000000ull,  5000000000ull,  10000000000ull,
};

/* 2^k - 1 for k = 0..63, as decimal integers. */
const char *const series_arg_le[SERIES_ARG_NBOUNDS] = {
	"0", "1", "3", "7", "15", "31", "63", "127", "255", "511", "1023", "2047",
	"4095", "8191", "16383", "32767", "65535", "131071", "262143", "524287",
	"1048575", "2097151", "4194303", "8388607", "16777215", "33554431", "67108863",
	"134217727", "268435455", "536870911", "1073741823", "2147483647", "4294967295",
	"8589934591", "17179869183", "34359738367", "68719476735", "137438953471",
	"274877906943", "549755813887", "1099511627775", "2199023255551", "4398046511103",
	"8796093022207", "17592186044415", "35184372088831", "70368744177663",
	"140737488355327", "281474976710655", "562949953421311", "1125899906842623",
	"2251799813685247", "4503599627370495", "9007199254740991", "18014398509481983",
	"36028797018963967", "72057594037927935", "144115188075855871",
	"288230376151711743", "576460752303423487", "1152921504606846975",
	"2305843009213693951", "4611686018427387903", "9223372036854775807",
};

void series_val__from_profile(struct series_val *v, const struct func_profile *fp)
{
	uint64_t cum = 0;

	memset(v, 0, sizeof(*v));
	v->calls = fp->calls;
	v->lost = fp->lost;
	v->filtered = fp->filtered;
	/* +Inf and _count from the histogram itself, so the buckets and the
	 * count always agree. */
	v->lat_count = hist__total(fp->lat_hist, HIST_NBUCKETS);
	v->lat_sum_ns = fp->lat_sum_ns;
	for (size_t i = 0; i < SERIES_LAT_NBOUNDS; i++)
		v->lat_le[i] = hist__count_le(fp->lat_hist, HIST_NBUCKETS, series_lat_bound_ns[i]);
	/* Log2 bucket k holds [2^(k-1), 2^k - 1]: buckets 0..k are <= 2^k - 1.
	 * In log2 mode only a negative value of a signed argument is out of
	 * range (hist_buckets.h): it is <= 0, so in every bucket. */
	cum = fp->arg_overflow;
	for (size_t k = 0; k < SERIES_ARG_NBOUNDS; k++) {
		cum += fp->arg_hist[k];
		v->arg_le[k] = cum;
	}
	v->arg_count = cum + fp->arg_hist[SERIES_ARG_NBOUNDS];
}

void series_val__add(struct series_val *acc, const struct series_val *v)
{
	acc->calls += v->calls;
	acc->lost += v->lost;
	acc->filtered += v->filtered;
	acc->lat_count += v->lat_count;
	acc->lat_sum_ns += v->lat_sum_ns;
	for (size_t i = 0; i < SERIES_LAT_NBOUNDS; i++)
		acc->lat_le[i] += v->lat_le[i];
	acc->arg_count += v->arg_count;
	for (size_t i = 0; i < SERIES_ARG_NBOUNDS; i++)
		acc->arg_le[i] += v->arg_le[i];
}

int series_table__add(struct series_table *t, const char *func, uint32_t pid,
		      const struct series_val *v)
{
	struct series_row *r;

	if (GROW(t->rows, t->n, t->cap, 16))
		return -ENOMEM;
	r = &t->rows[t->n];
	r->func = strdup(func);
	if (!r->func)
		return -ENOMEM;
	r->pid = pid;
	r->v = *v;
	t->n++;
	return 0;
}

int series_table__merge(struct series_table *t, const struct series_table *src)
{
	for (size_t i = 0; i < src->n; i++) {
		int err = series_table__add(t, src->rows[i].func, src->rows[i].pid, &src->rows[i].v);

		if (err)
			return err;
	}
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct series_row *x = a, *y = b;
	int c = strcmp(x->func, y->func);

	if (c)
		return c;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void series_table__normalize(struct series_table *t)
{
	size_t out = 0;

	if (t->n > 1)
		qsort(t->rows, t->n, sizeof(*t->rows), row_cmp);
	for (size_t i = 0; i < t->n; i++) {
		if (out && !row_cmp(&t->rows[out - 1], &t->rows[i])) {
			series_val__add(&t->rows[out - 1].v, &t->rows[i].v);
			free(t->rows[i].func);
			continue;
		}
		t->rows[out++] = t->rows[i];
	}
	t->n = out;
}

void series_table__relabel(struct series_table *t, uint32_t old_pid, uint32_t new_pid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].pid == old_pid)
			t->rows[i].pid = new_pid;
}

void series_table__clear(struct series_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].func);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
