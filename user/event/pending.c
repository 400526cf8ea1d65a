// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pending.c: capture records waiting for their call records (pending.h). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "pending.h"

#define BUCKETS (1u << 16) /* a power of two; chains stay short at the bound */
#define DEFAULT_MAX_BYTES (64u << 20)

struct waiting {
	struct waiting *next;          /* in its bucket */
	struct waiting *older, *newer; /* in arrival order: the oldest goes first */
	struct cmon_capture_rec rec[]; /* the record, items included */
};

/* What W holds, counted against the bound. */
static size_t held(const struct waiting *w)
{
	return sizeof(*w) + sizeof(w->rec[0]) + w->rec->len;
}

/* A call left out whose entry capture had not come yet. */
struct forgotten {
	uint64_t ts;
	uint32_t tid, func_id;
};

struct pending_caps {
	struct waiting **buckets;
	struct waiting *oldest, *newest;
	size_t bytes, max_bytes, count;
	uint64_t evicted;
	struct forgotten forgotten[PENDING_FORGOTTEN]; /* ts 0: a free slot */
	unsigned n_forgotten, next_forgotten;
};

static size_t bucket_of(uint32_t tid, uint64_t ts)
{
	uint64_t h = (ts ^ ((uint64_t)tid << 32)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 48) & (BUCKETS - 1);
}

struct pending_caps *pending__new(size_t max_bytes)
{
	struct pending_caps *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return NULL;
	pc->buckets = calloc(BUCKETS, sizeof(*pc->buckets));
	if (!pc->buckets) {
		free(pc);
		return NULL;
	}
	pc->max_bytes = max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
	return pc;
}

/* Unlink W from its bucket (found there through PP, or looked up) and from
 * the arrival order. */
static void unlink_waiting(struct pending_caps *pc, struct waiting **pp, struct waiting *w)
{
	if (!pp) {
		pp = &pc->buckets[bucket_of(w->rec->tid, w->rec->ts_entry_ns)];
		while (*pp != w)
			pp = &(*pp)->next;
	}
	*pp = w->next;
	if (w->older)
		w->older->newer = w->newer;
	else
		pc->oldest = w->newer;
	if (w->newer)
		w->newer->older = w->older;
	else
		pc->newest = w->older;
	pc->bytes -= held(w);
	pc->count--;
}

/* REC is the entry capture of a call left out already: used up. */
static bool was_forgotten(struct pending_caps *pc, const struct cmon_capture_rec *rec)
{
	if (!pc->n_forgotten || rec->at_return)
		return false;
	for (unsigned i = 0; i < PENDING_FORGOTTEN; i++) {
		struct forgotten *f = &pc->forgotten[i];

		if (f->ts && f->ts == rec->ts_entry_ns && f->tid == rec->tid &&
		    f->func_id == rec->func_id) {
			f->ts = 0;
			pc->n_forgotten--;
			return true;
		}
	}
	return false;
}

int pending__put(struct pending_caps *pc, const struct cmon_capture_rec *rec)
{
	size_t size = sizeof(*rec) + rec->len;
	struct waiting *w;
	size_t b;

	if (was_forgotten(pc, rec))
		return 0;
	w = malloc(sizeof(*w) + size);
	if (!w)
		return -ENOMEM;
	memcpy(w->rec, rec, size);
	/* Make room: what waited longest has most likely lost its call. */
	while (pc->oldest && pc->bytes + held(w) > pc->max_bytes) {
		struct waiting *old = pc->oldest;

		unlink_waiting(pc, NULL, old);
		free(old);
		pc->evicted++;
	}
	b = bucket_of(rec->tid, rec->ts_entry_ns);
	w->next = pc->buckets[b];
	pc->buckets[b] = w;
	w->newer = NULL;
	w->older = pc->newest;
	if (pc->newest)
		pc->newest->newer = w;
	else
		pc->oldest = w;
	pc->newest = w;
	pc->bytes += held(w);
	pc->count++;
	return 0;
}

struct cmon_capture_rec *pending__take(struct pending_caps *pc, uint32_t tid, uint64_t ts,
				       uint32_t func_id, uint32_t at_return)
{
	struct waiting **pp;

	if (!pc->count) /* typed calls without captures: no bucket to miss in cache */
		return NULL;
	for (pp = &pc->buckets[bucket_of(tid, ts)]; *pp; pp = &(*pp)->next) {
		struct waiting *w = *pp;
		const struct cmon_capture_rec *r = w->rec;

		if (r->tid == tid && r->ts_entry_ns == ts && r->func_id == func_id &&
		    r->at_return == at_return) {
			unlink_waiting(pc, pp, w);
			return w->rec;
		}
	}
	return NULL;
}

void pending__forget(struct pending_caps *pc, uint32_t tid, uint64_t ts, uint32_t func_id)
{
	struct cmon_capture_rec *r = pending__take(pc, tid, ts, func_id, 0);
	struct forgotten *f;

	if (r || !ts) {
		pending__release(r);
		return;
	}
	/* The oldest remembered goes: its capture is most likely lost. */
	f = &pc->forgotten[pc->next_forgotten];
	if (!f->ts)
		pc->n_forgotten++;
	*f = (struct forgotten){ .ts = ts, .tid = tid, .func_id = func_id };
	pc->next_forgotten = (pc->next_forgotten + 1) % PENDING_FORGOTTEN;
}

void pending__release(struct cmon_capture_rec *rec)
{
	if (rec)
		free((char *)rec - offsetof(struct waiting, rec));
}

uint64_t pending__evicted(const struct pending_caps *pc) { return pc ? pc->evicted : 0; }
size_t pending__count(const struct pending_caps *pc) { return pc ? pc->count : 0; }

void pending__free(struct pending_caps *pc)
{
	if (!pc)
		return;
	while (pc->oldest) {
		struct waiting *w = pc->oldest;

		pc->oldest = w->newer;
		free(w);
	}
	free(pc->buckets);
	free(pc);
}
