// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_report.c: `cmon report SOURCE... -o report.html`: one self-contained
 * HTML page (user/report/) from capture stores, trace CSV/JSON, profile
 * CSV/JSON and `cmon stats -F json` files.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli/options.h"
#include "cli/commands.h"
#include "cli/rundiff.h"
#include "cli/store_cli.h"
#include "core/log.h"
#include "report/report.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cmon report SOURCE... -o report.html [--title TEXT]\n\n"
		"One HTML file that opens from disk, with no network: per-function table,\n"
		"latency over time, latency distribution, calls per second, RSS/VMS over time\n"
		"with the calls that grew it; profile percentiles; significant digits of\n"
		"`cmon stats`.  A SOURCE is a capture store, a trace CSV or JSON Lines\n"
		"(cmon trace -F csv|json), a profile CSV or JSON Lines, or cmon stats -F json.\n"
		"With --diff, two capture stores A B: the figures of cmon diff side by side\n"
		"and each run's charts on its own time axis.\n\n");
	cmon_opts__usage(OC_REPORT, f);
}

/* One side of a function's comparison, as cmon diff prints it. */
static json_t *side_json(const struct rundiff_side *s)
{
	if (!s->present)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "calls", (json_int_t)s->calls,
			 "returned", (json_int_t)s->n,
			 "p50_ns", (json_int_t)rundiff__quantile(s, 0.5),
			 "p90_ns", (json_int_t)rundiff__quantile(s, 0.9),
			 "p99_ns", (json_int_t)rundiff__quantile(s, 0.99),
			 "rss_growth_bytes", (json_int_t)s->rss);
}

/* The change of B's P-quantile from A's, in percent (cmon diff's figure):
 * null where it has none. */
static json_t *change_json(const struct rundiff_func *f, double p)
{
	uint64_t qa = rundiff__quantile(&f->a, p), qb = rundiff__quantile(&f->b, p);

	if (!f->a.n || !f->b.n || !qa)
		return json_null();
	return json_real(((double)qb - (double)qa) * 100 / (double)qa);
}

static json_t *diff_rows(const struct rundiff *d)
{
	static const char *const verdicts[] = {
		[RUNDIFF_ONLY_A] = "only_a", [RUNDIFF_ONLY_B] = "only_b", [RUNDIFF_FEW] = "few",
		[RUNDIFF_SLOWER] = "slower", [RUNDIFF_FASTER] = "faster",
		[RUNDIFF_SPREAD] = "spread", [RUNDIFF_SAME] = "same",
	};
	json_t *rows = json_array();

	for (size_t i = 0; rows && i < d->n; i++) {
		const struct rundiff_func *f = &d->funcs[i];
		char words[160];

		rundiff__words(f, words, sizeof(words));
		if (json_array_append_new(rows, json_pack(
			"{s:s, s:o, s:o, s:{s:o, s:o, s:o}, s:s, s:o, s:s}", "func", f->name,
			"a", side_json(&f->a), "b", side_json(&f->b),
			"change_pct", "p50", change_json(f, 0.5), "p90", change_json(f, 0.9),
			"p99", change_json(f, 0.99), "verdict", verdicts[f->verdict],
			"p_value", isnan(f->p) ? json_null() : json_real(f->p), "words", words))) {
			json_decref(rows);
			return NULL;
		}
	}
	return rows;
}

/* --diff: A and B's own pages (each on its own time axis) and the
 * comparison of cmon diff.  NULL after the error was said. */
static json_t *diff_model(const char *pa, const char *pb)
{
	const char *path[2] = { pa, pb };
	struct cmon_store *st[2] = {};
	struct report r[2];
	struct rundiff d = {};
	json_t *m = NULL, *side[2] = {}, *rows = NULL;
	char err[512];
	int e = 0;

	report__init(&r[0]);
	report__init(&r[1]);
	for (int i = 0; i < 2 && !e; i++) {
		e = store_cli__open(path[i], &st[i]);
		if (!e && report__add_source(&r[i], path[i], err, sizeof(err))) {
			log_error("report: %s", err);
			e = 1;
		}
		if (!e && !(side[i] = report__model(&r[i])))
			e = -ENOMEM;
	}
	if (!e)
		e = rundiff__read(st[0], st[1], &d);
	if (!e && !(rows = diff_rows(&d)))
		e = -ENOMEM;
	if (e == -ENOMEM)
		log_error("report: out of memory");
	if (!e) {
		json_t *src = json_array();

		m = json_object();
		for (int i = 0; i < 2; i++)
			json_array_extend(src, json_object_get(side[i], "sources"));
		json_object_set_new(m, "sources", src);
		json_object_set(m, "method", json_object_get(side[0], "method"));
		json_object_set_new(m, "downsampled",
				    json_boolean(json_is_true(json_object_get(side[0], "downsampled")) ||
						 json_is_true(json_object_get(side[1], "downsampled"))));
		json_object_set_new(m, "diff", json_pack("{s:s, s:s, s:o, s:O, s:O, s:f}",
							 "a_path", pa, "b_path", pb, "rows", rows,
							 "a", side[0], "b", side[1],
							 "alpha", RUNDIFF_ALPHA));
		rows = NULL;
	}
	json_decref(rows);
	json_decref(side[0]);
	json_decref(side[1]);
	rundiff__release(&d);
	for (int i = 0; i < 2; i++) {
		cmon_store_close(st[i]);
		report__release(&r[i]);
	}
	return m;
}

int cmd_report(int argc, char **argv)
{
	const char *output = NULL, *title = "cmon report";
	bool diff = false;
	struct report r;
	json_t *model = NULL;
	char err[512];
	FILE *out = NULL;
	struct optable t;
	const char *optarg;
	int c, fd, rc = CMON_EXIT_OK, e;

	if (cmon_opts__begin(&t, OC_REPORT, "report", false))
		return CMON_EXIT_ERROR;
	while ((c = optable__next(&t, argc, argv, &optarg)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_DIFF:
			diff = true;
			break;
		case 'h':
			usage(stdout);
			return CMON_EXIT_OK;
		default: /* -2: said */
			return CMON_EXIT_USAGE;
		}
	}
	if (optind >= argc || !output) {
		log_error("report: give SOURCE... and -o FILE.html (see cmon report --help)");
		return CMON_EXIT_USAGE;
	}
	report__init(&r);
	if (diff && argc - optind != 2) {
		log_error("report: --diff compares two capture stores: give A and B");
		report__release(&r);
		return CMON_EXIT_USAGE;
	}
	if (diff) {
		model = diff_model(argv[optind], argv[optind + 1]);
		if (!model) {
			rc = CMON_EXIT_ERROR;
			goto cleanup;
		}
		goto write;
	}
	for (int i = optind; i < argc; i++) {
		if (report__add_source(&r, argv[i], err, sizeof(err))) {
			log_error("report: %s", err);
			rc = CMON_EXIT_ERROR;
			goto cleanup;
		}
	}
	model = report__model(&r);
	if (!model) {
		log_error("report: out of memory");
		rc = CMON_EXIT_ERROR;
		goto cleanup;
	}
write:
	/* Written to a temporary file and renamed: never a half page. */
	{
		char tmp[4096];

		struct stat st;

		snprintf(tmp, sizeof(tmp), "%s.tmp-%d", output, (int)getpid());
		/* The user's alone, unless the page it replaces was shared: its
		 * mode is kept (README: Files cmon writes). */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && !stat(output, &st) && S_ISREG(st.st_mode) &&
		    (st.st_mode & 0777) != 0600)
			(void)!fchmod(fd, st.st_mode & 0777);
		out = fd < 0 ? NULL : fdopen(fd, "w");
		if (!out) {
			log_error("report: cannot create %s: %s", output, strerror(errno));
			if (fd >= 0)
				close(fd);
			rc = CMON_EXIT_ERROR;
			goto cleanup;
		}
		e = report__write_html(out, title, model);
		if (fclose(out) && !e)
			e = -errno;
		if (!e && rename(tmp, output))
			e = -errno;
		if (e) {
			unlink(tmp);
			log_error("report: writing %s: %s", output, strerror(-e));
			rc = CMON_EXIT_ERROR;
			goto cleanup;
		}
	}
	/* the sources read: one given twice was read once */
	if (diff)
		fprintf(stderr, "cmon: comparison of %s and %s written to %s\n", argv[optind],
			argv[optind + 1], output);
	else
		fprintf(stderr, "cmon: report of %zu source%s written to %s\n",
			json_array_size(r.sources), json_array_size(r.sources) == 1 ? "" : "s",
			output);
cleanup:
	json_decref(model);
	report__release(&r);
	return rc;
}
