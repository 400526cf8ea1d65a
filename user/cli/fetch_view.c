// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fetch_view.c: debuginfod downloads shown on stderr while a command
 * waits for them.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/fetch_view.h"
#include "cli/session.h"

const char *cmon_debuginfod_urls;

static struct {
	bool tty, started, line_drawn;
	long done;
} V;

static void show(void *ctx, const struct debuginfod_progress *p)
{
	(void)ctx;
	if (!V.started) {
		V.started = true;
		V.done = 0;
		if (!V.tty)
			fprintf(stderr, "cmon: %s: fetching its debug info from debuginfod (%s)\n",
				p->file, debuginfod__urls());
	}
	if ((p->url || p->finished) && p->done > 0)
		V.done = p->done;
	if (V.tty && !p->finished) {
		if (p->url && p->total >= 1048576)
			fprintf(stderr, "\r\033[Kcmon: %s: debug info from %s: %.1f of %.1f MiB",
				p->file, p->url, V.done / 1048576.0, p->total / 1048576.0);
		else if (p->url && p->total > 0)
			fprintf(stderr, "\r\033[Kcmon: %s: debug info from %s: %.0f of %.0f KiB",
				p->file, p->url, V.done / 1024.0, p->total / 1024.0);
		else
			fprintf(stderr, "\r\033[Kcmon: %s: asking debuginfod (%s) for its debug info",
				p->file, debuginfod__urls());
		V.line_drawn = true;
	}
	if (!p->finished)
		return;
	if (V.line_drawn)
		fprintf(stderr, "\r\033[K");
	/* A failure is the warning debuginfod.c gives. */
	if (!p->err && V.done >= 1048576)
		fprintf(stderr, "cmon: %s: debug info fetched (%.1f MiB)\n", p->file,
			V.done / 1048576.0);
	else if (!p->err)
		fprintf(stderr, "cmon: %s: debug info fetched (%.0f KiB)\n", p->file,
			V.done / 1024.0);
	V.started = V.line_drawn = false;
}

int fetch_view__setup(bool no_debuginfod)
{
	struct debuginfod_setup s = {
		.urls = cmon_debuginfod_urls,
		.disabled = no_debuginfod,
		.progress = show,
		.stop = &session_stop_signal,
	};

	V.tty = isatty(STDERR_FILENO);
	return debuginfod__setup(&s);
}
