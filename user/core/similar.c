// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* similar.c: see similar.h. */
#include <string.h>
#include "similar.h"

#define LONGEST 255

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

size_t similar__distance(const char *a, const char *b, size_t max)
{
	/* three rows of the table: the one before last is for the swaps */
	size_t rows[3][LONGEST + 1], *pp, *p, *c;
	size_t la = strlen(a), lb = strlen(b);

	if (la > LONGEST || lb > LONGEST)
		return max + 1;
	if ((la > lb ? la - lb : lb - la) > max)
		return max + 1;
	pp = rows[0];
	p = rows[1];
	c = rows[2];
	for (size_t j = 0; j <= lb; j++)
		p[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t best;
		size_t *t;

		c[0] = best = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];

			c[j] = min3(p[j] + 1, c[j - 1] + 1, p[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < c[j])
				c[j] = pp[j - 2] + 1;
			if (c[j] < best)
				best = c[j];
		}
		if (best > max)
			return max + 1; /* every path through this row is already too far */
		t = pp;
		pp = p;
		p = c;
		c = t;
	}
	return p[lb] > max ? max + 1 : p[lb];
}

size_t similar__slack(size_t len)
{
	return len < 4 ? 0 : len < 9 ? 1 : 2;
}
