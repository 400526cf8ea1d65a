/*
 * profiler.h: aggregate calls in the kernel, read the aggregates from user
 * space.  Nothing per call leaves the kernel: per-CPU maps hold, per
 * function (and per process with per_pid), call counts, latency sum / min /
 * max and a log-linear latency histogram (hist.h), RSS growth, and
 * optionally a histogram of one argument.  Used by `cmon profile` and by the
 * agent (one profiler per probe spec).
 *
 * Lifecycle: profiler__new (open, configure, load) -> profiler__attach ->
 * profiler__read ... -> profiler__free (detach).
 */
#ifndef CMON_PROFILER_H
#define CMON_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "agg/hist.h"
#include "probe/resolve.h"
#include "cmon_abi.h"

struct profiler;
struct bpf_prog_run;
struct probe_calib;
struct follow;

struct profiler_opts {
	bool per_pid;        /* aggregate per (function, process) */
	int hist_arg;        /* argument index 0..5 to histogram, CMON_HIST_RET, or -1 */
	unsigned hist_bytes; /* its width, 1/2/4/8 (0: 8), and sign (hist_arg.h) */
	bool hist_signed;
	bool linear;         /* arg histogram linear: lin_min + k * lin_step */
	int64_t lin_min;
	int64_t lin_step;    /* > 0 when linear */
	bool mem;            /* read RSS at entry and return (RSS growth) */
	uint32_t max_pids;   /* per_pid: cap on distinct processes (cardinality) */
	/* Only count processes with this pid (0: any), whose comm is this
	 * (empty: any), in this cgroup v2 id (0: any) at depth
	 * FILTER_CGROUP_LEVEL or below it. */
	pid_t filter_pid;
	char filter_comm[16];
	uint64_t filter_cgroup;
	uint32_t filter_cgroup_level;
	bool follow;         /* children of the set's processes too (follow.h) */
	bool host_wide;      /* ... the libraries' links unfiltered (links.h) */
	bool focus;          /* --focus given (probe_func.focus marks them) */
	int max_depth;       /* --max-depth below the focus; -1: any */
	/* --if: programs by func_id * 2 (expr.h: expr__compile_run), or NULL.
	 * Their latency is the function's own when CALIB is set: their
	 * lat_bias_ns must be 0. */
	const struct cmon_expr_prog *exprs;
	/* The probes' own cost, taken out of every latency in the kernel
	 * before it is counted or bucketed (NULL: raw latencies). */
	const struct probe_calib *calib;
	/* A profiler replacing another on the same probes (the agent's
	 * reloads): entries count only while the gate map GATE_FD holds GEN
	 * (profiler__gate_new, profiler__gate_set).  GEN 0: no gate. */
	uint32_t gen;
	int gate_fd;
	/* Functions may be duty-cycled (profiler__duty): their counts are
	 * then scaled by the time their probes were attached. */
	bool duty;
};

struct func_profile {
	uint32_t func_id;          /* index into the probe set's funcs */
	uint32_t pid;              /* 0 unless per_pid */
	uint64_t calls;            /* entries */
	uint64_t returns;          /* completed calls: latency known */
	uint64_t noreturn;         /* abandoned calls (longjmp, exception, exit) */
	uint64_t lost;             /* entries not recorded (stack depth, memory) */
	uint64_t lat_sum_ns, lat_min_ns, lat_max_ns;
	int64_t rss_growth_sum;    /* bytes, summed over completed calls */
	uint64_t lat_hist[HIST_NBUCKETS];  /* log-linear, see hist.h */
	uint64_t arg_hist[HIST_ARG_NBUCKETS]; /* log2 (or linear) of hist_arg */
	uint64_t arg_overflow;     /* linear: values beyond the last bucket */
	uint64_t filtered;         /* --if was false: not in calls */
	/* Duty cycling: calls and filtered are estimates, what was seen
	 * scaled by elapsed / attached time; SEEN_CALLS the entries counted,
	 * SAMPLED the fraction of time the function is attached now (1:
	 * whole, every call counted).  Latencies and histograms are those
	 * of the calls seen. */
	uint64_t seen_calls;
	double sampled;
	uint64_t self_sum_ns;      /* --py: latency less the traced callees' (0: not known) */
};

/* Returns NULL and sets errno. */
struct profiler *profiler__new(const struct probe_set *set, const struct profiler_opts *opts);

/* A gate for profilers that replace one another: a map fd, or -errno. */
int profiler__gate_new(void);
/* From now on, only the profiler of generation GEN counts.  0 or -errno. */
int profiler__gate_set(int gate_fd, uint32_t gen);

/* Attach every probe of the set; nothing stays attached on failure (one
 * error line printed).  0 or -errno. */
int profiler__attach(struct profiler *p);
size_t profiler__probe_count(const struct profiler *p);
unsigned long long profiler__attach_ns(const struct profiler *p);

/* Call FN for every function (and process) with at least one call, summed
 * over CPUs, cumulative since attach.  FN returning non-zero stops the
 * walk and is returned.  With per_pid, entries that found the (function,
 * process) table full come last, as a row with pid 0 and calls = lost. */
typedef int (*profiler_read_fn)(void *ctx, const struct func_profile *fp);
int profiler__read(struct profiler *p, profiler_read_fn fn, void *ctx);

/* Calls not recorded since attach, by cause. */
struct profiler_losses {
	uint64_t depth;      /* more than CMON_STACK_DEPTH calls pending on a thread */
	uint64_t task_mem;   /* a thread's shadow stack could not be allocated */
	uint64_t table_full; /* per_pid: more than max_pids processes per function */
	uint64_t value_mem;  /* the kernel could not allocate counters (out of memory) */
	uint64_t uret_depth; /* a return nested past the kernel's uretprobes: not seen */
};
int profiler__losses(struct profiler *p, struct profiler_losses *out);

/* One line saying why LOSSES were lost ("12 with more than 128 calls
 * pending on their thread, ..."), into BUF. */
const char *profiler_losses__describe(const struct profiler_losses *l, uint32_t max_pids,
				      char *buf, size_t len);

/* BPF run time and run count of the profiler's programs (kernel stats,
 * when kernel.bpf_stats_enabled is 1), for the agent's own metrics. */
int profiler__prog_stats(const struct profiler *p, uint64_t *run_time_ns, uint64_t *run_cnt);
/* Its programs that run on the host's events (bpf_set__host_prog_stats). */
int profiler__host_prog_stats(const struct profiler *p, struct bpf_prog_run *runs);

/* Following: a descriptor readable when a followed process forks (-1:
 * none), and what to call once it was (it is readable until then). */
int profiler__wake_fd(const struct profiler *p);
void profiler__woken(struct profiler *p);

/* The followed processes (profiler_opts.follow), or NULL. */
struct follow *profiler__follow(const struct profiler *p);

/* opts.duty, attached: its duty cycler (probe/duty.h), by function id of
 * the set; NULL and errno. */
struct duty;
struct duty *profiler__duty(struct profiler *p);

void profiler__detach(struct profiler *p);
void profiler__free(struct profiler *p); /* NULL fine */

#endif
