/*
 * hmap.h: a hash map from byte strings to a 64-bit value, for counting and
 * "seen before" sets in the output views (thread and process names already
 * written, folded stacks and their weights).  Keys are copied.  Open
 * addressing with linear probing, FNV-1a; grows at 3/4 full.
 */
#ifndef CMON_HMAP_H
#define CMON_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_entry {
	char *key;      /* NULL: empty slot */
	size_t klen;
	uint64_t value;
};

struct hmap {
	struct hmap_entry *slots;
	size_t cap, n;  /* cap is a power of two, or 0 */
};

/* The value slot of KEY, added with value 0 when absent (*ADDED says which;
 * ADDED may be NULL).  NULL with errno ENOMEM. */
uint64_t *hmap__get(struct hmap *m, const void *key, size_t klen, bool *added);

/* The value of KEY, or NULL. */
uint64_t *hmap__find(const struct hmap *m, const void *key, size_t klen);

/* KEY removed (its value with it); false when absent. */
bool hmap__del(struct hmap *m, const void *key, size_t klen);

void hmap__release(struct hmap *m); /* a zeroed struct again */

#endif
