// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_break.c: `cmon break`: stop a process when a function is entered,
 * show the call, resume it on the user's cue.  The probes, records and
 * their rendering are trace's (cmd_trace.c with CMD_BREAK); this file is
 * what happens while the process is stopped.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "proc/procmaps.h"
#include "cli/breakpoint.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "core/clock.h"
#include "core/log.h"

static struct {
	double resume_after_s;
	bool quiet;
	bool stdin_eof;     /* no more cues: later stops resume at once */
	pid_t stopped_pid;  /* a process stopped now, waiting for its cue; 0: none */
	pid_t target_pid;   /* the process the probes may stop */
	uint64_t resumed;   /* stops resumed */
	bool exit_handler;
} bp;

static void resume_at_exit(void)
{
	if (bp.stopped_pid > 0)
		kill(bp.stopped_pid, SIGCONT);
	bp.stopped_pid = 0;
}

/* cmon itself crashes, or dies of any signal it can catch (SIGQUIT,
 * SIGUSR1, SIGALRM, a real-time signal...): resume what it may have
 * stopped, then die as the signal says.  Async-signal-safe: kill, signal,
 * raise. */
static void on_fatal(int sig)
{
	if (bp.stopped_pid > 0)
		kill(bp.stopped_pid, SIGCONT);
	if (bp.target_pid > 0)
		kill(bp.target_pid, SIGCONT); /* a stop whose record was not read yet */
	signal(sig, SIG_DFL);
	raise(sig);
}

/* SIG's default action ends the process (rather than ignore it or stop
 * it). */
static bool kills_by_default(int sig)
{
	switch (sig) {
	case SIGKILL: case SIGSTOP: /* cannot be caught: only these may leave it stopped */
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return false;
	default:
		return true;
	}
}

void breakpoint__init(double resume_after_s, bool quiet)
{
	static const int crash[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGQUIT };

	bp.resume_after_s = resume_after_s;
	bp.quiet = quiet;
	if (!bp.exit_handler && !atexit(resume_at_exit))
		bp.exit_handler = true;
	for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
		signal(crash[i], on_fatal);
	/* Every other signal that would end cmon while it keeps the default
	 * action (those the session already handles, SIGINT, SIGTERM, SIGHUP,
	 * and those ignored, are left as they are).  glibc refuses its own
	 * two real-time signals: sigaction fails there, as it should. */
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		struct sigaction old;

		if (!kills_by_default(sig) || sigaction(sig, NULL, &old) ||
		    old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
			continue;
		signal(sig, on_fatal);
	}
}

void breakpoint__target(pid_t pid) { bp.target_pid = pid; }

uint64_t breakpoint__resumed(void) { return bp.resumed; }

/* A stopped thread's program counter, from /proc/PID/task/TID/syscall
 * ("-1 SP PC" outside a system call).  0 when unknown. */
static uint64_t thread_pc(pid_t pid, uint32_t tid)
{
	char path[64], buf[256];
	unsigned long long sp = 0, pc = 0;
	long nr;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/syscall", (int)pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%ld 0x%llx 0x%llx", &nr, &sp, &pc) != 3 ||
	    nr != -1)
		pc = 0;
	fclose(f);
	return pc;
}

/* The cue: --resume-after, a line on stdin (or its end), a stop signal,
 * or the end of process PID (killed while stopped). */
static void wait_for_cue(pid_t pid, uint32_t tid)
{
	double end = bp.resume_after_s >= 0 ? clock__mono_s() + bp.resume_after_s : 0;

	/* A terminal: only an Enter pressed after the stop counts. */
	if (bp.resume_after_s < 0 && isatty(STDIN_FILENO))
		tcflush(STDIN_FILENO, TCIFLUSH);

	while (!session_stop_signal) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		char c, st = proc__stat(pid, (pid_t)tid, NULL);
		ssize_t n;

		if (!st || st == 'Z')
			return; /* the thread is gone */
		if (bp.resume_after_s >= 0) {
			double left = end - clock__mono_s();

			if (left <= 0)
				return;
			poll(NULL, 0, left < 0.05 ? (int)(left * 1000) + 1 : 50);
			continue;
		}
		if (bp.stdin_eof)
			return;
		if (poll(&p, 1, 100) <= 0)
			continue;
		/* One byte at a time: a later stop's line stays unread; a
		 * line without end (stdin /dev/zero) still hears a signal. */
		n = 1;
		while (!session_stop_signal && (n = read(STDIN_FILENO, &c, 1)) == 1 && c != '\n')
			;
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			bp.stdin_eof = true;
		if (n != -1 || errno != EINTR)
			return;
	}
}

char breakpoint__wait_stop(pid_t pid, uint32_t tid)
{
	double give_up = clock__mono_s() + 2.0;
	char st;

	bp.stopped_pid = pid;
	/* The signal is delivered when the thread returns to user space,
	 * after the probed instruction: wait for it to land. */
	while ((st = proc__stat(pid, (pid_t)tid, NULL)) && st != 'T' && st != 't' &&
	       clock__mono_s() < give_up && !session_stop_signal)
		poll(NULL, 0, 2);
	return st;
}

int breakpoint__stopped(pid_t pid, uint32_t tid, const char *func, uint64_t probe_ip,
			unsigned hit)
{
	uint64_t pc;
	char st = breakpoint__wait_stop(pid, tid);

	if (!st) {
		bp.stopped_pid = 0;
		bp.resumed++;
		fprintf(stderr, "cmon: process %d is gone\n", (int)pid);
		return -ESRCH;
	}
	pc = thread_pc(pid, tid);
	if (!bp.quiet) {
		fprintf(stderr, "cmon: stop %u: process %d %s in %s, thread %u", hit, (int)pid,
			st == 'T' || st == 't' ? "stopped" : "not stopped (yet)", func, tid);
		if (pc && probe_ip && pc >= probe_ip && pc - probe_ip < 64)
			fprintf(stderr, " at pc 0x%" PRIx64 " (probe +%" PRIu64 ")", pc,
				pc - probe_ip);
		else if (pc)
			fprintf(stderr, " at pc 0x%" PRIx64, pc);
		fputc('\n', stderr);
		if (!session_stop_signal)
			fprintf(stderr, "cmon: %s\n",
				bp.resume_after_s >= 0 ? "resuming after --resume-after"
				: isatty(STDIN_FILENO) ? "press Enter to resume (a debugger may attach now)"
				: "resuming on a line of stdin (or its end)");
	}
	wait_for_cue(pid, tid);
	kill(pid, SIGCONT);
	bp.stopped_pid = 0;
	bp.resumed++;
	if (!bp.quiet)
		fprintf(stderr, "cmon: resumed process %d\n", (int)pid);
	return 0;
}

void breakpoint__finish(pid_t pid, uint64_t stops)
{
	resume_at_exit();
	/* Signals sent whose record never came to us (the run ended between
	 * the two): the process must not stay stopped. */
	if (pid > 0 && stops > bp.resumed) {
		kill(pid, SIGCONT);
		bp.resumed = stops;
	}
}

int cmd_break(int argc, char **argv) { return trace__run(CMD_BREAK, argc, argv); }
