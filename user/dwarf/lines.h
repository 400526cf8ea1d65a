/*
 * lines.h: source lines from the DWARF line table (--line FILE:LINE, cmon
 * list --lines): every is_stmt address of a line, inlined copies included.
 */
#ifndef CMON_DWARF_LINES_H
#define CMON_DWARF_LINES_H

#include <stddef.h>
#include <stdint.h>
#include "dwarf/debuginfo.h"

/* Does PATH (as the line table names a file) match FILE, a basename or a
 * path suffix ("lines.c", "src/lines.c")? */
int lines__file_matches(const char *path, const char *file);

/*
 * The addresses where source line LINE of FILE begins a statement, sorted,
 * each once, into *ADDRS (*N of them; free()).  0; -ENOENT when the file is
 * known but LINE has no code (*BELOW and *ABOVE: the nearest lines with
 * code, 0 if none); -ESRCH when no file of the line table matches FILE;
 * -ENODATA without DWARF; -ENOMEM.
 */
int lines__addrs(struct debuginfo *di, const char *file, unsigned line, uint64_t **addrs,
		 size_t *n, unsigned *below, unsigned *above);

/* The lines of code in [LOW, HIGH) (a function): each (line, first address)
 * once, in line order, and the file of the first one (static storage of
 * libdw, valid while DI is).  0, -ENOENT, -ENODATA, -ENOMEM. */
struct line_row {
	unsigned line;
	uint64_t addr;
};
int lines__in_range(struct debuginfo *di, uint64_t low, uint64_t high, struct line_row **rows,
		    size_t *n, const char **file);

#endif
