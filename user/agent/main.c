// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmon-agent: `cmon agent` in its own executable.  The agent needs an HTTP
 * server, a YAML parser and their TLS stacks; keeping them out of the cmon
 * binary keeps a trace's memory small.  `cmon agent ...` execs this.
 */
#include <malloc.h>
#include <stdlib.h>
#include "agent/cli.h"
#include "core/log.h"
#include "probe/attach.h"
#include "probe/host.h"
#include "event/tracer.h"

int main(int argc, char **argv)
{
	log_route_libbpf();
	mallopt(M_MMAP_THRESHOLD, 64 << 10);
	if (getenv("CMON_NO_UPROBE_MULTI"))
		host__deny(HOST_UPROBE_MULTI, "denied by CMON_NO_UPROBE_MULTI");
	host__deny_list(getenv("CMON_HOST_DENY"), "CMON_HOST_DENY");
	if (getenv("CMON_NO_STAGING"))
		tracer__disable_staging();
	argv[0] = "agent";
	return agent_cli__main(argc, argv, getenv("DEBUGINFOD_URLS"));
}
