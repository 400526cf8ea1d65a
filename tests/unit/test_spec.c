// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_spec.c: the agent's probe spec: fields, defaults, JSON, per-probe
 * errors (exact messages), document errors, ids, equality, durations. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>
#include <sys/stat.h>
#include "agent/spec.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct agent_spec *parse_ok(const char *text)
{
	struct agent_spec *s = NULL;
	char *msg = NULL;
	int err = agent_spec__parse(text, strlen(text), &s, &msg);

	if (err)
		fail_msg("parse failed (%d): %s\n%s", err, msg ? msg : "", text);
	assert_null(msg);
	assert_non_null(s);
	return s;
}

static const char full_yaml[] =
	"probes:\n"
	"  - name: kv_put_latency          # unique\n"
	"    target: /usr/bin/app\n"
	"    process: app\n"
	"    pid: 1234\n"
	"    cgroup: /sys/fs/cgroup/system.slice/app.service\n"
	"    func: 'kv_*'\n"
	"    instrument: latency\n"
	"    metric: app_kv_call_seconds\n"
	"    labels: {service: kv, env: \"prod\", port: 8080}\n"
	"    per_pid: true\n"
	"    max_pids: 16\n"
	"    max_functions: 12\n"
	"    lifespan: 1h30m\n"
	"  - name: sizes\n"
	"    target: /usr/lib/libz.so.1\n"
	"    func: [deflate, 'inflate*']\n"
	"    instrument: arg\n"
	"    arg: 2\n"
	"  - name: calls\n"
	"    target: /bin/app\n"
	"    func: main\n"
	"    instrument: count\n"
	"  - name: trail\n"
	"    target: /bin/app\n"
	"    func: handle\n"
	"    instrument: log\n"
	"    log: {path: /var/log/cmon/kv.jsonl, max_bytes: 1M, keep: 5}\n";

static void test_full_example(void **state)
{
	struct agent_spec *s = parse_ok(full_yaml);
	const struct probe_spec *p;

	assert_int_equal(s->n_probes, 4);
	p = &s->probes[0];
	assert_null(p->error);
	assert_string_equal(p->name, "kv_put_latency");
	assert_string_equal(p->id, "kv_put_latency");
	assert_string_equal(p->target, "/usr/bin/app");
	assert_string_equal(p->process, "app");
	assert_int_equal(p->pid, 1234);
	assert_string_equal(p->cgroup, "/sys/fs/cgroup/system.slice/app.service");
	assert_int_equal(p->n_funcs, 1);
	assert_string_equal(p->funcs[0], "kv_*");
	assert_int_equal(p->instrument, INSTR_LATENCY);
	assert_int_equal(p->arg, -1);
	assert_string_equal(p->metric, "app_kv_call_seconds");
	/* Labels sorted by name, numbers taken as text. */
	assert_int_equal(p->n_labels, 3);
	assert_string_equal(p->labels[0].name, "env");
	assert_string_equal(p->labels[0].value, "prod");
	assert_string_equal(p->labels[1].name, "port");
	assert_string_equal(p->labels[1].value, "8080");
	assert_string_equal(p->labels[2].name, "service");
	assert_string_equal(p->labels[2].value, "kv");
	assert_true(p->per_pid);
	assert_int_equal(p->max_pids, 16);
	assert_int_equal(p->max_functions, 12);
	assert_int_equal(p->lifespan_ms, 90 * 60 * 1000);
	assert_int_equal(p->line, 2);

	p = &s->probes[1];
	assert_null(p->error);
	assert_int_equal(p->n_funcs, 2);
	assert_string_equal(p->funcs[0], "deflate");
	assert_string_equal(p->funcs[1], "inflate*");
	assert_int_equal(p->instrument, INSTR_ARG);
	assert_int_equal(p->arg, 2);
	assert_string_equal(p->metric, "cmon_sizes_arg");
	assert_false(p->per_pid);
	assert_int_equal(p->max_pids, SPEC_DEFAULT_MAX_PIDS);
	assert_int_equal(p->max_functions, SPEC_DEFAULT_MAX_FUNCTIONS);
	assert_int_equal(p->lifespan_ms, 0);
	assert_null(p->process);
	assert_int_equal(p->pid, 0);
	assert_null(p->cgroup);
	assert_int_equal(p->line, 15);

	p = &s->probes[2];
	assert_null(p->error);
	assert_string_equal(p->metric, "cmon_calls_calls");
	assert_int_equal(p->instrument, INSTR_COUNT);

	p = &s->probes[3];
	assert_null(p->error);
	assert_int_equal(p->instrument, INSTR_LOG);
	assert_null(p->metric);
	assert_string_equal(p->log_path, "/var/log/cmon/kv.jsonl");
	assert_int_equal(p->log_max_bytes, 1 << 20);
	assert_int_equal(p->log_keep, 5);
	agent_spec__free(s);
}

/* The same probes written as JSON (as json.dumps(indent=2) writes it). */
static void test_json(void **state)
{
	static const char json[] =
		"{\n"
		"  \"probes\": [\n"
		"    {\n"
		"      \"name\": \"kv\",\n"
		"      \"target\": \"/usr/bin/app\",\n"
		"      \"func\": \"kv_*\",\n"
		"      \"instrument\": \"latency\",\n"
		"      \"labels\": {\"service\": \"kv\"},\n"
		"      \"per_pid\": true,\n"
		"      \"pid\": 42,\n"
		"      \"lifespan\": \"30s\"\n"
		"    },\n"
		"    {\"name\": \"t\", \"target\": \"/a\", \"func\": [\"x\", \"y\"], "
		"\"instrument\": \"log\", \"log\": {\"path\": \"/tmp/t.jsonl\", \"keep\": 0, "
		"\"max_bytes\": \"10M\"}}\n"
		"  ]\n"
		"}\n";
	struct agent_spec *s = parse_ok(json);

	assert_int_equal(s->n_probes, 2);
	assert_null(s->probes[0].error);
	assert_string_equal(s->probes[0].metric, "cmon_kv_seconds");
	assert_true(s->probes[0].per_pid);
	assert_int_equal(s->probes[0].pid, 42);
	assert_int_equal(s->probes[0].lifespan_ms, 30000);
	assert_int_equal(s->probes[0].n_labels, 1);
	assert_null(s->probes[1].error);
	assert_int_equal(s->probes[1].n_funcs, 2);
	assert_int_equal(s->probes[1].log_keep, 0);
	/* a size with its unit, quoted: JSON's only way (it was refused) */
	assert_int_equal(s->probes[1].log_max_bytes, 10 << 20);
	agent_spec__free(s);
}

/* One invalid probe among valid ones: it carries its message, the others
 * are untouched. */
static const struct {
	const char *entry; /* the second probe, indented under "probes:" */
	const char *id;
	const char *error;
} bad_probes[] = {
	{ "  - {target: /a, func: f, instrument: count}\n", "probe#2",
	  "line 3: a probe needs a 'name'" },
	{ "  - {name: 'a b', target: /a, func: f, instrument: count}\n", "a b",
	  "line 3: name 'a b' is not valid ([a-zA-Z_][a-zA-Z0-9_]*)" },
	{ "  - {name: b, func: f, instrument: count}\n", "b",
	  "line 3: probe 'b' needs a 'target' (binary or library path)" },
	{ "  - {name: b, target: bin/app, func: f, instrument: count}\n", "b",
	  "line 3: 'target' must be an absolute path, not 'bin/app'" },
	{ "  - {name: b, target: /a, instrument: count}\n", "b",
	  "line 3: probe 'b' needs a 'func' (or 'usdt', 'py') pattern" },
	{ "  - {name: b, target: /a, py: f, instrument: count}\n", "b",
	  "line 3: 'py' needs 'pid' (the interpreter's process; 'target' its executable)" },
	{ "  - {name: b, target: /a, pid: 1, py: f, func: g, instrument: count}\n", "b",
	  "line 3: 'py' takes Python functions alone: no 'func' or 'usdt'" },
	{ "  - {name: b, target: /a, pid: 1, py: f, instrument: log, log: {path: /tmp/x}}\n", "b",
	  "line 3: 'py' takes instrument count or latency" },
	{ "  - {name: b, target: /a, func: f, instrument: histogram}\n", "b",
	  "line 3: 'instrument' must be count, latency, arg or log" },
	{ "  - {name: b, target: /a, func: f, instrument: arg}\n", "b",
	  "line 3: instrument arg needs 'arg' (0..5, ret or a parameter name)" },
	{ "  - {name: b, target: /a, func: f, instrument: arg, arg: 6}\n", "b",
	  "line 3: 'arg' is too large (at most 5)" },
	{ "  - {name: b, target: /a, func: f, instrument: arg, arg: len-x}\n", "b",
	  "line 3: 'arg' must be 0..5, ret or a parameter name, not 'len-x'" },
	{ "  - {name: b, target: /a, func: f, instrument: count, max_functions: 100000}\n", "b",
	  "line 3: 'max_functions' is too large (at most 10000)" },
	{ "  - {name: b, target: /a, func: f, instrument: count, max_functions: 10000}\n", "b",
	  NULL },
	{ "  - {name: b, target: /a, func: f, instrument: count, per_pid: true, max_pids: 65537}\n",
	  "b", "line 3: 'max_pids' is too large (at most 65536)" },
	{ "  - {name: b, target: /a, func: f, instrument: count, per_pid: true, max_pids: 1000,\n"
	  "     max_functions: 101}\n", "b",
	  "line 3: 'max_functions' x 'max_pids' is 101000: at most 100000 series a probe" },
	/* what a spec quotes stays on one line (a line end in a key) */
	{ "  - {name: b, target: /a, func: f, instrument: count, \"a\\nb\": 1}\n", "b",
	  "line 3: unknown key 'a\\nb'" },
	/* a key given twice is refused before it is parsed again (it leaked) */
	{ "  - {name: b, target: /a, func: f, func: g, instrument: count}\n", "b",
	  "line 3: key 'func' given twice" },
	{ "  - {name: b, target: /a, func: f, instrument: count, arg: 1}\n", "b",
	  "line 3: 'arg' is only for instrument arg" },
	{ "  - {name: b, target: /a, func: f, instrument: count, if: 'a > (b'}\n", "b",
	  "line 3: 'if': expected ')' at column 7: a > (b" },
	{ "  - {name: b, target: /a, func: f, instrument: count, if: [a]}\n", "b",
	  "line 3: 'if' must be a string" },
	{ "  - {name: b, target: /a, func: f, instrument: log}\n", "b",
	  "line 3: instrument log needs 'log: {path: ...}' or 'log: {clickhouse: URL}'" },
	{ "  - {name: b, target: /a, func: f, instrument: log, log: {max_bytes: 9000}}\n", "b",
	  "line 3: 'log' needs a 'path' or a 'clickhouse' URL (one of them)" },
	{ "  - {name: b, target: /a, func: f, instrument: log, log: {path: /l, "
	  "clickhouse: 'clickhouse://h/d.t'}}\n", "b",
	  "line 3: 'log' needs a 'path' or a 'clickhouse' URL (one of them)" },
	{ "  - {name: b, target: /a, func: f, instrument: log, log: {clickhouse: "
	  "'clickhouse://h:99999/d.t'}}\n", "b",
	  "line 3: 'log.clickhouse': bad ClickHouse URL: bad port (1-65535)" },
	{ "  - {name: b, target: /a, func: f, instrument: log, log: {path: /l, max_bytes: 10}}\n",
	  "b", "line 3: 'log.max_bytes' must be at least 4096" },
	{ "  - {name: b, target: /a, func: f, instrument: log, log: {path: /l}, metric: m}\n", "b",
	  "line 3: instrument log writes records, not a metric: 'metric', 'labels' and "
	  "'per_pid' do not apply" },
	{ "  - {name: b, target: /a, func: f, instrument: count, log: {path: /l}}\n", "b",
	  "line 3: 'log' is only for instrument log" },
	{ "  - {name: b, target: /a, func: f, instrument: count, lifespan: 10}\n", "b",
	  "line 3: 'lifespan' must be a duration with a unit: 30s, 10m, 2h, 1d, 1h30m" },
	/* 2^64 ms or so: its expiry wrapped and the probe expired at once */
	{ "  - {name: b, target: /a, func: f, instrument: count, lifespan: 18446744073709551s}\n",
	  "b", "line 3: 'lifespan' is over 100 years: leave it out for a probe that does not "
	  "expire" },
	{ "  - {name: b, target: /a, func: f, instrument: count, pid: -3}\n", "b",
	  "line 3: 'pid' must be a non-negative integer" },
	{ "  - {name: b, target: /a, func: f, instrument: count, pid: 0}\n", "b",
	  "line 3: 'pid' must be a process id (> 0)" },
	{ "  - {name: b, target: /a, func: f, instrument: count, process: averyveryverylongname}\n",
	  "b", "line 3: 'process' must be a process name of 1 to 15 bytes (as in /proc/PID/comm)" },
	{ "  - {name: b, target: /a, func: f, instrument: count, cgroup: system.slice}\n", "b",
	  "line 3: 'cgroup' must be the absolute path of a cgroup v2 directory" },
	{ "  - {name: b, target: /a, func: f, instrument: count, per_pid: maybe}\n", "b",
	  "line 3: 'per_pid' must be true or false" },
	{ "  - {name: b, target: /a, func: f, instrument: count, max_pids: 8}\n", "b",
	  "line 3: 'max_pids' needs 'per_pid: true'" },
	{ "  - {name: b, target: /a, func: f, instrument: count, max_functions: 0}\n", "b",
	  "line 3: 'max_functions' must be at least 1" },
	{ "  - {name: b, target: /a, func: f, instrument: count, labels: {probe: x}}\n", "b",
	  "line 3: label name 'probe' is reserved" },
	{ "  - {name: b, target: /a, func: f, instrument: count, labels: {__x: y}}\n", "b",
	  "line 3: label name '__x' is reserved" },
	{ "  - {name: b, target: /a, func: f, instrument: count, labels: {a-b: y}}\n", "b",
	  "line 3: label name 'a-b' is not valid ([a-zA-Z_][a-zA-Z0-9_]*)" },
	{ "  - {name: b, target: /a, func: f, instrument: count, labels: [a]}\n", "b",
	  "line 3: 'labels' must be a mapping of label names to values" },
	{ "  - {name: b, target: /a, func: f, instrument: count, metric: 'x-y'}\n", "b",
	  "line 3: metric name 'x-y' is not valid ([a-zA-Z_:][a-zA-Z0-9_:]*)" },
	{ "  - {name: b, target: /a, func: f, instrument: latency, metric: x_total}\n", "b",
	  "line 3: metric name 'x_total' ends with a suffix Prometheus reserves (_total, "
	  "_bucket, _count, _sum)" },
	{ "  - {name: b, target: /a, func: f, instrument: count, metric: x_count}\n", "b",
	  "line 3: metric name 'x_count' ends with a suffix Prometheus reserves (_total, "
	  "_bucket, _count, _sum)" },
	{ "  - {name: b, target: /a, func: f, instrument: count, metric: cmon_agent_x}\n", "b",
	  "line 3: metric names cmon_agent_* and cmon_probe_* are the agent's own" },
	{ "  - {name: b, target: /a, func: f, instrument: count, colour: red}\n", "b",
	  "line 3: unknown key 'colour'" },
	{ "  - {name: b, target: /a, func: f, instrument: count, target: /b}\n", "b",
	  "line 3: key 'target' given twice" },
	{ "  - {name: b, target: /a, func: [], instrument: count}\n", "b",
	  "line 3: 'func' is an empty list" },
	{ "  - {name: b, target: /a, func: {x: 1}, instrument: count}\n", "b",
	  "line 3: 'func' must be a pattern or a list of patterns" },
	{ "  - {name: b, target: /a, func: f, instrument: count, log: {path: /l, rotate: 1}}\n", "b",
	  "line 3: unknown key 'log.rotate' (path, max_bytes, keep, clickhouse)" },
	{ "  - just a string\n", "probe#2", "line 3: a probe must be a mapping (name: ..., target: ...)" },
	/* Same name as the first probe. */
	{ "  - {name: ok, target: /a, func: f, instrument: count}\n", "ok@line3",
	  "line 3: probe name 'ok' is used twice" },
	/* Same metric as the first probe, another instrument. */
	{ "  - {name: b, target: /a, func: f, instrument: latency, metric: shared}\n", "b",
	  "line 3: metric 'shared' is already probe 'ok''s count metric: a name has one type" },
};

static void test_bad_probes(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_probes); i++) {
		char text[1024];
		struct agent_spec *s;

		snprintf(text, sizeof(text),
			 "probes:\n"
			 "  - {name: ok, target: /bin/x, func: f, instrument: count, metric: shared}\n"
			 "%s"
			 "  - {name: last, target: /bin/x, func: g, instrument: count}\n",
			 bad_probes[i].entry);
		s = parse_ok(text);
		assert_int_equal(s->n_probes, 3);
		assert_null(s->probes[0].error);
		assert_string_equal(s->probes[0].id, "ok");
		if (!bad_probes[i].error) { /* the bound itself: accepted */
			if (s->probes[1].error)
				fail_msg("case %zu: %s", i, s->probes[1].error);
			agent_spec__free(s);
			continue;
		}
		if (!s->probes[1].error)
			fail_msg("case %zu: no error for %s", i, bad_probes[i].entry);
		if (strcmp(s->probes[1].error, bad_probes[i].error))
			fail_msg("case %zu: error\n  %s\nexpected\n  %s", i, s->probes[1].error,
				 bad_probes[i].error);
		assert_string_equal(s->probes[1].id, bad_probes[i].id);
		assert_null(s->probes[2].error);
		assert_string_equal(s->probes[2].id, "last");
		agent_spec__free(s);
	}
}

static const struct {
	const char *text;
	const char *error;
} bad_docs[] = {
	{ "probes: [\n", "line 2: did not find expected node content while parsing a flow node" },
	{ "probes:\n  - name: a\n - target: b\n",
	  "line 3: did not find expected key while parsing a block mapping" },
	{ "- a\n- b\n", "line 1: the spec must be a mapping with a 'probes' list" },
	{ "probes: 3\n", "line 1: 'probes' must be a list" },
	{ "probes: []\nextra: 1\n",
	  "line 2: unknown key 'extra' (the spec has 'probes' and 'budget')" },
	{ "budget: 2\nprobes: []\n",
	  "line 1: budget: '2': a budget is a percentage of one CPU: 0.5%, 1%, 100%" },
	{ "probes: []\nbudget: 150%\n",
	  "line 2: budget: '150%': a budget is at most 100 % (one CPU)" },
	{ "budget: 0%\n", "line 1: budget: '0%': a budget of 0 % leaves no probe: more than 0 %" },
	{ "budget: [1]\n",
	  "line 1: budget: '?': a budget is a percentage of one CPU: 0.5%, 1%, 100%" },
};

static void test_budget(void **state)
{
	const char *text = "budget: 0.5%\nprobes: []\n";
	struct agent_spec *s = NULL;
	char *msg = NULL;

	assert_int_equal(agent_spec__parse(text, strlen(text), &s, &msg), 0);
	assert_true(s->budget == 0.005);
	agent_spec__free(s);
	text = "probes: []\n";
	assert_int_equal(agent_spec__parse(text, strlen(text), &s, &msg), 0);
	assert_true(s->budget == 0);
	agent_spec__free(s);
}

static void test_bad_documents(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_docs); i++) {
		struct agent_spec *s = (void *)1;
		char *msg = NULL;
		int err = agent_spec__parse(bad_docs[i].text, strlen(bad_docs[i].text), &s, &msg);

		assert_int_equal(err, -EINVAL);
		assert_null(s);
		assert_non_null(msg);
		if (strcmp(msg, bad_docs[i].error))
			fail_msg("doc %zu: %s (expected %s)", i, msg, bad_docs[i].error);
		free(msg);
	}
}

static void test_empty_documents(void **state)
{
	static const char *const texts[] = { "", "# nothing yet\n", "probes:\n", "probes: []\n",
					      "{}\n" };

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct agent_spec *s = parse_ok(texts[i]);

		assert_int_equal(s->n_probes, 0);
		agent_spec__free(s);
	}
}

static void test_nul_byte(void **state)
{
	static const char text[] = "probes:\n\0  - x\n";
	struct agent_spec *s = NULL;
	char *msg = NULL;

	assert_int_equal(agent_spec__parse(text, sizeof(text) - 1, &s, &msg), -EINVAL);
	assert_string_equal(msg, "the spec holds a NUL byte (not a text file?)");
	free(msg);
}

static void test_count_metric_total(void **state)
{
	struct agent_spec *s = parse_ok(
		"probes:\n"
		"  - {name: a, target: /x, func: f, instrument: count, metric: app_calls_total}\n"
		"  - {name: b, target: /x, func: g, instrument: count, metric: app_calls}\n");

	/* Both are the family app_calls_total: one name, written two ways. */
	assert_string_equal(s->probes[0].metric, "app_calls");
	assert_string_equal(s->probes[1].metric, "app_calls");
	assert_null(s->probes[1].error);
	agent_spec__free(s);
}

static void test_equal_and_dup(void **state)
{
	struct agent_spec *a = parse_ok(full_yaml);
	/* The same probes, moved down two lines, one label value changed. */
	struct agent_spec *b;
	char *moved = NULL;
	struct probe_spec *d;

	assert_true(asprintf(&moved, "# a comment\n\n%s", full_yaml) > 0);
	b = parse_ok(moved);
	for (size_t i = 0; i < a->n_probes; i++) {
		assert_int_not_equal(a->probes[i].line, b->probes[i].line);
		assert_true(probe_spec__equal(&a->probes[i], &b->probes[i]));
	}
	free(b->probes[0].labels[2].value);
	b->probes[0].labels[2].value = strdup("other");
	assert_false(probe_spec__equal(&a->probes[0], &b->probes[0]));
	assert_false(probe_spec__equal(&a->probes[0], &a->probes[1]));

	d = probe_spec__dup(&a->probes[0]);
	assert_non_null(d);
	assert_true(probe_spec__equal(d, &a->probes[0]));
	assert_ptr_not_equal(d->funcs[0], a->probes[0].funcs[0]);
	assert_ptr_not_equal(d->labels[1].value, a->probes[0].labels[1].value);
	probe_spec__free(d);
	d = probe_spec__dup(&a->probes[3]);
	assert_true(probe_spec__equal(d, &a->probes[3]));
	probe_spec__free(d);
	probe_spec__free(NULL);
	agent_spec__free(NULL);
	agent_spec__free(a);
	agent_spec__free(b);
	free(moved);

	/* if: parsed, compared, copied */
	a = parse_ok("probes:\n  - {name: c, target: /a, func: f, instrument: count, "
		     "if: 'len > 4096 && m == \"GET\"'}\n");
	b = parse_ok("probes:\n  - {name: c, target: /a, func: f, instrument: count, "
		     "if: 'len > 4097'}\n");
	assert_string_equal(a->probes[0].if_expr, "len > 4096 && m == \"GET\"");
	assert_false(probe_spec__equal(&a->probes[0], &b->probes[0]));
	d = probe_spec__dup(&a->probes[0]);
	assert_true(probe_spec__equal(d, &a->probes[0]));
	assert_ptr_not_equal(d->if_expr, a->probes[0].if_expr);
	probe_spec__free(d);
	agent_spec__free(a);
	agent_spec__free(b);
}

static void test_durations(void **state)
{
	static const struct {
		const char *s;
		int err;
		uint64_t ms;
	} cases[] = {
		{ "30s", 0, 30000 },   { "10m", 0, 600000 },     { "2h", 0, 7200000 },
		{ "1d", 0, 86400000 }, { "1h30m", 0, 5400000 },   { "500ms", 0, 500 },
		{ "1m1ms", 0, 60001 }, { "0s", 0, 0 },            { "10", -EINVAL, 0 },
		{ "", -EINVAL, 0 },    { "s", -EINVAL, 0 },       { "5x", -EINVAL, 0 },
		{ "-5s", -EINVAL, 0 }, { "1.5h", -EINVAL, 0 },    { "5 s", -EINVAL, 0 },
		{ "99999999999999999999s", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t ms = 12345;
		int err = spec_duration__parse(cases[i].s, &ms);

		if (err != cases[i].err)
			fail_msg("'%s': %d, expected %d", cases[i].s, err, cases[i].err);
		if (!err)
			assert_int_equal(ms, cases[i].ms);
	}
}

static void test_names(void **state)
{
	assert_true(spec__valid_metric_name("a:b_c9"));
	assert_true(spec__valid_metric_name("_x"));
	assert_false(spec__valid_metric_name("9x"));
	assert_false(spec__valid_metric_name(""));
	assert_false(spec__valid_metric_name("a.b"));
	assert_true(spec__valid_label_name("service"));
	assert_false(spec__valid_label_name("a:b"));
	assert_false(spec__valid_label_name("é"));
	assert_string_equal(probe_instrument__name(INSTR_ARG), "arg");
}

static void test_load_missing(void **state)
{
	struct agent_spec *s = (void *)1;
	char *msg = NULL;

	assert_int_equal(agent_spec__load("/nonexistent/cmon.yaml", &s, &msg), -ENOENT);
	assert_null(s);
	assert_string_equal(msg, "No such file or directory");
	free(msg);
}

/* A FIFO is refused at once: no waiting for a writer. */
static void test_load_fifo(void **state)
{
	char dir[] = "/tmp/cmon-test-spec-XXXXXX", path[64];
	struct agent_spec *s = (void *)1;
	char *msg = NULL;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(agent_spec__load(path, &s, &msg), -EINVAL);
	assert_null(s);
	assert_string_equal(msg, "not a regular file");
	free(msg);
	unlink(path);
	rmdir(dir);
}

/* TEXT = PREFIX, then N times OPEN. */
static char *nested(const char *prefix, const char *open, size_t n)
{
	size_t pl = strlen(prefix), ol = strlen(open);
	char *t = malloc(pl + n * ol + 2);

	assert_non_null(t);
	memcpy(t, prefix, pl);
	for (size_t i = 0; i < n; i++)
		memcpy(t + pl + i * ol, open, ol);
	strcpy(t + pl + n * ol, "\n");
	return t;
}

/* Deep nesting is refused by its depth, before libyaml spends time on it
 * (100,000 '[' took it 10 s); 64 levels are fine. */
static void test_too_deep(void **state)
{
	static const struct {
		const char *prefix, *open;
		size_t n;
		int err;
		const char *msg;
	} cases[] = {
		{ "probes: ", "[", 100000, -EINVAL, "line 1: nested more than 64 levels deep" },
		{ "", "{\"a\": ", 100000, -EINVAL, "line 1: nested more than 64 levels deep" },
		{ "", "- ", 1000, -EINVAL, "line 1: nested more than 64 levels deep" },
		/* 63 flow levels under the root mapping: deep, not too deep (not a spec). */
		{ "probes: ", "[", 63, -EINVAL, "line 2: did not find expected node content while "
						 "parsing a flow node" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *text = nested(cases[i].prefix, cases[i].open, cases[i].n);
		struct agent_spec *s = (void *)1;
		char *msg = NULL;

		assert_int_equal(agent_spec__parse(text, strlen(text), &s, &msg), cases[i].err);
		assert_null(s);
		if (strcmp(msg, cases[i].msg))
			fail_msg("case %zu: %s (expected %s)", i, msg, cases[i].msg);
		free(msg);
		free(text);
	}
}

/* More probes than names can be compared pairwise in reasonable time. */
static void test_too_many_probes(void **state)
{
	char *text = nested("probes:\n", "  - {name: a, target: /bin/true, func: main}\n", 10001);
	struct agent_spec *s = (void *)1;
	char *msg = NULL;

	assert_int_equal(agent_spec__parse(text, strlen(text), &s, &msg), -EINVAL);
	assert_null(s);
	assert_string_equal(msg, "line 2: 10001 probes, more than 10000 (a pattern or a list in "
				 "'func' covers many functions in one probe)");
	free(msg);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_example),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_bad_probes),
		cmocka_unit_test(test_bad_documents),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_empty_documents),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_count_metric_total),
		cmocka_unit_test(test_equal_and_dup),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_load_missing),
		cmocka_unit_test(test_load_fifo),
		cmocka_unit_test(test_too_deep),
		cmocka_unit_test(test_too_many_probes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
