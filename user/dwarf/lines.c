// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* lines.c: see lines.h. */
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "dwarf/debuginfo_impl.h"
#include "dwarf/lines.h"

int lines__file_matches(const char *path, const char *file)
{
	size_t lp = strlen(path), lf = strlen(file);

	if (!lf || lf > lp || strcmp(path + lp - lf, file))
		return 0;
	return lp == lf || path[lp - lf - 1] == '/';
}

static int push(uint64_t **v, size_t *n, size_t *cap, uint64_t a)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == a)
			return 0;
	if (GROW(*v, *n, *cap, 8))
		return -ENOMEM;
	(*v)[(*n)++] = a;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* lines__addrs' search, one CU at a time. */
struct addrs_search {
	const char *file;
	unsigned line;
	uint64_t **addrs;
	size_t *n, cap;
	unsigned *below, *above;
	bool file_seen;
};

static int addrs_in_cu(Dwarf_Die *cu, void *arg)
{
	struct addrs_search *q = arg;
	Dwarf_Lines *lines;
	size_t nl;
	/* The row before, in address order within a sequence: a line's code
	 * split over several rows in a row (its prologue, body and epilogue,
	 * a call and what follows it) runs once, so only the first row of
	 * such a run is a site (else one run of the line fired each). */
	const char *prev_src = NULL;
	int prev_ln = -1, err = 0;

	if (dwarf_getsrclines(cu, &lines, &nl) != 0)
		return 0;
	for (size_t i = 0; i < nl && !err; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		bool stmt = false, end = false, cont;
		Dwarf_Addr a;
		int ln;

		if (!src || dwarf_lineno(l, &ln) || dwarf_lineaddr(l, &a)) {
			prev_ln = -1;
			continue;
		}
		if (dwarf_lineendsequence(l, &end) == 0 && end) {
			prev_ln = -1;
			continue;
		}
		/* only statement rows make runs: a line whose one statement
		 * row follows a row of its own that is not one still has its
		 * site */
		if (dwarf_linebeginstatement(l, &stmt) || !stmt) {
			if (lines__file_matches(src, q->file))
				q->file_seen = true;
			continue;
		}
		cont = ln == prev_ln && prev_src && !strcmp(src, prev_src);
		prev_ln = ln;
		prev_src = src;
		if (!lines__file_matches(src, q->file))
			continue;
		q->file_seen = true;
		if ((unsigned)ln == q->line && !cont)
			err = push(q->addrs, q->n, &q->cap, a);
		else if ((unsigned)ln < q->line && (unsigned)ln > *q->below)
			*q->below = (unsigned)ln;
		else if ((unsigned)ln > q->line && (!*q->above || (unsigned)ln < *q->above))
			*q->above = (unsigned)ln;
	}
	return err;
}

int lines__addrs(struct debuginfo *di, const char *file, unsigned line, uint64_t **addrs,
		 size_t *n, unsigned *below, unsigned *above)
{
	struct addrs_search q = { .file = file, .line = line, .addrs = addrs, .n = n,
				  .below = below, .above = above };
	int err;

	*addrs = NULL;
	*n = 0;
	*below = *above = 0;
	if (!debuginfo__dwarf(di))
		return -ENODATA;
	/* as in the file: a split unit's line table is its skeleton's */
	err = debuginfo__each_cu(di, false, addrs_in_cu, &q);
	if (err) {
		free(*addrs);
		*addrs = NULL;
		*n = 0;
		return err;
	}
	if (!q.file_seen)
		return -ESRCH;
	if (!*n)
		return -ENOENT;
	qsort(*addrs, *n, sizeof(**addrs), cmp_u64);
	return 0;
}

int lines__in_range(struct debuginfo *di, uint64_t low, uint64_t high, struct line_row **rows,
		    size_t *n, const char **file)
{
	Dwarf *dw = (Dwarf *)debuginfo__dwarf(di);
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t nl, cap = 0;

	*rows = NULL;
	*n = 0;
	*file = NULL;
	if (!dw)
		return -ENODATA;
	if (!debuginfo__cu_at(di, low, &cu) || dwarf_getsrclines(&cu, &lines, &nl) != 0)
		return -ENOENT;
	for (size_t i = 0; i < nl; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		bool stmt = false, end = false, seen = false;
		Dwarf_Addr a;
		int ln;

		if (!l || dwarf_lineaddr(l, &a) || a < low || a >= high || dwarf_lineno(l, &ln) ||
		    (dwarf_lineendsequence(l, &end) == 0 && end) ||
		    dwarf_linebeginstatement(l, &stmt) || !stmt)
			continue;
		for (size_t k = 0; k < *n && !seen; k++)
			seen = (*rows)[k].line == (unsigned)ln;
		if (seen)
			continue;
		if (GROW(*rows, *n, cap, 16)) {
			free(*rows);
			*rows = NULL;
			*n = 0;
			return -ENOMEM;
		}
		(*rows)[*n].line = (unsigned)ln;
		(*rows)[*n].addr = a;
		(*n)++;
		if (!*file)
			*file = dwarf_linesrc(l, NULL, NULL);
	}
	for (size_t i = 1; i < *n; i++) /* line order (insertion sort: short lists) */
		for (size_t k = i; k > 0 && (*rows)[k - 1].line > (*rows)[k].line; k--) {
			struct line_row t = (*rows)[k];

			(*rows)[k] = (*rows)[k - 1];
			(*rows)[k - 1] = t;
		}
	return *n ? 0 : -ENOENT;
}
