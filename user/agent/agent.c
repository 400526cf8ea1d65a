// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * agent.c: `cmon agent`: the spec, the probes it names, the main loop and
 * what is served over HTTP.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "agent/agent.h"
#include "agent/http.h"
#include "agent/mappers.h"
#include "agent/privs.h"
#include "agent/probe.h"
#include "probe/calib.h"
#include "core/log.h"
#include "output/writer.h"
#include "probe/resolve.h"
#include "core/clock.h"

#define TICK_MS 1000
/* A round of the budget: often, so that a hot function is cut within a
 * fraction of a second of its first calls (each round reads the maps). */
#define BUDGET_ROUND_MS 250
/* ... and sooner while a function's rate is not known yet: it may be hot. */
#define BUDGET_FIRST_ROUND_MS 50
#define DRAIN_MS 100
#define RELOAD_DEBOUNCE_MS 200

struct agent {
	struct agent_opts opts;
	pthread_mutex_t lock;
	struct agent_probe **probes; /* in spec order */
	size_t n_probes;
	struct probe_pool *pool;     /* their shared profilers */
	double budget;               /* the spec's, of one CPU (0: none) */
	struct agent_http *http;
	int inotify_fd, sig_fd, stats_fd;
	bool watch_lost; /* the spec's directory went away: watch it again */
	char *spec_dir, *spec_base;
	char *spec_text; /* the bytes last applied */
	size_t spec_len;
	uint64_t reloads_ok, reloads_failed, attach_errors;
	double last_reload_ok_at, started_at;
	char *last_reload_error;
	bool privs_dropped;
	char privs[160];
	char addr[64]; /* where the HTTP server listens */
	/* /proc is read by the main thread for --status (the HTTP thread runs
	 * as nobody and cannot read other users' maps): the HTTP thread bumps
	 * scan_wanted and writes scan_fd, the main thread scans and publishes
	 * scanned with scan_done = the request it served, under LOCK. */
	int scan_fd;
	uint64_t scan_wanted, scan_done;
	struct mappers scanned;
	pthread_cond_t scan_cond;
};

/* ---------------------------------------------------------------- applying */

static struct agent_probe *find_probe(struct agent_probe **v, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] && !strcmp(v[i]->spec->id, id))
			return v[i];
	return NULL;
}

static void count_attach_errors(struct agent *a, size_t n)
{
	if (!n)
		return;
	pthread_mutex_lock(&a->lock);
	a->attach_errors += n;
	pthread_mutex_unlock(&a->lock);
}

static bool contains(struct agent_probe *const *v, size_t n, const struct agent_probe *p)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == p)
			return true;
	return false;
}

int agent__apply(struct agent *a, struct agent_spec *spec, bool force)
{
	struct agent_probe **next = NULL, **old = NULL, **retry = NULL;
	size_t n_old = a->n_probes, n_retry = 0, added = 0, removed = 0, changed = 0, failed = 0;
	int err = 0;

	next = calloc(spec->n_probes ? spec->n_probes : 1, sizeof(*next));
	retry = calloc(spec->n_probes ? spec->n_probes : 1, sizeof(*retry));
	old = calloc(n_old ? n_old : 1, sizeof(*old));
	if (!next || !retry || !old) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (n_old) /* probes is NULL before the first spec */
		memcpy(old, a->probes, n_old * sizeof(*old));
	/* Before any probe starts: links are split by function under a budget
	 * (a budget set or gone attaches the profiling shares again; a new
	 * value reaches them at the next round; running log probes follow
	 * below). */
	bool budget_changed = spec->budget != a->budget;

	if (budget_changed) {
		if (spec->budget > 0)
			log_info("budget: the probes may cost %g%% of one CPU", spec->budget * 100);
		else
			log_info("budget: none");
		a->budget = spec->budget;
		probe_pool__set_budget(a->pool, spec->budget);
	}
	/* New and changed probes are started before they are swapped in:
	 * nothing else sees them yet, so no lock is needed. */
	for (size_t i = 0; i < spec->n_probes; i++) {
		const struct probe_spec *ps = &spec->probes[i];
		struct agent_probe *cur = find_probe(old, n_old, ps->id);

		if (cur && probe_spec__equal(cur->spec, ps)) {
			next[i] = cur;
			if (budget_changed)
				agent_probe__budget_changed(cur, spec->budget, &a->lock);
			for (size_t k = 0; k < n_old; k++)
				if (old[k] == cur)
					old[k] = NULL;
			if (force && cur->state == PROBE_ERROR)
				retry[n_retry++] = cur;
			continue;
		}
		next[i] = agent_probe__new(ps, a->pool);
		if (!next[i]) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (agent_probe__start(next[i], NULL))
			failed++;
		if (cur)
			changed++;
		else
			added++;
	}
	/* The new probes' shares are attached before the swap (the lock is
	 * taken for the running members' counts). */
	failed += probe_pool__commit(a->pool, &a->lock);
	pthread_mutex_lock(&a->lock);
	free(a->probes);
	a->probes = next;
	a->n_probes = spec->n_probes;
	a->attach_errors += failed;
	/* Counted with the swap: whoever sees the new probes sees the count. */
	a->reloads_ok++;
	a->last_reload_ok_at = clock__wall_s();
	free(a->last_reload_error);
	a->last_reload_error = NULL;
	next = NULL;
	pthread_mutex_unlock(&a->lock);
	/* Detaching takes a moment: outside the lock, nothing refers to them. */
	for (size_t k = 0; k < n_old; k++) {
		if (!old[k])
			continue;
		if (!find_probe(a->probes, a->n_probes, old[k]->spec->id)) {
			log_info("probe %s: removed: detached", old[k]->spec->id);
			removed++;
		} else {
			log_info("probe %s: changed: replaced", old[k]->spec->id);
		}
		agent_probe__free(old[k]);
	}
	failed = 0;
	for (size_t i = 0; i < n_retry; i++)
		if (agent_probe__start(retry[i], &a->lock))
			failed++;
	/* The removed probes' shares shrink, the retried ones' attach. */
	failed += probe_pool__commit(a->pool, &a->lock);
	count_attach_errors(a, failed);
	log_info("spec applied: %zu probe%s (%zu added, %zu changed, %zu removed)",
		 a->n_probes, a->n_probes == 1 ? "" : "s", added, changed, removed);
cleanup:
	if (next) {
		/* Out of memory: what was made for the new spec goes, the
		 * running probes stay as they were. */
		for (size_t i = 0; i < spec->n_probes; i++)
			if (next[i] && !contains(a->probes, a->n_probes, next[i]))
				agent_probe__free(next[i]);
		free(next);
	}
	free(old);
	free(retry);
	return err;
}

static void set_reload_error(struct agent *a, char *msg)
{
	pthread_mutex_lock(&a->lock);
	free(a->last_reload_error);
	a->last_reload_error = msg;
	if (msg)
		a->reloads_failed++;
	pthread_mutex_unlock(&a->lock);
}

/* Read the spec and apply it.  Unless FORCE, an unchanged file is left
 * alone (an editor's or a ConfigMap's extra events).  A spec that cannot
 * be read or parsed leaves the running probes as they are. */
static int reload(struct agent *a, bool force)
{
	struct agent_spec *spec = NULL;
	char *text = NULL, *msg = NULL;
	size_t len;
	int err;

	err = agent_spec__read(a->opts.spec_path, &text, &len);
	if (err) {
		if (asprintf(&msg, "%s: %s", a->opts.spec_path,
			     err == -EINVAL ? "not a regular file" : strerror(-err)) < 0)
			msg = NULL;
		log_warn("spec not reloaded: %s (the running probes stay)", msg ? msg : "");
		set_reload_error(a, msg);
		return err;
	}
	if (!force && a->spec_text && len == a->spec_len && !memcmp(text, a->spec_text, len)) {
		free(text);
		return 0;
	}
	err = agent_spec__parse(text, len, &spec, &msg);
	if (err) {
		char *full = NULL;

		if (asprintf(&full, "%s: %s", a->opts.spec_path, msg ? msg : strerror(-err)) < 0)
			full = NULL;
		free(msg);
		log_warn("spec not reloaded: %s (the running probes stay)", full ? full : "");
		set_reload_error(a, full);
		/* Remember the bytes: the same broken file is not parsed again. */
		free(a->spec_text);
		a->spec_text = text;
		a->spec_len = len;
		return err;
	}
	err = agent__apply(a, spec, force);
	agent_spec__free(spec);
	if (!err) {
		free(a->spec_text);
		a->spec_text = text;
		a->spec_len = len;
		text = NULL;
	}
	free(text);
	return err;
}

/* ---------------------------------------------------------------- metrics */

struct family_def {
	const char *name;
	enum metric_type type;
	const char *help;
};

static const struct family_def agent_families[] = {
	{ "cmon_probe_state", METRIC_GAUGE,
	  "State of each probe of the spec: applied, error (not attached: see cmon_probe_info), "
	  "expired (lifespan over, detached, metrics kept); 1 for the current state." },
	{ "cmon_probe_info", METRIC_GAUGE,
	  "Each probe's target, instrument and metric, and the error that keeps it from being "
	  "applied (empty when none)." },
	{ "cmon_agent_probe_hits_total", METRIC_COUNTER,
	  "Calls of the probe's functions the kernel saw (entries, after the probe's process "
	  "filters; those its if: left out included)." },
	{ "cmon_agent_calls_filtered_total", METRIC_COUNTER,
	  "Calls the probe's if: condition left out (not in its counts; probes with if: only)." },
	{ "cmon_agent_events_lost_total", METRIC_COUNTER,
	  "Calls the probe could not record: full per-thread stack or map, full ring buffer, "
	  "log records not written." },
	{ "cmon_agent_bpf_run_time_seconds_total", METRIC_COUNTER,
	  "Time the kernel spent running the probe's BPF programs." },
	{ "cmon_agent_bpf_runs_total", METRIC_COUNTER,
	  "Runs of the probe's BPF programs." },
	{ "cmon_agent_bpf_host_program_runs_total", METRIC_COUNTER,
	  "Runs of the BPF programs the probe keeps that the host's events run, by program "
	  "(process exec and fork, a thread moved to another CPU: every one on the host, "
	  "traced or not); not in cmon_agent_bpf_runs_total." },
	{ "cmon_agent_bpf_host_program_run_time_seconds_total", METRIC_COUNTER,
	  "Time the kernel spent running them, by program." },
	{ "cmon_agent_probe_functions", METRIC_GAUGE,
	  "Functions the probe is attached to now." },
	{ "cmon_agent_probe_reattached_total", METRIC_COUNTER,
	  "Times the probe was attached again, its counts carried over: its binary was "
	  "replaced, or its per-process map filled up." },
	{ "cmon_agent_function_labels", METRIC_GAUGE,
	  "Functions with a function label of their own (at most the probe's max_functions)." },
	{ "cmon_agent_functions_other", METRIC_GAUGE,
	  "Functions called whose counts are summed into function=\"other\" (beyond the "
	  "probe's max_functions)." },
	{ "cmon_agent_pid_labels", METRIC_GAUGE,
	  "Processes with a pid label of their own (per_pid probes; the rest are pid=\"other\")." },
	{ "cmon_agent_log_records_total", METRIC_COUNTER,
	  "Records a log probe wrote to its file, or that its ClickHouse server took." },
	{ "cmon_agent_clickhouse_pending_records", METRIC_GAUGE,
	  "Records a log probe holds for its ClickHouse server (not inserted yet)." },
	{ "cmon_agent_clickhouse_dropped_total", METRIC_COUNTER,
	  "Records a log probe dropped because its buffer for ClickHouse was full (the server "
	  "down or slow); also in cmon_agent_events_lost_total." },
	{ "cmon_agent_clickhouse_errors_total", METRIC_COUNTER,
	  "Requests to ClickHouse that failed (no answer, or an error answer); retried." },
	{ "cmon_agent_clickhouse_up", METRIC_GAUGE,
	  "1 when the last request to the log probe's ClickHouse server succeeded." },
	{ "cmon_agent_budget_ratio", METRIC_GAUGE,
	  "The spec's budget: the share of one CPU all probes together may cost the traced "
	  "processes (absent: no budget)." },
	{ "cmon_agent_overhead_ratio", METRIC_GAUGE,
	  "What the probes cost the traced processes now, as a share of one CPU: each "
	  "function's calls per second times its measured cost per call (traps and BPF), "
	  "times its attached fraction." },
	{ "cmon_agent_function_overhead_ratio", METRIC_GAUGE,
	  "What a function's probes cost now (share of one CPU), under a budget." },
	{ "cmon_agent_sampled", METRIC_GAUGE,
	  "The fraction of time a function's probes are attached under the budget (1: every "
	  "call counted; below 1: duty-cycled, its counts estimates scaled by the time "
	  "attached, its latencies those of the calls seen)." },
	{ "cmon_agent_calls_seen_total", METRIC_COUNTER,
	  "Calls of a function its probes saw (under a budget; its count series are these "
	  "scaled up to estimates while it is duty-cycled)." },
	{ "cmon_agent_call_cost_calibrated_seconds", METRIC_GAUGE,
	  "What one call of a function costs its process as this host's calibration has it "
	  "(its traps in a hot loop, and its BPF programs' run time), under a budget." },
	{ "cmon_agent_call_cost_measured_seconds", METRIC_GAUGE,
	  "What one call of a function costs as measured on the process calling it (its CPU "
	  "time over the windows its probes were attached and detached); the budget prices "
	  "calls with it, up to 4 times the calibrated cost (under half of it, not believed: "
	  "the calibrated cost; absent until known)." },
	{ "cmon_agent_attach_errors_total", METRIC_COUNTER,
	  "Probes that could not be applied (invalid spec entry, no match, attach failure)." },
	{ "cmon_agent_spec_reloads_total", METRIC_COUNTER,
	  "Spec reloads, by result (error: the file could not be read or parsed; the running "
	  "probes stayed)." },
	{ "cmon_agent_spec_last_reload_success_timestamp_seconds", METRIC_GAUGE,
	  "When the spec was last applied (Unix time)." },
	{ "cmon_agent_series", METRIC_GAUGE,
	  "Series in this exposition, this one included." },
	{ "cmon_agent_http_connections_closed_total", METRIC_COUNTER,
	  "HTTP connections the agent closed, by reason (timeout: a request too slow to arrive "
	  "or to be read; evicted: the oldest waiting one, to make room for a new client)." },
};

static int declare_agent_families(struct expo *e)
{
	for (size_t i = 0; i < sizeof(agent_families) / sizeof(agent_families[0]); i++) {
		int err = expo__family(e, agent_families[i].name, agent_families[i].type,
				       agent_families[i].help);

		if (err)
			return err;
	}
	return 0;
}

static int render_probe_agent_metrics(const struct agent_probe *p, const struct probe_totals *t,
				      struct expo *e)
{
	const struct probe_spec *s = p->spec;
	struct metric_label l[5] = { { "probe", s->id } };
	int err = 0;

	for (int st = 0; st < PROBE_NSTATES && !err; st++) {
		l[1] = (struct metric_label){ "state", probe_state__name((enum probe_state)st) };
		err = expo__add_u64(e, "cmon_probe_state", l, 2, p->state == (enum probe_state)st);
	}
	l[1] = (struct metric_label){ "target", s->target ? s->target : "" };
	l[2] = (struct metric_label){ "instrument",
				      s->error ? "" : probe_instrument__name(s->instrument) };
	l[3] = (struct metric_label){ "metric", s->metric ? s->metric : "" };
	l[4] = (struct metric_label){ "error", p->state == PROBE_ERROR && p->error ? p->error : "" };
	if (!err)
		err = expo__add_u64(e, "cmon_probe_info", l, 5, 1);
	if (s->error)
		return err;
	if (!err)
		err = expo__add_u64(e, "cmon_agent_probe_hits_total", l, 1, t->hits);
	if (!err && s->if_expr)
		err = expo__add_u64(e, "cmon_agent_calls_filtered_total", l, 1, t->filtered);
	if (!err)
		err = expo__add_u64(e, "cmon_agent_events_lost_total", l, 1, t->lost);
	if (!err && t->have_run)
		err = expo__add(e, "cmon_agent_bpf_run_time_seconds_total", l, 1,
				(double)t->run_ns / 1e9);
	if (!err && t->have_run)
		err = expo__add_u64(e, "cmon_agent_bpf_runs_total", l, 1, t->run_cnt);
	for (size_t i = 0; i < t->n_host && !err; i++) {
		l[1] = (struct metric_label){ "program", t->host[i].name };
		err = expo__add_u64(e, "cmon_agent_bpf_host_program_runs_total", l, 2,
				    t->host[i].run_cnt);
		if (!err)
			err = expo__add(e, "cmon_agent_bpf_host_program_run_time_seconds_total", l, 2,
					(double)t->host[i].run_ns / 1e9);
	}
	if (!err)
		err = expo__add_u64(e, "cmon_agent_probe_functions", l, 1, t->functions);
	if (!err)
		err = expo__add_u64(e, "cmon_agent_probe_reattached_total", l, 1, p->reattached);
	if (!err && p->fcap)
		err = expo__add_u64(e, "cmon_agent_function_labels", l, 1, name_cap__used(p->fcap));
	if (!err && p->fcap)
		err = expo__add_u64(e, "cmon_agent_functions_other", l, 1, t->functions_other);
	if (!err && p->cap)
		err = expo__add_u64(e, "cmon_agent_pid_labels", l, 1, pid_cap__used(p->cap));
	if (!err && s->instrument == INSTR_LOG)
		err = expo__add_u64(e, "cmon_agent_log_records_total", l, 1, t->records);
	if (!err && t->ch)
		err = expo__add_u64(e, "cmon_agent_clickhouse_pending_records", l, 1, t->ch_pending);
	if (!err && t->ch)
		err = expo__add_u64(e, "cmon_agent_clickhouse_dropped_total", l, 1, t->ch_dropped);
	if (!err && t->ch)
		err = expo__add_u64(e, "cmon_agent_clickhouse_errors_total", l, 1, t->ch_errors);
	if (!err && t->ch)
		err = expo__add_u64(e, "cmon_agent_clickhouse_up", l, 1, t->ch_up);
	return err;
}

int agent__render_metrics(struct agent *a, struct mbuf *out)
{
	struct expo *e = expo__new();
	struct series_table t = {};
	struct metric_label res;
	int err;

	if (!e)
		return -ENOMEM;
	err = declare_agent_families(e);
	pthread_mutex_lock(&a->lock);
	probe_pool__next_read(a->pool);
	/* The agent's families first (declared above), then each probe's, in
	 * the order of the spec. */
	for (size_t i = 0; i < a->n_probes && !err; i++) {
		struct agent_probe *p = a->probes[i];
		struct probe_totals tot;

		/* A probe that cannot be read shows what it could read; the
		 * HTTP thread does not log (the main thread may be capturing
		 * stderr for a probe's error). */
		agent_probe__read(p, &t, &tot);
		/* A family the spec check let through with another type cannot
		 * be: leave the probe's samples out rather than the exposition. */
		if (!agent_probe__family(p, e))
			err = agent_probe__render(p, &t, e);
		if (!err)
			err = render_probe_agent_metrics(p, &tot, e);
		series_table__clear(&t);
	}
	if (!err)
		err = probe_pool__render_budget(a->pool, a->probes, a->n_probes, e);
	if (!err)
		err = expo__add_u64(e, "cmon_agent_attach_errors_total", NULL, 0, a->attach_errors);
	res = (struct metric_label){ "result", "ok" };
	if (!err)
		err = expo__add_u64(e, "cmon_agent_spec_reloads_total", &res, 1, a->reloads_ok);
	res.value = "error";
	if (!err)
		err = expo__add_u64(e, "cmon_agent_spec_reloads_total", &res, 1, a->reloads_failed);
	if (!err && a->last_reload_ok_at > 0)
		err = expo__add(e, "cmon_agent_spec_last_reload_success_timestamp_seconds", NULL, 0,
				a->last_reload_ok_at);
	pthread_mutex_unlock(&a->lock);
	if (!err && a->http) {
		uint64_t evicted, timeouts;

		agent_http__stats(a->http, &evicted, &timeouts);
		res = (struct metric_label){ "reason", "timeout" };
		err = expo__add_u64(e, "cmon_agent_http_connections_closed_total", &res, 1, timeouts);
		res.value = "evicted";
		if (!err)
			err = expo__add_u64(e, "cmon_agent_http_connections_closed_total", &res, 1,
					    evicted);
	}
	if (!err)
		err = expo__add_u64(e, "cmon_agent_series", NULL, 0, expo__series(e) + 1);
	if (!err)
		err = expo__render(e, out);
	expo__free(e);
	return err;
}

/* ---------------------------------------------------------------- status */

static void json_str(struct mbuf *b, const char *s)
{
	struct strbuf sb = {};

	if (!s) {
		mbuf__puts(b, "null");
		return;
	}
	if (json_escape(&sb, s)) {
		b->err = -ENOMEM;
	} else {
		mbuf__append(b, sb.buf, sb.len);
	}
	strbuf__release(&sb);
}

static void json_time(struct mbuf *b, double t)
{
	if (t > 0)
		mbuf__printf(b, "%.3f", t);
	else
		mbuf__puts(b, "null");
}

/* "files": [...], "processes": [{"pid": N, "comm": "..."}, ...]: the files
 * P is attached to, and the processes mapping one of them that its pid and
 * process filters let count (M: every process's mappings, by pid). */
static void status_files(struct mbuf *out, const struct agent_probe *p, const struct mappers *m)
{
	const struct probe_spec *s = p->spec;
	const struct probe_object *objs;
	size_t n = agent_probe__files(p, &objs);
	pid_t last = 0;
	bool first = true;

	mbuf__puts(out, ", \"files\": [");
	for (size_t i = 0; i < n; i++) {
		if (i)
			mbuf__puts(out, ", ");
		json_str(out, objs[i].path);
	}
	mbuf__puts(out, "], \"processes\": [");
	for (size_t k = 0; k < m->n && n; k++) {
		const struct mapping *mp = &m->v[k];
		bool hit = false;

		if (mp->pid == last || (s->pid && mp->pid != s->pid) ||
		    (s->process && strncmp(mp->comm, s->process, sizeof(mp->comm) - 1)))
			continue;
		for (size_t i = 0; i < n && !hit; i++)
			hit = objs[i].dev == mp->dev && objs[i].ino == mp->ino;
		if (!hit)
			continue;
		last = mp->pid;
		mbuf__printf(out, "%s{\"pid\": %d, \"comm\": ", first ? "" : ", ", (int)mp->pid);
		json_str(out, mp->comm);
		mbuf__puts(out, "}");
		first = false;
	}
	mbuf__puts(out, "]");
}

/* The main thread's side of a --status scan: /proc read with its
 * privileges, outside the lock (it takes a while on a busy machine). */
static void serve_scan(struct agent *a)
{
	struct mappers m = {};
	uint64_t v, wanted;

	while (read(a->scan_fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		;
	pthread_mutex_lock(&a->lock);
	wanted = a->scan_wanted;
	pthread_mutex_unlock(&a->lock);
	mappers__scan(&m); /* -ENOMEM: what it found */
	pthread_mutex_lock(&a->lock);
	mappers__clear(&a->scanned);
	a->scanned = m;
	a->scan_done = wanted;
	pthread_cond_broadcast(&a->scan_cond);
	pthread_mutex_unlock(&a->lock);
}

/* Under LOCK: a fresh scan from the main thread, waited for up to 5 s (it
 * may be applying a spec); past that the last one. */
static void wait_scan(struct agent *a)
{
	uint64_t one = 1, want = ++a->scan_wanted;
	struct timespec until;

	if (write(a->scan_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	while (a->scan_done < want)
		if (pthread_cond_timedwait(&a->scan_cond, &a->lock, &until))
			break;
}

static int status_duty(void *ctx, const struct probe_budget_row *r)
{
	struct mbuf *out = ctx;

	mbuf__puts(out, out->len && out->buf[out->len - 1] == '[' ? "\n   {\"probe\": "
								  : ",\n   {\"probe\": ");
	json_str(out, r->probe);
	mbuf__puts(out, ", \"function\": ");
	json_str(out, r->func);
	mbuf__printf(out, ", \"sampled\": %.6g, \"overhead\": %.6g, \"seen\": %llu", r->sampled,
		     r->overhead, (unsigned long long)r->seen);
	/* what a call costs: calibrated on the host, measured on its process */
	if (r->calib_ns > 0)
		mbuf__printf(out, ", \"call_ns\": %.0f", r->calib_ns);
	else
		mbuf__puts(out, ", \"call_ns\": null");
	if (r->measured_ns > 0)
		mbuf__printf(out, ", \"measured_call_ns\": %.0f}", r->measured_ns);
	else
		mbuf__puts(out, ", \"measured_call_ns\": null}");
	return 0;
}

int agent__render_status(struct agent *a, struct mbuf *out)
{
	double budget, cost;
	struct series_table t = {};
	struct mappers own = {};
	const struct mappers *m = &own;
	double now = clock__wall_s();
	uint64_t now_ms = clock__mono_ms();

	/* The HTTP thread of a privileged agent reads /proc itself. */
	if (a->opts.keep_privileges && mappers__scan(&own))
		out->err = -ENOMEM;
	pthread_mutex_lock(&a->lock);
	if (!a->opts.keep_privileges) {
		wait_scan(a);
		m = &a->scanned;
	}
	probe_pool__next_read(a->pool);
	mbuf__printf(out, "{\"agent\": {\"pid\": %d, \"listen\": ", (int)getpid());
	json_str(out, a->addr[0] ? a->addr : NULL);
	mbuf__puts(out, ", \"spec\": ");
	json_str(out, a->opts.spec_path);
	mbuf__puts(out, ", \"started_at\": ");
	json_time(out, a->started_at);
	mbuf__printf(out, ", \"reloads\": %llu, \"reload_errors\": %llu, \"last_reload_error\": ",
		     (unsigned long long)a->reloads_ok, (unsigned long long)a->reloads_failed);
	json_str(out, a->last_reload_error);
	mbuf__printf(out, ", \"attach_errors\": %llu, \"capabilities\": ",
		     (unsigned long long)a->attach_errors);
	json_str(out, a->privs_dropped ? a->privs : "all");
	/* The budget: what the probes may cost and cost now (of one CPU),
	 * and each function's duty cycle. */
	probe_pool__budget(a->pool, &budget, &cost);
	if (budget > 0) {
		mbuf__printf(out, ", \"budget\": %.6g, \"overhead\": %.6g, \"duty\": [", budget,
			     cost);
		probe_pool__budget_each(a->pool, a->probes, a->n_probes, status_duty, out);
		mbuf__puts(out, "]");
	} else {
		mbuf__puts(out, ", \"budget\": null, \"overhead\": null, \"duty\": []");
	}
	mbuf__puts(out, "},\n \"probes\": [");
	for (size_t i = 0; i < a->n_probes; i++) {
		struct agent_probe *p = a->probes[i];
		const struct probe_spec *s = p->spec;
		struct probe_totals tot;

		agent_probe__read(p, &t, &tot);
		series_table__clear(&t);
		mbuf__puts(out, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
		json_str(out, s->id);
		mbuf__puts(out, ", \"state\": ");
		json_str(out, probe_state__name(p->state));
		mbuf__puts(out, ", \"error\": ");
		json_str(out, p->state == PROBE_ERROR ? p->error : NULL);
		mbuf__puts(out, ", \"target\": ");
		json_str(out, s->target);
		mbuf__puts(out, ", \"func\": [");
		for (size_t k = 0; k < s->n_funcs; k++) {
			if (k)
				mbuf__puts(out, ", ");
			json_str(out, s->funcs[k]);
		}
		mbuf__puts(out, "], \"instrument\": ");
		json_str(out, s->error ? NULL : probe_instrument__name(s->instrument));
		mbuf__puts(out, ", \"metric\": ");
		json_str(out, s->metric);
		mbuf__puts(out, ", \"attached_at\": ");
		json_time(out, p->applied_at);
		mbuf__puts(out, ", \"expires_at\": ");
		json_time(out, p->expires_ms && p->state == PROBE_APPLIED
				       ? now + ((double)p->expires_ms - (double)now_ms) / 1e3
				       : 0);
		mbuf__puts(out, ", \"expired_at\": ");
		json_time(out, p->state == PROBE_EXPIRED ? p->expired_at : 0);
		mbuf__printf(out, ", \"functions\": %llu, \"probes\": %llu, \"hits\": %llu, "
			     "\"lost\": %llu, \"reattached\": %llu, \"records\": %llu",
			     (unsigned long long)tot.functions, (unsigned long long)tot.probes,
			     (unsigned long long)tot.hits, (unsigned long long)tot.lost,
			     (unsigned long long)p->reattached, (unsigned long long)tot.records);
		status_files(out, p, m);
		mbuf__puts(out, ", \"host_programs\": [");
		for (size_t k = 0; k < tot.n_host; k++) {
			mbuf__puts(out, k ? ", {\"name\": " : "{\"name\": ");
			json_str(out, tot.host[k].name);
			mbuf__printf(out, ", \"runs\": %llu, \"run_time_seconds\": %.9f}",
				     (unsigned long long)tot.host[k].run_cnt,
				     (double)tot.host[k].run_ns / 1e9);
		}
		mbuf__puts(out, "]}");
	}
	mbuf__puts(out, a->n_probes ? "\n ]}\n" : "]}\n");
	pthread_mutex_unlock(&a->lock);
	mappers__clear(&own);
	return out->err;
}

/* ---------------------------------------------------------------- HTTP */

static int on_http(void *ctx, const char *path, struct mbuf *body, const char **type)
{
	struct agent *a = ctx;

	if (!strcmp(path, "/metrics")) {
		*type = "text/plain; version=0.0.4; charset=utf-8";
		return agent__render_metrics(a, body) ? 500 : 200;
	}
	if (!strcmp(path, "/status")) {
		*type = "application/json";
		return agent__render_status(a, body) ? 500 : 200;
	}
	if (!strcmp(path, "/")) {
		*type = "text/html; charset=utf-8";
		mbuf__puts(body, "<html><head><title>cmon agent</title></head><body>"
				 "<h1>cmon agent</h1><p><a href=\"/metrics\">/metrics</a> "
				 "<a href=\"/status\">/status</a></p></body></html>\n");
		return 200;
	}
	mbuf__puts(body, "not found: try /metrics or /status\n");
	return 404;
}

/* ---------------------------------------------------------------- setup */

static int add_watch(struct agent *a)
{
	/* The directory, not the file: editors and config managers replace
	 * the file by a rename, which a watch on the old inode would miss.
	 * Not IN_CREATE: a file being written is read once it is closed. */
	if (inotify_add_watch(a->inotify_fd, a->spec_dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ATTRIB) < 0)
		return -errno;
	a->watch_lost = false;
	return 0;
}

static int watch_spec(struct agent *a)
{
	char *copy = strdup(a->opts.spec_path), *slash;

	if (!copy)
		return -ENOMEM;
	slash = strrchr(copy, '/');
	if (!slash) {
		a->spec_dir = strdup(".");
		a->spec_base = copy;
	} else {
		a->spec_base = strdup(slash + 1);
		*slash = 0;
		a->spec_dir = *copy ? copy : strdup("/");
		if (!*copy)
			free(copy);
	}
	if (!a->spec_dir || !a->spec_base)
		return -ENOMEM;
	a->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->inotify_fd < 0)
		return -errno;
	return add_watch(a);
}

static int block_signals(struct agent *a)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	/* Blocked before the HTTP thread starts, so it inherits the mask and
	 * every one of them is read from the signalfd. */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -EINVAL;
	signal(SIGPIPE, SIG_IGN);
	a->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return a->sig_fd < 0 ? -errno : 0;
}

/* Clients' connections and thousands of probes' links are file
 * descriptors: the soft limit (1,024 by default) up to the hard one. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		log_debug("cannot raise the open files limit: %s", strerror(errno));
}

struct agent *agent__new(const struct agent_opts *opts)
{
	struct agent_spec *spec = NULL;
	struct agent *a;
	char *msg = NULL;
	int err;

	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->opts = *opts;
	if (!a->opts.listen)
		a->opts.listen = AGENT_DEFAULT_LISTEN;
	a->inotify_fd = a->sig_fd = a->stats_fd = -1;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->scan_cond, NULL);
	a->scan_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->scan_fd < 0) {
		err = -errno;
		log_error("eventfd: %s", strerror(errno));
		goto fail;
	}
	a->started_at = clock__wall_s();
	raise_fd_limit();
	a->pool = probe_pool__new();
	if (!a->pool) {
		err = -ENOMEM;
		goto fail;
	}

	/* The spec first: a broken one is reported before anything starts. */
	err = agent_spec__read(a->opts.spec_path, &a->spec_text, &a->spec_len);
	if (err) {
		log_error("%s: %s", a->opts.spec_path,
			  err == -EINVAL ? "not a regular file" : strerror(-err));
		goto fail;
	}
	err = agent_spec__parse(a->spec_text, a->spec_len, &spec, &msg);
	if (err) {
		log_error("%s: %s", a->opts.spec_path, msg ? msg : strerror(-err));
		goto fail;
	}
	err = watch_spec(a);
	if (err) {
		log_error("cannot watch %s: %s", a->opts.spec_path, strerror(-err));
		goto fail;
	}
	err = block_signals(a);
	if (err) {
		log_error("signalfd: %s", strerror(-err));
		goto fail;
	}
	/* BPF run time per program is counted only while somebody holds this
	 * fd: the bpf() command rather than the global sysctl. */
	a->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (a->stats_fd < 0)
		log_warn("cannot enable BPF run-time statistics: %s", strerror(errno));
	/* The probes' own cost, subtracted from every latency histogram:
	 * measured once, now, while every privilege is held. */
	probe_calib__host();
	/* Its HTTP threads become nobody before they read a byte, or refuse
	 * every connection: say so now rather than serve nothing. */
	if (!a->opts.keep_privileges && agent_privs__can_drop_thread()) {
		log_error("the HTTP threads run as nobody: CAP_SETUID and CAP_SETGID are needed to "
			  "become it (and CAP_SETPCAP to empty the bounding set), or --keep-privileges");
		err = -EPERM;
		goto fail;
	}
	a->http = agent_http__start(a->opts.listen, on_http, a, !a->opts.keep_privileges);
	if (!a->http) {
		err = -errno;
		goto fail;
	}
	pthread_mutex_lock(&a->lock);
	snprintf(a->addr, sizeof(a->addr), "%s", agent_http__address(a->http));
	pthread_mutex_unlock(&a->lock);
	err = agent__apply(a, spec, false);
	if (err) {
		log_error("cannot apply the spec: %s", strerror(-err));
		goto fail;
	}
	if (!a->opts.keep_privileges) {
		err = agent_privs__drop();
		if (err)
			log_warn("could not drop every capability: %s", strerror(-err));
		pthread_mutex_lock(&a->lock);
		a->privs_dropped = true;
		agent_privs__describe(a->privs, sizeof(a->privs));
		pthread_mutex_unlock(&a->lock);
		log_info("capabilities kept: %s; no_new_privs set", a->privs);
	}
	agent_spec__free(spec);
	free(msg);
	return a;
fail:
	agent_spec__free(spec);
	free(msg);
	agent__free(a);
	errno = -err;
	return NULL;
}

/* ---------------------------------------------------------------- loop */

static bool spec_event(struct agent *a)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool hit = false;
	ssize_t n;

	while ((n = read(a->inotify_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (ev->mask & IN_IGNORED)
				a->watch_lost = true;
			/* The file, or Kubernetes' "..data" symlink swap. */
			if ((ev->mask & (IN_Q_OVERFLOW | IN_IGNORED)) ||
			    (ev->len && (!strcmp(ev->name, a->spec_base) || !strncmp(ev->name, "..", 2))))
				hit = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	return hit;
}

static bool has_log_probe(struct agent *a)
{
	for (size_t i = 0; i < a->n_probes; i++)
		if ((a->probes[i]->spec->instrument == INSTR_LOG || a->probes[i]->spec->n_py) &&
		    a->probes[i]->state == PROBE_APPLIED)
			return true; /* records to drain */
	return false;
}

int agent__run(struct agent *a)
{
	uint64_t next_tick = clock__mono_ms() + TICK_MS, reload_at = 0;
	uint64_t next_budget = clock__mono_ms() + BUDGET_ROUND_MS;
	bool stop = false, drain_more = false;
	int err = 0;

	log_info("ready: serving http://%s/metrics (%zu probe%s)", a->addr,
		 a->n_probes, a->n_probes == 1 ? "" : "s");
	while (!stop) {
		struct pollfd pfd[3] = { { .fd = a->sig_fd, .events = POLLIN },
					 { .fd = a->inotify_fd, .events = POLLIN },
					 { .fd = a->scan_fd, .events = POLLIN } };
		uint64_t now = clock__mono_ms(), wake = next_tick;

		if (a->budget > 0 && next_budget < wake)
			wake = next_budget;
		int timeout, n;

		if (reload_at && reload_at < wake)
			wake = reload_at;
		/* A lifespan ends on time, not at the next tick. */
		for (size_t i = 0; i < a->n_probes; i++) {
			uint64_t e = a->probes[i]->expires_ms;

			if (e && a->probes[i]->state == PROBE_APPLIED && e < wake) {
				wake = e;
				next_tick = e;
			}
		}
		if (drain_more)
			wake = now; /* a busy log probe: drain on, between other work */
		else if (has_log_probe(a) && now + DRAIN_MS < wake)
			wake = now + DRAIN_MS;
		timeout = wake > now ? (int)(wake - now) : 0;
		n = poll(pfd, 3, timeout);
		if (n < 0 && errno != EINTR) {
			err = -errno;
			log_error("poll: %s", strerror(errno));
			break;
		}
		if (n > 0 && (pfd[0].revents & POLLIN)) {
			struct signalfd_siginfo si;

			while (read(a->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					log_info("SIGHUP: reloading %s", a->opts.spec_path);
					reload(a, true);
					reload_at = 0;
				} else {
					log_info("%s: stopping", strsignal((int)si.ssi_signo));
					stop = true;
				}
			}
		}
		if (n > 0 && (pfd[2].revents & POLLIN))
			serve_scan(a);
		if (n > 0 && (pfd[1].revents & POLLIN) && spec_event(a))
			reload_at = clock__mono_ms() + RELOAD_DEBOUNCE_MS; /* let the writer finish */
		if (stop)
			break;
		now = clock__mono_ms();
		if (reload_at && now >= reload_at) {
			reload_at = 0;
			reload(a, false);
		}
		drain_more = false;
		for (size_t i = 0; i < a->n_probes; i++) {
			bool more;

			agent_probe__drain(a->probes[i], &more);
			drain_more |= more;
		}
		if (now >= next_tick) {
			next_tick = now + TICK_MS;
			if (a->watch_lost && !add_watch(a)) {
				log_info("watching %s again", a->spec_dir);
				reload_at = now + RELOAD_DEBOUNCE_MS;
			}
			/* Only this thread changes the list: no lock to walk it. */
			pthread_mutex_lock(&a->lock);
			probe_pool__next_read(a->pool);
			pthread_mutex_unlock(&a->lock);
			for (size_t i = 0; i < a->n_probes; i++) {
				agent_probe__tick(a->probes[i], now, &a->lock);
				if ((agent_probe__check_target(a->probes[i], &a->lock) ||
				     agent_probe__check_debuginfo(a->probes[i], &a->lock)) &&
				    a->probes[i]->state == PROBE_ERROR)
					count_attach_errors(a, 1);
			}
			/* Replaced targets, expired probes, full per-process maps. */
			count_attach_errors(a, probe_pool__commit(a->pool, &a->lock));
		}
		if (a->budget > 0 && now >= next_budget) {
			bool soon;

			pthread_mutex_lock(&a->lock);
			probe_pool__next_read(a->pool); /* the counts of now */
			pthread_mutex_unlock(&a->lock);
			soon = probe_pool__keep_budget(a->pool, a->probes, a->n_probes, &a->lock);
			next_budget = now + (soon ? BUDGET_FIRST_ROUND_MS : BUDGET_ROUND_MS);
		}
	}
	return err;
}

void agent__free(struct agent *a)
{
	if (!a)
		return;
	/* Stop serving first: nothing reads the probes while they go. */
	agent_http__stop(a->http);
	a->http = NULL;
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->n_probes; i++) {
		bool more;

		agent_probe__drain(a->probes[i], &more);
		agent_probe__free(a->probes[i]);
	}
	free(a->probes);
	a->probes = NULL;
	a->n_probes = 0;
	probe_pool__free(a->pool);
	a->pool = NULL;
	pthread_mutex_unlock(&a->lock);
	if (a->stats_fd >= 0)
		close(a->stats_fd);
	if (a->sig_fd >= 0)
		close(a->sig_fd);
	if (a->inotify_fd >= 0)
		close(a->inotify_fd);
	if (a->scan_fd >= 0)
		close(a->scan_fd);
	mappers__clear(&a->scanned);
	pthread_cond_destroy(&a->scan_cond);
	free(a->spec_dir);
	free(a->spec_base);
	free(a->spec_text);
	free(a->last_reload_error);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
