/*
 * record.h: one traced call as the writers see it, decoded from the kernel's
 * struct cmon_call_rec: wall-clock time, names resolved, values typed.
 */
#ifndef CMON_RECORD_H
#define CMON_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum call_status {
	CALL_OK = 0,      /* returned: ret, latency and *_exit are set */
	CALL_NORETURN,    /* entered, never returned (longjmp, exception, exit) */
	CALL_ENTRY_ONLY,  /* --no-return */
	CALL_TAILCALL,    /* left by a tail jump: latency set, ret unknown */
	CALL_NEVER_RETURNS, /* a function with no normal return (_start, no ret):
			     * written at entry, it has no exit probe */
	CALL_USDT,        /* a USDT probe fired: args as its note says, no return */
	CALL_LINE,        /* a source line ran (--line): no args, no return */
	CALL_RAISED,      /* --py: an exception left the function (latency set, no value) */
	CALL_YIELD,       /* --py: a generator or coroutine yielded (latency set) */
};

/* "ok", "noreturn", "entry", "tailcall", "never-returns" */
const char *call_status__name(enum call_status s);

struct call_record;
struct render_out;  /* output/render.h */
struct render_cols;
struct render_leaf;
/* The call returned a value to show: it returned (CALL_OK) and DWARF does
 * not say it is void (a void function's rax is whatever was left there). */
bool call_record__has_ret(const struct call_record *rec);
/* Its typed retval means something: a call that returned one, or (--py)
 * the value a generator yielded, the exception that left it. */
bool call_record__typed_ret(const struct call_record *rec);

/* What DWARF (and --capture) made of a call; values are JSON text. */
struct call_typed {
	const char *args;      /* {"name":value,...} */
	const char *retval;    /* a JSON value: the typed return (null: none) */
	const char *captures;  /* {"name":value,...}, NULL when there are none */
	const char *truncated; /* JSON array of value paths cut short, NULL: none */
	const char *faults;    /* JSON array of value paths not readable, NULL: none */
	/* --capture-at both: {"name":value} at the return and the leaves that
	 * differ {"a->balance":[100,110]}; NULL: not asked or no return */
	const char *at_return, *changed;
	const char *const *names; /* [n_cells] parameter names */
	const char *const *cells; /* [n_cells] each parameter's value, JSON text */
	const size_t *columns;    /* [n_cells] the extra CSV column of each cell */
	size_t n_cells;
	bool returns_void;        /* no return value: ret is not shown */
	bool python;              /* --py: the table shows null/true/false as
				   * None/True/False, and a null return as None */
	size_t args_column;       /* --py: the CSV column of the whole args
				   * object (header "args"); SIZE_MAX: none */
	/* The value form for tables (render.h): the function's columns and
	 * this call's leaves in them; NULL, 0: not noted (CSV then takes
	 * each parameter's cell, as --py's) */
	const struct render_cols *cols;
	const struct render_leaf *leaves;
	size_t n_leaves;
	const char *unavailable;  /* "path: why; ..." of the values not there, NULL: none */
	const char *task;         /* --py: a coroutine's asyncio task, {"name":..,"id":..};
				   * NULL: none known */
};

/* The text table's spelling of typed value V (JSON text). */
const char *call_typed__text(const struct call_typed *t, const char *v);

struct call_record {
	uint64_t ts_ns;        /* wall clock (CLOCK_REALTIME) of the entry, ns */
	uint32_t pid, tid;
	const char *comm;      /* process name; any bytes, NUL-terminated */
	const char *func;      /* function name as matched (demangled for C++) */
	const char *module;    /* basename of the object holding func */
	int depth;             /* traced calls pending below it; -1 unknown */
	int64_t args[6];       /* raw integer argument registers */
	uint8_t args_unsigned; /* bit i: args[i] is unsigned 64-bit (a USDT 8@ argument) */
	int64_t ret;           /* valid when status == CALL_OK */
	uint64_t latency_ns;   /* valid when status is CALL_OK or CALL_TAILCALL */
	/* Not 0: latency_ns (less the probes' calibrated cost) is not a
	 * measurement: the probes' cost varies by more than was left, and
	 * all that is known is that the call took less than this. */
	uint64_t latency_lt_ns;
	uint64_t rss_entry, rss_exit, vms_entry, vms_exit; /* bytes; *_exit as latency */
	enum call_status status;
	const struct call_typed *typed; /* NULL: raw mode (no DWARF) */
	bool line_timed;       /* CALL_LINE of --lines: latency_ns is the time until the
				* thread's next line event, rss_exit the RSS then */
	const char *stack;     /* --stack: frames, innermost first, each ending in
				* '\n'; NULL: not asked or not kept */
	const struct render_out *rendered; /* the typer's whole rendering (its
					    * buffers go to a capture store); NULL: none */
	const char *cgroup;    /* --cgroup/--container: the process's cgroup v2
				* path (JSON "cgroup", CSV_CGROUP); NULL: none */
	/* A duty-cycled probe's record (the agent under a budget): the
	 * fraction of time its probe was attached, so one record stands for
	 * about 1/sampled calls.  0: every call is seen. */
	double sampled;
	uint64_t call_no;      /* its number among its function's calls in a
				* store (cmon export); 0: none */
	bool no_regs;          /* the registers are not known (a store keeps
				* typed values): JSON's arg0..arg5 and ret null */
};

#endif
