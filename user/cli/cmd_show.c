// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_show.c: `cmon show RUN FUNC N`: one recorded call, every argument by
 * name with its type and value, the return value, timing, memory, and each
 * captured buffer (numbers, text, or the first bytes as hex).  `cmon show
 * RUN FUNC`: its calls, slowest first, a line each.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/options.h"
#include "cli/commands.h"
#include "cli/store_cli.h"
#include "core/grow.h"
#include "core/log.h"
#include "core/strbuf.h"

/* Bytes of each buffer shown as hex and text. */
#define SHOW_BYTES 64

/* The paths the store notes as cut at --strlen or unreadable (a value
 * null because its pointer could not be read, not a NULL pointer). */
static void print_notes(const char *notes_json)
{
	static const char *const keys[2][2] = { { "truncated", "truncated" },
						{ "faults", "unreadable" } };
	json_t *j = json_loads(notes_json, 0, NULL);

	for (size_t k = 0; j && k < 2; k++) {
		json_t *a = json_object_get(j, keys[k][0]), *v;
		size_t i;

		if (!json_is_array(a) || !json_array_size(a))
			continue;
		printf("%-10s ", keys[k][1]);
		json_array_foreach(a, i, v) {
			if (i)
				printf(", ");
			store_cli__put_safe(stdout, json_is_string(v) ? json_string_value(v) : "?");
		}
		putchar('\n');
	}
	json_decref(j);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cmon show RUN FUNC [N]\n\n"
		   "Show call N (from 1) of function FUNC of a capture store: every argument\n"
		   "by name, type and value, the return value, latency, memory and captured\n"
		   "buffers.  Without N: FUNC's calls, slowest first, a line each (number,\n"
		   "latency, RSS growth, arguments).  FUNC is a name as `cmon ls` lists it, or\n"
		   "MODULE:NAME.\n");
}

static void mem_line(const char *label, uint64_t entry, uint64_t exit)
{
	char a[32], b[32];

	if (entry == CMON_NONE) {
		printf("%-10s -\n", label);
		return;
	}
	store_cli__bytes(entry, a, sizeof(a));
	if (exit == CMON_NONE) {
		printf("%-10s %" PRIu64 " (%s) at entry\n", label, entry, a);
		return;
	}
	store_cli__bytes(exit, b, sizeof(b));
	printf("%-10s %" PRIu64 " -> %" PRIu64 " (%s -> %s, %+" PRId64 ")\n", label, entry, exit,
	       a, b, (int64_t)(exit - entry));
}

/* Numbers as numbers with their dtype, text as text, hex only for raw
 * bytes. */
static int print_blob(const struct cmon_blob *b, const struct cmon_capture_info *cap)
{
	const char *kind = store_cli__blob_kind(b, cap ? cap->kind : NULL);
	size_t n = b->len < SHOW_BYTES ? b->len : SHOW_BYTES;
	const unsigned char *d = b->data;
	struct strbuf sb = {};
	bool cut = false;

	printf("  ");
	store_cli__put_safe(stdout, b->name);
	printf("  ");
	store_cli__put_safe(stdout, b->dtype);
	printf(" [");
	for (unsigned i = 0; i < b->ndim; i++)
		printf("%s%" PRIu64, i ? ", " : "", b->shape[i]);
	if (strcmp(kind, "bytes")) {
		if (store_cli__blob_json(b, kind, SHOW_BYTES, &sb, &cut))
			return -ENOMEM;
		printf("] = ");
		if (cut && sb.len && sb.buf[sb.len - 1] == ']')
			sb.buf[--sb.len] = '\0';
		store_cli__put_safe(stdout, sb.buf);
		printf("%s%s\n", cut ? (sb.buf[0] == '[' ? ", ...]" : " ...") : "",
		       b->truncated ? "  (truncated)" : "");
		strbuf__release(&sb);
		return 0;
	}
	printf("]  %zu byte%s%s\n", b->len, b->len == 1 ? "" : "s",
	       b->truncated ? " (truncated)" : "");
	if (!n)
		return 0;
	printf("    hex  ");
	for (size_t i = 0; i < n; i++)
		printf("%02x%s", d[i], i + 1 < n ? " " : "");
	printf("%s\n    text ", b->len > n ? " ..." : "");
	for (size_t i = 0; i < n; i++)
		putchar(d[i] >= 0x20 && d[i] < 0x7f ? d[i] : '.');
	printf("%s\n", b->len > n ? " ..." : "");
	return 0;
}

/* CGROUP: the call's process's (capture --cgroup); NULL: none. */
static int print_call(const struct cmon_call *c, const struct cmon_function *f,
		      const char *cgroup)
{
	uint64_t total = f->calls;
	char t[64];

	store_cli__put_safe(stdout, c->func);
	printf("  call %" PRIu64 " of %" PRIu64, c->n, total);
	if (*c->module) {
		printf("  (");
		store_cli__put_safe(stdout, c->module);
		putchar(')');
	}
	store_cli__time(c->ts_ns, t, sizeof(t));
	printf("\n%-10s %" PRIu32 " (", "pid", c->pid);
	store_cli__put_safe(stdout, *c->comm ? c->comm : "?");
	printf(")\n");
	if (cgroup) {
		printf("%-10s ", "cgroup");
		store_cli__put_safe(stdout, cgroup);
		putchar('\n');
	}
	printf("%-10s %" PRIu32 "\n%-10s %s (%" PRIu64 ")\n", "tid", c->tid, "time", t,
	       c->ts_ns);
	if (c->latency_ns == CMON_NONE)
		printf("%-10s -\n", "latency");
	else
		printf("%-10s %" PRIu64 " ns\n", "latency", c->latency_ns);
	printf("%-10s ", "status");
	store_cli__put_safe(stdout, c->status);
	printf("\narguments  %zu\n", c->n_args);
	for (size_t i = 0; i < c->n_args; i++) {
		const struct cmon_arg *a = &c->args[i];

		printf("  ");
		store_cli__put_safe(stdout, a->name);
		printf(" (");
		store_cli__put_safe(stdout, *a->type ? a->type : "?");
		printf(") = ");
		store_cli__put_safe(stdout, a->value ? a->value : "(not captured)");
		putchar('\n');
	}
	if (c->notes_json)
		print_notes(c->notes_json);
	printf("%-10s ", "ret");
	if (*c->ret_type) {
		putchar('(');
		store_cli__put_safe(stdout, c->ret_type);
		printf(") ");
	}
	store_cli__put_safe(stdout, c->ret ? c->ret : "-");
	putchar('\n');
	mem_line("rss", c->rss_entry, c->rss_exit);
	mem_line("vms", c->vms_entry, c->vms_exit);
	printf("blobs      %zu\n", c->n_blobs);
	for (size_t i = 0; i < c->n_blobs; i++)
		if (print_blob(&c->blobs[i], store_cli__capture(f, c->blobs[i].name)))
			return -ENOMEM;
	return 0;
}

/* A call in the list: its number, latency (UINT64_MAX: did not return,
 * listed last), RSS growth and arguments. */
struct listed {
	uint64_t n, lat;
	int64_t rss;
	char *args;
};

static int slowest_first(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;

	if (x->lat != y->lat) /* UINT64_MAX (no return) last */
		return x->lat == UINT64_MAX ? 1 : y->lat == UINT64_MAX ? -1 : x->lat > y->lat ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* Arguments shown on a line: cut to fit 100 columns. */
#define LIST_ARGS 60

/* `cmon show RUN FUNC`: FUNC's calls, slowest first. */
static int list_calls(struct cmon_store *s, const char *func)
{
	struct cmon_iter *it = NULL;
	struct cmon_call *c = NULL;
	struct listed *v = NULL;
	size_t n = 0, cap = 0;
	int r, err = 0;

	if (cmon_store_calls(s, func, 1, &it))
		return 1;
	while (!err && (r = cmon_iter_next(it, &c)) == 1) {
		if (GROW(v, n, cap, 256) ||
		    !(v[n].args = strdup(c->args_json ? c->args_json : "{}"))) {
			err = -ENOMEM;
		} else {
			v[n].n = c->n;
			v[n].lat = c->latency_ns == CMON_NONE ? UINT64_MAX : c->latency_ns;
			v[n].rss = c->rss_entry == CMON_NONE || c->rss_exit == CMON_NONE ? 0 :
				   (int64_t)(c->rss_exit - c->rss_entry);
			n++;
		}
		cmon_call_free(c);
	}
	if (!err && r < 0)
		err = 1;
	cmon_iter_free(it);
	if (!err) {
		qsort(v, n, sizeof(*v), slowest_first);
		printf("%8s %12s %12s  %s\n", "call", "latency_ns", "rss_growth", "args");
		for (size_t i = 0; i < n; i++) {
			char lat[24];

			if (v[i].lat == UINT64_MAX)
				snprintf(lat, sizeof(lat), "-");
			else
				snprintf(lat, sizeof(lat), "%" PRIu64, v[i].lat);
			printf("%8" PRIu64 " %12s %+12" PRId64 "  ", v[i].n, lat, v[i].rss);
			if (strlen(v[i].args) > LIST_ARGS)
				strcpy(v[i].args + LIST_ARGS - 3, "...");
			store_cli__put_safe(stdout, v[i].args);
			putchar('\n');
		}
		printf("%zu call%s of %s; `cmon show RUN %s N` shows call N whole\n", n,
		       n == 1 ? "" : "s", func, func);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].args);
	free(v);
	return err;
}

int cmd_show(int argc, char **argv)
{
	const struct cmon_function *f;
	const struct cmon_process *ps;
	const char *cgroup = NULL;
	struct cmon_store *s = NULL;
	struct cmon_call *call = NULL;
	size_t np;
	uint64_t n;
	int rc = cmon_opts__help_only(OC_SHOW, "show", argc, argv, usage);

	if (rc >= 0)
		return rc;
	if (argc - optind == 2) {
		rc = store_cli__open(argv[optind], &s);
		if (rc)
			return rc;
		rc = cmon_store_function(s, argv[optind + 1], &f) ? 1 :
		     list_calls(s, argv[optind + 1]);
		if (rc == 1)
			log_error("%s", cmon_store_error(s));
		else if (rc)
			log_error("show: %s", strerror(-rc));
		if (rc || fflush(stdout))
			rc = CMON_EXIT_ERROR;
		cmon_store_close(s);
		return rc;
	}
	if (argc - optind != 3) {
		log_error("show: expected RUN FUNC [N] (usage: cmon show RUN FUNC [N])");
		return CMON_EXIT_USAGE;
	}
	if (store_cli__parse_u64(argv[optind + 2], &n)) {
		log_error("show: call number '%s' is not a number", argv[optind + 2]);
		return CMON_EXIT_USAGE;
	}
	rc = store_cli__open(argv[optind], &s);
	if (rc)
		return rc;
	if (cmon_store_function(s, argv[optind + 1], &f) ||
	    cmon_store_call(s, argv[optind + 1], n, &call)) {
		log_error("%s", cmon_store_error(s));
		rc = CMON_EXIT_ERROR;
		goto cleanup;
	}
	/* the call is shown even when its process's row cannot be read */
	if (cmon_store_processes(s, &ps, &np)) {
		log_warn("%s: its processes' cgroups are not shown", cmon_store_error(s));
		np = 0;
	}
	for (size_t i = 0; i < np; i++)
		if (ps[i].pid == call->pid)
			cgroup = ps[i].cgroup;
	if (print_call(call, f, cgroup) || fflush(stdout))
		rc = CMON_EXIT_ERROR;
cleanup:
	cmon_call_free(call);
	cmon_store_close(s);
	return rc;
}
