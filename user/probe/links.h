/*
 * links.h: attach a probe set's entry and exit programs, one uprobe_multi
 * link per (process, file, kind), and detach them all at once.  Shared by
 * every subcommand: trace, profile and the agent attach the same way, with
 * their own BPF programs behind the same cookie layout (cmon_abi.h).
 */
#ifndef CMON_LINKS_H
#define CMON_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include "probe/resolve.h"

struct probe_links;
struct bpf_program;
struct bpf_map;
struct bpf_link;

/* The Python programs (python.bpf.h), as probe_links_opts.py says. */
struct probe_py_progs {
	struct bpf_program *eval_entry, *eval_sess, *vc_entry, *vc_sess, *exit;
	struct bpf_program *newfunc, *start;
	/* sched_process_exec: a traced interpreter's process, or its child,
	 * exec'd (python.bpf.h cmon_py_exec); attached with the lifecycle's */
	struct bpf_program *exec;
	/* The evaluator's entry and EXIT inherited across fork (inherit.h,
	 * probe_links__py_inherits), loaded as perf-event programs; its
	 * returns seen at its return instructions by RET_INSN where they are
	 * known (probe_func.exits), no return probe held per frame. */
	bool inherit;
	struct bpf_program *ret_insn;
};

struct probe_links_opts {
	struct bpf_program *entry_prog;
	struct bpf_program *exit_prog; /* ignored when entry_only */
	/* shadow_stack.bpf.h's cmon_step, on the step probes of the
	 * functions timed from there (probe_func__step_timed); NULL: none. */
	struct bpf_program *step_prog;
	struct bpf_program *usdt_prog; /* USDT sites (probe_func.usdt); NULL: none */
	/* shadow_stack.bpf.h's cmon_stack_made, on the objects' stack makers
	 * when set->stack_switch. */
	struct bpf_program *stack_made_prog;
	/* probe_func.python (enum probe_python): the evaluator's and the
	 * vectorcall entry's programs, an uprobe session each (*_sess, when
	 * loaded) or an entry with EXIT as their uretprobe (NULL exit: the
	 * entries alone: cmon break stops at entry, no return to see); the
	 * constructors' uretprobe, the start's uprobe.  NULL: none. */
	struct probe_py_progs py;
	bool entry_only;
	/* Follow the targets' children (follow.h): each process target's
	 * executable is attached once without a pid filter. */
	bool follow;
	/* --host-wide-probes, while following: the libraries' links too have
	 * no pid filter, made before the program runs, so that no child is
	 * missed however short its life (the BPF side keeps the followed
	 * processes); every process on the host calling them traps. */
	bool host_wide;
	/* Each function's links apart, so that one function can be detached
	 * and attached again alone (duty cycling: probe/duty.h).  Children's
	 * own links (probe_links__attach_child) are not split. */
	bool per_func;
};

/*
 * Before loading: make PROG attachable the way this kernel allows, as a
 * uprobe_multi program (Linux >= 6.6), or else as an ordinary perf-event
 * uprobe, one link per address (slower to attach and much slower to
 * detach, ~110 ms each).  CMON_NO_UPROBE_MULTI=1 in cmon's environment (read by main, uprobe_multi__disable) forces
 * the fallback (for tests).
 */
void probe_links__prepare(struct bpf_program *prog);
/* The same for an uprobe session's program (uprobe_session__supported). */
void probe_links__prepare_session(struct bpf_program *prog);

/* Attach every probe of SET.  On failure nothing stays attached and one
 * error line has been printed.  Returns 0 and the links, or -errno. */
/*
 * Before loading a program set that includes shadow_stack.bpf.h: size its
 * coroutine-stack maps and load cmon_stack_made only where SET switches
 * stacks (else they hold one unused entry each).
 */
void probe_links__prepare_stacks(struct bpf_map *regions, struct bpf_map *coro_stacks,
				 struct bpf_program *stack_made, const struct probe_set *set);

/*
 * Are --py's evaluator probes to be inherited across fork?  While following
 * children, when the evaluator is in a shared library of a process target
 * (3.11's libpython: its probe traps every Python of that library unless
 * filtered, and a filtered one misses a child until its own links exist)
 * and this host can make inherited probes.
 */
bool probe_links__py_inherits(const struct probe_set *set, bool follow, bool host_wide);

int probe_links__attach(const struct probe_set *set, const struct probe_links_opts *opts,
			struct probe_links **out);

/* A followed child PID's own links: the process targets' objects but
 * their executables (attached for every process already), each with a
 * pid filter of PID.  0 and the links, or -errno (quiet: -ESRCH when the
 * child is gone; the caller says what failed). */
int probe_links__attach_child(const struct probe_set *set, const struct probe_links_opts *opts,
			      pid_t pid, struct probe_links **out);
/* Does a child need links of its own (probes outside the executables,
 * and not HOST_WIDE: probe_links_opts.host_wide)? */
bool probe_links__child_has_own(const struct probe_set *set, bool host_wide);

size_t probe_links__probe_count(const struct probe_links *l); /* addresses x processes */

/* per_func links: function FUNC_ID's probes attached again (0, or
 * -errno after one error line; nothing of it attached then), detached
 * (its entries first), or whether they are attached now. */
int probe_links__func_attach(struct probe_links *l, size_t func_id);
void probe_links__func_detach(struct probe_links *l, size_t func_id);
bool probe_links__func_attached(const struct probe_links *l, size_t func_id);
unsigned long long probe_links__attach_ns(const struct probe_links *l);

/* PID's links made again (those of the process targets with that pid):
 * after an exec from a thread other than its leader, they hold the old
 * leader's task (filter.bpf.h's thread_execs) and no probe reaches the
 * new program.  The old ones are closed first: both would fire.  0 or
 * -errno after one error line. */
int probe_links__reattach(struct probe_links *l, const struct probe_set *set,
			  const struct probe_links_opts *opts, pid_t pid);

/* The process-lifecycle programs: EXEC_BEGIN always (lifecycle.bpf.h:
 * pending calls of a thread that execs are let go with its identity),
 * THREAD_EXEC always (filter.bpf.h: an exec from a thread other than the
 * leader), LAUNCH_EXEC when a program is launched (LAUNCH_PID: traced from
 * its exec).  0 or -errno after one error line; LINKS[3] for
 * lifecycle__detach. */
int lifecycle__attach(struct bpf_program *exec_begin, struct bpf_program *thread_exec,
		      struct bpf_program *launch_exec, pid_t launch_pid, struct bpf_link *links[3]);
void lifecycle__detach(struct bpf_link *links[3]);

/* The process-name filter of filter.bpf.h: COMM NUL-padded to 16 bytes, as
 * the kernel keeps task->comm, in two words.  False for an empty COMM (no
 * filter). */
bool probe_filter__comm(const char *comm, uint64_t *lo, uint64_t *hi);

/* Detach (close every link, entries first) and free.  NULL is fine. */
void probe_links__free(struct probe_links *l);

/* L's return probes' links (its functions' too) into C, to be closed
 * with others' (link_closer__close_together) once no call opens a frame
 * (filter.bpf.h's entries_closed: the teardown, bpf_set__detach_probes);
 * L keeps the rest, and probe_links__free does not close those again.
 * NULL is fine. */
struct link_closer;
void probe_links__take_returns(struct probe_links *l, struct link_closer *c);

#endif
