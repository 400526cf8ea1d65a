/*
 * options.h: the command lines of `cmon trace`, `cmon list` and
 * `cmon profile`, parsed into a struct by a function that never exits, so
 * tests can call it.
 */
#ifndef CMON_OPTIONS_H
#define CMON_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/optable.h"
#include "output/writer.h"
#include "probe/resolve.h"

/* The commands, as the option table's bits. */
enum opt_cmd {
	OC_TRACE = 1u << 0,
	OC_CAPTURE = 1u << 1,
	OC_PROFILE = 1u << 2,
	OC_LIST = 1u << 3,
	OC_EXPORT = 1u << 4,
	OC_LS = 1u << 5,
	OC_SHOW = 1u << 6,
	OC_STATS = 1u << 7,
	OC_REPORT = 1u << 8,
	OC_RM = 1u << 9,
	OC_BREAK = 1u << 10,
	OC_DIFF = 1u << 11,
	OC_HOST = 1u << 12,
};

/* Keys of the options without a short letter. */
enum opt_key {
	OPT_BINARY = 0x100,
	OPT_NO_RETURN,
	OPT_FOLLOW,
	OPT_NO_FOLLOW,
	OPT_HOST_WIDE_PROBES,
	OPT_DURATION,
	OPT_MAX_EVENTS,
	OPT_RETURN_PROBE,
	OPT_RINGBUF,
	OPT_POLL_MS,
	OPT_BLOCKING_TIMEOUT,
	OPT_INTERVAL,
	OPT_BUDGET,
	OPT_PER_PID,
	OPT_HIST,
	OPT_HIST_LINEAR,
	OPT_NO_MEM,
	OPT_CAPTURE,
	OPT_STRLEN,
	OPT_CAPTURE_AT,
	OPT_DEREF,
	OPT_CAPTURE_MAX,
	OPT_RAW,
	OPT_NO_FAULT_IN,
	OPT_RAW_LATENCY,
	OPT_EXCLUDE,
	OPT_PER_CALL,
	OPT_CHROME,
	OPT_SINCE,
	OPT_UNTIL,
	OPT_TITLE,
	OPT_DIFF,
	OPT_USDT,
	OPT_PY,
	OPT_PY_RESUMES,
	OPT_PY_LIST,
	OPT_CALLERS,
	OPT_FOCUS,
	OPT_MAX_DEPTH,
	OPT_STACK,
	OPT_LOCALS,
	OPT_LINE,
	OPT_LINES_OF,
	OPT_WATCH,
	OPT_COUNT,
	OPT_RESUME_AFTER,
	OPT_JSON,
	OPT_IF,
	OPT_ON_CHANGE,
	OPT_CSV,
	OPT_TEXT_STRLEN,
	OPT_ORDER,
	OPT_NO_DEBUGINFOD,
	OPT_CGROUP,
	OPT_CONTAINER,
};

/* Every option of every cmon command (options.c). */
extern const struct opt_row cmon_opt_rows[];
extern const size_t cmon_opt_n_rows;

/* Start parsing ARGV for command CMD (one OC_ bit) named NAME: an
 * optable over cmon_opt_rows.  0, or -errno after one error line. */
int cmon_opts__begin(struct optable *t, unsigned cmd, const char *name, int keep_order);

/* "options:" and the option lines of command CMD. */
void cmon_opts__usage(unsigned cmd, FILE *out);

/* A command whose only option is --help: -1 to go on with the operands
 * from optind, else the exit status (0 after USAGE on stdout, 2 after one
 * error line). */
int cmon_opts__help_only(unsigned cmd, const char *name, int argc, char **argv,
			 void (*usage)(FILE *out));

struct cmd_opts {
	pid_t *pids;          /* -p, repeatable */
	size_t n_pids;
	const char *binary;   /* --binary */
	const char *cgroup;   /* --cgroup: a cgroup v2 directory */
	const char *container; /* --container: a container's id (or its start) */
	bool no_debuginfod;   /* --no-debuginfod */
	char **cmd;           /* program to launch (points into argv) */
	int cmd_argc;
	const char **funcs;   /* --func, repeatable (and positional patterns for list) */
	size_t n_funcs;
	const char **usdts;   /* --usdt [FILE:]PROVIDER:NAME, repeatable */
	size_t n_usdts;
	const char **py;      /* --py PATTERN: Python functions, repeatable */
	size_t n_py;
	bool py_resumes;      /* --py-resumes: every Python call through the evaluator (3.12+) */
	bool py_list;         /* list --py: the Python functions of -p PID */
	const char **focus;   /* --focus PATTERN, repeatable */
	size_t n_focus;
	int max_depth;        /* --max-depth N below the focus; -1 (set by the parser): any */
	bool stack;           /* --stack: each call's user stack */
	bool locals;          /* --locals: a --line record's variables in scope */
	uint8_t capture_at;   /* --capture-at: enum plan_at */
	const char *if_expr;  /* --if EXPR (parsed once here; compiled per function later) */
	const char *on_change; /* --on-change EXPR */
	const char **lines;   /* --line FILE:LINE, repeatable */
	size_t n_lines;
	bool list_lines;      /* cmon list --lines: the lines of code of each function */
	const char **lines_of; /* trace --lines FUNC, repeatable */
	size_t n_lines_of;
	char **owned;         /* strings made while parsing (--exclude's "!PATTERN") */
	size_t n_owned;
	enum out_format format;
	uint8_t csv_shape;    /* --csv: enum csv_shape */
	uint32_t text_strlen; /* --text-strlen; 0: whole */
	bool call_order;      /* --order call: rows in the order the calls began */
	const char *output;   /* -o; NULL: stdout */
	bool no_return;
	/* Children too (follow.h): by default for -- CMD (--no-follow: not),
	 * with --follow for -p. */
	int follow; /* -1 not said, 0 --no-follow, 1 --follow */
	/* --host-wide-probes: the libraries' probes without a pid filter,
	 * before the program runs (no child lost; every process pays) */
	bool host_wide;
	double duration_s;    /* 0: until stopped */
	uint64_t max_events;  /* 0: no limit */
	enum return_choice ret_choice;
	int verbose;
	bool quiet;           /* no summary on stderr */
	size_t ringbuf_bytes;
	int poll_ms;
	uint64_t block_ns;    /* --blocking-timeout; 0: records that do not fit are dropped */
	bool help;
	bool raw_latency;     /* --raw-latency: the probe's cost not subtracted */
	/* profile only */
	double interval_s;    /* --interval: report every so often; 0: at the end only */
	double budget;        /* --budget: of one CPU the probes may cost (agg/budget.h); 0: none */
	bool per_pid;         /* --per-pid */
	bool callers;         /* --callers: profile --py's calls between the functions */
	int hist_arg;         /* --hist: argument 0..5, HIST_ARG_BY_NAME; -1 (set by the parser): none */
	const char *hist;     /* --hist as given: "1", "arg1", "len", "ret" (hist_arg.h resolves it) */
	bool hist_linear;     /* --hist-linear MIN,MAX,STEP */
	int64_t lin_min, lin_max, lin_step;
	unsigned lin_buckets; /* ceil((MAX - MIN) / STEP), <= HIST_ARG_NBUCKETS */
	bool no_mem;          /* --no-mem: no RSS reads */
	/* trace and capture: typed arguments */
	const char **captures; /* --capture NAME=EXPR, repeatable */
	size_t n_captures;
	uint32_t strlen;       /* --strlen; 0: default 256 */
	unsigned deref;        /* --deref */
	bool deref_set;
	uint32_t capture_max;  /* --capture-max; 0: default 64 KiB */
	bool raw;              /* --raw: no DWARF typing */
	bool no_fault_in;      /* --no-fault-in: plain reads (not sleepable) */
	/* trace --watch EXPR (repeatable): a global by DWARF name,
	 * SYMBOL[+OFF] or ADDR:LEN, every write to it */
	const char **watches;
	size_t n_watches;
	/* break only */
	unsigned break_count;  /* --count N: stops (default 1) */
	double resume_after_s; /* --resume-after S; < 0: on Enter / EOF of stdin */
	const char *break_if;  /* --if EXPR (a filter: not yet) */
};

enum cmd_kind { CMD_TRACE, CMD_LIST, CMD_PROFILE, CMD_CAPTURE, CMD_BREAK };

/* Parse ARGV (ARGV[0] is the subcommand name).  Returns 0, or -EINVAL after
 * printing one error line.  O must be zeroed; free with cmd_opts__free. */
int cmd_opts__parse(enum cmd_kind kind, int argc, char **argv, struct cmd_opts *o);
void cmd_opts__free(struct cmd_opts *o);

void cmd_opts__usage(enum cmd_kind kind, FILE *out);

/* How every command starts: ARGV parsed into O (zeroed), --help answered,
 * the log level set from -v.  -1: go on (free O with cmd_opts__free);
 * else the exit status (CMON_EXIT_OK after --help, CMON_EXIT_USAGE after
 * the error line), O freed. */
int cmd_opts__begin(enum cmd_kind kind, int argc, char **argv, struct cmd_opts *o);

#endif
