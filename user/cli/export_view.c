// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export_view.c: a store's calls as call records for the views.  Chrome
 * takes them in any order, so they stream function by function.  Trees and
 * folded stacks need entry order per thread and the nesting, which the
 * store does not keep: the calls are loaded, sorted by thread and entry
 * time (longer first on a tie), and each call's depth is the number of
 * calls still running when it entered (intervals [ts, ts + latency)).  A
 * call that never returned has no end: it is shown as a leaf.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "cli/commands.h"
#include "output/csv_trace.h"
#include "cli/export_view.h"
#include "cli/store_cli.h"
#include "cli/view_filter.h"
#include "core/grow.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "output/render.h"
#include "output/schema.h"

/* A call as the writers see it: names and values point into C. */
struct record_of {
	struct call_record rec;
	struct call_typed typed;
	const char **names, **cells;
	struct strbuf captures; /* {"name":value,...} as trace's typed records */
	struct strbuf truncated, faults; /* the call's notes, as trace lists them */
};

static enum call_status status_of(const char *s)
{
	if (!strcmp(s, "ok"))
		return CALL_OK;
	if (!strcmp(s, "entry"))
		return CALL_ENTRY_ONLY;
	if (!strcmp(s, "tailcall"))
		return CALL_TAILCALL;
	if (!strcmp(s, "never-returns"))
		return CALL_NEVER_RETURNS;
	if (!strcmp(s, "usdt"))
		return CALL_USDT;
	if (!strcmp(s, "line"))
		return CALL_LINE;
	if (!strcmp(s, "exception"))
		return CALL_RAISED;
	if (!strcmp(s, "yield"))
		return CALL_YIELD;
	return CALL_NORETURN;
}

/* F's --capture values of C as trace gives them ("captures"): an object
 * by capture name, in F's order, each value as the export tables have it
 * (a :str capture a string, an array of numbers, bytes as hex), null when
 * the call has none (a NULL pointer, a capture lost). */
static int captures_of(struct strbuf *sb, const struct cmon_call *c,
		       const struct cmon_function *f)
{
	int err = strbuf__putc(sb, '{');

	for (size_t i = 0; i < f->n_captures && !err; i++) {
		const struct cmon_blob *b;
		bool cut;

		if (i)
			err = strbuf__putc(sb, ',');
		if (!err)
			err = json_escape(sb, f->captures[i].name);
		if (!err)
			err = strbuf__putc(sb, ':');
		if (err)
			break;
		if (cmon_call_blob(c, f->captures[i].name, &b))
			err = strbuf__puts(sb, "null");
		else
			err = store_cli__blob_json(b, f->captures[i].kind, 0, sb, &cut);
	}
	return err ? err : strbuf__putc(sb, '}');
}

static int record_of(struct record_of *r, const struct cmon_call *c,
		     const struct cmon_function *f, int depth)
{
	struct call_record *rec = &r->rec;

	r->names = malloc((c->n_args + 1) * sizeof(*r->names));
	r->cells = malloc((c->n_args + 1) * sizeof(*r->cells));
	if (!r->names || !r->cells)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_args; i++) {
		r->names[i] = c->args[i].name;
		r->cells[i] = c->args[i].value ? c->args[i].value : "null";
	}
	memset(&r->typed, 0, sizeof(r->typed));
	r->typed.args = c->args_json;
	r->typed.retval = c->ret ? c->ret : "null";
	r->typed.names = r->names;
	r->typed.cells = r->cells;
	r->typed.n_cells = c->n_args;
	if (f && f->n_captures) {
		int err = captures_of(&r->captures, c, f);

		if (err)
			return err;
		r->typed.captures = r->captures.buf;
	}
	/* which values were cut or unreadable: the views mark them */
	if (c->notes_json) {
		int err = store_cli__notes(c->notes_json, &r->truncated, &r->faults);

		if (err)
			return err;
		r->typed.truncated = r->truncated.len ? r->truncated.buf : NULL;
		r->typed.faults = r->faults.len ? r->faults.buf : NULL;
	}
	memset(rec, 0, sizeof(*rec));
	rec->ts_ns = c->ts_ns;
	rec->pid = c->pid;
	rec->tid = c->tid;
	rec->comm = c->comm;
	rec->cgroup = NULL;
	rec->func = c->func;
	rec->module = c->module;
	rec->depth = depth;
	rec->status = status_of(c->status);
	rec->latency_ns = c->latency_ns == CMON_NONE ? 0 : c->latency_ns;
	rec->rss_entry = c->rss_entry == CMON_NONE ? 0 : c->rss_entry;
	rec->vms_entry = c->vms_entry == CMON_NONE ? 0 : c->vms_entry;
	rec->rss_exit = c->rss_exit == CMON_NONE ? 0 : c->rss_exit;
	rec->vms_exit = c->vms_exit == CMON_NONE ? 0 : c->vms_exit;
	rec->typed = &r->typed;
	return 0;
}

static void record_of__release(struct record_of *r)
{
	free(r->names);
	free(r->cells);
	r->names = r->cells = NULL;
	strbuf__release(&r->captures);
	strbuf__release(&r->truncated);
	strbuf__release(&r->faults);
}

static int write_call(struct writer *w, const struct cmon_call *c,
		      const struct cmon_function *f, int depth)
{
	struct record_of r = {};
	int err = record_of(&r, c, f, depth);

	if (!err)
		err = writer__write(w, &r.rec);
	record_of__release(&r);
	return err;
}

static uint64_t end_of(const struct cmon_call *c)
{
	return c->latency_ns == CMON_NONE ? c->ts_ns : c->ts_ns + c->latency_ns;
}

/* A loaded call and the function it is a call of. */
struct held {
	struct cmon_call *c;
	const struct cmon_function *f;
};

static int by_thread_entry(const void *a, const void *b)
{
	const struct cmon_call *x = ((const struct held *)a)->c;
	const struct cmon_call *y = ((const struct held *)b)->c;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	if (end_of(x) != end_of(y))
		return end_of(x) > end_of(y) ? -1 : 1;
	return 0;
}

/* Calls in entry order per thread, each with the count of calls it is in. */
static int write_nested(struct writer *w, struct held *all, size_t n)
{
	const struct cmon_call **open = malloc((n ? n : 1) * sizeof(*open));
	size_t depth = 0;
	int err = 0;

	if (!open)
		return -ENOMEM;
	if (n > 1)
		qsort(all, n, sizeof(*all), by_thread_entry);
	for (size_t i = 0; i < n && !err; i++) {
		if (i && all[i].c->tid != all[i - 1].c->tid)
			depth = 0;
		while (depth && end_of(open[depth - 1]) <= all[i].c->ts_ns)
			depth--;
		err = write_call(w, all[i].c, all[i].f, (int)depth);
		open[depth++] = all[i].c;
	}
	free(open);
	return err;
}

/* Store call C as an --if sees it: its typed arguments, return, latency
 * (ARGS and RET to json_decref). */
static void store_call_values(const struct cmon_call *c, struct expr_call *v)
{
	memset(v, 0, sizeof(*v));
	v->args = c->args_json ? json_loads(c->args_json, 0, NULL) : NULL;
	v->ret = c->ret && strcmp(c->ret_type, "void") ? json_loads(c->ret, JSON_DECODE_ANY, NULL) :
							  NULL;
	v->has_latency = c->latency_ns != CMON_NONE;
	v->latency_ns = v->has_latency ? c->latency_ns : 0;
}

static bool store_call_kept(const struct view_filter *vf, const struct cmon_call *c,
			    uint64_t first)
{
	struct expr_call v;
	bool keep;

	if (!vf || !view_filter__active(vf))
		return true;
	if (!view_filter__keep(vf, c->func, c->module, c->ts_ns, first, NULL))
		return false;
	if (!vf->cond)
		return true;
	store_call_values(c, &v);
	keep = view_filter__keep(vf, c->func, c->module, c->ts_ns, first, &v);
	json_decref(v.args);
	json_decref(v.ret);
	return keep;
}

/* The entry time of S's first call, for a range relative to it: 0 or 1
 * (the store's error). */
static int store_first_ts(struct cmon_store *s, const struct cmon_function *fs, size_t nf,
			  uint64_t *first)
{
	*first = UINT64_MAX;
	for (size_t f = 0; f < nf; f++) {
		struct cmon_iter *it = NULL;
		struct cmon_call *c;
		char *name = store_cli__lookup_name(fs, nf, f);
		int r;

		if (!name)
			return -ENOMEM;
		r = cmon_store_calls(s, name, 1, &it);
		free(name);
		if (r)
			return 1;
		while ((r = cmon_iter_next(it, &c)) == 1) {
			if (c->ts_ns < *first)
				*first = c->ts_ns;
			cmon_call_free(c);
		}
		cmon_iter_free(it);
		if (r < 0)
			return 1;
	}
	if (*first == UINT64_MAX)
		*first = 0;
	return 0;
}

int export_view(struct cmon_store *s, enum out_format fmt, FILE *out, uint64_t *calls,
		const struct view_filter *vf)
{
	uint64_t first = 0;
	const struct cmon_function *fs;
	struct held *all = NULL;
	struct cmon_call *c = NULL;
	struct writer *w = writer__new(fmt, out);
	size_t nf, n = 0, cap = 0;
	int err = 0;

	*calls = 0;
	if (!w)
		return -errno;
	writer__set_replay(w);
	if (cmon_store_functions(s, &fs, &nf)) {
		err = 1;
		goto out;
	}
	if (vf && view_filter__needs_first(vf))
		err = store_first_ts(s, fs, nf, &first);
	for (size_t f = 0; f < nf && !err; f++) {
		struct cmon_iter *it = NULL;
		char *name = store_cli__lookup_name(fs, nf, f);
		int r = 0;

		if (!name) {
			err = -ENOMEM;
			break;
		}
		if (cmon_store_calls(s, name, 1, &it))
			err = 1;
		free(name);
		while (!err && (r = cmon_iter_next(it, &c)) == 1) {
			if (!store_call_kept(vf, c, first)) {
				cmon_call_free(c);
				continue;
			}
			(*calls)++;
			if (fmt == OUT_CHROME) {
				err = write_call(w, c, &fs[f], 0);
				cmon_call_free(c);
				continue;
			}
			if (GROW(all, n, cap, 1024)) {
				cmon_call_free(c);
				err = -ENOMEM;
				break;
			}
			all[n].c = c;
			all[n++].f = &fs[f];
		}
		if (!err && r < 0)
			err = 1;
		cmon_iter_free(it);
	}
	if (!err && fmt != OUT_CHROME)
		err = write_nested(w, all, n);
	if (!err)
		err = writer__finish(w);
out:
	for (size_t i = 0; i < n; i++)
		cmon_call_free(all[i].c);
	free(all);
	writer__free(w);
	return err;
}

/* ---------------------------------------------------------------- a table
 * `export -F csv`: a function's calls as `trace -F csv -o 'x.%f.csv'`
 * writes them, through the same writer: the columns are the leaves of the
 * values (a struct's members their own, "args.o.in.x"; a --capture
 * "captures.NAME"), found over every call (the store keeps JSON, not the
 * DWARF layout), and each cell native as trace writes it. */

struct leaves {
	struct render_cols *cols;
	size_t cap;
	struct render_leaf *v; /* a call's */
	size_t n, vcap;
	struct strbuf text;    /* the leaves' JSON text, one after another */
};

/* NAME's column; ADD: made when there is none (else -ENOENT). */
static int column_of(struct leaves *L, const char *name, bool add, uint32_t *at)
{
	struct render_cols *c = L->cols;
	size_t cap_paths = L->cap; /* paths beside names: the same capacity */

	for (size_t i = 0; i < c->n; i++) {
		if (!strcmp(c->names[i], name)) {
			*at = (uint32_t)i;
			return 0;
		}
	}
	if (!add)
		return -ENOENT;
	if (GROW(c->paths, c->n, cap_paths, 16) || GROW(c->names, c->n, L->cap, 16))
		return -ENOMEM;
	c->names[c->n] = strdup(name);
	c->paths[c->n] = strdup(name);
	if (!c->names[c->n] || !c->paths[c->n]) {
		free(c->names[c->n]);
		free(c->paths[c->n]);
		return -ENOMEM;
	}
	*at = (uint32_t)c->n++;
	return 0;
}

/* One leaf NAME of JSON text T: its column (made unless ROW), its text
 * (when ROW). */
static int add_leaf(struct leaves *L, const char *name, const char *t, bool row)
{
	uint32_t at;
	size_t off = L->text.len;
	int err;

	/* a null where other calls have an object: their columns, empty */
	if (!strcmp(t, "null") && !row) {
		size_t n = strlen(name);

		for (size_t i = 0; i < L->cols->n; i++)
			if (!strncmp(L->cols->names[i], name, n) && L->cols->names[i][n] == '.')
				return 0;
	}
	err = column_of(L, name, !row, &at);
	if (err == -ENOENT)
		return 0;
	if (err || !row || !strcmp(t, "null"))
		return err;
	if (GROW(L->v, L->n, L->vcap, 16))
		return -ENOMEM;
	err = strbuf__puts(&L->text, t);
	if (err)
		return err;
	L->v[L->n].col = at;
	L->v[L->n].len = (uint32_t)(L->text.len - off);
	L->v[L->n].text = (const char *)(uintptr_t)off; /* made a pointer at the end */
	L->v[L->n].kind = csv__kind_of(L->text.buf + off, L->text.len - off);
	L->n++;
	return 0;
}

/* JSON text T's leaves under NAME: an object's members by NAME.member,
 * anything else one leaf (an object jansson cannot read, a 64-bit
 * unsigned inside, too). */
static int add_leaves(struct leaves *L, const char *name, const char *t, bool row)
{
	json_t *v = t[0] == '{' && t[1] != '}' ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
	const char *k;
	json_t *m;
	int err = 0;

	if (!json_is_object(v)) {
		json_decref(v);
		return add_leaf(L, name, t, row);
	}
	json_object_foreach(v, k, m) {
		char *sub = NULL, *mt = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER |
						       JSON_ENCODE_ANY);

		if (!mt || asprintf(&sub, "%s.%s", name, k) < 0)
			err = -ENOMEM;
		else
			err = add_leaves(L, sub, mt, row);
		free(sub);
		free(mt);
		if (err)
			break;
	}
	json_decref(v);
	return err;
}

/* F's values are the registers, arg0..arg5: untyped, with its signature
 * (one without takes its calls' names, as leaves). */
static bool raw_of(const struct cmon_function *f)
{
	return !f->typed && f->n_params;
}

/* Call C's leaves (ROW: with their text; else only the columns). */
static int call_leaves(struct leaves *L, const struct cmon_call *c,
		       const struct cmon_function *f, bool row)
{
	int err = 0;

	L->n = 0;
	strbuf__reset(&L->text);
	for (size_t i = 0; i < c->n_args && !err && !raw_of(f); i++) {
		char *name;

		if (asprintf(&name, "args.%s", c->args[i].name) < 0)
			return -ENOMEM;
		err = add_leaves(L, name, c->args[i].value ? c->args[i].value : "null", row);
		free(name);
	}
	for (size_t i = 0; i < f->n_captures && !err; i++) {
		const struct cmon_blob *b;
		struct strbuf sb = {};
		char *name;
		bool cut;

		if (asprintf(&name, "captures.%s", f->captures[i].name) < 0)
			return -ENOMEM;
		if (cmon_call_blob(c, f->captures[i].name, &b) ||
		    store_cli__blob_json(b, f->captures[i].kind, 0, &sb, &cut))
			err = add_leaf(L, name, "null", row);
		else {
			/* compact, as trace writes a value ("[1,2]") */
			json_t *v = json_loads(sb.buf, JSON_DECODE_ANY, NULL);
			char *t = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

			err = add_leaf(L, name, t ? t : sb.buf, row);
			free(t);
			json_decref(v);
		}
		strbuf__release(&sb);
		free(name);
	}
	if (!err && !raw_of(f) && c->ret && strcmp(c->ret_type, "void"))
		err = add_leaves(L, "ret", c->ret, row);
	for (size_t i = 0; i < L->n; i++) /* the text buffer no longer moves */
		L->v[i].text = L->text.buf + (uintptr_t)L->v[i].text;
	return err;
}

/* An untyped function's stored arg0..arg5 and return register. */
static void raw_registers(struct call_record *rec, const struct cmon_call *c)
{
	for (size_t k = 0; k < c->n_args; k++) {
		const char *name = c->args[k].name, *v = c->args[k].value;

		if (v && !strncmp(name, "arg", 3) && name[3] >= '0' && name[3] <= '5' && !name[4])
			rec->args[name[3] - '0'] = v[0] == '-' ? strtoll(v, NULL, 10)
							  : (int64_t)strtoull(v, NULL, 10);
	}
	if (c->ret)
		rec->ret = c->ret[0] == '-' ? strtoll(c->ret, NULL, 10)
					    : (int64_t)strtoull(c->ret, NULL, 10);
}

int export_view__first_ts(struct cmon_store *s, const struct view_filter *vf, uint64_t *first)
{
	const struct cmon_function *fs;
	size_t nf;

	*first = 0;
	if (!vf || !view_filter__needs_first(vf))
		return 0;
	return cmon_store_functions(s, &fs, &nf) ? 1 : store_first_ts(s, fs, nf, first);
}

int export_view__table(struct cmon_store *s, const struct cmon_function *fs, size_t nf,
		       size_t i, enum out_format fmt, FILE *out, const struct view_filter *vf,
		       uint64_t first, const char *(*cgroup_of)(void *, uint32_t), void *ctx,
		       uint64_t *calls)
{
	struct leaves L = {};
	struct cmon_iter *it = NULL;
	struct cmon_call *c = NULL;
	struct writer *w = writer__new(fmt, out);
	char *key = store_cli__lookup_name(fs, nf, i);
	const struct render_cols *funcs[1];
	bool notes_known;
	struct csv_schema schema = { .funcs = funcs, .n_funcs = 1, .only = UINT32_MAX,
				     .extras = CSV_NOTES | CSV_CALL | (cgroup_of ? CSV_CGROUP : 0),
				     .shape = CSV_WIDE };
	int err = 0, r;

	*calls = 0;
	L.cols = calloc(1, sizeof(*L.cols));
	if (!w || !key || !L.cols) {
		err = -ENOMEM;
		goto out;
	}
	L.cols->typed = !raw_of(&fs[i]); /* else the registers, arg0..arg5 */
	notes_known = cmon_store_has_notes(s);
	/* CSV's columns: over every call (JSON names its values in each line) */
	for (int pass = fmt == OUT_CSV ? 0 : 1; pass < 2 && !err; pass++) {
		if (cmon_store_calls(s, key, 1, &it)) {
			err = 1;
			break;
		}
		if (pass == 1 && fmt == OUT_CSV) {
			funcs[0] = L.cols;
			err = writer__set_schema(w, &schema);
		}
		while (!err && (r = cmon_iter_next(it, &c)) == 1) {
			struct record_of rec = {};

			if (!store_call_kept(vf, c, first)) {
				cmon_call_free(c);
				c = NULL;
				continue;
			}
			if (fmt == OUT_CSV)
				err = call_leaves(&L, c, &fs[i], pass == 1);
			if (!err && pass == 1) {
				err = record_of(&rec, c, &fs[i], -1);
				rec.rec.cgroup = cgroup_of ? cgroup_of(ctx, c->pid) : NULL;
				rec.typed.cols = L.cols;
				rec.typed.leaves = L.v;
				rec.typed.n_leaves = L.n;
				rec.typed.returns_void = !strcmp(c->ret_type, "void");
				rec.rec.call_no = c->n;
				/* a store written before notes: unknown, not none */
				if (!notes_known)
					rec.typed.truncated = rec.typed.faults = "null";
				/* typed: the store keeps the values, not the registers */
				rec.rec.no_regs = !raw_of(&fs[i]);
				if (raw_of(&fs[i]))
					raw_registers(&rec.rec, c);
				if (raw_of(&fs[i]) && fmt == OUT_JSON && fs[i].n_captures) {
					/* as trace writes a raw call with captures */
					rec.typed.args = "{}";
					rec.typed.retval = "null";
					rec.typed.n_cells = 0;
				} else if (raw_of(&fs[i]) && fmt == OUT_JSON) {
					rec.rec.typed = NULL; /* as trace writes a raw call */
				}
				if (c->latency_ns == CMON_NONE && rec.rec.status == CALL_OK)
					rec.rec.status = CALL_NORETURN;
				if (!err)
					err = writer__write(w, &rec.rec);
				(*calls)++;
			}
			record_of__release(&rec);
			cmon_call_free(c);
			c = NULL;
		}
		if (!err && r < 0)
			err = 1;
		cmon_iter_free(it);
		it = NULL;
	}
	if (!err)
		err = writer__finish(w);
out:
	writer__free(w);
	free(key);
	free(L.v);
	strbuf__release(&L.text);
	render_cols__free(L.cols);
	return err;
}

/* ---------------------------------------------------------------- a trace
 * A trace written as JSON Lines (`cmon trace -F json -o t.jsonl`) through
 * the same views: each line read back into a call record, the nesting
 * found as for a store's calls. */

struct line_call {
	struct call_record rec;
	struct call_typed typed;
	json_t *j;                 /* the line; names and strings point into it */
	char *args, *retval;       /* JSON text */
	char *truncated, *faults;
	char *captures, *at_return, *changed; /* JSON text; NULL: none */
	const char **names;
	char **cells;
	size_t n_cells;
	uint64_t end;
};

static void line_call__release(struct line_call *c)
{
	for (size_t i = 0; i < c->n_cells; i++)
		free(c->cells[i]);
	free(c->cells);
	free(c->names);
	free(c->args);
	free(c->retval);
	free(c->truncated);
	free(c->faults);
	free(c->captures);
	free(c->at_return);
	free(c->changed);
	json_decref(c->j);
}

/* KEY of J, when it is an object (or a list of paths: LIST) with
 * something in it, as compact JSON text (*OUT; NULL: none).  0, -ENOMEM. */
static int json_part(json_t *j, const char *key, bool list, char **out)
{
	json_t *v = json_object_get(j, key);

	*out = NULL;
	if (list ? !json_array_size(v) : !json_is_object(v))
		return 0;
	*out = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	return *out ? 0 : -ENOMEM;
}

/* KEY of O is null or not there. */
static bool json_none(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return !v || json_is_null(v);
}

static uint64_t u64_of(json_t *o, const char *key, uint64_t none)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : none;
}

static const char *str_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* J (a record as a JSON line has it; C keeps it) into C: 0, or -EINVAL
 * when it is not a record of cmon's (no func, ts_ns, tid), -ENOMEM. */
static int line_call__take(struct line_call *c, json_t *j)
{
	json_t *args, *v;
	const char *k;
	size_t i = 0;

	memset(c, 0, sizeof(*c));
	c->j = j;
	if (!json_is_object(c->j) || !json_is_string(json_object_get(c->j, "func")) ||
	    !json_is_integer(json_object_get(c->j, "ts_ns")) ||
	    !json_is_integer(json_object_get(c->j, "tid")))
		return -EINVAL;
	c->rec.ts_ns = u64_of(c->j, "ts_ns", 0);
	c->rec.pid = (uint32_t)u64_of(c->j, "pid", 0);
	c->rec.tid = (uint32_t)u64_of(c->j, "tid", 0);
	c->rec.comm = str_of(c->j, "comm");
	c->rec.func = str_of(c->j, "func");
	c->rec.module = str_of(c->j, "module");
	c->rec.status = status_of(str_of(c->j, "status"));
	c->rec.depth = json_is_integer(json_object_get(c->j, "depth")) ?
			       (int)json_integer_value(json_object_get(c->j, "depth")) : -1;
	c->rec.cgroup = json_string_value(json_object_get(c->j, "cgroup"));
	c->rec.latency_lt_ns = u64_of(c->j, "latency_lt_ns", 0);
	c->rec.ret = (int64_t)u64_of(c->j, "ret", 0);
	c->rec.latency_ns = u64_of(c->j, "latency_ns", 0);
	c->rec.rss_entry = u64_of(c->j, "rss_entry", 0);
	c->rec.rss_exit = u64_of(c->j, "rss_exit", 0);
	c->rec.vms_entry = u64_of(c->j, "vms_entry", 0);
	c->rec.vms_exit = u64_of(c->j, "vms_exit", 0);
	c->end = json_is_integer(json_object_get(c->j, "latency_ns")) ?
			 c->rec.ts_ns + c->rec.latency_ns : c->rec.ts_ns;
	for (int r = 0; r < 6; r++) {
		char key[16]; /* "arg" and an int: room for any, as the compiler checks */

		snprintf(key, sizeof(key), "arg%d", r);
		c->rec.args[r] = (int64_t)u64_of(c->j, key, 0);
	}
	args = json_object_get(c->j, "args");
	if (!json_is_object(args))
		return 0; /* raw: the registers */
	/* typed, from a file without the registers (a CSV, a store's export) */
	c->rec.no_regs = !json_is_integer(json_object_get(c->j, "arg0"));
	c->n_cells = json_object_size(args);
	c->names = calloc(c->n_cells + 1, sizeof(*c->names));
	c->cells = calloc(c->n_cells + 1, sizeof(*c->cells));
	c->args = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	v = json_object_get(c->j, "retval");
	c->retval = json_dumps(v ? v : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
	if (!c->names || !c->cells || !c->args || !c->retval)
		return -ENOMEM;
	json_object_foreach(args, k, v) {
		c->names[i] = k;
		c->cells[i] = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
		if (!c->cells[i++])
			return -ENOMEM;
	}
	if (json_part(c->j, "truncated", true, &c->truncated) ||
	    json_part(c->j, "faults", true, &c->faults) ||
	    json_part(c->j, "captures", false, &c->captures) ||
	    json_part(c->j, "at_return", false, &c->at_return) ||
	    json_part(c->j, "changed", false, &c->changed))
		return -ENOMEM;
	c->typed.args = c->args;
	c->typed.retval = c->retval;
	c->typed.names = c->names;
	c->typed.cells = (const char *const *)c->cells;
	c->typed.n_cells = c->n_cells;
	c->typed.truncated = c->truncated;
	c->typed.faults = c->faults;
	c->typed.captures = c->captures;
	c->typed.at_return = c->at_return;
	c->typed.changed = c->changed;
	/* void: no return value (a NULL pointer's return has its register) */
	c->typed.returns_void = json_none(c->j, "retval") && json_none(c->j, "ret");
	return 0; /* rec.typed set where the call stays (the array grows and is sorted) */
}

static int by_thread_entry_line(const void *a, const void *b)
{
	const struct line_call *x = a, *y = b;

	if (x->rec.tid != y->rec.tid)
		return x->rec.tid < y->rec.tid ? -1 : 1;
	if (x->rec.ts_ns != y->rec.ts_ns)
		return x->rec.ts_ns < y->rec.ts_ns ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return 0;
}

/* The calls of ALL (N) that VF keeps, first in ALL, the others released:
 * how many. */
static size_t lines_kept(struct line_call *all, size_t n, const struct view_filter *vf)
{
	uint64_t first = UINT64_MAX;
	size_t kept = 0;

	for (size_t i = 0; i < n; i++)
		if (all[i].rec.ts_ns < first)
			first = all[i].rec.ts_ns;
	for (size_t i = 0; i < n; i++) {
		struct line_call *c = &all[i];
		json_t *args = json_object_get(c->j, "args");
		json_t *ret = json_object_get(c->j, "retval");
		struct expr_call v = {
			.args = json_is_object(args) ? args : NULL,
			.regs = json_is_object(args) ? NULL : c->rec.args,
			.ret = ret ? ret : json_object_get(c->j, "ret"),
			.has_latency = json_is_integer(json_object_get(c->j, "latency_ns")),
			.latency_ns = c->rec.latency_ns,
		};

		if (json_is_null(v.ret))
			v.ret = NULL;
		if (view_filter__keep(vf, c->rec.func, c->rec.module, c->rec.ts_ns, first, &v)) {
			if (kept != i)
				all[kept] = *c;
			kept++;
		} else {
			line_call__release(c);
		}
	}
	return kept;
}

/* Where reading a trace file stopped: the line (JSON) or CSV record that
 * is not a call, the file's version when it is newer. */
struct trace_pos {
	size_t line_no;
	long long schema;
};

/* The trace IN's calls into *ALL (*N, *CAP): JSON Lines, or a CSV (CSV).
 * 0, -EINVAL (AT->line_no the line or CSV record that is not a call),
 * -EPROTO (a newer schema: AT->schema) or -errno. */
static int read_trace(FILE *in, bool csv, struct line_call **all, size_t *n, size_t *cap,
		      struct trace_pos *at)
{
	json_t **objs = NULL;
	size_t n_objs = 0, len = 0;
	char *line = NULL;
	int err = 0;

	if (csv) {
		err = csv_trace__read(in, false, &objs, &n_objs, &at->line_no, &at->schema);
		for (size_t i = 0; i < n_objs; i++) {
			if (!err && GROW(*all, *n, *cap, 1024))
				err = -ENOMEM;
			if (err) {
				json_decref(objs[i]);
				continue;
			}
			err = line_call__take(&(*all)[(*n)++], objs[i]);
			if (err == -EINVAL) /* csv_trace gives only calls */
				at->line_no = i + 2;
		}
		free(objs);
		return err;
	}
	while (!err && getline(&line, &len, in) > 0) {
		json_t *j = json_loads(line, JSON_ALLOW_NUL, NULL);

		++at->line_no;
		err = schema__check_json(j, &at->schema);
		if (!err && GROW(*all, *n, *cap, 1024))
			err = -ENOMEM;
		if (err) {
			json_decref(j);
			break;
		}
		err = line_call__take(&(*all)[(*n)++], j);
	}
	if (!err && ferror(in))
		err = -EIO;
	free(line);
	return err;
}

static int view_trace(FILE *in, bool csv, enum out_format fmt, FILE *out, uint64_t *calls,
		      struct trace_pos *at, const struct view_filter *vf)
{
	struct line_call *all = NULL;
	const struct line_call **open_calls = NULL;
	struct writer *w = writer__new(fmt, out);
	size_t n = 0, cap = 0, depth = 0;
	int err = 0;

	*calls = 0;
	if (!w)
		return -errno;
	writer__set_replay(w);
	err = read_trace(in, csv, &all, &n, &cap, at);
	if (!err && vf && view_filter__active(vf))
		n = lines_kept(all, n, vf);
	if (!err && n > 1)
		qsort(all, n, sizeof(*all), by_thread_entry_line);
	if (!err && !(open_calls = malloc((n ? n : 1) * sizeof(*open_calls))))
		err = -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		if (i && all[i].rec.tid != all[i - 1].rec.tid)
			depth = 0;
		while (depth && open_calls[depth - 1]->end <= all[i].rec.ts_ns)
			depth--;
		all[i].rec.depth = (int)depth;
		all[i].rec.typed = all[i].args ? &all[i].typed : NULL;
		err = writer__write(w, &all[i].rec);
		open_calls[depth++] = &all[i];
		++*calls;
	}
	if (!err)
		err = writer__finish(w);
	for (size_t i = 0; i < n; i++)
		line_call__release(&all[i]);
	free(all);
	free(open_calls);
	writer__free(w);
	return err;
}

/* RUN is named as a CSV file: read as one, so a foreign CSV is said to be
 * one (not "not a cmon store"). */
static bool csv_named(const char *run)
{
	size_t n = strlen(run);

	return n > 4 && !strcasecmp(run + n - 4, ".csv");
}

FILE *export_view__trace_file(const char *run, bool *csv)
{
	FILE *in = fopen(run, "r");
	size_t got = 0;
	char head[16];

	*csv = false;
	if (in && (got = fread(head, 1, sizeof(head), in)) > 0 && head[0] == '{') {
		rewind(in); /* a trace's JSON Lines, not a store */
		return in;
	}
	if (in && (csv_trace__is_header(head, got) || csv_named(run)) &&
	    !(got >= 16 && !memcmp(head, "SQLite format 3", 16))) {
		rewind(in); /* a trace CSV */
		*csv = true;
		return in;
	}
	if (in)
		fclose(in);
	return NULL;
}

/* Reading trace file RUN failed with ERR (read_trace's) at AT: said in one
 * line when it is the file's fault (true), else left to the caller. */
static bool trace_error_said(const char *run, bool csv, int err, const struct trace_pos *at)
{
	char why[128];

	if (err == -EPROTO) {
		schema__refusal(why, sizeof(why), at->schema);
		log_error("export: %s: %s", run, why);
	} else if (err == -EINVAL && csv && at->line_no == 1) {
		log_error("export: %s: not a trace CSV of `cmon trace -F csv` (its header "
			  "needs ts_ns, tid and func)", run);
	} else if (err == -EINVAL && csv) {
		log_error("export: %s: record %zu is not a call of `cmon trace -F csv`", run,
			  at->line_no);
	} else if (err == -EINVAL) {
		log_error("export: %s: line %zu is not a call of `cmon trace -F json`", run,
			  at->line_no);
	} else {
		return false;
	}
	return true;
}

/* Call C's leaves (ROW: with their text; else only the columns), as
 * call_leaves has a store's. */
static int line_leaves(struct leaves *L, const struct line_call *c, bool row)
{
	json_t *caps = json_object_get(c->j, "captures"), *v;
	const char *k;
	int err = 0;

	L->n = 0;
	strbuf__reset(&L->text);
	for (size_t i = 0; i < c->n_cells && !err; i++) {
		char *name;

		if (asprintf(&name, "args.%s", c->names[i]) < 0)
			return -ENOMEM;
		err = add_leaves(L, name, c->cells[i], row);
		free(name);
	}
	json_object_foreach(caps, k, v) {
		char *name = NULL, *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		if (!t || asprintf(&name, "captures.%s", k) < 0)
			err = -ENOMEM;
		if (!err)
			err = add_leaf(L, name, t, row);
		free(name);
		free(t);
		if (err)
			break;
	}
	if (!err && c->args && !c->typed.returns_void)
		err = add_leaves(L, "ret", c->retval, row);
	for (size_t i = 0; i < L->n; i++) /* the text buffer no longer moves */
		L->v[i].text = L->text.buf + (uintptr_t)L->v[i].text;
	return err;
}

static bool same_func(const struct line_call *a, const struct line_call *b)
{
	return !strcmp(a->rec.func, b->rec.func) && !strcmp(a->rec.module, b->rec.module);
}

/* The calls of ALL (N) that are F's, as `trace -F FMT -o 'x.%f.csv'` writes
 * them, to OUT. */
static int trace_table(const struct line_call *all, size_t n, const struct line_call *f,
		       enum out_format fmt, FILE *out)
{
	struct leaves L = { .cols = calloc(1, sizeof(*L.cols)) };
	struct writer *w = writer__new(fmt, out);
	const struct render_cols *funcs[1];
	struct csv_schema schema = { .funcs = funcs, .n_funcs = 1, .only = UINT32_MAX,
				     .extras = CSV_NOTES, .shape = CSV_WIDE };
	int err = w && L.cols ? 0 : -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		if (!same_func(&all[i], f))
			continue;
		if (L.cols && all[i].args)
			L.cols->typed = true; /* else the registers, arg0..arg5 */
		schema.extras |= (all[i].rec.cgroup ? CSV_CGROUP : 0) |
				 (all[i].at_return ? CSV_AT_RETURN : 0);
	}
	/* CSV's columns: over every call (JSON names its values in each line) */
	for (int pass = fmt == OUT_CSV ? 0 : 1; pass < 2 && !err; pass++) {
		if (pass == 1 && fmt == OUT_CSV) {
			funcs[0] = L.cols;
			err = writer__set_schema(w, &schema);
		}
		for (size_t i = 0; i < n && !err; i++) {
			struct call_record rec = all[i].rec;
			struct call_typed typed = all[i].typed;

			if (!same_func(&all[i], f))
				continue;
			if (fmt == OUT_CSV)
				err = line_leaves(&L, &all[i], pass == 1);
			if (err || pass == 0)
				continue;
			typed.cols = L.cols;
			typed.leaves = L.v;
			typed.n_leaves = L.n;
			rec.typed = all[i].args ? &typed : NULL;
			err = writer__write(w, &rec);
		}
	}
	if (!err)
		err = writer__finish(w);
	writer__free(w);
	free(L.v);
	strbuf__release(&L.text);
	render_cols__free(L.cols);
	return err;
}

int export_view__trace_tables(FILE *in, bool csv, const char *run, enum out_format fmt,
			      const struct view_filter *vf, const struct export_tables *t,
			      uint64_t *calls)
{
	struct trace_pos at = { 0, CMON_SCHEMA };
	struct line_call *all = NULL;
	size_t n = 0, cap = 0;
	int err;

	*calls = 0;
	err = read_trace(in, csv, &all, &n, &cap, &at);
	if (err && trace_error_said(run, csv, err, &at))
		err = EXPORT_SAID;
	if (!err && vf && view_filter__active(vf))
		n = lines_kept(all, n, vf);
	/* a table per function, in the order they first come */
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t nc = 0;
		bool seen = false;
		FILE *out;
		int e;

		for (size_t j = 0; j < i && !seen; j++)
			seen = same_func(&all[j], &all[i]);
		if (seen)
			continue;
		for (size_t j = i; j < n; j++)
			nc += same_func(&all[j], &all[i]);
		out = t->open(t->ctx, all[i].rec.func, all[i].rec.module, nc, &err);
		if (!out)
			break;
		err = trace_table(all, n, &all[i], fmt, out);
		if (!err)
			*calls += nc;
		e = t->close(t->ctx, out);
		err = err ? err : e;
	}
	for (size_t i = 0; i < n; i++)
		line_call__release(&all[i]);
	free(all);
	return err;
}

/* -F chrome|tree|folded: one stream, to FILE (made 0600: captured values
 * can be secrets; a symlink is not followed) or stdout. */
int export_view__run(const char *run, enum out_format fmt, const char *path,
		     const struct view_filter *vf)
{
	struct cmon_store *s = NULL;
	FILE *out = stdout, *in;
	uint64_t calls = 0;
	struct trace_pos at = { 0, CMON_SCHEMA };
	bool csv = false;
	int rc, err;

	in = export_view__trace_file(run, &csv);
	if (!in) {
		rc = store_cli__open(run, &s);
		if (rc)
			return rc;
	}
	if (path) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

		out = fd < 0 ? NULL : fdopen(fd, "w");
		if (!out) {
			log_error("export: cannot create %s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			cmon_store_close(s);
			if (in)
				fclose(in);
			return CMON_EXIT_ERROR;
		}
	}
	err = in ? view_trace(in, csv, fmt, out, &calls, &at, vf) :
		   export_view(s, fmt, out, &calls, vf);
	if (in)
		fclose(in);
	if (path) {
		if (fclose(out) && !err)
			err = -errno;
	} else if (fflush(stdout) && !err) {
		err = -errno;
	}
	if (err && in && trace_error_said(run, csv, err, &at))
		; /* the file's fault, said */
	else if (err == 1)
		log_error("%s", cmon_store_error(s));
	else if (err)
		log_error("export: writing %s: %s", path ? path : "stdout", strerror(-err));
	else
		fprintf(stderr, "cmon: exported %" PRIu64 " call%s to %s\n", calls,
			calls == 1 ? "" : "s", path ? path : "stdout");
	cmon_store_close(s);
	return err ? CMON_EXIT_ERROR : CMON_EXIT_OK;
}
