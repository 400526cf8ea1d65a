/*
 * globals.h: global variables by name from DWARF (--watch), and the source
 * line of an address.
 */
#ifndef CMON_DWARF_GLOBALS_H
#define CMON_DWARF_GLOBALS_H

#include <stdbool.h>
#include <stdint.h>
#include "dwarf/debuginfo.h"

enum global_kind {
	GLOBAL_SIGNED = 0,   /* int, long, char, enum... */
	GLOBAL_UNSIGNED,     /* unsigned, bool */
	GLOBAL_POINTER,      /* shown in hex */
	GLOBAL_RAW,          /* float, struct, array: raw hex bytes */
};

struct dwarf_global {
	uint64_t addr;       /* link-time address (DW_OP_addr or addrx) */
	uint64_t size;       /* the type's byte size */
	enum global_kind kind;
	char type[64];       /* "long", "unsigned short", "char *" */
};

/* The global (or file-static) variable NAME with a fixed address: 0,
 * -ENOENT, -ENODATA (no DWARF). */
int dwarf_global__find(struct debuginfo *di, const char *name, struct dwarf_global *out);

/* The source line at link-time address ADDR: 0 with *FILE (libdw's
 * storage, valid while DI is) and *LINE, or -ENOENT / -ENODATA. */
int dwarf_global__line(struct debuginfo *di, uint64_t addr, const char **file, unsigned *line);

#endif
