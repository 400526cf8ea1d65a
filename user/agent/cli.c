// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cli.c: `cmon agent` (the cmon-agent executable's command line): run probes from a spec file and serve their
 * metrics to Prometheus; `--status` asks a running agent; `--check`
 * validates a spec.
 *
 * Exit status: 0 stopped by SIGTERM/SIGINT (or --status/--check fine);
 * 1 error (unusable spec, busy port, no privilege, no agent to ask, a
 * --check that found invalid probes); 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent.h"
#include "agent/client.h"
#include "agent/spec.h"
#include "agent/cli.h"
#include "core/exit.h"
#include "core/optable.h"
#include "core/log.h"
#include "core/privilege.h"
#include "elf/debuginfod.h"

struct agent_cli {
	const char *spec;
	const char *listen;
	bool status, check, help, keep_privileges, no_debuginfod;
	int verbose;
	bool quiet;
};

enum {
	AGENT_OPT_STATUS = 0x100,
	AGENT_OPT_CHECK,
	AGENT_OPT_KEEP_PRIVILEGES,
	AGENT_OPT_NO_DEBUGINFOD,
};

static const struct opt_row agent_opt_rows[] = {
	{ "spec", 's', "FILE", 1, "the probe spec (see README: `cmon agent`)" },
	{ "listen", 'l', "ADDR", 1, "HOST:PORT, [IPv6]:PORT or PORT (loopback)" },
	{ "status", AGENT_OPT_STATUS, NULL, 1, "print the state of each probe of a running agent" },
	{ "check", AGENT_OPT_CHECK, NULL, 1, "validate FILE and print its probes' errors" },
	{ "keep-privileges", AGENT_OPT_KEEP_PRIVILEGES, NULL, 1,
	  "do not drop capabilities after the first apply" },
	{ "no-debuginfod", AGENT_OPT_NO_DEBUGINFOD, NULL, 1,
	  "never fetch a stripped target's debug info from the servers\n"
	  "DEBUGINFOD_URLS names (fetched in the background otherwise)" },
	{ "verbose", 'v', NULL, 1, "debug diagnostics (libbpf's too)" },
	{ "quiet", 'q', NULL, 1, "only warnings and errors" },
	{ "help", 'h', NULL, 1, "this help" },
};

static void usage(FILE *out)
{
	struct optable t;

	fprintf(out,
		"usage: cmon agent --spec FILE [--listen ADDR] [-v|-q]\n"
		"       cmon agent --status [--listen ADDR]\n"
		"       cmon agent --check --spec FILE\n"
		"\n"
		"Run the probes of FILE (YAML or JSON) and serve their metrics in the\n"
		"Prometheus text format on http://ADDR/metrics (default %s).\n"
		"The file is watched: probes added, changed or removed are applied as it\n"
		"changes (SIGHUP: reload now).  SIGTERM or SIGINT: detach everything, exit.\n"
		"\noptions:\n",
		AGENT_DEFAULT_LISTEN);
	if (!optable__init(&t, agent_opt_rows, sizeof(agent_opt_rows) / sizeof(agent_opt_rows[0]),
			   1, "agent", false))
		optable__usage(&t, out);
}

/* Parse ARGV (ARGV[0]: "agent") into O; never exits.  0 or -EINVAL after
 * one error line. */
static int parse_args(int argc, char **argv, struct agent_cli *o)
{
	struct optable t;
	const char *optarg;
	int c;

	if (optable__init(&t, agent_opt_rows, sizeof(agent_opt_rows) / sizeof(agent_opt_rows[0]),
			  1, "agent", false))
		return -E2BIG;
	while ((c = optable__next(&t, argc, argv, &optarg)) != -1) {
		switch (c) {
		case 's':
			o->spec = optarg;
			break;
		case 'l':
			o->listen = optarg;
			break;
		case AGENT_OPT_STATUS:
			o->status = true;
			break;
		case AGENT_OPT_CHECK:
			o->check = true;
			break;
		case AGENT_OPT_NO_DEBUGINFOD:
			o->no_debuginfod = true;
			break;
		case AGENT_OPT_KEEP_PRIVILEGES:
			o->keep_privileges = true;
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
		default: /* -2: said */
			return -EINVAL;
		}
	}
	if (optind < argc) {
		log_error("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (o->status && (o->check || o->spec)) {
		log_error("--status asks a running agent: no --spec or --check with it");
		return -EINVAL;
	}
	if (!o->status && !o->spec) {
		log_error("--spec FILE is needed (or --status)");
		return -EINVAL;
	}
	return 0;
}

static int check_spec(const char *path)
{
	struct agent_spec *spec = NULL;
	char *msg = NULL;
	size_t bad = 0;
	int err;

	err = agent_spec__load(path, &spec, &msg);
	if (err) {
		log_error("%s: %s", path, msg ? msg : strerror(-err));
		free(msg);
		return CMON_EXIT_ERROR;
	}
	for (size_t i = 0; i < spec->n_probes; i++) {
		const struct probe_spec *p = &spec->probes[i];

		if (p->error) {
			printf("%s: %s: %s\n", path, p->id, p->error);
			bad++;
		} else {
			printf("%s: %s: ok (%s on %s)\n", path, p->id,
			       probe_instrument__name(p->instrument), p->target);
		}
	}
	if (spec->budget > 0)
		printf("%s: budget: the probes may cost %g%% of one CPU\n", path, spec->budget * 100);
	printf("%zu probe%s, %zu invalid\n", spec->n_probes, spec->n_probes == 1 ? "" : "s", bad);
	agent_spec__free(spec);
	return bad ? CMON_EXIT_ERROR : CMON_EXIT_OK;
}

int agent_cli__main(int argc, char **argv, const char *debuginfod_urls)
{
	struct debuginfod_setup ds = { .urls = debuginfod_urls, .background = true };
	struct agent_cli o = {};
	struct agent_opts ao = {};
	struct agent *a;
	int err;

	if (parse_args(argc, argv, &o))
		return CMON_EXIT_USAGE;
	if (o.help) {
		usage(stdout);
		return CMON_EXIT_OK;
	}
	/* A daemon's state changes are worth a line each: info by default. */
	log_set_level(o.verbose ? LOG_DEBUG : o.quiet ? LOG_WARN : LOG_INFO);
	if (o.status)
		return agent_client__status(o.listen ? o.listen : AGENT_DEFAULT_LISTEN, stdout)
			       ? CMON_EXIT_ERROR
			       : CMON_EXIT_OK;
	if (o.check)
		return check_spec(o.spec);
	if (privilege__check())
		return CMON_EXIT_ERROR;
	/* A fetch never holds up the main loop, a scrape or a reload: the
	 * probes that wait for it are built again when it ends. */
	ds.disabled = o.no_debuginfod;
	if (debuginfod__setup(&ds))
		return CMON_EXIT_ERROR;
	ao.spec_path = o.spec;
	ao.listen = o.listen;
	ao.keep_privileges = o.keep_privileges;
	a = agent__new(&ao);
	if (!a)
		return CMON_EXIT_ERROR;
	err = agent__run(a);
	agent__free(a);
	debuginfod__shutdown();
	log_info("stopped: every probe detached");
	return err ? CMON_EXIT_ERROR : CMON_EXIT_OK;
}
