// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmon: eBPF uprobe tracing.  main() dispatches to a subcommand from an
 * exactly-matched table; each subcommand decides its own exit status (see
 * cli/commands.h).
 */
#include <malloc.h>
#include <stdlib.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include "cli/commands.h"
#include "cli/fetch_view.h"
#include "core/log.h"
#include "proc/launch.h"
#include "probe/follow.h"
#include "probe/attach.h"
#include "event/pipeline.h"
#include "event/tracer.h"
#include "probe/host.h"
#include "output/callgroup.h"
#include "output/writer.h"


static int cmd_help(int argc, char **argv);
static int cmd_agent_exec(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "trace", cmd_trace, "record every call: arguments, return, latency, memory" },
	{ "capture", cmd_capture, "keep every call's inputs in a store (ls/show/export read it)" },
	{ "break", cmd_break, "stop a process when a function is entered: arguments, stack, resume" },
	{ "list", cmd_list, "what can be probed, where, and at what cost" },
	{ "agent", cmd_agent_exec, "run probes from a spec file, serve Prometheus metrics" },
	{ "profile", cmd_profile, "per-function call counts, latency percentiles, RSS growth" },
	{ "ls", cmd_ls, "a capture store: functions, calls, signatures, processes" },
	{ "show", cmd_show, "one captured call: every argument by name, buffers" },
	{ "export", cmd_export, "a capture store as per-call files (.npy) or CSV/JSON tables" },
	{ "report", cmd_report, "one self-contained HTML page of charts from stores, traces, profiles, stats" },
	{ "rm", cmd_rm, "remove capture stores (refuses anything that is not one)" },
	{ "stats", cmd_stats, "compare the calls of several stores: mean, spread, significant digits" },
	{ "diff", cmd_diff, "two stores' latency per function: p50/p90/p99, RSS, beyond the noise?" },
	{ "host", cmd_host, "what this host's kernel can do for cmon, and its probe costs" },
	{ "help", cmd_help, "this text" },
	{ "version", cmd_version, "print the version" },
};

/* `cmon help COMMAND` is `cmon COMMAND --help`; `cmon help` the list. */
static int cmd_help(int argc, char **argv)
{
	if (argc >= 2) {
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
			char *help_argv[] = { (char *)commands[i].name, "--help", NULL };

			if (strcmp(argv[1], commands[i].name))
				continue;
			if (commands[i].run == cmd_help || commands[i].run == cmd_version) {
				printf("cmon %s: %s\n", commands[i].name, commands[i].summary);
				return CMON_EXIT_OK;
			}
			return commands[i].run(2, help_argv);
		}
		log_error("help: no command '%s' (see `cmon help`)", argv[1]);
		return CMON_EXIT_USAGE;
	}
	printf("usage: cmon COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		printf("  %-8s %s\n", commands[i].name, commands[i].summary);
	printf("\n`cmon help COMMAND` (or `cmon COMMAND --help`) for a command's options;\n"
	       "`man cmon-COMMAND` for its manual.\n");
	return CMON_EXIT_OK;
}

/* Subcommands with heavy dependencies live in their own executable beside
 * cmon (cmon-agent), as git's do: run it with the same arguments. */
static int cmd_agent_exec(int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0) {
		log_error("cannot find my own executable: %s", strerror(errno));
		return CMON_EXIT_ERROR;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		slash[1] = '\0';
	snprintf(path, sizeof(path), "%scmon-agent", slash ? self : "");
	argv[0] = path;
	execv(path, argv);
	log_error("cannot run %s: %s", path, strerror(errno));
	return CMON_EXIT_ERROR;
}

static int cmd_version(int argc, char **argv)
{
	printf("cmon %s\n", CMON_VERSION);
	return CMON_EXIT_OK;
}

int main(int argc, char **argv)
{
	launch__save_dispositions();
	log_route_libbpf();
	/* Large buffers (kernel BTF, symbol tables) are needed only while
	 * starting up: serve them from mmap so freeing them returns the
	 * memory, and a long trace keeps a small footprint. */
	mallopt(M_MMAP_THRESHOLD, 64 << 10);
	/* The environment is read here, not by the modules below. */
	if (getenv("CMON_NO_UPROBE_MULTI"))
		host__deny(HOST_UPROBE_MULTI, "denied by CMON_NO_UPROBE_MULTI");
	host__deny_list(getenv("CMON_HOST_DENY"), "CMON_HOST_DENY");
	if (getenv("CMON_NO_STAGING"))
		tracer__disable_staging();
	if (getenv("CMON_VIEW_HOLD_MAX") && atol(getenv("CMON_VIEW_HOLD_MAX")) > 0)
		callgroups__set_default_max_held((size_t)atol(getenv("CMON_VIEW_HOLD_MAX")));
	if (getenv("CMON_NO_SPOOL"))
		tracer__disable_spool();
	if (getenv("CMON_TEST_SLOW_CONSUMER_US") && atol(getenv("CMON_TEST_SLOW_CONSUMER_US")) > 0)
		tracer__test_slow_consumer((unsigned)atol(getenv("CMON_TEST_SLOW_CONSUMER_US")));
	if (getenv("CMON_TEST_PY_LATE_CHILDREN"))
		pipeline__test_py_late_children();
	if (getenv("CMON_TEST_NO_CHILD_LINKS"))
		follow__test_no_child_links();
	if (getenv("CMON_TEST_PY_COUNTS_UNREAD"))
		tracer__test_py_counts_unread();
	if (getenv("CMON_TEST_PY_PROCS_MAX") && atol(getenv("CMON_TEST_PY_PROCS_MAX")) > 0)
		tracer__test_py_procs_max((unsigned)atol(getenv("CMON_TEST_PY_PROCS_MAX")));
	if (getenv("CMON_TEST_SPOOL_DISK_MAX") && atol(getenv("CMON_TEST_SPOOL_DISK_MAX")) > 0)
		tracer__test_spool_disk_max((uint64_t)atol(getenv("CMON_TEST_SPOOL_DISK_MAX")));
	if (getenv("CMON_SPOOL") && !strcmp(getenv("CMON_SPOOL"), "always"))
		tracer__always_spool();
	if (getenv("NO_COLOR") && *getenv("NO_COLOR")) /* no-color.org: set, not empty */
		writer__no_color();
	/* Whether debuginfod is on (libdebuginfod reads its variables itself:
	 * elf/debuginfod.h). */
	cmon_debuginfod_urls = getenv("DEBUGINFOD_URLS");
	if (argc < 2) {
		cmd_help(argc, argv);
		return CMON_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	log_error("unknown command '%s' (see `cmon help`)", argv[1]);
	return CMON_EXIT_USAGE;
}
