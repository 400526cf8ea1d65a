/*
 * record.h: one traced call as the writers see it, decoded from the kernel's
 * struct cmon_call_rec: wall-clock time, names resolved, values typed.
 */
#ifndef CMON_RECORD_H
#define CMON_RECORD_H

#include <stdbool.h>
#include <stdint.h>

enum call_status {
	CALL_OK = 0,      /* returned: ret, latency and *_exit are set */
	CALL_NORETURN,    /* entered, never returned (longjmp, exception, exit) */
	CALL_ENTRY_ONLY,  /* --no-return */
	CALL_TAILCALL,    /* left by a tail jump: latency set, ret unknown */
};

/* "ok", "noreturn", "entry", "tailcall" */
const char *call_status__name(enum call_status s);

struct call_record {
	uint64_t ts_ns;        /* wall clock (CLOCK_REALTIME) of the entry, ns */
	uint32_t pid, tid;
	const char *comm;      /* process name; any bytes, NUL-terminated */
	const char *func;      /* function name as matched (demangled for C++) */
	const char *module;    /* basename of the object holding func */
	int depth;             /* traced calls pending below it; -1 unknown */
	int64_t args[6];       /* raw integer argument registers */
	int64_t ret;           /* valid when status == CALL_OK */
	uint64_t latency_ns;   /* valid when status is CALL_OK or CALL_TAILCALL */
	uint64_t rss_entry, rss_exit, vms_entry, vms_exit; /* bytes; *_exit as latency */
	enum call_status status;
};

#endif
