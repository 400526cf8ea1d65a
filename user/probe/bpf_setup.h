/*
 * bpf_setup.h: what making a BPF program set has in common, whichever
 * skeleton it is (event/tracer: trace.bpf.c, agg/profiler: profile.bpf.c).
 *
 * The lifecycle, each step once here, the skeleton's own parts in its user:
 *
 *   bpf_set__init         the CPU count (per-CPU values, targ_nr_cpus)
 *   bpf_set__load         open -> configure -> load, through the user's
 *                         callback, again with plain RSS reads when the
 *                         verifier refuses the cast ones; one error line
 *     BPF_SET_RODATA      (in the callback) the shared headers' settings
 *     BPF_SET_SHARED      (in the callback) their programs and maps
 *     bpf_set__prepare    (in the callback) the shared maps' sizes, the
 *                         programs made attachable
 *   bpf_set__load_exprs   --if / --on-change programs into their map, and
 *                         the indirect jumps' sites (cmon_ind_site)
 *   bpf_set__attach_lifecycle  thread exit, exec, the fork follower
 *   bpf_set__attach_probes     the probe set's uprobe_multi links
 *   bpf_set__detach_probes / bpf_set__detach / bpf_set__free
 *
 * The skeleton itself (its open, load and destroy) stays with its user.
 */
#ifndef CMON_BPF_SETUP_H
#define CMON_BPF_SETUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "probe/links.h"

struct bpf_link;
struct bpf_map;
struct bpf_program;
struct cmon_expr_prog;
struct follow;
struct probe_calib;
struct probe_set;

/* The possible CPUs (what per-CPU map values hold), at most CMON_MAX_CPUS:
 * > 0, or a negative errno. */
int bpf_setup__ncpus(void);

/* Log why the set could not be made: LOADING when the kernel or its
 * verifier refused the programs ("cannot load the BPF programs"), else
 * what was being done.  ERR is a negative errno. */
void bpf_setup__failed(bool loading, int err);

/* What both command's sets are told. */
struct bpf_set_opts {
	bool follow;        /* the targets' children too (follow.h) */
	bool host_wide;     /* following: libraries' links unfiltered (links.h) */
	/* With FOLLOW: every followed fork recorded (follow_events), for a
	 * user that needs each child's parent (--py: its interpreter). */
	bool fork_records;
	bool entry_only;    /* no return probes */
	bool mem;           /* RSS read (mem.bpf.h): a verifier that refuses the
			     * cast reads gets the helper reads */
	pid_t filter_pid;   /* filter.bpf.h: --filter-pid, --filter-comm, --filter-cgroup */
	const char *filter_comm;
	uint64_t filter_cgroup;     /* a cgroup v2 id, and its depth: it and below */
	uint32_t filter_cgroup_level;
	const struct cmon_expr_prog *exprs; /* 2 per function (--if, --on-change); NULL: none */
	/* Latencies net of traced callees' probes (shadow_stack.bpf.h's
	 * call_cost), priced with these figures; NULL or not valid: raw. */
	const struct probe_calib *callee_costs;
	/* Functions may be detached and attached again one by one (duty
	 * cycling: probe/duty.h): per-function links, and a generation per
	 * function that lets the frames of an earlier window go. */
	bool duty;
};

/* The programs and maps of the shared headers, bound by the user after
 * each open (NULL: the set has none: py_*), and what is attached. */
struct bpf_set {
	struct bpf_program *entry, *exit, *usdt, *stack_made, *step;
	struct probe_py_progs py; /* the sessions' programs prepared as such */
	struct bpf_program *thread_exit, *exec_begin, *launch_exec, *thread_exec, *follow_fork;
	/* exec_begin's stand-ins where the kernel lacks its tracepoint
	 * (bpf_set__prepare loads one of the three as exec_begin) */
	struct bpf_program *exec_begin_fentry, *exec_end;
	struct bpf_program *migrate; /* trace's staging: a thread moved to another CPU */
	struct bpf_map *followed, *follow_stats, *expr_progs, *change_last, *thread_execs;
	struct bpf_map *stack_regions, *coro_stacks, *ind_sites, *call_cost, *duty_gen,
		*duty_calls;
	volatile uint32_t *entries_closed; /* filter.bpf.h's, in the mapped .bss: set as the probes go */

	const struct probe_set *set;
	struct bpf_set_opts o;
	int ncpus;
	struct bpf_link *exit_link;     /* thread-exit tracepoint */
	struct bpf_link *py_exec_link;  /* --py: py.exec's tracepoint */
	struct bpf_link *exec_links[3]; /* exec start, launched exec, exec from a thread */
	struct probe_links *links;
	struct probe_links_opts lo;
	struct bpf_link *fork_link;     /* follow.bpf.h: children of followed processes */
	struct follow *follow;          /* NULL: not following */
	uint32_t *gens;                 /* o.duty: each function's generation */
	struct duty *duty;              /* o.duty: made at the first bpf_set__duty */
	uint64_t thread_execs_seen;     /* cmon_follow_stats.thread_execs at the last walk */
};

/* Settings every skeleton's rodata has, by the same names (the shared
 * headers: mem, lifecycle, follow, filter, exe_filter, shadow_stack, expr). */
struct bpf_targ {
	uint32_t nr_cpus, launch_pid, filter_pid, step_lead_ns, self_tgid, filter_cgroup_level;
	uint64_t page_size, comm_lo, comm_hi, filter_cgroup, exe_dev, exe_ino;
	bool mem_cast, follow, follow_wake, filter_comm, stack_switch, keyed_stacks, expr,
	     child_cost, duty;
};

/* S for SET with O (copied; FILTER_COMM and EXPRS must outlive S): the CPU
 * count checked.  0 or -errno (no line logged: bpf_set__load's caller
 * logs through bpf_setup__failed). */
int bpf_set__init(struct bpf_set *s, const struct probe_set *set, const struct bpf_set_opts *o);

/* S's settings into T; MEM_CAST: RSS read with bpf_rdonly_cast loads. */
void bpf_set__targ(const struct bpf_set *s, bool mem_cast, struct bpf_targ *t);

/* T into a skeleton's RODATA (a macro: each skeleton has its own type). */
#define BPF_SET_RODATA(rodata, t)                                                      \
	do {                                                                           \
		(rodata)->targ_nr_cpus = (t)->nr_cpus;                                 \
		(rodata)->targ_page_size = (t)->page_size;                             \
		(rodata)->targ_mem_cast = (t)->mem_cast;                               \
		(rodata)->targ_launch_pid = (t)->launch_pid;                           \
		(rodata)->targ_follow = (t)->follow;                                   \
		(rodata)->targ_follow_wake = (t)->follow_wake;                         \
		(rodata)->targ_filter_pid = (t)->filter_pid;                           \
		(rodata)->targ_self_tgid = (t)->self_tgid;                             \
		(rodata)->targ_filter_comm = (t)->filter_comm;                         \
		(rodata)->targ_comm_lo = (t)->comm_lo;                                 \
		(rodata)->targ_comm_hi = (t)->comm_hi;                                 \
		(rodata)->targ_filter_cgroup = (t)->filter_cgroup;                     \
		(rodata)->targ_filter_cgroup_level = (t)->filter_cgroup_level;         \
		(rodata)->targ_exe_dev = (t)->exe_dev;                                 \
		(rodata)->targ_exe_ino = (t)->exe_ino;                                 \
		(rodata)->targ_stack_switch = (t)->stack_switch;                       \
		(rodata)->targ_keyed_stacks = (t)->keyed_stacks;                       \
		(rodata)->targ_expr = (t)->expr;                                       \
		(rodata)->targ_step_lead_ns = (t)->step_lead_ns;                       \
		(rodata)->targ_child_cost = (t)->child_cost;                           \
		(rodata)->targ_duty = (t)->duty;                                       \
	} while (0)

/* The shared headers' programs and maps of SKEL into S (a macro, as
 * above); each skeleton binds its own entry, exit, USDT, thread-exit and
 * Python programs. */
#define BPF_SET_SHARED(s, skel)                                                        \
	do {                                                                           \
		(s)->stack_made = (skel)->progs.cmon_stack_made;                       \
		(s)->step = (skel)->progs.cmon_step;                                   \
		(s)->exec_begin = (skel)->progs.cmon_exec_begin;                       \
		(s)->exec_begin_fentry = (skel)->progs.cmon_exec_begin_fentry;         \
		(s)->exec_end = (skel)->progs.cmon_exec_end;                           \
		(s)->launch_exec = (skel)->progs.cmon_launch_exec;                     \
		(s)->thread_exec = (skel)->progs.cmon_thread_exec;                     \
		(s)->thread_execs = (skel)->maps.thread_execs;                         \
		(s)->follow_fork = (skel)->progs.cmon_follow_fork;                     \
		(s)->followed = (skel)->maps.followed;                                 \
		(s)->follow_stats = (skel)->maps.follow_stats;                         \
		(s)->expr_progs = (skel)->maps.expr_progs;                             \
		(s)->change_last = (skel)->maps.change_last;                           \
		(s)->stack_regions = (skel)->maps.stack_regions;                       \
		(s)->coro_stacks = (skel)->maps.coro_stacks;                           \
		(s)->call_cost = (skel)->maps.call_cost;                               \
		(s)->ind_sites = (skel)->maps.ind_sites;                               \
		(s)->duty_gen = (skel)->maps.duty_gen;                                 \
		(s)->duty_calls = (skel)->maps.duty_calls;                             \
		(s)->entries_closed = &(skel)->bss->entries_closed;                    \
	} while (0)

/* Before load, the programs and maps bound: the shared maps sized for the
 * set (a map is preallocated: one slot when unused), each program made
 * attachable (probe_links__prepare), the exec hook this kernel has chosen
 * (probe/host.h). */
void bpf_set__prepare(struct bpf_set *s);

/* Each USDT site's argument specs (usdt.bpf.h) into SPECS, by func_id
 * (sized to the set's functions before load).  0 or -errno. */
int bpf_set__load_usdt_specs(struct bpf_set *s, struct bpf_map *specs);

/* Each function's probe cost to its callers into call_cost (with
 * O.callee_costs).  0 or -errno. */
int bpf_set__load_call_costs(struct bpf_set *s);

/* OPEN_LOAD(CTX, MEM_CAST) opens, configures and loads the user's
 * skeleton; when it fails with MEM_CAST and o.mem, DESTROY(CTX) and once
 * more without.  0, or -errno after "cannot load the BPF programs". */
int bpf_set__load(struct bpf_set *s, int (*open_load)(void *ctx, bool mem_cast),
		  void (*destroy)(void *ctx), void *ctx);

/* After load: the --if / --on-change programs into their map.  0 or -errno. */
int bpf_set__load_exprs(struct bpf_set *s);

/* The process events: thread exit, exec (lifecycle.bpf.h), the fork
 * follower (o.follow).  0 or -errno after one error line; nothing stays
 * attached on failure. */
int bpf_set__attach_lifecycle(struct bpf_set *s);
/* The probe set's probes.  0 or -errno after one error line; nothing
 * stays attached on failure. */
int bpf_set__attach_probes(struct bpf_set *s);

/* o.duty: function FUNC_ID's probes attached again, its generation
 * bumped first (0, or -errno after one error line), or detached. */
int bpf_set__func_attach(struct bpf_set *s, uint32_t func_id);
void bpf_set__func_detach(struct bpf_set *s, uint32_t func_id);

/* The kernel's run time and run count of the set's probe programs (entry,
 * exit, step, USDT, thread exit), when kernel.bpf_stats_enabled is on (or
 * a BPF_ENABLE_STATS descriptor is held).  0 or -errno. */
int bpf_set__prog_stats(const struct bpf_set *s, uint64_t *run_ns, uint64_t *run_cnt);

/* A program's kernel run time and runs. */
struct bpf_prog_run {
	char name[48]; /* the program's (cmon_migrate ...) */
	uint64_t run_ns, run_cnt;
};
#define BPF_SET_MAX_HOST_PROGS 8

/* The set's loaded programs that run on the host's events rather than on
 * the probes' calls (process lifecycle, children followed, thread
 * migration: every exec, fork or migration on the host runs them), into
 * RUNS (BPF_SET_MAX_HOST_PROGS of room).  Their count, or -errno. */
int bpf_set__host_prog_stats(const struct bpf_set *s, struct bpf_prog_run *runs);

/* o.duty, attached: the set's duty cycler (probe/duty.h), made the first
 * time; NULL and errno. */
struct duty *bpf_set__duty(struct bpf_set *s);

/* After a poll: the probes of processes that exec'd from a thread other
 * than their leader made again, with a warning (the new program's calls
 * before that are not recorded).  0 or -errno. */
int bpf_set__reattach(struct bpf_set *s);

void bpf_set__detach_probes(struct bpf_set *s); /* the probes: no call starts or ends */
void bpf_set__detach(struct bpf_set *s);        /* everything */
void bpf_set__free(struct bpf_set *s);          /* detached and released (not S itself) */

#endif
