// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"

static uint64_t fnv1a(const void *key, size_t n)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static struct hmap_entry *slot_of(const struct hmap *m, const void *key, size_t klen)
{
	size_t i = (size_t)fnv1a(key, klen) & (m->cap - 1);

	for (;; i = (i + 1) & (m->cap - 1)) {
		struct hmap_entry *e = &m->slots[i];

		if (!e->key || (e->klen == klen && !memcmp(e->key, key, klen)))
			return e;
	}
}

static int grow(struct hmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct hmap old = *m;

	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	m->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*slot_of(m, old.slots[i].key, old.slots[i].klen) = old.slots[i];
	free(old.slots);
	return 0;
}

uint64_t *hmap__find(const struct hmap *m, const void *key, size_t klen)
{
	struct hmap_entry *e;

	if (!m->cap)
		return NULL;
	e = slot_of(m, key, klen);
	return e->key ? &e->value : NULL;
}

uint64_t *hmap__get(struct hmap *m, const void *key, size_t klen, bool *added)
{
	struct hmap_entry *e;

	if (added)
		*added = false;
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m)) {
		errno = ENOMEM;
		return NULL;
	}
	e = slot_of(m, key, klen);
	if (e->key)
		return &e->value;
	e->key = malloc(klen + 1);
	if (!e->key) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(e->key, key, klen);
	e->key[klen] = '\0';
	e->klen = klen;
	e->value = 0;
	m->n++;
	if (added)
		*added = true;
	return &e->value;
}

void hmap__release(struct hmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

bool hmap__del(struct hmap *m, const void *key, size_t klen)
{
	struct hmap_entry *e;
	size_t hole, i, mask = m->cap - 1;

	if (!m->cap)
		return false;
	e = slot_of(m, key, klen);
	if (!e->key)
		return false;
	free(e->key);
	e->key = NULL;
	m->n--;
	/* Backward shift: each entry after the hole in its run that a probe
	 * from its home slot would pass through the hole moves into it. */
	hole = (size_t)(e - m->slots);
	for (i = (hole + 1) & mask; m->slots[i].key; i = (i + 1) & mask) {
		size_t home = (size_t)fnv1a(m->slots[i].key, m->slots[i].klen) & mask;

		if (((i - home) & mask) >= ((i - hole) & mask)) {
			m->slots[hole] = m->slots[i];
			m->slots[i].key = NULL;
			hole = i;
		}
	}
	return true;
}
