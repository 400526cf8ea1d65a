// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_report.c: `cmon report SOURCE... -o report.html`: one self-contained
 * HTML page (user/report/) from capture stores, trace CSV/JSON, profile
 * CSV/JSON and `cmon stats -F json` files.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli/options.h"
#include "cli/commands.h"
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
		"(cmon trace -F csv|json), a profile CSV or JSON Lines, or cmon stats -F json.\n\n");
	cmon_opts__usage(OC_REPORT, f);
}

int cmd_report(int argc, char **argv)
{
	const char *output = NULL, *title = "cmon report";
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
	fprintf(stderr, "cmon: report of %zu source%s written to %s\n", json_array_size(r.sources),
		json_array_size(r.sources) == 1 ? "" : "s", output);
cleanup:
	json_decref(model);
	report__release(&r);
	return rc;
}
