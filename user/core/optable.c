// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* optable.c: see optable.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "core/optable.h"

#define HELP_COL 26 /* where the help column starts */

static const struct opt_row *row_of(const struct optable *t, int key, const char *name)
{
	const struct opt_row *any = NULL;

	for (size_t i = 0; i < t->n_rows; i++) {
		const struct opt_row *r = &t->rows[i];

		if (!r->name || r->key != key || (name && strcmp(r->name, name)))
			continue;
		if (r->cmds & t->cmd)
			return r;
		if (!any)
			any = r;
	}
	return any;
}

int optable__init(struct optable *t, const struct opt_row *rows, size_t n_rows, unsigned cmd,
		  const char *cmd_name, int keep_order)
{
	size_t n = 0, s = 0;

	memset(t, 0, sizeof(*t));
	t->rows = rows;
	t->n_rows = n_rows;
	t->cmd = cmd;
	t->cmd_name = cmd_name;
	if (keep_order == OPTABLE_KEEP_ORDER)
		t->shorts[s++] = '+';
	else if (keep_order == OPTABLE_OPERANDS)
		t->shorts[s++] = '-';
	t->shorts[s++] = ':'; /* a missing argument returns ':' */
	/* A name several rows have (--py: a PATTERN for trace, none for
	 * list): this command's row first, the others only to be refused. */
	for (size_t i = 0; i < 2 * n_rows; i++) {
		const struct opt_row *r = &rows[i % n_rows];
		bool seen = false;

		if (!r->name || !(r->cmds & cmd) != (i >= n_rows))
			continue;
		for (size_t k = 0; k < n && !seen; k++)
			seen = !strcmp(t->longs[k].name, r->name);
		if (seen)
			continue;
		if (n == OPTABLE_MAX_NAMES)
			return -E2BIG;
		t->longs[n++] = (struct option){ r->name, r->arg ? required_argument : no_argument,
						 NULL, r->key };
		if (r->key < 0x100 && !memchr(t->shorts, r->key, s) && s + 3 < sizeof(t->shorts)) {
			t->shorts[s++] = (char)r->key;
			if (r->arg)
				t->shorts[s++] = ':';
		}
	}
	t->shorts[s] = 0;
	optind = 0; /* a full reset: a parser may run more than once */
	opterr = 0;
	return 0;
}

int optable__next(struct optable *t, int argc, char **argv, const char **arg)
{
	int idx = -1, c;
	const struct opt_row *r;

	*arg = NULL;
	c = getopt_long(argc, argv, t->shorts, t->longs, &idx);
	if (c == -1)
		return -1;
	if (c == 1) {
		*arg = optarg;
		return OPTABLE_OPERAND;
	}
	if (c == ':') {
		log_error("%s: option '%s' needs a value", t->cmd_name, argv[optind - 1]);
		return -2;
	}
	if (c == '?') {
		log_error("%s: unknown option '%s' (see cmon %s --help)", t->cmd_name,
			  argv[optind - 1], t->cmd_name);
		return -2;
	}
	r = row_of(t, c, idx >= 0 ? t->longs[idx].name : NULL);
	if (!r || !(r->cmds & t->cmd)) {
		log_error("%s: option '--%s' is not for this command (see cmon %s --help)",
			  t->cmd_name, r ? r->name : "?", t->cmd_name);
		return -2;
	}
	*arg = optarg;
	return c;
}

const char *optable__name(const struct optable *t, int key)
{
	const struct opt_row *r = row_of(t, key, NULL);

	return r ? r->name : "?";
}

void optable__usage(const struct optable *t, FILE *out)
{
	for (size_t i = 0; i < t->n_rows; i++) {
		const struct opt_row *r = &t->rows[i];
		const char *h = r->help ? r->help : "";
		int col;

		if (!(r->cmds & t->cmd))
			continue;
		if (!r->name) {
			fprintf(out, "%s\n", h);
			continue;
		}
		if (r->key < 0x100)
			col = fprintf(out, "  -%c, --%s", r->key, r->name);
		else
			col = fprintf(out, "      --%s", r->name);
		if (r->arg)
			col += fprintf(out, " %s", r->arg);
		/* The help, its continuation lines aligned under it. */
		while (*h) {
			size_t len = strcspn(h, "\n");

			if (col >= HELP_COL) {
				fputc('\n', out);
				col = 0;
			}
			fprintf(out, "%*s%.*s\n", HELP_COL - col, "", (int)len, h);
			col = 0;
			h += len;
			if (*h == '\n')
				h++;
		}
		if (!r->help || !*r->help)
			fputc('\n', out);
	}
}
