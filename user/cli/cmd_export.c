// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_export.c: `cmon export RUN ...`: a capture store as files.
 *
 *   --per-call OUTDIR   OUTDIR/<func>/<n>/args.json, arg_<name>.bin for every
 *                       captured buffer, arg_<name>.npy for numeric ones
 *                       (callmonitor's layout); OUTDIR/index.json maps the
 *                       folder names back to function names
 *   -F csv|json [-o OUTDIR]
 *                       one table per function: OUTDIR/<func>.csv (RFC 4180)
 *                       or <func>.jsonl; OUTDIR defaults to RUN-csv / RUN-json
 *   -F chrome|tree|folded [-o FILE], --chrome
 *                       the whole run as one Chrome trace / call tree /
 *                       folded stacks (export_view.c), to FILE or stdout
 *
 * OUTDIR is never overwritten (OUTDIR-1, OUTDIR-2, ... instead); folders are
 * 0700 and files 0600, never created through a symlink: captured arguments
 * can hold secrets.  Function and argument names are untrusted bytes (C++
 * names hold ':' '(' ' ' '/'): they become safe path components.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/file.h"
#include "core/grow.h"
#include "cli/options.h"
#include "cli/commands.h"
#include "cli/export_view.h"
#include "cli/store_cli.h"
#include "cli/view_filter.h"
#include "core/log.h"
#include "output/schema.h"
#include "output/writer.h"
#include "store/store_fs.h"
#include "store/store_npy.h"

#define SAFE_NAME_MAX 96

/* An error already said (a call's notes that are not lists of paths). */
#define NOTES_BAD 2

enum export_mode { EXPORT_NONE, EXPORT_PER_CALL, EXPORT_CSV, EXPORT_JSON, EXPORT_VIEW };

/* Names already handed out in one folder, to keep safe names unique. */
struct names {
	char **v;
	size_t n, cap;
};

static void names__release(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
	ns->v = NULL;
	ns->n = ns->cap = 0;
}

static bool names__has(const struct names *ns, const char *s)
{
	for (size_t i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], s))
			return true;
	return false;
}

/*
 * PREFIX + IN made a safe, unique path component + SUFFIX: bytes other than
 * [A-Za-z0-9_.-] become '_', a leading '.' is prefixed with '_', long names
 * are cut, and a name already in NS gets "-2", "-3", ...  Returned string
 * belongs to NS.  NULL on ENOMEM.
 */
static const char *safe_name(struct names *ns, const char *prefix, const char *in,
			     const char *suffix)
{
	char base[SAFE_NAME_MAX + 2], *cand = NULL;
	size_t k = 0;

	if (!*prefix && (in[0] == '.' || !in[0]))
		base[k++] = '_';
	for (const unsigned char *p = (const unsigned char *)in; *p && k < SAFE_NAME_MAX; p++) {
		bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-';

		base[k++] = ok ? (char)*p : '_';
	}
	base[k] = '\0';
	for (unsigned i = 1;; i++) {
		int r = i == 1 ? asprintf(&cand, "%s%s%s", prefix, base, suffix)
			       : asprintf(&cand, "%s%s-%u%s", prefix, base, i, suffix);

		if (r < 0)
			return NULL;
		if (!names__has(ns, cand))
			break;
		free(cand);
	}
	if (GROW(ns->v, ns->n, ns->cap, 16)) {
		free(cand);
		return NULL;
	}
	ns->v[ns->n++] = cand;
	return cand;
}

/* Escaped JSON string through a scratch strbuf (writer.h's escaper: invalid
 * UTF-8 becomes \u00XX, so every file is valid JSON). */
static void put_json_str(FILE *f, struct strbuf *tmp, const char *s)
{
	strbuf__reset(tmp);
	if (json_escape(tmp, s ? s : "")) {
		fputs("\"\"", f);
		return;
	}
	fwrite(tmp->buf, 1, tmp->len, f);
}

static void put_opt_u64(FILE *f, uint64_t v, const char *none)
{
	if (v == CMON_NONE)
		fputs(none, f);
	else
		fprintf(f, "%" PRIu64, v);
}

static FILE *create_file(int dirfd, const char *name, int *err)
{
	int fd = store_fs__create(dirfd, name);
	FILE *f;

	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		*err = -errno;
		close(fd);
	}
	return f;
}

/* 0 or -errno.  A buffered write that failed (a full disk) fails again
 * at fclose's flush, which says why; EIO only when it did not. */
static int close_file(FILE *f)
{
	int bad = ferror(f);

	errno = 0;
	if (fclose(f))
		return errno > 0 ? -errno : -EIO;
	return bad ? -EIO : 0;
}

/* ------------------------------------------------------------- per call */

static int write_bytes(int dirfd, const char *name, const void *head, size_t hlen,
		       const void *data, size_t len)
{
	int fd = store_fs__create(dirfd, name), err = 0;

	if (fd < 0)
		return fd;
	if (hlen)
		err = store_fs__write_all(fd, head, hlen);
	if (!err && len)
		err = store_fs__write_all(fd, data, len);
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* The .npy of B: its own shape when the data is all there, else the whole
 * elements present as one dimension.  *NPY_NDIM/NPY_SHAPE say which. */
static int write_npy(int dirfd, const char *name, const struct cmon_blob *b, unsigned *npy_ndim,
		     uint64_t *npy_shape)
{
	size_t item = cmon_dtype_size(b->dtype);
	uint64_t want = item;
	bool exact = true;
	char head[4096];
	int hlen;

	for (unsigned i = 0; i < b->ndim && exact; i++) {
		if (b->shape[i] && want > UINT64_MAX / b->shape[i])
			exact = false;
		else
			want *= b->shape[i];
	}
	exact = exact && want == b->len && b->ndim <= 32;
	if (exact) {
		*npy_ndim = b->ndim;
		memcpy(npy_shape, b->shape, b->ndim * sizeof(*npy_shape));
	} else {
		*npy_ndim = 1;
		npy_shape[0] = b->len / item;
	}
	hlen = store_npy__header(b->dtype, *npy_ndim, npy_shape, head, sizeof(head));
	if (hlen < 0)
		return hlen;
	return write_bytes(dirfd, name, head, (size_t)hlen, b->data,
			   exact ? b->len : (b->len / item) * item);
}

/* A call's notes in NOTES[0] (truncated) and NOTES[1] (faults): 0, or -EINVAL
 * after saying the store is corrupted. */
static int call_notes(const struct cmon_call *c, struct strbuf notes[2])
{
	int err = store_cli__notes(c->notes_json, &notes[0], &notes[1]);

	if (err == -EINVAL) {
		log_error("export: store is corrupted (%s call %" PRIu64
			  ": notes are not lists of value paths)", c->func, c->n);
		return NOTES_BAD;
	}
	return err;
}

/* Set when the store predates calls.notes: its calls' notes are unknown,
 * written null (never "none"). */
static bool notes_unknown;

/* A list of value paths as JSON: the list, [] when there is none, null when
 * the store does not say. */
static void put_json_list(FILE *f, const struct strbuf *l)
{
	fputs(notes_unknown ? "null" : l->len ? l->buf : "[]", f);
}

static int export_call(int ffd, const struct cmon_call *c, struct strbuf *tmp,
		       struct strbuf notes[2])
{
	struct names files = {};
	char dir[24];
	FILE *f = NULL;
	int cfd, err = 0;

	err = call_notes(c, notes);
	if (err)
		return err;
	snprintf(dir, sizeof(dir), "%" PRIu64, c->n);
	cfd = store_fs__mkdirat(ffd, dir);
	if (cfd < 0)
		return cfd;
	f = create_file(cfd, "args.json", &err);
	if (!f)
		goto cleanup;
	fputs("{\"func\": ", f);
	put_json_str(f, tmp, c->func);
	fputs(", \"module\": ", f);
	put_json_str(f, tmp, c->module);
	fprintf(f, ", \"n\": %" PRIu64 ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"comm\": ",
		c->n, c->pid, c->tid);
	put_json_str(f, tmp, c->comm);
	fprintf(f, ", \"ts_ns\": %" PRIu64 ", \"latency_ns\": ", c->ts_ns);
	put_opt_u64(f, c->latency_ns, "null");
	fputs(", \"status\": ", f);
	put_json_str(f, tmp, c->status);
	fputs(",\n \"args\": {", f);
	for (size_t i = 0; i < c->n_args; i++) {
		fputs(i ? ", " : "", f);
		put_json_str(f, tmp, c->args[i].name);
		fprintf(f, ": %s", c->args[i].value ? c->args[i].value : "null");
	}
	fputs("},\n \"params\": [", f);
	for (size_t i = 0; i < c->n_args; i++) {
		fputs(i ? ", " : "", f);
		fputs("{\"name\": ", f);
		put_json_str(f, tmp, c->args[i].name);
		fputs(", \"type\": ", f);
		put_json_str(f, tmp, c->args[i].type);
		fputs(", \"kind\": ", f);
		put_json_str(f, tmp, c->args[i].kind);
		fputc('}', f);
	}
	fprintf(f, "],\n \"ret\": %s, \"ret_type\": ", c->ret ? c->ret : "null");
	put_json_str(f, tmp, c->ret_type);
	fputs(",\n \"rss_entry\": ", f);
	put_opt_u64(f, c->rss_entry, "null");
	fputs(", \"rss_exit\": ", f);
	put_opt_u64(f, c->rss_exit, "null");
	fputs(", \"vms_entry\": ", f);
	put_opt_u64(f, c->vms_entry, "null");
	fputs(", \"vms_exit\": ", f);
	put_opt_u64(f, c->vms_exit, "null");
	fputs(",\n \"truncated\": ", f);
	put_json_list(f, &notes[0]);
	fputs(", \"faults\": ", f);
	put_json_list(f, &notes[1]);
	fputs(",\n \"blobs\": [", f);
	for (size_t i = 0; i < c->n_blobs; i++) {
		const struct cmon_blob *b = &c->blobs[i];
		const char *bin = safe_name(&files, "arg_", b->name, ".bin");
		char npy[SAFE_NAME_MAX + 32] = "";
		uint64_t npy_shape[32];
		unsigned npy_ndim = 0;

		if (!bin) {
			err = -ENOMEM;
			goto cleanup;
		}
		err = write_bytes(cfd, bin, NULL, 0, b->data, b->len);
		if (!err && cmon_dtype_numeric(b->dtype)) {
			/* arg_<name>.npy next to arg_<name>.bin: the same (unique) stem. */
			snprintf(npy, sizeof(npy), "%.*s.npy", (int)(strlen(bin) - 4), bin);
			err = write_npy(cfd, npy, b, &npy_ndim, npy_shape);
		}
		if (err)
			goto cleanup;
		fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
		put_json_str(f, tmp, b->name);
		fputs(", \"dtype\": ", f);
		put_json_str(f, tmp, b->dtype);
		fputs(", \"shape\": [", f);
		for (unsigned d = 0; d < b->ndim; d++)
			fprintf(f, "%s%" PRIu64, d ? ", " : "", b->shape[d]);
		fprintf(f, "], \"truncated\": %s, \"bytes\": %zu, \"bin\": ",
			b->truncated ? "true" : "false", b->len);
		put_json_str(f, tmp, bin);
		fputs(", \"npy\": ", f);
		if (*npy) {
			put_json_str(f, tmp, npy);
			fputs(", \"npy_shape\": [", f);
			for (unsigned d = 0; d < npy_ndim; d++)
				fprintf(f, "%s%" PRIu64, d ? ", " : "", npy_shape[d]);
			fputc(']', f);
		} else {
			fputs("null", f);
		}
		fputc('}', f);
	}
	fputs("]}\n", f);
cleanup:
	if (f) {
		int e = close_file(f);

		err = err ? err : e;
	}
	names__release(&files);
	close(cfd);
	return err;
}

/* ---------------------------------------------------------------- driver */

struct export_ctx {
	struct cmon_store *s;
	enum export_mode mode;
	int rootfd;
	struct strbuf tmp;
	struct strbuf notes[2]; /* a call's truncated and faults lists */
	struct names entries;  /* names used in the root folder */
	uint64_t calls;
	const struct cmon_process *procs; /* by pid: their cgroups */
	size_t n_procs;
	bool cgroups;          /* some process has one: the tables' last column */
	const struct view_filter *vf; /* -F csv|json: the calls kept */
	uint64_t first;        /* the first call's entry time, for vf's range */
	struct index_entry {   /* index.json: a function and where it went */
		char *name, *module; /* one allocation, name's */
		uint64_t calls;
		const char *path; /* in entries */
	} *index;
	size_t n_index, cap_index;
	/* a trace file's export: the folder, made at its first table */
	const char *outdir;
	char *made;
};

static int index_add(struct export_ctx *x, const char *name, const char *module,
		     uint64_t calls, const char *path)
{
	size_t ln = strlen(name) + 1, lm = strlen(module ? module : "") + 1;
	struct index_entry *e;
	char *both;

	if (GROW(x->index, x->n_index, x->cap_index, 16) || !(both = malloc(ln + lm)))
		return -ENOMEM;
	e = &x->index[x->n_index++];
	e->name = memcpy(both, name, ln);
	e->module = memcpy(both + ln, module ? module : "", lm);
	e->calls = calls;
	e->path = path;
	return 0;
}

static int by_pid(const void *key, const void *elem)
{
	uint32_t pid = *(const uint32_t *)key, other = ((const struct cmon_process *)elem)->pid;

	return pid < other ? -1 : pid > other;
}

static const char *cgroup_of(const struct export_ctx *x, uint32_t pid)
{
	const struct cmon_process *p;

	if (!x->cgroups)
		return NULL;
	p = bsearch(&pid, x->procs, x->n_procs, sizeof(*x->procs), by_pid);
	return p ? p->cgroup : NULL;
}

static const char *cgroup_cb(void *ctx, uint32_t pid)
{
	return cgroup_of(ctx, pid);
}

/* Export function I (noted in the index). */
static int export_function(struct export_ctx *x, const struct cmon_function *fs, size_t nf,
			   size_t i)
{
	const struct cmon_function *f = &fs[i];
	uint64_t before = x->calls;
	const char *name;
	const char **entry = &name;
	const char *suffix = x->mode == EXPORT_CSV ? ".csv" : x->mode == EXPORT_JSON ? ".jsonl" : "";
	struct cmon_iter *it = NULL;
	struct cmon_call *c = NULL;
	char *key = store_cli__lookup_name(fs, nf, i);
	FILE *out = NULL;
	void *obuf = NULL;
	int ffd = -1, err = 0, r;

	*entry = safe_name(&x->entries, "", f->name, suffix);
	if (!key || !*entry) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (x->mode == EXPORT_PER_CALL) {
		ffd = store_fs__mkdirat(x->rootfd, *entry);
		if (ffd < 0) {
			err = ffd;
			goto cleanup;
		}
	} else {
		out = create_file(x->rootfd, *entry, &err);
		if (!out)
			goto cleanup;
		obuf = file__buffer(out, 1 << 20);
	}
	if (x->mode != EXPORT_PER_CALL) { /* as trace writes it */
		uint64_t n = 0;

		err = export_view__table(x->s, fs, nf, i, x->mode == EXPORT_CSV ? OUT_CSV : OUT_JSON,
					 out, x->vf, x->first, x->cgroups ? cgroup_cb : NULL, x, &n);
		x->calls += n;
		goto cleanup;
	}
	if (cmon_store_calls(x->s, key, 1, &it)) {
		err = 1;
		goto cleanup;
	}
	while ((r = cmon_iter_next(it, &c)) == 1) {
		err = export_call(ffd, c, &x->tmp, x->notes);
		cmon_call_free(c);
		c = NULL;
		if (err)
			goto cleanup;
		x->calls++;
	}
	if (r < 0) {
		err = 1;
		goto cleanup;
	}
cleanup:
	if (out) {
		int e = close_file(out);

		err = err ? err : e;
	}
	free(obuf); /* after the stream that used it */
	cmon_call_free(c);
	cmon_iter_free(it);
	if (ffd >= 0)
		close(ffd);
	free(key);
	/* filtered: a table only for the functions with calls kept, as of a trace */
	if (!err && x->mode != EXPORT_PER_CALL && x->calls == before && view_filter__active(x->vf))
		return unlinkat(x->rootfd, *entry, 0) ? -errno : 0;
	return err ? err : index_add(x, f->name, f->module, x->calls - before, *entry);
}

/* The folder of a trace file's export, made at its first table (or at
 * the end: a trace with no call kept). */
static int trace_root(struct export_ctx *x)
{
	int err;

	if (x->rootfd >= 0)
		return 0;
	err = store_fs__mkdir_unique(x->outdir, &x->made, &x->rootfd);
	if (err)
		return err;
	/* index.json first, so no function can take its name. */
	return safe_name(&x->entries, "", "index.json", "") ? 0 : -ENOMEM;
}

static FILE *table_open(void *ctx, const char *func, const char *module, uint64_t calls,
			int *err)
{
	struct export_ctx *x = ctx;
	const char *entry;

	*err = trace_root(x);
	if (*err)
		return NULL;
	entry = safe_name(&x->entries, "", func, x->mode == EXPORT_CSV ? ".csv" : ".jsonl");
	*err = entry ? index_add(x, func, module, calls, entry) : -ENOMEM;
	return *err ? NULL : create_file(x->rootfd, entry, err);
}

static int table_close(void *ctx, FILE *f)
{
	(void)ctx;
	return close_file(f);
}

/* SOURCE_KEY: "store" or "trace", the kind of PATH exported. */
static int write_index(struct export_ctx *x, const char *source_key, const char *path)
{
	static const char *const modes[] = { "", "per-call", "csv", "json" };
	int err = 0;
	FILE *f = create_file(x->rootfd, "index.json", &err);

	if (!f)
		return err;
	fprintf(f, "{\"%s\": ", source_key);
	put_json_str(f, &x->tmp, path);
	fprintf(f, ", \"format\": \"%s\", \"functions\": [", modes[x->mode]);
	for (size_t i = 0; i < x->n_index; i++) {
		const struct index_entry *e = &x->index[i];

		fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
		put_json_str(f, &x->tmp, e->name);
		fputs(", \"module\": ", f);
		put_json_str(f, &x->tmp, e->module);
		fprintf(f, ", \"calls\": %" PRIu64 ", \"path\": ", e->calls);
		put_json_str(f, &x->tmp, e->path);
		fputc('}', f);
	}
	fputs("]}\n", f);
	return close_file(f);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cmon export RUN --per-call OUTDIR\n"
		"       cmon export RUN -F csv|json [-o OUTDIR]\n"
		"       cmon export RUN -F chrome|tree|folded|text [-o FILE]   (--chrome: -F chrome)\n"
		"         [--func PATTERN]... [--since TIME] [--until TIME] [--if EXPR]\n\n"
		"  RUN: a capture store, or a trace file of `cmon trace -F json` or `-F csv`.\n"
		"  --per-call: OUTDIR/<func>/<n>/args.json, arg_<name>.bin and, for numeric\n"
		"  buffers, arg_<name>.npy (numpy.load).  -F csv|json: one table per function,\n"
		"  <func>.csv or <func>.jsonl, in -o DIR (default RUN-csv or RUN-json).\n"
		"  -F chrome: Chrome Trace Event JSON (Perfetto, chrome://tracing); -F tree:\n"
		"  calls nested per thread in entry order, as uftrace replay; -F folded: stacks\n"
		"  weighted by self time (flamegraph.pl, speedscope); these three go to -o FILE,\n"
		"  or stdout.  OUTDIR is never overwritten: OUTDIR-1, OUTDIR-2, ... are made\n"
		"  instead; OUTDIR/index.json maps file names back to function names.\n\n");
	cmon_opts__usage(OC_EXPORT, f);
}

/* RUN-csv / RUN-json next to the store folder. */
static char *default_outdir(const char *run, enum export_mode mode)
{
	char *base = store_fs__strip_slashes(run), *out = NULL;
	size_t n;

	if (!base)
		return NULL;
	n = strlen(base);
	if (n >= 8 && !strcmp(base + n - 8, "calls.db") && (n == 8 || base[n - 9] == '/')) {
		base[n - 8] = '\0';
		if (!*base) {
			free(base);
			base = strdup(".");
		} else {
			char *t = store_fs__strip_slashes(base);

			free(base);
			base = t;
		}
		if (!base)
			return NULL;
	}
	if (!strcmp(base, ".") || !strcmp(base, "/"))
		out = strdup(mode == EXPORT_CSV ? "cmon-export-csv" : "cmon-export-json");
	else if (asprintf(&out, "%s-%s", base, mode == EXPORT_CSV ? "csv" : "json") < 0)
		out = NULL;
	free(base);
	return out;
}

/* The command line, once parsed and checked. */
struct export_args {
	const char *run;          /* the store folder or trace file */
	const char *outdir;       /* -o, or --per-call's OUTDIR; NULL: the default */
	enum out_format view_fmt; /* EXPORT_VIEW's format */
};

/* ARGV into *MODE, VF and A: -1 to go on, else the exit status (after
 * USAGE on stdout or one error line).  VF is the caller's to free. */
static int parse_args(int argc, char **argv, enum export_mode *mode, struct view_filter *vf,
		      struct export_args *a)
{
	const char *per_call_dir = NULL;
	bool o_given = false;
	struct optable t;
	const char *optarg;
	int c;

	if (cmon_opts__begin(&t, OC_EXPORT, "export", false))
		return CMON_EXIT_ERROR;
	while ((c = optable__next(&t, argc, argv, &optarg)) != -1) {
		switch (c) {
		case OPT_PER_CALL:
			if (*mode != EXPORT_NONE)
				goto one_mode;
			*mode = EXPORT_PER_CALL;
			per_call_dir = optarg;
			break;
		case 'F':
			if (*mode != EXPORT_NONE)
				goto one_mode;
			if (!strcmp(optarg, "csv")) {
				*mode = EXPORT_CSV;
			} else if (!strcmp(optarg, "json")) {
				*mode = EXPORT_JSON;
			} else if (!out_format__parse(optarg, &a->view_fmt) &&
				   (a->view_fmt >= OUT_CHROME || a->view_fmt == OUT_TEXT)) {
				*mode = EXPORT_VIEW;
			} else {
				log_error("export: -F takes csv, json, chrome, tree, folded or text, not '%s'",
					  optarg);
				return CMON_EXIT_USAGE;
			}
			break;
		case OPT_CHROME:
			if (*mode != EXPORT_NONE)
				goto one_mode;
			*mode = EXPORT_VIEW;
			a->view_fmt = OUT_CHROME;
			break;
		case 'f':
		case OPT_SINCE:
		case OPT_UNTIL:
		case OPT_IF:
			if (view_filter__add(vf, c, optarg))
				return CMON_EXIT_USAGE;
			break;
		case 'o':
			o_given = true;
			a->outdir = optarg;
			break;
		case 'h':
			usage(stdout);
			return CMON_EXIT_OK;
		default: /* -2: said */
			return CMON_EXIT_USAGE;
		}
	}
	if (*mode == EXPORT_NONE) {
		log_error("export: say what to export: --per-call OUTDIR or -F csv|json");
		return CMON_EXIT_USAGE;
	}
	if (o_given && *mode == EXPORT_PER_CALL)
		goto one_mode;
	if (*mode == EXPORT_PER_CALL)
		a->outdir = per_call_dir;
	if (argc - optind != 1) {
		log_error("export: expected one store folder (see cmon export --help)");
		return CMON_EXIT_USAGE;
	}
	if (*mode == EXPORT_PER_CALL && view_filter__active(vf)) {
		log_error("export: --func, --since, --until and --if choose the calls of -F FMT, "
			  "not of --per-call");
		return CMON_EXIT_USAGE;
	}
	a->run = argv[optind];
	return -1;
one_mode:
	log_error("export: give one of --per-call OUTDIR, -F FMT [-o OUTDIR] or --chrome");
	return CMON_EXIT_USAGE;
}

static void say_exported(const struct export_ctx *x)
{
	fprintf(stderr, "cmon: exported %" PRIu64 " call%s of %zu function%s to %s\n", x->calls,
		x->calls == 1 ? "" : "s", x->n_index, x->n_index == 1 ? "" : "s", x->made);
}

/* -F csv|json of a trace file IN (closed here), re-viewed as tables: the
 * exit status. */
static int export_trace_file(struct export_ctx *x, FILE *in, bool csv_in, const char *run)
{
	struct export_tables tables = { table_open, table_close, x };
	int err;

	err = export_view__trace_tables(in, csv_in, run, x->mode == EXPORT_CSV ? OUT_CSV : OUT_JSON,
					x->vf, &tables, &x->calls);
	fclose(in);
	err = err ? err : trace_root(x);
	err = err ? err : write_index(x, "trace", run);
	if (err == EXPORT_SAID) {
		return CMON_EXIT_ERROR;
	} else if (err && !x->made) {
		log_error("export: cannot create %s: %s", x->outdir, strerror(-err));
		return CMON_EXIT_ERROR;
	} else if (err) {
		log_error("export: writing %s: %s", x->made, strerror(-err));
		return CMON_EXIT_ERROR;
	}
	say_exported(x);
	return CMON_EXIT_OK;
}

/* --per-call or -F csv|json of the capture store RUN: the exit status. */
static int export_store(struct export_ctx *x, const char *run)
{
	const struct cmon_function *fs;
	size_t nf = 0;
	int rc, err;

	rc = store_cli__open(run, &x->s);
	if (rc)
		return rc;
	if (cmon_store_functions(x->s, &fs, &nf)) {
		log_error("%s", cmon_store_error(x->s));
		return CMON_EXIT_ERROR;
	}
	/* capture --cgroup: each process's, a column of the tables (sorted by pid) */
	if (cmon_store_processes(x->s, &x->procs, &x->n_procs)) {
		log_warn("%s: the tables have no cgroup column", cmon_store_error(x->s));
		x->n_procs = 0;
	}
	for (size_t i = 0; i < x->n_procs; i++)
		x->cgroups |= x->procs[i].cgroup != NULL;
	if (export_view__first_ts(x->s, x->vf, &x->first)) {
		log_error("%s", cmon_store_error(x->s));
		return CMON_EXIT_ERROR;
	}
	notes_unknown = !cmon_store_has_notes(x->s);
	if (notes_unknown)
		log_warn("%s was written before stores noted cut and unreadable values: "
			 "truncated and faults are unknown (null in JSON, empty in CSV)", cmon_store_path(x->s));
	err = store_fs__mkdir_unique(x->outdir, &x->made, &x->rootfd);
	if (err) {
		log_error("export: cannot create %s: %s", x->outdir, strerror(-err));
		return CMON_EXIT_ERROR;
	}
	/* index.json first, so no function can take its name. */
	if (!safe_name(&x->entries, "", "index.json", "")) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < nf; i++) {
		err = export_function(x, fs, nf, i);
		if (err)
			goto fail;
	}
	err = write_index(x, "store", cmon_store_path(x->s));
	if (err)
		goto fail;
	say_exported(x);
	return CMON_EXIT_OK;
fail:
	/* err 1: the store's own message; NOTES_BAD: said; else a file
	 * system errno. */
	if (err == 1)
		log_error("%s", cmon_store_error(x->s));
	else if (err != NOTES_BAD)
		log_error("export: writing %s: %s", x->made, strerror(-err));
	return CMON_EXIT_ERROR;
}

static void export_ctx__release(struct export_ctx *x)
{
	if (x->rootfd >= 0)
		close(x->rootfd);
	names__release(&x->entries);
	strbuf__release(&x->tmp);
	strbuf__release(&x->notes[0]);
	strbuf__release(&x->notes[1]);
	free(x->made);
	for (size_t i = 0; i < x->n_index; i++)
		free(x->index[i].name);
	free(x->index);
	cmon_store_close(x->s);
}

int cmd_export(int argc, char **argv)
{
	struct export_ctx x = { .rootfd = -1 };
	struct view_filter vf = {};
	struct export_args a = { .view_fmt = OUT_CHROME };
	char *def = NULL;
	bool csv_in;
	FILE *in;
	int rc;

	rc = parse_args(argc, argv, &x.mode, &vf, &a);
	if (rc >= 0)
		goto cleanup;
	if (x.mode == EXPORT_VIEW) {
		rc = export_view__run(a.run, a.view_fmt, a.outdir, &vf);
		goto cleanup;
	}
	if (!a.outdir) {
		def = default_outdir(a.run, x.mode);
		if (!def) {
			log_error("export: out of memory");
			rc = CMON_EXIT_ERROR;
			goto cleanup;
		}
		a.outdir = def;
	}
	x.vf = &vf;
	x.outdir = a.outdir;
	in = x.mode == EXPORT_PER_CALL ? NULL : export_view__trace_file(a.run, &csv_in);
	if (in)
		rc = export_trace_file(&x, in, csv_in, a.run);
	else
		rc = export_store(&x, a.run);
cleanup:
	export_ctx__release(&x);
	free(def);
	view_filter__free(&vf);
	return rc;
}
