/*
 * host.h: what this host's kernel and CPU can do for cmon, found out by
 * trying (the kernel's BTF, a tiny program loaded, a breakpoint made to
 * fire), never by comparing version numbers: backports and configs make
 * those lie.  One place: the programs' load-time choices (bpf_setup), the
 * commands' refusals and one-line notes, `cmon host` and the tests' skips
 * all read it.
 */
#ifndef CMON_HOST_H
#define CMON_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include "core/log.h"

/* Each thing probed: host__caps()->have[HOST_X]. */
enum host_feature {
	HOST_BTF,            /* /sys/kernel/btf/vmlinux: CO-RE, tp_btf programs */
	HOST_UPROBE_MULTI,   /* uprobe_multi links (BPF_TRACE_UPROBE_MULTI) */
	HOST_UPROBE_SESSION, /* uprobe sessions (BPF_TRACE_UPROBE_SESSION) */
	HOST_SLEEPABLE,      /* sleepable uprobe programs (uprobe.s) */
	HOST_RDONLY_CAST,    /* kfunc bpf_rdonly_cast: RSS read by direct loads */
	HOST_COPY_STR,       /* kfunc bpf_copy_from_user_str: --if strings faulted in */
	HOST_READ_DYNPTR,    /* kfuncs bpf_{probe_read,copy_from}_user[_str]_dynptr */
	HOST_PREPARE_EXEC,   /* tracepoint sched_prepare_exec */
	HOST_EXEC_FENTRY,    /* fentry on begin_new_exec (ftrace trampolines) */
	HOST_WRITE_USER,     /* bpf_probe_write_user: not refused by lockdown */
	HOST_HW_BREAKPOINT,  /* a write breakpoint fires (--watch) */
	HOST_INHERIT_UPROBE, /* tracefs uprobes inherited across fork, read per task */
	HOST_NFEATURES
};

struct host_caps {
	char release[65];     /* uname -r */
	char lockdown[32];    /* the kernel's lockdown mode, "unknown" unreadable */
	bool have[HOST_NFEATURES];
	/* Why a feature is missing (what the probe saw), "" when present. */
	char why[HOST_NFEATURES][96];
};

/* The host's capabilities, probed on the first call (tens of ms: the
 * kernel's BTF is read, a few programs loaded), then kept.  Never NULL. */
const struct host_caps *host__caps(void);

/* Does this host have FEATURE?  Probed on the first question, then kept. */
bool host__have(enum host_feature f);

/* Why FEATURE is missing here (what its probe saw), "" when present. */
const char *host__why(enum host_feature f);

/* For tests and for the command line's CMON_HOST_DENY (read by main):
 * behave as if FEATURE were missing, with WHY.  Before host__caps(). */
void host__deny(enum host_feature f, const char *why);

/* Deny each feature named in LIST ("name,name": CMON_HOST_DENY, read by
 * main; BY names the source in the reason).  An unknown name is warned of. */
void host__deny_list(const char *list, const char *by);

/* FEATURE's name in `cmon host` and in the tests' skips ("uprobe_multi"),
 * -1 for an unknown NAME. */
const char *host__name(enum host_feature f);
int host__feature(const char *name);

/* What FEATURE serves, and what cmon does without it (one line each). */
const char *host__serves(enum host_feature f);
const char *host__without(enum host_feature f);

/* Say once per process, at LEVEL, that FEATURE is missing here and what
 * that costs WHAT (e.g. "240 functions"; NULL: nothing named): a warning
 * where the user will see the difference (a slow attach), else at -v (a
 * default that this kernel cannot give).  Nothing when it is present. */
void host__note(enum host_feature f, enum log_level level, const char *what);

#endif
