// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* store_sink.c: see store_sink.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/exit.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "dwarf/debuginfo.h"
#include "output/render.h"
#include "event/store_sink.h"
#include "event/typer.h"
#include "probe/resolve.h"
#include "store/store_writer.h"

struct store_sink {
	struct out_sink base;
	const struct store_sink_opts *o;
	struct store_writer *store;
	char *path;          /* the store's, for the error line */
	int64_t *funcs;      /* store function id of each func_id */
	struct hmap pyfuncs; /* --py: "qualname\0file:line" -> store id + 1 */
	/* One call's buffers (a call may have any number: none is dropped). */
	struct store_blob *blobs;
	uint64_t (*shapes)[RENDER_MAX_DIMS];
	size_t cap_blobs;
	uint64_t durable;    /* calls committed when the store was closed */
	struct strbuf notes; /* a call's truncated and faults (store_call) */
	bool said;           /* its failure was logged */
};

/* The store failed with ERR (a negative errno): said once, with the path
 * and what SQLite said ("database or disk is full"); ERR passed on. */
static int ss_failed(struct store_sink *ss, int err)
{
	if (!ss->said) {
		ss->said = true;
		log_error("capture store %s: %s (%s)", ss->path, strerror(-err),
			  ss->store ? store_writer__errmsg(ss->store) : "closing it");
	}
	return err;
}

static uint64_t or_none(bool have, uint64_t v) { return have ? v : STORE_NONE; }

/* --py: the store's function for the Python function of CR (made at its
 * first call: a Python function is known only when it runs).  <0: -errno. */
static int64_t py_store_func(struct store_sink *ss, const struct call_record *cr)
{
	size_t nf = strlen(cr->func), nm = strlen(cr->module);
	struct strbuf sig = {};
	char *key = malloc(nf + nm + 2);
	uint64_t *slot;
	int64_t id;
	bool added;
	int err = 0;

	if (!key)
		return -ENOMEM;
	memcpy(key, cr->func, nf + 1);
	memcpy(key + nf + 1, cr->module, nm + 1);
	slot = hmap__get(&ss->pyfuncs, key, nf + nm + 2, &added);
	free(key);
	if (!slot)
		return -ENOMEM;
	if (!added)
		return (int64_t)*slot - 1;
	/* The signature: the parameters' names (values are typed per call) */
	err = strbuf__puts(&sig, "{\"params\":[");
	for (size_t i = 0; !err && cr->typed && i < cr->typed->n_cells; i++)
		err = strbuf__printf(&sig, "%s{\"name\":\"%s\",\"type\":\"object\",\"kind\":\"python\"}",
				     i ? "," : "", cr->typed->names[i]);
	if (!err)
		err = strbuf__puts(&sig, "],\"ret\":\"object\"}");
	id = err ? -ENOMEM : store_writer__add_function(ss->store, cr->func, cr->module, sig.buf, true);
	strbuf__release(&sig);
	if (id < 0) {
		log_error("capture store: %s", store_writer__errmsg(ss->store));
		return -EIO;
	}
	*slot = (uint64_t)id + 1;
	return id;
}

/* LIST, a JSON array of N paths, without the bytes [CUT[0], CUT[1]) that
 * hold N_CUT of them (--capture-at both: the values read again at the
 * return, which the store does not keep), into OUT.  0 or -ENOMEM. */
static int put_list_but(struct strbuf *out, const struct strbuf *list, size_t n,
			const size_t cut[2], size_t n_cut)
{
	const char *b = list->buf ? list->buf : "[]";
	size_t len = list->buf ? list->len : 2, from = cut[0], to = cut[1];

	if (!n || n == n_cut)
		return strbuf__puts(out, "[]");
	if (!n_cut || from >= to || to > len)
		return strbuf__putn(out, b, len);
	/* the cut's paths are "a" (the first: the next one's comma goes) or
	 * ",a" (after others) */
	if (b[from] != ',' && to < len && b[to] == ',')
		to++;
	return strbuf__putn(out, b, from) ?: strbuf__putn(out, b + to, len - to);
}

/* One call into the store, with its typed values and buffers. */
static int ss_write(struct out_sink *s, const struct call_record *cr, uint32_t func_id)
{
	struct store_sink *ss = (struct store_sink *)s;
	const struct render_out *ro = cr->rendered;
	bool has_exit = cr->status == CALL_OK || cr->status == CALL_TAILCALL;
	bool python = ss->o->set->funcs[func_id].python;
	struct store_call sc = {
		.func_id = ss->funcs[func_id],
		.pid = cr->pid,
		.tid = cr->tid,
		.comm = cr->comm,
		.cgroup = cr->cgroup,
		.ts_ns = cr->ts_ns,
		.latency_ns = or_none(has_exit, cr->latency_ns),
		.status = call_status__name(cr->status),
		.rss_entry = cr->rss_entry,
		.rss_exit = or_none(has_exit, cr->rss_exit),
		.vms_entry = cr->vms_entry,
		.vms_exit = or_none(has_exit, cr->vms_exit),
	};
	const struct plan_layout *l = typer__layout(ss->o->typer, func_id);
	char raw_args[256], raw_ret[32];
	int64_t id;

	if (python) {
		sc.func_id = py_store_func(ss, cr);
		if (sc.func_id < 0)
			return (int)sc.func_id;
		/* an exception, a yield: their own status, no value */
		sc.latency_ns = cr->latency_ns;
		sc.rss_exit = cr->rss_exit;
		sc.vms_exit = cr->vms_exit;
		if (cr->status == CALL_NORETURN)
			sc.latency_ns = sc.rss_exit = sc.vms_exit = STORE_NONE;
	}

	/* A function without DWARF has a typed view only for its captures: its
	 * arguments are still the registers. */
	if (cr->typed && ((l && l->typed) || python)) {
		sc.args_json = cr->typed->args;
		sc.ret_json = cr->status == CALL_OK || cr->status == CALL_YIELD ? cr->typed->retval
										: NULL;
	} else {
		/* Raw mode: the registers, named as in trace's columns. */
		int n = 0;

		/* as trace's columns: signed, but a USDT 8@ argument unsigned */
		for (int i = 0; i < 6 && n >= 0 && (size_t)n < sizeof(raw_args); i++)
			n += cr->args_unsigned >> i & 1
				     ? snprintf(raw_args + n, sizeof(raw_args) - (size_t)n,
						"%s\"arg%d\":%llu", i ? "," : "{", i,
						(unsigned long long)cr->args[i])
				     : snprintf(raw_args + n, sizeof(raw_args) - (size_t)n,
						"%s\"arg%d\":%lld", i ? "," : "{", i,
						(long long)cr->args[i]);
		if (n >= 0 && (size_t)n + 2 <= sizeof(raw_args))
			snprintf(raw_args + n, sizeof(raw_args) - (size_t)n, "}");
		snprintf(raw_ret, sizeof(raw_ret), "%lld", (long long)cr->ret);
		sc.args_json = raw_args;
		sc.ret_json = cr->status == CALL_OK ? raw_ret : NULL;
	}
	if (ro && ro->n_blobs > ss->cap_blobs) {
		size_t cap = ro->n_blobs;
		struct store_blob *b = realloc(ss->blobs, cap * sizeof(*b));
		uint64_t(*sh)[RENDER_MAX_DIMS];

		if (!b)
			return -ENOMEM;
		ss->blobs = b;
		sh = realloc(ss->shapes, cap * sizeof(*sh));
		if (!sh)
			return -ENOMEM;
		ss->shapes = sh;
		ss->cap_blobs = cap;
	}
	for (size_t i = 0; ro && i < ro->n_blobs; i++) {
		const struct render_blob *b = &ro->blobs[i];
		struct store_blob *sb = &ss->blobs[sc.n_blobs];

		for (unsigned d = 0; d < b->ndim && d < RENDER_MAX_DIMS; d++)
			ss->shapes[sc.n_blobs][d] = b->shape[d];
		sb->name = b->name;
		sb->dtype = b->dtype;
		sb->ndim = b->ndim;
		sb->shape = ss->shapes[sc.n_blobs];
		sb->truncated = b->truncated;
		sb->data = b->data;
		sb->len = b->len;
		sc.n_blobs++;
	}
	sc.blobs = ss->blobs;
	if (ro && (ro->n_truncated > ro->again_n_truncated || ro->n_faults > ro->again_n_faults)) {
		strbuf__reset(&ss->notes);
		if (strbuf__puts(&ss->notes, "{\"truncated\":") ||
		    put_list_but(&ss->notes, &ro->truncated, ro->n_truncated, ro->again_truncated,
				 ro->again_n_truncated) ||
		    strbuf__puts(&ss->notes, ",\"faults\":") ||
		    put_list_but(&ss->notes, &ro->faults, ro->n_faults, ro->again_faults,
				 ro->again_n_faults) ||
		    strbuf__putc(&ss->notes, '}'))
			return -ENOMEM;
		sc.notes_json = ss->notes.buf;
	}
	id = store_writer__add_call(ss->store, &sc);
	return id < 0 ? ss_failed(ss, (int)id) : 0;
}

/* Where the ledger counts a call: the calls added so far.  A call is in
 * the store once its batch is committed (once a second, and at the end). */
static uint64_t ss_bytes(const struct out_sink *s)
{
	const struct store_sink *ss = (const struct store_sink *)s;

	return ss->store ? store_writer__calls(ss->store) : ss->durable;
}

static int ss_flush(struct out_sink *s, uint64_t *on_disk)
{
	struct store_sink *ss = (struct store_sink *)s;
	int err;

	if (!ss->store) { /* closed: what it holds is final */
		*on_disk = ss->durable;
		return 0;
	}
	err = store_writer__maybe_commit(ss->store, 0);
	*on_disk = store_writer__committed(ss->store);
	if (err)
		return ss_failed(ss, err);
	return *on_disk < store_writer__calls(ss->store) ? 1 : 0;
}

/* The end: the store is closed, its end time now; the last batch is
 * committed then, or lost with the store's failure. */
static int ss_finish(struct out_sink *s)
{
	struct store_sink *ss = (struct store_sink *)s;
	int err;

	/* ended before it is closed: a failure still has SQLite's message */
	err = store_writer__end(ss->store, 0);
	if (err)
		ss_failed(ss, err);
	ss->durable = store_writer__committed(ss->store);
	err = store_writer__close(ss->store, 0); /* END's error again, or closing's */
	ss->store = NULL;
	return err ? ss_failed(ss, err) : 0;
}

static void ss_free(struct out_sink *s)
{
	struct store_sink *ss = (struct store_sink *)s;

	if (ss->store)
		store_writer__close(ss->store, 0); /* a run that failed: kept as it is */
	free(ss->funcs);
	free(ss->blobs);
	free(ss->shapes);
	free(ss->path);
	strbuf__release(&ss->notes);
	hmap__release(&ss->pyfuncs);
	free(ss);
}

static const struct out_sink_ops store_sink_ops = {
	.write = ss_write,
	.bytes = ss_bytes,
	.finish = ss_finish,
	.flush = ss_flush,
	.free = ss_free,
};

/* The files the probes are in, and the functions, with their signatures. */
static int add_catalog(struct store_sink *ss)
{
	const struct probe_set *set = ss->o->set;
	int err = 0;

	for (size_t i = 0; i < set->n_objects && !err; i++) {
		bool traced = false;
		char *build_id;

		for (size_t k = 0; k < set->n_funcs && !traced; k++)
			traced = set->funcs[k].object == i;
		if (!traced)
			continue;
		build_id = debuginfo__build_id(set->objects[i].attach_path);
		err = store_writer__add_file(ss->store, set->objects[i].path, build_id);
		free(build_id);
	}
	if (err) {
		log_error("capture store: %s", store_writer__errmsg(ss->store));
		return -EIO;
	}
	ss->funcs = calloc(set->n_funcs ? set->n_funcs : 1, sizeof(*ss->funcs));
	if (!ss->funcs)
		return -ENOMEM;
	for (size_t i = 0; i < set->n_funcs; i++) {
		const struct probe_func *f = &set->funcs[i];
		const struct plan_layout *l = typer__layout(ss->o->typer, (uint32_t)i);
		char *sig;
		int64_t id;

		if (f->python) {
			ss->funcs[i] = -1; /* its Python functions are made as they run */
			continue;
		}
		sig = typer__signature_json(ss->o->typer, (uint32_t)i);
		id = store_writer__add_function(ss->store, f->name, set->objects[f->object].module,
						sig, l && l->typed);
		free(sig);
		if (id < 0) {
			log_error("capture store: %s", store_writer__errmsg(ss->store));
			return -EIO;
		}
		ss->funcs[i] = id;
	}
	return 0;
}

int store_sink__open(void *ctx, pid_t pid, uint32_t func_id, const char *outdir,
		     struct out_sink **out)
{
	const struct store_sink_opts *o = ctx;
	struct store_sink *ss = calloc(1, sizeof(*ss));
	char host[256] = "";
	struct store_meta meta = {
		.cmon_version = CMON_VERSION,
		.command_line = o->command_line,
		.target_path = o->target_path,
		.hostname = host,
	};
	char *build_id;
	int err;

	*out = NULL;
	if (!ss)
		return -ENOMEM;
	ss->base.ops = &store_sink_ops;
	ss->o = o;
	gethostname(host, sizeof(host) - 1);
	/* The build-id says later which build the calls came from (read from
	 * the notes: a stripped executable has one too). */
	build_id = debuginfo__build_id(o->build_id_path);
	meta.build_id = build_id;
	err = store_writer__create(outdir, &meta, &ss->store);
	free(build_id);
	if (err) {
		log_error("cannot create the capture store %s: %s", outdir, strerror(-err));
		ss_free(&ss->base);
		return err;
	}
	ss->path = strdup(store_writer__path(ss->store));
	/* The catalog committed at once: a store that fills up before its
	 * first batch still names its functions. */
	err = ss->path ? add_catalog(ss) : -ENOMEM;
	if (!err) {
		err = store_writer__commit(ss->store);
		if (err)
			log_error("cannot create the capture store %s: %s (%s)", outdir,
				  strerror(-err), store_writer__errmsg(ss->store));
	}
	if (err) {
		ss_free(&ss->base);
		return err;
	}
	if (!o->quiet)
		log_report("capturing to %s", store_writer__path(ss->store));
	*out = &ss->base;
	return 0;
}
