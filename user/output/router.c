// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* router.c: see router.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/grow.h"
#include "core/log.h"
#include "ledger.h"
#include "outpath.h"
#include "router.h"

struct route {
	pid_t pid;         /* 0: the single output */
	FILE *f;
	bool owned;        /* a per-process file: closed here */
	struct writer *w;
	struct out_ledger ledger;
	int err;           /* this output failed */
};

struct out_router {
	struct out_router_opts o;
	const char *tmpl;  /* NULL: single */
	struct route *routes;
	size_t n, cap;
	size_t last;       /* the route of the last record: most calls repeat it */
	uint64_t refused;
	struct rank_book ranks;
};

void out_router__note_process(struct out_router *r, pid_t pid)
{
	if (r->tmpl)
		rank_book__note(&r->ranks, pid);
}

static int route_init(struct out_router *r, struct route *rt, pid_t pid, FILE *f, bool owned)
{
	memset(rt, 0, sizeof(*rt));
	rt->pid = pid;
	rt->f = f;
	rt->owned = owned;
	rt->w = writer__new(r->o.fmt, f);
	if (!rt->w || out_ledger__init(&rt->ledger, r->o.n_funcs)) {
		writer__free(rt->w);
		return -ENOMEM;
	}
	writer__set_columns(rt->w, r->o.columns, r->o.n_columns);
	return 0;
}

static struct out_router *router_new(const struct out_router_opts *o, const char *tmpl)
{
	struct out_router *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	r->tmpl = tmpl;
	return r;
}

struct out_router *out_router__single(FILE *out, const struct out_router_opts *o)
{
	struct out_router *r = router_new(o, NULL);

	if (!r)
		return NULL;
	r->routes = calloc(1, sizeof(*r->routes));
	if (!r->routes || route_init(r, &r->routes[0], 0, out, false)) {
		free(r->routes);
		free(r);
		return NULL;
	}
	r->n = r->cap = 1;
	return r;
}

struct out_router *out_router__per_process(const char *tmpl, const struct out_router_opts *o)
{
	return router_new(o, tmpl);
}

/* The process's own file, made at its first record. */
static struct route *route_of(struct out_router *r, pid_t pid, int *err)
{
	char rank[32], *path = NULL;
	struct route *rt;
	FILE *f;
	int fd;

	*err = 0;
	if (!r->tmpl)
		return &r->routes[0];
	if (r->last < r->n && r->routes[r->last].pid == pid)
		return &r->routes[r->last];
	for (size_t i = 0; i < r->n; i++) {
		if (r->routes[i].pid == pid) {
			r->last = i;
			return &r->routes[i];
		}
	}
	if (GROW(r->routes, r->n, r->cap, 8)) {
		*err = -ENOMEM;
		return NULL;
	}
	rank_book__rank(&r->ranks, pid, rank, sizeof(rank));
	*err = out_path__expand(r->tmpl, pid, rank, &path);
	if (*err)
		return NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		*err = -errno;
		log_error("cannot write %s (process %d): %s", path, (int)pid, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path);
		return NULL;
	}
	free(path);
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	rt = &r->routes[r->n];
	*err = route_init(r, rt, pid, f, true);
	if (*err) {
		fclose(f);
		return NULL;
	}
	r->last = r->n++;
	return rt;
}

int out_router__write(struct out_router *r, const struct call_record *rec, uint32_t func_id)
{
	int err;
	struct route *rt = route_of(r, (pid_t)rec->pid, &err);

	if (!rt || rt->err) {
		r->refused++;
		return rt ? rt->err : err;
	}
	err = writer__write(rt->w, rec);
	if (err) {
		rt->err = err;
		r->refused++;
		return err;
	}
	out_ledger__add(&rt->ledger, func_id, writer__bytes(rt->w));
	return 0;
}

void out_router__refuse(struct out_router *r)
{
	r->refused++;
}

int out_router__settle(struct out_router *r, bool final)
{
	int first = 0;

	for (size_t i = 0; i < r->n; i++) {
		struct route *rt = &r->routes[i];
		uint64_t on_disk = 0;
		int err;

		if (final && !rt->err)
			rt->err = writer__finish(rt->w);
		/* A view (tree, folded, chrome) may hold records until the end. */
		if (!final && writer__bytes(rt->w) == UINT64_MAX) {
			fflush(rt->f);
			continue;
		}
		err = writer__flush(rt->w, &on_disk);
		if (err && !rt->err)
			rt->err = err;
		out_ledger__settle(&rt->ledger, rt->err, on_disk);
		if (rt->err && !first)
			first = rt->err;
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
	uint64_t n = r->refused;

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

size_t out_router__files(const struct out_router *r)
{
	return r->tmpl ? r->n : 0;
}

void out_router__free(struct out_router *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		writer__free(r->routes[i].w);
		out_ledger__free(&r->routes[i].ledger);
		if (r->routes[i].owned)
			fclose(r->routes[i].f);
	}
	free(r->routes);
	rank_book__free(&r->ranks);
	free(r);
}
