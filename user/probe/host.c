// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* host.c: see host.h.  Each feature is probed the first time it is asked
 * about (a trace that never watches a variable never makes a breakpoint
 * fire), by trying what cmon would do, on the smallest scale. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "core/log.h"
#include "probe/attach.h"
#include "probe/inherit.h"
#include "host.h"

#define CMON_BPF_TRACE_UPROBE_SESSION 57 /* UAPI since Linux 6.13 */

static const struct {
	const char *name, *serves, *without;
} info[HOST_NFEATURES] = {
	[HOST_BTF] = { "btf", "the kernel's types: CO-RE relocations, tp_btf programs",
		       "nothing loads: cmon needs a kernel built with BTF" },
	[HOST_UPROBE_MULTI] = { "uprobe_multi",
				"one link attaches and detaches any number of probes at once",
				"one perf-event uprobe per address (~110 ms each to detach)" },
	[HOST_UPROBE_SESSION] = { "uprobe_session",
				  "one program sees a call's entry and return (uprobe sessions)",
				  "separate entry and return programs paired by the shadow stack" },
	[HOST_SLEEPABLE] = { "sleepable_uprobe",
			     "captures and --if fault in pages that are not resident",
			     "a string or buffer on a page not resident reads as a fault" },
	[HOST_RDONLY_CAST] = { "rdonly_cast", "RSS read by direct loads (bpf_rdonly_cast)",
			       "RSS read by bpf_probe_read_kernel (~50 ns more a record)" },
	[HOST_COPY_STR] = { "copy_from_user_str",
			    "--if string comparisons fault their string in",
			    "--if reads what is resident: a string on a page not resident fails the test" },
	[HOST_READ_DYNPTR] = { "user_dynptr_reads",
			       "captures read straight into the ring buffer (user dynptr kfuncs)",
			       "captures staged through a per-CPU buffer, read without faulting pages in" },
	[HOST_PREPARE_EXEC] = { "sched_prepare_exec",
				"calls pending at an exec ended as the caller (tracepoint)",
				"fentry on begin_new_exec, the same point" },
	[HOST_EXEC_FENTRY] = { "exec_fentry", "fentry on begin_new_exec (ftrace trampolines)",
			       "calls pending at an exec are ended after it, named with the new program" },
	[HOST_WRITE_USER] = { "probe_write_user", "bpf_probe_write_user (not refused by lockdown)",
			      "nothing of cmon's needs it today" },
	[HOST_HW_BREAKPOINT] = { "hw_breakpoint", "--watch: hardware write breakpoints",
				 "--watch refuses (a breakpoint opens but never fires)" },
	[HOST_INHERIT_UPROBE] = { "inherited_uprobes",
				  "--py through a shared libpython's evaluator: a forked child "
				  "traced from its first instruction (inherited probes)",
				  "a forked child's calls before cmon attaches its own probes are "
				  "not seen" },
};

static struct host_caps caps;
static bool probed[HOST_NFEATURES], noted[HOST_NFEATURES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The kernel's BTF (~6 MB parsed): read for one round of probing and
 * freed at its end, not kept beside the copy libbpf parses to load. */
static struct btf *vmlinux; /* NULL: none or not read yet */
static bool vmlinux_read;

const char *host__name(enum host_feature f) { return info[f].name; }
const char *host__serves(enum host_feature f) { return info[f].serves; }
const char *host__without(enum host_feature f) { return info[f].without; }

int host__feature(const char *name)
{
	for (int f = 0; f < HOST_NFEATURES; f++)
		if (!strcmp(info[f].name, name))
			return f;
	return -1;
}

void host__deny(enum host_feature f, const char *why)
{
	pthread_mutex_lock(&lock);
	probed[f] = true;
	caps.have[f] = false;
	snprintf(caps.why[f], sizeof(caps.why[f]), "%s", why);
	if (f == HOST_UPROBE_MULTI)
		uprobe_multi__disable();
	pthread_mutex_unlock(&lock);
}

static const struct btf *kernel_btf(void)
{
	if (!vmlinux_read) {
		vmlinux_read = true;
		vmlinux = btf__load_vmlinux_btf();
		if (libbpf_get_error(vmlinux))
			vmlinux = NULL;
	}
	return vmlinux;
}

static void why(enum host_feature f, const char *fmt, const char *arg)
{
	snprintf(caps.why[f], sizeof(caps.why[f]), fmt, arg);
}

/* Every named kfunc is in the kernel's BTF (what libbpf resolves a
 * __ksym against). */
static bool have_funcs(enum host_feature f, const char *const *names)
{
	const struct btf *btf = kernel_btf();

	for (; btf && *names; names++) {
		if (btf__find_by_name_kind(btf, *names, BTF_KIND_FUNC) < 0) {
			why(f, "no kfunc %s", *names);
			return false;
		}
	}
	if (!btf)
		why(f, "%s", "no kernel BTF");
	return btf != NULL;
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						.off = (o), .imm = (i) })
#define RET0 INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0), INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static int load(enum bpf_prog_type type, const struct bpf_insn *insns, size_t n,
		struct bpf_prog_load_opts *o)
{
	int fd = bpf_prog_load(type, NULL, "GPL", insns, n, o);

	return fd < 0 ? -errno : fd;
}

static bool probe_sleepable(void)
{
	struct bpf_insn insns[] = { RET0 };
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = BPF_F_SLEEPABLE);
	int fd = load(BPF_PROG_TYPE_KPROBE, insns, 2, &o);

	if (fd < 0) {
		why(HOST_SLEEPABLE, "a sleepable uprobe program does not load (%s)", strerror(-fd));
		return false;
	}
	close(fd);
	return true;
}

/* A program calling bpf_probe_write_user loads unless lockdown (or an
 * old verifier) refuses the helper. */
static bool probe_write_user(void)
{
	struct bpf_insn insns[] = {
		INSN(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 8),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_probe_write_user),
		RET0,
	};
	char log[1024] = "", *last;
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	int fd = load(BPF_PROG_TYPE_KPROBE, insns, sizeof(insns) / sizeof(insns[0]), &o);

	if (fd < 0) {
		/* the verifier's reason: the line after the call */
		last = strstr(log, "call bpf_probe_write_user");
		last = last ? strchr(last, '\n') : NULL;
		if (last && last[1])
			last[strcspn(last + 1, "\n") + 1] = '\0';
		snprintf(caps.why[HOST_WRITE_USER], sizeof(caps.why[0]), "%s (lockdown: %s)",
			 last && last[1] ? last + 1 : strerror(-fd), caps.lockdown);
		return false;
	}
	close(fd);
	return true;
}

/* An empty fentry program on begin_new_exec, attached and detached: what
 * lifecycle.bpf.h's fallback exec hook needs (BTF, ftrace trampolines). */
static bool probe_exec_fentry(void)
{
	const struct btf *btf = kernel_btf();
	struct bpf_insn insns[] = { RET0 };
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY);
	int id, fd, link;

	id = btf ? btf__find_by_name_kind(btf, "begin_new_exec", BTF_KIND_FUNC) : -ENOENT;
	if (id < 0) {
		why(HOST_EXEC_FENTRY, "%s", btf ? "no begin_new_exec in BTF" : "no kernel BTF");
		return false;
	}
	o.attach_btf_id = (__u32)id;
	fd = load(BPF_PROG_TYPE_TRACING, insns, 2, &o);
	if (fd < 0) {
		why(HOST_EXEC_FENTRY, "an fentry program does not load (%s)", strerror(-fd));
		return false;
	}
	link = bpf_link_create(fd, 0, BPF_TRACE_FENTRY, NULL);
	if (link < 0)
		why(HOST_EXEC_FENTRY, "fentry does not attach (%s)", strerror(errno));
	else
		close(link);
	close(fd);
	return link >= 0;
}

static volatile long watched; /* the breakpoint probe's variable */

/* A write breakpoint on a variable of cmon's own, written once: some
 * hosts (VMs) open the event and never fire it, so only a write tells. */
static bool probe_breakpoint(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = (uint64_t)(uintptr_t)&watched,
		.bp_len = HW_BREAKPOINT_LEN_8,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	uint64_t count = 0;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1, -1, 0);

	if (fd < 0) {
		why(HOST_HW_BREAKPOINT, "a write breakpoint cannot be opened (%s)", strerror(errno));
		return false;
	}
	watched++;
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = 0;
	close(fd);
	if (count != 1) {
		snprintf(caps.why[HOST_HW_BREAKPOINT], sizeof(caps.why[0]),
			 "a write breakpoint on a variable written once counted %llu",
			 (unsigned long long)count);
		return false;
	}
	return true;
}

static void read_lockdown(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/security/lockdown", "r");
	char *l, *r;

	/* no file: no lockdown LSM, or securityfs not mounted */
	snprintf(caps.lockdown, sizeof(caps.lockdown), "%s", f ? "none" : "unknown");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f) && (l = strchr(buf, '[')) && (r = strchr(l, ']'))) {
		*r = '\0';
		snprintf(caps.lockdown, sizeof(caps.lockdown), "%s", l + 1);
	}
	fclose(f);
}

static bool probe(enum host_feature f)
{
	static const char *const dynptr_reads[] = {
		"bpf_probe_read_user_dynptr", "bpf_probe_read_user_str_dynptr",
		"bpf_copy_from_user_dynptr", "bpf_copy_from_user_str_dynptr", NULL
	};
	static const char *const rdonly_cast[] = { "bpf_rdonly_cast", NULL };
	static const char *const copy_str[] = { "bpf_copy_from_user_str", NULL };
	const struct btf *btf;

	switch (f) {
	case HOST_BTF:
		if (!kernel_btf())
			why(f, "%s", "no readable /sys/kernel/btf/vmlinux");
		return kernel_btf() != NULL;
	case HOST_UPROBE_MULTI:
		if (!uprobe_multi__supported()) {
			why(f, "%s", "the kernel does not know BPF_TRACE_UPROBE_MULTI links");
			return false;
		}
		return true;
	case HOST_UPROBE_SESSION:
		if (!uprobe_multi__kernel_knows(CMON_BPF_TRACE_UPROBE_SESSION)) {
			why(f, "%s", "the kernel does not know BPF_TRACE_UPROBE_SESSION links");
			return false;
		}
		return true;
	case HOST_SLEEPABLE:
		return probe_sleepable();
	case HOST_RDONLY_CAST:
		return have_funcs(f, rdonly_cast);
	case HOST_COPY_STR:
		return have_funcs(f, copy_str);
	case HOST_READ_DYNPTR:
		return have_funcs(f, dynptr_reads);
	case HOST_PREPARE_EXEC:
		btf = kernel_btf();
		if (!btf || btf__find_by_name_kind(btf, "btf_trace_sched_prepare_exec",
						   BTF_KIND_TYPEDEF) < 0) {
			why(f, "%s", "no tracepoint sched_prepare_exec");
			return false;
		}
		return true;
	case HOST_EXEC_FENTRY:
		return probe_exec_fentry();
	case HOST_WRITE_USER:
		return probe_write_user();
	case HOST_INHERIT_UPROBE:
		if (!uprobe_inherit__probe(caps.why[f], sizeof(caps.why[f])))
			return false;
		return true;
	case HOST_HW_BREAKPOINT:
	default:
		return probe_breakpoint();
	}
}

/* The features a lookup in the kernel's BTF decides. */
static bool answered_by_btf(enum host_feature f)
{
	return f == HOST_BTF || f == HOST_RDONLY_CAST || f == HOST_COPY_STR ||
	       f == HOST_READ_DYNPTR || f == HOST_PREPARE_EXEC;
}

static void settle(enum host_feature f)
{
	caps.have[f] = probe(f);
	if (caps.have[f])
		caps.why[f][0] = '\0';
	probed[f] = true;
}

static void release_btf(void)
{
	btf__free(vmlinux);
	vmlinux = NULL;
	vmlinux_read = false;
}

static void ensure(enum host_feature f)
{
	if ((unsigned)f >= HOST_NFEATURES || probed[f])
		return;
	if (!caps.release[0]) {
		struct utsname u;

		if (!uname(&u))
			snprintf(caps.release, sizeof(caps.release), "%s", u.release);
		read_lockdown();
	}
	if (answered_by_btf(f)) {
		/* One read of the BTF answers all of them. */
		for (int g = 0; g < HOST_NFEATURES; g++)
			if (answered_by_btf(g) && !probed[g])
				settle(g);
	} else {
		settle(f);
	}
	release_btf();
}

bool host__have(enum host_feature f)
{
	bool have;

	pthread_mutex_lock(&lock);
	ensure(f);
	have = caps.have[f];
	pthread_mutex_unlock(&lock);
	return have;
}

const char *host__why(enum host_feature f)
{
	const char *w;

	pthread_mutex_lock(&lock);
	ensure(f);
	w = caps.why[f];
	pthread_mutex_unlock(&lock);
	return w;
}

const struct host_caps *host__caps(void)
{
	pthread_mutex_lock(&lock);
	for (int f = 0; f < HOST_NFEATURES; f++)
		ensure((enum host_feature)f);
	pthread_mutex_unlock(&lock);
	return &caps;
}

void host__note(enum host_feature f, enum log_level level, const char *what)
{
	bool say;

	pthread_mutex_lock(&lock);
	ensure(f);
	say = !caps.have[f] && !noted[f];
	noted[f] = true;
	pthread_mutex_unlock(&lock);
	if (say)
		log_msg(level, "this kernel has no %s (%s): %s%s%s", info[f].name, caps.why[f],
			 info[f].without, what ? " for " : "", what ? what : "");
}

void host__deny_list(const char *list, const char *by)
{
	char name[64], why[96];

	snprintf(why, sizeof(why), "denied by %s", by);
	while (list && *list) {
		size_t n = strcspn(list, ", ");
		int f;

		snprintf(name, sizeof(name), "%.*s", (int)n, list);
		f = host__feature(name);
		if (f >= 0)
			host__deny((enum host_feature)f, why);
		else if (n)
			log_warn("%s: no feature '%s' (see cmon host)", by, name);
		list += n + (list[n] != '\0');
	}
}
