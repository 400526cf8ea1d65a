// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "agg/hist.h"
#include "core/hmap.h"
#include "python/pyprof.h"

struct py_row {
	char *name, *module;
	struct func_profile fp;
};

struct pyprof {
	uint32_t first_id;
	bool per_pid;
	struct hmap index; /* "name\0module\0pid" -> row + 1 */
	struct py_row *rows;
	size_t n, cap;
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
	free(pp);
}

static struct py_row *row_of(struct pyprof *pp, const struct call_record *cr)
{
	size_t nf = strlen(cr->func), nm = strlen(cr->module), len = nf + nm + 2 + 4;
	uint32_t pid = pp->per_pid ? cr->pid : 0;
	char *key = malloc(len);
	uint64_t *slot;
	struct py_row *row;
	bool added;

	if (!key)
		return NULL;
	memcpy(key, cr->func, nf + 1);
	memcpy(key + nf + 1, cr->module, nm + 1);
	memcpy(key + nf + nm + 2, &pid, 4);
	slot = hmap__get(&pp->index, key, len, &added);
	free(key);
	if (!slot)
		return NULL;
	if (!added)
		return &pp->rows[*slot - 1];
	if (pp->n == pp->cap) {
		size_t cap = pp->cap ? 2 * pp->cap : 16;
		struct py_row *v = realloc(pp->rows, cap * sizeof(*v));

		if (!v)
			return NULL;
		pp->rows = v;
		pp->cap = cap;
	}
	row = &pp->rows[pp->n];
	memset(row, 0, sizeof(*row));
	row->name = strdup(cr->func);
	row->module = strdup(cr->module);
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

int pyprof__add(struct pyprof *pp, const struct call_record *cr)
{
	struct py_row *row = row_of(pp, cr);
	struct func_profile *fp;
	uint64_t ns = cr->latency_ns;

	if (!row)
		return -ENOMEM;
	fp = &row->fp;
	fp->calls++;
	if (cr->status == CALL_NORETURN) {
		fp->noreturn++;
		return 0;
	}
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
