// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "attach.h"

#define CMON_BPF_F_UPROBE_MULTI_RETURN 1U

/* The BPF_LINK_CREATE layout of union bpf_attr for uprobe_multi (UAPI since
 * Linux 6.6), spelled out because the installed headers predate it. */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t um_flags;
	uint32_t pid;
	uint32_t pad;
};

_Static_assert(sizeof(struct link_create_uprobe_multi) <= sizeof(union bpf_attr),
	       "attr must fit in union bpf_attr");

static int link_create(struct link_create_uprobe_multi *a)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, a, sizeof(*a));
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}

int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offsets,
			 const uint64_t *cookies, size_t cnt, pid_t pid, bool retprobe)
{
	struct link_create_uprobe_multi a = {
		.prog_fd = (uint32_t)prog_fd,
		.attach_type = CMON_BPF_TRACE_UPROBE_MULTI,
		.path = (uint64_t)(uintptr_t)path,
		.offsets = (uint64_t)(uintptr_t)offsets,
		.cookies = (uint64_t)(uintptr_t)cookies,
		.cnt = (uint32_t)cnt,
		.um_flags = retprobe ? CMON_BPF_F_UPROBE_MULTI_RETURN : 0,
		.pid = (uint32_t)pid,
	};
	int fd;

	if (!cnt)
		return -EINVAL;
	fd = link_create(&a);
	/* The kernel says EINVAL both for a bad offset and for an attach type
	 * it does not know; tell them apart for the error message. */
	if (fd == -EINVAL && !uprobe_multi__supported())
		return -EOPNOTSUPP;
	return fd;
}

int uprobe_session__attach(int prog_fd, const char *path, const uint64_t *offsets,
			   const uint64_t *cookies, size_t cnt, pid_t pid)
{
	struct link_create_uprobe_multi a = {
		.prog_fd = (uint32_t)prog_fd,
		.attach_type = CMON_BPF_TRACE_UPROBE_SESSION,
		.path = (uint64_t)(uintptr_t)path,
		.offsets = (uint64_t)(uintptr_t)offsets,
		.cookies = (uint64_t)(uintptr_t)cookies,
		.cnt = (uint32_t)cnt,
		.pid = (uint32_t)pid,
	};

	return cnt ? link_create(&a) : -EINVAL;
}

static int cached = -1; /* uprobe_multi__supported's answer; -1 not asked yet */

void uprobe_multi__disable(void)
{
	cached = 0;
}

int uprobe_multi__attach_ref(int prog_fd, const char *path, const uint64_t *offsets,
			     const uint64_t *ref_ctrs, const uint64_t *cookies, size_t cnt,
			     pid_t pid)
{
	struct link_create_uprobe_multi a = {
		.prog_fd = (uint32_t)prog_fd,
		.attach_type = CMON_BPF_TRACE_UPROBE_MULTI,
		.path = (uint64_t)(uintptr_t)path,
		.offsets = (uint64_t)(uintptr_t)offsets,
		.ref_ctr_offsets = (uint64_t)(uintptr_t)ref_ctrs,
		.cookies = (uint64_t)(uintptr_t)cookies,
		.cnt = (uint32_t)cnt,
		.pid = (uint32_t)pid,
	};

	return cnt ? link_create(&a) : -EINVAL;
}

bool uprobe_multi__supported(void)
{
	if (cached < 0)
		cached = uprobe_multi__kernel_knows(CMON_BPF_TRACE_UPROBE_MULTI);
	return cached;
}

bool uprobe_multi__kernel_knows(uint32_t attach_type)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach_type);
	uint64_t offset = 0;
	struct link_create_uprobe_multi a = {
		.attach_type = attach_type,
		.path = (uint64_t)(uintptr_t)"/",
		.offsets = (uint64_t)(uintptr_t)&offset,
		.cnt = 1,
	};
	int prog_fd, fd;

	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &opts);
	if (prog_fd < 0)
		return false;
	a.prog_fd = (uint32_t)prog_fd;
	/* "/" is not a regular file: a kernel that knows uprobe_multi says
	 * EBADF, one that does not says EINVAL. */
	fd = link_create(&a);
	if (fd >= 0)
		close(fd);
	close(prog_fd);
	return fd == -EBADF;
}

/* As uprobe_multi__supported: a trivial program of the session type, a
 * link on "/" (EBADF: the kernel knows the type). */
bool uprobe_session__supported(void)
{
	static int answer = -1;
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = CMON_BPF_TRACE_UPROBE_SESSION);
	uint64_t offset = 0;
	struct link_create_uprobe_multi a = {
		.attach_type = CMON_BPF_TRACE_UPROBE_SESSION,
		.path = (uint64_t)(uintptr_t)"/",
		.offsets = (uint64_t)(uintptr_t)&offset,
		.cnt = 1,
	};
	int prog_fd, fd;

	if (answer >= 0)
		return answer;
	answer = 0;
	if (!uprobe_multi__supported())
		return false;
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &opts);
	if (prog_fd < 0)
		return false;
	a.prog_fd = (uint32_t)prog_fd;
	fd = link_create(&a);
	if (fd >= 0)
		close(fd);
	close(prog_fd);
	answer = fd == -EBADF;
	return answer;
}
