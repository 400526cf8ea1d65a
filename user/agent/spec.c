// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * spec.c: the agent's probe spec, parsed with libyaml's document API (the
 * whole file is small; a tree is easier to validate than an event stream).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <yaml.h>
#include "agent/yaml_limits.h"
#include "agent/spec.h"
#include "agg/budget.h"
#include "agg/hist_arg.h"
#include "filter/expr.h"
#include "core/file.h"
#include "output/ch_url.h"

#define SPEC_MAX_BYTES (4u << 20) /* a spec larger than this is a mistake */
#define SPEC_MAX_PROBES 10000u

static const char *const instrument_names[] = {
	[INSTR_COUNT] = "count",
	[INSTR_LATENCY] = "latency",
	[INSTR_ARG] = "arg",
	[INSTR_LOG] = "log",
};

const char *probe_instrument__name(enum probe_instrument i)
{
	return (unsigned)i < sizeof(instrument_names) / sizeof(instrument_names[0])
		       ? instrument_names[i]
		       : "?";
}

int probe_instrument__parse(const char *s, enum probe_instrument *out)
{
	for (size_t i = 0; i < sizeof(instrument_names) / sizeof(instrument_names[0]); i++) {
		if (!strcmp(s, instrument_names[i])) {
			*out = (enum probe_instrument)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool spec__valid_metric_name(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_' || *s == ':'))
		return false;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == ':'))
			return false;
	return true;
}

bool spec__valid_label_name(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int spec_duration__parse(const char *s, uint64_t *ms)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
		      { "d", 86400000 } };
	uint64_t total = 0;
	bool any = false;

	if (!s)
		return -EINVAL;
	while (*s) {
		unsigned long long v;
		char *end;
		size_t i, len;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		errno = 0;
		v = strtoull(s, &end, 10);
		if (errno || end == s)
			return -EINVAL;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			len = strlen(units[i].unit);
			/* "m" must not take the "m" of "ms". */
			if (!strncmp(end, units[i].unit, len) && !isalpha((unsigned char)end[len]))
				break;
		}
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL; /* a bare number: minutes or seconds?  Say it. */
		if (v > UINT64_MAX / units[i].ms || total + v * units[i].ms < total)
			return -EINVAL;
		total += v * units[i].ms;
		s = end + strlen(units[i].unit);
		any = true;
	}
	if (!any)
		return -EINVAL;
	*ms = total;
	return 0;
}

/* ---------------------------------------------------------------- errors */

static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	s = vfmt(f, ap);
	va_end(ap);
	return s;
}

/* Sets P's error once (the first problem is the one to fix first). */
/* MSG (freed) as one line of at most MSG_MAX bytes: what a spec quotes
 * (a key, a value, a multi-line string) may hold line ends, control
 * characters and megabytes.  NULL when out of memory. */
#define MSG_MAX 512
static char *one_line(char *msg)
{
	size_t len, o = 0;
	char *out;

	if (!msg)
		return NULL;
	len = strlen(msg);
	out = malloc(MSG_MAX + 8);
	if (out) {
		for (size_t i = 0; i < len && o < MSG_MAX; i++) {
			unsigned char c = (unsigned char)msg[i];

			if (c == '\n' || c == '\t')
				o += (size_t)sprintf(out + o, "\\%c", c == '\n' ? 'n' : 't');
			else if (c < 0x20 || c == 0x7f)
				o += (size_t)sprintf(out + o, "\\x%02x", c);
			else
				out[o++] = (char)c;
		}
		strcpy(out + o, o >= MSG_MAX ? "..." : "");
	}
	free(msg);
	return out;
}

static int probe_fail(struct probe_spec *p, const yaml_node_t *at, const char *f, ...)
	__attribute__((format(printf, 3, 4)));
static int probe_fail(struct probe_spec *p, const yaml_node_t *at, const char *f, ...)
{
	va_list ap;
	char *msg;

	if (p->error)
		return -EINVAL;
	va_start(ap, f);
	msg = one_line(vfmt(f, ap));
	va_end(ap);
	if (!msg)
		return -ENOMEM;
	if (at) {
		p->error = fmt("line %zu: %s", at->start_mark.line + 1, msg);
		free(msg);
	} else {
		p->error = msg;
	}
	return p->error ? -EINVAL : -ENOMEM;
}

/* ---------------------------------------------------------------- nodes */

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A plain (unquoted) scalar that YAML means as null: "", "~", "null". */
static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

/* A string value: any scalar (numbers included: a label value 8080 is
 * "8080"), never NUL-embedded. */
static int get_string(struct probe_spec *p, const yaml_node_t *n, const char *key, char **out)
{
	const char *s = scalar(n);

	if (!s || is_null(n))
		return probe_fail(p, n, "'%s' must be a string", key);
	if (strlen(s) != n->data.scalar.length)
		return probe_fail(p, n, "'%s' holds a NUL byte", key);
	free(*out);
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

static int get_uint(struct probe_spec *p, const yaml_node_t *n, const char *key,
		    unsigned long long max, bool suffixes, unsigned long long *out)
{
	const char *s = scalar(n);
	unsigned long long v, mul = 1;
	char *end;

	/* A size may be quoted ("10M"): a JSON spec has no other way to
	 * give the unit.  A plain number may not: "10" is a string. */
	if (!s || (!suffixes && n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) ||
	    !isdigit((unsigned char)*s))
		return suffixes ? probe_fail(p, n, "'%s' must be a byte count: 4096, 64K, 10M, 1G", key)
				: probe_fail(p, n, "'%s' must be a non-negative integer", key);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (suffixes && *end) {
		if (!strcmp(end, "k") || !strcmp(end, "K") || !strcmp(end, "KiB"))
			mul = 1ull << 10;
		else if (!strcmp(end, "M") || !strcmp(end, "MiB"))
			mul = 1ull << 20;
		else if (!strcmp(end, "G") || !strcmp(end, "GiB"))
			mul = 1ull << 30;
		else
			mul = 0;
		if (mul)
			end += strlen(end);
	}
	if (errno || *end || !mul)
		return suffixes ? probe_fail(p, n, "'%s' must be a byte count: 4096, 64K, 10M, 1G, "
					     "not '%s'", key, s)
				: probe_fail(p, n, "'%s' must be a non-negative integer, not '%s'", key, s);
	if (v > max / mul)
		return probe_fail(p, n, "'%s' is too large (at most %llu)", key, max);
	*out = v * mul;
	return 0;
}

static int get_bool(struct probe_spec *p, const yaml_node_t *n, const char *key, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF" };
	const char *s = scalar(n);

	if (s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (!strcmp(s, yes[i])) {
				*out = true;
				return 0;
			}
			if (!strcmp(s, no[i])) {
				*out = false;
				return 0;
			}
		}
	}
	return probe_fail(p, n, "'%s' must be true or false", key);
}

/* ---------------------------------------------------------------- one probe */

struct pstate {
	yaml_document_t *doc;
	struct probe_spec *p;
	bool have_arg, have_log, have_max_pids, have_metric;
};

/* KEY: a pattern or a list of patterns, into *LIST (*N of them). */
static int parse_patterns(struct pstate *st, yaml_node_t *n, const char *key, char ***list,
			  size_t *nl)
{
	struct probe_spec *p = st->p;
	yaml_node_item_t *it;
	size_t count;

	if (n->type == YAML_SCALAR_NODE) {
		*list = calloc(1, sizeof(**list));
		if (!*list)
			return -ENOMEM;
		*nl = 1;
		return get_string(p, n, key, &(*list)[0]);
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return probe_fail(p, n, "'%s' must be a pattern or a list of patterns", key);
	count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (!count)
		return probe_fail(p, n, "'%s' is an empty list", key);
	*list = calloc(count, sizeof(**list));
	if (!*list)
		return -ENOMEM;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		int err = get_string(p, yaml_document_get_node(st->doc, *it), key,
				     &(*list)[*nl]);

		if (err)
			return err;
		(*nl)++;
	}
	return 0;
}

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct spec_label *)a)->name, ((const struct spec_label *)b)->name);
}

/* Names the agent sets itself; a constant label may not take them. */
static bool reserved_label(const char *s)
{
	return !strcmp(s, "probe") || !strcmp(s, "function") || !strcmp(s, "pid") ||
	       !strcmp(s, "cgroup") ||
	       !strcmp(s, "le") || !strncmp(s, "__", 2);
}

static int parse_labels(struct pstate *st, yaml_node_t *n)
{
	struct probe_spec *p = st->p;
	yaml_node_pair_t *pair;
	size_t count;
	int err;

	if (is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return probe_fail(p, n, "'labels' must be a mapping of label names to values");
	count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	p->labels = calloc(count ? count : 1, sizeof(*p->labels));
	if (!p->labels)
		return -ENOMEM;
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(st->doc, pair->key);
		yaml_node_t *v = yaml_document_get_node(st->doc, pair->value);
		struct spec_label *l = &p->labels[p->n_labels];

		err = get_string(p, k, "labels", &l->name);
		if (!err)
			err = get_string(p, v, l->name, &l->value);
		if (err) {
			free(l->name);
			free(l->value);
			l->name = l->value = NULL;
			return err;
		}
		p->n_labels++;
		if (!spec__valid_label_name(l->name))
			return probe_fail(p, k, "label name '%s' is not valid "
					  "([a-zA-Z_][a-zA-Z0-9_]*)", l->name);
		if (reserved_label(l->name))
			return probe_fail(p, k, "label name '%s' is reserved", l->name);
		for (size_t i = 0; i + 1 < p->n_labels; i++)
			if (!strcmp(p->labels[i].name, l->name))
				return probe_fail(p, k, "label '%s' given twice", l->name);
	}
	if (p->n_labels > 1) /* labels is NULL without any */
		qsort(p->labels, p->n_labels, sizeof(*p->labels), label_cmp);
	return 0;
}

static int parse_log(struct pstate *st, yaml_node_t *n)
{
	struct probe_spec *p = st->p;
	yaml_node_pair_t *pair;
	unsigned long long v;
	int err = 0;

	if (n->type != YAML_MAPPING_NODE)
		return probe_fail(p, n, "'log' must be a mapping {path, max_bytes, keep} or "
				  "{clickhouse}");
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top && !err; pair++) {
		yaml_node_t *k = yaml_document_get_node(st->doc, pair->key);
		yaml_node_t *val = yaml_document_get_node(st->doc, pair->value);
		const char *key = scalar(k);

		if (!key)
			err = probe_fail(p, k, "'log' keys must be strings");
		else if (!strcmp(key, "path"))
			err = get_string(p, val, "log.path", &p->log_path);
		else if (!strcmp(key, "clickhouse")) {
			struct ch_url u = {};
			char why[256];

			err = get_string(p, val, "log.clickhouse", &p->log_clickhouse);
			if (!err && ch_url__parse(p->log_clickhouse, &u, why, sizeof(why)))
				err = probe_fail(p, val, "'log.clickhouse': bad ClickHouse URL: %s", why);
			ch_url__free(&u);
		} else if (!strcmp(key, "max_bytes")) {
			err = get_uint(p, val, "log.max_bytes", UINT64_MAX, true, &v);
			if (!err && v < 4096)
				err = probe_fail(p, val, "'log.max_bytes' must be at least 4096");
			p->log_max_bytes = v;
		} else if (!strcmp(key, "keep")) {
			err = get_uint(p, val, "log.keep", 100, false, &v);
			p->log_keep = (unsigned)v;
		} else {
			err = probe_fail(p, k, "unknown key 'log.%s' (path, max_bytes, keep, "
					 "clickhouse)", key);
		}
	}
	if (!err && !p->log_path == !p->log_clickhouse)
		err = probe_fail(p, n, "'log' needs a 'path' or a 'clickhouse' URL (one of them)");
	return err;
}

static int parse_key(struct pstate *st, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	struct probe_spec *p = st->p;
	unsigned long long u;
	int err;

	if (!strcmp(key, "name"))
		return get_string(p, v, key, &p->name);
	if (!strcmp(key, "target"))
		return get_string(p, v, key, &p->target);
	if (!strcmp(key, "process")) {
		if (is_null(v))
			return 0;
		err = get_string(p, v, key, &p->process);
		if (!err && (!*p->process || strlen(p->process) > 15))
			err = probe_fail(p, v, "'process' must be a process name of 1 to 15 "
					 "bytes (as in /proc/PID/comm)");
		return err;
	}
	if (!strcmp(key, "pid")) {
		if (is_null(v))
			return 0;
		err = get_uint(p, v, key, INT_MAX, false, &u);
		if (!err && !u)
			err = probe_fail(p, v, "'pid' must be a process id (> 0)");
		p->pid = (pid_t)u;
		return err;
	}
	if (!strcmp(key, "cgroup")) {
		if (is_null(v))
			return 0;
		err = get_string(p, v, key, &p->cgroup);
		if (!err && p->cgroup[0] != '/')
			err = probe_fail(p, v, "'cgroup' must be the absolute path of a cgroup v2 "
					 "directory");
		return err;
	}
	if (!strcmp(key, "func"))
		return parse_patterns(st, v, "func", &p->funcs, &p->n_funcs);
	if (!strcmp(key, "usdt"))
		return parse_patterns(st, v, "usdt", &p->usdts, &p->n_usdts);
	if (!strcmp(key, "py"))
		return parse_patterns(st, v, "py", &p->py, &p->n_py);
	if (!strcmp(key, "instrument")) {
		const char *s = scalar(v);

		if (!s || probe_instrument__parse(s, &p->instrument))
			return probe_fail(p, v, "'instrument' must be count, latency, arg or log");
		return 0;
	}
	if (!strcmp(key, "arg")) {
		const char *a = scalar(v);

		st->have_arg = true;
		if (a && !isdigit((unsigned char)*a)) {
			/* a parameter name or ret: resolved from DWARF (hist_arg.h) */
			if (!hist_arg__valid(a))
				return probe_fail(p, v, "'arg' must be 0..5, ret or a parameter "
						  "name, not '%s'", a);
			return get_string(p, v, key, &p->arg_name);
		}
		err = get_uint(p, v, key, 5, false, &u);
		p->arg = (int)u;
		return err;
	}
	if (!strcmp(key, "if")) {
		char msg[256];

		if (is_null(v))
			return 0;
		err = get_string(p, v, key, &p->if_expr);
		if (!err && expr__check(p->if_expr, msg, sizeof(msg)))
			err = probe_fail(p, v, "'if': %s", msg);
		return err;
	}
	if (!strcmp(key, "metric")) {
		st->have_metric = true;
		return get_string(p, v, key, &p->metric);
	}
	if (!strcmp(key, "labels"))
		return parse_labels(st, v);
	if (!strcmp(key, "per_pid"))
		return get_bool(p, v, key, &p->per_pid);
	if (!strcmp(key, "max_pids")) {
		err = get_uint(p, v, key, SPEC_MAX_PIDS, false, &u);
		if (!err && !u)
			err = probe_fail(p, v, "'max_pids' must be at least 1");
		p->max_pids = (uint32_t)u;
		st->have_max_pids = true;
		return err;
	}
	if (!strcmp(key, "max_functions")) {
		err = get_uint(p, v, key, SPEC_MAX_FUNCTIONS, false, &u);
		if (!err && !u)
			err = probe_fail(p, v, "'max_functions' must be at least 1");
		p->max_functions = (uint32_t)u;
		return err;
	}
	if (!strcmp(key, "lifespan")) {
		const char *s = scalar(v);

		if (is_null(v))
			return 0;
		if (!s || spec_duration__parse(s, &p->lifespan_ms) || !p->lifespan_ms)
			return probe_fail(p, v, "'lifespan' must be a duration with a unit: "
					  "30s, 10m, 2h, 1d, 1h30m");
		/* the expiry is the monotonic clock plus it: keep it far from
		 * wrapping (a lifespan of 2^64 ms expired at once) */
		if (p->lifespan_ms > SPEC_LIFESPAN_MAX_MS)
			return probe_fail(p, v, "'lifespan' is over 100 years: leave it out for a "
					  "probe that does not expire");
		return 0;
	}
	if (!strcmp(key, "log")) {
		st->have_log = true;
		return parse_log(st, v);
	}
	return probe_fail(p, k, "unknown key '%s'", key);
}

/* Cross-field rules, once every key is read. */
static int validate(struct pstate *st, yaml_node_t *n)
{
	struct probe_spec *p = st->p;
	static const char *const suffix[] = {
		[INSTR_COUNT] = "calls", [INSTR_LATENCY] = "seconds", [INSTR_ARG] = "arg",
		[INSTR_LOG] = "log",
	};
	bool hist = p->instrument == INSTR_LATENCY || p->instrument == INSTR_ARG;

	if (!p->name)
		return probe_fail(p, n, "a probe needs a 'name'");
	if (!spec__valid_label_name(p->name))
		return probe_fail(p, n, "name '%s' is not valid ([a-zA-Z_][a-zA-Z0-9_]*)", p->name);
	if (!p->target)
		return probe_fail(p, n, "probe '%s' needs a 'target' (binary or library path)",
				  p->name);
	if (p->target[0] != '/')
		return probe_fail(p, n, "'target' must be an absolute path, not '%s'", p->target);
	if (!p->n_funcs && !p->n_usdts && !p->n_py)
		return probe_fail(p, n, "probe '%s' needs a 'func' (or 'usdt', 'py') pattern", p->name);
	if (p->n_py && (p->n_funcs || p->n_usdts))
		return probe_fail(p, n, "'py' takes Python functions alone: no 'func' or 'usdt'");
	if (p->n_py && !p->pid)
		return probe_fail(p, n, "'py' needs 'pid' (the interpreter's process; 'target' its "
				  "executable)");
	if (p->n_py && p->instrument != INSTR_COUNT && p->instrument != INSTR_LATENCY)
		return probe_fail(p, n, "'py' takes instrument count or latency");
	/* A USDT site has no return to time: refused here, not left as an
	 * empty histogram (its arguments are bucketed by number: arg). */
	if (p->n_usdts && p->instrument == INSTR_LATENCY)
		return probe_fail(p, n, "'usdt' sites have no return to time: instrument count, "
				  "arg or log, not latency");
	if (p->n_usdts && p->if_expr)
		return probe_fail(p, n, "'if' applies to functions only, not to 'usdt' sites");
	if (p->instrument == INSTR_ARG && !st->have_arg)
		return probe_fail(p, n, "instrument arg needs 'arg' (0..5, ret or a parameter name)");
	if (p->instrument != INSTR_ARG && st->have_arg)
		return probe_fail(p, n, "'arg' is only for instrument arg");
	if (p->instrument == INSTR_LOG && !st->have_log)
		return probe_fail(p, n, "instrument log needs 'log: {path: ...}' or "
				  "'log: {clickhouse: URL}'");
	if (p->instrument != INSTR_LOG && st->have_log)
		return probe_fail(p, n, "'log' is only for instrument log");
	if (p->instrument == INSTR_LOG && (p->per_pid || st->have_metric || p->n_labels))
		return probe_fail(p, n, "instrument log writes records, not a metric: "
				  "'metric', 'labels' and 'per_pid' do not apply");
	if (st->have_max_pids && !p->per_pid)
		return probe_fail(p, n, "'max_pids' needs 'per_pid: true'");
	if (p->per_pid && (uint64_t)p->max_functions * p->max_pids > SPEC_MAX_LABELLED)
		return probe_fail(p, n, "'max_functions' x 'max_pids' is %llu: at most %u series "
				  "a probe", (unsigned long long)p->max_functions * p->max_pids,
				  SPEC_MAX_LABELLED);
	if (p->instrument != INSTR_ARG)
		p->arg = -1;
	if (!p->metric && p->instrument != INSTR_LOG) {
		p->metric = fmt("cmon_%s_%s", p->name, suffix[p->instrument]);
		if (!p->metric)
			return -ENOMEM;
	}
	if (p->metric) {
		if (!spec__valid_metric_name(p->metric))
			return probe_fail(p, n, "metric name '%s' is not valid "
					  "([a-zA-Z_:][a-zA-Z0-9_:]*)", p->metric);
		if (!strncmp(p->metric, "cmon_agent_", 11) || !strncmp(p->metric, "cmon_probe_", 11))
			return probe_fail(p, n, "metric names cmon_agent_* and cmon_probe_* are "
					  "the agent's own");
		/* A counter's samples end in _total: accept it written either way. */
		if (p->instrument == INSTR_COUNT && ends_with(p->metric, "_total"))
			p->metric[strlen(p->metric) - 6] = 0;
		if (ends_with(p->metric, "_bucket") || ends_with(p->metric, "_count") ||
		    ends_with(p->metric, "_sum") || (hist && ends_with(p->metric, "_total")) ||
		    !*p->metric)
			return probe_fail(p, n, "metric name '%s' ends with a suffix Prometheus "
					  "reserves (_total, _bucket, _count, _sum)", p->metric);
	}
	return 0;
}

static int parse_probe(yaml_document_t *doc, yaml_node_t *n, struct probe_spec *p)
{
	struct pstate st = { .doc = doc, .p = p };
	yaml_node_pair_t *pair;
	int err = 0;

	p->line = (unsigned)n->start_mark.line + 1;
	p->arg = -1;
	p->max_pids = SPEC_DEFAULT_MAX_PIDS;
	p->max_functions = SPEC_DEFAULT_MAX_FUNCTIONS;
	p->log_max_bytes = SPEC_DEFAULT_LOG_BYTES;
	p->log_keep = SPEC_DEFAULT_LOG_KEEP;
	if (n->type != YAML_MAPPING_NODE) {
		err = probe_fail(p, n, "a probe must be a mapping (name: ..., target: ...)");
		return err == -ENOMEM ? err : 0;
	}
	/* The name first: an invalid entry is still reported under it. */
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		const char *key = scalar(yaml_document_get_node(doc, pair->key));
		const char *val = scalar(yaml_document_get_node(doc, pair->value));

		if (key && !strcmp(key, "name") && val && *val) {
			p->name = strdup(val); /* the first: a second is an error below */
			if (!p->name)
				return -ENOMEM;
			break;
		}
	}
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(doc, pair->key);
		yaml_node_t *v = yaml_document_get_node(doc, pair->value);
		const char *key = scalar(k);

		if (!key)
			err = probe_fail(p, k, "probe keys must be strings");
		/* Twice: refused before the second is parsed (it would
		 * replace what the first allocated). */
		for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < pair && !err && key; q++) {
			const char *prev = scalar(yaml_document_get_node(doc, q->key));

			if (prev && !strcmp(prev, key))
				err = probe_fail(p, k, "key '%s' given twice", key);
		}
		if (!err && strcmp(key, "name"))
			err = parse_key(&st, key, k, v);
		else if (!err)
			err = get_string(p, v, key, &p->name);
		if (err == -ENOMEM)
			return err;
		if (err)
			return 0; /* the entry carries its error */
	}
	err = validate(&st, n);
	return err == -ENOMEM ? err : 0;
}

/* Unique ids: the name, or a stand-in for entries without a usable one. */
static int assign_ids(struct agent_spec *s)
{
	for (size_t i = 0; i < s->n_probes; i++) {
		struct probe_spec *p = &s->probes[i];
		bool dup = false;

		for (size_t j = 0; j < i && p->name && !dup; j++)
			dup = s->probes[j].name && !strcmp(s->probes[j].name, p->name);
		if (dup && !p->error) {
			p->error = fmt("line %u: probe name '%s' is used twice", p->line, p->name);
			if (!p->error)
				return -ENOMEM;
		}
		if (!p->name)
			p->id = fmt("probe#%zu", i + 1);
		else if (dup)
			p->id = fmt("%s@line%u", p->name, p->line);
		else
			p->id = strdup(p->name);
		if (!p->id)
			return -ENOMEM;
	}
	return 0;
}

int agent_spec__check_metrics(struct agent_spec *s)
{
	for (size_t i = 0; i < s->n_probes; i++) {
		struct probe_spec *p = &s->probes[i];

		if (p->error || !p->metric)
			continue;
		for (size_t j = 0; j < i; j++) {
			const struct probe_spec *q = &s->probes[j];

			if (q->error || !q->metric || strcmp(q->metric, p->metric) ||
			    q->instrument == p->instrument)
				continue;
			p->error = fmt("line %u: metric '%s' is already probe '%s''s %s metric: "
				       "a name has one type", p->line, p->metric, q->id,
				       probe_instrument__name(q->instrument));
			if (!p->error)
				return -ENOMEM;
			break;
		}
	}
	return 0;
}

static int doc_error(char **errmsg, const char *f, ...) __attribute__((format(printf, 2, 3)));
static int doc_error(char **errmsg, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	*errmsg = one_line(vfmt(f, ap));
	va_end(ap);
	return *errmsg ? -EINVAL : -ENOMEM;
}

/* Nested deeper than any spec: refused before the document is built (see
 * yaml_limits.h).  True with *ERR set. */
static bool too_deep(const char *text, size_t len, char **errmsg, int *err)
{
	size_t line;

	*err = yaml_limits__check_depth(text, len, YAML_MAX_DEPTH, &line);
	if (*err == -E2BIG)
		*err = doc_error(errmsg, "line %zu: nested more than %d levels deep", line,
				 YAML_MAX_DEPTH);
	return *err != 0;
}

int agent_spec__parse(const char *text, size_t len, struct agent_spec **out, char **errmsg)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	bool have_parser = false, have_doc = false;
	struct agent_spec *s = NULL;
	yaml_node_t *root, *probes = NULL;
	int err = 0;

	*out = NULL;
	*errmsg = NULL;
	if (memchr(text, 0, len))
		return doc_error(errmsg, "the spec holds a NUL byte (not a text file?)");
	if (too_deep(text, len, errmsg, &err))
		return err;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	have_parser = true;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		if (parser.error == YAML_MEMORY_ERROR)
			err = -ENOMEM;
		else
			err = doc_error(errmsg, "line %zu: %s%s%s", parser.problem_mark.line + 1,
					parser.problem ? parser.problem : "not YAML",
					parser.context ? " " : "",
					parser.context ? parser.context : "");
		goto cleanup;
	}
	have_doc = true;
	s = calloc(1, sizeof(*s));
	if (!s) {
		err = -ENOMEM;
		goto cleanup;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		/* An empty file: no probes (everything is removed). */
		goto done;
	}
	if (root->type != YAML_MAPPING_NODE) {
		err = doc_error(errmsg, "line %zu: the spec must be a mapping with a 'probes' list",
				root->start_mark.line + 1);
		goto cleanup;
	}
	for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&doc, pair->key);
		const char *key = scalar(k);

		if (key && !strcmp(key, "probes")) {
			probes = yaml_document_get_node(&doc, pair->value);
			continue;
		}
		if (key && !strcmp(key, "budget")) {
			yaml_node_t *v = yaml_document_get_node(&doc, pair->value);
			const char *why = NULL;

			if (budget__parse(scalar(v), &s->budget, &why)) {
				err = doc_error(errmsg, "line %zu: budget: '%s': %s",
						v->start_mark.line + 1, scalar(v) ? scalar(v) : "?", why);
				goto cleanup;
			}
			continue;
		}
		err = doc_error(errmsg, "line %zu: unknown key '%s' (the spec has 'probes' and 'budget')",
				k->start_mark.line + 1, key ? key : "?");
		goto cleanup;
	}
	if (!probes || is_null(probes))
		goto done;
	if (probes->type != YAML_SEQUENCE_NODE) {
		err = doc_error(errmsg, "line %zu: 'probes' must be a list",
				probes->start_mark.line + 1);
		goto cleanup;
	}
	size_t n = (size_t)(probes->data.sequence.items.top - probes->data.sequence.items.start);
	if (n > SPEC_MAX_PROBES) {
		/* Names are compared pairwise: keep that bounded. */
		err = doc_error(errmsg, "line %zu: %zu probes, more than %u (a pattern or a list "
				"in 'func' covers many functions in one probe)",
				probes->start_mark.line + 1, n, SPEC_MAX_PROBES);
		goto cleanup;
	}
	s->probes = calloc(n ? n : 1, sizeof(*s->probes));
	if (!s->probes) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (yaml_node_item_t *it = probes->data.sequence.items.start;
	     it < probes->data.sequence.items.top; it++) {
		err = parse_probe(&doc, yaml_document_get_node(&doc, *it), &s->probes[s->n_probes++]);
		if (err)
			goto cleanup;
	}
	err = assign_ids(s);
	if (!err)
		err = agent_spec__check_metrics(s);
	if (err)
		goto cleanup;
done:
	*out = s;
	s = NULL;
cleanup:
	agent_spec__free(s);
	if (have_doc)
		yaml_document_delete(&doc);
	if (have_parser)
		yaml_parser_delete(&parser);
	return err;
}

int agent_spec__read(const char *path, char **text, size_t *len)
{
	return file__read_all(path, SPEC_MAX_BYTES, text, len);
}

int agent_spec__load(const char *path, struct agent_spec **out, char **errmsg)
{
	char *text = NULL;
	size_t len = 0;
	int err;

	*out = NULL;
	*errmsg = NULL;
	err = agent_spec__read(path, &text, &len);
	if (err) {
		*errmsg = strdup(err == -EINVAL ? "not a regular file" : strerror(-err));
		return err;
	}
	err = agent_spec__parse(text, len, out, errmsg);
	free(text);
	return err;
}

static void probe_spec__clear(struct probe_spec *p)
{
	free(p->name);
	free(p->id);
	free(p->target);
	free(p->process);
	free(p->cgroup);
	for (size_t i = 0; i < p->n_funcs; i++)
		free(p->funcs[i]);
	free(p->funcs);
	for (size_t i = 0; i < p->n_usdts; i++)
		free(p->usdts[i]);
	free(p->usdts);
	for (size_t i = 0; i < p->n_py; i++)
		free(p->py[i]);
	free(p->py);
	free(p->metric);
	for (size_t i = 0; i < p->n_labels; i++) {
		free(p->labels[i].name);
		free(p->labels[i].value);
	}
	free(p->labels);
	free(p->log_path);
	free(p->log_clickhouse);
	free(p->arg_name);
	free(p->if_expr);
	free(p->error);
}

void agent_spec__free(struct agent_spec *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_probes; i++)
		probe_spec__clear(&s->probes[i]);
	free(s->probes);
	free(s);
}

void probe_spec__free(struct probe_spec *s)
{
	if (!s)
		return;
	probe_spec__clear(s);
	free(s);
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool probe_spec__equal(const struct probe_spec *a, const struct probe_spec *b)
{
	if (!str_eq(a->name, b->name) || !str_eq(a->id, b->id) || !str_eq(a->target, b->target) ||
	    !str_eq(a->process, b->process) || a->pid != b->pid || !str_eq(a->cgroup, b->cgroup) ||
	    a->n_funcs != b->n_funcs || a->n_usdts != b->n_usdts || a->n_py != b->n_py ||
	    a->instrument != b->instrument || a->arg != b->arg ||
	    !str_eq(a->arg_name, b->arg_name) || !str_eq(a->if_expr, b->if_expr) ||
	    !str_eq(a->metric, b->metric) || a->n_labels != b->n_labels ||
	    a->per_pid != b->per_pid || a->max_pids != b->max_pids ||
	    a->max_functions != b->max_functions ||
	    a->lifespan_ms != b->lifespan_ms || !str_eq(a->log_path, b->log_path) ||
	    !str_eq(a->log_clickhouse, b->log_clickhouse) ||
	    a->log_max_bytes != b->log_max_bytes || a->log_keep != b->log_keep ||
	    !str_eq(a->error, b->error))
		return false;
	for (size_t i = 0; i < a->n_funcs; i++)
		if (!str_eq(a->funcs[i], b->funcs[i]))
			return false;
	for (size_t i = 0; i < a->n_usdts; i++)
		if (!str_eq(a->usdts[i], b->usdts[i]))
			return false;
	for (size_t i = 0; i < a->n_py; i++)
		if (!str_eq(a->py[i], b->py[i]))
			return false;
	for (size_t i = 0; i < a->n_labels; i++)
		if (!str_eq(a->labels[i].name, b->labels[i].name) ||
		    !str_eq(a->labels[i].value, b->labels[i].value))
			return false;
	return true;
}

static int dup_str(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

struct probe_spec *probe_spec__dup(const struct probe_spec *s)
{
	struct probe_spec *d = calloc(1, sizeof(*d));
	int err = 0;

	if (!d)
		return NULL;
	*d = *s;
	d->funcs = NULL;
	d->n_funcs = 0;
	d->usdts = NULL;
	d->n_usdts = 0;
	d->py = NULL;
	d->n_py = 0;
	d->labels = NULL;
	d->n_labels = 0;
	err |= dup_str(s->name, &d->name);
	err |= dup_str(s->id, &d->id);
	err |= dup_str(s->target, &d->target);
	err |= dup_str(s->process, &d->process);
	err |= dup_str(s->cgroup, &d->cgroup);
	err |= dup_str(s->metric, &d->metric);
	err |= dup_str(s->log_path, &d->log_path);
	err |= dup_str(s->log_clickhouse, &d->log_clickhouse);
	err |= dup_str(s->arg_name, &d->arg_name);
	err |= dup_str(s->if_expr, &d->if_expr);
	err |= dup_str(s->error, &d->error);
	if (!err && s->n_funcs) {
		d->funcs = calloc(s->n_funcs, sizeof(*d->funcs));
		if (!d->funcs)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < s->n_funcs; i++, d->n_funcs++)
			err = dup_str(s->funcs[i], &d->funcs[i]);
	}
	if (!err && s->n_usdts) {
		d->usdts = calloc(s->n_usdts, sizeof(*d->usdts));
		if (!d->usdts)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < s->n_usdts; i++, d->n_usdts++)
			err = dup_str(s->usdts[i], &d->usdts[i]);
	}
	if (!err && s->n_py) {
		d->py = calloc(s->n_py, sizeof(*d->py));
		if (!d->py)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < s->n_py; i++, d->n_py++)
			err = dup_str(s->py[i], &d->py[i]);
	}
	if (!err && s->n_labels) {
		d->labels = calloc(s->n_labels, sizeof(*d->labels));
		if (!d->labels)
			err = -ENOMEM;
		for (size_t i = 0; !err && i < s->n_labels; i++, d->n_labels++) {
			err = dup_str(s->labels[i].name, &d->labels[i].name);
			if (!err)
				err = dup_str(s->labels[i].value, &d->labels[i].value);
		}
	}
	if (err) {
		probe_spec__free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}
