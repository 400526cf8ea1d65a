// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "agg/hist.h"
#include "core/hmap.h"
#include "python/pyprof.h"

struct py_row {
	char *name, *module;
	struct func_profile fp;
};

/* Depths followed per thread (a record deeper is summed, not linked). */
#define PYPROF_DEPTH 64

/* A call's callees so far (a row each), waiting for the call's record. */
struct pending {
	uint32_t row;
	uint64_t calls, total_ns;
};

struct thread_state {
	uint64_t child_ns[PYPROF_DEPTH + 2]; /* callees' time at each depth */
	struct pending *pend[PYPROF_DEPTH + 2];
	size_t n_pend[PYPROF_DEPTH + 2], cap_pend[PYPROF_DEPTH + 2];
};

struct edge {
	uint64_t calls, total_ns;
};

struct pyprof {
	uint32_t first_id;
	bool per_pid;
	struct hmap index; /* "name\0module\0pid" -> row + 1 */
	struct py_row *rows;
	size_t n, cap;
	struct hmap threads; /* tid -> struct thread_state * */
	struct hmap edges;   /* (caller row, callee row) -> struct edge * */
};

struct pyprof *pyprof__new(uint32_t first_id, bool per_pid)
{
	struct pyprof *pp = calloc(1, sizeof(*pp));

	if (pp) {
		pp->first_id = first_id;
		pp->per_pid = per_pid;
	}
	return pp;
}

void pyprof__free(struct pyprof *pp)
{
	if (!pp)
		return;
	for (size_t i = 0; i < pp->n; i++) {
		free(pp->rows[i].name);
		free(pp->rows[i].module);
	}
	free(pp->rows);
	hmap__release(&pp->index);
	for (size_t i = 0; i < pp->threads.cap; i++) {
		struct thread_state *ts = (struct thread_state *)(uintptr_t)pp->threads.slots[i].value;

		if (!pp->threads.slots[i].key)
			continue;
		for (int d = 0; d < PYPROF_DEPTH + 2; d++)
			free(ts->pend[d]);
		free(ts);
	}
	hmap__release(&pp->threads);
	for (size_t i = 0; i < pp->edges.cap; i++)
		if (pp->edges.slots[i].key)
			free((void *)(uintptr_t)pp->edges.slots[i].value);
	hmap__release(&pp->edges);
	free(pp);
}

static struct py_row *row_named(struct pyprof *pp, const char *func, const char *module,
				 uint32_t pid)
{
	size_t nf = strlen(func), nm = strlen(module), len = nf + nm + 2 + 4;
	char *key = malloc(len);
	uint64_t *slot;
	struct py_row *row;
	bool added;

	if (!key)
		return NULL;
	memcpy(key, func, nf + 1);
	memcpy(key + nf + 1, module, nm + 1);
	memcpy(key + nf + nm + 2, &pid, 4);
	slot = hmap__get(&pp->index, key, len, &added);
	free(key);
	if (!slot)
		return NULL;
	if (!added)
		return &pp->rows[*slot - 1];
	if (GROW(pp->rows, pp->n, pp->cap, 16))
		return NULL;
	row = &pp->rows[pp->n];
	memset(row, 0, sizeof(*row));
	row->name = strdup(func);
	row->module = strdup(module);
	if (!row->name || !row->module) {
		free(row->name);
		free(row->module);
		return NULL;
	}
	row->fp.func_id = pp->first_id + (uint32_t)pp->n;
	row->fp.pid = pid;
	*slot = ++pp->n;
	return row;
}

static struct py_row *row_of(struct pyprof *pp, const struct call_record *cr)
{
	return row_named(pp, cr->func, cr->module, pp->per_pid ? cr->pid : 0);
}

static struct thread_state *thread_of(struct pyprof *pp, uint32_t tid)
{
	uint64_t *slot;
	bool added;

	slot = hmap__get(&pp->threads, &tid, sizeof(tid), &added);
	if (slot && added)
		*slot = (uintptr_t)calloc(1, sizeof(struct thread_state));
	return slot ? (struct thread_state *)(uintptr_t)*slot : NULL;
}

static int pend_add(struct thread_state *ts, int d, uint32_t row, uint64_t ns)
{
	for (size_t i = 0; i < ts->n_pend[d]; i++) {
		if (ts->pend[d][i].row == row) {
			ts->pend[d][i].calls++;
			ts->pend[d][i].total_ns += ns;
			return 0;
		}
	}
	if (GROW(ts->pend[d], ts->n_pend[d], ts->cap_pend[d], 4))
		return -ENOMEM;
	ts->pend[d][ts->n_pend[d]++] = (struct pending){ row, 1, ns };
	return 0;
}

/* The call of ROW at depth D returned after NS: its self time, and its
 * callees (the records one deeper since) linked to it. */
static int follow_call(struct pyprof *pp, uint32_t tid, int d, uint32_t row, uint64_t ns,
		       uint64_t *self)
{
	struct thread_state *ts = thread_of(pp, tid);
	int err = 0;

	*self = ns;
	if (!ts)
		return -ENOMEM;
	if (d < 0 || d > PYPROF_DEPTH)
		return 0;
	*self = ns > ts->child_ns[d + 1] ? ns - ts->child_ns[d + 1] : 0;
	ts->child_ns[d + 1] = 0;
	ts->child_ns[d] += ns;
	for (size_t i = 0; i < ts->n_pend[d + 1] && !err; i++) {
		uint32_t key[2] = { row, ts->pend[d + 1][i].row };
		bool added;
		uint64_t *slot = hmap__get(&pp->edges, key, sizeof(key), &added);
		struct edge *e;

		if (slot && added)
			*slot = (uintptr_t)calloc(1, sizeof(struct edge));
		e = slot ? (struct edge *)(uintptr_t)*slot : NULL;
		if (!e) {
			err = -ENOMEM;
			break;
		}
		e->calls += ts->pend[d + 1][i].calls;
		e->total_ns += ts->pend[d + 1][i].total_ns;
	}
	ts->n_pend[d + 1] = 0;
	return err ? err : pend_add(ts, d, row, ns);
}

int pyprof__add(struct pyprof *pp, const struct call_record *cr)
{
	struct py_row *row = row_of(pp, cr);
	struct func_profile *fp;
	uint64_t ns = cr->latency_ns, self = 0;
	int err;

	if (!row)
		return -ENOMEM;
	fp = &row->fp;
	fp->calls++;
	if (cr->status == CALL_NORETURN) {
		fp->noreturn++;
		return 0;
	}
	err = follow_call(pp, cr->tid, cr->depth, (uint32_t)(row - pp->rows), ns, &self);
	if (err)
		return err;
	fp->self_sum_ns += self;
	/* ok, exception, yield: a latency */
	fp->returns++;
	fp->lat_sum_ns += ns;
	if (fp->returns == 1 || ns < fp->lat_min_ns)
		fp->lat_min_ns = ns;
	if (ns > fp->lat_max_ns)
		fp->lat_max_ns = ns;
	fp->lat_hist[hist__bucket(ns)]++;
	fp->rss_growth_sum += (int64_t)(cr->rss_exit - cr->rss_entry);
	return 0;
}

int pyprof__read(struct pyprof *pp, profiler_read_fn fn, void *ctx)
{
	for (size_t i = 0; i < pp->n; i++) {
		int err = fn(ctx, &pp->rows[i].fp);

		if (err)
			return err;
	}
	return 0;
}

void pyprof__clear_lost(struct pyprof *pp)
{
	for (size_t i = 0; i < pp->n; i++)
		pp->rows[i].fp.lost = 0;
}

int pyprof__add_lost(struct pyprof *pp, uint32_t pid, const char *qualname, const char *where,
		     uint64_t n)
{
	struct py_row *row = row_named(pp, qualname, where, pp->per_pid ? pid : 0);

	if (!row)
		return -ENOMEM;
	row->fp.lost += n;
	return 0;
}

void pyprof__edges(const struct pyprof *pp, uint32_t func_id, bool callers, pyprof_edge_fn fn,
		   void *ctx)
{
	uint32_t me = func_id - pp->first_id;

	for (size_t i = 0; i < pp->edges.cap; i++) {
		const struct edge *e = (const struct edge *)(uintptr_t)pp->edges.slots[i].value;
		uint32_t key[2];

		if (!pp->edges.slots[i].key)
			continue;
		memcpy(key, pp->edges.slots[i].key, sizeof(key));
		if (key[callers ? 1 : 0] == me)
			fn(ctx, pp->first_id + key[callers ? 0 : 1], e->calls, e->total_ns);
	}
}

const char *pyprof__name(const struct pyprof *pp, uint32_t func_id)
{
	return pp && func_id >= pp->first_id && func_id - pp->first_id < pp->n
		       ? pp->rows[func_id - pp->first_id].name : NULL;
}

const char *pyprof__module(const struct pyprof *pp, uint32_t func_id)
{
	return pp && func_id >= pp->first_id && func_id - pp->first_id < pp->n
		       ? pp->rows[func_id - pp->first_id].module : NULL;
}
