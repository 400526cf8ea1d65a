// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_stats.c: `cmon stats RUN RUN [RUN...]`: how much the inputs and
 * outputs of the same program's calls agree across runs.
 *
 * Calls are matched by function and call number; when a run has several
 * processes, by function, process ordinal (processes in order of their
 * first traced call: p1, p2, ...) and call number within the process.  Each
 * numeric value of a call is one row: every parameter (struct members as
 * s.x, array elements as a[2], down to the last scalar), the return value
 * ("return") and every element of a captured numeric buffer (v[0], ...).
 * Strings, pointers and enumerator names are not numbers and are left out.
 *
 * Runs that do not line up are reported, never joined silently: a function
 * missing from a run, a different signature (the function is left out), a
 * different number of processes or calls (rows then say in how many runs
 * the value exists).  Reported on stderr, and in CSV/JSON output.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "output/schema.h"
#include "core/grow.h"
#include "cli/options.h"
#include "agg/runstats.h"
#include "cli/commands.h"
#include "cli/store_cli.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "output/writer.h"

enum stats_fmt { STATS_TEXT, STATS_CSV, STATS_JSON };

/* One value across runs. */
struct row {
	char *func, *path, *type;
	unsigned proc;        /* 1.. when runs have several processes, else 0 */
	uint64_t call;
	bool integer;         /* an integer in every run */
	double *v;            /* [n_runs] */
	int64_t *iv;          /* integers, exact */
	bool *have;
};

struct stats {
	const char **runs;
	size_t n_runs;
	bool per_proc;        /* some run has several processes */
	struct row *rows;
	size_t n_rows, cap_rows;
	struct hmap index;    /* func \0 proc \0 call \0 path -> row + 1 */
	struct hmap checked;  /* function name -> 1 compared, 2 left out */
	struct strbuf key, path;
	char **issues;        /* mismatches, reported */
	size_t n_issues, cap_issues;
};

static int issue(struct stats *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int issue(struct stats *st, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (GROW(st->issues, st->n_issues, st->cap_issues, 8))
		return -ENOMEM;
	va_start(ap, fmt);
	r = vasprintf(&st->issues[st->n_issues], fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	st->n_issues++;
	return 0;
}

static struct row *row_of(struct stats *st, const char *func, unsigned proc, uint64_t call,
			  const char *path, const char *type)
{
	bool added;
	uint64_t *slot;
	struct row *r;

	strbuf__reset(&st->key);
	if (strbuf__printf(&st->key, "%s%c%u%c%" PRIu64 "%c%s", func, 0, proc, 0, call, 0, path))
		return NULL;
	slot = hmap__get(&st->index, st->key.buf, st->key.len, &added);
	if (!slot)
		return NULL;
	if (!added)
		return &st->rows[*slot - 1];
	if (GROW(st->rows, st->n_rows, st->cap_rows, 256))
		return NULL;
	r = &st->rows[st->n_rows];
	memset(r, 0, sizeof(*r));
	r->func = strdup(func);
	r->path = strdup(path);
	r->type = strdup(type ? type : "");
	r->proc = proc;
	r->call = call;
	r->integer = true;
	r->v = calloc(st->n_runs, sizeof(*r->v));
	r->iv = calloc(st->n_runs, sizeof(*r->iv));
	r->have = calloc(st->n_runs, sizeof(*r->have));
	/* Counted (and so freed with the table) even when half made. */
	*slot = ++st->n_rows;
	if (!r->func || !r->path || !r->type || !r->v || !r->iv || !r->have)
		return NULL;
	return r;
}

static int add_value(struct stats *st, size_t run, const char *func, unsigned proc,
		     uint64_t call, const char *path, const char *type, bool integer, double v,
		     int64_t iv)
{
	struct row *r = row_of(st, func, proc, call, path, type);

	if (!r)
		return -ENOMEM;
	r->v[run] = v;
	r->iv[run] = iv;
	r->have[run] = true;
	r->integer = r->integer && integer;
	return 0;
}

/* A uint64 above INT64_MAX, which jansson refuses (and with it the whole
 * object holding one), is rewritten as a string of its digits behind this
 * marker, which flatten reads back exactly. */
#define BIG_UINT_MARK "\001u64:"

/* Every number in J under PATH (st->path holds it). */
static int flatten(struct stats *st, size_t run, const char *func, unsigned proc, uint64_t call,
		   json_t *j, const char *type)
{
	size_t at = st->path.len;
	int err = 0;

	if (json_is_integer(j)) {
		json_int_t i = json_integer_value(j);

		return add_value(st, run, func, proc, call, st->path.buf, type, true, (double)i, i);
	}
	if (json_is_real(j))
		return add_value(st, run, func, proc, call, st->path.buf, type, false,
				 json_real_value(j), 0);
	if (json_is_string(j) && !strncmp(json_string_value(j), BIG_UINT_MARK,
					  sizeof(BIG_UINT_MARK) - 1)) {
		unsigned long long u;

		errno = 0;
		u = strtoull(json_string_value(j) + sizeof(BIG_UINT_MARK) - 1, NULL, 10);
		if (errno)
			return 0; /* above UINT64_MAX: not a C value */
		/* compared by its bits, as a top-level one */
		return add_value(st, run, func, proc, call, st->path.buf, type, true, (double)u,
				 (int64_t)u);
	}
	if (json_is_boolean(j))
		return add_value(st, run, func, proc, call, st->path.buf, type, true,
				 json_is_true(j), json_is_true(j));
	if (json_is_object(j)) {
		const char *k;
		json_t *v;

		json_object_foreach(j, k, v) {
			st->path.len = at;
			err = strbuf__printf(&st->path, ".%s", k);
			if (!err)
				err = flatten(st, run, func, proc, call, v, NULL);
			if (err)
				break;
		}
	} else if (json_is_array(j)) {
		size_t i;
		json_t *v;

		json_array_foreach(j, i, v) {
			st->path.len = at;
			err = strbuf__printf(&st->path, "[%zu]", i);
			if (!err)
				err = flatten(st, run, func, proc, call, v, NULL);
			if (err)
				break;
		}
	}
	st->path.len = at;
	if (st->path.buf)
		st->path.buf[at] = '\0';
	return err;
}

/* TEXT with every integer above INT64_MAX marked so (BIG_UINT_MARK): a
 * copy to free, or NULL when it has none or memory ran out. */
static char *big_ints_marked(const char *text)
{
	struct strbuf out = {};
	bool changed = false, in_str = false;
	const char *p = text;

	while (*p) {
		if (in_str) {
			if (*p == '\\' && p[1]) {
				if (strbuf__putn(&out, p, 2))
					goto fail;
				p += 2;
				continue;
			}
			in_str = *p != '"';
		} else if (*p == '"') {
			in_str = true;
		} else if (isdigit((unsigned char)*p) && (p == text || !isalnum((unsigned char)p[-1]))) {
			const char *q = p;
			char *end;
			unsigned long long u;

			while (isdigit((unsigned char)*q))
				q++;
			errno = 0;
			u = strtoull(p, &end, 10);
			if (end == q && *q != '.' && *q != 'e' && *q != 'E' &&
			    (errno == ERANGE || u > (unsigned long long)INT64_MAX) &&
			    (p == text || p[-1] != '-')) {
				if (strbuf__puts(&out, "\"\\u0001u64:") ||
				    strbuf__putn(&out, p, (size_t)(q - p)) || strbuf__putc(&out, '"'))
					goto fail;
				changed = true;
				p = q;
				continue;
			}
			if (strbuf__putn(&out, p, (size_t)(q - p)))
				goto fail;
			p = q;
			continue;
		}
		if (strbuf__putc(&out, *p))
			goto fail;
		p++;
	}
	if (changed)
		return out.buf;
fail:
	strbuf__release(&out);
	return NULL;
}

static int add_json(struct stats *st, size_t run, const char *func, unsigned proc, uint64_t call,
		    const char *name, const char *text, const char *type)
{
	char *marked = NULL;
	json_t *j;
	int err;

	if (!text)
		return 0;
	j = json_loads(text, JSON_DECODE_ANY, NULL);
	/* a uint64 above INT64_MAX inside an object or array: marked, exact */
	if (!j && (text[0] == '{' || text[0] == '[') && (marked = big_ints_marked(text))) {
		j = json_loads(marked, JSON_DECODE_ANY, NULL);
		free(marked);
	}
	if (!j) {
		/* jansson stops at INT64_MAX: a bare uint64 above it, compared
		 * by its bits (one in an object or array was marked above). */
		char *end;
		unsigned long long u;

		errno = 0;
		u = strtoull(text, &end, 10);
		if (errno || *end || *text == '-' || !*text)
			return 0;
		return add_value(st, run, func, proc, call, name, type, true, (double)u,
				 (int64_t)u);
	}
	strbuf__reset(&st->path);
	err = strbuf__puts(&st->path, name);
	if (!err)
		err = flatten(st, run, func, proc, call, j, type);
	json_decref(j);
	return err;
}

/* Element I of a numeric buffer; false for dtypes that are not numbers. */
static bool blob_element(const struct cmon_blob *b, size_t i, double *v, int64_t *iv, bool *integer)
{
	size_t w = cmon_dtype_size(b->dtype);
	const unsigned char *p = (const unsigned char *)b->data + i * w;
	char kind = b->dtype[1];

	if (b->dtype[0] == '>' && w > 1)
		return false; /* big-endian: not written by cmon on x86 */
	*integer = kind != 'f';
	if (kind == 'f' && w == 4) {
		float f;

		memcpy(&f, p, 4);
		*v = f;
	} else if (kind == 'f' && w == 8) {
		memcpy(v, p, 8);
	} else if ((kind == 'i' || kind == 'u' || kind == 'b') && w <= 8) {
		uint64_t u = 0;

		memcpy(&u, p, w);
		if (kind == 'i' && w < 8 && (u >> (8 * w - 1)) & 1)
			u |= ~0ull << (8 * w);
		*iv = (int64_t)u;
		*v = kind == 'u' ? (double)u : (double)*iv;
	} else {
		return false;
	}
	return true;
}

static int add_blob(struct stats *st, size_t run, const char *func, unsigned proc, uint64_t call,
		    const struct cmon_blob *b)
{
	size_t w = cmon_dtype_size(b->dtype);
	char path[256];
	int err = 0;

	if (!w || !cmon_dtype_numeric(b->dtype))
		return 0;
	for (size_t i = 0; i < b->len / w && !err; i++) {
		double v = 0;
		int64_t iv = 0;
		bool integer;

		if (!blob_element(b, i, &v, &iv, &integer))
			return 0;
		snprintf(path, sizeof(path), "%s[%zu]", b->name, i);
		err = add_value(st, run, func, proc, call, path, b->dtype, integer, v, iv);
	}
	return err;
}

/* Process ordinal of PID in P (by first call), from 1. */
static unsigned proc_ordinal(const struct cmon_process *p, size_t n, uint32_t pid)
{
	unsigned ord = 1;
	size_t me = n;

	for (size_t i = 0; i < n; i++)
		if (p[i].pid == pid)
			me = i;
	if (me == n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (i != me && (p[i].first_ts_ns < p[me].first_ts_ns ||
				(p[i].first_ts_ns == p[me].first_ts_ns && p[i].pid < p[me].pid)))
			ord++;
	return ord;
}

static int read_function(struct stats *st, size_t run, struct cmon_store *s,
			 const struct cmon_function *fs, size_t nf, size_t fi,
			 const struct cmon_process *procs, size_t np)
{
	const struct cmon_function *f = &fs[fi];
	char *name = store_cli__lookup_name(fs, nf, fi);
	uint64_t *per_proc = calloc(np + 1, sizeof(*per_proc));
	struct cmon_iter *it = NULL;
	struct cmon_call *c = NULL;
	int r, err = 0;

	if (!name || !per_proc) {
		err = -ENOMEM;
		goto out;
	}
	if (cmon_store_calls(s, name, 1, &it)) {
		err = 1;
		goto out;
	}
	while (!err && (r = cmon_iter_next(it, &c)) == 1) {
		unsigned proc = st->per_proc ? proc_ordinal(procs, np, c->pid) : 0;
		uint64_t n = st->per_proc ? ++per_proc[proc] : c->n;

		for (size_t i = 0; i < c->n_args && !err; i++)
			err = add_json(st, run, name, proc, n, c->args[i].name, c->args[i].value,
				       c->args[i].type);
		if (!err)
			err = add_json(st, run, name, proc, n, "return", c->ret, f->ret_type);
		for (size_t i = 0; i < c->n_blobs && !err; i++)
			err = add_blob(st, run, name, proc, n, &c->blobs[i]);
		cmon_call_free(c);
	}
	if (!err && r < 0)
		err = 1;
out:
	cmon_iter_free(it);
	free(per_proc);
	free(name);
	return err;
}

/* FUNC across every run, against the first run that has it: missing from a
 * run or another call count is reported (compared where it exists);
 * another signature is reported and the function left out (*EXCLUDED). */
static int check_function(struct stats *st, struct cmon_store **stores, const char *func,
			  bool *excluded)
{
	const struct cmon_function *f0 = NULL, *f;
	size_t r0 = 0;
	int err = 0;

	*excluded = false;
	for (size_t r = 0; r < st->n_runs && !err; r++) {
		if (cmon_store_function(stores[r], func, &f)) {
			err = issue(st, "%s: not in run %s", func, st->runs[r]);
		} else if (!f0) {
			f0 = f;
			r0 = r;
		} else if (strcmp(f->signature, f0->signature)) {
			*excluded = true;
			return issue(st, "%s: signature differs in run %s (left out)", func,
				     st->runs[r]);
		} else if (f->calls != f0->calls) {
			err = issue(st, "%s: %" PRIu64 " calls in run %s, %" PRIu64 " in run %s",
				    func, f0->calls, st->runs[r0], f->calls, st->runs[r]);
		}
	}
	return err;
}

static const char *digits_text(const struct runstats *rs, char *buf, size_t cap)
{
	if (rs->digits == RUNSTATS_ALL)
		return "all";
	if (rs->digits == RUNSTATS_NA)
		return "-";
	snprintf(buf, cap, "%.2f", rs->digits);
	return buf;
}

static void row_stats(const struct stats *st, const struct row *r, struct runstats *rs)
{
	long double v[st->n_runs];
	size_t n = 0;
	bool identical = true;
	size_t first = st->n_runs;

	for (size_t i = 0; i < st->n_runs; i++) {
		if (!r->have[i])
			continue;
		if (first == st->n_runs)
			first = i;
		else if (r->integer ? r->iv[i] != r->iv[first] : r->v[i] != r->v[first])
			identical = false;
		/* an integer exactly: the double says which way its bits read
		 * (negative: signed; past INT64_MAX: unsigned) */
		if (r->integer)
			v[n++] = r->v[i] >= 0x1p63 ? (long double)(uint64_t)r->iv[i]
						   : (long double)r->iv[i];
		else
			v[n++] = r->v[i];
	}
	runstats__compute(v, n, identical, runstats__type_digits(*r->type ? r->type : NULL,
								 r->integer), rs);
}

/* A min or max: one of the runs' values, exactly (an integer's digits). */
static void put_extreme(FILE *f, const struct row *r, long double v)
{
	if (r->integer)
		fprintf(f, "%.0Lf", v);
	else
		fprintf(f, "%.17Lg", v);
}

static void call_label(const struct row *r, char *buf, size_t cap)
{
	if (r->proc)
		snprintf(buf, cap, "p%u#%" PRIu64, r->proc, r->call);
	else
		snprintf(buf, cap, "%" PRIu64, r->call);
}

static void put_escaped(FILE *f, struct strbuf *tmp, const char *s, bool json)
{
	strbuf__reset(tmp);
	if (!(json ? json_escape(tmp, s) : csv_escape(tmp, s)))
		fwrite(tmp->buf, 1, tmp->len, f);
}

static void write_text(const struct stats *st, FILE *f)
{
	size_t wf = 8, wv = 5;
	char call[32], dg[16];

	for (size_t i = 0; i < st->n_rows; i++) {
		if (strlen(st->rows[i].func) > wf)
			wf = strlen(st->rows[i].func);
		if (strlen(st->rows[i].path) > wv)
			wv = strlen(st->rows[i].path);
	}
	fprintf(f, "%zu runs:", st->n_runs);
	for (size_t i = 0; i < st->n_runs; i++)
		fprintf(f, " %s", st->runs[i]);
	fputc('\n', f);
	for (size_t i = 0; i < st->n_issues; i++)
		fprintf(f, "mismatch: %s\n", st->issues[i]);
	fprintf(f, "%-*s %-8s %-*s %4s %14s %11s %14s %14s %6s\n", (int)wf, "function", "call",
		(int)wv, "value", "runs", "mean", "std", "min", "max", "digits");
	for (size_t i = 0; i < st->n_rows; i++) {
		const struct row *r = &st->rows[i];
		struct runstats rs;

		row_stats(st, r, &rs);
		call_label(r, call, sizeof(call));
		store_cli__put_safe(f, r->func);
		fprintf(f, "%*s %-8s ", (int)(wf - strlen(r->func)), "", call);
		store_cli__put_safe(f, r->path);
		fprintf(f, "%*s %4zu %14.10Lg %11.4Lg %14.10Lg %14.10Lg %6s\n",
			(int)(wv - strlen(r->path)), "", rs.n, rs.mean, rs.sd, rs.min, rs.max,
			digits_text(&rs, dg, sizeof(dg)));
	}
}

static void write_csv(const struct stats *st, FILE *f, struct strbuf *tmp)
{
	char call[32], dg[16];

	fputs("schema,function,process,call,value,type,runs,mean,std,min,max,sig_digits\r\n", f);
	for (size_t i = 0; i < st->n_rows; i++) {
		const struct row *r = &st->rows[i];
		struct runstats rs;

		row_stats(st, r, &rs);
		call_label(r, call, sizeof(call));
		fputs(CMON_SCHEMA_TEXT ",", f);
		put_escaped(f, tmp, r->func, false);
		fprintf(f, ",%u,%" PRIu64 ",", r->proc, r->call);
		put_escaped(f, tmp, r->path, false);
		fputc(',', f);
		put_escaped(f, tmp, r->type, false);
		fprintf(f, ",%zu,%.17Lg,%.17Lg,", rs.n, rs.mean, rs.sd);
		put_extreme(f, r, rs.min);
		fputc(',', f);
		put_extreme(f, r, rs.max);
		fprintf(f, ",%s\r\n", digits_text(&rs, dg, sizeof(dg)));
	}
}

static void write_json(const struct stats *st, FILE *f, struct strbuf *tmp)
{
	fputs("{\"schema\":" CMON_SCHEMA_TEXT ",\"runs\":[", f);
	for (size_t i = 0; i < st->n_runs; i++) {
		fputs(i ? "," : "", f);
		put_escaped(f, tmp, st->runs[i], true);
	}
	fputs("],\"mismatches\":[", f);
	for (size_t i = 0; i < st->n_issues; i++) {
		fputs(i ? "," : "", f);
		put_escaped(f, tmp, st->issues[i], true);
	}
	fputs("],\"values\":[", f);
	for (size_t i = 0; i < st->n_rows; i++) {
		const struct row *r = &st->rows[i];
		struct runstats rs;

		row_stats(st, r, &rs);
		fputs(i ? ",\n{\"function\":" : "\n{\"function\":", f);
		put_escaped(f, tmp, r->func, true);
		fprintf(f, ",\"process\":%u,\"call\":%" PRIu64 ",\"value\":", r->proc, r->call);
		put_escaped(f, tmp, r->path, true);
		fputs(",\"type\":", f);
		put_escaped(f, tmp, r->type, true);
		fprintf(f, ",\"runs\":%zu,\"mean\":%.17Lg,\"std\":%.17Lg,\"min\":", rs.n, rs.mean,
			rs.sd);
		put_extreme(f, r, rs.min);
		fputs(",\"max\":", f);
		put_extreme(f, r, rs.max);
		fputs(",\"sig_digits\":", f);
		if (rs.digits == RUNSTATS_ALL)
			fputs("\"all\"}", f);
		else if (rs.digits == RUNSTATS_NA)
			fputs("null}", f);
		else
			fprintf(f, "%.4f}", rs.digits);
	}
	fputs("\n]}\n", f);
}

static void stats__release(struct stats *st)
{
	for (size_t i = 0; i < st->n_rows; i++) {
		free(st->rows[i].func);
		free(st->rows[i].path);
		free(st->rows[i].type);
		free(st->rows[i].v);
		free(st->rows[i].iv);
		free(st->rows[i].have);
	}
	free(st->rows);
	for (size_t i = 0; i < st->n_issues; i++)
		free(st->issues[i]);
	free(st->issues);
	hmap__release(&st->index);
	hmap__release(&st->checked);
	strbuf__release(&st->key);
	strbuf__release(&st->path);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cmon stats RUN RUN [RUN...] [-F text|csv|json] [-o FILE]\n\n"
		"Compare the calls of several capture stores of the same program: for every\n"
		"numeric parameter (struct members and array elements too), return value and\n"
		"element of a captured buffer, matched by function and call number (and process\n"
		"ordinal when runs have several processes): runs, mean, standard deviation,\n"
		"min, max and significant digits, -log10(std/|mean|) capped at the type's\n"
		"precision, \"all\" when every run has the same value.  Functions or call\n"
		"counts that differ between runs are reported as mismatches.\n\n");
	cmon_opts__usage(OC_STATS, f);
}

/* Every function of run RUN, checked across the runs the first time its
 * name is seen (st->checked: name -> 1 compared, 2 left out). */
static int read_run(struct stats *st, size_t run, struct cmon_store *s, struct cmon_store **all)
{
	const struct cmon_function *fs;
	const struct cmon_process *procs;
	size_t nf, np;
	int err = 0;

	if (cmon_store_functions(s, &fs, &nf) || cmon_store_processes(s, &procs, &np))
		return 1;
	for (size_t i = 0; i < nf && !err; i++) {
		char *name = store_cli__lookup_name(fs, nf, i);
		uint64_t *seen;
		bool added, excluded;

		if (!name)
			return -ENOMEM;
		seen = hmap__get(&st->checked, name, strlen(name), &added);
		if (!seen) {
			err = -ENOMEM;
		} else if (added) {
			err = check_function(st, all, name, &excluded);
			*seen = excluded ? 2 : 1;
		}
		if (!err && *seen == 1)
			err = read_function(st, run, s, fs, nf, i, procs, np);
		free(name);
	}
	return err;
}

int cmd_stats(int argc, char **argv)
{
	struct stats st = {};
	struct cmon_store **stores = NULL;
	struct strbuf tmp = {};
	enum stats_fmt fmt = STATS_TEXT;
	const char *output = NULL;
	FILE *out = stdout;
	struct optable t;
	const char *optarg;
	int c, rc = CMON_EXIT_OK, err = 0;

	if (cmon_opts__begin(&t, OC_STATS, "stats", false))
		return CMON_EXIT_ERROR;
	while ((c = optable__next(&t, argc, argv, &optarg)) != -1) {
		switch (c) {
		case 'F':
			if (!strcmp(optarg, "text")) {
				fmt = STATS_TEXT;
			} else if (!strcmp(optarg, "csv")) {
				fmt = STATS_CSV;
			} else if (!strcmp(optarg, "json")) {
				fmt = STATS_JSON;
			} else {
				log_error("stats: -F takes text, csv or json, not '%s'", optarg);
				return CMON_EXIT_USAGE;
			}
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return CMON_EXIT_OK;
		default: /* -2: said */
			return CMON_EXIT_USAGE;
		}
	}
	if (argc - optind < 2) {
		log_error("stats: give at least two capture stores (see cmon stats --help)");
		return CMON_EXIT_USAGE;
	}
	st.runs = (const char **)argv + optind;
	st.n_runs = (size_t)(argc - optind);
	stores = calloc(st.n_runs, sizeof(*stores));
	if (!stores) {
		log_error("stats: out of memory");
		return CMON_EXIT_ERROR;
	}
	for (size_t i = 0; i < st.n_runs; i++) {
		const struct cmon_process *p;
		size_t np;

		rc = store_cli__open(st.runs[i], &stores[i]);
		if (rc)
			goto cleanup;
		if (cmon_store_processes(stores[i], &p, &np)) {
			log_error("%s", cmon_store_error(stores[i]));
			rc = CMON_EXIT_ERROR;
			goto cleanup;
		}
		if (np > 1)
			st.per_proc = true;
		if (i) {
			const struct cmon_process *p0;
			size_t np0;

			if (!cmon_store_processes(stores[0], &p0, &np0) && np0 != np)
				err = issue(&st, "%zu processes in run %s, %zu in run %s", np0,
					    st.runs[0], np, st.runs[i]);
		}
	}
	for (size_t i = 0; i < st.n_runs && !err; i++) {
		err = read_run(&st, i, stores[i], stores);
		if (err == 1) {
			log_error("%s", cmon_store_error(stores[i]));
			rc = CMON_EXIT_ERROR;
			goto cleanup;
		}
	}
	if (err) {
		log_error("stats: out of memory");
		rc = CMON_EXIT_ERROR;
		goto cleanup;
	}
	for (size_t i = 0; i < st.n_issues; i++)
		log_warn("stats: runs differ: %s", st.issues[i]);
	if (output) {
		/* A new file is the user's alone; one that exists keeps its mode. */
		int fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		out = fd < 0 ? NULL : fdopen(fd, "w");
		if (!out) {
			if (fd >= 0)
				close(fd);
			log_error("stats: cannot create %s: %s", output, strerror(errno));
			rc = CMON_EXIT_ERROR;
			goto cleanup;
		}
	}
	if (fmt == STATS_CSV)
		write_csv(&st, out, &tmp);
	else if (fmt == STATS_JSON)
		write_json(&st, out, &tmp);
	else
		write_text(&st, out);
	if ((out == stdout ? fflush(out) : fclose(out)) != 0) {
		log_error("stats: writing %s: %s", output ? output : "stdout", strerror(errno));
		rc = CMON_EXIT_ERROR;
	}
cleanup:
	for (size_t i = 0; stores && i < st.n_runs; i++)
		cmon_store_close(stores[i]);
	free(stores);
	strbuf__release(&tmp);
	stats__release(&st);
	return rc;
}
