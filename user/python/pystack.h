/*
 * pystack.h: a Python thread's stack read from outside while the thread
 * is stopped (cmon break --py), with each frame's line from its code
 * object's location table.
 */
#ifndef CMON_PYSTACK_H
#define CMON_PYSTACK_H

#include <stdint.h>
#include <sys/types.h>
#include "core/strbuf.h"
#include "python/pylayout.h"

/* The source line of the instruction at INSTR of code object CODE in
 * process PID, from its location table; FIRST (co_firstlineno) when
 * unknown. */
int pystack__line(pid_t pid, const struct py_layout *l, uint64_t code, uint64_t instr, int first);

/* Name a code object for a stack line: "qualname (file:line)" into OUT. */
typedef int (*pystack_name_fn)(void *ctx, uint64_t code, int *firstlineno, struct strbuf *out);

/* The frames of thread state TSTATE, innermost first, one "qualname
 * (file:line)" line each (NAME writes "qualname (file"), without the
 * frames still being set up.  0 or -errno. */
int pystack__callers(pid_t pid, const struct py_layout *l, uint64_t tstate, pystack_name_fn name,
		     void *ctx, struct strbuf *out);

/* The thread state of thread TID in the interpreter at INTERP (0: none). */
uint64_t pystack__tstate_of(pid_t pid, const struct py_layout *l, uint64_t interp, pid_t tid);

#endif
