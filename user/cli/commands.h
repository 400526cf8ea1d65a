/* commands.h: the subcommands (exit statuses: core/exit.h). */
#ifndef CMON_COMMANDS_H
#define CMON_COMMANDS_H

#include "core/exit.h"

int cmd_trace(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_ls(int argc, char **argv);     /* read a capture store */
int cmd_show(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_report(int argc, char **argv); /* an HTML page of stores, traces, profiles, stats */
int cmd_profile(int argc, char **argv);
int cmd_break(int argc, char **argv);  /* stop a process when a function is entered */
int cmd_host(int argc, char **argv);   /* what this host can do (probe/host.h) */

#endif
