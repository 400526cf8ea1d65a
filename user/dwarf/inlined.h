/*
 * inlined.h: where a function that has no out-of-line copy went (DWARF
 * DW_AT_inline): the functions it was inlined into.  For an error that
 * tells the user what to trace instead of "no function matches".
 */
#ifndef CMON_INLINED_H
#define CMON_INLINED_H

#include <stddef.h>

/*
 * The functions of PATH (or its separate debug file) into which NAME was
 * inlined, as "a, b, c" in BUF (LEN bytes; cut with "..." when long).
 * Returns the number of distinct callers (0: NAME is not an inlined
 * function there, or PATH has no DWARF), or a negative errno.
 */
int inlined__callers(const char *path, const char *name, char *buf, size_t len);

#endif
