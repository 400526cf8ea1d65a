// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* router.c: see router.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "ledger.h"
#include "outpath.h"
#include "router.h"

struct route {
	pid_t pid;         /* 0: the single output, or any process (no %p/%r) */
	uint32_t func;     /* -o %f: the function; UINT32_MAX: every one */
	char *path;
	struct out_sink *sink;
	struct out_ledger ledger;
	size_t settle_at;  /* settled as it writes once the ledger holds this many */
	int err;           /* this output failed */
};

struct out_router {
	struct out_router_opts o;
	const char *tmpl;  /* NULL: single */
	bool by_pid, by_func; /* the template's fields */
	struct route *routes;
	size_t n, cap;
	size_t last;       /* the route of the last record: most calls repeat it */
	uint64_t refused;
	uint64_t dropped;  /* by an output that goes on (sink.h: write returning 1) */
	struct rank_book ranks;
};

void out_router__note_process(struct out_router *r, pid_t pid)
{
	if (r->tmpl)
		rank_book__note(&r->ranks, pid);
}

static struct out_router *router_new(const struct out_router_opts *o, const char *tmpl)
{
	struct out_router *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	r->tmpl = tmpl;
	r->by_func = tmpl && out_path__per_function(tmpl);
	r->by_pid = tmpl && (strstr(tmpl, "%p") || strstr(tmpl, "%r"));
	return r;
}

struct out_router *out_router__single(struct out_sink *sink, const struct out_router_opts *o)
{
	struct out_router *r = sink ? router_new(o, NULL) : NULL;

	if (r)
		r->routes = calloc(1, sizeof(*r->routes));
	if (!r || !r->routes || out_ledger__init(&r->routes[0].ledger, o->n_funcs)) {
		out_sink__free(sink);
		out_router__free(r);
		return NULL;
	}
	r->routes[0].sink = sink;
	r->n = r->cap = 1;
	return r;
}

struct out_router *out_router__per_process(const char *tmpl, const struct out_router_opts *o)
{
	return router_new(o, tmpl);
}

static bool route_is(const struct route *rt, pid_t pid, uint32_t func)
{
	return rt->pid == pid && rt->func == func;
}

/* The process's (or function's) own sink, made at its first record. */
static struct route *route_of(struct out_router *r, pid_t pid, uint32_t func, int *err)
{
	char rank[32], *path = NULL;
	struct route *rt;

	*err = 0;
	if (!r->tmpl)
		return &r->routes[0];
	if (!r->by_pid)
		pid = 0;
	if (!r->by_func)
		func = UINT32_MAX;
	if (r->last < r->n && route_is(&r->routes[r->last], pid, func))
		return &r->routes[r->last];
	for (size_t i = 0; i < r->n; i++) {
		if (route_is(&r->routes[i], pid, func)) {
			r->last = i;
			return &r->routes[i];
		}
	}
	if (GROW(r->routes, r->n, r->cap, 8)) {
		*err = -ENOMEM;
		return NULL;
	}
	rank_book__rank(&r->ranks, pid, rank, sizeof(rank));
	*err = out_path__expand(r->tmpl, pid, rank,
				func < r->o.n_funcs && r->o.func_names ? r->o.func_names[func] : NULL,
				&path);
	/* two functions of one name (in two libraries): the later one's file
	 * gets its number */
	for (size_t i = 0; !*err && i < r->n; i++) {
		if (!strcmp(r->routes[i].path, path)) {
			char *p2 = NULL;

			if (asprintf(&p2, "%s.%u", path, func) < 0) {
				*err = -ENOMEM;
				break;
			}
			free(path);
			path = p2;
		}
	}
	if (*err) {
		free(path);
		return NULL;
	}
	rt = &r->routes[r->n];
	memset(rt, 0, sizeof(*rt));
	rt->pid = pid;
	rt->func = func;
	rt->path = path;
	*err = r->o.open(r->o.open_ctx, pid, func, path, &rt->sink);
	if (!*err && out_ledger__init(&rt->ledger, r->o.n_funcs))
		*err = -ENOMEM;
	if (*err) {
		out_sink__free(rt->sink);
		out_ledger__free(&rt->ledger);
		free(rt->path);
		return NULL;
	}
	r->last = r->n++;
	return rt;
}

#define LEDGER_SETTLE_AT 16384

static void settle_route(struct route *rt, bool final);

int out_router__write(struct out_router *r, const struct call_record *rec, uint32_t func_id)
{
	int err;
	struct route *rt = route_of(r, (pid_t)rec->pid, func_id, &err);

	if (!rt || rt->err) {
		r->refused++;
		return rt ? rt->err : err;
	}
	err = rt->sink->ops->write(rt->sink, rec, func_id);
	if (err > 0) {
		r->dropped++; /* the output said so, and goes on */
		return 0;
	}
	if (err) {
		rt->err = err;
		r->refused++;
		return err;
	}
	out_ledger__add(&rt->ledger, func_id, rt->sink->ops->bytes(rt->sink));
	/* A drain writes without the polls' flushes (a spool of a million
	 * records at the end): past this many records pending, the route is
	 * settled now, so the ledger (12 bytes a record) stays bounded.  What
	 * stays pending (a store commits once a second) is looked at again
	 * LEDGER_SETTLE_AT records later, not at every write. */
	if (rt->ledger.n >= (rt->settle_at ? rt->settle_at : LEDGER_SETTLE_AT) &&
	    rt->sink->ops->bytes(rt->sink) != UINT64_MAX) { /* (a view holds its records to the end) */
		settle_route(rt, false);
		rt->settle_at = rt->ledger.n + LEDGER_SETTLE_AT;
	}
	return 0;
}

void out_router__refuse(struct out_router *r)
{
	r->refused++;
}

/* RT's output flushed (FINAL: finished first) and its ledger settled. */
static void settle_route(struct route *rt, bool final)
{
	uint64_t on_disk = 0;
	int err;

	if (final) {
		err = rt->sink->ops->finish(rt->sink);
		if (err && !rt->err)
			rt->err = err;
	}
	err = rt->sink->ops->flush(rt->sink, &on_disk);
	/* A view (tree, folded, chrome) may hold records until the end. */
	if (!final && rt->sink->ops->bytes(rt->sink) == UINT64_MAX)
		return;
	if (err < 0 && !rt->err)
		rt->err = err;
	/* > 0: the durable part only, the rest stays pending */
	out_ledger__settle(&rt->ledger, rt->err ? rt->err : err > 0 ? 1 : 0, on_disk);
}

int out_router__settle(struct out_router *r, bool final)
{
	int first = 0;

	for (size_t i = 0; i < r->n; i++) {
		settle_route(&r->routes[i], final);
		if (r->routes[i].err && !first)
			first = r->routes[i].err;
	}
	return first;
}

uint64_t out_router__written(const struct out_router *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->routes[i].ledger.written;
	return n;
}

uint64_t out_router__unwritten(const struct out_router *r)
{
	uint64_t n = r->refused + r->dropped;

	for (size_t i = 0; i < r->n; i++)
		n += r->routes[i].ledger.unwritten;
	return n;
}

uint64_t out_router__written_func(const struct out_router *r, size_t func_id)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		if (func_id < r->routes[i].ledger.n_funcs)
			n += r->routes[i].ledger.written_per_func[func_id];
	return n;
}

uint64_t out_router__dropped(const struct out_router *r)
{
	return r->dropped;
}

size_t out_router__files(const struct out_router *r)
{
	return r->tmpl ? r->n : 0;
}

void out_router__free(struct out_router *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		out_sink__free(r->routes[i].sink);
		out_ledger__free(&r->routes[i].ledger);
		free(r->routes[i].path);
	}
	free(r->routes);
	rank_book__free(&r->ranks);
	free(r);
}
