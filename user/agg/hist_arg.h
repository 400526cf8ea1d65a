/*
 * hist_arg.h: which value an argument histogram counts (`cmon profile
 * --hist`, the agent's `arg:`), and at what width and sign: from each
 * function's DWARF, so that -7 in an `int` counts as -7, not 4294967289.
 */
#ifndef CMON_HIST_ARG_H
#define CMON_HIST_ARG_H

#include <stdbool.h>
#include "probe/resolve.h"

#define HIST_ARG_RET 6     /* the return value (rax at the return): CMON_HIST_RET */
#define HIST_ARG_BY_NAME 7 /* a parameter name or "ret", not resolved yet */

struct hist_arg {
	int reg;          /* argument register 0..5, or HIST_ARG_RET */
	unsigned bytes;   /* 1, 2, 4 or 8 */
	bool is_signed;
	bool typed;       /* width and sign from DWARF (else the raw 64-bit register) */
	char type[64];    /* its C type ("int"), "" when raw */
};

/*
 * Resolve SPEC ("0".."5", "arg0".."arg5", "ret", or a parameter name) for
 * every function of SET.  A name or "ret" must mean the same register,
 * width and sign in every function (their DWARF says so); a number keeps
 * the raw 64-bit register when the functions disagree or have no DWARF.
 * Returns 0, or -EINVAL after one error line starting with WHAT ("--hist") (no such parameter, no DWARF
 * to find it, not an integer, functions that disagree), or -ENOMEM.
 */
int hist_arg__resolve(const struct probe_set *set, const char *spec, const char *what,
		      struct hist_arg *out);

/* SPEC names an argument as hist_arg__resolve takes it (a number, "ret",
 * or an identifier): for option and spec parsers. */
bool hist_arg__valid(const char *spec);

#endif
