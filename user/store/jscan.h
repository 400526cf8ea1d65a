/*
 * jscan.h: a strict RFC 8259 scanner over [P, E) that keeps values as their
 * exact text.  libcmon hands argument values to callers as the store's JSON
 * text: a JSON library would round 64-bit integers (jansson refuses those
 * above INT64_MAX) or reformat floats.  Nothing is NUL-terminated, nothing
 * is decoded except object keys.  Each scanning function returns the end
 * of what it recognised, or NULL.
 */
#ifndef CMON_STORE_JSCAN_H
#define CMON_STORE_JSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include "arena.h"

#define JSCAN_MAX_DEPTH 256 /* deeper nesting is refused */

const char *jscan__ws(const char *p, const char *e);      /* past white space */
const char *jscan__value(const char *p, const char *e, int depth); /* one value */

/* S[0..N) is exactly one JSON value (surrounding space allowed). */
bool jscan__valid(const char *s, size_t n);

/* The JSON string [P, E) (quotes included, already scanned) decoded into
 * the arena; \u0000 and lone surrogates become U+FFFD (names are C
 * strings).  NULL when out of memory. */
char *jscan__decode(struct arena **a, const char *p, const char *e);

struct jscan_member {
	const char *key;    /* decoded */
	const char *v, *ve; /* the value's text */
	bool used;          /* for the caller */
};

/* Split the object text [P, E) into members (in the arena).  The count, -1
 * when it is not exactly one valid JSON object, -2 out of memory. */
long jscan__members(struct arena **a, const char *p, const char *e, struct jscan_member **out);

#endif
