/*
 * callgroup.h: private to user/output/.  Records arrive when calls END (a
 * callee before its caller); trees and folded stacks need them in ENTRY
 * order, nested.  A callgroups object holds each thread's records until its
 * outermost traced call (depth 0) has ended, sorts them by entry time and
 * hands the group to the view.  At most max_held records are held per
 * thread: past that the group is handed over early, marked cut (the caller
 * of those calls is not known yet).
 *
 * Replay (records from a store, already in entry order per thread, depth
 * computed from the intervals): a depth-0 record closes the thread's
 * previous group instead.
 */
#ifndef CMON_CALLGROUP_H
#define CMON_CALLGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/hmap.h"
#include "record.h"

struct held_call {
	uint64_t ts_ns, latency_ns;  /* latency valid when has_exit */
	uint64_t latency_lt_ns;      /* not 0: a bound (call_record.latency_lt_ns) */
	uint32_t pid, tid;
	int depth;
	enum call_status status;
	bool has_exit;
	char *func, *comm;
	char *where;   /* --py: "file:line" of the function (its module); NULL: C */
	char *args;    /* "name=value, ..." (raw: the six registers) */
	char *ret;     /* text of the return value; NULL: none (void, no return) */
	char *stack;   /* with callgroups.details: --stack's frames, one a line
			* (record.h); NULL: none */
	char *notes;   /* with callgroups.details: what the call's line ends with,
			* "captures={...} changed={...} truncated=[...]
			* faults=[...]"; NULL: nothing */
};

/* CALLS[0..N) of one thread, in entry order.  CUT: handed over before the
 * thread's outermost call ended (the hold bound).  0 or -errno. */
typedef int (*callgroup_fn)(void *ctx, const struct held_call *calls, size_t n, bool cut);

struct thread_hold;

struct callgroups {
	callgroup_fn fn;
	void *ctx;
	size_t max_held;         /* per thread */
	bool replay;
	bool details;            /* fill held_call.notes and .stack (the tree
				  * shows them; folded does not: no copies) */
	struct hmap index;       /* tid -> slot in threads + 1 */
	struct thread_hold *threads;
	size_t n_threads, cap_threads;
	uint64_t cuts;           /* groups handed over early */
};

#define CALLGROUP_MAX_HELD_DEFAULT 65536

/* The calls held per view when callgroups__init is given 0 (main sets it
 * from $CMON_VIEW_HOLD_MAX; 0 keeps CALLGROUP_MAX_HELD_DEFAULT). */
void callgroups__set_default_max_held(size_t max_held);

/* MAX_HELD 0: the default above. */
void callgroups__init(struct callgroups *g, callgroup_fn fn, void *ctx, size_t max_held);
int callgroups__add(struct callgroups *g, const struct call_record *rec);
int callgroups__flush_all(struct callgroups *g); /* every thread's held calls */
void callgroups__release(struct callgroups *g);

#endif
