/*
 * procmem.h: another process's memory, read and written through
 * process_vm_readv/writev (no ptrace stop needed).
 */
#ifndef CMON_PROCMEM_H
#define CMON_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* LEN bytes at ADDR of process PID.  0, or -errno (-EFAULT: short). */
int procmem__read(pid_t pid, uint64_t addr, void *buf, size_t len);
int procmem__write(pid_t pid, uint64_t addr, const void *buf, size_t len);
/* The 8 bytes at ADDR (0 when ADDR is 0 or unreadable). */
uint64_t procmem__ptr(pid_t pid, uint64_t addr);

#endif
