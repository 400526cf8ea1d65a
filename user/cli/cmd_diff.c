// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_diff.c: `cmon diff A B`: did a change make a function slower?  Per
 * function of two capture stores: calls, p50/p90/p99 latency and RSS
 * growth of run A beside run B, the change, and whether the latencies
 * differ beyond the noise (agg/compare: the rank test over the calls),
 * said in words.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agg/compare.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/store_cli.h"
#include "core/grow.h"
#include "core/log.h"

/* Below this p-value the runs differ: one chance in a hundred that noise
 * alone parts them so. */
#define DIFF_ALPHA 0.01

/* One function's calls in one run. */
struct side {
	uint64_t *lat;     /* latencies of the calls that returned, sorted */
	size_t n, cap;
	uint64_t calls;    /* every call, returned or not */
	int64_t rss;       /* RSS growth over the calls (exit - entry) */
	bool present;
};

static int read_side(struct cmon_store *s, const char *name, struct side *d)
{
	struct cmon_iter *it = NULL;
	struct cmon_call *c = NULL;
	int r;

	if (cmon_store_calls(s, name, 1, &it))
		return 1;
	d->present = true;
	while ((r = cmon_iter_next(it, &c)) == 1) {
		d->calls++;
		if (c->rss_entry != CMON_NONE && c->rss_exit != CMON_NONE)
			d->rss += (int64_t)(c->rss_exit - c->rss_entry);
		if (c->latency_ns != CMON_NONE) {
			if (GROW(d->lat, d->n, d->cap, 64)) {
				cmon_call_free(c);
				cmon_iter_free(it);
				return -ENOMEM;
			}
			d->lat[d->n++] = c->latency_ns;
		}
		cmon_call_free(c);
	}
	cmon_iter_free(it);
	if (r < 0)
		return 1;
	compare__sort(d->lat, d->n);
	return 0;
}

static const char *duration(uint64_t ns, char *buf, size_t cap)
{
	if (ns < 1000)
		snprintf(buf, cap, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, cap, "%.3gus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, cap, "%.3gms", (double)ns / 1e6);
	else
		snprintf(buf, cap, "%.3gs", (double)ns / 1e9);
	return buf;
}

static const char *growth(int64_t v, char *buf, size_t cap)
{
	double m = fabs((double)v);
	const char *u = "B";

	if (m >= 1 << 20) {
		m /= 1 << 20;
		u = "MiB";
	} else if (m >= 1 << 10) {
		m /= 1 << 10;
		u = "KiB";
	}
	snprintf(buf, cap, v ? "%c%.3g%s" : "0", v < 0 ? '-' : '+', m, u);
	return buf;
}

/* "1.06ms -> 5.07ms (+378%)" of the P-quantiles. */
static void quantiles(FILE *f, const struct side *a, const struct side *b, double p)
{
	uint64_t qa = compare__quantile(a->lat, a->n, p), qb = compare__quantile(b->lat, b->n, p);
	char x[32], y[32];

	fprintf(f, "  p%-3g %9s -> %s", p * 100, duration(qa, x, sizeof(x)),
		duration(qb, y, sizeof(y)));
	if (qa)
		fprintf(f, " (%+.0f%%)", ((double)qb - (double)qa) * 100 / (double)qa);
	fputc('\n', f);
}

static void verdict(FILE *f, const struct side *a, const struct side *b)
{
	double p;
	uint64_t ma, mb;

	if (a->n < 2 || b->n < 2) {
		fprintf(f, "  too few calls returned to tell (%zu in A, %zu in B)\n", a->n, b->n);
		return;
	}
	p = compare__rank_test(a->lat, a->n, b->lat, b->n);
	ma = compare__quantile(a->lat, a->n, 0.5);
	mb = compare__quantile(b->lat, b->n, 0.5);
	if (p < DIFF_ALPHA && ma != mb)
		fprintf(f, "  %s in B, beyond the noise (rank test over %zu calls: p = %.2g)\n",
			mb > ma ? "slower" : "faster", a->n + b->n, p);
	else if (p < DIFF_ALPHA)
		fprintf(f, "  the same median, another spread in B (rank test over %zu calls: "
			   "p = %.2g)\n", a->n + b->n, p);
	else
		fprintf(f, "  no change beyond the noise (rank test over %zu calls: p = %.2g)\n",
			a->n + b->n, p);
}

static void report(FILE *f, const char *name, const struct side *a, const struct side *b)
{
	char x[32], y[32];

	store_cli__put_safe(f, name);
	fputc('\n', f);
	if (!a->present || !b->present) {
		uint64_t n = a->present ? a->calls : b->calls;

		fprintf(f, "  only in %s (%" PRIu64 " call%s)\n", a->present ? "A" : "B", n,
			n == 1 ? "" : "s");
		return;
	}
	fprintf(f, "  calls %8" PRIu64 " -> %" PRIu64 "\n", a->calls, b->calls);
	if (a->n && b->n) {
		quantiles(f, a, b, 0.5);
		quantiles(f, a, b, 0.9);
		quantiles(f, a, b, 0.99);
	}
	fprintf(f, "  RSS  %9s -> %s\n", growth(a->rss, x, sizeof(x)),
		growth(b->rss, y, sizeof(y)));
	verdict(f, a, b);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cmon diff A B\n\n"
		"Did a change make a function slower?  For every function of two capture\n"
		"stores (run A, then run B): calls, p50/p90/p99 latency and RSS growth of A\n"
		"beside B, the change, and whether B's latencies differ from A's beyond the\n"
		"noise (the Mann-Whitney rank test over the calls; p below %g).\n\n",
		DIFF_ALPHA);
	cmon_opts__usage(OC_DIFF, f);
}

/* FUNC's two sides, read and reported. */
static int diff_function(struct cmon_store **st, const char *name, FILE *out)
{
	struct side sides[2] = {};
	int err = 0;

	for (int i = 0; i < 2 && !err; i++) {
		const struct cmon_function *fs;
		size_t nf;
		bool has = false;

		if (cmon_store_functions(st[i], &fs, &nf))
			return 1;
		for (size_t k = 0; k < nf && !has && !err; k++) {
			char *n = store_cli__lookup_name(fs, nf, k);

			if (!n)
				err = -ENOMEM;
			else
				has = !strcmp(n, name);
			free(n);
		}
		if (has && !err)
			err = read_side(st[i], name, &sides[i]);
		if (err == 1)
			log_error("%s", cmon_store_error(st[i]));
	}
	if (!err)
		report(out, name, &sides[0], &sides[1]);
	free(sides[0].lat);
	free(sides[1].lat);
	return err;
}

int cmd_diff(int argc, char **argv)
{
	struct cmon_store *st[2] = {};
	int rc = cmon_opts__help_only(OC_DIFF, "diff", argc, argv, usage), err = 0;

	if (rc >= 0)
		return rc;
	if (argc - optind != 2) {
		log_error("diff: give two capture stores, A and B (see cmon diff --help)");
		return CMON_EXIT_USAGE;
	}
	for (int i = 0; i < 2; i++) {
		rc = store_cli__open(argv[optind + i], &st[i]);
		if (rc)
			goto out;
	}
	printf("cmon diff: A %s, B %s\n", argv[optind], argv[optind + 1]);
	/* A's functions in its order, then those only B has */
	for (int i = 0; i < 2 && !err; i++) {
		const struct cmon_function *fs, *other;
		size_t nf, no;

		if (cmon_store_functions(st[i], &fs, &nf) ||
		    cmon_store_functions(st[!i], &other, &no)) {
			log_error("%s", cmon_store_error(st[i]));
			rc = CMON_EXIT_ERROR;
			goto out;
		}
		for (size_t k = 0; k < nf && !err; k++) {
			char *name = store_cli__lookup_name(fs, nf, k);
			bool in_a = false;

			if (!name) {
				err = -ENOMEM;
				break;
			}
			for (size_t j = 0; i && j < no && !in_a && !err; j++) {
				char *n = store_cli__lookup_name(other, no, j);

				if (!n)
					err = -ENOMEM;
				else
					in_a = !strcmp(n, name);
				free(n);
			}
			if (!err && !in_a)
				err = diff_function(st, name, stdout);
			free(name);
		}
	}
	if (err) {
		if (err != 1)
			log_error("diff: %s", strerror(-err));
		rc = CMON_EXIT_ERROR;
	}
out:
	cmon_store_close(st[0]);
	cmon_store_close(st[1]);
	return rc;
}
