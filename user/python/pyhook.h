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

/* Which functions to send through the vectorcall entry: by code object. */
typedef bool (*pyhook_select_fn)(void *ctx, uint64_t code);

struct pyhook_vc {
	const struct py_layout *layout;
	uint64_t interp, func_type, vc_func, vc_entry;
};

/* One function sent: its object and the code object it had then. */
struct pyhook_func {
	uint64_t func, code;
};

/* Function F of process PID, which is stopped (or F is not shared yet),
 * sent through the vectorcall entry (its version cleared first), this
 * user one more holder of it.  0 or -errno. */
int pyhook__vc_send(pid_t pid, const struct pyhook_vc *vc, const struct pyhook_func *f);

/* F made where a function this user holds was (pymalloc reuses a freed
 * object's memory): sent as pyhook__vc_send does, held once still.
 * 0 or -errno. */
int pyhook__vc_resend(pid_t pid, const struct pyhook_vc *vc, const struct pyhook_func *f);

/* Process PID: every function object SELECT takes sent (as
 * pyhook__vc_send), each added to *FUNCS (*N of them, *CAP allocated).
 * 0, or -errno after one error line. */
int pyhook__vc_walk(pid_t pid, bool launched, bool stopped, const struct pyhook_vc *vc,
		    pyhook_select_fn select, void *ctx, struct pyhook_func **funcs, size_t *n,
		    size_t *cap);

/* FUNCS (N) let go by this user: those no other user holds sent back to
 * CPython's fast path when still as cmon left them.  *BACK: how many. */
int pyhook__vc_release(pid_t pid, bool launched, const struct pyhook_vc *vc,
		       const struct pyhook_func *funcs, size_t n, unsigned *back);

/* Any of FUNCS (N) found sent back by someone else (another cmon ended)
 * sent again, the first MAX_AT of their addresses into AT.  How many
 * were; -EAGAIN, nothing done, when PID is stopped (by the kernel, for a
 * function just made where a freed one was: its announcement is on the
 * way, and pausing it here would let it go on before it is sent). */
int pyhook__vc_check(pid_t pid, bool launched, const struct pyhook_vc *vc,
		     const struct pyhook_func *funcs, size_t n, uint64_t *at, size_t max_at);

#endif
