/*
 * pyhook.h: what cmon writes into a traced interpreter, and takes back.
 *
 *  - interp->eval_frame: from NULL to &_PyEval_EvalFrameDefault, which
 *    makes CPython call the evaluator for each Python call instead of
 *    inlining Python-to-Python calls (the evaluator's probe then sees them
 *    all).  A SIGKILL of cmon leaves it set: calls are a little slower,
 *    behaviour is the same.
 *  - a selected function's `vectorcall` (3.12+): from _PyFunction_Vectorcall
 *    to the nops just before it, which run into it: CPython inlines only
 *    calls of functions whose vectorcall is _PyFunction_Vectorcall, so only
 *    those calls leave the fast path, through a probed address.  Its
 *    func_version is cleared so that no call site specializes to it.  A
 *    SIGKILL of cmon leaves them so: those functions run through the nops,
 *    unprobed.  Taken back, a function keeps version 0 (3.12 gives it a new
 *    one at its next specialization; 3.13 leaves it unspecialized).
 *
 * Every write is made with the process's threads stopped (proc/freeze.h),
 * or, for a pointer that differs in one byte, as that one byte.  Several
 * users of one interpreter in one cmon (the agent's probes) share what is
 * written; the last to go takes it back.
 */
#ifndef CMON_PYHOOK_H
#define CMON_PYHOOK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "python/pylayout.h"

/* Process PID (LAUNCHED: cmon's child; STOPPED: it is stopped already):
 * the word at AT (interp->eval_frame) set to EVAL.  0 or -errno after one
 * error line (-EBUSY: it has a frame evaluator of its own). */
int pyhook__eval_set(pid_t pid, bool launched, bool stopped, uint64_t at, uint64_t eval);
/* Taken back when this is its last user and it still holds EVAL. */
void pyhook__eval_unset(pid_t pid, bool launched, uint64_t at, uint64_t eval);
/* Found cleared (another cmon ended): set again.  True when it was. */
bool pyhook__eval_check(pid_t pid, bool launched, uint64_t at, uint64_t eval);

/* Which functions to redirect: by their code object. */
typedef bool (*pyhook_select_fn)(void *ctx, uint64_t code);

struct pyhook_vc {
	const struct py_layout *layout;
	uint64_t interp, func_type, vc_func, vc_entry;
};

/* Process PID: every function object SELECT takes pointed at the
 * vectorcall entry (SELECT NULL: none now, those made later are, by the
 * kernel), this cmon one more user of its redirects.  0 and *N, or -errno
 * after one error line. */
int pyhook__vc_redirect(pid_t pid, bool launched, bool stopped, const struct pyhook_vc *vc,
			pyhook_select_fn select, void *ctx, unsigned *n);
/* Each function object pointed at the vectorcall entry sent back (when
 * this is the last user of the process).  *N of them. */
int pyhook__vc_release(pid_t pid, bool launched, const struct pyhook_vc *vc, unsigned *n);

#endif
