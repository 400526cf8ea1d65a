/*
 * pyheap.h: the function objects a CPython interpreter has, found from
 * outside by walking its garbage collector's lists (every function object
 * is on one), in a process every thread of which is stopped.
 */
#ifndef CMON_PYHEAP_H
#define CMON_PYHEAP_H

#include <stdint.h>
#include <sys/types.h>
#include "python/pylayout.h"

/* FN(CTX, OBJ, TYPE) for each object the collector tracks (classes,
 * functions...), as pyheap__functions walks them. */
typedef int (*pyheap_obj_fn)(void *ctx, uint64_t obj, uint64_t type);
int pyheap__objects(pid_t pid, const struct py_layout *l, uint64_t interp, pyheap_obj_fn fn,
		    void *ctx, uint64_t *seen);

/* FN(CTX, FUNC, CODE, VECTORCALL) for each: nonzero stops the walk (and is
 * returned). */
typedef int (*pyheap_fn)(void *ctx, uint64_t func, uint64_t code, uint64_t vectorcall);

/*
 * Each function object (type FUNC_TYPE) of the interpreter at INTERP in
 * process PID.  0, -EAGAIN when its collector is running (the lists are in
 * flux: try again once it has run), -errno; *SEEN the objects walked.
 */
int pyheap__functions(pid_t pid, const struct py_layout *l, uint64_t interp, uint64_t func_type,
		      pyheap_fn fn, void *ctx, uint64_t *seen);

#endif
