// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agg/hist.h"
#include "agg/hist_arg.h"
#include "core/log.h"
#include "options.h"
#include "cmon.h"

enum {
	OPT_BINARY = 0x100,
	OPT_NO_RETURN,
	OPT_DURATION,
	OPT_MAX_EVENTS,
	OPT_RETURN_PROBE,
	OPT_RINGBUF,
	OPT_POLL_MS,
	OPT_INTERVAL,
	OPT_PER_PID,
	OPT_HIST,
	OPT_HIST_LINEAR,
	OPT_NO_MEM,
	OPT_CAPTURE,
	OPT_STRLEN,
	OPT_DEREF,
	OPT_CAPTURE_MAX,
	OPT_RAW,
	OPT_NO_FAULT_IN,
	OPT_RAW_LATENCY,
	OPT_EXCLUDE,
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "func", required_argument, NULL, 'f' },
	{ "binary", required_argument, NULL, OPT_BINARY },
	{ "format", required_argument, NULL, 'F' },
	{ "output", required_argument, NULL, 'o' },
	{ "no-return", no_argument, NULL, OPT_NO_RETURN },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "max-events", required_argument, NULL, OPT_MAX_EVENTS },
	{ "return-probe", required_argument, NULL, OPT_RETURN_PROBE },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
	{ "poll-ms", required_argument, NULL, OPT_POLL_MS },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "per-pid", no_argument, NULL, OPT_PER_PID },
	{ "hist", required_argument, NULL, OPT_HIST },
	{ "hist-linear", required_argument, NULL, OPT_HIST_LINEAR },
	{ "no-mem", no_argument, NULL, OPT_NO_MEM },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "strlen", required_argument, NULL, OPT_STRLEN },
	{ "deref", required_argument, NULL, OPT_DEREF },
	{ "capture-max", required_argument, NULL, OPT_CAPTURE_MAX },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "no-fault-in", no_argument, NULL, OPT_NO_FAULT_IN },
	{ "raw-latency", no_argument, NULL, OPT_RAW_LATENCY },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void cmd_opts__usage(enum cmd_kind kind, FILE *out)
{
	if (kind == CMD_LIST) {
		fputs("usage: cmon list (-p PID | --binary PATH) PATTERN...\n"
		      "       cmon list PATTERN... -- CMD [ARGS...]\n"
		      "  What can be probed: each matching function, its file offset, where the\n"
		      "  probe goes, the instruction there and its cost per hit, and how its return\n"
		      "  is observed.  PATTERN as for `cmon trace --func` (--func PATTERN works\n"
		      "  too); with a program, patterns come before \"--\".\n",
		      out);
		return;
	}
	if (kind == CMD_PROFILE) {
		fputs("usage: cmon profile (-p PID... | --binary PATH | -- CMD [ARGS...]) --func PATTERN...\n"
		      "  Per function: calls, total/min/mean/max latency, p50 p90 p99 p99.9 (log-linear\n"
		      "  buckets, within 1.6 %), RSS growth summed over calls; aggregated in the kernel.\n"
		      "  -p, --pid PID           profile this process, all its threads (repeatable)\n"
		      "      --binary PATH       every process running PATH, now and later\n"
		      "  -- CMD [ARGS...]        launch CMD, profiled from its first instruction\n"
		      "  -f, --func PATTERN      name, glob, OBJECT:name, C++ ns::Class::method (repeatable)\n"
		      "      --exclude PATTERN   leave out what PATTERN matches (or --func '!PATTERN')\n"
		      "      --per-pid           one row per function and process\n"
		      "      --hist ARG          distribution of argument ARG (0..5, arg0..arg5, a\n"
		      "                          parameter name, or ret), at its C type; log2\n"
		      "      --hist-linear MIN,MAX,STEP\n"
		      "                          linear buckets for --hist instead (at most 65)\n"
		      "      --no-mem            do not measure RSS growth (cheaper)\n"
		      "      --raw-latency       latencies with the probe's own cost in them (not\n"
		      "                          subtracted)\n"
		      "      --interval SECONDS  print the table every SECONDS (cumulative), and at the end\n"
		      "  -F, --format FMT        text (default), csv, json (JSON Lines, one object per\n"
		      "                          function per report)\n"
		      "  -o, --output FILE       write the reports to FILE instead of stdout\n"
		      "      --return-probe HOW  auto (default), uretprobe, insn\n"
		      "      --duration SECONDS  stop after this long\n"
		      "  -q, --quiet             no summary on stderr\n"
		      "  -v, --verbose           more diagnostics (-vv: libbpf's too)\n"
		      "exit status: 0 ok, 1 error, 2 usage, 3 calls were lost; when launching, the\n"
		      "program's own status (128+N if killed by signal N)\n",
		      out);
		return;
	}
	if (kind == CMD_CAPTURE)
		fputs("usage: cmon capture (-p PID... | --binary PATH | -- CMD [ARGS...]) --func PATTERN...\n"
		      "                    [--capture NAME=EXPR]... [-o DIR]\n"
		      "  Keep every call's inputs (typed from DWARF), return value, latency and\n"
		      "  memory in a store: DIR (default cmon-capture), or DIR-1, DIR-2... if it exists.\n"
		      "  Read it with cmon ls / show / export, or from C with libcmon.\n",
		      out);
	else
		fputs("usage: cmon trace (-p PID... | --binary PATH | -- CMD [ARGS...]) --func PATTERN...\n",
		      out);
	fputs("  -p, --pid PID           trace this process, all its threads (repeatable)\n"
	      "      --binary PATH       every process running PATH, now and later\n"
	      "  -- CMD [ARGS...]        launch CMD, traced from its first instruction\n"
	      "  -f, --func PATTERN      name, glob, OBJECT:name, C++ ns::Class::method (repeatable)\n"
	      "      --exclude PATTERN   leave out what PATTERN matches (or --func '!PATTERN')\n",
	      out);
	if (kind == CMD_CAPTURE)
		fputs("  -o, --output DIR        the store's folder (never overwritten)\n", out);
	else
		fputs("  -F, --format FMT        text (default), csv, json (JSON Lines), chrome (Perfetto),\n"
		      "                          tree (nested per thread), folded (flame graphs)\n"
		      "  -o, --output FILE       write records to FILE instead of stdout; unix:PATH\n"
		      "                          serves them live on a unix socket (JSON Lines)\n",
		      out);
	fputs("typed arguments (from DWARF when the program has it):\n"
	      "      --capture NAME=EXPR what DWARF cannot know (repeatable): NAME=PTR:LEN (bytes,\n"
	      "                          length from argument LEN), NAME=PTR[COUNT] (an array of\n"
	      "                          PTR's pointee type), NAME=PTR:str; PTR, LEN, COUNT are\n"
	      "                          parameter names or arg0..arg5\n"
	      "      --strlen N          bytes of a char * string (default 256)\n"
	      "      --deref N           struct pointers followed (default 1)\n"
	      "      --capture-max BYTES bytes of one --capture (default 65536)\n"
	      "      --raw               no DWARF: the six argument registers only\n"
	      "      --no-fault-in       plain reads (cheaper): a page not resident reads as a fault\n"
	      "other options:\n"
	      "      --no-return         record entries only (cheaper)\n"
	      "      --raw-latency       latency_ns with the probe's own cost in it (not subtracted)\n"
	      "      --return-probe HOW  auto (default), uretprobe, insn (probes on ret\n"
	      "                          instructions: safe for C++ exceptions and Go)\n"
	      "      --duration SECONDS  stop after this long\n"
	      "      --max-events N      stop after N records\n"
	      "      --ringbuf-size MB   ring buffer size (default 4, 16 with captures)\n"
	      "      --poll-ms MS        how often the buffer is drained (default 10)\n"
	      "  -q, --quiet             no summary on stderr\n"
	      "  -v, --verbose           more diagnostics (-vv: libbpf's too)\n"
	      "exit status: 0 ok, 1 error, 2 usage, 3 events were lost; when launching,\n"
	      "the program's own status (128+N if killed by signal N)\n",
	      out);
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

static bool option_applies(enum cmd_kind kind, int c)
{
	switch (c) {
	case OPT_INTERVAL:
	case OPT_PER_PID:
	case OPT_HIST:
	case OPT_HIST_LINEAR:
	case OPT_NO_MEM:
		return kind == CMD_PROFILE;
	case OPT_CAPTURE:
	case OPT_STRLEN:
	case OPT_DEREF:
	case OPT_CAPTURE_MAX:
	case OPT_RAW:
	case OPT_NO_FAULT_IN:
		return kind == CMD_TRACE || kind == CMD_CAPTURE;
	case OPT_NO_RETURN:
	case OPT_MAX_EVENTS:
	case OPT_RINGBUF:
	case OPT_POLL_MS:
		return kind != CMD_PROFILE;
	default:
		return true;
	}
}

static const char *long_name(int c)
{
	for (const struct option *o = long_opts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
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

int cmd_opts__parse(enum cmd_kind kind, int argc, char **argv, struct cmd_opts *o)
{
	const char *name = kind == CMD_LIST      ? "list"
			   : kind == CMD_PROFILE ? "profile"
			   : kind == CMD_CAPTURE ? "capture"
						 : "trace";
	bool format_given = false;
	uint64_t v;
	int c, err = 0;

	o->poll_ms = 10;
	o->hist_arg = -1;
	optind = 0; /* full reset: the parser may run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:f:F:o:vqh", long_opts, NULL)) != -1) {
		if (!option_applies(kind, c)) {
			log_error("%s: option '--%s' is not for this command", name, long_name(c));
			return -EINVAL;
		}
		switch (c) {
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
		case 'f':
			err = push_ptr(&o->funcs, &o->n_funcs, sizeof(char *), &optarg);
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
		case OPT_BINARY:
			if (o->binary) {
				log_error("%s: --binary given twice", name);
				return -EINVAL;
			}
			o->binary = optarg;
			break;
		case 'F':
			format_given = true;
			if (out_format__parse(optarg, &o->format) ||
			    (kind == CMD_PROFILE && o->format > OUT_JSON)) {
				log_error("%s: unknown format '%s' (text, csv, json%s)", name, optarg,
					  kind == CMD_PROFILE ? "" : ", chrome, tree, folded");
				return -EINVAL;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_NO_RETURN:
			o->no_return = true;
			break;
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
		case OPT_CAPTURE:
			err = push_ptr(&o->captures, &o->n_captures, sizeof(char *), &optarg);
			break;
		case OPT_STRLEN:
			if (parse_u64(optarg, &v) || v == 0 || v > CMON_ITEM_MAX - 1) {
				log_error("%s: invalid --strlen '%s' (1..%u)", name, optarg,
					  CMON_ITEM_MAX - 1);
				return -EINVAL;
			}
			o->strlen = (uint32_t)v;
			break;
		case OPT_DEREF:
			if (parse_u64(optarg, &v) || v > 8) {
				log_error("%s: invalid --deref '%s' (0..8)", name, optarg);
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
		case OPT_RAW_LATENCY:
			o->raw_latency = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			o->help = true;
			return 0;
		case ':':
			log_error("%s: option '%s' needs a value", name, argv[optind - 1]);
			return -EINVAL;
		default:
			log_error("%s: unknown option '%s'", name, argv[optind - 1]);
			return -EINVAL;
		}
		if (err) {
			log_error("out of memory");
			return err;
		}
	}

	/* list: patterns before "--", the program after it.  trace: whatever
	 * is left is the program ("--" optional, as with strace). */
	if (kind == CMD_LIST && !(optind > 0 && !strcmp(argv[optind - 1], "--"))) {
		for (; optind < argc && strcmp(argv[optind], "--"); optind++)
			if (push_ptr(&o->funcs, &o->n_funcs, sizeof(char *), &argv[optind]))
				return -ENOMEM;
		if (optind < argc)
			optind++; /* the "--" */
	}
	if (optind < argc) {
		o->cmd = &argv[optind];
		o->cmd_argc = argc - optind;
	}

	if (!o->n_funcs) {
		if (kind == CMD_LIST && o->cmd)
			log_error("list: no PATTERN given (patterns come before the program: "
				  "cmon list PATTERN... -- CMD [ARGS...])");
		else if (kind == CMD_LIST)
			log_error("list: no PATTERN given");
		else
			log_error("%s: no function given (--func PATTERN)", name);
		return -EINVAL;
	}
	if (o->hist_linear && o->hist_arg < 0) {
		log_error("%s: --hist-linear needs --hist ARG", name);
		return -EINVAL;
	}
	/* A live stream is for programs: JSON Lines unless -F says otherwise. */
	if (o->output && !strncmp(o->output, "unix:", 5) && !format_given)
		o->format = OUT_JSON;
	if (!!o->n_pids + !!o->binary + !!o->cmd != 1) {
		log_error("%s: give exactly one target: -p PID, --binary PATH or -- CMD", name);
		return -EINVAL;
	}
	return 0;
}

void cmd_opts__free(struct cmd_opts *o)
{
	free(o->pids);
	free(o->funcs);
	for (size_t i = 0; i < o->n_owned; i++)
		free(o->owned[i]);
	free(o->owned);
	free(o->captures);
	memset(o, 0, sizeof(*o));
}
