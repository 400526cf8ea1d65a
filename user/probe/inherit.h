/*
 * inherit.h: uprobes that a process's children inherit across fork().
 *
 * A perf event opened on a task with attr.inherit is copied into every
 * child the task forks (and every thread it makes), from the child's first
 * instruction; the uprobe filter lets a process in when one of its events
 * targets its mm.  The uprobe PMU (perf_event_open type "uprobe") cannot be
 * inherited: the kernel re-reads the event's path pointer in the forking
 * process's memory and the target's fork() fails (EFAULT, seen here).  A
 * tracefs uprobe event can: every inherited copy is the same trace event,
 * so a BPF program attached once to it runs for each hit of any process
 * whose events it has.  That program hangs off an event on cmon itself
 * (which never runs the probed code); the targets' events only let their
 * processes in, so a process with several (a child given its own besides
 * the inherited one) is still recorded once.  The events are read per
 * task (PERF_SAMPLE_READ, Linux >= 6.12), which keeps the kernel from
 * swapping two children's contexts at a switch: a child would be left with
 * another's events, and dropped by the filter when that one exits (a whole
 * child's calls lost, 1 run in 2 of forknow.py here without it).
 */
#ifndef CMON_INHERIT_H
#define CMON_INHERIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct uprobe_inherit;

/* Can this host make inherited tracefs uprobe events (Linux >= 6.12;
 * tracefs mounted at /sys/kernel/tracing if it is not)?  host.h's probe of
 * HOST_INHERIT_UPROBE, WHY (N bytes) saying what is missing. */
bool uprobe_inherit__probe(char *why, size_t n);

/* Does this host have them (host__have(HOST_INHERIT_UPROBE))?  The first
 * time, tracefs events a killed cmon left are removed. */
bool uprobe_inherit__supported(void);

/*
 * The probe at file OFFSET of PATH (a uretprobe when RETPROBE) running PROG
 * with COOKIE, made on first use: one reference more to it in *OUT.  The
 * same probe asked again is the same one (PROG and COOKIE as the first
 * time).  Returns 0 or a negative errno.
 */
int uprobe_inherit__get(const char *path, uint64_t offset, bool retprobe,
			struct bpf_program *prog, uint64_t cookie, struct uprobe_inherit **out);

/* A perf event of U on thread TID, inherited by what it forks: its fd
 * (closing it lets TID out), or a negative errno (-ESRCH: no such thread). */
int uprobe_inherit__open(struct uprobe_inherit *u, pid_t tid);

/* One reference fewer; the last one detaches the program and removes the
 * tracefs event (its events must be closed first). */
void uprobe_inherit__put(struct uprobe_inherit *u);

#endif
