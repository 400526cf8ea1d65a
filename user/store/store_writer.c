// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * store_writer.c: the capture store's writer.  It sits on the ring-buffer
 * consumer's path, so each call is a couple of prepared-statement steps
 * inside a long transaction: no SQL parsing, no per-call allocation, no
 * fsync (WAL + synchronous=NORMAL: a commit survives the death of the
 * process, which is the crash this store is built for).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <sqlite3.h>
#include "store/store_fs.h"
#include "store/store_writer.h"
#include "core/clock.h"
#include "core/grow.h"

#ifndef CMON_VERSION
#define CMON_VERSION "0.1.0"
#endif

#define STORE_FORMAT_VERSION "1"
#define COMMIT_INTERVAL_NS 1000000000ull
/* add_call looks at the clock every so many calls, so that a consumer that
 * never calls maybe_commit still commits every second while calls flow. */
#define CLOCK_CHECK_EVERY 256

static const char SCHEMA[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE functions(id INTEGER PRIMARY KEY, name TEXT NOT NULL, module TEXT,"
	" signature TEXT, typed INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX functions_name ON functions(name);"
	"CREATE TABLE calls(id INTEGER PRIMARY KEY, func_id INTEGER NOT NULL,"
	" n INTEGER NOT NULL, pid INTEGER, tid INTEGER, ts_ns INTEGER, latency_ns INTEGER,"
	" status TEXT, ret TEXT, args TEXT, rss_entry INTEGER, rss_exit INTEGER,"
	" vms_entry INTEGER, vms_exit INTEGER, notes TEXT);"
	"CREATE UNIQUE INDEX calls_func_n ON calls(func_id, n);"
	"CREATE TABLE blobs(call_id INTEGER NOT NULL, name TEXT NOT NULL, dtype TEXT NOT NULL,"
	" shape TEXT NOT NULL, truncated INTEGER NOT NULL DEFAULT 0, data BLOB);"
	"CREATE INDEX blobs_call ON blobs(call_id);"
	"CREATE TABLE processes(pid INTEGER PRIMARY KEY, comm TEXT, first_ts INTEGER,"
	" last_ts INTEGER, calls INTEGER, cgroup TEXT);";

struct proc_slot {
	uint32_t pid;
	bool used, dirty;
	char comm[32];
	char *cgroup;        /* --cgroup: the process's cgroup v2 path; NULL: none */
	uint64_t first_ts, last_ts, calls;
};

struct store_writer {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *st_call, *st_blob, *st_func, *st_meta, *st_proc, *st_begin, *st_commit;
	uint64_t *next_n;   /* per function id: the last n given */
	size_t n_funcs, cap_funcs;
	struct proc_slot *procs; /* open addressing on pid */
	size_t n_procs, cap_procs;
	uint32_t *dirty;     /* slots to flush at the next commit */
	size_t n_dirty;
	uint64_t calls, since_clock;
	uint64_t committed; /* calls in the store as of its last commit */
	uint64_t last_commit_ns; /* CLOCK_MONOTONIC */
	json_t *files;       /* store_writer__add_file's list */
	bool in_txn;
	int failed;          /* sticky negative errno */
	char errmsg[256];
};

static int sqlite_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_TOOBIG:
		return -E2BIG;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	case SQLITE_MISUSE:
	case SQLITE_RANGE:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* Remember SQLite's message; make the writer failed for errors that may
 * have rolled the transaction back (per-function numbering would no longer
 * match what is stored). */
static int fail(struct store_writer *w, int rc)
{
	int err = sqlite_errno(rc);

	if (!err)
		return 0;
	/* an I/O error: the system's own cause (a write into a full disk
	 * extending the -shm file says ENOSPC there, not SQLITE_FULL) */
	if ((rc & 0xff) == SQLITE_IOERR && w->db && sqlite3_system_errno(w->db) > 0)
		err = -sqlite3_system_errno(w->db);
	snprintf(w->errmsg, sizeof(w->errmsg), "%s", sqlite3_errmsg(w->db));
	if (!w->failed)
		w->failed = err;
	return err;
}

static int step_reset(struct store_writer *w, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : fail(w, rc);
}

static void bind_opt_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	if (v == STORE_NONE)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, (int64_t)v);
}

static void bind_opt_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static int put_meta(struct store_writer *w, const char *key, const char *value)
{
	if (!value)
		return 0;
	sqlite3_bind_text(w->st_meta, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(w->st_meta, 2, value, -1, SQLITE_STATIC);
	return step_reset(w, w->st_meta);
}

static int put_meta_u64(struct store_writer *w, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return put_meta(w, key, buf);
}

static int prepare(struct store_writer *w, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);

	return rc == SQLITE_OK ? 0 : fail(w, rc);
}

static int exec(struct store_writer *w, const char *sql)
{
	int rc = sqlite3_exec(w->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : fail(w, rc);
}

/* ------------------------------------------------------------- processes */

static size_t proc_hash(uint32_t pid, size_t cap)
{
	return (size_t)((pid * 2654435761u) & (cap - 1));
}

static int procs_grow(struct store_writer *w)
{
	size_t cap = w->cap_procs ? w->cap_procs * 2 : 64;
	struct proc_slot *slots = calloc(cap, sizeof(*slots));
	uint32_t *dirty = calloc(cap, sizeof(*dirty));

	if (!slots || !dirty) {
		free(slots);
		free(dirty);
		return -ENOMEM;
	}
	/* Rehash; dirty slots are re-listed at their new place. */
	w->n_dirty = 0;
	for (size_t i = 0; i < w->cap_procs; i++) {
		struct proc_slot *o = &w->procs[i];
		size_t j;

		if (!o->used)
			continue;
		for (j = proc_hash(o->pid, cap); slots[j].used; j = (j + 1) & (cap - 1))
			;
		slots[j] = *o;
		if (o->dirty)
			dirty[w->n_dirty++] = (uint32_t)j;
	}
	free(w->procs);
	free(w->dirty);
	w->procs = slots;
	w->dirty = dirty;
	w->cap_procs = cap;
	return 0;
}

static int procs_note(struct store_writer *w, const struct store_call *c)
{
	struct proc_slot *p;
	size_t j;

	if ((w->n_procs + 1) * 2 > w->cap_procs) {
		int err = procs_grow(w);

		if (err)
			return err;
	}
	for (j = proc_hash(c->pid, w->cap_procs); w->procs[j].used && w->procs[j].pid != c->pid;
	     j = (j + 1) & (w->cap_procs - 1))
		;
	p = &w->procs[j];
	if (!p->used) {
		p->used = true;
		p->pid = c->pid;
		p->first_ts = c->ts_ns;
		w->n_procs++;
	}
	if (c->comm && strncmp(p->comm, c->comm, sizeof(p->comm) - 1))
		snprintf(p->comm, sizeof(p->comm), "%s", c->comm);
	if (c->cgroup && (!p->cgroup || strcmp(p->cgroup, c->cgroup))) {
		char *cg = strdup(c->cgroup);

		if (!cg)
			return -ENOMEM;
		free(p->cgroup);
		p->cgroup = cg;
	}
	if (c->ts_ns < p->first_ts)
		p->first_ts = c->ts_ns;
	if (c->ts_ns > p->last_ts)
		p->last_ts = c->ts_ns;
	p->calls++;
	if (!p->dirty) {
		p->dirty = true;
		w->dirty[w->n_dirty++] = (uint32_t)j;
	}
	return 0;
}

static int procs_flush(struct store_writer *w)
{
	for (size_t i = 0; i < w->n_dirty; i++) {
		struct proc_slot *p = &w->procs[w->dirty[i]];
		int err;

		sqlite3_bind_int64(w->st_proc, 1, p->pid);
		sqlite3_bind_text(w->st_proc, 2, p->comm, -1, SQLITE_STATIC);
		sqlite3_bind_int64(w->st_proc, 3, (int64_t)p->first_ts);
		sqlite3_bind_int64(w->st_proc, 4, (int64_t)p->last_ts);
		sqlite3_bind_int64(w->st_proc, 5, (int64_t)p->calls);
		if (p->cgroup)
			sqlite3_bind_text(w->st_proc, 6, p->cgroup, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(w->st_proc, 6);
		err = step_reset(w, w->st_proc);
		if (err)
			return err;
		p->dirty = false;
	}
	w->n_dirty = 0;
	return 0;
}

/* ---------------------------------------------------------------- create */

static int open_db(struct store_writer *w, const struct store_meta *meta)
{
	char host[256] = "";
	const char *hostname = meta ? meta->hostname : NULL;
	uint64_t start = meta && meta->start_time_ns ? meta->start_time_ns : clock__wall_ns();
	char *dbpath;
	int rc, err;

	if (asprintf(&dbpath, "%s/calls.db", w->path) < 0)
		return -ENOMEM;
	rc = sqlite3_open_v2(dbpath, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	free(dbpath);
	if (rc != SQLITE_OK) {
		if (w->db)
			return fail(w, rc);
		return -ENOMEM;
	}
	sqlite3_extended_result_codes(w->db, 1);
	sqlite3_busy_timeout(w->db, 5000);
	/* journal_mode answers with a row: exec ignores it.  The page cache
	 * is 1 MiB: the writes append (the B-trees' right edges stay hot),
	 * and a bigger cache only held more dirty pages of the open
	 * transaction in cmon's memory before spilling them to the WAL. */
	err = exec(w, "PRAGMA page_size=4096; PRAGMA journal_mode=WAL;"
		   " PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY;"
		   " PRAGMA cache_size=-1024; PRAGMA trusted_schema=OFF;");
	if (err)
		return err;
	err = exec(w, "BEGIN");
	if (err)
		return err;
	err = exec(w, SCHEMA);
	if (!err)
		err = prepare(w, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)", &w->st_meta);
	if (!hostname && gethostname(host, sizeof(host) - 1) == 0)
		hostname = host;
	if (!err)
		err = put_meta(w, "format_version", STORE_FORMAT_VERSION);
	if (!err)
		err = put_meta(w, "cmon_version",
			       meta && meta->cmon_version ? meta->cmon_version : CMON_VERSION);
	if (!err && meta)
		err = put_meta(w, "command_line", meta->command_line);
	if (!err && meta)
		err = put_meta(w, "target_path", meta->target_path);
	if (!err && meta)
		err = put_meta(w, "build_id", meta->build_id);
	if (!err)
		err = put_meta(w, "hostname", hostname);
	if (!err)
		err = put_meta_u64(w, "start_time_ns", start);
	if (!err)
		err = exec(w, "COMMIT");
	if (err)
		return err;

	err = prepare(w, "INSERT INTO calls(func_id, n, pid, tid, ts_ns, latency_ns, status, ret,"
		      " args, rss_entry, rss_exit, vms_entry, vms_exit, notes)"
		      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)", &w->st_call);
	if (!err)
		err = prepare(w, "INSERT INTO blobs(call_id, name, dtype, shape, truncated, data)"
			      " VALUES(?1,?2,?3,?4,?5,?6)", &w->st_blob);
	if (!err)
		err = prepare(w, "INSERT INTO functions(name, module, signature, typed)"
			      " VALUES(?1,?2,?3,?4)", &w->st_func);
	if (!err)
		err = prepare(w, "INSERT INTO processes(pid, comm, first_ts, last_ts, calls, cgroup)"
			      " VALUES(?1,?2,?3,?4,?5,?6) ON CONFLICT(pid) DO UPDATE SET"
			      " comm=excluded.comm, first_ts=excluded.first_ts,"
			      " last_ts=excluded.last_ts, calls=excluded.calls,"
			      " cgroup=excluded.cgroup", &w->st_proc);
	if (!err)
		err = prepare(w, "BEGIN", &w->st_begin);
	if (!err)
		err = prepare(w, "COMMIT", &w->st_commit);
	if (!err)
		err = step_reset(w, w->st_begin);
	if (!err)
		w->in_txn = true;
	return err;
}

static void finalize_all(struct store_writer *w)
{
	sqlite3_finalize(w->st_commit);
	sqlite3_finalize(w->st_begin);
	sqlite3_finalize(w->st_proc);
	sqlite3_finalize(w->st_meta);
	sqlite3_finalize(w->st_func);
	sqlite3_finalize(w->st_blob);
	sqlite3_finalize(w->st_call);
	w->st_commit = w->st_begin = w->st_proc = w->st_meta = NULL;
	w->st_func = w->st_blob = w->st_call = NULL;
}

static void writer_free(struct store_writer *w)
{
	finalize_all(w);
	sqlite3_close_v2(w->db);
	json_decref(w->files);
	free(w->dirty);
	for (size_t i = 0; i < w->cap_procs; i++)
		free(w->procs[i].cgroup);
	free(w->procs);
	free(w->next_n);
	free(w->path);
	free(w);
}

int store_writer__create(const char *outdir, const struct store_meta *meta,
			 struct store_writer **out)
{
	struct store_writer *w;
	int dfd = -1, fd, err;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	err = store_fs__mkdir_unique(outdir, &w->path, &dfd);
	if (err)
		goto cleanup;
	/* Created by us, 0600, never through a symlink; SQLite then opens it
	 * (and gives its -wal and -shm files the same mode). */
	fd = store_fs__create(dfd, "calls.db");
	if (fd < 0) {
		err = fd;
		goto cleanup;
	}
	close(fd);
	err = open_db(w, meta);
	if (err)
		goto cleanup;
	w->last_commit_ns = clock__mono_ns();
	*out = w;
	w = NULL;
cleanup:
	if (w && w->path && dfd >= 0) {
		/* Leave nothing half-made behind. */
		finalize_all(w);
		sqlite3_close_v2(w->db);
		w->db = NULL;
		unlinkat(dfd, "calls.db-wal", 0);
		unlinkat(dfd, "calls.db-shm", 0);
		unlinkat(dfd, "calls.db", 0);
		rmdir(w->path);
	}
	if (dfd >= 0)
		close(dfd);
	if (w)
		writer_free(w);
	return err;
}

const char *store_writer__path(const struct store_writer *w)
{
	return w->path;
}

const char *store_writer__errmsg(const struct store_writer *w)
{
	return w->errmsg;
}

uint64_t store_writer__calls(const struct store_writer *w)
{
	return w->calls;
}

uint64_t store_writer__committed(const struct store_writer *w)
{
	return w->committed;
}

int store_writer__set_meta(struct store_writer *w, const char *key, const char *value)
{
	if (!key || !value)
		return -EINVAL;
	if (w->failed)
		return w->failed;
	return put_meta(w, key, value);
}

int store_writer__add_file(struct store_writer *w, const char *path, const char *build_id)
{
	json_t *f;
	char *text;
	int err;

	if (!path)
		return -EINVAL;
	if (w->failed)
		return w->failed;
	if (!w->files && !(w->files = json_array()))
		return -ENOMEM;
	f = json_pack("{s:s, s:s?}", "path", path, "build_id", build_id);
	if (!f || json_array_append_new(w->files, f))
		return -ENOMEM;
	text = json_dumps(w->files, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	err = put_meta(w, "files", text);
	free(text);
	return err;
}

int64_t store_writer__add_function(struct store_writer *w, const char *name, const char *module,
				   const char *signature_json, bool typed)
{
	int64_t id;
	int err;

	if (!name)
		return -EINVAL;
	if (w->failed)
		return w->failed;
	/* next_n is indexed by the function's id, from 1: room for n_funcs + 1 */
	if (GROW(w->next_n, w->n_funcs + 1, w->cap_funcs, 64))
		return -ENOMEM;
	sqlite3_bind_text(w->st_func, 1, name, -1, SQLITE_STATIC);
	bind_opt_text(w->st_func, 2, module);
	bind_opt_text(w->st_func, 3, signature_json);
	sqlite3_bind_int(w->st_func, 4, typed ? 1 : 0);
	err = step_reset(w, w->st_func);
	if (err)
		return err;
	id = sqlite3_last_insert_rowid(w->db);
	/* Ids are 1, 2, ... in a fresh table; next_n is indexed by them. */
	if (id != (int64_t)w->n_funcs + 1)
		return w->failed = -EIO;
	w->n_funcs++;
	return id;
}

/* "[d0,d1,...]" into BUF (room for STORE_MAX_NDIM 20-digit dims). */
static void format_shape(char *buf, size_t cap, const struct store_blob *b)
{
	size_t len = 0;

	buf[len++] = '[';
	for (unsigned i = 0; i < b->ndim; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%" PRIu64, i ? "," : "",
					b->shape[i]);
	buf[len++] = ']';
	buf[len] = '\0';
}

int64_t store_writer__add_call(struct store_writer *w, const struct store_call *c)
{
	sqlite3_stmt *st = w->st_call;
	int64_t call_id;
	uint64_t n;
	int err;

	if (w->failed)
		return w->failed;
	if (c->func_id < 1 || (uint64_t)c->func_id > w->n_funcs || (c->n_blobs && !c->blobs))
		return -EINVAL;
	for (size_t i = 0; i < c->n_blobs; i++)
		if (!c->blobs[i].name || !c->blobs[i].dtype || c->blobs[i].ndim > STORE_MAX_NDIM ||
		    (c->blobs[i].ndim && !c->blobs[i].shape) || (c->blobs[i].len && !c->blobs[i].data))
			return -EINVAL;
	n = w->next_n[c->func_id] + 1;
	sqlite3_bind_int64(st, 1, c->func_id);
	sqlite3_bind_int64(st, 2, (int64_t)n);
	sqlite3_bind_int64(st, 3, c->pid);
	sqlite3_bind_int64(st, 4, c->tid);
	sqlite3_bind_int64(st, 5, (int64_t)c->ts_ns);
	bind_opt_u64(st, 6, c->latency_ns);
	sqlite3_bind_text(st, 7, c->status ? c->status : "ok", -1, SQLITE_STATIC);
	bind_opt_text(st, 8, c->ret_json);
	sqlite3_bind_text(st, 9, c->args_json ? c->args_json : "{}", -1, SQLITE_STATIC);
	bind_opt_u64(st, 10, c->rss_entry);
	bind_opt_u64(st, 11, c->rss_exit);
	bind_opt_u64(st, 12, c->vms_entry);
	bind_opt_u64(st, 13, c->vms_exit);
	bind_opt_text(st, 14, c->notes_json);
	err = step_reset(w, st);
	if (err)
		return err;
	call_id = sqlite3_last_insert_rowid(w->db);
	for (size_t i = 0; i < c->n_blobs; i++) {
		const struct store_blob *b = &c->blobs[i];
		char shape[STORE_MAX_NDIM * 22 + 4];

		format_shape(shape, sizeof(shape), b);
		sqlite3_bind_int64(w->st_blob, 1, call_id);
		sqlite3_bind_text(w->st_blob, 2, b->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(w->st_blob, 3, b->dtype, -1, SQLITE_STATIC);
		sqlite3_bind_text(w->st_blob, 4, shape, -1, SQLITE_STATIC);
		sqlite3_bind_int(w->st_blob, 5, b->truncated ? 1 : 0);
		sqlite3_bind_blob64(w->st_blob, 6, b->len ? b->data : "", b->len, SQLITE_STATIC);
		err = step_reset(w, w->st_blob);
		if (err)
			return err;
	}
	err = procs_note(w, c);
	if (err)
		return w->failed = err;
	w->next_n[c->func_id] = n;
	w->calls++;
	if (++w->since_clock >= CLOCK_CHECK_EVERY) {
		w->since_clock = 0;
		err = store_writer__maybe_commit(w, 0);
		if (err)
			return err;
	}
	return (int64_t)n;
}

int store_writer__commit(struct store_writer *w)
{
	int err;

	if (w->failed)
		return w->failed;
	err = procs_flush(w);
	if (!err)
		err = put_meta_u64(w, "last_commit_ns", clock__wall_ns());
	if (!err && w->in_txn) {
		err = step_reset(w, w->st_commit);
		if (!err)
			w->in_txn = false;
	}
	if (!err)
		w->committed = w->calls;
	if (!err) {
		err = step_reset(w, w->st_begin);
		if (!err)
			w->in_txn = true;
	}
	w->last_commit_ns = clock__mono_ns();
	return err;
}

int store_writer__maybe_commit(struct store_writer *w, uint64_t now_ns)
{
	if (!now_ns)
		now_ns = clock__mono_ns();
	if (now_ns - w->last_commit_ns < COMMIT_INTERVAL_NS)
		return w->failed;
	return store_writer__commit(w);
}

int store_writer__end(struct store_writer *w, uint64_t end_time_ns)
{
	int err = w->failed;

	if (err || !w->in_txn) /* failed, or ended already */
		return err;
	err = procs_flush(w);
	if (!err)
		err = put_meta_u64(w, "end_time_ns", end_time_ns ? end_time_ns : clock__wall_ns());
	if (!err)
		err = put_meta_u64(w, "last_commit_ns", clock__wall_ns());
	if (!err)
		err = step_reset(w, w->st_commit);
	if (!err) {
		w->in_txn = false;
		w->committed = w->calls;
	}
	return err;
}

int store_writer__close(struct store_writer *w, uint64_t end_time_ns)
{
	int err = 0;

	if (!w)
		return 0;
	err = store_writer__end(w, end_time_ns);
	if (err && w->in_txn && !sqlite3_get_autocommit(w->db)) {
		/* Failed: keep what was committed, drop the broken batch. */
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	}
	finalize_all(w);
	if (!err) {
		/* One self-contained file, readable read-only from anywhere; if a
		 * reader holds the store open this is refused: it stays WAL. */
		sqlite3_exec(w->db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;",
			     NULL, NULL, NULL);
	}
	if (sqlite3_close(w->db) != SQLITE_OK && !err)
		err = -EIO;
	w->db = NULL;
	writer_free(w);
	return err;
}
