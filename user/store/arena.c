// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* arena.c: see arena.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "arena.h"

void *arena__alloc(struct arena **a, size_t n)
{
	size_t off;

	n = (n + 15) & ~(size_t)15;
	if (!*a || (*a)->cap - (*a)->used < n) {
		size_t cap = n > 8192 - sizeof(struct arena) ? n : 8192 - sizeof(struct arena);
		struct arena *c = malloc(sizeof(*c) + cap);

		if (!c)
			return NULL;
		c->next = *a;
		c->used = 0;
		c->cap = cap;
		*a = c;
	}
	off = (*a)->used;
	(*a)->used += n;
	return (*a)->data + off;
}

void *arena__zalloc(struct arena **a, size_t n)
{
	void *p = arena__alloc(a, n);

	if (p)
		memset(p, 0, n);
	return p;
}

char *arena__strndup(struct arena **a, const char *s, size_t n)
{
	char *p = arena__alloc(a, n + 1);

	if (p) {
		if (n)
			memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

int arena__grow(struct arena **a, void *arrp, size_t n, size_t *cap, size_t elem, size_t min)
{
	size_t ncap;
	void *arr, *p;

	if (n < *cap)
		return 0;
	ncap = grow__next_cap(n, *cap, elem, min);
	if (!ncap)
		return -ENOMEM;
	p = arena__alloc(a, ncap * elem);
	if (!p)
		return -ENOMEM;
	/* The pointer through memcpy: ARRP points to a typed pointer. */
	memcpy(&arr, arrp, sizeof(arr));
	if (n)
		memcpy(p, arr, n * elem);
	memcpy(arrp, &p, sizeof(p));
	*cap = ncap;
	return 0;
}

void arena__free(struct arena *a)
{
	while (a) {
		struct arena *next = a->next;

		free(a);
		a = next;
	}
}
