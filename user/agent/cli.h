/*
 * cli.h: `cmon agent ARGS` (cmon execs cmon-agent, whose main calls this):
 * the agent's options, --status, --check, and the agent itself.  Exit
 * status as the command's (see cli.c).
 */
#ifndef CMON_AGENT_CLI_H
#define CMON_AGENT_CLI_H

/* DEBUGINFOD_URLS, read by main (NULL: unset): a stripped target's debug
 * info is fetched in the background (elf/debuginfod.h). */
int agent_cli__main(int argc, char **argv, const char *debuginfod_urls);

#endif
