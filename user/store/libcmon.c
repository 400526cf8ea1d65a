// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcmon.c: the capture store's reader (include/cmon/cmon.h).
 *
 * Everything read from the file is untrusted: a store can be truncated by a
 * crash, damaged on disk, or not a store at all.  So the file's header is
 * checked before SQLite sees it, SQLite runs read-only and defensive, every
 * step's result is checked, and every value is validated before use (types
 * of columns, JSON of arguments, shapes of blobs).  Nothing is assumed to
 * be NUL-terminated or of the type the schema says.
 *
 * Argument values are kept as the exact JSON text of the store (jscan.c
 * splits the arguments object into name -> value text).  Signatures, which
 * hold only names and types, are parsed with jansson.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include <sqlite3.h>
#include <cmon/cmon.h>
#include "arena.h"
#include "core/grow.h"
#include "jscan.h"

#define ERR_MAX 1024

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ---------------------------------------------------------------- store */

struct func_entry {
	struct cmon_function pub;
	int64_t id;
};

struct cmon_store {
	sqlite3 *db;
	char *path;
	char err[ERR_MAX];
	struct arena *arena;       /* meta, functions, processes */
	size_t n_meta;
	const char **meta_keys, **meta_vals;
	bool funcs_loaded, procs_loaded;
	struct func_entry *funcs;
	struct cmon_function *func_list; /* the public view of funcs */
	size_t n_funcs;
	struct cmon_process *procs;
	size_t n_procs;
	sqlite3_stmt *st_call, *st_blobs;
	bool has_notes; /* calls.notes (stores written before it have none) */
};

struct cmon_iter {
	struct cmon_store *s;
	const struct func_entry *f;
	sqlite3_stmt *st;
	uint64_t next; /* the call number due next: calls come as first, first + 1, ... */
	bool done;
};

const char *cmon_strerror(int err)
{
	switch (err) {
	case CMON_OK:
		return "success";
	case CMON_ERR_INVAL:
		return "invalid argument";
	case CMON_ERR_NOMEM:
		return "out of memory";
	case CMON_ERR_NOENT:
		return "no such file or folder";
	case CMON_ERR_IO:
		return "cannot read the store";
	case CMON_ERR_NOTSTORE:
		return "not a cmon store";
	case CMON_ERR_VERSION:
		return "unsupported store format version";
	case CMON_ERR_CORRUPT:
		return "store is truncated or corrupted";
	case CMON_ERR_BUSY:
		return "store is locked";
	case CMON_ERR_NOFUNC:
		return "no such function in the store";
	case CMON_ERR_AMBIGUOUS:
		return "function name is in several modules";
	case CMON_ERR_NOCALL:
		return "no such call";
	case CMON_ERR_NOBLOB:
		return "no such captured buffer";
	default:
		return "unknown error";
	}
}

__attribute__((format(printf, 3, 4)))
/* The message is one line whatever it quotes: SQLite's quick_check report
 * spans lines, and names and values come from the store. */
static int set_err(struct cmon_store *s, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	for (char *p = s->err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return code;
}

static int sql_code(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		return CMON_ERR_NOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return CMON_ERR_BUSY;
	case SQLITE_PERM:
	case SQLITE_AUTH:
	case SQLITE_CANTOPEN:
		return CMON_ERR_IO;
	case SQLITE_IOERR:
		/* A short read is a file that ends early: truncated. */
		return rc == SQLITE_IOERR_SHORT_READ ? CMON_ERR_CORRUPT : CMON_ERR_IO;
	case SQLITE_NOTADB:
		return CMON_ERR_NOTSTORE;
	default:
		/* CORRUPT, FORMAT, RANGE, and ERROR ("no such column"): the file
		 * passed the checks at open, so it is a damaged store. */
		return CMON_ERR_CORRUPT;
	}
}

static int sql_fail(struct cmon_store *s, int rc, const char *what)
{
	int code = sql_code(rc);

	return set_err(s, code, "%s: %s while reading %s (%s)", s->path, cmon_strerror(code), what,
		       s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
}

static int nomem(struct cmon_store *s)
{
	return set_err(s, CMON_ERR_NOMEM, "%s: out of memory", s->path);
}

/* A text column as an arena string (NULL column: DEF, which may be NULL). */
static const char *col_text(struct arena **a, sqlite3_stmt *st, int i, const char *def, bool *oom)
{
	const unsigned char *t;
	int n;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return def;
	t = sqlite3_column_text(st, i);
	n = sqlite3_column_bytes(st, i);
	if (!t || n < 0) {
		*oom = true;
		return def;
	}
	/* Text with a NUL inside is cut there: the API's strings are C strings. */
	{
		const char *s = arena__strndup(a, (const char *)t, strnlen((const char *)t, (size_t)n));

		if (!s)
			*oom = true;
		return s ? s : def;
	}
}

static uint64_t col_u64(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return CMON_NONE;
	return (uint64_t)sqlite3_column_int64(st, i);
}

/* ---------------------------------------------------------------- open */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Look at the file before SQLite does: empty, foreign and truncated files
 * get a message that says so. */
static int check_header(struct cmon_store *s)
{
	static const char magic[16] = "SQLite format 3";
	unsigned char h[100];
	struct stat st, wst;
	char *wal = NULL;
	uint32_t psz, npages;
	ssize_t got = 0;
	int fd, err = 0;
	bool has_wal;

	/* O_NONBLOCK: a FIFO put there since check_file_types does not hang. */
	fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return set_err(s, errno == ENOENT ? CMON_ERR_NOENT : CMON_ERR_IO, "%s: cannot open: %s",
			       s->path, strerror(errno));
	if (fstat(fd, &st)) {
		err = set_err(s, CMON_ERR_IO, "%s: %s", s->path, strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = set_err(s, CMON_ERR_NOTSTORE, "%s: not a cmon store (not a regular file)",
			      s->path);
		goto cleanup;
	}
	if (st.st_size == 0) {
		err = set_err(s, CMON_ERR_NOTSTORE, "%s: not a cmon store (empty file)", s->path);
		goto cleanup;
	}
	while (got < (ssize_t)sizeof(h)) {
		ssize_t k = pread(fd, h + got, sizeof(h) - (size_t)got, got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err = set_err(s, CMON_ERR_IO, "%s: %s", s->path, strerror(errno));
			goto cleanup;
		}
		if (k == 0)
			break;
		got += k;
	}
	if (memcmp(h, magic, got < 16 ? (size_t)got : 16)) {
		err = set_err(s, CMON_ERR_NOTSTORE,
			      "%s: not a cmon store (not an SQLite database)", s->path);
		goto cleanup;
	}
	if (got < (ssize_t)sizeof(h)) {
		err = set_err(s, CMON_ERR_CORRUPT, "%s: store is truncated (%zd bytes)", s->path,
			      got);
		goto cleanup;
	}
	psz = (uint32_t)h[16] << 8 | h[17];
	if (psz == 1)
		psz = 65536;
	if (psz < 512 || (psz & (psz - 1))) {
		err = set_err(s, CMON_ERR_CORRUPT, "%s: store is corrupted (page size %u)", s->path,
			      psz);
		goto cleanup;
	}
	if (asprintf(&wal, "%s-wal", s->path) < 0) {
		wal = NULL;
		err = nomem(s);
		goto cleanup;
	}
	/* With a WAL (a writer running, or killed) pages may live there: only a
	 * store without one must hold every page its header counts. */
	has_wal = stat(wal, &wst) == 0 && wst.st_size > 0;
	npages = be32(h + 28);
	if (!has_wal && be32(h + 92) == be32(h + 24) && npages &&
	    ((uint64_t)st.st_size < (uint64_t)npages * psz || st.st_size % psz)) {
		err = set_err(s, CMON_ERR_CORRUPT,
			      "%s: store is truncated (%lld bytes; its header says %llu)", s->path,
			      (long long)st.st_size, (unsigned long long)npages * psz);
		goto cleanup;
	}
cleanup:
	free(wal);
	close(fd);
	return err;
}

static int load_meta(struct cmon_store *s)
{
	sqlite3_stmt *st = NULL;
	size_t kcap = 0, vcap = 0; /* the keys', the values' */
	bool oom = false;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(s->db, "SELECT key, value FROM meta ORDER BY key", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(s, rc, "meta");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = col_text(&s->arena, st, 0, NULL, &oom);
		const char *v = col_text(&s->arena, st, 1, "", &oom);

		if (oom) {
			err = nomem(s);
			goto cleanup;
		}
		if (!k)
			continue;
		if (ARENA_GROW(&s->arena, s->meta_keys, s->n_meta, kcap, 16) ||
		    ARENA_GROW(&s->arena, s->meta_vals, s->n_meta, vcap, 16)) {
			err = nomem(s);
			goto cleanup;
		}
		s->meta_keys[s->n_meta] = k;
		s->meta_vals[s->n_meta++] = v;
	}
	if (rc != SQLITE_DONE)
		err = sql_fail(s, rc, "meta");
cleanup:
	sqlite3_finalize(st);
	return err;
}

/* Which of cmon's tables the schema has; reading the schema is also where
 * a damaged first page or a foreign file shows. */
static int check_tables(struct cmon_store *s, bool after_meta)
{
	static const char *const tables[] = { "meta", "functions", "calls", "blobs", "processes" };
	bool found[5] = { false };
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(s->db, "SELECT name FROM sqlite_master WHERE type='table'", -1, &st,
				NULL);
	if (rc != SQLITE_OK)
		return sql_fail(s, rc, "the schema");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		for (size_t i = 0; name && i < 5; i++)
			if (!strcmp(name, tables[i]))
				found[i] = true;
	}
	if (rc != SQLITE_DONE) {
		err = sql_fail(s, rc, "the schema");
		goto cleanup;
	}
	if (!found[0]) {
		err = set_err(s, CMON_ERR_NOTSTORE,
			      "%s: not a cmon store (an SQLite database without cmon's tables)",
			      s->path);
		goto cleanup;
	}
	for (size_t i = 1; after_meta && i < 5; i++)
		if (!found[i]) {
			err = set_err(s, CMON_ERR_CORRUPT, "%s: store is corrupted (no %s table)",
				      s->path, tables[i]);
			goto cleanup;
		}
cleanup:
	sqlite3_finalize(st);
	return err;
}

/* What one value (a string or a blob) may take: a record's captures are
 * at most 1 MiB (CMON_CAPTURE_MAX), its rendered arguments less; a hostile
 * store's 800 MB value is refused by SQLite (SQLITE_TOOBIG), not read. */
#define STORE_VALUE_MAX (16 << 20)

/* An object of the schema cmon's writer never makes; NULL when fine. */
static const char *foreign_object(const char *type, const char *name, const char *sql)
{
	static const char *const tables[] = { "meta", "functions", "calls", "blobs", "processes",
					      "sqlite_sequence", "sqlite_stat1" };

	if (!strcmp(type, "table")) {
		for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
			if (!strcmp(name, tables[i]))
				return sql && !strncasecmp(sql, "CREATE VIRTUAL", 14) ? "a virtual table"
										   : NULL;
		return "a table";
	}
	if (!strcmp(type, "index"))
		return NULL; /* its expressions are checked by index_xinfo */
	return !strcmp(type, "view") ? "a view" : !strcmp(type, "trigger") ? "a trigger"
									    : "an object";
}

/* A hostile store would have SQLite compute what a reader asks for
 * (a generated column of printf('%.*c', 800000000, 'x') took 2.3 GB
 * and 16 s, per call shown), or run code a reader does not expect:
 * only what cmon's writer makes is read.  Views, triggers, virtual and
 * other tables, generated or hidden columns, indexes on expressions or
 * partial ones: "not a cmon store". */
static int check_schema(struct cmon_store *s)
{
	sqlite3_stmt *st = NULL, *cols = NULL;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(s->db, "SELECT type, name, sql, tbl_name FROM sqlite_master", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(s, rc, "the schema");
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *sql = (const char *)sqlite3_column_text(st, 2);
		const char *what = foreign_object(type ? type : "", name ? name : "", sql);
		bool is_table;

		if (what) {
			err = set_err(s, CMON_ERR_NOTSTORE,
				      "%s: not a cmon store (%s named '%.64s': cmon's schema has none)",
				      s->path, what, name ? name : "");
			break;
		}
		is_table = !strcmp(type, "table");
		/* hidden: 1 a virtual table's, 2 and 3 generated; index_xinfo's
		 * cid: -2 an expression */
		rc = sqlite3_prepare_v2(s->db,
					is_table ? "SELECT name FROM pragma_table_xinfo(?1)"
						   " WHERE hidden != 0"
						 : "SELECT 'an expression' FROM pragma_index_xinfo(?1)"
						   " WHERE cid = -2 UNION ALL SELECT 'a WHERE clause'"
						   " FROM pragma_index_list(?2) WHERE name = ?1 AND"
						   " partial",
					-1, &cols, NULL);
		if (rc != SQLITE_OK) {
			err = sql_fail(s, rc, "the schema");
			break;
		}
		sqlite3_bind_text(cols, 1, name, -1, SQLITE_STATIC);
		if (!is_table)
			sqlite3_bind_text(cols, 2, (const char *)sqlite3_column_text(st, 3), -1,
					  SQLITE_STATIC);
		rc = sqlite3_step(cols);
		if (rc == SQLITE_ROW && is_table)
			err = set_err(s, CMON_ERR_NOTSTORE,
				      "%s: not a cmon store (generated column %.64s.%.64s: cmon's "
				      "schema has none)", s->path, name,
				      (const char *)sqlite3_column_text(cols, 0));
		else if (rc == SQLITE_ROW)
			err = set_err(s, CMON_ERR_NOTSTORE,
				      "%s: not a cmon store (index '%.64s' on %s: cmon's schema has "
				      "none)", s->path, name, (const char *)sqlite3_column_text(cols, 0));
		else if (rc != SQLITE_DONE)
			err = sql_fail(s, rc, "the schema");
		sqlite3_finalize(cols);
		cols = NULL;
	}
	if (!err && rc != SQLITE_DONE && rc != SQLITE_ROW)
		err = sql_fail(s, rc, "the schema");
	sqlite3_finalize(st);
	return err;
}

static int quick_check(struct cmon_store *s)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(s, rc, "the whole store");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *r = (const char *)sqlite3_column_text(st, 0);

		if (!r || strcmp(r, "ok"))
			err = set_err(s, CMON_ERR_CORRUPT, "%s: store is corrupted (%s)", s->path,
				      r ? r : "quick_check failed");
	} else {
		err = sql_fail(s, rc, "the whole store");
	}
	sqlite3_finalize(st);
	return err;
}

/* The columns build_call reads, in its order: a store written before
 * calls.notes reads it as NULL. */
static const char *call_cols(const struct cmon_store *s)
{
	return s->has_notes
		       ? "SELECT id, n, pid, tid, ts_ns, latency_ns, status, ret, args, rss_entry,"
			 " rss_exit, vms_entry, vms_exit, notes FROM calls "
		       : "SELECT id, n, pid, tid, ts_ns, latency_ns, status, ret, args, rss_entry,"
			 " rss_exit, vms_entry, vms_exit, NULL FROM calls ";
}

static const char *file_type(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a folder" : S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "not a file";
}

/* calls.db and SQLite's side files, when there, must be regular files: an
 * open() of a FIFO waits for a writer forever (ours, or SQLite's of a hot
 * journal or a WAL), a device reads anything. */
static int check_file_types(struct cmon_store *s)
{
	static const char *const sides[] = { "", "-journal", "-wal", "-shm" };

	for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		struct stat st;
		char *p = NULL;
		int err = 0;

		if (asprintf(&p, "%s%s", s->path, sides[i]) < 0)
			return nomem(s);
		if (!stat(p, &st) && !S_ISREG(st.st_mode))
			err = set_err(s, CMON_ERR_NOTSTORE,
				      "%s: not a cmon store (%s is %s, not a regular file)", s->path,
				      p, file_type(st.st_mode));
		free(p);
		if (err)
			return err;
	}
	return 0;
}

static int open_store(struct cmon_store *s, const char *path, unsigned flags)
{
	struct stat st;
	const char *ver;
	int rc, err;

	if (stat(path, &st))
		return set_err(s, errno == ENOENT || errno == ENOTDIR ? CMON_ERR_NOENT : CMON_ERR_IO,
			       "%s: %s", path, strerror(errno));
	/* "./" keeps a relative name from being taken for a file: URI. */
	if (asprintf(&s->path, "%s%s%s", path[0] == '/' ? "" : "./", path,
		     S_ISDIR(st.st_mode) ? "/calls.db" : "") < 0) {
		s->path = NULL;
		return set_err(s, CMON_ERR_NOMEM, "out of memory");
	}
	if (S_ISDIR(st.st_mode) && stat(s->path, &st) && errno == ENOENT)
		return set_err(s, CMON_ERR_NOTSTORE, "%s: not a cmon store (no calls.db in it)", path);
	err = check_file_types(s);
	if (!err)
		err = check_header(s);
	if (err)
		return err;
	rc = sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(s, rc, "the store");
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 2000);
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_limit(s->db, SQLITE_LIMIT_LENGTH, STORE_VALUE_MAX);
	rc = sqlite3_exec(s->db, "PRAGMA cell_size_check=ON; PRAGMA query_only=ON;", NULL, NULL,
			  NULL);
	if (rc != SQLITE_OK)
		return sql_fail(s, rc, "the store");
	err = check_tables(s, false);
	if (!err)
		err = check_schema(s); /* before anything is read */
	if (!err)
		err = load_meta(s);
	if (err)
		return err;
	ver = cmon_store_meta(s, "format_version");
	if (!ver)
		return set_err(s, CMON_ERR_NOTSTORE, "%s: not a cmon store (no format_version)",
			       s->path);
	if (strcmp(ver, "1"))
		return set_err(s, CMON_ERR_VERSION,
			       "%s: store format version '%.32s'; this libcmon reads version %d",
			       s->path, ver, CMON_STORE_FORMAT);
	err = check_tables(s, true);
	if (!err && (flags & CMON_OPEN_CHECK))
		err = quick_check(s);
	if (err)
		return err;
	{
		char sql[512];

		sqlite3_stmt *probe = NULL;

		s->has_notes = sqlite3_prepare_v2(s->db, "SELECT notes FROM calls LIMIT 0", -1,
						  &probe, NULL) == SQLITE_OK;
		sqlite3_finalize(probe);
		snprintf(sql, sizeof(sql), "%s WHERE func_id = ?1 AND n = ?2", call_cols(s));
		rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->st_call, NULL);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v3(s->db,
					"SELECT name, dtype, shape, truncated, data FROM blobs"
					" WHERE call_id = ?1 ORDER BY rowid",
					-1, SQLITE_PREPARE_PERSISTENT, &s->st_blobs, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(s, rc, "the schema");
	return 0;
}

int cmon_store_open_ex(const char *path, unsigned flags, struct cmon_store **out, char *errbuf,
		       size_t errlen)
{
	struct cmon_store *s;
	int err;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!out)
		return CMON_ERR_INVAL;
	*out = NULL;
	if (!path || !*path) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "no store path given");
		return CMON_ERR_INVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: out of memory", path);
		return CMON_ERR_NOMEM;
	}
	err = open_store(s, path, flags);
	if (err) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s", s->err);
		cmon_store_close(s);
		return err;
	}
	*out = s;
	return 0;
}

int cmon_store_open(const char *path, struct cmon_store **out)
{
	return cmon_store_open_ex(path, 0, out, NULL, 0);
}

void cmon_store_close(struct cmon_store *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->st_blobs);
	sqlite3_finalize(s->st_call);
	sqlite3_close_v2(s->db);
	arena__free(s->arena);
	free(s->funcs);
	free(s->func_list);
	free(s->procs);
	free(s->path);
	free(s);
}

const char *cmon_store_error(const struct cmon_store *s)
{
	return s ? s->err : "";
}

const char *cmon_store_path(const struct cmon_store *s)
{
	return s ? s->path : NULL;
}

int cmon_store_has_notes(const struct cmon_store *s)
{
	return s && s->has_notes;
}

const char *cmon_store_meta(const struct cmon_store *s, const char *key)
{
	if (!s || !key)
		return NULL;
	for (size_t i = 0; i < s->n_meta; i++)
		if (!strcmp(s->meta_keys[i], key))
			return s->meta_vals[i];
	return NULL;
}

size_t cmon_store_meta_count(const struct cmon_store *s)
{
	return s ? s->n_meta : 0;
}

int cmon_store_meta_at(const struct cmon_store *s, size_t i, const char **key,
		       const char **value)
{
	if (!s || i >= s->n_meta)
		return CMON_ERR_INVAL;
	if (key)
		*key = s->meta_keys[i];
	if (value)
		*value = s->meta_vals[i];
	return 0;
}

/* ------------------------------------------------------------ functions */

static const char *json_str(struct arena **a, json_t *obj, const char *key, bool *oom)
{
	json_t *v = json_object_get(obj, key);
	const char *s;
	char *copy;

	if (!json_is_string(v))
		return "";
	s = json_string_value(v);
	copy = arena__strndup(a, s, strlen(s));
	if (!copy)
		*oom = true;
	return copy ? copy : "";
}

/* Fill F's params and ret type from its signature JSON.  A signature that
 * does not parse gives no params: the calls stay readable. */
static int parse_signature(struct cmon_store *s, struct cmon_function *f)
{
	json_t *root, *params;
	struct cmon_param *ps;
	struct cmon_capture_info *cs;
	bool oom = false;
	size_t n;

	f->ret_type = "";
	if (!*f->signature)
		return 0;
	root = json_loads(f->signature, JSON_REJECT_DUPLICATES, NULL);
	if (!root)
		return 0;
	params = json_is_array(root) ? root : json_object_get(root, "params");
	if (json_is_object(root))
		f->ret_type = json_str(&s->arena, root, "ret", &oom);
	n = json_is_array(params) ? json_array_size(params) : 0;
	ps = n ? arena__zalloc(&s->arena, n * sizeof(*ps)) : NULL;
	if (n && !ps)
		oom = true;
	for (size_t i = 0; ps && i < n; i++) {
		json_t *p = json_array_get(params, i);

		if (!json_is_object(p) || !json_is_string(json_object_get(p, "name")))
			continue;
		ps[f->n_params].name = json_str(&s->arena, p, "name", &oom);
		ps[f->n_params].type = json_str(&s->arena, p, "type", &oom);
		ps[f->n_params].kind = json_str(&s->arena, p, "kind", &oom);
		f->n_params++;
	}
	f->params = ps;
	params = json_object_get(root, "captures");
	n = json_is_array(params) ? json_array_size(params) : 0;
	cs = n ? arena__zalloc(&s->arena, n * sizeof(*cs)) : NULL;
	if (n && !cs)
		oom = true;
	for (size_t i = 0; cs && i < n; i++) {
		json_t *c = json_array_get(params, i);

		if (!json_is_object(c) || !json_is_string(json_object_get(c, "name")))
			continue;
		cs[f->n_captures].name = json_str(&s->arena, c, "name", &oom);
		cs[f->n_captures].kind = json_str(&s->arena, c, "kind", &oom);
		f->n_captures++;
	}
	f->captures = cs;
	json_decref(root);
	return oom ? nomem(s) : 0;
}

static int load_functions(struct cmon_store *s)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	bool oom = false;
	int rc, err = 0;

	if (s->funcs_loaded)
		return 0;
	/* max(n) through the (func_id, n) index: no scan of the calls. */
	rc = sqlite3_prepare_v2(s->db,
				"SELECT f.id, f.name, f.module, f.signature, f.typed,"
				" (SELECT max(n) FROM calls c WHERE c.func_id = f.id)"
				" FROM functions f ORDER BY f.id",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(s, rc, "functions");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct func_entry *e;
		int64_t max_n;

		if (GROW(s->funcs, s->n_funcs, cap, 32)) {
			err = nomem(s);
			goto cleanup;
		}
		e = &s->funcs[s->n_funcs];
		memset(e, 0, sizeof(*e));
		e->id = sqlite3_column_int64(st, 0);
		e->pub.name = col_text(&s->arena, st, 1, "", &oom);
		e->pub.module = col_text(&s->arena, st, 2, "", &oom);
		e->pub.signature = col_text(&s->arena, st, 3, "", &oom);
		e->pub.typed = sqlite3_column_int(st, 4) ? 1 : 0;
		max_n = sqlite3_column_int64(st, 5);
		e->pub.calls = max_n > 0 ? (uint64_t)max_n : 0;
		if (oom) {
			err = nomem(s);
			goto cleanup;
		}
		err = parse_signature(s, &e->pub);
		if (err)
			goto cleanup;
		s->n_funcs++;
	}
	if (rc != SQLITE_DONE) {
		err = sql_fail(s, rc, "functions");
		goto cleanup;
	}
	s->func_list = calloc(s->n_funcs ? s->n_funcs : 1, sizeof(*s->func_list));
	if (!s->func_list) {
		err = nomem(s);
		goto cleanup;
	}
	for (size_t i = 0; i < s->n_funcs; i++)
		s->func_list[i] = s->funcs[i].pub;
	s->funcs_loaded = true;
cleanup:
	if (err)
		s->n_funcs = 0;
	sqlite3_finalize(st);
	return err;
}

int cmon_store_functions(struct cmon_store *s, const struct cmon_function **list, size_t *n)
{
	int err;

	if (!s || !list || !n)
		return CMON_ERR_INVAL;
	err = load_functions(s);
	if (err)
		return err;
	*list = s->func_list;
	*n = s->n_funcs;
	return 0;
}

static int find_function(struct cmon_store *s, const char *name, const struct func_entry **out)
{
	const struct func_entry *hit = NULL;
	size_t hits = 0, len;
	int err;

	if (!s || !name || !out)
		return CMON_ERR_INVAL;
	err = load_functions(s);
	if (err)
		return err;
	for (size_t i = 0; i < s->n_funcs; i++)
		if (!strcmp(s->funcs[i].pub.name, name)) {
			hit = hit ? hit : &s->funcs[i];
			hits++;
		}
	if (hits > 1)
		return set_err(s, CMON_ERR_AMBIGUOUS,
			       "function '%s' is in %zu modules: name it as MODULE:%s (see cmon ls)",
			       name, hits, name);
	/* MODULE:NAME, split at a single ':' (C++ names hold "::"). */
	len = strlen(name);
	for (size_t c = 0; !hits && c < len; c++) {
		if (name[c] != ':' || (c + 1 < len && name[c + 1] == ':') ||
		    (c > 0 && name[c - 1] == ':'))
			continue;
		for (size_t i = 0; i < s->n_funcs; i++) {
			const struct cmon_function *f = &s->funcs[i].pub;

			if (strlen(f->module) == c && !strncmp(f->module, name, c) &&
			    !strcmp(f->name, name + c + 1)) {
				hit = &s->funcs[i];
				hits++;
				break;
			}
		}
	}
	if (!hits)
		return set_err(s, CMON_ERR_NOFUNC, "no function '%s' in %s (see cmon ls)", name,
			       s->path);
	*out = hit;
	return 0;
}

int cmon_store_function(struct cmon_store *s, const char *name, const struct cmon_function **f)
{
	const struct func_entry *e;
	int err;

	if (!f)
		return CMON_ERR_INVAL;
	err = find_function(s, name, &e);
	if (err)
		return err;
	*f = &s->func_list[e - s->funcs];
	return 0;
}

/* ------------------------------------------------------------ processes */

static int load_processes(struct cmon_store *s)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	bool oom = false;
	int rc, err = 0;

	if (s->procs_loaded)
		return 0;
	rc = sqlite3_prepare_v2(s->db, "SELECT pid, comm, first_ts, last_ts, calls, cgroup"
				" FROM processes ORDER BY pid", -1, &st, NULL);
	if (rc == SQLITE_ERROR) /* a store from before the cgroup column */
		rc = sqlite3_prepare_v2(s->db, "SELECT pid, comm, first_ts, last_ts, calls, NULL"
					" FROM processes ORDER BY pid", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sql_fail(s, rc, "processes");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cmon_process *p;

		if (GROW(s->procs, s->n_procs, cap, 16)) {
			err = nomem(s);
			goto cleanup;
		}
		p = &s->procs[s->n_procs];
		p->pid = (uint32_t)sqlite3_column_int64(st, 0);
		p->comm = col_text(&s->arena, st, 1, "", &oom);
		p->first_ts_ns = (uint64_t)sqlite3_column_int64(st, 2);
		p->last_ts_ns = (uint64_t)sqlite3_column_int64(st, 3);
		p->calls = (uint64_t)sqlite3_column_int64(st, 4);
		p->cgroup = col_text(&s->arena, st, 5, NULL, &oom);
		if (oom) {
			err = nomem(s);
			goto cleanup;
		}
		s->n_procs++;
	}
	if (rc != SQLITE_DONE) {
		err = sql_fail(s, rc, "processes");
		goto cleanup;
	}
	s->procs_loaded = true;
cleanup:
	if (err)
		s->n_procs = 0;
	sqlite3_finalize(st);
	return err;
}

int cmon_store_processes(struct cmon_store *s, const struct cmon_process **list, size_t *n)
{
	int err;

	if (!s || !list || !n)
		return CMON_ERR_INVAL;
	err = load_processes(s);
	if (err)
		return err;
	*list = s->procs;
	*n = s->n_procs;
	return 0;
}

static const char *comm_of(struct cmon_store *s, uint32_t pid)
{
	/* Sorted by pid in SQL, but a damaged store may not be: linear. */
	for (size_t i = 0; i < s->n_procs; i++)
		if (s->procs[i].pid == pid)
			return s->procs[i].comm;
	return "";
}

/* ---------------------------------------------------------------- calls */

/* "[d0, d1, ...]" of non-negative integers; at most 32 dims. */
static int parse_shape(struct arena **a, const char *s, size_t n, struct cmon_blob *b)
{
	const char *p = s, *e = s + n;
	uint64_t dims[32];
	unsigned nd = 0;

	p = jscan__ws(p, e);
	if (p >= e || *p != '[')
		return -1;
	p = jscan__ws(p + 1, e);
	if (p < e && *p == ']') {
		p++;
	} else {
		for (;;) {
			uint64_t v = 0;

			if (p >= e || !is_digit(*p) || nd == 32)
				return -1;
			while (p < e && is_digit(*p)) {
				if (v > (UINT64_MAX - 9) / 10)
					return -1;
				v = v * 10 + (uint64_t)(*p++ - '0');
			}
			dims[nd++] = v;
			p = jscan__ws(p, e);
			if (p < e && *p == ']') {
				p++;
				break;
			}
			if (p >= e || *p != ',')
				return -1;
			p = jscan__ws(p + 1, e);
		}
	}
	if (jscan__ws(p, e) != e)
		return -1;
	b->ndim = nd;
	if (nd) {
		uint64_t *sh = arena__alloc(a, nd * sizeof(*sh));

		if (!sh)
			return -2;
		memcpy(sh, dims, nd * sizeof(*sh));
		b->shape = sh;
	}
	return 0;
}

/* A blob's shape must describe its data: a client indexes DATA by SHAPE.
 * Elements (the product of the dims, overflow-checked) times the dtype's
 * element size is exactly LEN, for a cut capture too (stored with the shape
 * of what was kept), and the data is an SQLite blob. */
static int check_blob(struct cmon_store *s, const struct cmon_blob *b, bool is_blob, size_t len,
		      const char *shape, const char *what)
{
	size_t esize = cmon_dtype_size(b->dtype);
	uint64_t bytes = esize;
	bool zero = false, over = false;

	if (!is_blob)
		return set_err(s, CMON_ERR_CORRUPT,
			       "%s: store is corrupted (%s: buffer '%s' holds no blob)", s->path,
			       what, b->name);
	if (!esize)
		return set_err(s, CMON_ERR_CORRUPT,
			       "%s: store is corrupted (%s: buffer '%s' has dtype '%.32s')", s->path,
			       what, b->name, b->dtype);
	for (unsigned i = 0; i < b->ndim; i++) {
		if (!b->shape[i])
			zero = true;
		else if (bytes > SIZE_MAX / b->shape[i])
			over = true;
		else
			bytes *= b->shape[i];
	}
	if (zero)
		bytes = 0;
	if (over && !zero)
		return set_err(s, CMON_ERR_CORRUPT,
			       "%s: store is corrupted (%s: buffer '%s' has shape '%.64s' of %s:"
			       " too large)",
			       s->path, what, b->name, shape, b->dtype);
	if (bytes != len)
		return set_err(s, CMON_ERR_CORRUPT,
			       "%s: store is corrupted (%s: buffer '%s' has shape '%.64s' of %s,"
			       " %llu bytes, but holds %zu)",
			       s->path, what, b->name, shape, b->dtype, (unsigned long long)bytes,
			       len);
	return 0;
}

static int load_blobs(struct cmon_store *s, struct arena **a, struct cmon_call *c, int64_t call_id,
		      const char *what)
{
	sqlite3_stmt *st = s->st_blobs;
	struct cmon_blob *bl = NULL;
	size_t n = 0, cap = 0;
	bool oom = false;
	int rc, err = 0;

	sqlite3_bind_int64(st, 1, call_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cmon_blob *b;
		const char *shape;
		const void *data;
		bool is_blob;
		int len, r;

		if (ARENA_GROW(a, bl, n, cap, 4)) {
			err = nomem(s);
			goto cleanup;
		}
		b = &bl[n];
		memset(b, 0, sizeof(*b));
		b->name = col_text(a, st, 0, "", &oom);
		b->dtype = col_text(a, st, 1, "", &oom);
		shape = col_text(a, st, 2, "", &oom);
		b->truncated = sqlite3_column_int(st, 3) ? 1 : 0;
		is_blob = sqlite3_column_type(st, 4) == SQLITE_BLOB;
		data = sqlite3_column_blob(st, 4);
		len = sqlite3_column_bytes(st, 4);
		if (oom || (len > 0 && !data)) {
			err = nomem(s);
			goto cleanup;
		}
		r = parse_shape(a, shape, strlen(shape), b);
		if (r == -2) {
			err = nomem(s);
			goto cleanup;
		}
		if (r) {
			err = set_err(s, CMON_ERR_CORRUPT,
				      "%s: store is corrupted (%s: buffer '%s' has shape '%.64s')",
				      s->path, what, b->name, shape);
			goto cleanup;
		}
		err = check_blob(s, b, is_blob, (size_t)len, shape, what);
		if (err)
			goto cleanup;
		if (len > 0) {
			void *copy = arena__alloc(a, (size_t)len);

			if (!copy) {
				err = nomem(s);
				goto cleanup;
			}
			memcpy(copy, data, (size_t)len);
			b->data = copy;
			b->len = (size_t)len;
		} else {
			b->data = "";
		}
		n++;
	}
	if (rc != SQLITE_DONE)
		err = sql_fail(s, rc, what);
cleanup:
	sqlite3_reset(st);
	c->blobs = bl;
	c->n_blobs = err ? 0 : n;
	return err;
}

/* Arguments: the signature's parameters in order, then whatever else the
 * call's object holds. */
static int build_args(struct cmon_store *s, struct arena **a, struct cmon_call *c,
		      const struct cmon_function *f, const char *what)
{
	const char *args = c->args_json, *e = args + strlen(args);
	struct jscan_member *m = NULL;
	struct cmon_arg *out;
	long nm = jscan__members(a, args, e, &m);
	size_t k = 0;

	if (nm == -2)
		return nomem(s);
	if (nm < 0)
		return set_err(s, CMON_ERR_CORRUPT,
			       "%s: store is corrupted (%s: arguments are not a JSON object)", s->path,
			       what);
	out = arena__zalloc(a, (f->n_params + (size_t)nm + 1) * sizeof(*out));
	if (!out)
		return nomem(s);
	for (size_t i = 0; i < f->n_params; i++) {
		const struct cmon_param *p = &f->params[i];

		out[k].name = p->name;
		out[k].type = p->type;
		out[k].kind = p->kind;
		for (long j = 0; j < nm; j++)
			if (!m[j].used && !strcmp(m[j].key, p->name)) {
				m[j].used = true;
				out[k].value = arena__strndup(a, m[j].v, (size_t)(m[j].ve - m[j].v));
				if (!out[k].value)
					return nomem(s);
				break;
			}
		k++;
	}
	for (long j = 0; j < nm; j++) {
		if (m[j].used)
			continue;
		out[k].name = m[j].key;
		out[k].type = "";
		out[k].kind = "";
		out[k].value = arena__strndup(a, m[j].v, (size_t)(m[j].ve - m[j].v));
		if (!out[k].value)
			return nomem(s);
		k++;
	}
	c->args = out;
	c->n_args = k;
	return 0;
}

/* The call in the current row of ST (CALL_COLS), into a new cmon_call. */
static int build_call(struct cmon_store *s, const struct func_entry *fe, sqlite3_stmt *st,
		      struct cmon_call **out)
{
	const struct cmon_function *f = &fe->pub;
	struct arena *a = NULL;
	struct cmon_call *c;
	char what[160];
	bool oom = false;
	int64_t id;
	int err;

	c = arena__zalloc(&a, sizeof(*c));
	if (!c)
		return nomem(s);
	c->internal_ = NULL;
	id = sqlite3_column_int64(st, 0);
	c->func = f->name;
	c->module = f->module;
	c->ret_type = f->ret_type;
	c->n = (uint64_t)sqlite3_column_int64(st, 1);
	c->pid = (uint32_t)sqlite3_column_int64(st, 2);
	c->tid = (uint32_t)sqlite3_column_int64(st, 3);
	c->ts_ns = (uint64_t)sqlite3_column_int64(st, 4);
	c->latency_ns = col_u64(st, 5);
	c->status = col_text(&a, st, 6, "", &oom);
	c->ret = col_text(&a, st, 7, NULL, &oom);
	c->args_json = col_text(&a, st, 8, "{}", &oom);
	c->rss_entry = col_u64(st, 9);
	c->rss_exit = col_u64(st, 10);
	c->vms_entry = col_u64(st, 11);
	c->vms_exit = col_u64(st, 12);
	c->notes_json = col_text(&a, st, 13, NULL, &oom);
	snprintf(what, sizeof(what), "call %llu of %.100s", (unsigned long long)c->n, f->name);
	if (oom) {
		err = nomem(s);
		goto cleanup;
	}
	if (c->notes_json && !jscan__valid(c->notes_json, strlen(c->notes_json))) {
		err = set_err(s, CMON_ERR_CORRUPT,
			      "%s: store is corrupted (%s: notes are not JSON)", s->path, what);
		goto cleanup;
	}
	if (c->ret && !jscan__valid(c->ret, strlen(c->ret))) {
		err = set_err(s, CMON_ERR_CORRUPT,
			      "%s: store is corrupted (%s: return value is not JSON)", s->path, what);
		goto cleanup;
	}
	err = build_args(s, &a, c, f, what);
	if (!err)
		err = load_blobs(s, &a, c, id, what);
	if (!err)
		err = load_processes(s);
	if (err)
		goto cleanup;
	c->comm = comm_of(s, c->pid);
	c->internal_ = a;
	*out = c;
	return 0;
cleanup:
	arena__free(a);
	return err;
}

int cmon_store_call(struct cmon_store *s, const char *func, uint64_t n, struct cmon_call **out)
{
	const struct func_entry *fe;
	sqlite3_stmt *st;
	char what[160];
	int rc, err;

	if (!s || !func || !out)
		return CMON_ERR_INVAL;
	*out = NULL;
	err = find_function(s, func, &fe);
	if (err)
		return err;
	/* Numbers count from 1: 0 is a bad argument (as for cmon_store_calls),
	 * not a call out of range. */
	if (n == 0)
		return set_err(s, CMON_ERR_INVAL, "call numbers count from 1: no call 0 of %s",
			       fe->pub.name);
	if (n > fe->pub.calls)
		return set_err(s, CMON_ERR_NOCALL, "%s has %llu call%s: no call %llu", fe->pub.name,
			       (unsigned long long)fe->pub.calls, fe->pub.calls == 1 ? "" : "s",
			       (unsigned long long)n);
	st = s->st_call;
	sqlite3_bind_int64(st, 1, fe->id);
	sqlite3_bind_int64(st, 2, (int64_t)n);
	snprintf(what, sizeof(what), "call %llu of %.100s", (unsigned long long)n, fe->pub.name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		err = build_call(s, fe, st, out);
	else if (rc == SQLITE_DONE)
		/* Numbers run 1..calls without gaps: a hole is damage. */
		err = set_err(s, CMON_ERR_CORRUPT, "%s: store is corrupted (%s is missing)", s->path,
			      what);
	else
		err = sql_fail(s, rc, what);
	sqlite3_reset(st);
	return err;
}

void cmon_call_free(struct cmon_call *c)
{
	if (c)
		arena__free(c->internal_);
}

int cmon_call_blob(const struct cmon_call *c, const char *name, const struct cmon_blob **out)
{
	if (!c || !name || !out)
		return CMON_ERR_INVAL;
	for (size_t i = 0; i < c->n_blobs; i++)
		if (!strcmp(c->blobs[i].name, name)) {
			*out = &c->blobs[i];
			return 0;
		}
	return CMON_ERR_NOBLOB;
}

const struct cmon_arg *cmon_call_arg(const struct cmon_call *c, const char *name)
{
	if (!c || !name)
		return NULL;
	for (size_t i = 0; i < c->n_args; i++)
		if (!strcmp(c->args[i].name, name))
			return &c->args[i];
	return NULL;
}

int cmon_store_calls(struct cmon_store *s, const char *func, uint64_t first,
		     struct cmon_iter **out)
{
	const struct func_entry *fe;
	struct cmon_iter *it;
	char sql[512];
	int rc, err;

	if (!s || !func || !out)
		return CMON_ERR_INVAL;
	if (first < 1) {
		*out = NULL;
		return set_err(s, CMON_ERR_INVAL, "call numbers count from 1: no call 0 of %s",
			       func);
	}
	*out = NULL;
	err = find_function(s, func, &fe);
	if (err)
		return err;
	it = calloc(1, sizeof(*it));
	if (!it)
		return nomem(s);
	it->s = s;
	it->f = fe;
	it->next = first;
	snprintf(sql, sizeof(sql), "%s WHERE func_id = ?1 AND n >= ?2 ORDER BY n", call_cols(s));
	rc = sqlite3_prepare_v2(s->db, sql, -1, &it->st, NULL);
	if (rc != SQLITE_OK) {
		free(it);
		return sql_fail(s, rc, "calls");
	}
	sqlite3_bind_int64(it->st, 1, fe->id);
	sqlite3_bind_int64(it->st, 2, first > INT64_MAX ? INT64_MAX : (int64_t)first);
	*out = it;
	return 0;
}

int cmon_iter_next(struct cmon_iter *it, struct cmon_call **out)
{
	char what[160];
	int rc, err;

	if (!it || !out)
		return CMON_ERR_INVAL;
	*out = NULL;
	if (it->done)
		return 0;
	rc = sqlite3_step(it->st);
	snprintf(what, sizeof(what), "calls of %.100s", it->f->pub.name);
	if (rc == SQLITE_DONE) {
		it->done = true;
		/* Numbers run 1..calls without gaps (as cmon_store_call reads
		 * them): a hole, a repeat or a call moved away is damage, not a
		 * shorter or merged list. */
		if (it->next <= it->f->pub.calls)
			return set_err(it->s, CMON_ERR_CORRUPT,
				       "%s: store is corrupted (%s: call %llu is missing)", it->s->path,
				       what, (unsigned long long)it->next);
		return 0;
	}
	if (rc != SQLITE_ROW) {
		it->done = true;
		return sql_fail(it->s, rc, what);
	}
	{
		sqlite3_int64 n = sqlite3_column_int64(it->st, 1);

		if (sqlite3_column_type(it->st, 1) != SQLITE_INTEGER || n < 1 ||
		    (uint64_t)n != it->next) {
			it->done = true;
			if (sqlite3_column_type(it->st, 1) != SQLITE_INTEGER || n < 1)
				return set_err(it->s, CMON_ERR_CORRUPT,
					       "%s: store is corrupted (%s: a call numbered '%.32s')",
					       it->s->path, what,
					       (const char *)sqlite3_column_text(it->st, 1) ?: "");
			if ((uint64_t)n > it->next)
				return set_err(it->s, CMON_ERR_CORRUPT,
					       "%s: store is corrupted (%s: call %llu is missing)",
					       it->s->path, what, (unsigned long long)it->next);
			return set_err(it->s, CMON_ERR_CORRUPT,
				       "%s: store is corrupted (%s: call %llu comes again after"
				       " call %llu)",
				       it->s->path, what, (unsigned long long)n,
				       (unsigned long long)(it->next - 1));
		}
		it->next++;
	}
	err = build_call(it->s, it->f, it->st, out);
	if (err) {
		it->done = true;
		return err;
	}
	return 1;
}

void cmon_iter_free(struct cmon_iter *it)
{
	if (!it)
		return;
	sqlite3_finalize(it->st);
	free(it);
}

/* --------------------------------------------------------------- dtypes */

/* Kind, byte order and element size of DTYPE; false if not a dtype string
 * libcmon knows. */
static bool dtype_parse(const char *dtype, char *kind, size_t *size)
{
	const char *p = dtype;
	size_t n = 0;

	if (!p)
		return false;
	if (*p == '<' || *p == '>' || *p == '|' || *p == '=')
		p++;
	if (!*p || !strchr("biufcSUV", *p))
		return false;
	*kind = *p++;
	if (!is_digit(*p))
		return false;
	while (is_digit(*p)) {
		n = n * 10 + (size_t)(*p++ - '0');
		if (n > (1u << 24))
			return false;
	}
	if (*p || !n)
		return false;
	*size = *kind == 'U' ? n * 4 : n;
	return true;
}

size_t cmon_dtype_size(const char *dtype)
{
	char kind;
	size_t size;

	return dtype_parse(dtype, &kind, &size) ? size : 0;
}

int cmon_dtype_numeric(const char *dtype)
{
	char kind;
	size_t size;

	if (!dtype_parse(dtype, &kind, &size))
		return 0;
	switch (kind) {
	case 'b':
		return size == 1;
	case 'i':
	case 'u':
		return size == 1 || size == 2 || size == 4 || size == 8;
	case 'f':
		return size == 2 || size == 4 || size == 8 || size == 16;
	case 'c':
		return size == 8 || size == 16 || size == 32;
	default:
		return 0;
	}
}
