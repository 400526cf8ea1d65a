/*
 * pyinterp.h: which CPython a process runs, found from the binaries
 * themselves: the ELF that holds the interpreter (the executable of a
 * static build, or the libpython3.X.so it maps or needs), its version
 * (Py_Version), its layout (pylayout), the addresses of what cmon reads and
 * probes, and a check of all that against the process's memory.
 */
#ifndef CMON_PYINTERP_H
#define CMON_PYINTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cmon_abi.h"
#include "probe/insn.h"
#include "python/pylayout.h"

#define PY_EVAL_FUNC "_PyEval_EvalFrameDefault"
#define PY_VC_FUNC "_PyFunction_Vectorcall"

/* CPython's function constructors (their returns are probed, 3.12+). */
enum { PY_NEWFUNC_QUALNAME, PY_NEWFUNC_CONSTRUCTOR, PY_NEWFUNC_N };
extern const char *const py_newfunc_names[PY_NEWFUNC_N];

struct py_interp {
	char *path;      /* the ELF holding CPython: the executable, or its libpython */
	char *open_path; /* what cmon opens (a running process's /proc/PID/root/...) */
	bool shared;     /* PATH is a shared libpython */
	bool pie;        /* addresses move by the load bias */
	uint32_t version; /* Py_Version: 0x030c01f0 for 3.12.1 */
	struct py_layout layout;
	/* Addresses in PATH (add the bias for the process's) */
	uint64_t runtime, eval_func, vc_func, none, true_, false_;
	uint64_t types[CMON_PYT_N], code_type, func_type;
	uint64_t newfunc[PY_NEWFUNC_N];
	uint64_t start; /* Py_InitializeFromConfig: a launched interpreter's start */
	/* The vectorcall entry (3.12+): the nop run before vc_func a selected
	 * function's `vectorcall` points at; 0 when there is none, WHY says. */
	uint64_t vc_entry;
	enum probe_cost vc_entry_cost;
	char vc_why[160];
	/* File offsets of the probed places (0: none) */
	uint64_t eval_off, vc_entry_off, newfunc_off[PY_NEWFUNC_N], start_off;
};

/*
 * The CPython of ELF file PATH (an executable linked with libpython: the
 * library; OPEN_PATH: where cmon reads PATH, NULL for PATH itself).  0, or
 * -ENOEXEC / -ENOENT with WHY: "not an ELF file", "CPython 3.10 (cmon knows
 * 3.11, 3.12, 3.13)", "no _PyRuntime symbol", what its _Py_DebugOffsets
 * say differs.  Free with pyinterp__clear.
 */
int pyinterp__open(const char *path, const char *open_path, struct py_interp *pi, char *why,
		   size_t why_len);

/* Is PATH a CPython, whatever its version (it needs a libpython, or has
 * CPython's entry points)? */
bool pyinterp__is_python(const char *path);

/* The CPython process PID runs: its mapped libpython, else its executable
 * (as pyinterp__open). */
int pyinterp__of_process(pid_t pid, struct py_interp *pi, char *why, size_t why_len);

/* Where PATH is loaded in process PID (the bias to add): 0 and *BIAS, or
 * -ENOENT when it does not map it (yet). */
int pyinterp__bias(const struct py_interp *pi, pid_t pid, uint64_t *bias);

/*
 * What process PID's memory says of its types (their tp_basicsize) agrees
 * with the layout, and it has an interpreter running: 0 and *INTERP (the
 * main PyInterpreterState), or -EINVAL / -ESRCH with WHY.
 */
int pyinterp__check(const struct py_interp *pi, pid_t pid, uint64_t bias, uint64_t *interp,
		    char *why, size_t why_len);

void pyinterp__clear(struct py_interp *pi);

#endif
