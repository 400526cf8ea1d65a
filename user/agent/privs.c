// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* privs.c: keep only the capabilities the agent needs (raw capget/capset:
 * five bits do not need libcap). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "agent/privs.h"
#include "core/log.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

static const struct {
	int cap;
	const char *name;
} kept[] = {
	{ CAP_BPF, "cap_bpf" },
	{ CAP_PERFMON, "cap_perfmon" },
	{ CAP_SYS_ADMIN, "cap_sys_admin" },
	{ CAP_SYS_PTRACE, "cap_sys_ptrace" },
	{ CAP_DAC_READ_SEARCH, "cap_dac_read_search" },
};

uint64_t agent_privs__keep_mask(void)
{
	uint64_t m = 0;

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		m |= 1ull << kept[i].cap;
	return m;
}

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int n = 40;

	if (f) {
		if (fscanf(f, "%d", &n) != 1 || n < 0 || n > 63)
			n = 40;
		fclose(f);
	}
	return n;
}

static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	memset(d, 0, 2 * sizeof(*d));
	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

int agent_privs__can_drop_thread(void)
{
	struct __user_cap_data_struct d[2];
	int err = caps_get(d);

	if (err)
		return err;
	/* setresuid/setresgid/setgroups to nobody */
	return (d[0].effective & (1u << CAP_SETUID)) && (d[0].effective & (1u << CAP_SETGID))
		       ? 0
		       : -EPERM;
}

int agent_privs__drop(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	uint64_t keep = agent_privs__keep_mask(), eff, perm;
	int err = 0, e, last = last_cap();

	/* The bounding set first: dropping from it needs CAP_SETPCAP, which
	 * is about to go. */
	for (int c = 0; c <= last; c++) {
		/* one already gone (a unit's CapabilityBoundingSet): nothing to
		 * drop, and no CAP_SETPCAP needed for it */
		if ((keep & (1ull << c)) || prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 1)
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL && !err)
			err = -errno;
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	/* The other sets are reduced whatever happened to the bounding set. */
	e = caps_get(d);
	if (e)
		return e;
	eff = ((uint64_t)d[1].effective << 32 | d[0].effective) & keep;
	perm = ((uint64_t)d[1].permitted << 32 | d[0].permitted) & keep;
	d[0].effective = (uint32_t)eff;
	d[1].effective = (uint32_t)(eff >> 32);
	d[0].permitted = (uint32_t)perm;
	d[1].permitted = (uint32_t)(perm >> 32);
	d[0].inheritable = d[1].inheritable = 0;
	if (syscall(SYS_capset, &h, d))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return err;
}

#define NOBODY 65534

int agent_privs__drop_thread(void)
{
	int last = last_cap();

	/* The bounding set first, while the thread still holds CAP_SETPCAP
	 * (it is started before the process's drop): every capability. */
	for (int c = 0; c <= last; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL)
			return -errno;
	if (syscall(SYS_setgroups, 0, NULL) ||
	    syscall(SYS_setresgid, NOBODY, NOBODY, NOBODY) ||
	    syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY))
		return -errno;
	/* Leaving uid 0 cleared the permitted and effective sets (no
	 * SECBIT_KEEP_CAPS); the ambient set goes too. */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return 0;
}

void agent_privs__describe(char *buf, size_t len)
{
	struct __user_cap_data_struct d[2];
	uint64_t eff;
	size_t off = 0;

	if (!len)
		return;
	buf[0] = 0;
	if (caps_get(d))
		return;
	eff = (uint64_t)d[1].effective << 32 | d[0].effective;
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]) && off < len; i++) {
		int n;

		if (!(eff & (1ull << kept[i].cap)))
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", kept[i].name);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}
