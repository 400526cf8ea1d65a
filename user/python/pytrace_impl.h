/*
 * pytrace_impl.h: private to user/python/: the trace (struct pytrace) and
 * its processes (struct py_proc) that cpython.h's façade works on, split
 * by concern:
 *	cpython.c    the trace: patterns, the probes' places, the counts
 *	pyproc.c     the processes: added, and the children they fork (known
 *	             from the kernel's fork records)
 *	pysetup.c    what each process needs written (hook, redirected
 *	             functions, code versions), its stops, all taken back
 *	pyrecord.c   the kernel's records: code objects named, calls decoded
 *	pyinspect.c  a process read on demand: list --py, break --py's stack
 */
#ifndef CMON_PYTRACE_IMPL_H
#define CMON_PYTRACE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cmon_abi.h"
#include "core/hmap.h"
#include "core/strbuf.h"
#include "output/record.h"
#include "python/cpython.h"
#include "python/pyclass.h"
#include "python/pycode.h"
#include "python/pyhook.h"
#include "python/pyinterp.h"
#include "python/pylayout.h"
#include "python/pyvalue.h"

/* A launched interpreter's stops (struct cmon_py_proc.stop): at its
 * start (Py_InitializeFromConfig: its libpython mapped, no Python run
 * yet), then, for the eval_frame hook, at its first Python call. */
enum {
	STOP_NONE = 0,
	STOP_AT_START = 1, /* the kernel stops it there (then STOPPED_START) */
	STOPPED_START = 2,
	STOP_AT_CALL = 3,  /* at its first Python call (then STOPPED_CALL) */
	STOPPED_CALL = 4,
};

struct py_proc {
	pid_t pid;
	bool launched, waiting, hooked, gone;
	bool child; /* forked by a traced one: not added (pytrace__add_process) */
	bool cont; /* stopped by the kernel for a function made: SIGCONT at the tick */
	struct py_interp interp;
	uint64_t bias, interp_addr; /* PyInterpreterState of the main interpreter */
	struct cmon_py_proc kern;
	struct hmap codes; /* code address -> struct py_code * */
	struct hmap versions; /* code address -> its co_version before cmon cleared it */
	struct pyhook_func *funcs; /* sent through the vectorcall entry */
	size_t n_funcs, cap_funcs;
	struct hmap func_at; /* a function's address -> its index in funcs + 1 */
	struct pyclass_held *classes; /* 3.13: kept from entering a traced __init__ */
	size_t n_classes, cap_classes;
	uint64_t checked_ns; /* when they were last checked (another cmon) */
	/* Sent again at the last check: said at the next unless a function
	 * made there is announced meanwhile (a new one where a freed one was,
	 * its announcement on the way: not one another cmon sent back). */
	uint64_t resent[16];
	unsigned n_resent;
	struct pyvalue_ctx values;
};

/* A call's parameters past the first six, waiting for its record. */
struct more_args {
	uint32_t pid, tid, n;
	uint64_t ts;
	struct cmon_py_val v[CMON_PY_MORE_ARGS];
};

struct pytrace {
	char **patterns;
	size_t n_patterns;
	uint64_t *hits; /* per pattern: code objects it selected */
	const char **unmatched;
	size_t strlen;
	bool resumes;
	enum cmon_py_mode mode;
	const struct py_layout *layout; /* every process's: one version a trace */
	struct py_proc *procs;
	size_t n_procs, cap_procs;
	int procs_fd, code_fd, lost_fd;
	uint64_t filtered;
	struct cmon_py_pat *rows;
	unsigned n_rows;
	struct more_args *more;
	size_t n_more, cap_more;
	/* the last decoded record's strings */
	struct strbuf args, ret, where, cellbuf, task;
	char *names[CMON_PY_ALL_ARGS];
	const char *cells[CMON_PY_ALL_ARGS];
	size_t cell_off[CMON_PY_ALL_ARGS];
	size_t columns[CMON_PY_ALL_ARGS];
	struct call_typed typed;
	size_t args_column;
	struct hmap forks; /* a child's pid -> its parent's (the kernel's fork records) */
	uint64_t let_go; /* forked children gone and let go (pytrace__on_exit) */
	uint64_t undecoded; /* records of a process or code object not known */
};

/* pyproc.c */
/* The process of a record: one added, or a child of one (forked by it or
 * by its child) made its parent's copy.  NULL: not known. */
struct py_proc *pyproc__of(struct pytrace *pt, pid_t pid);
/* The addresses the kernel needs (P->kern), once the bias is known. */
void pyproc__fill_kern(struct pytrace *pt, struct py_proc *p);
/* The interpreter's GIL (3.12+) into P->kern. */
void pyproc__fill_gil(const struct pytrace *pt, struct py_proc *p);
/* What P holds freed (its interpreter too). */
void pyproc__release(struct py_proc *p);

/* pyrecord.c */
/* CODE's names and verdict in P: from REC (the kernel's announcement),
 * else cached, else read from the process.  NULL: out of memory, or not
 * readable. */
struct py_code *pyrecord__code(struct pytrace *pt, struct py_proc *p, uint64_t code,
			       const struct cmon_py_code_rec *rec);
/* The kernel's flags for C (CMON_PY_VF_*). */
uint32_t pyrecord__flags(const struct pytrace *pt, const struct py_code *c);

#endif
