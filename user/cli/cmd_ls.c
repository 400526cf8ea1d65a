// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_ls.c: `cmon ls RUN`: what a capture store holds and whether to trust
 * it: how and when it was made, each function with its call count and
 * signature, each process.
 */
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/options.h"
#include "cli/commands.h"
#include "cli/runs.h"
#include "cli/store_cli.h"
#include "core/log.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: cmon ls RUN\n"
		   "       cmon ls DIR\n\n"
		   "List a capture store (the folder `cmon capture -o` made, or its calls.db):\n"
		   "how it was made, its functions (calls, signature) and processes.\n"
		   "On a folder of stores: one line per store (start, calls, size, command).\n");
}

static void meta_line(const char *label, const char *value)
{
	printf("%-12s", label);
	store_cli__put_safe(stdout, value && *value ? value : "-");
	putchar('\n');
}

static void time_line(const char *label, const char *ns_text)
{
	uint64_t ns;
	char buf[64];

	if (!ns_text || store_cli__parse_u64(ns_text, &ns)) {
		meta_line(label, ns_text);
		return;
	}
	store_cli__time(ns, buf, sizeof(buf));
	printf("%-12s%s\n", label, buf);
}

/* Keys printed in the header; any other key is listed after them. */
static const char *const known_keys[] = {
	"format_version", "cmon_version", "command_line", "target_path", "build_id",
	"hostname", "start_time_ns", "end_time_ns", "last_commit_ns", "files",
};

/* Every file the traced functions live in, with its build-id. */
static void print_files(const struct cmon_store *s)
{
	json_t *files = NULL;
	const char *text = cmon_store_meta(s, "files");
	size_t i;
	json_t *f;
	int pad;

	if (text)
		files = json_loads(text, 0, NULL);
	if (!json_is_array(files) || !json_array_size(files)) {
		json_decref(files);
		return;
	}
	json_array_foreach(files, i, f) {
		const char *path = json_string_value(json_object_get(f, "path"));
		const char *bid = json_string_value(json_object_get(f, "build_id"));

		printf("%-12s", i ? "" : "files");
		store_cli__put_safe(stdout, bid ? bid : "-");
		pad = 40 - (int)strlen(bid ? bid : "-");
		printf("%*s  ", pad > 0 ? pad : 0, "");
		store_cli__put_safe(stdout, path ? path : "?");
		putchar('\n');
	}
	json_decref(files);
}

static void print_meta(const struct cmon_store *s)
{
	const char *start = cmon_store_meta(s, "start_time_ns");
	const char *end = cmon_store_meta(s, "end_time_ns");
	uint64_t t0, t1;

	meta_line("store", cmon_store_path(s));
	printf("%-12s%s (cmon ", "format", cmon_store_meta(s, "format_version"));
	store_cli__put_safe(stdout, cmon_store_meta(s, "cmon_version") ?: "?");
	printf(")\n");
	meta_line("command", cmon_store_meta(s, "command_line"));
	meta_line("target", cmon_store_meta(s, "target_path"));
	meta_line("build-id", cmon_store_meta(s, "build_id"));
	meta_line("host", cmon_store_meta(s, "hostname"));
	print_files(s);
	time_line("started", start);
	if (end) {
		time_line("ended", end);
		if (start && !store_cli__parse_u64(start, &t0) && !store_cli__parse_u64(end, &t1) &&
		    t1 >= t0)
			printf("%-12s%.3f s\n", "duration", (double)(t1 - t0) / 1e9);
	} else {
		/* A killed writer: say what survived. */
		char buf[64] = "-";
		const char *last = cmon_store_meta(s, "last_commit_ns");

		if (last && !store_cli__parse_u64(last, &t1))
			store_cli__time(t1, buf, sizeof(buf));
		printf("%-12snot closed (the capture stopped without closing the store, or is still "
		       "running); calls committed up to %s are kept\n", "ended", buf);
	}
	for (size_t i = 0; i < cmon_store_meta_count(s); i++) {
		const char *k, *v;
		bool known = false;

		cmon_store_meta_at(s, i, &k, &v);
		for (size_t j = 0; j < sizeof(known_keys) / sizeof(known_keys[0]); j++)
			known = known || !strcmp(k, known_keys[j]);
		if (!known) {
			printf("%-12s", "");
			store_cli__put_safe(stdout, k);
			printf(" = ");
			store_cli__put_safe(stdout, v);
			putchar('\n');
		}
	}
}

static int print_functions(struct cmon_store *s)
{
	const struct cmon_function *fs;
	size_t n, wname = 8, wmod = 6;
	uint64_t total = 0;
	int err = cmon_store_functions(s, &fs, &n);

	if (err) {
		log_error("%s", cmon_store_error(s));
		return CMON_EXIT_ERROR;
	}
	for (size_t i = 0; i < n; i++) {
		size_t a = strlen(fs[i].name), b = strlen(fs[i].module);

		wname = a > wname ? (a > 48 ? 48 : a) : wname;
		wmod = b > wmod ? (b > 24 ? 24 : b) : wmod;
		total += fs[i].calls;
	}
	printf("\n%zu function%s, %" PRIu64 " call%s\n", n, n == 1 ? "" : "s", total,
	       total == 1 ? "" : "s");
	if (!n)
		return CMON_EXIT_OK;
	printf("%-*s  %-*s  %10s  %s\n", (int)wname, "FUNCTION", (int)wmod, "MODULE", "CALLS",
	       "SIGNATURE");
	for (size_t i = 0; i < n; i++) {
		char *sig = store_cli__signature(&fs[i]);
		int pad;

		store_cli__put_safe(stdout, fs[i].name);
		pad = (int)wname - (int)strlen(fs[i].name);
		printf("%*s  ", pad > 0 ? pad : 0, "");
		store_cli__put_safe(stdout, *fs[i].module ? fs[i].module : "-");
		pad = (int)wmod - (int)strlen(*fs[i].module ? fs[i].module : "-");
		printf("%*s  %10" PRIu64 "  ", pad > 0 ? pad : 0, "", fs[i].calls);
		store_cli__put_safe(stdout, sig ? sig : "?");
		if (!fs[i].typed)
			printf("  [untyped: raw registers]");
		putchar('\n');
		free(sig);
	}
	return CMON_EXIT_OK;
}

static int print_processes(struct cmon_store *s)
{
	const struct cmon_process *ps;
	bool cgroups = false; /* capture --cgroup: a column for each one's */
	size_t n;
	int err = cmon_store_processes(s, &ps, &n);

	if (err) {
		log_error("%s", cmon_store_error(s));
		return CMON_EXIT_ERROR;
	}
	printf("\n%zu process%s\n", n, n == 1 ? "" : "es");
	if (!n)
		return CMON_EXIT_OK;
	for (size_t i = 0; i < n; i++)
		cgroups |= ps[i].cgroup != NULL;
	printf("%-8s  %-16s  %10s  %-36s  %s\n", "PID", "COMM", "CALLS", "FIRST CALL",
	       cgroups ? "LAST CALL                             CGROUP" : "LAST CALL");
	for (size_t i = 0; i < n; i++) {
		char first[64], last[64];
		int pad;

		store_cli__time(ps[i].first_ts_ns, first, sizeof(first));
		store_cli__time(ps[i].last_ts_ns, last, sizeof(last));
		printf("%-8" PRIu32 "  ", ps[i].pid);
		store_cli__put_safe(stdout, *ps[i].comm ? ps[i].comm : "-");
		pad = 16 - (int)strlen(*ps[i].comm ? ps[i].comm : "-");
		printf("%*s  %10" PRIu64 "  %-36s  %-*s", pad > 0 ? pad : 0, "", ps[i].calls, first,
		       cgroups ? 36 : 0, last);
		if (cgroups) {
			fputs("  ", stdout);
			store_cli__put_safe(stdout, ps[i].cgroup ? ps[i].cgroup : "-");
		}
		putchar('\n');
	}
	return CMON_EXIT_OK;
}

int cmd_ls(int argc, char **argv)
{
	struct cmon_store *s = NULL;
	int rc = cmon_opts__help_only(OC_LS, "ls", argc, argv, usage);

	if (rc >= 0)
		return rc;
	if (argc - optind != 1) {
		log_error("ls: expected one store folder (usage: cmon ls RUN)");
		return CMON_EXIT_USAGE;
	}
	{
		struct stat st;

		/* A folder that is not a store itself: the stores in it. */
		if (!stat(argv[optind], &st) && S_ISDIR(st.st_mode) &&
		    !runs__is_store_dir(argv[optind]))
			return runs__list_dir(argv[optind]);
	}
	rc = store_cli__open(argv[optind], &s);
	if (rc)
		return rc;
	print_meta(s);
	rc = print_functions(s);
	if (!rc)
		rc = print_processes(s);
	if (fflush(stdout))
		rc = CMON_EXIT_ERROR;
	cmon_store_close(s);
	return rc;
}
