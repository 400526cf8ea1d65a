/*
 * options.h: the command lines of `cmon trace` and `cmon list`, parsed into
 * a struct by a function that never exits, so tests can call it.
 */
#ifndef CMON_OPTIONS_H
#define CMON_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "output/writer.h"
#include "probe/resolve.h"

struct cmd_opts {
	pid_t *pids;          /* -p, repeatable */
	size_t n_pids;
	const char *binary;   /* --binary */
	char **cmd;           /* program to launch (points into argv) */
	int cmd_argc;
	const char **funcs;   /* --func, repeatable (and positional patterns for list) */
	size_t n_funcs;
	enum out_format format;
	const char *output;   /* -o; NULL: stdout */
	bool no_return;
	double duration_s;    /* 0: until stopped */
	uint64_t max_events;  /* 0: no limit */
	enum return_choice ret_choice;
	int verbose;
	bool quiet;           /* no summary on stderr */
	size_t ringbuf_bytes;
	int poll_ms;
	bool help;
};

enum cmd_kind { CMD_TRACE, CMD_LIST };

/* Parse ARGV (ARGV[0] is the subcommand name).  Returns 0, or -EINVAL after
 * printing one error line.  O must be zeroed; free with cmd_opts__free. */
int cmd_opts__parse(enum cmd_kind kind, int argc, char **argv, struct cmd_opts *o);
void cmd_opts__free(struct cmd_opts *o);

void cmd_opts__usage(enum cmd_kind kind, FILE *out);

#endif
