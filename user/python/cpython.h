/*
 * cpython.h: Python functions in a CPython interpreter (--py), seen from
 * outside: which interpreter a process runs (ELF symbols, Py_Version), the
 * struct offsets of its version (one table, cpython.c), the eval_frame hook
 * that routes every Python call through _PyEval_EvalFrameDefault (set and
 * restored through process_vm_writev), the names of code objects and which
 * ones the patterns select, and records (cmon_py_rec) as call records.
 *
 * What cmon changes in a traced interpreter: interp->eval_frame, from NULL
 * to &_PyEval_EvalFrameDefault, which makes CPython call the evaluator for
 * each Python call instead of inlining Python-to-Python calls.  Restored on
 * every exit of cmon (only if it still holds cmon's value).  A SIGKILL of
 * cmon leaves it set: calls are then a little slower, behaviour is the same.
 */
#ifndef CMON_CPYTHON_H
#define CMON_CPYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cmon_abi.h"
#include "output/record.h"

#define PY_EVAL_FUNC "_PyEval_EvalFrameDefault"

struct pytrace;

/* PATTERNS: --py values (qualname, Class.method, module.func, globs,
 * FILE:qualname).  STRLEN: --strlen (bytes of a str kept, at most
 * CMON_PY_STR_MAX).  NULL with errno. */
struct pytrace *pytrace__new(const char *const *patterns, size_t n, size_t strlen);
/* Restores every hook still set (pytrace__restore), frees.  NULL is fine. */
void pytrace__free(struct pytrace *pt);

/* The BPF side's offsets (rodata targ_py) of the supported version. */
const struct cmon_py_offsets *pytrace__bpf_offsets(void);

/* Process PID (running, or LAUNCHED: paused before exec of EXE) runs
 * CPython 3.11?  0, or -ENOEXEC / -ENOENT after one error line naming what
 * was found. */
int pytrace__add_process(struct pytrace *pt, pid_t pid, const char *exe, bool launched);

/* The set's evaluator function(s): probed with the Python programs, with a
 * uretprobe.  Returns the func_id Python calls count under (0 if none). */
struct probe_set;
uint32_t pytrace__mark(struct probe_set *set);

/* After attaching: each process into PROCS_FD (map py_procs); running ones
 * get their hook now, launched ones stop at their first Python call (their
 * hook is set by pytrace__tick).  CODE_FD is map py_code.  0 or -errno
 * after one error line. */
int pytrace__start(struct pytrace *pt, int procs_fd, int code_fd);

/* Often (each poll): a launched interpreter stopped at its first Python
 * call gets its hook and is continued. */
void pytrace__tick(struct pytrace *pt);

/* Every hook set back (to what it was, when it still holds cmon's value);
 * stopped processes continued.  Idempotent. */
void pytrace__restore(struct pytrace *pt);

/* A code object announced by the kernel: named, decided. */
void pytrace__on_code(struct pytrace *pt, const struct cmon_py_code_rec *rec);

/* A record of SIZE bytes from the ring buffer into OUT, whole (the values
 * it does not carry absent, comm ended).  0, or -EINVAL when it is not one
 * cmon wrote. */
int pytrace__copy_rec(const void *data, size_t size, struct cmon_py_rec *out);

/* REC (a copy whose comm ends) as a call record into OUT, its typed values
 * kept in PT until the next call.  1: a call to write, 0: not traced (a
 * code object the patterns do not select), -errno. */
int pytrace__decode(struct pytrace *pt, const struct cmon_py_rec *rec, int64_t mono_to_real,
		    struct call_record *out);

/* Does --py PATTERN select function QUALNAME of FILENAME (see README)? */
bool pytrace__pattern_matches(const char *pattern, const char *qualname, const char *filename);

/* CSV: the column the args object goes to. */
void pytrace__set_args_column(struct pytrace *pt, size_t col);

/* Calls of code objects decided not traced after they were recorded
 * (filtered, not lost). */
uint64_t pytrace__filtered(const struct pytrace *pt);

/* cmon break --py: the patterns as the kernel matches a function's first
 * call (cmon_py_break_pat rows, kept in PT).  0, or -EINVAL after one
 * error line (a pattern too long, too many forms). */
int pytrace__break_pats(struct pytrace *pt, const struct cmon_py_break_pat **pats, unsigned *n);

/* cmon break --py: the Python stack of the thread REC (a CMON_PY_BREAK
 * record) stopped, read from its process while it is stopped: one
 * "qualname (file:line)" line per frame, the callee first (its def line,
 * or where a resumed generator stands), then each caller at the line it
 * is at.  0 or -errno. */
struct strbuf;
/* Where the evaluator's probe sits in process PID (0: not one of ours). */
uint64_t pytrace__eval_func(struct pytrace *pt, pid_t pid);
int pytrace__stack(struct pytrace *pt, const struct cmon_py_rec *rec, struct strbuf *out);

#endif
