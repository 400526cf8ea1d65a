/*
 * freeze.h: every thread of a process stopped for a moment, to write a
 * pointer its threads read without a lock (cpython's hooks).
 *
 * The kernel copies a process_vm_writev with `rep movsb` (FSRM), which
 * does not promise one 8-byte store: a thread reading a half-written
 * pointer would jump to garbage.  A process cmon attached to (-p) is
 * paused with PTRACE_SEIZE + PTRACE_INTERRUPT, thread by thread: a ptrace
 * stop, which neither the process nor its parent (a shell's job control)
 * sees, and system calls are restarted when it goes on.  A launched one
 * (cmon's own child) is stopped with SIGSTOP (or already is).
 */
#ifndef CMON_FREEZE_H
#define CMON_FREEZE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct freeze {
	pid_t pid;
	bool sigstop;    /* SIGSTOP sent: SIGCONT at thaw */
	pid_t *tids;     /* PTRACE_SEIZE'd */
	int *sigs;       /* a signal caught in its stop, given back at detach */
	size_t n, cap;
};

/* Every thread of process PID stopped (LAUNCHED: cmon's child, by
 * SIGSTOP; else by ptrace).  0, or -errno with nothing left stopped. */
int freeze__stop(pid_t pid, bool launched, struct freeze *fz);
/* Let them go on (signals caught meanwhile given back). */
void freeze__thaw(struct freeze *fz);
/* Is every thread of PID stopped (or gone)? */
bool freeze__all_stopped(pid_t pid);

#endif
