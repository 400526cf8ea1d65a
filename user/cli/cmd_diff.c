// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_diff.c: `cmon diff A B`: did a change make a function slower?  Per
 * function of two capture stores: calls, p50/p90/p99 latency and RSS
 * growth of run A beside run B, the change, and whether the latencies
 * differ beyond the noise (agg/compare: the rank test over the calls),
 * said in words.  The figures are cli/rundiff's, which `cmon report
 * --diff` draws; this file writes them as text.
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
#include "cli/rundiff.h"
#include "cli/store_cli.h"
#include "core/grow.h"
#include "core/log.h"

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
static void quantiles(FILE *f, const struct rundiff_side *a, const struct rundiff_side *b,
		      double p)
{
	uint64_t qa = compare__quantile(a->lat, a->n, p), qb = compare__quantile(b->lat, b->n, p);
	char x[32], y[32];

	fprintf(f, "  p%-3g %9s -> %s", p * 100, duration(qa, x, sizeof(x)),
		duration(qb, y, sizeof(y)));
	if (qa)
		fprintf(f, " (%+.0f%%)", ((double)qb - (double)qa) * 100 / (double)qa);
	fputc('\n', f);
}

static void report(FILE *f, const struct rundiff_func *fn)
{
	const struct rundiff_side *a = &fn->a, *b = &fn->b;
	char x[32], y[32], words[160];

	store_cli__put_safe(f, fn->name);
	fputc('\n', f);
	rundiff__words(fn, words, sizeof(words));
	if (fn->verdict == RUNDIFF_ONLY_A || fn->verdict == RUNDIFF_ONLY_B) {
		fprintf(f, "  %s\n", words);
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
	fprintf(f, "  %s\n", words);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cmon diff A B\n\n"
		"Did a change make a function slower?  For every function of two capture\n"
		"stores (run A, then run B): calls, p50/p90/p99 latency and RSS growth of A\n"
		"beside B, the change, and whether B's latencies differ from A's beyond the\n"
		"noise (the Mann-Whitney rank test over the calls; p below %g).\n\n",
		RUNDIFF_ALPHA);
	cmon_opts__usage(OC_DIFF, f);
}

int cmd_diff(int argc, char **argv)
{
	struct cmon_store *st[2] = {};
	struct rundiff d = {};
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
	err = rundiff__read(st[0], st[1], &d);
	for (size_t k = 0; !err && k < d.n; k++)
		report(stdout, &d.funcs[k]);
	if (err) {
		if (err != 1)
			log_error("diff: %s", strerror(-err));
		rc = CMON_EXIT_ERROR;
	}
out:
	rundiff__release(&d);
	cmon_store_close(st[0]);
	cmon_store_close(st[1]);
	return rc;
}
