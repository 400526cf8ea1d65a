/*
 * tracer.h: the BPF side of a trace, from user space: open and load the
 * skeleton, attach a probe set with uprobe_multi links, drain the ring
 * buffer, read the per-function counters, detach.
 *
 * Lifecycle: tracer__new (open, configure, load) -> tracer__attach ->
 * tracer__poll ... -> tracer__detach_probes -> tracer__flush_pending ->
 * tracer__free (detach).
 */
#ifndef CMON_TRACER_H
#define CMON_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cmon_abi.h"
#include "probe/resolve.h"

struct tracer;
struct bpf_prog_run;
struct follow;

/* Called for every call record, in time order (the order they were
 * written: per-CPU batches put back in order, event/staging.h).  REC is
 * the tracer's own copy, comm terminated, valid during the call.  Return 0
 * to go on, or a negative value to stop the current poll (the record
 * counts as handled). */
typedef int (*tracer_record_fn)(void *ctx, const struct cmon_call_rec *rec);

/* Called for every capture record (what a call's arguments point to);
 * it comes before the call record it belongs to (same tid, ts_entry_ns). */
typedef int (*tracer_capture_fn)(void *ctx, const struct cmon_capture_rec *rec, size_t size);
/* --stack: a call's user stack, before its record (cmon_abi.h). */
typedef int (*tracer_stack_fn)(void *ctx, const struct cmon_stack_rec *rec);
/* --py: a Python call (cmon_py_rec), a code object seen first
 * (cmon_py_code_rec) or a call's further parameters (cmon_py_args_rec);
 * TYPE says which. */
typedef int (*tracer_py_fn)(void *ctx, __u32 type, const void *rec, size_t size);
/* With follow: a followed process PARENT forked CHILD (tgids), told in the
 * order the kernel saw the forks, each before any record of CHILD's is
 * handed on if tracer__read_forks is called when one of an unknown
 * process comes. */
typedef void (*tracer_fork_fn)(void *ctx, pid_t child, pid_t parent);

struct tracer_opts {
	bool entry_only;       /* --no-return */
	size_t ringbuf_bytes;  /* power of two; 0: default 4 MiB */
	tracer_record_fn on_record;
	tracer_capture_fn on_capture;
	void *ctx;
	/* Fetch plans, 2 per function (entry, return), indexed func_id * 2 +
	 * at_return; NULL: no captures.  Copied into the kernel at load. */
	const struct cmon_fetch_plan *plans;
	bool sleepable;        /* fault in pages that are not resident */
	/* --if / --on-change programs, 2 per function (func_id * 2 + 0: --if,
	 * + 1: --on-change; n = 0: none), or NULL. */
	const struct cmon_expr_prog *exprs;
	bool focus;            /* --focus given (probe_func.focus marks them) */
	bool line_regs;        /* --locals: line records carry the argument registers */
	tracer_stack_fn on_stack; /* non-NULL: --stack */
	/* Only these processes (0 / empty: any), decided in the kernel. */
	pid_t filter_pid;
	char filter_comm[16];
	uint64_t filter_cgroup;         /* a cgroup v2 id and below it (proc/cgroup.h) */
	uint32_t filter_cgroup_level;
	int max_depth;         /* --max-depth below the focus; -1: any */
	bool follow;           /* children of the set's processes too (follow.h) */
	bool host_wide;        /* ... the libraries' links unfiltered (links.h) */
	tracer_fork_fn on_fork; /* with follow: each fork (NULL: not asked) */
	/* cmon break: the first BREAK_COUNT hits of an entry probe are
	 * recorded (with their stack) and stop their process (SIGSTOP from
	 * BPF); later hits do nothing.  0: trace. */
	unsigned break_count;
	/* --py: the interpreter's offsets (NULL: no Python functions), how
	 * calls are seen (enum cmon_py_mode), and where its records go. */
	const struct cmon_py_offsets *py_offsets;
	unsigned py_mode;
	tracer_py_fn on_py;
	/* --py: the rows a code object met first is matched by in the kernel
	 * (pytrace__rows) */
	const struct cmon_py_pat *py_pats;
	unsigned n_py_pats;
	/* A reader thread copies the records from the ring buffer into a
	 * spool (event/spool.h) and tracer__poll hands them on from there,
	 * in order, in the caller's thread: nothing is lost while the spool
	 * has room, whatever the callbacks cost or block.  SPOOL_DIR: where
	 * its file goes (NULL: a temporary folder).  Records with a stack,
	 * Python's and break's are never spooled. */
	bool spool;
	const char *spool_dir;
	/* --blocking-timeout: a record that finds the ring buffer full waits
	 * up to this long for room, the traced thread spinning
	 * (bpf/events.bpf.h); 0: dropped and counted at once. */
	uint64_t block_ns;
	/* Functions may be duty-cycled (tracer__duty): a call whose window
	 * closed before it returned is counted in cut, not written. */
	bool duty;
};

/* Returns NULL and sets errno (EPERM: no privilege; others from libbpf). */
struct tracer *tracer__new(const struct probe_set *set, const struct tracer_opts *opts);

/* Attach every probe of SET.  On failure nothing stays attached; one error
 * line has been printed.  Returns 0 or a negative errno. */
int tracer__attach(struct tracer *t);

/* Probes (addresses x processes) attached, and the time it took in ns. */
size_t tracer__probe_count(const struct tracer *t);
unsigned long long tracer__attach_ns(const struct tracer *t);

/* Wait up to TIMEOUT_MS for the ring buffer to be woken, then read what it
 * held at that moment, no more (so a producer that never pauses cannot
 * starve the caller's checks of signals and deadlines, and a poll holds at
 * most a buffer's worth of records).
 * Returns records handled (>= 0) or a negative errno (-EINTR is not an
 * error: the caller checks its flags). */
int tracer__poll(struct tracer *t, int timeout_ms);

/* Drain without waiting and without a bound: for after the probes are
 * detached, when what is left is finite. */
int tracer__drain(struct tracer *t);

/* Detach the uprobes only: no new call starts or ends; threads that exit
 * still report their pending calls until tracer__detach. */
void tracer__detach_probes(struct tracer *t);

/* opts.duty, attached: the duty cycler of its functions (probe/duty.h);
 * NULL and errno. */
struct duty;
struct duty *tracer__duty(struct tracer *t);
/* Its probe programs' kernel run time and runs (bpf_set__prog_stats). */
int tracer__prog_stats(const struct tracer *t, uint64_t *run_ns, uint64_t *run_cnt);
/* Its programs that run on the host's events (bpf_set__host_prog_stats). */
int tracer__host_prog_stats(const struct tracer *t, struct bpf_prog_run *runs);

/* Report, as never-returned records, the calls still pending on the threads
 * of process PID (the trace is ending while they run).  Call it after
 * tracer__detach_probes, or a pending call could also be reported when it
 * returns. */
int tracer__flush_pending(struct tracer *t, pid_t pid);

/* The fork records written so far, to opts.on_fork now: the kernel wrote
 * a child's before the child ran, so once a record of the child is in
 * hand, so is its fork's.  Never from the spool's reader thread (no spool
 * with --py). */
void tracer__read_forks(struct tracer *t);

/* The followed processes (tracer_opts.follow), or NULL. */
struct follow *tracer__follow(const struct tracer *t);
/* --py: the maps py_procs, py_code and py_lost (after tracer__new). */
int tracer__py_maps(const struct tracer *t, int *procs_fd, int *code_fd, int *lost_fd);
/* --py: calls made in followed children past the MAX interpreter
 * processes traced at once (not traced; counted lost in the --py
 * function's lost_nomem too). */
uint64_t tracer__py_procs_full(const struct tracer *t, unsigned *max);

/* Counters of function FUNC_ID summed over CPUs. */
int tracer__func_stats(const struct tracer *t, unsigned func_id, struct cmon_func_stats *out);

/* Forced wakeups the programs sent (the consumer slept and the buffer
 * filled past an eighth), and the polls that slept: `-v`. */
/* What the spool took (false: no spool). */
struct spool_stats;
bool tracer__spool_stats(const struct tracer *t, struct spool_stats *out);

void tracer__wakeups(const struct tracer *t, uint64_t *wakeups, uint64_t *sleeps);
/* --blocking-timeout: the programs' waits for room, summed over CPUs. */
void tracer__room_waits(const struct tracer *t, struct cmon_room_waits *out);

/* cmon break: hits so far (each up to break_count stopped its process),
 * and those whose record did not fit (the process was not stopped). */
void tracer__break_hits(const struct tracer *t, uint64_t *hits, uint64_t *lost);

/* Detach everything now (also done by tracer__free). */
void tracer__detach(struct tracer *t);
void tracer__free(struct tracer *t);

/* Every record through the ring buffer on its own, as before per-CPU
 * staging (CMON_NO_STAGING=1 in cmon's environment, read by main: for
 * comparison).  Before any tracer__new. */
void tracer__disable_staging(void);
/* CMON_NO_SPOOL (main): no spool, whatever the options say. */
void tracer__disable_spool(void);
/* CMON_SPOOL=always (main): every record through the spool, from the
 * first (the tests' way to see that the spool changes nothing). */
void tracer__always_spool(void);
/* Tests: the ring buffer's reader takes US microseconds a call record
 * (asleep), a consumer slower than the programs on any machine
 * (CMON_TEST_SLOW_CONSUMER_US, read by main). */
void tracer__test_slow_consumer(unsigned us);
/* Test hook (CMON_TEST_PY_COUNTS_UNREAD): --py reads of the code objects'
 * counts fail in every forked child (python.bpf.h). */
void tracer__test_py_counts_unread(void);
/* Test hook (CMON_TEST_PY_PROCS_MAX): --py traces at most N interpreter
 * processes at once (py_procs' size; 1,024 otherwise). */
void tracer__test_py_procs_max(unsigned n);
/* Test hook (CMON_TEST_SPOOL_DISK_MAX): the spool's file holds at most
 * BYTES compressed (1 GiB otherwise): a spool that fills. */
void tracer__test_spool_disk_max(uint64_t bytes);

#endif
