/*
 * pylayout.h: where a CPython version keeps what cmon reads: the offsets
 * of its runtime, interpreter, thread, frame, code, function and object
 * structs.  One row per version cmon knows (3.11, 3.12, 3.13: taken from
 * their headers); from 3.13 on, CPython describes itself at the start of
 * _PyRuntime (_Py_DebugOffsets, cookie "xdebugpy"), which is checked
 * against the row, so that a build that differs is refused, not misread.
 */
#ifndef CMON_PYLAYOUT_H
#define CMON_PYLAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cmon_abi.h"

struct py_layout {
	unsigned major, minor;
	/* the runtime, interpreters and threads */
	uint32_t runtime_interp_head;  /* _PyRuntime.interpreters.head */
	uint32_t runtime_interp_main;  /* _PyRuntime.interpreters.main */
	uint32_t interp_threads_head;  /* PyInterpreterState.threads.head */
	uint32_t interp_eval_frame;    /* .eval_frame (PEP 523) */
	uint32_t interp_gc;            /* .gc (struct _gc_runtime_state) */
	uint32_t interp_gil;           /* .ceval.gil (3.12+; 0: one GIL, the runtime's) */
	uint32_t gc_generations;       /* in .gc: generations[3], then the permanent one */
	uint32_t gc_generation_size;
	uint32_t gc_collecting;
	uint32_t tstate_next, tstate_interp, tstate_native_tid;
	uint32_t tstate_cframe;        /* 3.11, 3.12: .cframe; 0: 3.13's current_frame */
	uint32_t cframe_current;       /* _PyCFrame.current_frame (3.13: tstate.current_frame) */
	/* frames and code */
	uint32_t frame_previous, frame_funcobj, frame_instr;
	bool instr_next;               /* 3.13: instr_ptr is the next instruction, not prev_instr */
	uint32_t code_name, code_linetable, code_firsttraceable, code_code;
	uint32_t code_version;         /* co_version (3.12+): a new function's func_version */
	uint32_t func_qualname, func_module;
	/* tp_basicsize of the process's own types, checked before attaching
	 * (a code object's is where its bytecode starts) */
	uint32_t size_code, size_func, size_long, size_float, size_tuple, size_cell;
	uint32_t type_basicsize;
	uint32_t type_dict, type_base; /* PyTypeObject.tp_dict, .tp_base */
	/* 3.13 (0: not needed): .tp_version_tag, .tp_versions_used (the
	 * budget of new tags), .tp_subclasses (a dict of weak references) */
	uint32_t type_version, type_versions_used, type_subclasses, type_mro;
	uint32_t size_compact_str;     /* sizeof(PyCompactUnicodeObject): a non-ASCII str's data */
	uint32_t gen_iframe;
	struct cmon_py_offsets bpf;
};

/* The row of version MAJOR.MINOR, NULL when cmon does not know it. */
const struct py_layout *pylayout__for(unsigned major, unsigned minor);

/* "3.11, 3.12, 3.13": the versions cmon knows. */
const char *pylayout__known(void);

/*
 * 3.13+: _Py_DebugOffsets (RAW, LEN bytes from the start of _PyRuntime)
 * against layout L: 0 when they agree; -EINVAL with WHY (what differs,
 * "no xdebugpy cookie") when they do not.  VERSION: Py_Version, which the
 * offsets must name too.
 */
int pylayout__check_debug_offsets(const struct py_layout *l, const void *raw, size_t len,
				  uint32_t version, char *why, size_t why_len);

/* Bytes of _PyRuntime the check reads. */
#define PYLAYOUT_DEBUG_OFFSETS_LEN 640

#endif
