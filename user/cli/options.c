// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agg/hist.h"
#include "agg/hist_arg.h"
#include "agg/budget.h"
#include "core/log.h"
#include "dwarf/plan.h"
#include "filter/expr.h"
#include "output/ch_url.h"
#include "output/outpath.h"
#include "event/watcher.h"
#include "cli/commands.h"
#include "cli/fetch_view.h"
#include "core/optable.h"
#include "options.h"
#include "cmon_abi.h"


#define T OC_TRACE
#define C OC_CAPTURE
#define P OC_PROFILE
#define L OC_LIST
#define TC (OC_TRACE | OC_CAPTURE)
#define TCP (OC_TRACE | OC_CAPTURE | OC_PROFILE)
#define TCPL (OC_TRACE | OC_CAPTURE | OC_PROFILE | OC_LIST)
#define B OC_BREAK

/* Every option of every cmon command, in the order the usage shows them. */
const struct opt_row cmon_opt_rows[] = {
	{ "pid", 'p', "PID", TCPL | B, "this process, all its threads (repeatable)" },
	{ "binary", OPT_BINARY, "PATH", TCPL, "every process running PATH, now and later" },
	{ "cgroup", OPT_CGROUP, "PATH", TCP,
	  "every process in cgroup v2 directory PATH and below it, now\n"
	  "and later (decided in the kernel)" },
	{ "container", OPT_CONTAINER, "ID", TCP,
	  "every process of container ID (Docker, containerd, Podman;\n"
	  "a unique prefix of the id): its cgroup, as --cgroup" },
	{ NULL, 0, NULL, TCP | B, "  -- CMD [ARGS...]        launch CMD, from its first instruction" },
	{ "follow", OPT_FOLLOW, NULL, TCP,
	  "with -p: the processes it forks from now on too (the\n"
	  "default for -- CMD), each with its own pid" },
	{ "no-follow", OPT_NO_FOLLOW, NULL, TCP,
	  "with -- CMD: that process only, not its children" },
	{ "host-wide-probes", OPT_HOST_WIDE_PROBES, NULL, TCP,
	  "while following: the libraries' probes for every process on\n"
	  "the host, before the program runs (no short-lived child is\n"
	  "missed; every process calling them traps, only the followed\n"
	  "are recorded)" },
	{ "func", 'f', "PATTERN", TCPL | B,
	  "name, glob, OBJECT:name, C++ ns::Class::method (repeatable)" },
	{ "count", OPT_COUNT, "N", B, "stop at the first N hits (default 1); then the probes go" },
	{ "resume-after", OPT_RESUME_AFTER, "SECONDS", B,
	  "resume after SECONDS (default: on Enter; on a line or the\n"
	  "end of stdin when it is not a terminal)" },
	{ "watch", OPT_WATCH, "EXPR", T,
	  "every write to a global: its DWARF name, SYMBOL[+OFF] or\n"
	  "ADDR:LEN (hex, LEN 1/2/4/8); old and new value, thread,\n"
	  "function and line (hardware watchpoints: 4 on x86)" },
	{ "exclude", OPT_EXCLUDE, "PATTERN", TCPL,
	  "leave out what PATTERN matches (or --func '!PATTERN')" },
	{ "focus", OPT_FOCUS, "PATTERN", TCP,
	  "record only while the thread is inside a function PATTERN\n"
	  "matches (any depth, recursion counted; repeatable)" },
	{ "max-depth", OPT_MAX_DEPTH, "N", TCP,
	  "with --focus: calls at most N levels below the focus function" },
	{ "if", OPT_IF, "EXPR", TCP | B,
	  "only calls where EXPR holds, decided in the kernel: names\n"
	  "(DWARF) or arg0..arg5, ret, latency_ns, p->member, ints,\n"
	  "\"strings\" (== !=), == != < <= > >=, !, &&, ||, ( )" },
	{ "on-change", OPT_ON_CHANGE, "EXPR", TC,
	  "a record only when EXPR differs from its last recorded\n"
	  "value (per function and process)" },
	{ "line", OPT_LINE, "FILE:LINE", TCP,
	  "a record each time source line LINE of FILE runs (DWARF\n"
	  "line table; FILE a basename or path suffix; repeatable)" },
	{ "locals", OPT_LOCALS, NULL, T,
	  "with --line: the variables and parameters in scope there,\n"
	  "typed, read where the line runs (\"optimized out\" said)" },
	{ "lines", OPT_LINES_OF, "FUNC", L,
	  "FUNC's lines of code, where a --line can go (repeatable)" },
	{ "lines", OPT_LINES_OF, "FUNC", T,
	  "every line FUNC runs, each with the time and the RSS change\n"
	  "until the thread's next line (or FUNC's return); repeatable" },
	{ "stack", OPT_STACK, NULL, T,
	  "each call's user stack (frame pointers), symbolized, in\n"
	  "text and JSON" },
	{ "usdt", OPT_USDT, "SPEC", TCP | L,
	  "USDT probes [FILE:]PROVIDER:NAME, globs (repeatable): one\n"
	  "record each time one fires, its arguments as its note says" },
	{ "py", OPT_PY, "PATTERN", TC,
	  "Python functions of a CPython 3.11-3.13 process: qualname,\n"
	  "Class.method, module.func, FILE:qualname, globs\n"
	  "(repeatable): args by name, return value, exceptions" },
	{ "py", OPT_PY, "PATTERN", B,
	  "a Python function of a CPython 3.11-3.13 process: qualname,\n"
	  "Class.method, module.func or FILE:qualname, globs * and ?\n"
	  "(repeatable); not with --if" },
	{ "py", OPT_PY, "PATTERN", P,
	  "Python functions of a CPython 3.11-3.13 process (qualname,\n"
	  "module.func, FILE:qualname, globs; repeatable), summed\n"
	  "in user space; not with --func, --usdt or --hist" },
	{ "py", OPT_PY_LIST, NULL, L,
	  "the Python functions process -p PID has (from its function\n"
	  "objects), PATTERN as for --py (none: all)" },
	{ "py-resumes", OPT_PY_RESUMES, NULL, TC | P | B,
	  "3.12+: each resume of a generator or coroutine too (every\n"
	  "Python call then goes through the evaluator: a trap each)" },
	{ "per-pid", OPT_PER_PID, NULL, P, "one row per function and process" },
	{ "callers", OPT_CALLERS, NULL, P,
	  "--py: each function's callers and callees among the\n"
	  "selected ones, with their calls and time (JSON: always)" },
	{ "hist", OPT_HIST, "ARG", P,
	  "distribution of argument ARG (0..5, arg0..arg5, a\n"
	  "parameter name, or ret), at its C type; log2" },
	{ "hist-linear", OPT_HIST_LINEAR, "MIN,MAX,STEP", P,
	  "linear buckets for --hist instead (at most 65)" },
	{ "no-mem", OPT_NO_MEM, NULL, P, "do not measure RSS growth (cheaper)" },
	{ "raw-latency", OPT_RAW_LATENCY, NULL, P,
	  "latencies with the probe's own cost in them (not\nsubtracted)" },
	{ "interval", OPT_INTERVAL, "SECONDS", P,
	  "print the table every SECONDS (cumulative), and at the end" },
	{ "budget", OPT_BUDGET, "PCT", P,
	  "the probes may cost at most PCT of one CPU (1%): the\n"
	  "hottest functions duty-cycled, their counts estimates" },
	{ "format", 'F', "FMT", T,
	  "text (default), csv, json (JSON Lines), chrome (Perfetto),\n"
	  "tree (nested per thread), folded (flame graphs)" },
	{ "csv", OPT_CSV, "SHAPE", T,
	  "with -F csv: wide (a row a call, a column a value) or long\n"
	  "(a row a value: name, value); default: wide when the\n"
	  "functions' values have the same columns, else long" },
	{ "text-strlen", OPT_TEXT_STRLEN, "N", T,
	  "with -F text: strings shown up to N characters (default\n"
	  "32; 0: whole); CSV and JSON keep them whole" },
	{ "order", OPT_ORDER, "ORDER", T,
	  "return (default: a call is written when it returns) or\n"
	  "call (in the order the calls began, per thread)" },
	{ "format", 'F', "FMT", P,
	  "text (default), csv, json (JSON Lines, one object per\nfunction per report)" },
	{ "output", 'o', "FILE", T,
	  "write records to FILE instead of stdout; %p / %r in FILE:\n"
	  "one file per process (pid / rank), %f: one per function;\n"
	  "unix:PATH serves them live on a unix socket (JSON Lines);\n"
	  "clickhouse://HOST:PORT/DB.TABLE inserts them into a\n"
	  "ClickHouse table" },
	{ "output", 'o', "DIR", C,
	  "the store's folder (never overwritten); %p / %r in DIR: one\n"
	  "store per process (pid / rank); clickhouse://HOST:PORT/DB.TABLE:\n"
	  "into a ClickHouse table instead (captures in a column)" },
	{ "output", 'o', "FILE", P, "write the reports to FILE instead of stdout" },
	{ NULL, 0, NULL, TC, "typed arguments (from DWARF when the program has it):" },
	{ "capture", OPT_CAPTURE, "NAME=EXPR", TC,
	  "what DWARF cannot know (repeatable): NAME=PTR:LEN (bytes,\n"
	  "length from argument LEN), NAME=PTR[COUNT] (an array of\n"
	  "PTR's pointee type), NAME=PTR:str; PTR, LEN, COUNT are\n"
	  "parameter names or arg0..arg5" },
	{ "strlen", OPT_STRLEN, "N", TC | B, "bytes of a char * string (default 256)" },
	{ "capture-at", OPT_CAPTURE_AT, "WHEN", TC,
	  "entry (default), return or both: when what pointer\n"
	  "parameters point to is read; both adds at_return and\n"
	  "changed (\"a->balance\": [100, 110])" },
	{ "deref", OPT_DEREF, "N", TC | B, "struct pointers followed (default 1)" },
	{ "capture-max", OPT_CAPTURE_MAX, "BYTES", TC, "bytes of one --capture (default 65536)" },
	{ "raw", OPT_RAW, NULL, TC | B, "no DWARF: the six argument registers only" },
	{ "no-debuginfod", OPT_NO_DEBUGINFOD, NULL, TCPL | B,
	  "never fetch a stripped file's debug info from the servers\n"
	  "DEBUGINFOD_URLS names (local debug files only)" },
	{ "no-fault-in", OPT_NO_FAULT_IN, NULL, TC,
	  "plain reads (cheaper): a page not resident reads as a fault" },
	{ NULL, 0, NULL, TC, "other options:" },
	{ "no-return", OPT_NO_RETURN, NULL, TC, "record entries only (cheaper)" },
	{ "raw-latency", OPT_RAW_LATENCY, NULL, TC,
	  "latency_ns with the probe's own cost in it (not subtracted)" },
	{ "return-probe", OPT_RETURN_PROBE, "HOW", TC | L,
	  "auto (default), uretprobe, insn (probes on ret\n"
	  "instructions: safe for C++ exceptions and Go)" },
	{ "return-probe", OPT_RETURN_PROBE, "HOW", P, "auto (default), uretprobe, insn" },
	{ "duration", OPT_DURATION, "SECONDS", TCP, "stop after this long" },
	{ "max-events", OPT_MAX_EVENTS, "N", TC, "stop after N records" },
	{ "ringbuf-size", OPT_RINGBUF, "MB", TC, "ring buffer size (default 4, 16 with captures)" },
	{ "poll-ms", OPT_POLL_MS, "MS", TC, "how often the buffer is drained (default 10)" },
	{ "blocking-timeout", OPT_BLOCKING_TIMEOUT, "TIME", TC,
	  "a full buffer makes the traced thread wait (spinning\n"
	  "on its CPU) up to TIME (10ms, 500us; at most 1s) for room\n"
	  "instead of dropping the record; 0: drop (default)" },
	{ "blocking-timeout", OPT_BLOCKING_TIMEOUT, "TIME", P,
	  "--py: a full buffer makes the calling thread wait up\n"
	  "to TIME for room instead of losing the call" },
	{ "quiet", 'q', NULL, TCP | B, "no summary on stderr" },
	{ "verbose", 'v', NULL, TCPL | B, "more diagnostics (-vv: libbpf's too)" },
	/* The store and view commands. */
	{ "per-call", OPT_PER_CALL, "OUTDIR", OC_EXPORT,
	  "one folder per call: its arguments (JSON) and arrays (.npy)" },
	{ "format", 'F', "FMT", OC_EXPORT,
	  "csv or json: one table per function; chrome, tree,\nfolded or text: the calls as that view" },
	{ "chrome", OPT_CHROME, NULL, OC_EXPORT, "the same as -F chrome" },
	{ "func", 'f', "PATTERN", OC_EXPORT,
	  "only calls of functions PATTERN matches, as trace --func\n"
	  "matches them (glob, OBJECT:name, '!PATTERN'; repeatable)" },
	{ "since", OPT_SINCE, "TIME", OC_EXPORT,
	  "only calls entered at or after TIME: seconds after the\n"
	  "recording's first call (1.5), or @TS_NS, a record's ts_ns" },
	{ "until", OPT_UNTIL, "TIME", OC_EXPORT,
	  "only calls entered before TIME (as --since)" },
	{ "if", OPT_IF, "EXPR", OC_EXPORT,
	  "only calls where EXPR holds (trace --if's language), over\n"
	  "the recorded values; a call without a name EXPR uses is left out" },
	{ "output", 'o', "PATH", OC_EXPORT,
	  "where -F writes (default: next to the store)" },
	{ "format", 'F', "FMT", OC_STATS, "text (default), csv, json" },
	{ "output", 'o', "FILE", OC_STATS, "write to FILE instead of stdout" },
	{ "output", 'o', "FILE.html", OC_REPORT, "the page to write (required)" },
	{ "title", OPT_TITLE, "TEXT", OC_REPORT, "the page's title (default \"cmon report\")" },
	{ "diff", OPT_DIFF, NULL, OC_REPORT,
	  "compare two capture stores A B (as cmon diff): their\nper-function table side by side, each run on its\nown time axis" },
	{ "json", OPT_JSON, NULL, OC_HOST, "one JSON object (what the tests read)" },
	{ "help", 'h', NULL, ~0u, "this help" },
};
const size_t cmon_opt_n_rows = sizeof(cmon_opt_rows) / sizeof(cmon_opt_rows[0]);

#undef T
#undef C
#undef P
#undef L
#undef TC
#undef TCP
#undef TCPL
#undef B

int cmon_opts__begin(struct optable *t, unsigned cmd, const char *name, int keep_order)
{
	int err = optable__init(t, cmon_opt_rows, cmon_opt_n_rows, cmd, name, keep_order);

	if (err)
		log_error("%s: the option table is too large (%s)", name, strerror(-err));
	return err;
}

void cmon_opts__usage(unsigned cmd, FILE *out)
{
	struct optable t;

	if (optable__init(&t, cmon_opt_rows, cmon_opt_n_rows, cmd, "", false))
		return;
	fputs("options:\n", out);
	optable__usage(&t, out);
}

int cmon_opts__help_only(unsigned cmd, const char *name, int argc, char **argv,
			 void (*usage)(FILE *out))
{
	struct optable t;
	const char *arg;
	int c;

	if (cmon_opts__begin(&t, cmd, name, false))
		return CMON_EXIT_ERROR;
	while ((c = optable__next(&t, argc, argv, &arg)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CMON_EXIT_OK;
		}
		return CMON_EXIT_USAGE; /* -2: said */
	}
	return -1;
}

static unsigned cmd_bit(enum cmd_kind kind)
{
	return kind == CMD_LIST ? OC_LIST : kind == CMD_PROFILE ? OC_PROFILE
					  : kind == CMD_CAPTURE ? OC_CAPTURE
					  : kind == CMD_BREAK ? OC_BREAK : OC_TRACE;
}

void cmd_opts__usage(enum cmd_kind kind, FILE *out)
{
	struct optable t;

	if (kind == CMD_LIST)
		fputs("usage: cmon list (-p PID | --binary PATH) PATTERN...\n"
		      "       cmon list PATTERN... -- CMD [ARGS...]\n"
		      "  What can be probed: each matching function, its file offset, where the\n"
		      "  probe goes, the instruction there and its cost per hit, and how its return\n"
		      "  is observed.  PATTERN as for `cmon trace --func` (--func PATTERN works\n"
		      "  too); with a program, patterns come before \"--\".\n"
		      "       cmon list --py -p PID [PATTERN...]\n"
		      "  The Python functions the process has: qualified name, file:line and\n"
		      "  parameters; PATTERN as for --py.\n",
		      out);
	else if (kind == CMD_PROFILE)
		fputs("usage: cmon profile (-p PID... | --binary PATH | -- CMD [ARGS...] |\n"
		      "                     --cgroup PATH | --container ID) --func PATTERN...\n"
		      "  Per function: calls, total/min/mean/max latency, p50 p90 p99 p99.9 (log-linear\n"
		      "  buckets, within 1.6 %), RSS growth summed over calls; aggregated in the kernel.\n",
		      out);
	else if (kind == CMD_CAPTURE)
		fputs("usage: cmon capture (-p PID... | --binary PATH | -- CMD [ARGS...] |\n"
		      "                     --cgroup PATH | --container ID) --func PATTERN...\n"
		      "                    [--capture NAME=EXPR]... [-o DIR]\n"
		      "  Keep every call's inputs (typed from DWARF), return value, latency and\n"
		      "  memory in a store: DIR (default cmon-capture), or DIR-1, DIR-2... if it exists.\n"
		      "  Read it with cmon ls / show / export, or from C with libcmon.\n",
		      out);
	else if (kind == CMD_BREAK)
		fputs("usage: cmon break (-p PID | -- CMD [ARGS...]) --func F [--count N]\n"
		      "                  [--resume-after SECONDS]\n"
		      "       cmon break (-p PID | -- python3 ARGS...) --py FUNC [--count N] ...\n"
		      "  Stop the process when F is entered (SIGSTOP, sent by the probe): print the\n"
		      "  thread, the typed arguments and the user stack, then resume it (SIGCONT) on\n"
		      "  Enter, after --resume-after, or on SIGINT/SIGTERM.  A debugger may attach\n"
		      "  while it is stopped.  cmon never leaves it stopped when it exits (but\n"
		      "  SIGKILL of cmon does: then `kill -CONT PID`).  --py: a Python function's\n"
		      "  call, its arguments by name and the Python stack (file:line per caller).\n",
		      out);
	else
		fputs("usage: cmon trace (-p PID... | --binary PATH | -- CMD [ARGS...] |\n"
		      "                   --cgroup PATH | --container ID) --func PATTERN...\n"
		      "       cmon trace (-p PID | -- CMD [ARGS...]) --watch EXPR...\n",
		      out);
	if (optable__init(&t, cmon_opt_rows, cmon_opt_n_rows, cmd_bit(kind), "", false))
		return;
	optable__usage(&t, out);
	if (kind == CMD_BREAK)
		fputs("exit status: 0 ok, 1 error, 2 usage; when launching, the program's own\n"
		      "status (128+N if killed by signal N)\n", out);
	else if (kind != CMD_LIST)
		fprintf(out, "exit status: 0 ok, 1 error, 2 usage, 3 %s were lost; when launching, the\n"
			"program's own status (128+N if killed by signal N)\n",
			kind == CMD_PROFILE ? "calls" : "events");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!*s || *s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A time with its unit (us, ms, s) or 0, in ns. */
static int parse_time_ns(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = { { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };
	unsigned long long v;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (!*end && v == 0) {
		*ns = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit) && v <= UINT64_MAX / units[i].ns) {
			*ns = v * units[i].ns;
			return 0;
		}
	return -EINVAL;
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	if (!*s)
		return -EINVAL;
	v = strtoll(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "0".."5" or "arg0".."arg5". */
static int parse_hist_arg(const char *s, int *out)
{
	if (!strncmp(s, "arg", 3))
		s += 3;
	if (s[0] < '0' || s[0] > '5' || s[1])
		return -EINVAL;
	*out = s[0] - '0';
	return 0;
}

/* "MIN,MAX,STEP": STEP > 0, MIN < MAX, at most HIST_ARG_NBUCKETS buckets. */
static int parse_hist_linear(const char *s, struct cmd_opts *o)
{
	char buf[96], *max, *step;
	uint64_t span, n;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	max = strchr(buf, ',');
	if (!max)
		return -EINVAL;
	*max++ = 0;
	step = strchr(max, ',');
	if (!step)
		return -EINVAL;
	*step++ = 0;
	if (parse_i64(buf, &o->lin_min) || parse_i64(max, &o->lin_max) ||
	    parse_i64(step, &o->lin_step) || o->lin_step <= 0 || o->lin_max <= o->lin_min)
		return -EINVAL;
	span = (uint64_t)o->lin_max - (uint64_t)o->lin_min; /* exact: max > min */
	n = span / (uint64_t)o->lin_step + (span % (uint64_t)o->lin_step != 0);
	if (n > HIST_ARG_NBUCKETS)
		return -E2BIG;
	o->lin_buckets = (unsigned)n;
	o->hist_linear = true;
	return 0;
}

static int push_ptr(void *arrp, size_t *n, size_t elem, const void *val)
{
	void **arr = arrp;
	char *p = realloc(*arr, (*n + 1) * elem);

	if (!p)
		return -ENOMEM;
	memcpy(p + *n * elem, val, elem);
	*arr = p;
	(*n)++;
	return 0;
}

int cmd_opts__begin(enum cmd_kind kind, int argc, char **argv, struct cmd_opts *o)
{
	if (cmd_opts__parse(kind, argc, argv, o)) {
		cmd_opts__free(o);
		return CMON_EXIT_USAGE;
	}
	if (o->help) {
		cmd_opts__usage(kind, stdout);
		cmd_opts__free(o);
		return CMON_EXIT_OK;
	}
	log_set_level(o->verbose >= 2 ? LOG_DEBUG : o->verbose ? LOG_INFO : LOG_WARN);
	if (fetch_view__setup(o->no_debuginfod)) {
		cmd_opts__free(o);
		return CMON_EXIT_ERROR;
	}
	return -1;
}

/* One command line being parsed: what the takers below share. */
struct opt_parse {
	enum cmd_kind kind;
	const char *name; /* "trace": error lines start with it */
	struct cmd_opts *o;
	struct optable *t;
	bool format_given; /* -F given (a unix: stream is JSON Lines otherwise) */
};

enum { NOT_TAKEN = 1, TAKE_HELP = 2 };

/* Options for the processes traced: -p, --binary, a cgroup, children.
 * 0 taken, -errno after its line, TAKE_HELP, or NOT_TAKEN: not one of these. */
static int take_target_option(struct opt_parse *p, int c, const char *optarg)
{
	struct cmd_opts *o = p->o;
	const char *name = p->name;
	uint64_t v;
	int err = 0;

	switch (c) {
	case OPTABLE_OPERAND: /* list's */
		if (push_ptr(&o->funcs, &o->n_funcs, sizeof(char *), &optarg))
			return -ENOMEM;
		break;
	case 'p': {
		pid_t pid;

		if (parse_u64(optarg, &v) || v == 0 || v > INT_MAX) {
			log_error("%s: invalid PID '%s'", name, optarg);
			return -EINVAL;
		}
		pid = (pid_t)v;
		err = push_ptr(&o->pids, &o->n_pids, sizeof(pid), &pid);
		break;
	}
	case OPT_BINARY:
		if (o->binary) {
			log_error("%s: --binary given twice", name);
			return -EINVAL;
		}
		o->binary = optarg;
		break;
	case OPT_CGROUP:
	case OPT_CONTAINER:
		if (o->cgroup || o->container) {
			log_error("%s: one --cgroup or --container", name);
			return -EINVAL;
		}
		*(c == OPT_CGROUP ? &o->cgroup : &o->container) = optarg;
		break;
	case OPT_NO_DEBUGINFOD:
		o->no_debuginfod = true;
		break;
	case OPT_FOLLOW:
		o->follow = 1;
		break;
	case OPT_NO_FOLLOW:
		o->follow = 0;
		break;
	case OPT_HOST_WIDE_PROBES:
		o->host_wide = true;
		break;
	default:
		return NOT_TAKEN;
	}
	return err;
}

/* Options for what is recorded: functions, lines, USDT, Python, focus, filters, break's stops.
 * 0 taken, -errno after its line, TAKE_HELP, or NOT_TAKEN: not one of these. */
static int take_selection_option(struct opt_parse *p, int c, const char *optarg)
{
	struct cmd_opts *o = p->o;
	const char *name = p->name;
	uint64_t v;
	int err = 0;

	switch (c) {
	case 'f':
		err = push_ptr(&o->funcs, &o->n_funcs, sizeof(char *), &optarg);
		break;
	case OPT_LINES_OF:
		if (p->kind == CMD_LIST) { /* list: FUNC's lines of code */
			o->list_lines = true;
			err = push_ptr(&o->funcs, &o->n_funcs, sizeof(char *), &optarg);
		} else {
			err = push_ptr(&o->lines_of, &o->n_lines_of, sizeof(char *), &optarg);
		}
		break;
	case OPT_LINE: {
		const char *colon = strrchr(optarg, ':');
		unsigned long ln = 0;

		/* a line number DWARF can have (an int): 2^32 + 8 was line 8 */
		if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
			errno = 0;
			ln = strtoul(colon + 1, NULL, 10);
			if (errno || ln > INT_MAX)
				ln = 0;
		}
		if (!colon || colon == optarg || !ln) {
			log_error("%s: --line '%s': expected FILE:LINE (a line number from 1)",
				  name, optarg);
			return -EINVAL;
		}
		err = push_ptr(&o->lines, &o->n_lines, sizeof(char *), &optarg);
		break;
	}
	case OPT_STACK:
		o->stack = true;
		break;
	case OPT_LOCALS:
		o->locals = true;
		break;
	case OPT_WATCH: {
		uint64_t wa;
		uint32_t wl;

		if (o->n_watches >= CMON_MAX_WATCH) {
			log_error("%s: at most %d --watch", name, CMON_MAX_WATCH);
			return -EINVAL;
		}
		if (watch__is_addr_len(optarg) && watch__addr_len(optarg, &wa, &wl))
			return -EINVAL;
		err = push_ptr(&o->watches, &o->n_watches, sizeof(char *), &optarg);
		break;
	}
	case OPT_COUNT:
		if (parse_u64(optarg, &v) || v == 0 || v > 1000000) {
			log_error("%s: invalid --count '%s' (1..1000000)", name, optarg);
			return -EINVAL;
		}
		o->break_count = (unsigned)v;
		break;
	case OPT_RESUME_AFTER: {
		char *end;

		errno = 0;
		o->resume_after_s = strtod(optarg, &end);
		if (errno || *end || !(o->resume_after_s >= 0) || o->resume_after_s > 1e6) {
			log_error("%s: invalid --resume-after '%s' (seconds >= 0)", name, optarg);
			return -EINVAL;
		}
		break;
	}
	case OPT_IF:
	case OPT_ON_CHANGE: {
		const char *what = c == OPT_IF ? "--if" : "--on-change";
		struct expr *e = NULL;

		/* Malformed is a usage error, said here with its column;
		 * names are checked against each function later. */
		err = expr__parse(optarg, what, &e);
		expr__free(e);
		if (!err && (c == OPT_IF ? o->if_expr : o->on_change)) {
			log_error("%s: %s given twice (join them with &&)", name, what);
			err = -EINVAL;
		}
		if (!err && c == OPT_IF)
			o->if_expr = optarg;
		else if (!err)
			o->on_change = optarg;
		break;
	}
	case OPT_FOCUS:
		err = push_ptr(&o->focus, &o->n_focus, sizeof(char *), &optarg);
		break;
	case OPT_MAX_DEPTH:
		if (parse_u64(optarg, &v) || v > 1000) {
			log_error("%s: invalid --max-depth '%s' (0..1000)", name, optarg);
			return -EINVAL;
		}
		o->max_depth = (int)v;
		break;
	case OPT_USDT:
		/* [FILE:]PROVIDER:NAME, no empty part (NAME alone: any provider) */
		if (!*optarg || *optarg == ':' || optarg[strlen(optarg) - 1] == ':' ||
		    strstr(optarg, "::")) {
			log_error("%s: --usdt '%s': expected [FILE:]PROVIDER:NAME", name,
				  optarg);
			return -EINVAL;
		}
		err = push_ptr(&o->usdts, &o->n_usdts, sizeof(char *), &optarg);
		break;
	case OPT_PY:
		if (!*optarg) {
			log_error("%s: --py: empty pattern", name);
			return -EINVAL;
		}
		err = push_ptr(&o->py, &o->n_py, sizeof(char *), &optarg);
		break;
	case OPT_PY_RESUMES:
		o->py_resumes = true;
		break;
	case OPT_PY_LIST:
		o->py_list = true;
		break;
	case OPT_CALLERS:
		o->callers = true;
		break;
	case OPT_EXCLUDE: {
		/* the same as --func '!PATTERN' */
		char *neg = NULL;

		if (asprintf(&neg, "!%s", optarg) < 0 ||
		    push_ptr(&o->owned, &o->n_owned, sizeof(char *), &neg)) {
			free(neg);
			err = -ENOMEM;
			break;
		}
		err = push_ptr(&o->funcs, &o->n_funcs, sizeof(char *), &neg);
		break;
	}
	default:
		return NOT_TAKEN;
	}
	return err;
}

/* Options for what a call's record holds beyond its registers: captures and their bounds.
 * 0 taken, -errno after its line, TAKE_HELP, or NOT_TAKEN: not one of these. */
static int take_capture_option(struct opt_parse *p, int c, const char *optarg)
{
	struct cmd_opts *o = p->o;
	const char *name = p->name;
	uint64_t v;
	int err = 0;

	switch (c) {
	case OPT_CAPTURE: {
		struct capture_spec spec;

		/* Malformed is a usage error, said once (capture_spec__parse's
		 * line); names are checked against the functions later. */
		err = capture_spec__parse(optarg, &spec);
		capture_spec__clear(&spec);
		if (err == -EINVAL)
			return err;
		if (!err)
			err = push_ptr(&o->captures, &o->n_captures, sizeof(char *), &optarg);
		break;
	}
	case OPT_CAPTURE_AT:
		if (!strcmp(optarg, "entry")) {
			o->capture_at = PLAN_AT_ENTRY;
		} else if (!strcmp(optarg, "return")) {
			o->capture_at = PLAN_AT_RETURN;
		} else if (!strcmp(optarg, "both")) {
			o->capture_at = PLAN_AT_BOTH;
		} else {
			log_error("%s: --capture-at '%s': expected entry, return or both", name,
				  optarg);
			return -EINVAL;
		}
		break;
	case OPT_STRLEN:
		if (parse_u64(optarg, &v) || v == 0 || v > PLAN_MAX_STRLEN) {
			log_error("%s: invalid --strlen '%s' (1..%u)", name, optarg,
				  PLAN_MAX_STRLEN);
			return -EINVAL;
		}
		o->strlen = (uint32_t)v;
		break;
	case OPT_DEREF:
		if (parse_u64(optarg, &v) || v > PLAN_MAX_DEREF) {
			log_error("%s: invalid --deref '%s' (0..%u)", name, optarg, PLAN_MAX_DEREF);
			return -EINVAL;
		}
		o->deref = (unsigned)v;
		o->deref_set = true;
		break;
	case OPT_CAPTURE_MAX:
		if (parse_u64(optarg, &v) || v == 0 || v > CMON_ITEM_MAX) {
			log_error("%s: invalid --capture-max '%s' (1..%u bytes)", name, optarg,
				  CMON_ITEM_MAX);
			return -EINVAL;
		}
		o->capture_max = (uint32_t)v;
		break;
	case OPT_RAW:
		o->raw = true;
		break;
	case OPT_NO_FAULT_IN:
		o->no_fault_in = true;
		break;
	default:
		return NOT_TAKEN;
	}
	return err;
}

/* Options for where and how records are written, and how long the run lasts.
 * 0 taken, -errno after its line, TAKE_HELP, or NOT_TAKEN: not one of these. */
static int take_output_option(struct opt_parse *p, int c, const char *optarg)
{
	struct cmd_opts *o = p->o;
	const char *name = p->name;
	int err = 0;

	switch (c) {
	case 'F':
		p->format_given = true;
		if (out_format__parse(optarg, &o->format) ||
		    (p->kind == CMD_PROFILE && o->format > OUT_JSON)) {
			log_error("%s: unknown format '%s' (text, csv, json%s)", name, optarg,
				  p->kind == CMD_PROFILE ? "" : ", chrome, tree, folded");
			return -EINVAL;
		}
		break;
	case 'o': {
		size_t at;

		if (strncmp(optarg, "unix:", 5) && out_path__check(optarg, &at)) {
			log_error("%s: -o '%s': '%%%c' at %zu is not a field (%%p pid, %%r "
				  "rank, %%f function, %%%% a %%)", name, optarg, optarg[at + 1] ? optarg[at + 1] : ' ',
				  at + 1);
			return -EINVAL;
		}
		o->output = optarg;
		break;
	}
	case OPT_DURATION: {
		char *end;

		errno = 0;
		o->duration_s = strtod(optarg, &end);
		if (errno || *end || !(o->duration_s > 0)) {
			log_error("%s: invalid duration '%s' (seconds > 0)", name, optarg);
			return -EINVAL;
		}
		break;
	}
	case OPT_MAX_EVENTS:
		if (parse_u64(optarg, &o->max_events) || !o->max_events) {
			log_error("%s: invalid --max-events '%s'", name, optarg);
			return -EINVAL;
		}
		break;
	case OPT_CSV:
		if (!strcmp(optarg, "wide")) {
			o->csv_shape = CSV_WIDE;
		} else if (!strcmp(optarg, "long")) {
			o->csv_shape = CSV_LONG;
		} else {
			log_error("%s: --csv '%s': expected wide or long", name, optarg);
			return -EINVAL;
		}
		break;
	case OPT_TEXT_STRLEN: {
		uint64_t v;

		if (parse_u64(optarg, &v) || v > UINT32_MAX) {
			log_error("%s: invalid --text-strlen '%s'", name, optarg);
			return -EINVAL;
		}
		o->text_strlen = (uint32_t)v;
		break;
	}
	case OPT_ORDER:
		if (!strcmp(optarg, "call") || !strcmp(optarg, "return")) {
			o->call_order = optarg[0] == 'c';
		} else {
			log_error("%s: --order '%s': expected call or return", name, optarg);
			return -EINVAL;
		}
		break;
	case 'v':
		o->verbose++;
		break;
	case 'q':
		o->quiet = true;
		break;
	case 'h':
		o->help = true;
		return TAKE_HELP;
	default:
		return NOT_TAKEN;
	}
	return err;
}

/* Options for how the probes run and what profile aggregates.
 * 0 taken, -errno after its line, TAKE_HELP, or NOT_TAKEN: not one of these. */
static int take_probe_option(struct opt_parse *p, int c, const char *optarg)
{
	struct cmd_opts *o = p->o;
	const char *name = p->name;
	uint64_t v;
	int err = 0;

	switch (c) {
	case OPT_NO_RETURN:
		o->no_return = true;
		break;
	case OPT_RETURN_PROBE:
		if (return_choice__parse(optarg, &o->ret_choice)) {
			log_error("%s: invalid --return-probe '%s' (auto, uretprobe, insn)",
				  name, optarg);
			return -EINVAL;
		}
		break;
	case OPT_RINGBUF:
		if (parse_u64(optarg, &v) || v == 0 || v > 1024) {
			log_error("%s: invalid --ringbuf-size '%s' (MB, 1..1024)", name, optarg);
			return -EINVAL;
		}
		o->ringbuf_bytes = (size_t)v << 20;
		break;
	case OPT_BLOCKING_TIMEOUT:
		/* bpf_loop's bound and a timer per look: at most 1 s */
		if (parse_time_ns(optarg, &o->block_ns) || o->block_ns > 1000000000ull) {
			log_error("%s: invalid --blocking-timeout '%s' (a time with its unit, "
				  "at most 1s: 10ms, 500us; 0: off)", name, optarg);
			return -EINVAL;
		}
		break;
	case OPT_POLL_MS:
		if (parse_u64(optarg, &v) || v == 0 || v > 10000) {
			log_error("%s: invalid --poll-ms '%s'", name, optarg);
			return -EINVAL;
		}
		o->poll_ms = (int)v;
		break;
	case OPT_INTERVAL: {
		char *end;

		errno = 0;
		o->interval_s = strtod(optarg, &end);
		if (errno || *end || !(o->interval_s >= 0.01) || o->interval_s > 1e6) {
			log_error("%s: invalid interval '%s' (seconds, at least 0.01)", name,
				  optarg);
			return -EINVAL;
		}
		break;
	}
	case OPT_BUDGET: {
		const char *why = NULL;

		if (budget__parse(optarg, &o->budget, &why)) {
			log_error("%s: invalid --budget '%s': %s", name, optarg, why);
			return -EINVAL;
		}
		break;
	}
	case OPT_PER_PID:
		o->per_pid = true;
		break;
	case OPT_HIST:
		if (!hist_arg__valid(optarg)) {
			log_error("%s: invalid --hist '%s' (an argument: 0..5, arg0..arg5, a "
				  "parameter name, or ret)", name, optarg);
			return -EINVAL;
		}
		o->hist = optarg;
		o->hist_arg = parse_hist_arg(optarg, &o->hist_arg) ? HIST_ARG_BY_NAME
								  : o->hist_arg;
		break;
	case OPT_HIST_LINEAR:
		err = parse_hist_linear(optarg, o);
		if (err) {
			log_error("%s: invalid --hist-linear '%s' (MIN,MAX,STEP with MIN < MAX, "
				  "STEP > 0, at most %d buckets)", name, optarg, HIST_ARG_NBUCKETS);
			return -EINVAL;
		}
		break;
	case OPT_NO_MEM:
		o->no_mem = true;
		break;
	case OPT_RAW_LATENCY:
		o->raw_latency = true;
		break;
	default:
		return NOT_TAKEN;
	}
	return err;
}

/* One option, by the taker of its theme.  0, -errno after its line, or
 * TAKE_HELP. */
static int take_option(struct opt_parse *p, int c, const char *optarg)
{
	static int (*const takers[])(struct opt_parse *p, int c, const char *optarg) = {
		take_target_option, take_selection_option, take_capture_option,
		take_output_option, take_probe_option,
	};
	int rc;

	for (size_t i = 0; i < sizeof(takers) / sizeof(takers[0]); i++) {
		rc = takers[i](p, c, optarg);
		if (rc == -ENOMEM)
			log_error("out of memory");
		if (rc != NOT_TAKEN)
			return rc;
	}
	log_error("%s: option '--%s' is not for this command", p->name, optable__name(p->t, c));
	return -EINVAL;
}

/* The first broken rule of RULES: one line, -EINVAL.  A table keeps the
 * combinations cmon refuses in one place, in the order they are checked. */
struct opt_rule {
	bool broken;
	const char *why; /* after "COMMAND: " */
};

static int first_broken(const struct opt_parse *p, const struct opt_rule *rules, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rules[i].broken) {
			log_error("%s: %s", p->name, rules[i].why);
			return -EINVAL;
		}
	return 0;
}

/* The target options together: exactly one target, and what each allows. */
static int check_target(const struct opt_parse *p)
{
	const struct cmd_opts *o = p->o;
	const char *name = p->name;

	if (!!o->n_pids + !!o->binary + !!o->cmd + !!(o->cgroup || o->container) != 1) {
		log_error("%s: give exactly one target: -p PID%s-- CMD", name,
			  p->kind == CMD_BREAK  ? " or "
			  : p->kind == CMD_LIST ? ", --binary PATH or "
						: ", --binary PATH, --cgroup PATH, --container ID or ");
		return -EINVAL;
	}
	if ((o->cgroup || o->container) && (o->n_watches || o->follow >= 0 || o->n_py)) {
		log_error("%s: --%s takes no %s", name, o->cgroup ? "cgroup" : "container",
			  o->n_watches ? "--watch (it watches one process: -p PID or -- CMD)"
			  : o->n_py    ? "--py (the interpreter's process: -p PID or -- CMD)"
				       : "--follow (every process of the cgroup is traced already)");
		return -EINVAL;
	}
	if ((o->n_watches || p->kind == CMD_BREAK) && (o->binary || o->n_pids > 1)) {
		log_error("%s: %s needs one process: -p PID or -- CMD", name,
			  p->kind == CMD_BREAK ? "break" : "--watch");
		return -EINVAL;
	}
	if (o->binary && o->follow >= 0) {
		log_error("%s: --%s is for -p PID or -- CMD (--binary covers every process "
			  "running PATH already)", name, o->follow ? "follow" : "no-follow");
		return -EINVAL;
	}
	return 0;
}

/* Options that make no sense together, once the command line is read. */
static int check_combinations(struct opt_parse *p)
{
	struct cmd_opts *o = p->o;
	const char *name = p->name;
	const struct opt_rule selection[] = {
		{ p->kind == CMD_BREAK && o->n_py && o->if_expr,
		  "--if is for --func: a Python call is stopped on its name alone" },
		{ o->locals && !o->n_lines,
		  "--locals reads the variables where a --line runs: give --line" },
		{ o->max_depth >= 0 && !o->n_focus,
		  "--max-depth counts below a --focus function: give --focus" },
		{ o->n_focus && o->no_return,
		  "--focus needs returns to know when a thread leaves the focus: no --no-return" },
		{ o->no_return && o->format == OUT_FOLDED,
		  "-F folded weighs stacks by the calls' time, which --no-return does not "
		  "measure: it would write nothing" },
		{ o->hist_linear && o->hist_arg < 0, "--hist-linear needs --hist ARG" },
		{ p->kind == CMD_PROFILE && o->block_ns && !o->n_py,
		  "--blocking-timeout is for --py: profile counts other calls in the kernel, "
		  "with no record to wait for" },
	};
	const struct opt_rule watch[] = {
		{ o->n_watches && o->output && out_path__per_process(o->output),
		  "--watch writes one output: -o without %p / %r" },
		{ o->n_watches && o->format > OUT_JSON, "--watch writes text, csv or json" },
		{ o->n_watches && o->n_funcs && o->format == OUT_CSV,
		  "-F csv has one table: --watch without --func, or -F json" },
	};
	int err = first_broken(p, selection, sizeof(selection) / sizeof(selection[0]));

	if (err)
		return err;
	for (size_t i = 0; p->kind == CMD_BREAK && i < o->n_py; i++) {
		if (strpbrk(o->py[i], "[\\")) {
			log_error("%s: --py '%s': globs with '*' and '?' only (a function's first "
				  "call is matched in the kernel)", name, o->py[i]);
			return -EINVAL;
		}
	}
	if (o->output && ch_url__is(o->output)) {
		struct ch_url u;
		char why[256];

		err = ch_url__parse(o->output, &u, why, sizeof(why));
		ch_url__free(&u);
		if (err) {
			log_error("%s: -o: bad ClickHouse URL: %s", name, why);
			return err == -ENOMEM ? err : -EINVAL;
		}
		if (p->format_given || o->n_watches) {
			log_error("%s: -o clickhouse:// writes the table's own columns: not with %s",
				  name, p->format_given ? "-F" : "--watch");
			return -EINVAL;
		}
	}
	/* A live stream is for programs: JSON Lines unless -F says otherwise. */
	if (o->output && !strncmp(o->output, "unix:", 5) && !p->format_given)
		o->format = OUT_JSON;
	err = check_target(p);
	if (err)
		return err;
	return first_broken(p, watch, sizeof(watch) / sizeof(watch[0]));
}

int cmd_opts__parse(enum cmd_kind kind, int argc, char **argv, struct cmd_opts *o)
{
	const char *name = kind == CMD_LIST      ? "list"
			   : kind == CMD_PROFILE ? "profile"
			   : kind == CMD_CAPTURE ? "capture"
			   : kind == CMD_BREAK   ? "break"
						 : "trace";
	struct optable t;
	struct opt_parse p = { .kind = kind, .name = name, .o = o, .t = &t };
	const char *optarg;
	int c, err = 0;

	o->poll_ms = 10;
	o->hist_arg = -1;
	o->max_depth = -1;
	o->follow = -1;
	o->break_count = 1;
	o->resume_after_s = -1;
	o->text_strlen = WRITER_TEXT_STRLEN;
	/* list: patterns, options among them, until "--" and the program */
	err = cmon_opts__begin(&t, cmd_bit(kind), name,
			       kind == CMD_LIST ? OPTABLE_OPERANDS : OPTABLE_KEEP_ORDER);
	if (err)
		return err;
	while ((c = optable__next(&t, argc, argv, &optarg)) != -1) {
		if (c == -2)
			return -EINVAL;
		err = take_option(&p, c, optarg);
		if (err == TAKE_HELP)
			return 0;
		if (err)
			return err;
	}

	/* What is left is the program: list's after "--", trace's after
	 * the options ("--" optional, as with strace). */
	if (optind < argc) {
		o->cmd = &argv[optind];
		o->cmd_argc = argc - optind;
	}

	if (!o->n_funcs && !o->n_usdts && !o->n_lines && !o->n_lines_of && !o->n_py &&
	    !(kind == CMD_TRACE && o->n_watches) && !o->py_list) {
		if (kind == CMD_LIST && o->cmd)
			log_error("list: no PATTERN given (patterns come before the program: "
				  "cmon list PATTERN... -- CMD [ARGS...])");
		else if (kind == CMD_LIST)
			log_error("list: no PATTERN given");
		else
			log_error("%s: no function given (--func PATTERN or --py PATTERN)", name);
		return -EINVAL;
	}
	err = check_combinations(&p);
	if (err)
		return err;
	if (o->follow < 0)
		o->follow = o->cmd != NULL;
	if (o->host_wide && !o->follow) {
		log_error("%s: --host-wide-probes is for following children (-- CMD, or -p PID "
			  "--follow)", name);
		return -EINVAL;
	}
	return 0;
}

void cmd_opts__free(struct cmd_opts *o)
{
	free(o->pids);
	free(o->funcs);
	free(o->usdts);
	free(o->py);
	free(o->focus);
	free(o->lines);
	free(o->lines_of);
	for (size_t i = 0; i < o->n_owned; i++)
		free(o->owned[i]);
	free(o->owned);
	free(o->captures);
	free(o->watches);
	memset(o, 0, sizeof(*o));
}
