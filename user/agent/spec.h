/*
 * spec.h: the agent's probe spec, read from a YAML (or JSON: YAML is a
 * superset) file with libyaml.
 *
 *   budget: 1%                      # optional: the share of one CPU all
 *                                   # probes may cost (agg/budget.h)
 *   probes:
 *     - name: kv_put_latency        # required, unique; [a-zA-Z_][a-zA-Z0-9_]*
 *       target: /usr/bin/app        # required: binary or library path; every
 *                                   # process mapping it, now and later
 *       process: app                # optional: only processes with this comm
 *       pid: 1234                   # optional: only this process
 *       cgroup: /sys/fs/cgroup/system.slice/app.service   # optional: only
 *                                   # processes in this cgroup v2 directory
 *                                   # (not for instrument log)
 *       func: 'kv_*'                # required: pattern as `cmon trace --func`
 *                                   # (or a list of patterns)
 *       instrument: latency         # required: count | latency | arg | log
 *       arg: 1                      # arg: 0..5, ret, or a parameter name
 *       if: 'len > 4096'            # optional: only calls where this holds,
 *                                   # as `cmon trace --if` (in the kernel)
 *       metric: app_kv_call_seconds # optional; default cmon_<name>_<suffix>
 *                                   # (suffix: calls, seconds, arg)
 *       labels: {service: kv}       # optional constant labels
 *       per_pid: false              # optional: a pid label per process
 *       max_pids: 64                # per_pid: distinct pids labelled; the
 *                                   # rest are summed into pid="other"
 *       max_functions: 200          # distinct function labels; the rest
 *                                   # are summed into function="other"
 *       lifespan: 10m               # optional: 30s, 10m, 2h, 1d, 1h30m
 *       log: {path: /var/log/cmon/kv.jsonl, max_bytes: 10485760, keep: 3}
 *                                   # instrument log: JSON Lines, rotated to
 *                                   # path.1 .. path.KEEP at max_bytes (k/M/G
 *                                   # suffixes: KiB, MiB, GiB)
 *       log: {clickhouse: 'clickhouse://HOST:8123/DB.TABLE'}
 *                                   # or into a ClickHouse table
 *                                   # (output/ch_url.h, clickhouse.h)
 *
 * A probe whose entry is invalid is kept in the spec with an error message
 * (and applied by nobody) so that it is reported and never takes the others
 * down; only a document that is not YAML, or has no `probes` list, fails as
 * a whole.
 */
#ifndef CMON_AGENT_SPEC_H
#define CMON_AGENT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum probe_instrument { INSTR_COUNT = 0, INSTR_LATENCY, INSTR_ARG, INSTR_LOG };

/* "count" "latency" "arg" "log"; parse returns 0 or -EINVAL. */
const char *probe_instrument__name(enum probe_instrument i);
int probe_instrument__parse(const char *s, enum probe_instrument *out);

struct spec_label {
	char *name, *value;
};

#define SPEC_DEFAULT_MAX_PIDS 64
#define SPEC_DEFAULT_MAX_FUNCTIONS 200
/* The bounds: each function label (times each pid label) is a series of
 * the scrape; 100,000 functions made 267,863 series, a 22 MB answer. */
#define SPEC_MAX_FUNCTIONS 10000
#define SPEC_MAX_PIDS 65536
#define SPEC_MAX_LABELLED 100000 /* max_functions x max_pids of a per_pid probe */
#define SPEC_DEFAULT_LOG_BYTES (10ull << 20)
#define SPEC_DEFAULT_LOG_KEEP 3

/* The longest lifespan: the expiry (the monotonic clock plus it) stays far
 * from wrapping. */
#define SPEC_LIFESPAN_MAX_MS (100ull * 366 * 24 * 3600 * 1000) /* 100 years */

struct probe_spec {
	char *name;    /* as written (NULL when missing) */
	char *id;      /* unique key: name, or "probe#N" / "NAME@line" when
			* missing or duplicated; what the metrics label */
	char *target;
	char *process; /* comm filter, NULL: any */
	pid_t pid;     /* 0: any */
	char *cgroup;  /* cgroup v2 directory, NULL: any */
	char **funcs;
	size_t n_funcs;
	char **usdts;       /* usdt: [FILE:]PROVIDER:NAME patterns */
	size_t n_usdts;
	char **py;          /* py: Python function patterns (with pid:, target
			     * the interpreter) */
	size_t n_py;
	enum probe_instrument instrument;
	int arg;            /* INSTR_ARG: 0..5, else -1 */
	char *arg_name;     /* INSTR_ARG: "ret" or a parameter name instead; NULL */
	char *if_expr;      /* if: a condition (filter/expr.h), NULL: every call */
	char *metric;       /* family name: the default filled in; for count
			     * without its "_total" */
	struct spec_label *labels; /* sorted by name */
	size_t n_labels;
	bool per_pid;
	uint32_t max_pids;
	uint32_t max_functions; /* function labels before function="other" */
	uint64_t lifespan_ms; /* 0: forever; at most SPEC_LIFESPAN_MAX_MS */
	char *log_path;
	char *log_clickhouse; /* instead of log_path: a clickhouse:// URL */
	uint64_t log_max_bytes;
	unsigned log_keep;
	unsigned line;  /* 1-based line of the entry in the file */
	char *error;    /* non-NULL: the entry is invalid, and why */
};

struct agent_spec {
	struct probe_spec *probes;
	size_t n_probes;
	/* budget: 1% -- the share of one CPU all probes together may cost
	 * the traced processes (agg/budget.h); 0: no budget. */
	double budget;
};

/*
 * Parse TEXT (LEN bytes).  Returns 0 and a spec (entries may carry their own
 * error), or -EINVAL with *ERRMSG set (malloc'd, "line N: ...") when the
 * document as a whole is unusable, or -ENOMEM.
 */
int agent_spec__parse(const char *text, size_t len, struct agent_spec **out, char **errmsg);

/* The bytes of PATH (a regular file of at most 4 MiB), NUL-terminated;
 * 0 or -errno (-EINVAL: not a regular file, -EFBIG: too large). */
int agent_spec__read(const char *path, char **text, size_t *len);

/* Read PATH and parse it; -errno of the read with *ERRMSG set, too. */
int agent_spec__load(const char *path, struct agent_spec **out, char **errmsg);
void agent_spec__free(struct agent_spec *s); /* NULL fine */

/* A probe whose metric name an earlier probe uses for another instrument
 * gets an error: one name, one family, one type.  agent_spec__parse does
 * this; 0 or -ENOMEM. */
int agent_spec__check_metrics(struct agent_spec *s);

/* Same probe: every field but line (and error, when both are valid). */
bool probe_spec__equal(const struct probe_spec *a, const struct probe_spec *b);

/* A deep copy; NULL and errno on failure. */
struct probe_spec *probe_spec__dup(const struct probe_spec *s);
void probe_spec__free(struct probe_spec *s); /* frees S itself; NULL fine */

/* "30s", "10m", "2h", "1d", "1h30m", "500ms" -> milliseconds; 0 or -EINVAL. */
int spec_duration__parse(const char *s, uint64_t *ms);

/* Prometheus names: metric [a-zA-Z_:][a-zA-Z0-9_:]*, label [a-zA-Z_][a-zA-Z0-9_]*. */
bool spec__valid_metric_name(const char *s);
bool spec__valid_label_name(const char *s);

#endif
