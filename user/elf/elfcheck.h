/*
 * elfcheck.h: is a file something cmon can probe (a 64-bit x86-64 ELF file,
 * whole), and if not, what it is, in words a user can act on.
 */
#ifndef CMON_ELFCHECK_H
#define CMON_ELFCHECK_H

#include <stddef.h>

/*
 * Check PATH's ELF header and section table.  Returns 0 for a whole
 * x86-64 ELF64 file; -ENOEXEC (not ELF), -ENOTSUP (ELF of another class or
 * machine: "32-bit ELF", "aarch64 ELF"), -EBADMSG (corrupt: truncated, or
 * sections outside the file), or another -errno (cannot open).  WHY (LEN
 * bytes) gets the words for every nonzero return.
 */
int elfcheck__file(const char *path, char *why, size_t len);

#endif
