/*
 * grow.h: room for one more element in a growable array, the one way cmon
 * grows them (the capacity doubles; new slots are zeroed).
 *
 *	if (GROW(v->items, v->n, v->cap, 16))
 *		return -ENOMEM;
 *	v->items[v->n++] = x;
 */
#ifndef CMON_GROW_H
#define CMON_GROW_H

#include <stddef.h>

/* ARRP is the address of the array pointer (N elements used, *CAP
 * allocated, ELEM bytes each); MIN the first capacity.  0, or -ENOMEM
 * with the array unchanged. */
int grow__room(void *arrp, size_t n, size_t *cap, size_t elem, size_t min);

/* The capacity after CAP for N used elements of ELEM bytes (doubling, MIN
 * first), or 0 when it would not fit in a size_t: the one rule for every
 * growable array (arena__grow's too). */
size_t grow__next_cap(size_t n, size_t cap, size_t elem, size_t min);

#define GROW(arr, n, cap, min) grow__room(&(arr), (n), &(cap), sizeof(*(arr)), (min))

#endif
