/* commands.h: the subcommands, and the exit statuses they share. */
#ifndef CMON_COMMANDS_H
#define CMON_COMMANDS_H

#define CMON_VERSION "0.2.0"

enum cmon_exit {
	CMON_EXIT_OK = 0,
	CMON_EXIT_ERROR = 1, /* bad input, attach failure, runtime error */
	CMON_EXIT_USAGE = 2, /* bad command line */
	CMON_EXIT_LOST = 3,  /* the trace completed but events were lost */
};

int cmd_trace(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_ls(int argc, char **argv);     /* read a capture store */
int cmd_show(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_report(int argc, char **argv);    /* an HTML page of stores, traces, profiles, stats */        /* remove stores */     /* several stores compared */
int cmd_agent(int argc, char **argv);
int cmd_profile(int argc, char **argv);

#endif
