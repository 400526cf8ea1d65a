/*
 * attach.h: uprobe_multi links through the raw bpf() syscall.
 *
 * One link carries any number of probes on one file, with a cookie each, and
 * attaches and detaches them in one step (ordinary perf-event uprobes cost
 * ~110 ms each to detach on Linux 6.x).  Debian's libbpf 1.1 predates the
 * API and its UAPI headers lack the constants, hence the raw syscall.
 * Closing the link fd detaches: if cmon dies, the kernel removes its probes.
 */
#ifndef CMON_ATTACH_H
#define CMON_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The program's expected attach type, to set before loading it. */
#define CMON_BPF_TRACE_UPROBE_MULTI 48
#define CMON_BPF_TRACE_UPROBE_SESSION 57

/*
 * Attach PROG_FD at CNT file OFFSETS of the file at PATH, each with its
 * COOKIE, for process PID only (0: every process that maps the file).
 * RETPROBE makes them uretprobes.  Returns the link fd, or a negative errno
 * (-ESRCH: no such process; -EINVAL: bad offset; -EOPNOTSUPP: no kernel
 * support).
 */
int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offsets,
			 const uint64_t *cookies, size_t cnt, pid_t pid, bool retprobe);

/* The same with a reference counter per probe (REF_CTRS: file offsets of
 * USDT semaphores, 0: none): the kernel raises each while a probe is
 * attached and lowers it at detach, also when cmon dies. */
int uprobe_multi__attach_ref(int prog_fd, const char *path, const uint64_t *offsets,
			     const uint64_t *ref_ctrs, const uint64_t *cookies, size_t cnt,
			     pid_t pid);

/* Uprobe sessions (Linux >= 6.10): one program at the entry and at the
 * return, the return made only when the entry returned 0.  PROG_FD loaded
 * with CMON_BPF_TRACE_UPROBE_SESSION.  As uprobe_multi__attach. */
int uprobe_session__attach(int prog_fd, const char *path, const uint64_t *offsets,
			   const uint64_t *cookies, size_t cnt, pid_t pid);
/* Does this kernel have them?  False without uprobe_multi. */
bool uprobe_session__supported(void);

/* Does this kernel have uprobe_multi links (Linux >= 6.6)?  False after
 * uprobe_multi__disable(). */
bool uprobe_multi__supported(void);

/* Does the kernel know ATTACH_TYPE (BPF_TRACE_UPROBE_MULTI, or its
 * uprobe session form) as a uprobe_multi link?  Asked each time. */
bool uprobe_multi__kernel_knows(uint32_t attach_type);

/* Use perf-event uprobes even where uprobe_multi works (the command line's
 * CMON_NO_UPROBE_MULTI=1: tests exercise the fallback).  Before any attach. */
void uprobe_multi__disable(void);

#endif
