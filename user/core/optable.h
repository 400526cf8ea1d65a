/*
 * optable.h: a command line described once.  Every option is one row (long
 * name, short letter, argument, the commands that take it, help); the rows
 * generate getopt_long's tables, the check that a command takes the option
 * it was given, and the usage text.  An option another command takes is a
 * usage error naming it, not silently accepted.
 *
 * A name may have several rows when its argument or help differs between
 * commands (-o FILE for trace, -o DIR for capture): same key, disjoint
 * command bits.  A row with no name is a heading in the usage text.
 */
#ifndef CMON_CORE_OPTABLE_H
#define CMON_CORE_OPTABLE_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

struct opt_row {
	const char *name; /* without "--"; NULL: a usage heading (HELP) */
	int key;          /* the short letter, or an id >= 0x100 */
	const char *arg;  /* NULL: no argument; else its name in the usage */
	unsigned cmds;    /* the commands that take it (the caller's bits) */
	const char *help; /* "\n" starts a continuation line */
};

#define OPTABLE_MAX_NAMES 128

struct optable {
	const struct opt_row *rows;
	size_t n_rows;
	unsigned cmd;         /* the command being parsed: one bit */
	const char *cmd_name; /* "trace": error lines start with it */
	struct option longs[OPTABLE_MAX_NAMES + 1]; /* every name once */
	char shorts[96];
};

/* How operands (words that are no option) are met, optable__init's ORDER. */
enum optable_order {
	OPTABLE_PERMUTE = 0,    /* options anywhere, operands left at optind */
	OPTABLE_KEEP_ORDER = 1, /* stop at the first operand (a program's own options follow) */
	OPTABLE_OPERANDS = 2,   /* each operand returned as OPTABLE_OPERAND until "--" */
};
#define OPTABLE_OPERAND 1 /* optable__next's key for an operand, in its ARG */

/* Prepare to parse for command CMD (resets getopt: OPTIND 0), operands met
 * as KEEP_ORDER (enum optable_order) says.  0, or -E2BIG past
 * OPTABLE_MAX_NAMES names (a table to grow: a bug). */
int optable__init(struct optable *t, const struct opt_row *rows, size_t n_rows, unsigned cmd,
		  const char *cmd_name, int keep_order);

/* The next option's key, ARG set to its argument (NULL without one).  -1:
 * no more options (operands from optind).  -2: an unknown option, one a
 * command CMD does not take, or a missing argument, after one error line. */
int optable__next(struct optable *t, int argc, char **argv, const char **arg);

/* "--name" of KEY (for messages): the first row with it. */
const char *optable__name(const struct optable *t, int key);

/* The rows of command CMD, two columns, in table order. */
void optable__usage(const struct optable *t, FILE *out);

#endif
