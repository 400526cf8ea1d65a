/*
 * session.h: what trace, capture and profile share around their BPF work:
 * the function patterns, the output file, the processes worked on (a
 * program launched paused before exec, or -p PIDs watched through pidfds),
 * signals, and how the exit status is decided.
 */
#ifndef CMON_SESSION_H
#define CMON_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "cli/options.h"
#include "core/hmap.h"
#include "proc/cgroup.h"
#include "elf/funcpattern.h"
#include "proc/launch.h"
#include "probe/resolve.h"

struct session {
	const struct cmd_opts *opts;
	struct funcpattern *patterns; /* one per opts->funcs, then --py's evaluator */
	size_t n_patterns;
	struct funcpattern *focus;    /* one per opts->focus */
	struct funcpattern *lines_of; /* one per opts->lines_of */
	FILE *out;                    /* -o FILE or stdout */
	bool out_owned;
	void *out_buf;                /* OUT's stdio buffer (file__buffer) */
	bool out_live;                /* -o unix:PATH: served to readers */
	/* -o FILE: opened without truncating; emptied when the run starts
	 * (session__start_output), removed at cleanup if it never did and cmon
	 * created it, so a failed run leaves no empty file behind. */
	const char *out_path;
	char *out_name;               /* -o with "%%": the name it stands for */
	bool out_created, out_started;
	char *launch_path;            /* -- CMD: the resolved executable */
	struct launch launch;
	bool launched;
	int *pidfds;                  /* -p: one per pid, -1 when pidfd_open failed */
	bool *pid_gone;
	uint64_t binary_dev, binary_ino; /* --binary: the file the probes cover */
	bool binary_moved;            /* said once: it was replaced or removed */
	/* Following children (follow.h, set by the command once attached):
	 * the run ends when every followed process has exited, the launched
	 * program's status (reaped first: LAUNCH_REAPED) still the exit's. */
	struct follow *follow;
	bool launch_reaped;
	int followed_alive;           /* at the last session__targets_gone */
	int wake_fd;                  /* readable at a followed fork; -1: none */
	/* --cgroup / --container: the cgroup, its processes when the run
	 * began, each record's process's cgroup (its label), and the
	 * processes met later that run a file no probe covers (said once). */
	struct cgroup_sel cgroup;
	bool cgroup_on, cgroup_gone;
	char *cgroup_desc;
	pid_t *cg_pids;
	size_t n_cg_pids;
	struct cgroup_names *cg_names;
	struct hmap cg_seen;          /* pids */
	struct hmap cg_said;          /* executables not covered */
	const struct probe_set *cg_set;
	double cg_next_scan;
};

/* --binary: the probes cover the file with this inode (call after
 * resolving); session__targets_gone then says, once, when the path names
 * another file: processes started from it are not covered. */
void session__cover_binary(struct session *s, uint64_t dev, uint64_t ino);

/* --cgroup: the files the probes cover (call after resolving);
 * session__targets_gone then says, once per file, when a process of the
 * cgroup runs another, which is not traced. */
void session__cover_cgroup(struct session *s, const struct probe_set *set);

/* The cgroup (v2 path) a record of process PID is labelled with: its own,
 * or the selected one when it is gone; NULL without --cgroup/--container. */
const char *session__cgroup_of(struct session *s, pid_t pid);

/* The signal that asked to stop (SIGINT, SIGTERM, SIGHUP), or 0. */
extern volatile sig_atomic_t session_stop_signal;

void session__init(struct session *s, const struct cmd_opts *opts);

/* Each returns 0 or a negative errno after one error line. */
int session__parse_patterns(struct session *s);
int session__open_output(struct session *s, size_t bufsize);

/* The probes are attached: the output file is emptied (it was opened
 * without truncation).  0 or -errno after one error line. */
int session__start_output(struct session *s);

/* -- CMD: start it paused before exec (nothing to do otherwise). */
int session__start_program(struct session *s);

/* How trace, capture, break and profile start, in this order: the
 * privileges checked, the patterns parsed, the cgroup found (and waited
 * for, while it has no process), the output opened with OUT_BUFSIZE bytes
 * of buffer (0: none now: capture's store, break's stderr), the program
 * started.  0 or -errno after one error line. */
int session__begin(struct session *s, size_t out_bufsize);
int session__open_pidfds(struct session *s);

/* The targets and patterns, as the resolver takes them. */
void session__resolve_opts(const struct session *s, struct resolve_opts *ro);

/* Let the launched program run (after attaching); 0 when none.  With
 * --watch it stops again right after its exec: session__continue. */
int session__release(struct session *s);
int session__continue(struct session *s);

/* Have all the processes ended, the followed children too?  (--binary:
 * never; --cgroup: when the cgroup is removed.)  For a launched program, *STATUS gets its wait status and
 * *HAVE_STATUS is set (once, when it is reaped). */
/* The processes named on the command line (-p, the launched one): a
 * malloc'd array of *N (NULL when out of memory, *N 0). */
pid_t *session__roots(const struct session *s, size_t *n);

bool session__targets_gone(struct session *s, int *status, bool *have_status);

/* Sleep up to TIMEOUT_S, waking early when a process ends. */
void session__wait(struct session *s, double timeout_s);

/* Start-up, from the functions resolved to the probes attached (ON), and
 * its end (!ON): a SIGINT, SIGTERM or SIGHUP in it ends cmon at once
 * (exit status 0, nothing traced, a launched program never run); on a
 * terminal, each step that comes after half a second is said
 * (session__step: WHAT, a string that lives on). */
void session__starting(struct session *s, bool on);
/* The line that says so, for a signal that came just outside that window
 * (before its start: the start-up then returns -EINTR). */
void session__say_interrupted(void);
void session__step(const char *what);

/* Signals only set session_stop_signal; SIGPIPE is ignored (a closed
 * output is a write error). */
void session__install_signals(void);


/* The one place the exit status of trace, capture and profile is decided:
 * 1 on error; the launched program's status when it failed (128+N for
 * signal N); 3 when something was lost; else 0. */
int session__exit_status(int err, uint64_t lost, bool have_status, int status);

struct pytrace;
/* --py: one line on stderr naming the patterns that selected no function
 * (with -p: "so far", the process may define one later); nothing when
 * every pattern matched. */
void session__say_unmatched_py(const struct session *s, struct pytrace *py);

struct tracer;
/* --blocking-timeout: the summary's line of the waits for room (-v: those
 * given up too). */
void session__say_room_waits(const struct tracer *t);
/* --py: one line on stderr with the calls not traced for want of room for
 * their process (tracer__py_procs_full); nothing when there were none. */
void session__say_py_untraced(const struct tracer *t);

/* Kill a program that was never released (it must not run untraced),
 * close the output and the pidfds, free the patterns. */
void session__cleanup(struct session *s);

#endif
