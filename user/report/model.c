// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * model.c: the report's data, reduced from every call so the page stays
 * small whatever the input:
 *
 *  - the per-function table is exact (percentiles from the sorted latencies);
 *  - latency over time: a function with more than REPORT_MAX_POINTS calls
 *    is cut into REPORT_BUCKETS equal time buckets, and each bucket keeps its
 *    fastest and its slowest call (outliers survive, density does not);
 *  - memory over time: the same, per process, on RSS;
 *  - the distribution (10 log bins per decade) and calls per second (200
 *    time buckets) count every call;
 *  - charts show the REPORT_MAX_FUNCS functions with the most calls (the
 *    table lists them all).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "report.h"

#define REPORT_MAX_POINTS 4000
#define REPORT_BUCKETS 1000
#define REPORT_MAX_FUNCS 8
#define REPORT_MAX_PIDS 4
#define REPORT_RATE_BUCKETS 200
#define REPORT_GROWTH_TOP 20

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct fstat {
	uint32_t func;
	uint64_t calls, returned, total, max;
	int64_t rss_growth;
	uint64_t *lat; /* returned calls' latencies, sorted */
};

static int by_calls(const void *a, const void *b)
{
	const struct fstat *x = a, *y = b;

	return x->calls != y->calls ? (x->calls < y->calls ? 1 : -1) : (int)x->func - (int)y->func;
}

static uint64_t pct(const struct fstat *f, double p)
{
	size_t i;

	if (!f->returned)
		return 0;
	i = (size_t)ceil(p * (double)f->returned) - 1;
	return f->lat[i < f->returned ? i : f->returned - 1];
}

static double sec(const struct report *r, uint64_t t0, uint64_t ns)
{
	(void)r;
	return (double)(int64_t)(ns - t0) / 1e9;
}

/* Points (t, v) of one series reduced as the file comment says. */
struct pts {
	double *t, *v;
	size_t n, cap;
};

static void pts__add(struct pts *p, double t, double v)
{
	size_t cap_t = p->cap; /* t beside v: the same capacity */

	if (GROW(p->t, p->n, cap_t, 256) || GROW(p->v, p->n, p->cap, 256))
		return;
	p->t[p->n] = t;
	p->v[p->n++] = v;
}

static int by_t(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* json {"t": [...], "v": [...]} of P, downsampled when large, sorted by t. */
static json_t *pts__json(struct pts *p, double span, bool *cut)
{
	json_t *jt = json_array(), *jv = json_array();
	double *pairs = malloc((p->n ? p->n : 1) * 2 * sizeof(double));
	size_t n = 0;

	if (!pairs || !jt || !jv)
		goto out;
	if (p->n <= REPORT_MAX_POINTS || span <= 0) {
		for (size_t i = 0; i < p->n; i++) {
			pairs[2 * n] = p->t[i];
			pairs[2 * n++ + 1] = p->v[i];
		}
	} else {
		size_t *lo = malloc(REPORT_BUCKETS * sizeof(size_t)), *hi = malloc(REPORT_BUCKETS *
										   sizeof(size_t));

		*cut = true;
		if (!lo || !hi) {
			free(lo);
			free(hi);
			goto out;
		}
		for (size_t b = 0; b < REPORT_BUCKETS; b++)
			lo[b] = hi[b] = SIZE_MAX;
		for (size_t i = 0; i < p->n; i++) {
			size_t b = (size_t)(p->t[i] / span * REPORT_BUCKETS);

			if (b >= REPORT_BUCKETS)
				b = REPORT_BUCKETS - 1;
			if (lo[b] == SIZE_MAX || p->v[i] < p->v[lo[b]])
				lo[b] = i;
			if (hi[b] == SIZE_MAX || p->v[i] > p->v[hi[b]])
				hi[b] = i;
		}
		for (size_t b = 0; b < REPORT_BUCKETS; b++) {
			if (lo[b] == SIZE_MAX)
				continue;
			pairs[2 * n] = p->t[lo[b]];
			pairs[2 * n++ + 1] = p->v[lo[b]];
			if (hi[b] != lo[b]) {
				pairs[2 * n] = p->t[hi[b]];
				pairs[2 * n++ + 1] = p->v[hi[b]];
			}
		}
		free(lo);
		free(hi);
	}
	if (n > 1)
		qsort(pairs, n, 2 * sizeof(double), by_t);
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(jt, json_real(pairs[2 * i]));
		json_array_append_new(jv, json_real(pairs[2 * i + 1]));
	}
out:
	free(pairs);
	return json_pack("{s:o, s:o}", "t", jt ? jt : json_array(), "v", jv ? jv : json_array());
}

static void pts__release(struct pts *p)
{
	free(p->t);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* What the charts share: the run's time range, each function's figures
 * (busiest first), and how many functions are charted. */
struct calls_view {
	const struct report *r;
	struct fstat *fs;
	uint64_t t0, t1, lmin, lmax; /* time range; smallest nonzero and largest latency */
	double span;
	size_t nshow;
	bool *cut;
};

/* Each function's counts, latencies (sorted, for percentiles) and RSS
 * growth; the time range; functions ordered busiest first.  -ENOMEM. */
static int calls_view__build(struct calls_view *v)
{
	const struct report *r = v->r;
	size_t *fill = calloc(r->n_funcs ? r->n_funcs : 1, sizeof(*fill));
	int err = -ENOMEM;

	v->fs = calloc(r->n_funcs ? r->n_funcs : 1, sizeof(*v->fs));
	v->t0 = v->lmin = UINT64_MAX;
	if (!v->fs || !fill)
		goto out;
	for (size_t i = 0; i < r->n_calls; i++) {
		const struct rcall *c = &r->calls[i];
		struct fstat *f = &v->fs[c->func];

		f->calls++;
		if (c->ts_ns < v->t0)
			v->t0 = c->ts_ns;
		if (c->ts_ns > v->t1)
			v->t1 = c->ts_ns;
		if (c->latency_ns == REPORT_NONE)
			continue;
		f->returned++;
		f->total += c->latency_ns;
		if (c->ts_ns + c->latency_ns > v->t1)
			v->t1 = c->ts_ns + c->latency_ns;
		if (c->latency_ns > f->max)
			f->max = c->latency_ns;
		if (c->latency_ns && c->latency_ns < v->lmin)
			v->lmin = c->latency_ns;
		if (c->latency_ns > v->lmax)
			v->lmax = c->latency_ns;
		if (c->rss_entry != REPORT_NONE && c->rss_exit != REPORT_NONE)
			f->rss_growth += (int64_t)(c->rss_exit - c->rss_entry);
	}
	v->span = v->t1 > v->t0 ? (double)(v->t1 - v->t0) / 1e9 : 0;
	for (size_t i = 0; i < r->n_funcs; i++) {
		v->fs[i].func = (uint32_t)i;
		v->fs[i].lat = malloc((v->fs[i].returned ? v->fs[i].returned : 1) * sizeof(uint64_t));
		if (!v->fs[i].lat)
			goto out;
	}
	for (size_t i = 0; i < r->n_calls; i++) {
		const struct rcall *c = &r->calls[i];

		if (c->latency_ns != REPORT_NONE)
			v->fs[c->func].lat[fill[c->func]++] = c->latency_ns;
	}
	/* (a count of 0 may come with a NULL array: qsort must not see it) */
	for (size_t i = 0; i < r->n_funcs; i++)
		if (v->fs[i].returned > 1)
			qsort(v->fs[i].lat, v->fs[i].returned, sizeof(uint64_t), cmp_u64);
	if (r->n_funcs > 1)
		qsort(v->fs, r->n_funcs, sizeof(*v->fs), by_calls);
	v->nshow = r->n_funcs < REPORT_MAX_FUNCS ? r->n_funcs : REPORT_MAX_FUNCS;
	err = 0;
out:
	free(fill);
	return err;
}

static void calls_view__release(struct calls_view *v)
{
	for (size_t i = 0; v->fs && i < v->r->n_funcs; i++)
		free(v->fs[i].lat);
	free(v->fs);
	v->fs = NULL;
}

/* The per-function table: counts, percentiles, RSS growth. */
static json_t *calls_table(const struct calls_view *v)
{
	json_t *table = json_array();

	for (size_t i = 0; i < v->r->n_funcs; i++) {
		const struct fstat *f = &v->fs[i];

		json_array_append_new(table, json_pack(
			"{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"func", v->r->funcs[f->func], "calls", (json_int_t)f->calls,
			"noreturn", (json_int_t)(f->calls - f->returned),
			"total_ns", (json_int_t)f->total,
			"mean_ns", (json_int_t)(f->returned ? f->total / f->returned : 0),
			"p50_ns", (json_int_t)pct(f, 0.5), "p90_ns", (json_int_t)pct(f, 0.9),
			"p99_ns", (json_int_t)pct(f, 0.99), "max_ns", (json_int_t)f->max,
			"returns", (json_int_t)f->returned, "rss_growth_bytes",
			(json_int_t)f->rss_growth));
	}
	return table;
}

/* Latency over time, per charted function. */
static json_t *latency_over_time(const struct calls_view *v)
{
	const struct report *r = v->r;
	json_t *over = json_array();

	for (size_t k = 0; k < v->nshow; k++) {
		struct pts p = {};

		for (size_t i = 0; i < r->n_calls; i++) {
			const struct rcall *c = &r->calls[i];

			if (c->func == v->fs[k].func && c->latency_ns != REPORT_NONE)
				pts__add(&p, sec(r, v->t0, c->ts_ns), (double)c->latency_ns / 1e3);
		}
		json_array_append_new(over, json_pack("{s:s, s:o}", "func", r->funcs[v->fs[k].func],
						      "points", pts__json(&p, v->span, v->cut)));
		pts__release(&p);
	}
	return over;
}

/* Distribution: 10 bins per decade, edges in µs. */
static json_t *latency_hist(const struct calls_view *v)
{
	json_t *hist = json_pack("{s:[], s:[]}", "edges_us", "series");
	size_t nb_lo, nb_hi;

	if (v->lmax < v->lmin)
		return hist;
	nb_lo = (size_t)floor(log10((double)v->lmin) * 10);
	nb_hi = (size_t)floor(log10((double)v->lmax) * 10) + 1;
	for (size_t b = nb_lo; b <= nb_hi; b++)
		json_array_append_new(json_object_get(hist, "edges_us"),
				      json_real(pow(10, (double)b / 10) / 1e3));
	for (size_t k = 0; k < v->nshow; k++) {
		size_t nb = nb_hi - nb_lo + 1;
		uint64_t *cnt = calloc(nb, sizeof(*cnt));
		json_t *a = json_array();

		if (!cnt)
			continue;
		for (size_t i = 0; i < v->fs[k].returned; i++) {
			double l = (double)(v->fs[k].lat[i] ? v->fs[k].lat[i] : 1);
			long b = (long)floor(log10(l) * 10) - (long)nb_lo;

			cnt[b < 0 ? 0 : (size_t)b >= nb ? nb - 1 : (size_t)b]++;
		}
		for (size_t b = 0; b < nb; b++)
			json_array_append_new(a, json_integer((json_int_t)cnt[b]));
		json_array_append_new(json_object_get(hist, "series"),
				      json_pack("{s:s, s:o}", "func", v->r->funcs[v->fs[k].func],
						"counts", a));
		free(cnt);
	}
	return hist;
}

/* Calls per second: REPORT_RATE_BUCKETS buckets, at least 1 ms wide. */
static json_t *call_rate(const struct calls_view *v)
{
	const struct report *r = v->r;
	double width = v->span / REPORT_RATE_BUCKETS;
	json_t *rate;
	size_t nb;

	if (width < 0.001)
		width = 0.001;
	rate = json_pack("{s:f, s:[], s:[]}", "bucket_s", width, "t", "series");
	nb = (size_t)(v->span / width) + 1;
	for (size_t b = 0; b < nb; b++)
		json_array_append_new(json_object_get(rate, "t"), json_real((double)b * width));
	for (size_t k = 0; k < v->nshow; k++) {
		uint64_t *cnt = calloc(nb, sizeof(*cnt));
		json_t *a = json_array();

		if (!cnt)
			continue;
		for (size_t i = 0; i < r->n_calls; i++)
			if (r->calls[i].func == v->fs[k].func) {
				size_t b = (size_t)(sec(r, v->t0, r->calls[i].ts_ns) / width);

				cnt[b < nb ? b : nb - 1]++;
			}
		for (size_t b = 0; b < nb; b++)
			json_array_append_new(a, json_real((double)cnt[b] / width));
		json_array_append_new(json_object_get(rate, "series"),
				      json_pack("{s:s, s:o}", "func", r->funcs[v->fs[k].func],
						"per_s", a));
		free(cnt);
	}
	return rate;
}

/* RSS and VMS over time of one process, at each call's entry and return. */
static json_t *process_memory(const struct calls_view *v, uint32_t pid)
{
	const struct report *r = v->r;
	struct pts rss = {}, vms = {};
	json_t *jr, *jv;

	for (size_t i = 0; i < r->n_calls; i++) {
		const struct rcall *c = &r->calls[i];

		if (c->pid != pid)
			continue;
		if (c->rss_entry != REPORT_NONE) {
			pts__add(&rss, sec(r, v->t0, c->ts_ns), (double)c->rss_entry / 1048576);
			pts__add(&vms, sec(r, v->t0, c->ts_ns), (double)c->vms_entry / 1048576);
		}
		if (c->rss_exit != REPORT_NONE && c->latency_ns != REPORT_NONE) {
			double t = sec(r, v->t0, c->ts_ns + c->latency_ns);

			pts__add(&rss, t, (double)c->rss_exit / 1048576);
			pts__add(&vms, t, (double)c->vms_exit / 1048576);
		}
	}
	jr = pts__json(&rss, v->span, v->cut);
	jv = pts__json(&vms, v->span, v->cut);
	pts__release(&rss);
	pts__release(&vms);
	return json_pack("{s:I, s:o, s:o}", "pid", (json_int_t)pid, "rss", jr, "vms", jv);
}

/* Memory per process (the first REPORT_MAX_PIDS seen) into MEM, and the
 * calls that grew RSS the most into GROWTH. */
static void memory_charts(const struct calls_view *v, json_t *mem, json_t *growth)
{
	const struct report *r = v->r;
	uint32_t pids[REPORT_MAX_PIDS];
	size_t np = 0;
	size_t *top = calloc(REPORT_GROWTH_TOP, sizeof(*top)), ntop = 0;

	for (size_t i = 0; i < r->n_calls; i++) {
		const struct rcall *c = &r->calls[i];
		size_t k;

		for (k = 0; k < np && pids[k] != c->pid; k++)
			;
		if (k == np && np < REPORT_MAX_PIDS)
			pids[np++] = c->pid;
		if (!top || c->rss_entry == REPORT_NONE || c->rss_exit == REPORT_NONE ||
		    c->rss_exit <= c->rss_entry)
			continue;
		/* insertion into the top list, largest growth first */
		k = ntop < REPORT_GROWTH_TOP ? ntop++ : REPORT_GROWTH_TOP;
		while (k > 0) {
			const struct rcall *o = &r->calls[top[k - 1]];

			if (o->rss_exit - o->rss_entry >= c->rss_exit - c->rss_entry)
				break;
			if (k < REPORT_GROWTH_TOP)
				top[k] = top[k - 1];
			k--;
		}
		if (k < REPORT_GROWTH_TOP)
			top[k] = i;
	}
	for (size_t k = 0; k < np; k++)
		json_array_append_new(mem, process_memory(v, pids[k]));
	for (size_t k = 0; k < ntop; k++) {
		const struct rcall *c = &r->calls[top[k]];

		json_array_append_new(growth, json_pack(
			"{s:s, s:I, s:f, s:I, s:I}", "func", r->funcs[c->func], "pid",
			(json_int_t)c->pid, "t_s",
			sec(r, v->t0, c->ts_ns + (c->latency_ns == REPORT_NONE ? 0 : c->latency_ns)),
			"growth_bytes", (json_int_t)(c->rss_exit - c->rss_entry),
			"rss_after_bytes", (json_int_t)c->rss_exit));
	}
	free(top);
}

static json_t *calls_model(const struct report *r, bool *cut)
{
	struct calls_view v = { .r = r, .cut = cut };
	json_t *m = json_object(), *mem = json_array(), *growth = json_array();

	if (!m || calls_view__build(&v)) {
		calls_view__release(&v);
		json_decref(mem);
		json_decref(growth);
		return m;
	}
	memory_charts(&v, mem, growth);
	json_object_set_new(m, "calls", json_integer((json_int_t)r->n_calls));
	json_object_set_new(m, "start_ns", json_integer(r->n_calls ? (json_int_t)v.t0 : 0));
	json_object_set_new(m, "span_s", json_real(v.span));
	json_object_set_new(m, "charted_funcs", json_integer((json_int_t)v.nshow));
	json_object_set_new(m, "table", calls_table(&v));
	json_object_set_new(m, "latency_over_time", latency_over_time(&v));
	json_object_set_new(m, "latency_hist", latency_hist(&v));
	json_object_set_new(m, "rate", call_rate(&v));
	json_object_set_new(m, "memory", mem);
	json_object_set_new(m, "growth", growth);
	calls_view__release(&v);
	return m;
}

static const char *row_str(json_t *row, const char *key)
{
	json_t *v = json_object_get(row, key);

	return json_is_string(v) ? json_string_value(v) : "";
}

/* Profile rows named as the calls are: MODULE:NAME when the same name is
 * profiled in another module.  A copy of ROWS (NULL on ENOMEM). */
static json_t *profile_rows(json_t *rows)
{
	json_t *out = json_deep_copy(rows), *seen = json_object(), *clash = json_object(), *row;
	size_t i;

	if (!out || !seen || !clash)
		goto fail;
	/* seen: name -> the first module it came with; clash: names seen with
	 * two modules */
	json_array_foreach(rows, i, row) {
		const char *fn = row_str(row, "func"), *mod = row_str(row, "module");
		json_t *first = json_object_get(seen, fn);

		if (!first) {
			if (json_object_set_new(seen, fn, json_string(mod)))
				goto fail;
		} else if (strcmp(json_string_value(first), mod) &&
			   json_object_set_new(clash, fn, json_true())) {
			goto fail;
		}
	}
	json_array_foreach(out, i, row) {
		const char *fn = row_str(row, "func"), *mod = row_str(row, "module");
		char *name;

		if (!*mod || !json_object_get(clash, fn))
			continue;
		if (asprintf(&name, "%s:%s", mod, fn) < 0)
			goto fail;
		if (json_object_set_new(row, "func", json_string(name))) {
			free(name);
			goto fail;
		}
		free(name);
	}
	json_decref(seen);
	json_decref(clash);
	return out;
fail:
	json_decref(out);
	json_decref(seen);
	json_decref(clash);
	return NULL;
}

json_t *report__model(const struct report *r)
{
	bool cut = false;
	json_t *m = json_object(), *final = json_array();
	size_t i;
	json_t *row;

	if (!m || !final)
		return NULL;
	json_object_set(m, "sources", r->sources);
	if (r->n_calls)
		json_object_set_new(m, "trace", calls_model(r, &cut));
	/* Profile: the final report's rows for the table; every report for
	 * calls per second between reports. */
	if (json_array_size(r->profile_rows)) {
		json_t *rows = profile_rows(r->profile_rows);

		if (!rows) {
			json_decref(final);
			json_decref(m);
			return NULL;
		}
		json_array_foreach(rows, i, row)
			if (json_is_true(json_object_get(row, "final")))
				json_array_append(final, row);
		json_object_set_new(m, "profile", json_pack("{s:o, s:o}", "final", final, "reports",
							   rows));
	} else {
		json_decref(final);
	}
	if (json_array_size(r->stats))
		json_object_set(m, "stats", r->stats);
	json_object_set_new(m, "downsampled", json_boolean(cut));
	json_object_set_new(m, "method", json_string(
		"Tables count every call exactly (percentiles from all latencies). Latency and "
		"memory over time: a series of more than 4000 points is cut into 1000 equal time "
		"buckets and each bucket keeps its lowest and highest value (outliers are kept). "
		"The distribution (10 logarithmic bins per decade) and calls per second (200 time "
		"buckets) count every call. Charts show the 8 functions with the most calls."));
	return m;
}
