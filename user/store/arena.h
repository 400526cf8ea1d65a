/*
 * arena.h: everything of a call (or of a store's lists) lives in one arena,
 * freed at once: no per-string ownership to track on error paths.
 */
#ifndef CMON_STORE_ARENA_H
#define CMON_STORE_ARENA_H

#include <stddef.h>

struct arena {
	struct arena *next;
	size_t used, cap;
	_Alignas(16) char data[];
};

/* N bytes, 16-aligned, from *A (a new chunk is linked in when needed; *A
 * NULL starts one).  NULL when out of memory. */
void *arena__alloc(struct arena **a, size_t n);
void *arena__zalloc(struct arena **a, size_t n);
/* S[0..N) and a NUL. */
char *arena__strndup(struct arena **a, const char *s, size_t n);
/* Room for one more element in an array in *A (the arena's GROW, core/
 * grow.h): ARRP is the address of the array pointer, N elements used,
 * *CAP allocated, ELEM bytes each, MIN the first capacity.  The array is
 * copied to a chunk twice as large (the old one stays in the arena until
 * it is freed).  0 or -ENOMEM with the array unchanged. */
int arena__grow(struct arena **a, void *arrp, size_t n, size_t *cap, size_t elem, size_t min);
#define ARENA_GROW(a, arr, n, cap, min) \
	arena__grow((a), &(arr), (n), &(cap), sizeof(*(arr)), (min))

void arena__free(struct arena *a); /* NULL fine */

#endif
