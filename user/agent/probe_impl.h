/*
 * probe_impl.h: what the agent's probe modules share (not for the rest of
 * the agent: probe.h is the interface).
 *
 *   probe.c        a probe's life: made, started, re-attached when its
 *                  target changes, ticked, expired, freed; errors captured
 *   probe_gen.c    a generation: target and patterns resolved, a profiler
 *                  (or a tracer for `log`, Python for `py:`) attached
 *   probe_share.c  probes that count the same functions share one profiler
 *   probe_read.c   series read from the kernel, carried over, rendered
 */
#ifndef CMON_AGENT_PROBE_IMPL_H
#define CMON_AGENT_PROBE_IMPL_H

#include <pthread.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "agent/logsink.h"
#include "output/clickhouse.h"
#include "agent/probe.h"
#include "filter/expr.h"
#include "agg/hist_arg.h"
#include "agg/budget.h"
#include "agg/profiler.h"
#include "core/log.h"
#include "python/cpython.h"
#include "python/pyprof.h"
#include "elf/funcpattern.h"
#include "event/decode.h"
#include "event/pipeline.h"
#include "event/tracer.h"
#include "probe/calib.h"
#include "probe/resolve.h"
#include "probe/setunion.h"
#include "proc/cgroup.h"
#include "core/clock.h"


/* Kernel per-pid slots per function, as a multiple of the labelled ones:
 * room for processes that exited but whose counts the map still holds. */
#define KERNEL_PID_FACTOR 2

/* Longest a log probe's drain runs before the main loop gets a turn. */
#define DRAIN_BUDGET_NS (20 * 1000000ull)

struct ident {
	bool exists;
	uint64_t dev, ino, size, mtime_ns;
};

struct probe_share;

struct probe_gen {
	struct agent_probe *owner;
	struct funcpattern *patterns;
	size_t n_patterns;
	struct probe_set *set;
	char **names; /* per function: as labelled */
	size_t n_names; /* the functions named (--py adds quiet ones after) */
	/* Profiling: the share joined, and where this probe's functions are in
	 * the share's profiler (valid when attached). */
	struct probe_share *share;
	char *share_key;
	struct profiler_opts po;
	uint32_t *ids;
	bool attached;
	bool starting; /* applied when the share is attached */
	bool replacing; /* an earlier generation's counts carried over */
	struct pipeline *pipe; /* log and py: the event path */
	struct tracer *tracer; /* the pipeline's */
	struct cmon_expr_prog *exprs; /* instrument log: if:, 2 per function */
	/* py: Python functions, their records summed here */
	struct pytrace *py;
	struct pyprof *pp;
	uint32_t py_func;
	struct ident ident;
	char *cgroup_rel; /* cgroup: its path below the v2 root */
	size_t n_probes;
	double attach_ms;
	uint32_t kernel_max_pids;
	/* Instrument log under a budget: each function's duty-cycle state
	 * (its fraction stamped on its records as sampled); NULL: none. */
	struct budget_fn *bfn;
	/* Instrument log: the current drain. */
	uint64_t drained, drain_deadline_ns;
	bool drain_cut;
};

/* A share's last read of its profiler, one row per (function, pid). */
struct share_row {
	uint32_t func_id, pid;
	struct series_val v;
};

/* One profiler for the probes of one kind on one file (see probe.h). */
struct probe_share {
	struct probe_pool *pool;
	struct probe_share *next;
	char *key;
	struct profiler_opts opts;
	struct agent_probe **members; /* with a resolved generation */
	size_t n_members, cap_members;
	bool dirty;                   /* members changed: attach again */
	bool rotate;                  /* per_pid map nearly full: start a new one */
	/* Attached now. */
	struct probe_set *set;
	struct profiler *prof;
	size_t n_probes;
	double attach_ms;
	/* The gate its successive profilers share, and the generation
	 * counting now (profiler__gate_set): a reload switches at once. */
	int gate_fd;
	uint32_t gen;
	/* The last read, in round EPOCH of the pool, sorted by (func_id, pid). */
	uint64_t epoch;
	struct share_row *rows;
	size_t n_rows, cap_rows;
	uint64_t hits, run_ns, run_cnt;
	bool have_run;
	struct bpf_prog_run host[BPF_SET_MAX_HOST_PROGS]; /* profiler__host_prog_stats */
	size_t n_host;
	size_t live_keys;   /* per_pid: (function, pid) entries in the kernel map */
	uint64_t unslotted; /* per_pid: entries the map could not take */
	/* Under the pool's budget, per function of SET: the entries the
	 * last read counted, and the function's duty-cycle state. */
	uint64_t *seen;
	struct budget_fn *bfn;
};

struct probe_pool {
	struct probe_share *shares;
	uint64_t epoch;
	double budget; /* of one CPU, 0: none */
	struct budget_ledger ledger;
	double cost;   /* what the probes cost now, of one CPU (the last round) */
};

/* probe.c */
/*
 * The resolver and the loaders report a problem through log_* and return
 * an errno.  The agent needs the message itself (the probe's state carries
 * it): around an attach, this thread's messages go to a sink that keeps
 * the last error and passes the rest on, named with the probe.
 */
struct errcap {
	const char *probe;
	char *last; /* the last error, malloc'd */
};
void probe__errcap_begin(struct errcap *c, const char *probe);
char *probe__errcap_end(struct errcap *c); /* the last error (malloc'd), or NULL */
void probe__set_error(struct agent_probe *p, const char *msg);
/* Add what G counted (when READABLE) to P's carried-over values. */
void probe__fold_read(struct agent_probe *p, struct probe_gen *g, bool readable);
void probe__lock(pthread_mutex_t *m);
void probe__unlock(pthread_mutex_t *m);

/* probe_gen.c */
struct ident probe_gen__ident(const char *path);
void probe_gen__free(struct probe_gen *g);
int probe_gen__build(struct agent_probe *p, struct probe_gen **out, char **msg);

/* probe_read.c: read G (detached or not) through P's label rules into T. */
int probe_read__gen(struct agent_probe *p, struct probe_gen *g, struct series_table *t,
		    struct probe_totals *tot);

/* probe_share.c */
int probe_share__join(struct agent_probe *p, struct probe_gen *g);
void probe_share__drop(struct probe_share *sh, struct agent_probe *p);
int probe_share__refresh(struct probe_share *sh, bool force);
void probe_share__fold(struct agent_probe *p, struct probe_gen *g, bool refresh);

#endif
