/*
 * breakpoint.h: `cmon break`.  The trace machinery (cmd_trace.c) probes
 * the functions' entries with break_count set: the BPF program records the
 * hit (arguments, user stack) and stops the process with SIGSTOP.  This
 * module handles one stop: it confirms the process stopped, says where,
 * waits for the user's cue and resumes it, and makes sure no process it
 * stopped stays stopped when cmon exits.
 */
#ifndef CMON_CLI_BREAKPOINT_H
#define CMON_CLI_BREAKPOINT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cli/options.h"

/* `cmon trace`, `cmon capture` and `cmon break` (cmd_trace.c). */
int trace__run(enum cmd_kind kind, int argc, char **argv);

/* Set up for a run: RESUME_AFTER_S < 0 waits for Enter (a line or the end
 * of stdin when it is not a terminal).  Installs the exit handler and the
 * crash handlers that resume a process still stopped. */
void breakpoint__init(double resume_after_s, bool quiet);

/* The process the probes may stop (once known): resumed if cmon crashes. */
void breakpoint__target(pid_t pid);

/* Wait (2 s at most) until thread TID of PID is stopped by the hit's
 * SIGSTOP: its /proc state ('T' stopped, 0 gone); the process then counts
 * as stopped by cmon (resumed on every exit path). */
char breakpoint__wait_stop(pid_t pid, uint32_t tid);

/*
 * Hit number HIT of FUNC on thread TID of PID was recorded and stopped the
 * process (its report is written): confirm the stop (/proc state T), say
 * where the thread is, wait for the cue (or a stop signal), SIGCONT.
 * PROBE_IP is where the probe sits in the process.  0, or -ESRCH when the
 * process is gone.
 */
int breakpoint__stopped(pid_t pid, uint32_t tid, const char *func, uint64_t probe_ip,
			unsigned hit);

/* The end of a run: STOPS signals were sent (hits recorded) in all; any
 * not yet resumed is resumed (SIGCONT to PID).  Also run at exit. */
void breakpoint__finish(pid_t pid, uint64_t stops);

/* Stops resumed so far. */
uint64_t breakpoint__resumed(void);

#endif
