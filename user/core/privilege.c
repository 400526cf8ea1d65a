// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "log.h"
#include "privilege.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}

int privilege__check(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	if (geteuid() == 0)
		return 0;
	if (syscall(SYS_capget, &hdr, data) == 0 &&
	    (has_cap(data, CAP_SYS_ADMIN) || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON))))
		return 0;
	log_error("permission denied: tracing needs root, or CAP_BPF and CAP_PERFMON");
	return -EPERM;
}
