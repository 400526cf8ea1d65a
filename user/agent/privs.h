/*
 * privs.h: after its first spec is applied, the agent keeps only the
 * capabilities it still needs to attach probes added later:
 *
 *   CAP_BPF             load BPF programs, create maps
 *   CAP_PERFMON         attach uprobes and the thread-exit tracepoint
 *   CAP_SYS_ADMIN       BPF features gated on it (BPF_ENABLE_STATS, task
 *                       storage on older kernels, reading /proc/PID/map_files)
 *   CAP_SYS_PTRACE      read other users' /proc/PID/{maps,root,exe}
 *   CAP_DAC_READ_SEARCH read target binaries and libraries not readable by
 *                       the agent's user
 *
 * Everything else leaves the effective, permitted, inheritable and ambient
 * sets and the bounding set (so nothing can regain it), and no_new_privs
 * is set.  The user id does not change: log files are written as that
 * user (root: a log directory owned by another user needs its write
 * permission granted, CAP_DAC_OVERRIDE is gone).
 */
#ifndef CMON_AGENT_PRIVS_H
#define CMON_AGENT_PRIVS_H

#include <stddef.h>
#include <stdint.h>

/* The capabilities kept, as a bit mask (bit N: capability N). */
uint64_t agent_privs__keep_mask(void);

/* Drop the rest.  0, or -errno (EPERM: the bounding set could not be
 * reduced without CAP_SETPCAP; the other sets are reduced anyway). */
int agent_privs__drop(void);

/*
 * The calling thread only (raw syscalls: Linux credentials are per thread,
 * glibc's wrappers would change every thread) becomes uid/gid 65534
 * (nobody) with no supplementary groups, no capability in any set and
 * no_new_privs.  For the threads that talk to the network (the HTTP server
 * and its watchdog): they read maps through fds already open and need
 * nothing else.  The process-wide drop above cannot reach them: capabilities
 * are per thread and they are started before it.  0 or -errno.
 */
int agent_privs__drop_thread(void);

/* Can agent_privs__drop_thread work: CAP_SETUID and CAP_SETGID effective
 * now?  0 or -EPERM (or -errno of capget). */
int agent_privs__can_drop_thread(void);

/* The kept capabilities that are effective now: "cap_bpf,cap_perfmon,...". */
void agent_privs__describe(char *buf, size_t len);

#endif
