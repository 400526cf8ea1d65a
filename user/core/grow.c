// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"

size_t grow__next_cap(size_t n, size_t cap, size_t elem, size_t min)
{
	size_t ncap = cap ? cap * 2 : (min ? min : 8);

	if (ncap < n + 1)
		ncap = n + 1;
	return elem && ncap <= SIZE_MAX / elem ? ncap : 0;
}

int grow__room(void *arrp, size_t n, size_t *cap, size_t elem, size_t min)
{
	size_t ncap;
	void *arr, *p;

	if (n < *cap)
		return 0;
	ncap = grow__next_cap(n, *cap, elem, min);
	if (!ncap)
		return -ENOMEM;
	/* The pointer through memcpy: ARRP points to a typed pointer. */
	memcpy(&arr, arrp, sizeof(arr));
	p = realloc(arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
	memcpy(arrp, &p, sizeof(p));
	*cap = ncap;
	return 0;
}
