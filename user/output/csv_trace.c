// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * csv_trace.c: trace CSVs read with libcsv (RFC 4180: quoted commas,
 * quotes and line ends in cells).  A wide table has a row per call and a
 * column per value ("args.req.len", "ret", arg0..arg5 without DWARF); a
 * long one ("name","value") a row per value, the rows of one call
 * together.  Cells are native (numbers plain, strings unquoted), so a
 * cell that reads as a number becomes one.
 */
#include <csv.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "output/csv_trace.h"
#include "core/grow.h"
#include "output/schema.h"

bool csv_trace__is_header(const char *head, size_t len)
{
	/* "schema" first in every version: a newer file is told by its rows */
	return (len >= 7 && !memcmp(head, "schema,", 7)) ||
	       (len >= 6 && !memcmp(head, "ts_ns,", 6)) ||
	       (len >= 11 && !memcmp(head, "call,ts_ns,", 11));
}

enum col { C_OTHER, C_SKIP, C_INT, C_STR, C_ARG, C_REG, C_RET, C_NAME, C_VALUE, C_CALL,
	   C_SCHEMA, C_CAPTURE, C_PATHS, C_JSON };

struct reader {
	char **cells;              /* the record being read */
	size_t n_cells, cap_cells;
	char **head;               /* the header's names */
	enum col *kind;
	size_t n_head;
	bool have_head, raw, long_shape;
	bool head_bad;             /* no ts_ns, tid or func: said once the
				    * first row's version is known */
	long long schema;          /* the file's version (-EPROTO: newer) */
	size_t rows;               /* records read, the header included */
	json_t **out;
	size_t n_out, cap_out;
	json_t *cur;               /* long: the call being gathered */
	char *cur_key;
	int err;
	size_t bad_row;
};

static void on_field(void *s, size_t len, void *data)
{
	struct reader *r = data;
	char *c;

	if (r->err)
		return;
	if (GROW(r->cells, r->n_cells, r->cap_cells, 32) || !(c = strndup(s ? s : "", len))) {
		r->err = -ENOMEM;
		return;
	}
	r->cells[r->n_cells++] = c;
}

static enum col kind_of(const char *name)
{
	static const struct {
		const char *name;
		enum col kind;
	} named[] = {
		{ "ts_ns", C_INT }, { "pid", C_INT }, { "tid", C_INT }, { "depth", C_INT },
		{ "latency_ns", C_INT }, { "latency_lt_ns", C_INT }, { "rss_entry", C_INT },
		{ "rss_exit", C_INT }, { "vms_entry", C_INT }, { "vms_exit", C_INT },
		{ "comm", C_STR }, { "func", C_STR }, { "module", C_STR }, { "status", C_STR },
		{ "cgroup", C_STR }, { "unavailable", C_STR }, { "ret", C_RET },
		{ "name", C_NAME }, { "value", C_VALUE }, { "call", C_CALL },
		{ "schema", C_SCHEMA }, { "truncated", C_PATHS }, { "faults", C_PATHS },
		{ "at_return", C_JSON }, { "changed", C_JSON },
	};

	for (size_t i = 0; i < sizeof(named) / sizeof(*named); i++)
		if (!strcmp(name, named[i].name))
			return named[i].kind;
	if (!strncmp(name, "args.", 5) && name[5])
		return C_ARG;
	if (!strncmp(name, "captures.", 9) && name[9])
		return C_CAPTURE;
	if (!strncmp(name, "arg", 3) && name[3] >= '0' && name[3] <= '5' && !name[4])
		return C_REG;
	return C_SKIP; /* one this cmon does not know (a newer minor one's) */
}

/* A native cell as JSON: an integer, a real, an array or object (as
 * trace writes an array's JSON text), else the text (an address
 * "0x55d0..." too, as JSON Lines have a pointer). */
static json_t *cell_json(const char *t)
{
	char *end;
	long long v;
	double d;

	if (!*t)
		return NULL;
	if (*t == '[' || *t == '{') {
		json_t *j = json_loads(t, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

		if (j)
			return j;
	}
	if (!strcmp(t, "true") || !strcmp(t, "false"))
		return json_boolean(t[0] == 't');
	errno = 0;
	v = strtoll(t, &end, 10);
	if (!errno && !*end && !(t[0] == '0' && t[1]))
		return json_integer(v);
	if (errno == ERANGE && !*end && t[0] != '-') /* past INT64_MAX: as the bits */
		return json_integer((json_int_t)strtoull(t, NULL, 10));
	errno = 0;
	d = strtod(t, &end);
	if (!errno && !*end && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9')))
		return json_real(d);
	return json_stringn_nocheck(t, strlen(t));
}

/* NAME (dotted: "args.o.in.x") set to V under O, objects made on the way. */
static int set_path(json_t *o, const char *name, json_t *v)
{
	const char *dot = strchr(name, '.');

	while (dot) {
		char *k = strndup(name, (size_t)(dot - name));
		json_t *sub;

		if (!k)
			return -ENOMEM;
		sub = json_object_get(o, k);
		if (!json_is_object(sub)) {
			sub = json_object();
			if (!sub || json_object_set_new(o, k, sub)) {
				free(k);
				return -ENOMEM;
			}
		}
		free(k);
		o = sub;
		name = dot + 1;
		dot = strchr(name, '.');
	}
	return json_object_set_new(o, name, v) ? -ENOMEM : 0;
}

/* A notes cell "s; p->name" as the list of paths JSON has. */
static json_t *paths_json(const char *t)
{
	json_t *a = json_array();

	while (a && *t) {
		const char *end = strstr(t, "; ");
		size_t n = end ? (size_t)(end - t) : strlen(t);

		if (json_array_append_new(a, json_stringn_nocheck(t, n))) {
			json_decref(a);
			return NULL;
		}
		t += n + (end ? 2 : 0);
	}
	return a;
}

/* A value NAME=T of call O: a fixed field, an argument, a capture, the
 * return, a note. */
static int put_value(struct reader *r, json_t *o, const char *name, const char *t)
{
	enum col k = kind_of(name);
	json_t *v;

	if (k == C_SCHEMA)
		return schema__check_text(t, &r->schema);
	if (k == C_PATHS || k == C_JSON) {
		if (!*t)
			return 0;
		v = k == C_PATHS ? paths_json(t) : json_loads(t, JSON_ALLOW_NUL, NULL);
		if (!v)
			return k == C_PATHS ? -ENOMEM : -EINVAL;
		return json_object_set_new(o, name, v) ? -ENOMEM : 0;
	}
	v = k == C_STR ? json_stringn_nocheck(t, strlen(t)) : cell_json(t);
	if (!v)
		return *t ? -EINVAL : 0; /* empty: no value (void, not returned) */
	switch (k) {
	case C_INT:
	case C_REG:
		if (!json_is_integer(v))
			break;
		/* fall through */
	case C_STR:
		return json_object_set_new(o, name, v) ? -ENOMEM : 0;
	case C_ARG:
	case C_CAPTURE:
		return set_path(o, name, v);
	case C_RET:
		return json_object_set_new(o, r->raw ? "ret" : "retval", v) ? -ENOMEM : 0;
	default:
		json_decref(v);
		return 0;
	}
	json_decref(v);
	return -EINVAL;
}

static int emit(struct reader *r, json_t *o)
{
	if (!json_is_string(json_object_get(o, "func")) ||
	    !json_is_integer(json_object_get(o, "ts_ns")) ||
	    !json_is_integer(json_object_get(o, "tid"))) {
		json_decref(o);
		return -EINVAL;
	}
	/* a long table's call without DWARF: its registers and a plain ret */
	if (!json_object_get(o, "args") && json_object_get(o, "arg0")) {
		json_t *ret = json_object_get(o, "retval");

		if (ret && (json_object_set(o, "ret", ret) || json_object_del(o, "retval"))) {
			json_decref(o);
			return -ENOMEM;
		}
	} else if (!json_object_get(o, "args") && json_object_set_new(o, "args", json_object())) {
		json_decref(o);
		return -ENOMEM;
	}
	if (GROW(r->out, r->n_out, r->cap_out, 1024)) {
		json_decref(o);
		return -ENOMEM;
	}
	r->out[r->n_out++] = o;
	return 0;
}

/* Has the header a "schema" column? */
static bool schema_col(const struct reader *r)
{
	for (size_t i = 0; i < r->n_head; i++)
		if (r->kind[i] == C_SCHEMA)
			return true;
	return false;
}

/* A row's version (before anything else is read of it): 0, -EPROTO
 * (newer), -EINVAL. */
static int row_schema(struct reader *r)
{
	for (size_t i = 0; i < r->n_head && i < r->n_cells; i++)
		if (r->kind[i] == C_SCHEMA)
			return schema__check_text(r->cells[i], &r->schema);
	return 0;
}

static int header(struct reader *r)
{
	bool has[3] = {};

	r->head = r->cells;
	r->n_head = r->n_cells;
	r->cells = NULL;
	r->n_cells = r->cap_cells = 0;
	r->kind = calloc(r->n_head + 1, sizeof(*r->kind));
	if (!r->kind)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_head; i++) {
		r->kind[i] = kind_of(r->head[i]);
		has[0] |= !strcmp(r->head[i], "ts_ns");
		has[1] |= !strcmp(r->head[i], "tid");
		has[2] |= !strcmp(r->head[i], "func");
		r->raw |= r->kind[i] == C_REG;
		r->long_shape |= r->kind[i] == C_NAME;
	}
	r->have_head = true;
	r->head_bad = !(has[0] && has[1] && has[2]);
	/* with a version, the first row says whether it is a newer file */
	return r->head_bad && !schema_col(r) ? -EINVAL : 0;
}

/* Long shape: the call a row belongs to (its fixed cells), and NAME/VALUE. */
static int long_row(struct reader *r)
{
	const char *name = NULL, *value = NULL;
	size_t klen = 0;
	char *key;
	int err = 0;

	for (size_t i = 0; i < r->n_cells; i++) {
		if (r->kind[i] == C_NAME)
			name = r->cells[i];
		else if (r->kind[i] == C_VALUE)
			value = r->cells[i];
		else
			klen += strlen(r->cells[i]) + 1;
	}
	if (!name || !value)
		return -EINVAL;
	key = malloc(klen + 1);
	if (!key)
		return -ENOMEM;
	key[0] = 0;
	for (size_t i = 0, o = 0; i < r->n_cells; i++) {
		if (r->kind[i] == C_NAME || r->kind[i] == C_VALUE)
			continue;
		o += (size_t)sprintf(key + o, "%s\x1f", r->cells[i]);
	}
	if (!r->cur || strcmp(key, r->cur_key)) {
		if (r->cur)
			err = emit(r, r->cur);
		free(r->cur_key);
		r->cur_key = key;
		r->cur = err ? NULL : json_object();
		if (!err && !r->cur)
			err = -ENOMEM;
		for (size_t i = 0; i < r->n_cells && !err; i++)
			if (r->kind[i] != C_NAME && r->kind[i] != C_VALUE)
				err = put_value(r, r->cur, r->head[i], r->cells[i]);
	} else {
		free(key);
	}
	return err ? err : put_value(r, r->cur, name, value);
}

static void on_record(int c, void *data)
{
	struct reader *r = data;
	int err = 0;

	(void)c;
	if (r->err)
		goto out;
	r->rows++;
	if (!r->have_head) {
		err = header(r);
	} else if ((err = row_schema(r))) {
		/* newer, or not a version */
	} else if (r->head_bad) {
		err = -EINVAL;
		r->rows = 1; /* the header is what is wrong */
	} else if (r->n_cells != r->n_head) {
		err = -EINVAL;
	} else if (r->long_shape) {
		err = long_row(r);
	} else {
		json_t *o = json_object();

		err = o ? 0 : -ENOMEM;
		for (size_t i = 0; i < r->n_cells && !err; i++)
			err = put_value(r, o, r->head[i], r->cells[i]);
		if (err)
			json_decref(o);
		else
			err = emit(r, o);
	}
	if (err) {
		r->err = err;
		r->bad_row = r->rows;
	}
out:
	for (size_t i = 0; i < r->n_cells; i++)
		free(r->cells[i]);
	r->n_cells = 0;
}

int csv_trace__read(FILE *in, bool cut_ok, json_t ***out, size_t *n, size_t *row,
		    long long *schema)
{
	struct reader r = { .schema = CMON_SCHEMA };
	struct csv_parser p;
	char buf[65536];
	size_t got;
	int err = 0;

	*out = NULL;
	*n = 0;
	*row = 0;
	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL))
		return -ENOMEM;
	while (!r.err && (got = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (csv_parse(&p, buf, got, on_field, on_record, &r) != got && !r.err) {
			r.err = -EINVAL;
			r.bad_row = r.rows + 1;
		}
	}
	if (!r.err && ferror(in))
		r.err = -EIO;
	/* a record without its line end: cut (cmon ends each with CRLF) */
	if (!r.err && cut_ok)
		csv_fini(&p, NULL, NULL, NULL);
	else if (!r.err && csv_fini(&p, on_field, on_record, &r)) {
		r.err = -EINVAL;
		r.bad_row = r.rows + 1;
	}
	if (!r.err && (!r.have_head || r.head_bad)) {
		r.err = -EINVAL;
		r.bad_row = 1;
	}
	if (!r.err && r.cur) {
		r.err = emit(&r, r.cur);
		r.cur = NULL;
		r.bad_row = r.rows;
	}
	csv_free(&p);
	err = r.err;
	json_decref(r.cur);
	free(r.cur_key);
	for (size_t i = 0; i < r.n_cells; i++)
		free(r.cells[i]);
	free(r.cells);
	for (size_t i = 0; i < r.n_head; i++)
		free(r.head[i]);
	free(r.head);
	free(r.kind);
	if (err) {
		for (size_t i = 0; i < r.n_out; i++)
			json_decref(r.out[i]);
		free(r.out);
		*row = r.bad_row;
		*schema = r.schema;
		return err;
	}
	*out = r.out;
	*n = r.n_out;
	return 0;
}
