// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * source.c: what cmon wrote, read back for a report.  The kind of a file is
 * told by its content: a folder or calls.db is a store; a first line
 * "schema,ts_ns,pid,..." a trace CSV (its long shape "schema,call,ts_ns,..."),
 * "schema,report,elapsed_s,..." a profile CSV ("schema," is not in files
 * written before versions, and a newer version is refused); JSON
 * Lines of records ("ts_ns", "pid", "func") a trace, of rows ("report",
 * "func") a profile (any other object line is refused); one JSON object with
 * "runs" and "values" is `cmon stats -F json`.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmon/cmon.h>
#include "core/grow.h"
#include "core/log.h"
#include "output/csv_trace.h"
#include "output/schema.h"
#include "report.h"

void report__init(struct report *r)
{
	memset(r, 0, sizeof(*r));
	r->profile_rows = json_array();
	r->stats = json_array();
	r->sources = json_array();
}

void report__release(struct report *r)
{
	for (size_t i = 0; i < r->n_funcs; i++) {
		free(r->funcs[i]);
		free(r->func_names[i]);
		free(r->func_modules[i]);
	}
	free(r->funcs);
	free(r->func_names);
	free(r->func_modules);
	free(r->calls);
	json_decref(r->profile_rows);
	json_decref(r->stats);
	json_decref(r->sources);
	for (size_t i = 0; i < r->n_seen; i++)
		free(r->seen[i].path);
	free(r->seen);
	memset(r, 0, sizeof(*r));
}

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* The name shown for function I: MODULE:NAME when a function of the same
 * name from another module is in the report, else NAME. */
static int func_rename(struct report *r, size_t i, bool qualified)
{
	char *s = NULL;

	if (qualified && *r->func_modules[i]) {
		if (asprintf(&s, "%s:%s", r->func_modules[i], r->func_names[i]) < 0)
			return -ENOMEM;
	} else if (!(s = strdup(r->func_names[i]))) {
		return -ENOMEM;
	}
	free(r->funcs[i]);
	r->funcs[i] = s;
	return 0;
}

/* Functions are told apart by module and name: the same name in two
 * modules (a program's static dup, a library's dup) is two functions. */
static int func_index(struct report *r, const char *module, const char *name, uint32_t *idx)
{
	bool clash = false;
	/* Three arrays side by side: the same capacity, r->cap_funcs set last. */
	size_t i, cap_f = r->cap_funcs, cap_n = r->cap_funcs;

	if (!module)
		module = "";
	for (i = r->n_funcs; i-- > 0;)
		if (!strcmp(r->func_names[i], name) && !strcmp(r->func_modules[i], module)) {
			*idx = (uint32_t)i;
			return 0;
		}
	if (GROW(r->funcs, r->n_funcs, cap_f, 16) || GROW(r->func_names, r->n_funcs, cap_n, 16) ||
	    GROW(r->func_modules, r->n_funcs, r->cap_funcs, 16))
		return -ENOMEM;
	i = r->n_funcs;
	r->funcs[i] = NULL;
	r->func_names[i] = strdup(name);
	r->func_modules[i] = strdup(module);
	if (!r->func_names[i] || !r->func_modules[i]) {
		free(r->func_names[i]);
		free(r->func_modules[i]);
		return -ENOMEM;
	}
	r->n_funcs++;
	for (size_t j = 0; j < i; j++)
		if (!strcmp(r->func_names[j], name)) {
			clash = true;
			if (func_rename(r, j, true))
				return -ENOMEM;
		}
	if (func_rename(r, i, clash))
		return -ENOMEM;
	*idx = (uint32_t)i;
	return 0;
}

static int add_call(struct report *r, const char *module, const char *func,
		    const struct rcall *c)
{
	struct rcall *slot;

	if (GROW(r->calls, r->n_calls, r->cap_calls, 4096))
		return -ENOMEM;
	slot = &r->calls[r->n_calls];
	*slot = *c;
	if (func_index(r, module, func, &slot->func))
		return -ENOMEM;
	r->n_calls++;
	return 0;
}

static void note_source(struct report *r, const char *path, const char *kind, size_t items)
{
	json_array_append_new(r->sources, json_pack("{s:s, s:s, s:I}", "path", path, "kind", kind,
						     "items", (json_int_t)items));
}

static int read_store(struct report *r, const char *path, char *err, size_t errlen)
{
	struct cmon_store *s = NULL;
	const struct cmon_function *fs;
	size_t nf, before = r->n_calls;
	char msg[256];

	if (cmon_store_open_ex(path, 0, &s, msg, sizeof(msg)))
		return fail(err, errlen, "%s", msg);
	if (cmon_store_functions(s, &fs, &nf))
		goto store_err;
	for (size_t f = 0; f < nf; f++) {
		struct cmon_iter *it = NULL;
		struct cmon_call *c;
		char name[512];
		int rc;

		/* MODULE:NAME always finds the function, ambiguous or not. */
		snprintf(name, sizeof(name), "%s%s%s", fs[f].module, *fs[f].module ? ":" : "",
			 fs[f].name);
		if (cmon_store_calls(s, name, 1, &it) && cmon_store_calls(s, fs[f].name, 1, &it))
			goto store_err;
		while ((rc = cmon_iter_next(it, &c)) == 1) {
			struct rcall rc_ = {
				.ts_ns = c->ts_ns, .latency_ns = c->latency_ns,
				.rss_entry = c->rss_entry, .rss_exit = c->rss_exit,
				.vms_entry = c->vms_entry, .vms_exit = c->vms_exit, .pid = c->pid,
			};
			int e = add_call(r, fs[f].module, fs[f].name, &rc_);

			cmon_call_free(c);
			if (e) {
				cmon_iter_free(it);
				cmon_store_close(s);
				return fail(err, errlen, "%s: out of memory", path);
			}
		}
		cmon_iter_free(it);
		if (rc < 0)
			goto store_err;
	}
	note_source(r, path, "store", r->n_calls - before);
	cmon_store_close(s);
	return 0;
store_err:
	fail(err, errlen, "%s", cmon_store_error(s));
	cmon_store_close(s);
	return -1;
}

/* Split one RFC 4180 record (LINE, no line end) into at most MAX fields, in
 * place: quotes removed, "" unescaped.  Returns the field count. */
static size_t csv_split(char *line, char **fields, size_t max)
{
	size_t n = 0;
	char *p = line, *w;

	while (n < max) {
		fields[n++] = w = p;
		if (*p == '"') {
			p++;
			for (;;) {
				if (!*p)
					break;
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*w++ = *p++;
				}
			}
			while (*p && *p != ',')
				p++;
		} else {
			while (*p && *p != ',')
				*w++ = *p++;
		}
		if (!*p) {
			*w = '\0';
			break;
		}
		*w = '\0';
		p++;
	}
	return n;
}

static uint64_t num_or_none(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return REPORT_NONE;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end ? REPORT_NONE : v;
}

/* Read one line of any length: NULL at the end. */
static char *read_line(FILE *f, char **buf, size_t *cap)
{
	ssize_t n = getline(buf, cap, f);

	if (n < 0)
		return NULL;
	while (n && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r'))
		(*buf)[--n] = '\0';
	return *buf;
}

static int column(char **hdr, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(hdr[i], name))
			return (int)i;
	return -1;
}


enum { P_FINAL, P_FUNC, P_PID, P_CALLS, P_RET, P_NORET, P_TOTAL, P_MEAN, P_P50, P_P90, P_P99,
       P_MAX, P_RSS, P_ELAPSED, P_REPORT, P_N };
static const char *const prof_cols[P_N] = { "final", "func", "pid", "calls", "returns",
					    "noreturn", "total_ns", "mean_ns", "p50_ns", "p90_ns",
					    "p99_ns", "max_ns", "rss_growth_bytes", "elapsed_s",
					    "report" };

/* PATH's version V is newer than this cmon reads: the one line. */
static int refuse_newer(const char *path, long long v, char *err, size_t errlen)
{
	char why[128];

	schema__refusal(why, sizeof(why), v);
	return fail(err, errlen, "%s: %s", path, why);
}

/* A column the report needs that the header (IDX) lacks: said. */
static int missing_column(const int *idx, const char *path, char *err, size_t errlen)
{
	for (int i = 0; i < P_N; i++)
		if (idx[i] < 0)
			return fail(err, errlen, "%s: no column %s", path, prof_cols[i]);
	return 0;
}

/* A profile CSV (`profile -F csv`: func names quoted, never a line end in
 * a cell). */
static int read_profile_csv(struct report *r, FILE *f, const char *path, char *err,
			    size_t errlen)
{
	char *buf = NULL, *hdr_line = NULL, *hdr[64], *fl[256];
	size_t cap = 0, nh, items = 0;
	int idx[P_N], rc = 0, mod, sc;

	if (!read_line(f, &buf, &cap) || !(hdr_line = strdup(buf))) {
		free(buf);
		return fail(err, errlen, "%s: cannot read the header", path);
	}
	nh = csv_split(hdr_line, hdr, 64);
	for (int i = 0; i < P_N; i++)
		idx[i] = column(hdr, nh, prof_cols[i]);
	mod = column(hdr, nh, "module"); /* optional: older files have none */
	sc = column(hdr, nh, "schema");  /* optional: files before versions */
	/* a row's version first: a newer file is refused as newer, not for
	 * the columns it lacks */
	while (read_line(f, &buf, &cap)) {
		size_t n = csv_split(buf, fl, 256);
		long long v;
		json_t *o;

		if (sc >= 0 && (size_t)sc < n && schema__check_text(fl[sc], &v) == -EPROTO) {
			rc = refuse_newer(path, v, err, errlen);
			goto out;
		}
		if (!items && (rc = missing_column(idx, path, err, errlen)))
			goto out;
		if (n < nh)
			continue; /* a line cut short (the profile was killed) */
		o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:b}",
			      "func", fl[idx[P_FUNC]],
			      "pid", (json_int_t)num_or_none(fl[idx[P_PID]]),
			      "calls", (json_int_t)num_or_none(fl[idx[P_CALLS]]),
			      "returns", (json_int_t)num_or_none(fl[idx[P_RET]]),
			      "noreturn", (json_int_t)num_or_none(fl[idx[P_NORET]]),
			      "total_ns", (json_int_t)num_or_none(fl[idx[P_TOTAL]]),
			      "mean_ns", (json_int_t)num_or_none(fl[idx[P_MEAN]]),
			      "p50_ns", (json_int_t)num_or_none(fl[idx[P_P50]]),
			      "p90_ns", (json_int_t)num_or_none(fl[idx[P_P90]]),
			      "p99_ns", (json_int_t)num_or_none(fl[idx[P_P99]]),
			      "max_ns", (json_int_t)num_or_none(fl[idx[P_MAX]]),
			      "elapsed_s", atof(fl[idx[P_ELAPSED]]),
			      "final", !strcmp(fl[idx[P_FINAL]], "1"));
		if (!o || json_object_set_new(o, "module", json_string(mod >= 0 ? fl[mod] : "")) ||
		    json_object_set_new(o, "rss_growth_bytes",
					json_integer((json_int_t)num_or_none(fl[idx[P_RSS]]))) ||
		    json_object_set_new(o, "report", json_integer(atoll(fl[idx[P_REPORT]]))) ||
		    json_array_append_new(r->profile_rows, o)) {
			rc = fail(err, errlen, "%s: out of memory", path);
			goto out;
		}
		items++;
	}
	if (!items && (rc = missing_column(idx, path, err, errlen)))
		goto out;
	note_source(r, path, "profile CSV", items);
out:
	free(buf);
	free(hdr_line);
	return rc;
}

static uint64_t jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v)
								 : REPORT_NONE;
}

#define NOT_OURS "not a store, a trace or profile CSV/JSON, or stats JSON"

/* A line of `profile -F json` ("report", "func") or of `trace -F json` (a
 * record: "ts_ns", "pid", "func", ...)?  Any other JSON object is not ours. */
static bool profile_line(json_t *o)
{
	return json_is_integer(json_object_get(o, "report")) &&
	       json_is_string(json_object_get(o, "func"));
}

static bool trace_line(json_t *o)
{
	return json_is_integer(json_object_get(o, "ts_ns")) &&
	       json_is_integer(json_object_get(o, "pid")) &&
	       json_is_string(json_object_get(o, "func"));
}

/* A call record O (a trace's JSON line, or a trace CSV's row read as
 * one) added: 0, -ENOMEM. */
static int add_record(struct report *r, json_t *o)
{
	json_t *fn = json_object_get(o, "func"), *mo = json_object_get(o, "module");
	struct rcall c = {
		.ts_ns = jnum(o, "ts_ns"), .latency_ns = jnum(o, "latency_ns"),
		.rss_entry = jnum(o, "rss_entry"), .rss_exit = jnum(o, "rss_exit"),
		.vms_entry = jnum(o, "vms_entry"), .vms_exit = jnum(o, "vms_exit"),
		.pid = (uint32_t)jnum(o, "pid"),
	};

	if (c.ts_ns == REPORT_NONE || !json_is_string(fn))
		return 0;
	return add_call(r, json_is_string(mo) ? json_string_value(mo) : "", json_string_value(fn),
			&c) ? -ENOMEM : 0;
}

/* A trace CSV (wide or long), read as trace's records by csv_trace: quoted
 * commas and line ends in cells, the long shape's rows of one call
 * together. */
static int read_trace_csv(struct report *r, FILE *f, const char *path, char *err,
			  size_t errlen)
{
	json_t **calls = NULL;
	size_t n = 0, row = 0;
	long long v;
	int rc = 0, e = csv_trace__read(f, true, &calls, &n, &row, &v);

	if (e == -EPROTO)
		return refuse_newer(path, v, err, errlen);
	if (e == -EINVAL && row == 1)
		return fail(err, errlen, "%s: not a trace CSV (its header needs ts_ns, tid and func)",
			    path);
	if (e == -EINVAL)
		return fail(err, errlen, "%s: record %zu is not a call", path, row);
	if (e)
		return fail(err, errlen, "%s: %s", path, strerror(-e));
	for (size_t i = 0; i < n; i++) {
		if (!rc && add_record(r, calls[i]))
			rc = fail(err, errlen, "%s: out of memory", path);
		json_decref(calls[i]);
	}
	free(calls);
	if (!rc)
		note_source(r, path, "trace CSV", n);
	return rc;
}

static int read_jsonl(struct report *r, FILE *f, const char *path, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t cap = 0, items = 0, lineno = 0;
	bool profile = false;
	int rc = 0;

	while (read_line(f, &buf, &cap)) {
		long long v;
		json_t *o;

		lineno++;
		if (!*buf)
			continue;
		o = json_loads(buf, 0, NULL);
		if (!json_is_object(o)) {
			json_decref(o);
			if (feof(f) && items)
				break; /* the last line, cut short */
			rc = items ? fail(err, errlen, "%s: line %zu is not a JSON object", path, lineno)
				   : fail(err, errlen, "%s: " NOT_OURS, path);
			break;
		}
		if (schema__check_json(o, &v) == -EPROTO) {
			json_decref(o);
			rc = refuse_newer(path, v, err, errlen);
			break;
		}
		if (profile_line(o)) {
			profile = true;
			json_array_append_new(r->profile_rows, o);
		} else if (trace_line(o)) {
			if (add_record(r, o))
				rc = fail(err, errlen, "%s: out of memory", path);
			json_decref(o);
		} else {
			json_decref(o);
			rc = items ? fail(err, errlen, "%s: line %zu is neither a trace record nor a "
					  "profile row (no ts_ns, pid and func, or report and func)",
					  path, lineno)
				   : fail(err, errlen, "%s: " NOT_OURS, path);
			break;
		}
		items++;
		if (rc)
			break;
	}
	if (!rc)
		note_source(r, path, profile ? "profile JSON" : "trace JSON", items);
	free(buf);
	return rc;
}

/* The file PATH reads (a store folder: its calls.db) was read before as
 * another source: its path then, else NULL. */
static const char *seen_before(const struct report *r, const struct stat *st)
{
	for (size_t i = 0; i < r->n_seen; i++)
		if (r->seen[i].dev == (uint64_t)st->st_dev && r->seen[i].ino == (uint64_t)st->st_ino)
			return r->seen[i].path;
	return NULL;
}

static int add_seen(struct report *r, const struct stat *st, const char *path)
{
	struct rseen *v;

	if (GROW(r->seen, r->n_seen, r->cap_seen, 8))
		return -ENOMEM;
	v = r->seen;
	v[r->n_seen].dev = (uint64_t)st->st_dev;
	v[r->n_seen].ino = (uint64_t)st->st_ino;
	if (!(v[r->n_seen].path = strdup(path)))
		return -ENOMEM;
	r->n_seen++;
	return 0;
}

static int read_source(struct report *r, const char *path, const struct stat *st, char *err,
		       size_t errlen);

static bool is_db(const char *path)
{
	size_t n = strlen(path);

	return n >= 8 && !strcmp(path + n - 8, "calls.db");
}

int report__add_source(struct report *r, const char *path, char *err, size_t errlen)
{
	struct stat st, id;
	const char *before;
	char *db = NULL;
	bool known;

	if (stat(path, &st))
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	/* A store is known by its calls.db: "run", "run/" and "run/calls.db"
	 * are one store (a folder without one: the store's error, below). */
	id = st;
	known = !S_ISDIR(st.st_mode) ||
		(asprintf(&db, "%s/calls.db", path) >= 0 && !stat(db, &id));
	free(db);
	if (known && (before = seen_before(r, &id))) {
		log_warn("report: %s is %s again (the same %s): counted once", path, before,
			 S_ISDIR(st.st_mode) || is_db(path) ? "store" : "file");
		return 0;
	}
	if (read_source(r, path, &st, err, errlen))
		return -1;
	if (known && add_seen(r, &id, path))
		return fail(err, errlen, "%s: out of memory", path);
	return 0;
}

static int read_source(struct report *r, const char *path, const struct stat *st, char *err,
		       size_t errlen)
{
	FILE *f;
	int c, rc;

	if (S_ISDIR(st->st_mode) || is_db(path))
		return read_store(r, path, err, errlen);
	f = fopen(path, "r");
	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	c = getc(f);
	ungetc(c, f);
	if (c == '{') {
		/* One document (stats) or JSON Lines. */
		json_error_t je;
		json_t *doc = json_loadf(f, JSON_DISABLE_EOF_CHECK | JSON_DECODE_INT_AS_REAL, &je);
		int next;

		while ((next = getc(f)) == ' ' || next == '\n' || next == '\r' || next == '\t')
			;
		if (json_is_object(doc) && next == EOF && json_object_get(doc, "values") &&
		    json_object_get(doc, "runs")) {
			json_array_append_new(r->stats, doc);
			note_source(r, path, "stats",
				    json_array_size(json_object_get(doc, "values")));
			fclose(f);
			return 0;
		}
		json_decref(doc);
		rewind(f);
		rc = read_jsonl(r, f, path, err, errlen);
	} else {
		char head[32] = "";
		size_t k = fread(head, 1, sizeof(head) - 1, f);
		const char *h;

		head[k] = '\0';
		rewind(f);
		h = !strncmp(head, "schema,", 7) ? head + 7 : head;

		if (!strncmp(h, "report,", 7))
			rc = read_profile_csv(r, f, path, err, errlen);
		else if (h != head || !strncmp(h, "ts_ns,", 6) || !strncmp(h, "call,ts_ns,", 11))
			rc = read_trace_csv(r, f, path, err, errlen);
		else
			rc = fail(err, errlen, "%s: " NOT_OURS, path);
	}
	fclose(f);
	return rc;
}
