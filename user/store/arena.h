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
void arena__free(struct arena *a); /* NULL fine */

#endif
