/*
 * probe.h: one probe of the agent's spec, running: resolved against its
 * target (pid 0: every process mapping the file, now and later), attached
 * with its own profiler (count, latency, arg) or tracer (log), and what it
 * carries over when it is re-attached (a replaced binary, a full per-pid
 * map) or detached (lifespan over).
 *
 * Probes that count, time or histogram functions of the same file with
 * the same filters share one profiler (one set of BPF maps and links, a
 * probe_share): a probe resolves its own functions and joins the share of
 * its kind in the agent's probe_pool, and probe_pool__commit attaches the
 * union of what changed, carrying every member's counts over.  Thousands
 * of probes on one program cost one profiler, not thousands.
 *
 * Locking: the agent holds one mutex around everything that reads or
 * changes a probe, except the slow parts of (re)attaching, which
 * agent_probe__start and agent_probe__check_target do with the lock
 * released and then swap in under it (LOCK may be NULL when nothing runs
 * concurrently, as in tests).
 */
#ifndef CMON_AGENT_PROBE_H
#define CMON_AGENT_PROBE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "agent/metrics.h"
#include "agent/series.h"
#include "agent/spec.h"
#include "probe/bpf_setup.h"

enum probe_state { PROBE_APPLIED = 0, PROBE_ERROR, PROBE_EXPIRED };
#define PROBE_NSTATES 3

const char *probe_state__name(enum probe_state s); /* "applied" "error" "expired" */

struct out_sink;
struct probe_gen; /* one attachment: resolved set + profiler share or tracer */
struct probe_pool; /* the shares of the agent's probes */

struct probe_pool *probe_pool__new(void); /* NULL and errno */
/* Attach the shares whose members changed (joined, left, re-resolved) or
 * whose per-process map is nearly full: one profiler for the union of
 * their members' functions, every member's counts carried over.  Members
 * that joined become applied (or error).  Main thread; takes LOCK for the
 * swaps.  Returns how many probes could not be applied. */
size_t probe_pool__commit(struct probe_pool *pool, pthread_mutex_t *lock);
/* A new round of reads (a scrape): each share reads its maps once in it.
 * Under the lock. */
void probe_pool__next_read(struct probe_pool *pool);
/* The share of one CPU all the pool's probes may cost (0: no budget);
 * a change attaches every share again (at the next commit). */
void probe_pool__set_budget(struct probe_pool *pool, double budget);
/* A round of the budget (agg/budget.h): each function's rate read from
 * its share, or its log probe (of PROBES), the hottest duty-cycled to keep
 * the total within it.  Main thread; takes LOCK.  True: a function's
 * rate is not known yet (the next round soon). */
struct agent_probe;
bool probe_pool__keep_budget(struct probe_pool *pool, struct agent_probe *const *probes,
			     size_t n_probes, pthread_mutex_t *lock);
/* Under a budget: cmon_agent_budget_ratio, cmon_agent_overhead_ratio and
 * per function cmon_agent_function_overhead_ratio, cmon_agent_sampled,
 * cmon_agent_calls_seen_total, cmon_agent_call_cost_calibrated_seconds and
 * cmon_agent_call_cost_measured_seconds (families declared by the caller).  Under
 * the lock.  0 or -ENOMEM. */
struct expo;
int probe_pool__render_budget(struct probe_pool *pool, struct agent_probe *const *probes,
			      size_t n_probes, struct expo *e);
/* Under a budget, each function of each probe of the pool: the probe,
 * the function's name, attached fraction, cost now (of one CPU; split
 * among the probes of a share that name it), calls seen, and what one
 * call costs as calibrated and as measured on its process (0: not yet).
 * Stops at FN's first nonzero return, returned.  Under the lock. */
struct probe_budget_row {
	const char *probe, *func;
	double sampled, overhead;
	uint64_t seen;
	double calib_ns, measured_ns;
};
typedef int (*probe_budget_fn)(void *ctx, const struct probe_budget_row *r);
int probe_pool__budget_each(struct probe_pool *pool, struct agent_probe *const *probes,
			    size_t n_probes, probe_budget_fn fn, void *ctx);
/* The pool's budget and the probes' cost now (of one CPU; 0, 0: none). */
void probe_pool__budget(const struct probe_pool *pool, double *budget, double *cost);
/* After every probe of the pool was freed.  NULL fine. */
void probe_pool__free(struct probe_pool *pool);

struct agent_probe {
	struct probe_spec *spec; /* owned copy */
	struct probe_pool *pool;
	enum probe_state state;
	char *error;             /* state error: why (one line) */
	double applied_at;       /* wall clock, s: last successful attach */
	double expired_at;       /* wall clock, s */
	uint64_t expires_ms;     /* monotonic deadline, 0: none */
	struct probe_gen *gen;   /* NULL unless attached */
	struct logsink *log;     /* instrument log: a file */
	struct out_sink *ch;     /* or a ClickHouse table (output/clickhouse.h) */
	struct pid_cap *cap;     /* per_pid */
	struct name_cap *fcap;   /* function labels (not log) */
	/* cgroup: the "cgroup" label (its v2 path), and with per_pid each
	 * process's own cgroup (below it) for its series and log records. */
	char *cgroup_label;
	struct cgroup_names *cg_names;
	/* Carried over from earlier attachments. */
	struct series_table base;
	uint64_t base_hits, base_lost, base_filtered, base_run_ns, base_run_cnt;
	struct bpf_prog_run base_host[BPF_SET_MAX_HOST_PROGS];
	size_t n_base_host;
	uint64_t log_errors;     /* records that could not be written */
	uint64_t reattached;     /* binary replacements and map rotations */
	/* The target as last seen (stat), to notice a replaced binary. */
	bool have_ident;
	uint64_t dev, ino, size, mtime_ns;
	bool change_seen;        /* identity changed at the last check */
	/* Built while debuginfod fetched a debug file it needs (untyped, or
	 * in error): built again once debuginfod__generation() moves from
	 * DWARF_GEN. */
	bool dwarf_waiting;
	unsigned dwarf_gen;
	uint64_t seen_dev, seen_ino, seen_size, seen_mtime_ns;
};

/* A probe for SPEC (copied), not attached yet; state error when the spec
 * entry is invalid.  NULL and errno. */
struct agent_probe *agent_probe__new(const struct probe_spec *spec, struct probe_pool *pool);

/* Resolve and attach (state applied), or record why not (state error).
 * A profiling probe joins its share: applied at the next
 * probe_pool__commit.  Error lines are logged prefixed with the probe's
 * name.  0 or -errno. */
int agent_probe__start(struct agent_probe *p, pthread_mutex_t *lock);

/* Periodic work of the main loop (NOW_MS monotonic): lifespan, the exited
 * processes' pid labels, a per-pid map near full.  Takes LOCK itself. */
void agent_probe__tick(struct agent_probe *p, uint64_t now_ms, pthread_mutex_t *lock);

/* Has the target file been replaced (another inode, size or mtime, stable
 * for two checks)?  Then re-resolve and re-attach, carrying the counts
 * over; a probe in error is retried when its target changed.  Returns true
 * when something was done. */
bool agent_probe__check_target(struct agent_probe *p, pthread_mutex_t *lock);

/* Has debuginfod fetched a debug file P was waiting for?  Then build it
 * again (typed now), carrying the counts over.  True when done. */
/* The pool's budget changed to BUDGET (0: none): a running log probe
 * follows it at once.  One made under a budget (its links per function)
 * in place: without one, every function attached all the time; one made
 * without is attached again with its links split.  Main thread; takes
 * LOCK. */
void agent_probe__budget_changed(struct agent_probe *p, double budget, pthread_mutex_t *lock);
bool agent_probe__check_debuginfo(struct agent_probe *p, pthread_mutex_t *lock);
/* Instrument log: move records from the ring buffer to the file, for at
 * most 20 ms (*MORE: records are left).  Main thread, without the agent's
 * lock: what the HTTP thread reads of it (records, errors) is atomic, and
 * only the main thread changes the probe.  Records handled, or -errno. */
int agent_probe__drain(struct agent_probe *p, bool *more);

/* Detach now, keeping the counts (state expired).  Under the lock. */
void agent_probe__expire(struct agent_probe *p);

struct probe_totals {
	uint64_t hits, lost;
	uint64_t filtered;          /* if: calls left out */
	uint64_t run_ns, run_cnt;
	uint64_t functions, probes; /* attached now */
	uint64_t records;           /* log: written (ClickHouse: inserted) */
	bool ch;                    /* log into ClickHouse: */
	uint64_t ch_pending, ch_dropped, ch_lost, ch_errors;
	bool ch_up;
	uint64_t functions_other;   /* called functions summed into function="other" */
	bool have_run;
	/* Its programs run by the host's events (exec, fork, migration), by
	 * name: not in run_ns/run_cnt, which are the calls' (a cost per call). */
	struct bpf_prog_run host[BPF_SET_MAX_HOST_PROGS];
	size_t n_host;
};

/* RUNS (N of them, each times PART) added to HOST (N_HOST), by name. */
void probe_totals__add_host(struct bpf_prog_run *host, size_t *n_host,
			    const struct bpf_prog_run *runs, size_t n, double part);

/* The probe's series (carried over + live, normalized) and totals.  Under
 * the lock (it may admit pids to the label cap).  0 or -errno. */
int agent_probe__read(struct agent_probe *p, struct series_table *out, struct probe_totals *tot);

/* Its samples in E (families declared by the caller via
 * agent_probe__family).  0, or -errno. */
int agent_probe__family(const struct agent_probe *p, struct expo *e);
int agent_probe__render(const struct agent_probe *p, const struct series_table *t,
			struct expo *e);

/* The files P is attached to now (*OBJS: its resolved objects, owned by
 * P), and how many; 0 when it is not attached.  Under the lock. */
struct probe_object;
size_t agent_probe__files(const struct agent_probe *p, const struct probe_object **objs);

/* Detach (outside the lock: it takes a while) and free.  NULL fine. */
void agent_probe__free(struct agent_probe *p);

#endif
