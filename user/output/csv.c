// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * csv.c: RFC 4180 tables (the columns are in docs/cmon-output.md).  Lines
 * end in CRLF as the RFC says (pandas, Python's csv module and spreadsheets
 * all read it).  A field is quoted when it holds , " CR or LF or starts or
 * ends with a space (which some readers would trim); a quote inside is
 * doubled.  Each value is a native cell: a number, true/false, a string's
 * own characters, an address 0x..; empty when there is none.
 *
 * Wide: one row a call, a column per leaf of the functions' values
 * (render.h).  Long: one row per value (name, value), for one table of
 * functions whose columns differ; the call's own fields repeat on each.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "core/grow.h"
#include "render.h"
#include "schema.h"
#include "writer_impl.h"

#define CSV_HEAD "schema,ts_ns,pid,tid,comm,func,depth"
#define CSV_RAW ",arg0,arg1,arg2,arg3,arg4,arg5"
#define CSV_TAIL \
	",ret,latency_ns,latency_lt_ns,rss_entry,rss_exit,vms_entry,vms_exit,status,module"
#define CSV_LONG_HEAD                                                                  \
	"schema,call,ts_ns,pid,tid,comm,func,depth,latency_ns,latency_lt_ns,rss_entry,rss_exit," \
	"vms_entry,vms_exit,status,module,name,value"

#define TO_RET UINT32_MAX /* the leaf is the fixed "ret" column */

/* One function's columns placed in the table. */
struct csv_map {
	const struct render_cols *cols;
	uint32_t *to; /* [cols->n]: the table's value column, or TO_RET */
};

struct csv_table {
	enum csv_shape shape;
	bool raw;                 /* arg0..arg5: a function without DWARF */
	char **names;             /* the value columns (wide), after "module" */
	size_t n, cap;
	size_t first_cell;        /* columns of cells (--py): [first_cell, n) */
	struct csv_map *maps;
	size_t n_maps, last_map;
	unsigned extras;
	const struct csv_text **row; /* [n] this row's cells */
	uint64_t calls;           /* long: the call's number */
};

/* A cell's text and what it is (enum render_kind). */
struct csv_text {
	const char *text;
	size_t len;
	uint8_t kind;
};

static const struct {
	const char *name;
	unsigned flag;  /* enum csv_extra */
} csv_extra_cols[] = {
	{ "at_return", CSV_AT_RETURN }, { "changed", CSV_AT_RETURN },
	{ "truncated", CSV_NOTES },     { "faults", CSV_NOTES },
	{ "unavailable", CSV_NOTES },
};
#define N_EXTRA (sizeof(csv_extra_cols) / sizeof(csv_extra_cols[0]))

/* ---- cells ---- */

uint8_t csv__kind_of(const char *t, size_t n)
{
	if (!n || (n == 4 && !memcmp(t, "null", 4)))
		return RK_NULL;
	if (t[0] == '[' || t[0] == '{')
		return RK_JSON;
	if (t[0] == 't' || t[0] == 'f')
		return RK_BOOL;
	if (t[0] == '"') {
		if (n > 3 && t[1] == '<' && t[n - 2] == '>')
			return RK_MARKER;
		if ((n == 5 && !memcmp(t, "\"NaN\"", 5)) || (n == 10 && !memcmp(t, "\"Infinity\"", 10)) ||
		    (n == 11 && !memcmp(t, "\"-Infinity\"", 11)))
			return RK_FLOAT_STR;
		return RK_STRING;
	}
	return RK_NUMBER;
}

/* The JSON text T (N bytes) of KIND as a native cell; the caller reserved
 * WR_CSV_MAX(n). */
static char *put_value(char *p, uint8_t kind, const char *t, size_t n)
{
	switch (kind) {
	case RK_NULL:
	case RK_MARKER:
		return p;
	case RK_NUMBER:
	case RK_BOOL:
		return wr_mem(p, t, n);
	case RK_FLOAT_STR: /* as pandas and numpy read them */
		return t[1] == 'N' ? WR_LIT(p, "nan") : t[1] == '-' ? WR_LIT(p, "-inf") : WR_LIT(p, "inf");
	case RK_ADDRESS:
		return n >= 2 ? wr_mem(p, t + 1, n - 2) : p;
	case RK_STRING:
		return writer__csv_put_jstr(p, t, n);
	default:
		return writer__csv_put(p, t, n);
	}
}

static int put_cell(struct strbuf *sb, const struct csv_text *c)
{
	int err = strbuf__reserve(sb, WR_CSV_MAX(c->len) + 8);

	if (err)
		return err;
	sb->len = (size_t)(put_value(sb->buf + sb->len, c->kind, c->text, c->len) - sb->buf);
	return 0;
}

/* A JSON array of paths ["a","p->b"] as one plain field: a; p->b. */
static int put_paths(struct strbuf *sb, const char *json)
{
	struct strbuf tmp = {};
	const char *p = json;
	int err = 0;

	while (p && *p && !err) {
		const char *q = strchr(p, '"'), *e;

		if (!q)
			break;
		for (e = q + 1; *e && *e != '"'; e++)
			if (*e == '\\' && e[1])
				e++;
		if (!*e)
			break;
		if (tmp.len)
			err = strbuf__puts(&tmp, "; ");
		err = err ?: strbuf__reserve(&tmp, WR_CSV_MAX((size_t)(e - q + 1)));
		if (!err)
			tmp.len = (size_t)(writer__csv_put_jstr(tmp.buf + tmp.len, q,
								(size_t)(e - q + 1)) - tmp.buf);
		p = e + 1;
	}
	/* decoded as fields; the whole is one field */
	if (!err && tmp.len) {
		tmp.buf[tmp.len] = '\0';
		err = csv_escape(sb, tmp.buf);
	}
	strbuf__release(&tmp);
	return err;
}

/* The raw registers are REC's values: no DWARF (with or without
 * --capture). */
static bool rec_raw(const struct call_record *rec)
{
	const struct call_typed *ty = rec->typed;

	return !ty || (ty->cols && !ty->cols->typed);
}

/* ---- the table ---- */

static int table_add(struct csv_table *t, const char *name, uint32_t *at)
{
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->names[i], name)) {
			*at = (uint32_t)i;
			return 0;
		}
	}
	if (GROW(t->names, t->n, t->cap, 16))
		return -ENOMEM;
	t->names[t->n] = strdup(name);
	if (!t->names[t->n])
		return -ENOMEM;
	*at = (uint32_t)t->n++;
	return 0;
}

static bool same_cols(const struct render_cols *a, const struct render_cols *b)
{
	if (!a || !b)
		return a == b;
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->names[i], b->names[i]))
			return false;
	return true;
}

static bool in_schema(const struct csv_schema *s, size_t i)
{
	return s->only == UINT32_MAX || s->only == i;
}

enum csv_shape csv_schema__shape(const struct csv_schema *s)
{
	const struct render_cols *first = NULL;
	bool any = false;

	if (s->shape != CSV_AUTO)
		return s->shape;
	for (size_t i = 0; i < s->n_funcs; i++) {
		if (!in_schema(s, i))
			continue;
		if (any && !same_cols(first, s->funcs[i]))
			return CSV_LONG;
		first = s->funcs[i];
		any = true;
	}
	return CSV_WIDE;
}

struct csv_table *csv_table__new(const struct csv_schema *s)
{
	struct csv_table *t = calloc(1, sizeof(*t));
	int err = 0;

	if (!t)
		return NULL;
	t->shape = csv_schema__shape(s);
	t->extras = s->extras;
	t->raw = !s->n_funcs;
	t->maps = calloc(s->n_funcs + 1, sizeof(*t->maps));
	if (!t->maps)
		err = -ENOMEM;
	for (size_t i = 0; i < s->n_funcs && !err; i++) {
		const struct render_cols *c = s->funcs[i];
		struct csv_map *m;
		bool seen = false;

		if (!in_schema(s, i))
			continue;
		if (!c || !c->typed) /* no DWARF: the registers */
			t->raw = true;
		if (!c)
			continue;
		for (size_t k = 0; k < t->n_maps; k++)
			seen = seen || t->maps[k].cols == c;
		if (seen)
			continue;
		m = &t->maps[t->n_maps++];
		m->cols = c;
		m->to = calloc(c->n ? c->n : 1, sizeof(*m->to));
		if (!m->to) {
			err = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < c->n && !err; k++) {
			if (!strcmp(c->names[k], "ret"))
				m->to[k] = TO_RET;
			else
				err = table_add(t, c->names[k], &m->to[k]);
		}
	}
	t->first_cell = t->n;
	for (size_t i = 0; i < s->n_cells && !err; i++) {
		char *name = NULL;
		uint32_t at;

		/* "": --py's column, the whole args object */
		if (asprintf(&name, s->cells[i][0] ? "args.%s" : "args", s->cells[i]) < 0) {
			err = -ENOMEM;
			break;
		}
		err = table_add(t, name, &at);
		free(name);
	}
	if (!err && t->n) {
		t->row = calloc(t->n, sizeof(*t->row));
		if (!t->row)
			err = -ENOMEM;
	}
	if (err) {
		csv_table__free(t);
		return NULL;
	}
	return t;
}

void csv_table__free(struct csv_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->names[i]);
	for (size_t i = 0; i < t->n_maps; i++)
		free(t->maps[i].to);
	free(t->names);
	free(t->maps);
	free(t->row);
	free(t);
}

enum csv_shape csv_table__shape(const struct csv_table *t)
{
	return t->shape;
}

int csv_table__header(struct csv_table *t, struct strbuf *sb)
{
	int err;

	if (t->shape == CSV_LONG)
		return strbuf__puts(sb, CSV_LONG_HEAD "\r\n");
	err = strbuf__puts(sb, CSV_HEAD) ?: t->raw ? strbuf__puts(sb, CSV_RAW) : 0;
	err = err ?: strbuf__puts(sb, CSV_TAIL);
	for (size_t i = 0; i < t->n && !err; i++)
		err = strbuf__putc(sb, ',') ?: csv_escape(sb, t->names[i]);
	for (size_t i = 0; i < N_EXTRA && !err; i++)
		if (t->extras & csv_extra_cols[i].flag)
			err = strbuf__printf(sb, ",%s", csv_extra_cols[i].name);
	if (!err && (t->extras & CSV_CGROUP))
		err = strbuf__puts(sb, ",cgroup");
	if (!err && (t->extras & CSV_CALL))
		err = strbuf__puts(sb, ",call");
	return err ?: strbuf__puts(sb, "\r\n");
}

static const struct csv_map *map_of(struct csv_table *t, const struct render_cols *c)
{
	if (t->last_map < t->n_maps && t->maps[t->last_map].cols == c)
		return &t->maps[t->last_map];
	for (size_t i = 0; i < t->n_maps; i++) {
		if (t->maps[i].cols == c) {
			t->last_map = i;
			return &t->maps[i];
		}
	}
	return NULL;
}

/* The typed parts of REC as cells: each leaf (or, without leaves, each
 * parameter's value as one cell), and the return value into *RET. */
struct row_cells {
	struct csv_text cells[64]; /* a row's cells, the rest allocated */
	struct csv_text *more;
	size_t n, cap;
};

static struct csv_text *cell_new(struct row_cells *rc)
{
	if (rc->n < 64)
		return &rc->cells[rc->n++];
	if (GROW(rc->more, rc->n - 64, rc->cap, 64))
		return NULL;
	return &rc->more[rc->n++ - 64];
}

/* Place REC's values in T's row; RET gets the return value's cell. */
static int place(struct csv_table *t, struct row_cells *rc, const struct call_record *rec,
		 struct csv_text *ret, bool *has_ret)
{
	const struct call_typed *ty = rec->typed;
	const struct csv_map *m;

	if (t->n) /* (no columns yet: no row, and memset must not see NULL) */
		memset(t->row, 0, t->n * sizeof(*t->row));
	*has_ret = false;
	if (!ty)
		return 0;
	m = ty->cols ? map_of(t, ty->cols) : NULL;
	if (m) {
		for (size_t i = 0; i < ty->n_leaves; i++) {
			const struct render_leaf *l = &ty->leaves[i];
			struct csv_text *c;
			uint32_t to;

			if (l->col >= m->cols->n)
				continue;
			to = m->to[l->col];
			if (to == TO_RET) {
				*ret = (struct csv_text){ l->text, l->len, l->kind };
				*has_ret = call_record__has_ret(rec);
				continue;
			}
			c = cell_new(rc);
			if (!c)
				return -ENOMEM;
			*c = (struct csv_text){ l->text, l->len, l->kind };
			t->row[to] = c;
		}
		return 0;
	}
	/* values without leaves (--py): a parameter a cell */
	for (size_t i = 0; i < ty->n_cells; i++) {
		size_t col = t->first_cell + ty->columns[i];
		struct csv_text *c;

		if (ty->columns[i] == SIZE_MAX || col >= t->n)
			continue;
		c = cell_new(rc);
		if (!c)
			return -ENOMEM;
		*c = (struct csv_text){ ty->cells[i], strlen(ty->cells[i]),
					csv__kind_of(ty->cells[i], strlen(ty->cells[i])) };
		t->row[col] = c;
	}
	if (ty->python && ty->args_column != SIZE_MAX && t->first_cell + ty->args_column < t->n) {
		struct csv_text *c = cell_new(rc);

		if (!c)
			return -ENOMEM;
		*c = (struct csv_text){ ty->args, strlen(ty->args), RK_JSON };
		t->row[t->first_cell + ty->args_column] = c;
	}
	/* (--py: also what a generator yielded, the exception that left it) */
	if (!ty->returns_void && call_record__typed_ret(rec)) {
		*ret = (struct csv_text){ ty->retval, strlen(ty->retval),
					  csv__kind_of(ty->retval, strlen(ty->retval)) };
		*has_ret = true;
	}
	return 0;
}

/* The fields of REC from comm to module (wide: arg0..arg5 and ret too). */
static int put_call(struct csv_table *t, struct strbuf *sb, const struct call_record *rec,
		    const struct csv_text *ret, bool has_ret)
{
	const char *comm = wr_str(rec->comm), *func = wr_str(rec->func);
	const char *mod = wr_str(rec->module);
	const char *status = call_status__name(rec->status);
	size_t lc = strlen(comm), lf = strlen(func), lm = strlen(mod);
	bool has_exit = wr_has_exit(rec), raw = rec_raw(rec);
	bool wide = t->shape == CSV_WIDE;
	char *p;
	int err;

	/* the schema, 17 numbers, 21 commas, status (<= 16), and the strings */
	err = strbuf__reserve(sb, 2 + 17 * DECIMAL_MAX + 21 + 16 + WR_CSV_MAX(lc) + WR_CSV_MAX(lf) +
				      WR_CSV_MAX(lm) + (wide && has_ret ? WR_CSV_MAX(ret->len) : 0));
	if (err)
		return err;
	p = sb->buf + sb->len;
	p = WR_LIT(p, CMON_SCHEMA_TEXT ",");
	if (!wide) {
		p = decimal__u64(p, t->calls);
		*p++ = ',';
	}
	p = decimal__u64(p, rec->ts_ns);
	*p++ = ',';
	p = decimal__u64(p, rec->pid);
	*p++ = ',';
	p = decimal__u64(p, rec->tid);
	*p++ = ',';
	p = writer__csv_put(p, comm, lc);
	*p++ = ',';
	p = writer__csv_put(p, func, lf);
	*p++ = ',';
	if (rec->depth >= 0)
		p = decimal__u64(p, (uint64_t)rec->depth);
	if (wide && t->raw) {
		bool has_args = raw && wr_has_args(rec);

		for (int i = 0; i < 6; i++) {
			*p++ = ',';
			if (has_args)
				p = wr_arg_decimal(p, rec, i);
		}
	}
	if (wide) {
		*p++ = ',';
		if (has_ret)
			p = put_value(p, ret->kind, ret->text, ret->len);
		else if (raw && call_record__has_ret(rec))
			p = decimal__i64(p, rec->ret);
	}
	*p++ = ',';
	if (has_exit)
		p = decimal__u64(p, rec->latency_ns);
	*p++ = ',';
	if (has_exit && rec->latency_lt_ns)
		p = decimal__u64(p, rec->latency_lt_ns);
	*p++ = ',';
	p = decimal__u64(p, rec->rss_entry);
	*p++ = ',';
	if (has_exit)
		p = decimal__u64(p, rec->rss_exit);
	*p++ = ',';
	p = decimal__u64(p, rec->vms_entry);
	*p++ = ',';
	if (has_exit)
		p = decimal__u64(p, rec->vms_exit);
	*p++ = ',';
	p = wr_mem(p, status, strlen(status));
	*p++ = ',';
	p = writer__csv_put(p, mod, lm);
	sb->len = (size_t)(p - sb->buf);
	return 0;
}

/* The extras of REC's values, by column (JSON text or plain paths). */
static const char *extra_of(const struct call_typed *ty, size_t i)
{
	if (!ty)
		return NULL;
	switch (i) {
	case 0: return ty->at_return;
	case 1: return ty->changed;
	case 2: return ty->truncated;
	case 3: return ty->faults;
	default: return ty->unavailable;
	}
}

static int put_extra(struct strbuf *sb, size_t i, const char *v)
{
	if (!v || !strcmp(v, "{}") || !strcmp(v, "[]"))
		return 0;
	if (i == 2 || i == 3)
		return put_paths(sb, v);
	return csv_escape(sb, v);
}

static int row_wide(struct csv_table *t, struct strbuf *sb, const struct call_record *rec,
		    struct row_cells *rc)
{
	struct csv_text ret = {};
	bool has_ret;
	int err = place(t, rc, rec, &ret, &has_ret);

	err = err ?: put_call(t, sb, rec, &ret, has_ret);
	for (size_t i = 0; i < t->n && !err; i++) {
		err = strbuf__putc(sb, ',');
		if (!err && t->row[i])
			err = put_cell(sb, t->row[i]);
	}
	for (size_t i = 0; i < N_EXTRA && !err; i++) {
		if (!(t->extras & csv_extra_cols[i].flag))
			continue;
		err = strbuf__putc(sb, ',') ?: put_extra(sb, i, extra_of(rec->typed, i));
	}
	if (!err && (t->extras & CSV_CGROUP))
		err = strbuf__putc(sb, ',') ?: rec->cgroup ? csv_escape(sb, rec->cgroup) : 0;
	if (!err && (t->extras & CSV_CALL))
		err = strbuf__printf(sb, ",%" PRIu64, rec->call_no);
	return err ?: strbuf__puts(sb, "\r\n");
}

/* One row: the call's fields (PREFIX), NAME, the cell. */
static int long_row(struct strbuf *sb, const struct strbuf *prefix, const char *name,
		    const struct csv_text *c)
{
	int err = strbuf__putn(sb, prefix->buf, prefix->len) ?: strbuf__putc(sb, ',');

	err = err ?: csv_escape(sb, name) ?: strbuf__putc(sb, ',');
	err = err ?: c ? put_cell(sb, c) : 0;
	return err ?: strbuf__puts(sb, "\r\n");
}

static int row_long(struct csv_table *t, struct strbuf *sb, const struct call_record *rec,
		    struct row_cells *rc)
{
	const struct call_typed *ty = rec->typed;
	struct strbuf prefix = {};
	struct csv_text ret = {};
	size_t start = sb->len, rows = 0;
	bool has_ret;
	char num[DECIMAL_MAX + 1];
	int err;

	t->calls++;
	err = place(t, rc, rec, &ret, &has_ret) ?: put_call(t, &prefix, rec, &ret, has_ret);
	if (!err && rec_raw(rec) && wr_has_args(rec)) {
		for (int i = 0; i < 6 && !err; i++, rows++) {
			struct csv_text c = { num, 0, RK_NUMBER };
			static const char *const names[6] = { "arg0", "arg1", "arg2",
							       "arg3", "arg4", "arg5" };

			c.len = (size_t)(wr_arg_decimal(num, rec, i) - num);
			err = long_row(sb, &prefix, names[i], &c);
		}
	}
	for (size_t i = 0; i < t->n && !err; i++) {
		if (t->row[i]) {
			err = long_row(sb, &prefix, t->names[i], t->row[i]);
			rows++;
		}
	}
	if (!err && has_ret) {
		err = long_row(sb, &prefix, "ret", &ret);
		rows++;
	} else if (!err && rec_raw(rec) && call_record__has_ret(rec)) {
		struct csv_text c = { num, 0, RK_NUMBER };

		c.len = (size_t)(decimal__i64(num, rec->ret) - num);
		err = long_row(sb, &prefix, "ret", &c);
		rows++;
	}
	for (size_t i = 0; i < N_EXTRA && !err; i++) {
		const char *v = extra_of(ty, i);
		size_t at = sb->len;

		if (!(t->extras & csv_extra_cols[i].flag) || !v || !strcmp(v, "{}") || !strcmp(v, "[]"))
			continue;
		err = strbuf__putn(sb, prefix.buf, prefix.len) ?: strbuf__putc(sb, ',');
		err = err ?: strbuf__puts(sb, csv_extra_cols[i].name) ?: strbuf__putc(sb, ',');
		err = err ?: put_extra(sb, i, v) ?: strbuf__puts(sb, "\r\n");
		if (err)
			sb->len = at;
		rows++;
	}
	/* the process's cgroup (--cgroup, --container): a row like a value */
	if (!err && (t->extras & CSV_CGROUP) && rec->cgroup) {
		err = strbuf__putn(sb, prefix.buf, prefix.len) ?: strbuf__puts(sb, ",cgroup,");
		err = err ?: csv_escape(sb, rec->cgroup) ?: strbuf__puts(sb, "\r\n");
		rows++;
	}
	/* a call without values is a row all the same */
	if (!err && !rows)
		err = long_row(sb, &prefix, "", NULL);
	strbuf__release(&prefix);
	if (err)
		sb->len = start;
	return err;
}

int csv_table__row(struct csv_table *t, struct strbuf *sb, const struct call_record *rec)
{
	struct row_cells rc;
	int err;

	rc.n = rc.cap = 0;
	rc.more = NULL;
	err = t->shape == CSV_LONG ? row_long(t, sb, rec, &rc) : row_wide(t, sb, rec, &rc);
	free(rc.more);
	return err;
}
