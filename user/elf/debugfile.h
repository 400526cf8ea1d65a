/*
 * debugfile.h: where a stripped file's DWARF is kept, found by its build
 * ID, in this order:
 *   1. DEBUG_ROOT/.build-id/xx/rest.debug (what -dbgsym and -debuginfo
 *      packages install);
 *   2. its .gnu_debuglink NAME: DIR/NAME, DIR/.debug/NAME,
 *      DEBUG_ROOT/DIR/NAME (DIR: the file's directory), CRC checked;
 *   3. a debuginfod server (dwarf/debuginfod.h), unless NO_FETCH.
 * A candidate is used only when it is ELF with a .debug_info and its build
 * ID is the file's (for a .gnu_debuglink candidate of a file without a
 * build ID: the link's CRC); a mismatch is never used.  DEBUG_ROOT is
 * /usr/lib/debug, or PID's /usr/lib/debug for a file named
 * /proc/PID/root/... (a process in another mount namespace).
 */
#ifndef CMON_DEBUGFILE_H
#define CMON_DEBUGFILE_H

#include <gelf.h>
#include <stdbool.h>

enum debugfile_source {
	DEBUGFILE_BUILD_ID = 0, /* under DEBUG_ROOT/.build-id */
	DEBUGFILE_DEBUGLINK,    /* .gnu_debuglink */
	DEBUGFILE_DEBUGINFOD,   /* fetched */
};

/* "build-id" ".gnu_debuglink" "debuginfod" */
const char *debugfile_source__name(enum debugfile_source s);

struct debugfile_opts {
	const char *debug_root; /* NULL: the default above */
	const char *link_dir;   /* directory .gnu_debuglink names are relative to;
				 * NULL: PATH's */
	bool no_fetch;          /* local places only */
};

struct debugfile {
	int fd;
	Elf *elf;   /* the debug file (owned with FD) */
	char *path;
	enum debugfile_source source;
};

/*
 * The separate debug file of ELF, opened from PATH.  0 and *OUT (release
 * with debugfile__close), -ENOENT when no place has it (debuginfod's
 * failures are warned about there), -EAGAIN when debuginfod is fetching it
 * in the background, -ENOMEM.
 */
int debugfile__find(Elf *elf, const char *path, const struct debugfile_opts *o,
		    struct debugfile *out);
void debugfile__close(struct debugfile *f);

/* What ELF's sections hold: DWARF (.debug_info or .zdebug_info with
 * contents), and MiniDebugInfo (.gnu_debugdata). */
void debugfile__scan(Elf *elf, bool *debug_info, bool *gnu_debugdata);

#endif
