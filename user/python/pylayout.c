// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pylayout.c: see pylayout.h.  The rows were read from each version's
 * headers (offsetof with Py_BUILD_CORE): Debian's python3.11-dev (3.11.2)
 * and pyenv's 3.11.7 agree, 3.12.1, 3.13.0.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "python/pylayout.h"

/* What every row shares: the object layouts 3.11 to 3.13 kept. */
#define PY_OBJECTS                                                                 \
	.tuple_items = 24, .type_name = 24, .type_flags = 168, .obj_type = 8,      \
	.var_size = 16, .long_digits = 24, .float_value = 16, .str_length = 16,    \
	.str_state = 32, .bytes_data = 32, .dict_used = 16, .dict_keys = 32,       \
	.dict_values = 40, .cell_ref = 16, .exc_args = 24, .owner_generator = 1,   \
	.code_flags = 48, .code_localsplusnames = 96, .code_filename = 112,        \
	.code_qualname = 128, .func_code = 48, .func_defaults = 56,                \
	.func_kwdefaults = 64, .frame_localsplus = 72, .handle_callback = 24,   \
	.wrapper_task = 16, .method_self = 24

static const struct py_layout layouts[] = {
	{
		.major = 3, .minor = 11,
		.runtime_interp_head = 40, .runtime_interp_main = 48,
		.interp_threads_head = 16, .interp_eval_frame = 1424, .interp_gc = 648,
		.interp_gil = 0, .gc_generations = 24, .gc_generation_size = 24,
		.gc_collecting = 200,
		.tstate_next = 8, .tstate_interp = 16, .tstate_native_tid = 160,
		.tstate_cframe = 56, .cframe_current = 8,
		.frame_previous = 48, .frame_funcobj = 0, .frame_instr = 56, .instr_next = false,
		.code_name = 120, .code_linetable = 136, .code_firsttraceable = 168,
		.code_code = 184, .code_version = 0, .func_qualname = 40, .func_module = 104,
		.size_code = 184, .size_func = 136, .size_long = 24, .size_float = 24,
		.size_tuple = 24, .size_cell = 24, .type_basicsize = 32, .type_dict = 264, .type_base = 256, .size_compact_str = 72, .gen_iframe = 80,
		.bpf = { PY_OBJECTS, .frame_code = 32, .frame_owner = 69,
			 .code_argcount = 56, .code_posonlyargcount = 60,
			 .code_kwonlyargcount = 64, .code_firstlineno = 72,
			 .func_vectorcall = 120, .func_version = 128,
			 .long_tag = 0, .str_ascii_data = 48, .str_utf8_length = 48,
			 .str_utf8 = 56, .gen_iframe = 80, .gen_frame_state = 75,
			 .tstate_exc = 104, .tstate_exc_type = 96, .gil_holder = 0,
			 .frame_previous = 48, .tstate_cframe = 56, .cframe_current = 8,
			 .task_name = 144 },
	},
	{
		.major = 3, .minor = 12,
		.runtime_interp_head = 40, .runtime_interp_main = 48,
		.interp_threads_head = 72, .interp_eval_frame = 1744, .interp_gc = 112,
		.interp_gil = 384, .gc_generations = 24, .gc_generation_size = 24,
		.gc_collecting = 200,
		.tstate_next = 8, .tstate_interp = 16, .tstate_native_tid = 144,
		.tstate_cframe = 56, .cframe_current = 0,
		.frame_previous = 8, .frame_funcobj = 16, .frame_instr = 56, .instr_next = false,
		.code_name = 120, .code_linetable = 136, .code_firsttraceable = 176,
		.code_code = 192, .code_version = 92, .func_qualname = 40, .func_module = 104,
		.size_code = 192, .size_func = 144, .size_long = 24, .size_float = 24,
		.size_tuple = 24, .size_cell = 24, .type_basicsize = 32, .type_dict = 264, .type_base = 256, .size_compact_str = 56, .gen_iframe = 72,
		.bpf = { PY_OBJECTS, .frame_code = 0, .frame_owner = 70,
			 .code_argcount = 52, .code_posonlyargcount = 56,
			 .code_kwonlyargcount = 60, .code_firstlineno = 68,
			 .func_vectorcall = 128, .func_version = 136,
			 .long_tag = 16, .str_ascii_data = 40, .str_utf8_length = 40,
			 .str_utf8 = 48, .gen_iframe = 72, .gen_frame_state = 67,
			 .tstate_exc = 96, .tstate_exc_type = 0, .gil_holder = 8,
			 .frame_previous = 8, .tstate_cframe = 56, .cframe_current = 0,
			 .task_name = 144 },
	},
	{
		.major = 3, .minor = 13,
		.runtime_interp_head = 632, .runtime_interp_main = 640,
		.interp_threads_head = 7344, .interp_eval_frame = 8472, .interp_gc = 7400,
		.interp_gil = 16, .gc_generations = 24, .gc_generation_size = 24,
		.gc_collecting = 200,
		.tstate_next = 8, .tstate_interp = 16, .tstate_native_tid = 160,
		.tstate_cframe = 0, .cframe_current = 72,
		.frame_previous = 8, .frame_funcobj = 16, .frame_instr = 56, .instr_next = true,
		.code_name = 120, .code_linetable = 136, .code_firsttraceable = 184,
		.code_code = 200, .code_version = 92, .func_qualname = 40, .func_module = 104,
		.type_version = 384, .type_versions_used = 410, .type_subclasses = 360, .type_mro = 344,
		.size_code = 200, .size_func = 144, .size_long = 24, .size_float = 24,
		.size_tuple = 24, .size_cell = 24, .type_basicsize = 32, .type_dict = 264, .type_base = 256, .size_compact_str = 56, .gen_iframe = 72,
		.bpf = { PY_OBJECTS, .frame_code = 0, .frame_owner = 70,
			 .code_argcount = 52, .code_posonlyargcount = 56,
			 .code_kwonlyargcount = 60, .code_firstlineno = 68,
			 .func_vectorcall = 128, .func_version = 136,
			 .long_tag = 16, .str_ascii_data = 40, .str_utf8_length = 40,
			 .str_utf8 = 48, .gen_iframe = 72, .gen_frame_state = 67,
			 .tstate_exc = 112, .tstate_exc_type = 0, .gil_holder = 8,
			 .frame_previous = 8, .tstate_cframe = 0, .cframe_current = 72,
			 .task_name = 128, .type_version = 384 },
	},
};

const struct py_layout *pylayout__for(unsigned major, unsigned minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

const char *pylayout__known(void)
{
	return "3.11, 3.12, 3.13";
}

/*
 * 3.13's _Py_DebugOffsets, field by field (uint64 each): the offsets in it
 * cmon compares with its row, by their index after the 8-byte cookie.
 */
enum {
	DO_VERSION = 0, DO_FREE_THREADED,
	DO_RT_SIZE, DO_RT_FINALIZING, DO_RT_INTERP_HEAD,
	DO_IS_SIZE, DO_IS_ID, DO_IS_NEXT, DO_IS_THREADS_HEAD, DO_IS_GC, DO_IS_MODULES,
	DO_IS_SYSDICT, DO_IS_BUILTINS, DO_IS_CEVAL_GIL, DO_IS_GIL_RS, DO_IS_GIL_ENABLED,
	DO_IS_GIL_LOCKED, DO_IS_GIL_HOLDER,
	DO_TS_SIZE, DO_TS_PREV, DO_TS_NEXT, DO_TS_INTERP, DO_TS_CURRENT_FRAME, DO_TS_THREAD_ID,
	DO_TS_NATIVE_TID, DO_TS_DATASTACK, DO_TS_STATUS,
	DO_FR_SIZE, DO_FR_PREVIOUS, DO_FR_EXECUTABLE, DO_FR_INSTR_PTR, DO_FR_LOCALSPLUS,
	DO_FR_OWNER,
	DO_CO_SIZE, DO_CO_FILENAME, DO_CO_NAME, DO_CO_QUALNAME, DO_CO_LINETABLE,
	DO_CO_FIRSTLINENO, DO_CO_ARGCOUNT, DO_CO_LOCALSPLUSNAMES, DO_CO_LOCALSPLUSKINDS,
	DO_CO_CODE_ADAPTIVE,
	DO_OB_SIZE, DO_OB_TYPE,
	DO_TY_SIZE, DO_TY_NAME, DO_TY_REPR, DO_TY_FLAGS,
	DO_TU_SIZE, DO_TU_ITEM, DO_TU_OB_SIZE,
	DO_LI_SIZE, DO_LI_ITEM, DO_LI_OB_SIZE,
	DO_DI_SIZE, DO_DI_KEYS, DO_DI_VALUES,
	DO_FL_SIZE, DO_FL_FVAL,
	DO_LO_SIZE, DO_LO_TAG, DO_LO_DIGIT,
	DO_BY_SIZE, DO_BY_OB_SIZE, DO_BY_SVAL,
	DO_UN_SIZE, DO_UN_STATE, DO_UN_LENGTH, DO_UN_ASCII_SIZE,
	DO_GC_SIZE, DO_GC_COLLECTING,
	DO_N
};

int pylayout__check_debug_offsets(const struct py_layout *l, const void *raw, size_t len,
				  uint32_t version, char *why, size_t why_len)
{
	const struct cmon_py_offsets *o = &l->bpf;
	uint64_t v[DO_N];
	const struct {
		int at;
		uint64_t want;
		const char *what;
	} fields[] = {
		{ DO_RT_INTERP_HEAD, l->runtime_interp_head, "runtime.interpreters.head" },
		{ DO_IS_THREADS_HEAD, l->interp_threads_head, "interpreter.threads.head" },
		{ DO_IS_GC, l->interp_gc, "interpreter.gc" },
		{ DO_IS_CEVAL_GIL, l->interp_gil, "interpreter.ceval.gil" },
		{ DO_TS_NEXT, l->tstate_next, "thread.next" },
		{ DO_TS_INTERP, l->tstate_interp, "thread.interp" },
		{ DO_TS_CURRENT_FRAME, l->cframe_current, "thread.current_frame" },
		{ DO_TS_NATIVE_TID, l->tstate_native_tid, "thread.native_thread_id" },
		{ DO_FR_PREVIOUS, l->frame_previous, "frame.previous" },
		{ DO_FR_EXECUTABLE, o->frame_code, "frame.f_executable" },
		{ DO_FR_INSTR_PTR, l->frame_instr, "frame.instr_ptr" },
		{ DO_FR_LOCALSPLUS, o->frame_localsplus, "frame.localsplus" },
		{ DO_FR_OWNER, o->frame_owner, "frame.owner" },
		{ DO_CO_FILENAME, o->code_filename, "code.co_filename" },
		{ DO_CO_NAME, l->code_name, "code.co_name" },
		{ DO_CO_QUALNAME, o->code_qualname, "code.co_qualname" },
		{ DO_CO_LINETABLE, l->code_linetable, "code.co_linetable" },
		{ DO_CO_FIRSTLINENO, o->code_firstlineno, "code.co_firstlineno" },
		{ DO_CO_ARGCOUNT, o->code_argcount, "code.co_argcount" },
		{ DO_CO_LOCALSPLUSNAMES, o->code_localsplusnames, "code.co_localsplusnames" },
		{ DO_CO_CODE_ADAPTIVE, l->code_code, "code.co_code_adaptive" },
		{ DO_OB_TYPE, o->obj_type, "object.ob_type" },
		{ DO_TY_NAME, o->type_name, "type.tp_name" },
		{ DO_TY_FLAGS, o->type_flags, "type.tp_flags" },
		{ DO_TU_ITEM, o->tuple_items, "tuple.ob_item" },
		{ DO_TU_OB_SIZE, o->var_size, "tuple.ob_size" },
		{ DO_DI_KEYS, o->dict_keys, "dict.ma_keys" },
		{ DO_DI_VALUES, o->dict_values, "dict.ma_values" },
		{ DO_FL_FVAL, o->float_value, "float.ob_fval" },
		{ DO_LO_TAG, o->long_tag, "int.lv_tag" },
		{ DO_LO_DIGIT, o->long_digits, "int.ob_digit" },
		{ DO_BY_SVAL, o->bytes_data, "bytes.ob_sval" },
		{ DO_UN_STATE, o->str_state, "str.state" },
		{ DO_UN_LENGTH, o->str_length, "str.length" },
		{ DO_UN_ASCII_SIZE, o->str_ascii_data, "sizeof(PyASCIIObject)" },
		{ DO_GC_COLLECTING, l->gc_collecting, "gc.collecting" },
	};

	if (len < 8 + sizeof(v) || memcmp(raw, "xdebugpy", 8)) {
		snprintf(why, why_len, "_PyRuntime does not start with _Py_DebugOffsets "
			 "(no \"xdebugpy\" cookie)");
		return -EINVAL;
	}
	memcpy(v, (const char *)raw + 8, sizeof(v));
	if ((v[DO_VERSION] >> 16) != (version >> 16)) {
		snprintf(why, why_len, "_Py_DebugOffsets names version %#llx, Py_Version %#x",
			 (unsigned long long)v[DO_VERSION], version);
		return -EINVAL;
	}
	if (v[DO_FREE_THREADED]) {
		snprintf(why, why_len, "a free-threaded build (its objects are laid out "
			 "otherwise)");
		return -EINVAL;
	}
	if (v[DO_IS_GIL_HOLDER] - v[DO_IS_GIL_RS] != o->gil_holder) {
		snprintf(why, why_len, "its gil.last_holder is at %llu, not %u as in CPython %u.%u's "
			 "headers", (unsigned long long)(v[DO_IS_GIL_HOLDER] - v[DO_IS_GIL_RS]),
			 o->gil_holder, l->major, l->minor);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (v[fields[i].at] != fields[i].want) {
			snprintf(why, why_len, "its %s is at %llu, not %llu as in CPython %u.%u's "
				 "headers", fields[i].what, (unsigned long long)v[fields[i].at],
				 (unsigned long long)fields[i].want, l->major, l->minor);
			return -EINVAL;
		}
	}
	return 0;
}
