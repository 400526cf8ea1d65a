// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* procmem.c: see procmem.h. */
#include <errno.h>
#include <sys/uio.h>
#include "proc/procmem.h"

int procmem__read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

int procmem__write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

uint64_t procmem__ptr(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	return addr && !procmem__read(pid, addr, &v, sizeof(v)) ? v : 0;
}
