// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_profile.c: `cmon profile`: resolve, attach the aggregating programs,
 * print a table of per-function statistics every --interval and at the end
 * (cumulative since attach), detach.  Nothing per call leaves the kernel.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/grow.h"
#include "core/clock.h"
#include "cmon_abi.h"
#include "agg/budget.h"
#include "agg/hist.h"
#include "agg/hist_arg.h"
#include "agg/profiler.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "probe/follow.h"
#include "core/log.h"
#include "event/pipeline.h"
#include "event/tracer.h"
#include "python/cpython.h"
#include "python/pyprof.h"
#include "output/schema.h"
#include "output/writer.h"
#include "filter/expr.h"
#include "probe/calib.h"

#define MAX_PIDS_PER_FUNC 1024 /* --per-pid: distinct processes per function */
#define TICK_S 0.1             /* how often the end of the targets is checked */
#define BUDGET_ROUND_S 0.25    /* --budget: how often the rates are read */


/* One line of a report: a function (and process) as the kernel summed it. */
struct prof_row {
	uint32_t func_id, pid;
	uint64_t seen;  /* --budget: calls counted (CALLS scaled up from them) */
	double sampled; /* --budget: the attached fraction now (1: whole) */
	uint64_t calls, returns, noreturn, lost, filtered;
	uint64_t total, self, min, max, mean, p50, p90, p99, p999;
	int64_t rss_growth;
	uint64_t arg_hist[HIST_ARG_NBUCKETS];
	uint64_t arg_overflow;
};

struct profile_run {
	struct cmd_opts opts;
	struct session ses; /* patterns, output, processes */
	struct probe_set *set;
	const struct probe_calib *calib; /* the probes' own cost, taken out in the kernel; NULL: raw */
	struct profiler *prof;
	struct prof_row *rows;
	size_t n_rows, cap_rows;
	unsigned reports;
	double t_start;
	struct strbuf sb; /* escaping CSV and JSON strings */
	struct hist_arg hist; /* --hist: its register, width and sign */
	struct cmon_expr_prog *exprs; /* --if, 2 per function */
	bool usage_err;       /* --if does not fit a function */
	bool stopped_starting; /* a signal came before the probes were in */
	/* --py: the trace programs' per-call records, summed here */
	struct pytrace *py;
	struct pyprof *pp;
	struct pipeline *pipe; /* --py */
	struct tracer *tracer; /* the pipeline's */
	uint32_t py_func;
	/* --budget: each function's duty-cycle state and calls seen */
	struct budget_fn *bfn;
	struct budget_ledger ledger;
	uint64_t *seen;
};

/* ---------------------------------------------------------------- collecting */

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static uint64_t pct(const struct func_profile *fp, double q)
{
	return hist__percentile(fp->lat_hist, HIST_NBUCKETS, q);
}

static int collect(void *ctx, const struct func_profile *fp)
{
	struct profile_run *r = ctx;
	struct prof_row *row;

	/* Probed for --focus alone: not a function the user profiles. */
	if (!r->pp && fp->func_id < r->set->n_funcs && r->set->funcs[fp->func_id].quiet)
		return 0;
	if (GROW(r->rows, r->n_rows, r->cap_rows, 16))
		return -ENOMEM;
	row = &r->rows[r->n_rows++];
	memset(row, 0, sizeof(*row));
	row->func_id = fp->func_id;
	row->pid = fp->pid;
	row->calls = fp->calls;
	row->seen = fp->seen_calls;
	row->sampled = fp->sampled;
	row->returns = fp->returns;
	row->noreturn = fp->noreturn;
	row->lost = fp->lost;
	row->filtered = fp->filtered;
	row->rss_growth = fp->rss_growth_sum;
	if (fp->returns) {
		/* The function's own latencies: the kernel took the probes'
		 * cost out of each before counting it (profiler_opts.calib). */
		row->min = fp->lat_min_ns;
		row->max = fp->lat_max_ns;
		row->total = fp->lat_sum_ns;
		row->self = fp->self_sum_ns;
		row->mean = row->total / fp->returns;
		/* A bucket midpoint can lie past what was seen: the true
		 * percentile is within [min, max], so clamping only helps. */
		row->p50 = clamp_u64(pct(fp, 0.50), row->min, row->max);
		row->p90 = clamp_u64(pct(fp, 0.90), row->min, row->max);
		row->p99 = clamp_u64(pct(fp, 0.99), row->min, row->max);
		row->p999 = clamp_u64(pct(fp, 0.999), row->min, row->max);
	}
	memcpy(row->arg_hist, fp->arg_hist, sizeof(row->arg_hist));
	row->arg_overflow = fp->arg_overflow;
	return 0;
}

/* Most time spent first; then by function and process, for a stable order. */
static int cmp_rows(const void *a, const void *b)
{
	const struct prof_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->func_id != y->func_id)
		return x->func_id < y->func_id ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* ---------------------------------------------------------------- argument histograms */

struct arg_bucket {
	bool is_signed;
	int64_t slo, shi;  /* linear */
	uint64_t ulo, uhi; /* log2 */
	uint64_t count;
};

/* Bucket K of the argument histogram as the user asked for it (linear
 * buckets past --hist-linear's MAX are out of range). */
static bool arg_bucket(const struct cmd_opts *o, const struct prof_row *row, unsigned k,
		       struct arg_bucket *out)
{
	*out = (struct arg_bucket){ .count = row->arg_hist[k] };
	if (o->hist_linear) {
		if (k >= o->lin_buckets)
			return false;
		out->is_signed = true;
		out->slo = (int64_t)((uint64_t)o->lin_min + (uint64_t)k * (uint64_t)o->lin_step);
		out->shi = (int64_t)((uint64_t)out->slo + (uint64_t)o->lin_step - 1);
		return true;
	}
	out->is_signed = false;
	out->ulo = hist__arg_log2_low(k);
	out->uhi = hist__arg_log2_high(k);
	return true;
}

static uint64_t arg_out_of_range(const struct cmd_opts *o, const struct prof_row *row)
{
	uint64_t n = row->arg_overflow;

	for (unsigned k = o->hist_linear ? o->lin_buckets : HIST_ARG_NBUCKETS; k < HIST_ARG_NBUCKETS; k++)
		n += row->arg_hist[k];
	return n;
}

/* ---------------------------------------------------------------- text */

/* 3 significant digits with a unit: 523ns 12.3us 1.02ms 4.50s */
static void fmt_ns(char *buf, size_t size, uint64_t ns)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	double v = (double)ns;
	unsigned u = 0;

	if (ns < 1000) {
		snprintf(buf, size, "%lluns", (unsigned long long)ns);
		return;
	}
	while (v >= 1000 && u < 3) {
		v /= 1000;
		u++;
	}
	snprintf(buf, size, "%.*f%s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

static void fmt_bytes(char *buf, size_t size, int64_t b)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)(b < 0 ? -b : b);
	unsigned u = 0;

	if (!b) {
		snprintf(buf, size, "0");
		return;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, "%s%.*f%s", b < 0 ? "-" : "+", u == 0 ? 0 : v < 10 ? 2 : v < 100 ? 1 : 0,
		 v, units[u]);
}

static void put_escaped(struct profile_run *r, const char *s, bool json)
{
	strbuf__reset(&r->sb);
	if ((json ? json_escape : csv_escape)(&r->sb, s) == 0)
		fwrite(r->sb.buf, 1, r->sb.len, r->ses.out);
}

/* A name as a person reads it: control bytes shown as '?'. */
static void put_name(FILE *f, const char *s, int width)
{
	int n = 0;

	for (; *s; s++, n++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
	for (; n < width; n++)
		fputc(' ', f);
}

static const char *func_name(const struct profile_run *r, uint32_t id)
{
	if (pyprof__name(r->pp, id))
		return pyprof__name(r->pp, id);
	return id < r->set->n_funcs ? r->set->funcs[id].name : "?";
}

/* How much the probes' cost taken out of each latency of function ID
 * varies (0: none taken out).  A per-call figure below it is not a
 * measurement: the calls took less than the figure plus it. */
static uint64_t lat_spread(const struct profile_run *r, uint32_t id)
{
	if (pyprof__name(r->pp, id) || id >= r->set->n_funcs || !r->calib)
		return 0;
	return probe_calib__spread(r->calib, &r->set->funcs[id]);
}

static const char *func_module(const struct profile_run *r, uint32_t id)
{
	if (pyprof__module(r->pp, id))
		return pyprof__module(r->pp, id);
	return id < r->set->n_funcs ? r->set->objects[r->set->funcs[id].object].module : "?";
}

static void text_hist(struct profile_run *r, const struct prof_row *row)
{
	const struct cmd_opts *o = &r->opts;
	struct arg_bucket b = {};
	uint64_t peak = 0, oor = arg_out_of_range(o, row);
	int first = -1, last = -1;

	for (unsigned k = 0; k < HIST_ARG_NBUCKETS; k++) {
		if (!arg_bucket(o, row, k, &b) || !b.count)
			continue;
		if (first < 0)
			first = (int)k;
		last = (int)k;
		if (b.count > peak)
			peak = b.count;
	}
	fputs("\n", r->ses.out);
	put_name(r->ses.out, func_name(r, row->func_id), 0);
	if (o->per_pid)
		fprintf(r->ses.out, " (pid %u)", row->pid);
	fprintf(r->ses.out, ": %s%s", o->hist_arg < HIST_ARG_RET && isdigit(*o->hist) ? "arg" : "",
		o->hist);
	if (r->hist.typed)
		fprintf(r->ses.out, " (%s)", r->hist.type);
	if (o->hist_linear)
		fprintf(r->ses.out, ", linear from %lld by %lld\n", (long long)o->lin_min,
			(long long)o->lin_step);
	else
		fprintf(r->ses.out, ", log2%s\n", r->hist.is_signed ? " (negative values out of range)"
			: r->hist.typed ? "" : " (as unsigned)");
	for (int k = first; k >= 0 && k <= last; k++) {
		char lo[24], hi[24];
		int bar;

		arg_bucket(o, row, (unsigned)k, &b);
		if (b.is_signed) {
			snprintf(lo, sizeof(lo), "%lld", (long long)b.slo);
			snprintf(hi, sizeof(hi), "%lld", (long long)b.shi);
		} else {
			snprintf(lo, sizeof(lo), "%llu", (unsigned long long)b.ulo);
			snprintf(hi, sizeof(hi), "%llu", (unsigned long long)b.uhi);
		}
		bar = peak ? (int)(b.count * 40 / peak) : 0;
		fprintf(r->ses.out, "  %20s .. %-20s %12llu |%-40.*s|\n", lo, hi,
			(unsigned long long)b.count, bar,
			"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@");
	}
	if (oor)
		fprintf(r->ses.out, "  %-44s %12llu\n", "out of range", (unsigned long long)oor);
	if (first < 0 && !oor)
		fputs("  (no values)\n", r->ses.out);
}

struct edge_out {
	struct profile_run *r;
	bool json, first;
};

static void put_edge(void *ctx, uint32_t other, uint64_t calls, uint64_t total_ns)
{
	struct edge_out *e = ctx;
	FILE *f = e->r->ses.out;

	if (e->json) {
		fputs(e->first ? "{\"func\":" : ",{\"func\":", f);
		put_escaped(e->r, func_name(e->r, other), true);
		fputs(",\"module\":", f);
		put_escaped(e->r, func_module(e->r, other), true);
		fprintf(f, ",\"calls\":%llu,\"total_ns\":%llu}", (unsigned long long)calls,
			(unsigned long long)total_ns);
	} else {
		char t[24];

		fmt_ns(t, sizeof(t), total_ns);
		fputs(e->first ? " " : ", ", f);
		put_name(f, func_name(e->r, other), 0);
		fprintf(f, " %llu (%s)", (unsigned long long)calls, t);
	}
	e->first = false;
}

/* --py --callers: each function's callers and callees among the selected
 * ones, with the calls and their time. */
static void text_edges(struct profile_run *r, const struct prof_row *row)
{
	struct edge_out e = { .r = r };

	fputc('\n', r->ses.out);
	put_name(r->ses.out, func_name(r, row->func_id), 0);
	fprintf(r->ses.out, " (%s)\n  callers:", func_module(r, row->func_id));
	e.first = true;
	pyprof__edges(r->pp, row->func_id, true, put_edge, &e);
	fputs(e.first ? " -\n  callees:" : "\n  callees:", r->ses.out);
	e.first = true;
	pyprof__edges(r->pp, row->func_id, false, put_edge, &e);
	fputs(e.first ? " -\n" : "\n", r->ses.out);
}

static void text_report(struct profile_run *r, double elapsed, bool final)
{
	const struct cmd_opts *o = &r->opts;
	int w = 8;

	for (size_t i = 0; i < r->n_rows; i++) {
		int n = (int)strlen(func_name(r, r->rows[i].func_id));

		if (n > w)
			w = n < 48 ? n : 48;
	}
	if (r->reports > 1)
		fputc('\n', r->ses.out);
	fprintf(r->ses.out, "cmon profile: %.1f s elapsed, cumulative since start%s\n", elapsed,
		final ? " (final)" : "");
	if (!r->n_rows) {
		fputs("(no calls yet)\n", r->ses.out);
		return;
	}
	put_name(r->ses.out, "FUNCTION", w);
	if (o->per_pid)
		fprintf(r->ses.out, " %8s", "PID");
	fprintf(r->ses.out, " %10s %9s", "CALLS", "TOTAL");
	if (r->pp)
		fprintf(r->ses.out, " %9s", "SELF");
	fprintf(r->ses.out, " %9s %9s %9s %9s %9s %9s %9s %10s %7s %6s", "MEAN", "MIN", "P50",
		"P90", "P99", "P99.9", "MAX", "RSS+", "NORET", "LOST");
	if (o->if_expr)
		fprintf(r->ses.out, " %10s", "FILTERED");
	if (r->pp)
		fprintf(r->ses.out, " %s", "MODULE");
	fputc('\n', r->ses.out);
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct prof_row *row = &r->rows[i];
		char t[8][24], rss[24];
		uint64_t v[8] = { row->total, row->mean, row->min, row->p50,
				  row->p90, row->p99, row->p999, row->max };

		uint64_t spread = lat_spread(r, row->func_id);

		for (int k = 0; k < 8; k++) {
			uint64_t bound = k ? probe_calib__bound(v[k], spread) : 0; /* not TOTAL */

			if (!row->returns) {
				snprintf(t[k], sizeof(t[k]), "-");
			} else if (bound) {
				t[k][0] = '<'; /* not measured: README "latencies" */
				fmt_ns(t[k] + 1, sizeof(t[k]) - 1, bound);
			} else {
				fmt_ns(t[k], sizeof(t[k]), v[k]);
			}
		}
		if (o->no_mem)
			snprintf(rss, sizeof(rss), "-");
		else
			fmt_bytes(rss, sizeof(rss), row->rss_growth);
		put_name(r->ses.out, func_name(r, row->func_id), w);
		if (o->per_pid) {
			if (row->pid)
				fprintf(r->ses.out, " %8u", row->pid);
			else
				fprintf(r->ses.out, " %8s", "?");
		}
		fprintf(r->ses.out, " %10llu %9s", (unsigned long long)row->calls, t[0]);
		if (r->pp) {
			char self[24];

			if (row->returns)
				fmt_ns(self, sizeof(self), row->self);
			else
				snprintf(self, sizeof(self), "-");
			fprintf(r->ses.out, " %9s", self);
		}
		fprintf(r->ses.out, " %9s %9s %9s %9s %9s %9s %9s %10s %7llu %6llu", t[1], t[2],
			t[3], t[4], t[5], t[6], t[7], rss, (unsigned long long)row->noreturn,
			(unsigned long long)row->lost);
		if (o->if_expr)
			fprintf(r->ses.out, " %10llu", (unsigned long long)row->filtered);
		if (r->pp) {
			/* the file (its folder too: a package's module) and the def
			 * line: which function of that name it is */
			const char *m = func_module(r, row->func_id), *base = m;

			for (const char *c = m, *last = NULL; *c; c++) {
				if (*c != '/')
					continue;
				if (last)
					base = last + 1;
				last = c;
			}
			fputc(' ', r->ses.out);
			put_name(r->ses.out, base, 0);
		}
		fputc('\n', r->ses.out);
	}
	if (r->pp && o->callers)
		for (size_t i = 0; i < r->n_rows; i++)
			text_edges(r, &r->rows[i]);
	if (o->hist_arg >= 0)
		for (size_t i = 0; i < r->n_rows; i++)
			text_hist(r, &r->rows[i]);
}

/* ---------------------------------------------------------------- CSV and JSON */

#define CSV_HEADER                                                                         \
	"schema,report,elapsed_s,final,func,module,pid,calls,returns,noreturn,lost,total_ns,min_ns," \
	"mean_ns,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,rss_growth_bytes,arg_hist,"           \
	"arg_out_of_range,filtered,latency_spread_ns,ts_ns\r\n"



/* The non-empty buckets, LOW..HIGH=COUNT separated by ';' (CSV) or as
 * [{"low":..,"high":..,"count":..}...] (JSON). */
static void put_hist(struct profile_run *r, const struct prof_row *row, bool json)
{
	struct arg_bucket b = {};
	bool first = true;

	if (json)
		fputc('[', r->ses.out);
	for (unsigned k = 0; k < HIST_ARG_NBUCKETS; k++) {
		if (!arg_bucket(&r->opts, row, k, &b) || !b.count)
			continue;
		if (!first)
			fputc(json ? ',' : ';', r->ses.out);
		first = false;
		if (json && b.is_signed)
			fprintf(r->ses.out, "{\"low\":%lld,\"high\":%lld,\"count\":%llu}", (long long)b.slo,
				(long long)b.shi, (unsigned long long)b.count);
		else if (json)
			fprintf(r->ses.out, "{\"low\":%llu,\"high\":%llu,\"count\":%llu}",
				(unsigned long long)b.ulo, (unsigned long long)b.uhi,
				(unsigned long long)b.count);
		else if (b.is_signed)
			fprintf(r->ses.out, "%lld..%lld=%llu", (long long)b.slo, (long long)b.shi,
				(unsigned long long)b.count);
		else
			fprintf(r->ses.out, "%llu..%llu=%llu", (unsigned long long)b.ulo,
				(unsigned long long)b.uhi, (unsigned long long)b.count);
	}
	if (json)
		fputc(']', r->ses.out);
}

static void csv_report(struct profile_run *r, double elapsed, bool final)
{
	const struct cmd_opts *o = &r->opts;
	/* when the report was taken, on the clock trace's ts_ns reads */
	uint64_t wall = clock__wall_ns();

	if (r->reports == 1)
		fputs(CSV_HEADER, r->ses.out);
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct prof_row *row = &r->rows[i];

		fprintf(r->ses.out, CMON_SCHEMA_TEXT ",%u,%.3f,%d,", r->reports, elapsed, final);
		put_escaped(r, func_name(r, row->func_id), false);
		fputc(',', r->ses.out);
		put_escaped(r, func_module(r, row->func_id), false);
		fputc(',', r->ses.out);
		if (o->per_pid)
			fprintf(r->ses.out, "%u", row->pid);
		fprintf(r->ses.out, ",%llu,%llu,%llu,%llu,", (unsigned long long)row->calls,
			(unsigned long long)row->returns, (unsigned long long)row->noreturn,
			(unsigned long long)row->lost);
		if (row->returns)
			fprintf(r->ses.out, "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,",
				(unsigned long long)row->total, (unsigned long long)row->min,
				(unsigned long long)row->mean, (unsigned long long)row->p50,
				(unsigned long long)row->p90, (unsigned long long)row->p99,
				(unsigned long long)row->p999, (unsigned long long)row->max);
		else
			fputs(",,,,,,,,", r->ses.out);
		if (!o->no_mem)
			fprintf(r->ses.out, "%lld", (long long)row->rss_growth);
		fputc(',', r->ses.out);
		if (o->hist_arg >= 0) {
			put_hist(r, row, false);
			fprintf(r->ses.out, ",%llu", (unsigned long long)arg_out_of_range(o, row));
		} else {
			fputc(',', r->ses.out);
		}
		/* calls --if left out (not in calls): empty without --if */
		fputc(',', r->ses.out);
		if (o->if_expr)
			fprintf(r->ses.out, "%llu", (unsigned long long)row->filtered);
		fprintf(r->ses.out, ",%llu,%llu\r\n", (unsigned long long)lat_spread(r, row->func_id),
			(unsigned long long)wall);
	}
}

static void json_report(struct profile_run *r, double elapsed, bool final)
{
	const struct cmd_opts *o = &r->opts;
	uint64_t wall = clock__wall_ns();

	for (size_t i = 0; i < r->n_rows; i++) {
		const struct prof_row *row = &r->rows[i];

		fprintf(r->ses.out,
			"{\"schema\":" CMON_SCHEMA_TEXT ",\"report\":%u,\"elapsed_s\":%.3f,"
			"\"final\":%s,\"func\":", r->reports,
			elapsed, final ? "true" : "false");
		put_escaped(r, func_name(r, row->func_id), true);
		fputs(",\"module\":", r->ses.out);
		put_escaped(r, func_module(r, row->func_id), true);
		if (o->per_pid)
			fprintf(r->ses.out, ",\"pid\":%u", row->pid);
		else
			fputs(",\"pid\":null", r->ses.out);
		fprintf(r->ses.out, ",\"calls\":%llu,\"returns\":%llu,\"noreturn\":%llu,\"lost\":%llu",
			(unsigned long long)row->calls, (unsigned long long)row->returns,
			(unsigned long long)row->noreturn, (unsigned long long)row->lost);
		if (o->if_expr)
			fprintf(r->ses.out, ",\"filtered\":%llu", (unsigned long long)row->filtered);
		if (o->budget > 0) /* calls: an estimate when sampled < 1 */
			fprintf(r->ses.out, ",\"sampled\":%.4f,\"seen_calls\":%llu", row->sampled,
				(unsigned long long)row->seen);
		if (row->returns)
			fprintf(r->ses.out,
				",\"total_ns\":%llu,\"min_ns\":%llu,\"mean_ns\":%llu,\"p50_ns\":%llu"
				",\"p90_ns\":%llu,\"p99_ns\":%llu,\"p999_ns\":%llu,\"max_ns\":%llu",
				(unsigned long long)row->total, (unsigned long long)row->min,
				(unsigned long long)row->mean, (unsigned long long)row->p50,
				(unsigned long long)row->p90, (unsigned long long)row->p99,
				(unsigned long long)row->p999, (unsigned long long)row->max);
		else
			fputs(",\"total_ns\":null,\"min_ns\":null,\"mean_ns\":null,\"p50_ns\":null"
			      ",\"p90_ns\":null,\"p99_ns\":null,\"p999_ns\":null,\"max_ns\":null",
			      r->ses.out);
		if (o->no_mem)
			fputs(",\"rss_growth_bytes\":null", r->ses.out);
		else
			fprintf(r->ses.out, ",\"rss_growth_bytes\":%lld", (long long)row->rss_growth);
		if (o->hist_arg >= 0) {
			if (o->hist_arg < HIST_ARG_RET)
				fprintf(r->ses.out, ",\"arg_hist\":{\"arg\":%d", o->hist_arg);
			else
				fputs(",\"arg_hist\":{\"arg\":null", r->ses.out);
			fputs(",\"value\":", r->ses.out);
			put_escaped(r, o->hist, true);
			fputs(",\"type\":", r->ses.out);
			put_escaped(r, r->hist.typed ? r->hist.type : "raw", true);
			fprintf(r->ses.out, ",\"scale\":\"%s\",\"buckets\":",
				o->hist_linear ? "linear" : "log2");
			put_hist(r, row, true);
			fprintf(r->ses.out, ",\"out_of_range\":%llu}",
				(unsigned long long)arg_out_of_range(o, row));
		} else {
			fputs(",\"arg_hist\":null", r->ses.out);
		}
		fprintf(r->ses.out, ",\"latency_spread_ns\":%llu",
			(unsigned long long)lat_spread(r, row->func_id));
		if (r->pp) {
			struct edge_out e = { .r = r, .json = true, .first = true };

			if (row->returns)
				fprintf(r->ses.out, ",\"self_ns\":%llu", (unsigned long long)row->self);
			else
				fputs(",\"self_ns\":null", r->ses.out);
			fputs(",\"callers\":[", r->ses.out);
			pyprof__edges(r->pp, row->func_id, true, put_edge, &e);
			fputs("],\"callees\":[", r->ses.out);
			e.first = true;
			pyprof__edges(r->pp, row->func_id, false, put_edge, &e);
			fputc(']', r->ses.out);
		}
		fprintf(r->ses.out, ",\"ts_ns\":%llu}\n", (unsigned long long)wall);
	}
}

/* --budget: the calls each function's probes counted so far. */
static int collect_seen(void *ctx, const struct func_profile *fp)
{
	struct profile_run *r = ctx;

	if (fp->func_id < r->set->n_funcs)
		r->seen[fp->func_id] += fp->seen_calls;
	return 0;
}

/* --budget: one round (agg/budget.h): each function's rate and cost, the
 * hottest duty-cycled.  0 or -errno. */
static int budget_round(struct profile_run *r)
{
	const struct probe_calib *c = probe_calib__host();
	size_t n = r->set->n_funcs;
	struct budget_item *v;
	struct duty *d = profiler__duty(r->prof);
	uint64_t run_ns = 0, run_cnt = 0;
	double bpf_ns = 0;
	int err;

	if (!d)
		return -errno;
	if (!r->bfn) {
		r->bfn = calloc(n + 1, sizeof(*r->bfn));
		r->seen = calloc(n + 1, sizeof(*r->seen));
		if (!r->bfn || !r->seen)
			return -ENOMEM;
	}
	memset(r->seen, 0, n * sizeof(*r->seen));
	err = profiler__read(r->prof, collect_seen, r);
	if (err)
		return err;
	if (!profiler__prog_stats(r->prof, &run_ns, &run_cnt) && run_cnt)
		bpf_ns = 2 * (double)run_ns / (double)run_cnt; /* an entry and a return */
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct budget_item){
			.duty = d, .func_id = (uint32_t)i, .st = &r->bfn[i], .seen = r->seen[i],
			.cost_ns = (double)probe_calib__caller_cost(c, &r->set->funcs[i]) + bpf_ns,
			.probe = NULL, .func = r->set->funcs[i].name,
		};
	budget__keep(v, n, r->opts.budget, &r->ledger);
	free(v);
	return 0;
}

/* --budget: each function duty-cycled at the end, on stderr: what was
 * seen and what it was scaled to (nothing shed goes unsaid). */
static void budget_summary(const struct profile_run *r)
{
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct prof_row *row = &r->rows[i];

		if (row->seen == row->calls && row->sampled >= 1)
			continue;
		fprintf(stderr, "cmon: %s: duty-cycled (attached %.2f%% of the time at the end): "
			"%llu calls seen, %llu estimated\n", func_name(r, row->func_id),
			row->sampled * 100, (unsigned long long)row->seen,
			(unsigned long long)row->calls);
	}
}

static void add_lost(void *ctx, uint32_t pid, const char *qualname, const char *where,
		     uint64_t n)
{
	struct profile_run *r = ctx;

	pyprof__add_lost(r->pp, pid, qualname, where, n);
}

/* Read the kernel's aggregates and print one report.  0 or -errno. */
static int report(struct profile_run *r, bool final)
{
	double elapsed = clock__mono_s() - r->t_start;
	int err;

	r->n_rows = 0;
	if (r->pp) {
		/* per function: the kernel counts what it lost by code object */
		pyprof__clear_lost(r->pp);
		pytrace__each_lost(r->py, add_lost, r);
	}
	err = r->pp ? pyprof__read(r->pp, collect, r) : profiler__read(r->prof, collect, r);
	if (err) {
		log_error("reading the profile: %s", strerror(err < 0 ? -err : err));
		return err < 0 ? err : -EIO;
	}
	if (r->n_rows) /* rows is NULL before the first one */
		qsort(r->rows, r->n_rows, sizeof(*r->rows), cmp_rows);
	r->reports++;
	switch (r->opts.format) {
	case OUT_CSV:
		csv_report(r, elapsed, final);
		break;
	case OUT_JSON:
		json_report(r, elapsed, final);
		break;
	default:
		text_report(r, elapsed, final);
		break;
	}
	if (fflush(r->ses.out) || ferror(r->ses.out)) {
		err = errno ? -errno : -EIO;
		log_error("cannot write output: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* ---------------------------------------------------------------- the run */

/* Calls counted and lost over every row of the last report. */
static void totals(const struct profile_run *r, uint64_t *calls, uint64_t *lost,
		   uint64_t *filtered)
{
	*calls = *lost = *filtered = 0;
	for (size_t i = 0; i < r->n_rows; i++) {
		*calls += r->rows[i].calls;
		*lost += r->rows[i].lost;
		*filtered += r->rows[i].filtered;
	}
}

static void cleanup_run(struct profile_run *r)
{
	free(r->bfn);
	free(r->seen);
	pytrace__free(r->py); /* restores its hooks first, whatever happened */
	pipeline__free(r->pipe);
	pyprof__free(r->pp);
	profiler__free(r->prof);
	free(r->exprs);
	session__cleanup(&r->ses);
	probe_set__free(r->set);
	free(r->rows);
	strbuf__release(&r->sb);
	cmd_opts__free(&r->opts);
}

/* --py: each Python call, summed. */
static int on_py_call(void *ctx, const struct cmon_py_rec *rec, struct call_record *cr, int n)
{
	struct profile_run *r = ctx;

	return n > 0 && pyprof__add(r->pp, cr) ? -ENOMEM : 0;
}

/* --py: the processes must run a CPython cmon knows, checked before the
 * evaluator's pattern is resolved in them (a CPython older than 3.11 is
 * named, not "no function matches").  0 or -errno. */
static int prepare_python(struct profile_run *r)
{
	int err = 0;

	r->py = pytrace__new(r->opts.py, r->opts.n_py, 0, r->opts.py_resumes);
	if (!r->py) {
		log_error("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->opts.n_pids && !err; i++)
		err = pytrace__add_process(r->py, r->opts.pids[i], NULL, false);
	if (!err && r->ses.launched)
		err = pytrace__add_process(r->py, r->ses.launch.pid, r->ses.launch_path, true);
	return err;
}

/* --py: the trace programs' Python probes, their records summed in user
 * space.  0 or -errno. */
static int setup_python(struct profile_run *r)
{
	struct pipeline_opts po = { .tracer.max_depth = -1,
				    .ops = { .py_call = on_py_call, .ctx = r } };
	long id = pytrace__mark(r->py, r->set, r->opts.follow > 0);
	int err;

	if (id < 0)
		return (int)id;
	r->py_func = (uint32_t)id;
	/* multiprocessing's workers: followed as trace --py follows them */
	po.tracer.follow = r->opts.follow > 0;
	po.tracer.block_ns = r->opts.block_ns;
	r->pp = pyprof__new((uint32_t)r->set->n_funcs, r->opts.per_pid);
	if (!r->pp)
		return -ENOMEM;
	po.py = r->py;
	r->pipe = pipeline__new(r->set, &po);
	if (!r->pipe) {
		err = -errno;
		log_error("cannot load the BPF programs: %s", strerror(errno));
		return err;
	}
	r->tracer = pipeline__tracer(r->pipe);
	return pipeline__attach(r->pipe);
}

static int setup(struct profile_run *r)
{
	struct resolve_opts ro = {};
	struct profiler_opts po = {};
	int err;

	if (r->opts.n_py && (r->opts.n_funcs || r->opts.n_usdts || r->opts.n_lines ||
			     r->opts.hist || r->opts.binary)) {
		log_error("profile --py: Python functions only (no --func, --usdt, --line, --hist), "
			  "of -p PID or -- CMD");
		return -EINVAL;
	}
	err = session__begin(&r->ses, 1 << 16); /* a report is written whole, then flushed */
	if (err)
		return err;
	/* Until the probes are in: said on a terminal when it takes a while,
	 * ended at once by Ctrl-C (as trace). */
	session__starting(&r->ses, true);

	if (r->opts.n_py) {
		err = prepare_python(r);
		if (err)
			return err;
	}
	session__resolve_opts(&r->ses, &ro);
	ro.ret_choice = r->opts.budget > 0 ? return_choice__duty_cycled(r->opts.ret_choice)
					   : r->opts.ret_choice;
	err = probe_set__resolve(&ro, &r->set);
	if (err)
		return err;
	session__cover_binary(&r->ses, r->set->exe_dev, r->set->exe_ino);
	session__cover_cgroup(&r->ses, r->set);
	err = session__open_pidfds(&r->ses);
	if (err)
		return err;

	if (r->opts.n_py)
		return setup_python(r);
	if (!r->opts.raw_latency)
		r->calib = probe_calib__host();

	if (r->opts.hist) {
		err = hist_arg__resolve(r->set, r->opts.hist, "--hist", &r->hist);
		if (err)
			return err;
		r->opts.hist_arg = r->hist.reg;
		po.hist_bytes = r->hist.bytes;
		po.hist_signed = r->hist.is_signed;
	}
	po.per_pid = r->opts.per_pid;
	po.follow = r->opts.follow > 0;
	po.host_wide = r->opts.host_wide;
	/* --cgroup: its processes and those below it, decided in the kernel */
	po.filter_cgroup = r->ses.cgroup.id;
	po.filter_cgroup_level = r->ses.cgroup.level;
	po.focus = r->opts.n_focus > 0;
	po.max_depth = r->opts.max_depth;
	po.hist_arg = r->opts.hist_arg;
	po.linear = r->opts.hist_linear;
	po.lin_min = r->opts.lin_min;
	po.lin_step = r->opts.lin_step;
	po.mem = !r->opts.no_mem;
	po.max_pids = MAX_PIDS_PER_FUNC;
	po.duty = r->opts.budget > 0;
	err = expr__compile_run(r->opts.if_expr, NULL, r->set, false, &r->exprs);
	if (err) {
		r->usage_err = err == -EINVAL;
		return err;
	}
	/* The kernel takes the probes' cost out of each latency before --if
	 * sees it: the conditions' own bias stays 0. */
	po.exprs = r->exprs;
	po.calib = r->calib;
	if (session_stop_signal) /* interrupted while starting: nothing attached */
		return -EINTR;
	r->prof = profiler__new(r->set, &po);
	if (!r->prof) {
		err = -errno;
		return err;
	}
	return profiler__attach(r->prof);
}

/* Attach, say so and start the output: 0 or -errno (R->usage_err set after
 * a usage error). */
static int start(struct profile_run *r)
{
	int err;

	err = setup(r);
	session__starting(&r->ses, false);
	if (err == -EINTR && session_stop_signal) {
		/* a signal just before or after the start-up's own handling:
		 * nothing attached, nothing to report (no profiler to follow) */
		if (!r->opts.quiet)
			session__say_interrupted();
		r->stopped_starting = true;
		return 0;
	}
	if (!err && r->opts.budget > 0 && !r->prof) {
		log_error("--budget is for native functions: Python functions (--py) have no "
			  "probes of their own to duty-cycle");
		r->usage_err = true;
		err = -EINVAL;
	}
	if (err)
		return err;
	r->ses.follow = r->prof ? profiler__follow(r->prof) : tracer__follow(r->tracer);
	r->ses.wake_fd = r->prof ? profiler__wake_fd(r->prof) : -1; /* the tracer polls its own */
	session__install_signals();
	if (!r->opts.quiet && r->tracer)
		fprintf(stderr, "cmon: attached %zu probes in %.1f ms (Python functions)\n",
			tracer__probe_count(r->tracer), (double)tracer__attach_ns(r->tracer) / 1e6);
	else if (!r->opts.quiet)
		fprintf(stderr, "cmon: attached %zu probes in %.1f ms (%zu function%s)\n",
			profiler__probe_count(r->prof), (double)profiler__attach_ns(r->prof) / 1e6,
			r->set->n_funcs, r->set->n_funcs == 1 ? "" : "s");
	r->t_start = clock__mono_s();
	err = session__start_output(&r->ses);
	if (!err)
		err = session__release(&r->ses);
	return err;
}

/* Count, keep the budget and report every interval until a signal, the
 * targets' end or DEADLINE (0: none): 0 or -errno after one error line. */
static int run_until_done(struct profile_run *r, double deadline, int *status, bool *have_status)
{
	double next_report = 0, next_budget = 0;
	int err;

	if (r->opts.interval_s > 0)
		next_report = r->t_start + r->opts.interval_s;
	if (r->opts.budget > 0)
		next_budget = r->t_start + BUDGET_ROUND_S;
	while (!session_stop_signal) {
		double now, wake;

		if (session__targets_gone(&r->ses, status, have_status))
			break;
		now = clock__mono_s();
		if (deadline && now >= deadline)
			break;
		if (next_budget && now >= next_budget) {
			err = budget_round(r);
			if (err) {
				log_error("keeping the budget: %s", strerror(-err));
				return err;
			}
			next_budget = now + BUDGET_ROUND_S;
		}
		if (next_report && now >= next_report) {
			err = report(r, false);
			if (err)
				return err;
			next_report += r->opts.interval_s;
			if (next_report <= now) /* we fell behind: skip, do not burst */
				next_report = now + r->opts.interval_s;
		}
		wake = now + TICK_S;
		if (next_report && next_report < wake)
			wake = next_report;
		if (deadline && deadline < wake)
			wake = deadline;
		if (next_budget && next_budget < wake)
			wake = next_budget;
		if (r->tracer) {
			int n = pipeline__poll(r->pipe, (int)((wake - now) * 1000) + 1);

			if (n < 0 && n != -EINTR) {
				log_error("reading the ring buffer: %s", strerror(-n));
				return n;
			}
		} else {
			session__wait(&r->ses, wake - now);
			profiler__woken(r->prof);
		}
	}
	return 0;
}

/* Detach first: the final report is a snapshot nothing changes. */
static void detach(struct profile_run *r)
{
	if (r->tracer) {
		size_t n;
		pid_t *roots = session__roots(&r->ses, &n);

		pipeline__stop(r->pipe);
		pipeline__finish(r->pipe, roots, n, false);
		free(roots);
	} else {
		profiler__detach(r->prof);
	}
}

/* The run's totals, with the calls lost before the profile counted them. */
static void final_counts(const struct profile_run *r, uint64_t *calls, uint64_t *lost,
			 uint64_t *filtered)
{
	totals(r, calls, lost, filtered);
	if (r->tracer) {
		struct cmon_func_stats st;

		if (!tracer__func_stats(r->tracer, r->py_func, &st))
			*lost += st.lost_ringbuf + st.lost_depth + st.lost_nomem + st.lost_uret;
		/* records whose process or code object was not known */
		*lost += pytrace__undecoded(r->py);
	}
	if (r->prof) {
		uint64_t run_ns, runs;

		/* Counted only while the sysctl kernel.bpf_stats_enabled is 1. */
		if (!profiler__prog_stats(r->prof, &run_ns, &runs) && runs)
			log_info("BPF programs: %llu runs, %.1f ns per run",
				 (unsigned long long)runs, (double)run_ns / (double)runs);
	}
}

/* The closing lines on stderr: calls, children followed, what was lost and why. */
static void summary(const struct profile_run *r, uint64_t calls, uint64_t lost, uint64_t filtered)
{
	struct profiler_losses why;
	char buf[512];

	fprintf(stderr, "cmon: %llu calls counted in %.1f s, %llu lost\n",
		(unsigned long long)calls, clock__mono_s() - r->t_start, (unsigned long long)lost);
	if (r->ses.follow) {
		uint64_t forks, unfollowed, failed;

		follow__stats(r->ses.follow, &forks, &unfollowed, &failed);
		fprintf(stderr, "cmon: children followed: %llu\n", (unsigned long long)forks);
		if (unfollowed)
			fprintf(stderr, "cmon: children not followed: %llu (more than %d "
					"processes at once)\n", (unsigned long long)unfollowed,
				CMON_FOLLOW_MAX);
		if (follow__missed(r->ses.follow))
			fprintf(stderr, "cmon: children gone before their library probes "
					"were attached: %llu (their library calls are not "
					"counted)\n",
				(unsigned long long)follow__missed(r->ses.follow));
	}
	if (r->opts.if_expr)
		fprintf(stderr, "cmon: %llu calls filtered out by --if\n",
			(unsigned long long)filtered);
	if (r->opts.budget > 0)
		budget_summary(r);
	if (r->py) {
		session__say_unmatched_py(&r->ses, r->py);
		session__say_py_untraced(r->tracer);
		if (r->opts.block_ns && r->tracer)
			session__say_room_waits(r->tracer);
	}
	if (lost && r->tracer)
		log_warn("%llu Python calls were not recorded (the ring buffer was full, or "
			 "nested deeper than %d)", (unsigned long long)lost, CMON_PY_STACK_DEPTH);
	else if (lost && !profiler__losses(r->prof, &why))
		log_warn("%llu calls were not recorded: %s", (unsigned long long)lost,
			 profiler_losses__describe(&why, MAX_PIDS_PER_FUNC, buf, sizeof(buf)));
	else if (lost)
		log_warn("%llu calls were not recorded", (unsigned long long)lost);
}

int cmd_profile(int argc, char **argv)
{
	struct profile_run r = {};
	bool have_status = false;
	int status = 0, err;
	uint64_t calls = 0, lost = 0, filtered = 0;
	double deadline = 0;

	session__init(&r.ses, &r.opts);
	err = cmd_opts__begin(CMD_PROFILE, argc, argv, &r.opts);
	if (err >= 0)
		return err;
	session__install_signals(); /* from the start, as trace */

	err = start(&r);
	if (err || r.stopped_starting)
		goto cleanup;
	if (r.opts.duration_s > 0)
		deadline = r.t_start + r.opts.duration_s;
	err = run_until_done(&r, deadline, &status, &have_status);
	if (err)
		goto cleanup;
	detach(&r);
	err = report(&r, true);
	if (err)
		goto cleanup;
	final_counts(&r, &calls, &lost, &filtered);
	if (!r.opts.quiet)
		summary(&r, calls, lost, filtered);
	if (r.ses.launched && !have_status && r.ses.launch.pid > 0 && !session_stop_signal &&
	    !deadline)
		have_status = launch__reap(&r.ses.launch, &status, 1);
cleanup:
	if (r.usage_err) {
		cleanup_run(&r);
		return CMON_EXIT_USAGE;
	}
	cleanup_run(&r);
	return session__exit_status(err, lost, have_status, status);
}
