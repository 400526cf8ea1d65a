/*
 * pyclass.h: CPython 3.13's classes whose __init__ cmon traces, kept from
 * entering it without a call.
 *
 * 3.13 specializes a `Class(...)` call site (CALL_ALLOC_AND_ENTER_INIT)
 * to push the frame of the class's __init__ itself, guarded only by the
 * class's version tag: the function's vectorcall, which cmon redirects, is
 * never called.  A class without a tag (0) is not specialized so, and the
 * sites that were fall back to a call at their next run; its budget of tags
 * (tp_versions_used) at the maximum keeps CPython from giving it a new one.
 * CPython's invariant (a class with a tag has bases with tags:
 * PyType_Modified stops at a class without one) wants every subclass
 * without a tag too; they get no new one while a base cannot.  The
 * classes there are when cmon attaches are found among the interpreter's
 * objects (pyclass__walk); one made later at the first call of its
 * __init__ (a call site's first run is not specialized: it calls), which
 * the vectorcall entry's probe announces (python.bpf.h's py_init_class;
 * pyclass__hold_init).  Taken back, the budget is restored and the tags stay 0: CPython gives the classes new
 * ones at their next lookup, as after any change to a class.  Every write
 * is made with the process's threads stopped.
 */
#ifndef CMON_PYCLASS_H
#define CMON_PYCLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "python/pylayout.h"

/* A class unversioned, its budget before. */
struct pyclass_held {
	uint64_t type;
	uint16_t used;
};

/* Is FUNC one of the functions cmon traces? */
typedef bool (*pyclass_select_fn)(void *ctx, uint64_t func);

/*
 * Process PID (every thread stopped), interpreter INTERP, 3.13 (L's
 * type_versions_used): each class whose own __init__ SELECT takes
 * unversioned with its subclasses, added to *HELD (*N, *CAP).  FUNC_TYPE:
 * the function type, whose tag checks L against the process's memory.
 * 0, -EAGAIN (its collector runs), -EINVAL (the memory does not look as L
 * says: nothing written), -errno.
 */
int pyclass__walk(pid_t pid, const struct py_layout *l, uint64_t interp, uint64_t func_type,
		  pyclass_select_fn select, void *ctx, struct pyclass_held **held, size_t *n,
		  size_t *cap);

/*
 * Process PID (every thread stopped): FUNC, a traced __init__, was called
 * with an instance of class CLS (which has a version tag): the class in
 * CLS's method order whose own __init__ FUNC is, unversioned with its
 * subclasses, added to *HELD (*N, *CAP).  0 (also when FUNC is not CLS's
 * __init__: nothing to do) or -errno.
 */
int pyclass__hold_init(pid_t pid, const struct py_layout *l, uint64_t cls, uint64_t func,
		       struct pyclass_held **held, size_t *n, size_t *cap);

/* HELD (N), in stopped process PID, given back their budgets where they are
 * still as cmon left them and no other user of this cmon holds them. */
void pyclass__release(pid_t pid, const struct py_layout *l, const struct pyclass_held *held,
		      size_t n);

#endif
