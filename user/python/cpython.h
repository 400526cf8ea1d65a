/*
 * cpython.h: Python functions in CPython processes (--py), seen from
 * outside: which interpreter each process runs (pyinterp: a static build
 * or its libpython, 3.11 to 3.13), how its calls are seen (pyhook: the
 * eval_frame hook, every call through the evaluator; or, 3.12+, only the
 * selected functions sent through the vectorcall entry), the code objects
 * named and selected (pycode), and the kernel's records (cmon_py_rec) as
 * call records (pyvalue).  The probes' places are added to the probe set
 * (pytrace__mark); what is written into the processes is taken back on
 * every exit of cmon (pytrace__restore).  The façade of cpython.c,
 * pyproc.c, pysetup.c, pyrecord.c and pyinspect.c (pytrace_impl.h says
 * which does what).
 */
#ifndef CMON_CPYTHON_H
#define CMON_CPYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cmon_abi.h"
#include "output/record.h"
#include "python/pyinterp.h"

struct pytrace;
struct probe_set;
struct strbuf;

/* PATTERNS: --py values (pycode.h).  STRLEN: --strlen (bytes of a str
 * kept, at most CMON_PY_STR_MAX).  RESUMES (--py-resumes): on 3.12+ too,
 * every call through the evaluator, so that each resume of a generator or
 * coroutine is a record.  NULL with errno. */
struct pytrace *pytrace__new(const char *const *patterns, size_t n, size_t strlen, bool resumes);
/* Restores what was written (pytrace__restore), frees.  NULL is fine. */
void pytrace__free(struct pytrace *pt);

/* Process PID (running, or LAUNCHED: paused before exec of EXE) runs a
 * CPython cmon knows?  0, or -ENOEXEC / -ENOENT after one error line
 * naming what was found. */
int pytrace__add_process(struct pytrace *pt, pid_t pid, const char *exe, bool launched);

/* The BPF side's offsets (rodata targ_py): the processes' version's. */
const struct cmon_py_offsets *pytrace__bpf_offsets(const struct pytrace *pt);
/* How the calls are seen: enum cmon_py_mode. */
unsigned pytrace__mode(const struct pytrace *pt);

/* The patterns' rows for the kernel (targ_py_pats).  BREAK: every form
 * must be one the kernel decides at once.  0, or -EINVAL after one error
 * line. */
int pytrace__rows(struct pytrace *pt, bool for_break, const struct cmon_py_pat **rows,
		  unsigned *n);

/* The probes into SET: the evaluator found there (PY_EVAL_FUNC) becomes
 * what the processes' way in probes, and the functions that go with it
 * are added (the interpreter's start with a launched process, or FOLLOW:
 * children followed, which may exec it again).  Returns the func_id Python
 * calls count under (0 if none); -errno after one error line. */
long pytrace__mark(struct pytrace *pt, struct probe_set *set, bool follow);

/* After attaching: each process into PROCS_FD (map py_procs) and what it
 * needs written (a running one now; a launched one stops at its start,
 * then at its first Python call, and pytrace__tick finishes).  CODE_FD is
 * map py_code, LOST_FD py_lost.  0 or -errno after one error line. */
int pytrace__start(struct pytrace *pt, int procs_fd, int code_fd, int lost_fd);

/* The calls lost (their record not written, or their return not seen),
 * per function and process, from the kernel's counts: FN(CTX, pid,
 * qualname, "file:line", count) for each. */
typedef void (*pytrace_lost_fn)(void *ctx, uint32_t pid, const char *qualname, const char *where,
				uint64_t n);
void pytrace__each_lost(struct pytrace *pt, pytrace_lost_fn fn, void *ctx);

/* Often (each poll): a launched interpreter stopped for cmon is set up and
 * continued; a hook another cmon cleared is set again. */
void pytrace__tick(struct pytrace *pt);

/* Everything written taken back; stopped processes continued.  Idempotent. */
void pytrace__restore(struct pytrace *pt);

/* A code object announced by the kernel: named, decided. */
void pytrace__on_code(struct pytrace *pt, const struct cmon_py_code_rec *rec);

/* A call's further parameters (cmon_py_args_rec, SIZE bytes): kept for its
 * call record.  0 or -EINVAL. */
int pytrace__on_args(struct pytrace *pt, const void *data, size_t size);

/* A function made whose code the kernel selected (cmon_py_func_rec, SIZE
 * bytes): sent through the vectorcall entry, its process (stopped by the
 * kernel for it) continued at the next pytrace__tick.  0 or -EINVAL. */
int pytrace__on_func(struct pytrace *pt, const void *data, size_t size);

/* A followed process PARENT forked CHILD (the kernel's fork record, which
 * comes before any record of CHILD's): CHILD's interpreter is PARENT's. */
void pytrace__on_fork(struct pytrace *pt, pid_t child, pid_t parent);

/* Process PID is gone and its records are all read (the kernel's exit
 * record, after them): a forked child is let go (its fork, its codes, its
 * verdicts in the kernel), unless calls of it were lost (named at the end
 * from its codes); its children not read yet become its parent's. */
void pytrace__on_exit(struct pytrace *pt, pid_t pid);

/* Process PID exec'd (the kernel's exec record, after the old program's
 * records): what cmon knew of it goes; should it run the trace's CPython
 * now, it is set up at its start as a launched one (the kernel stops it
 * there), else said (-v) and left. */
void pytrace__on_exec(struct pytrace *pt, pid_t pid);

/* Processes known now (added ones and forked children not let go), the
 * forks kept, and the children let go so far. */
void pytrace__sizes(const struct pytrace *pt, size_t *procs, size_t *forks, uint64_t *gone);
/* Is PID's interpreter known (a process added, a child seen, or a fork
 * told)?  When not, its fork record is to be read first. */
bool pytrace__knows(const struct pytrace *pt, pid_t pid);
/* PID was added (pytrace__add_process), not a child of one. */
bool pytrace__added(const struct pytrace *pt, pid_t pid);
/* Records pytrace__decode could not decode (their process's interpreter
 * not known, their code object not named): lost, counted. */
uint64_t pytrace__undecoded(const struct pytrace *pt);

/* A record of SIZE bytes from the ring buffer into OUT, whole (the values
 * it does not carry absent, comm ended).  0, or -EINVAL when it is not one
 * cmon wrote. */
int pytrace__copy_rec(const void *data, size_t size, struct cmon_py_rec *out);

/* REC (a copy whose comm ends) as a call record into OUT, its typed values
 * kept in PT until the next call.  1: a call to write, 0: not traced (a
 * code object the patterns do not select), -errno: not decoded (counted:
 * pytrace__undecoded). */
int pytrace__decode(struct pytrace *pt, const struct cmon_py_rec *rec, int64_t mono_to_real,
		    struct call_record *out);

/* CSV: the column the args object goes to. */
void pytrace__set_args_column(struct pytrace *pt, size_t col);

/* Calls of code objects decided not traced after they were recorded
 * (filtered, not lost). */
uint64_t pytrace__filtered(const struct pytrace *pt);

/* The patterns no function selected so far: *N of them (valid until PT is
 * freed). */
const char *const *pytrace__unmatched(struct pytrace *pt, size_t *n);

/* How the calls of process PID are seen, for messages: "the evaluator"
 * or "the vectorcall entry"; and its probe's address. */
const char *pytrace__way(const struct pytrace *pt, pid_t pid, uint64_t *addr);

/* cmon list --py: each Python function process PID has (its function
 * objects, found with the process paused), one call of FN(CTX, its code
 * object) per code object.  0, or -errno after one error line. */
struct py_code;
typedef int (*pytrace_func_fn)(void *ctx, const struct py_code *c);
int pytrace__list_functions(pid_t pid, pytrace_func_fn fn, void *ctx);

/* cmon break --py: the Python stack of the thread REC (a CMON_PY_BREAK
 * record) stopped, read from its process while it is stopped: one
 * "qualname (file:line)" line per frame, the callee first (its def line,
 * or where a resumed generator stands), then each caller at the line it
 * is at.  0 or -errno. */
int pytrace__stack(struct pytrace *pt, const struct cmon_py_rec *rec, struct strbuf *out);

#endif
