// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* strv.c: see strv.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/strv.h"

int strv__push(char ***v, size_t *n, const char *s)
{
	char **nv, *copy = strdup(s);

	if (!copy)
		return -ENOMEM;
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv) {
		free(copy);
		return -ENOMEM;
	}
	nv[(*n)++] = copy;
	*v = nv;
	return 0;
}

void strv__free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
