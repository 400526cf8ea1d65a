/*
 * store_writer.h: fill a capture store (what `cmon capture` writes and
 * libcmon, include/cmon/cmon.h, reads).
 *
 * A store is a folder (0700) holding calls.db (0600), an SQLite database,
 * format version 1:
 *
 *   meta(key TEXT PRIMARY KEY, value TEXT)
 *       format_version, cmon_version, command_line, target_path, build_id,
 *       start_time_ns, end_time_ns (written by close: absent after a crash),
 *       last_commit_ns, hostname, files (store_writer__add_file), and
 *       whatever store_writer__set_meta adds
 *   functions(id INTEGER PRIMARY KEY, name, module, signature, typed)
 *   calls(id INTEGER PRIMARY KEY, func_id, n, pid, tid, ts_ns, latency_ns,
 *         status, ret, args, rss_entry, rss_exit, vms_entry, vms_exit)
 *       UNIQUE INDEX on (func_id, n); n counts from 1 per function
 *   blobs(call_id, name, dtype, shape, truncated, data)   INDEX on call_id
 *   processes(pid INTEGER PRIMARY KEY, comm, first_ts, last_ts, calls)
 *
 * Unknown values (latency of a call that did not return, ...) are NULL.
 *
 * Durability: calls are added inside a transaction that is committed at
 * least once a second (store_writer__maybe_commit, and a clock check every
 * few hundred calls) and at close; the journal is a WAL with
 * synchronous=NORMAL, so a SIGKILL of the writer loses at most the calls of
 * the last second, and the store still opens.  close() checkpoints and
 * returns the database to a single self-contained file.
 *
 * One writer is used by one thread at a time.  After an SQLite error (disk
 * full, I/O error) the writer is failed: every later call returns that
 * error; close still tries to keep what was committed.
 */
#ifndef CMON_STORE_WRITER_H
#define CMON_STORE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A value the call does not have (latency of a noreturn call, ...). */
#define STORE_NONE UINT64_MAX

/* What is needed to trust the store later.  NULL strings are not recorded
 * (cmon_version defaults to this build's, hostname to gethostname()). */
struct store_meta {
	const char *cmon_version;
	const char *command_line;  /* cmon's own command line, as one string */
	const char *target_path;   /* the traced executable */
	const char *build_id;      /* its GNU build-id, hex */
	const char *hostname;
	uint64_t start_time_ns;    /* CLOCK_REALTIME ns; 0: now */
};

/* One captured buffer of a call. */
struct store_blob {
	const char *name;       /* the argument or capture it belongs to */
	const char *dtype;      /* numpy dtype string: "|u1", "<i4", "<f8", "|S1"... */
	unsigned ndim;          /* <= STORE_MAX_NDIM */
	const uint64_t *shape;  /* ndim dims, C order, of DATA: what was kept (a cut
				 * capture's, not the whole array's); their product
				 * times the dtype's size is LEN, or libcmon reads
				 * the blob as corrupted */
	bool truncated;         /* the capture was cut: the array was longer */
	const void *data;
	size_t len;
};

#define STORE_MAX_NDIM 32

struct store_call {
	int64_t func_id;         /* from store_writer__add_function */
	uint32_t pid, tid;
	const char *comm;        /* process name; NULL: unknown */
	uint64_t ts_ns;          /* CLOCK_REALTIME of the entry */
	uint64_t latency_ns;     /* STORE_NONE: unknown */
	const char *status;      /* "ok", "noreturn", "entry", "tailcall" */
	const char *ret_json;    /* JSON value; NULL: none */
	const char *args_json;   /* JSON object {"name": value, ...}; NULL: {} */
	uint64_t rss_entry, rss_exit, vms_entry, vms_exit; /* bytes; STORE_NONE: unknown */
	const struct store_blob *blobs;
	size_t n_blobs;
	/* What the values do not say: {"truncated":[paths],"faults":[paths]}
	 * (a string cut at --strlen, a pointer that could not be read, as
	 * trace's records say); NULL: nothing. */
	const char *notes_json;
	const char *cgroup;      /* --cgroup: the process's cgroup v2 path; NULL: none */
};

struct store_writer;

/*
 * Create a new store at OUTDIR, or at OUTDIR-1, OUTDIR-2, ... when OUTDIR
 * exists (never overwritten; a symlink there is never followed); the path
 * used is store_writer__path().  Returns 0 or a negative errno; on failure
 * *OUT is NULL and nothing is left behind but possibly an empty folder.
 */
int store_writer__create(const char *outdir, const struct store_meta *meta,
			 struct store_writer **out);

/* The folder actually created (OUTDIR or OUTDIR-N). */
const char *store_writer__path(const struct store_writer *w);

/* Last SQLite error message ("" if none), for diagnostics. */
const char *store_writer__errmsg(const struct store_writer *w);

/* Record (or replace) a meta key.  0 or -errno. */
int store_writer__set_meta(struct store_writer *w, const char *key, const char *value);

/* Record a file the traced functions live in, with its GNU build-id (hex;
 * NULL: none): meta key "files", a JSON array of {"path", "build_id"}.
 * 0 or -errno. */
int store_writer__add_file(struct store_writer *w, const char *path, const char *build_id);

/*
 * Declare a traced function; returns its id (> 0) or a negative errno.
 * SIGNATURE_JSON describes its parameters, in order, and its return type:
 *   {"params": [{"name": "buf", "type": "const char *", "kind": "string"}, ...],
 *    "ret": "int", "captures": [{"name": "sql", "kind": "str"}, ...]}
 * (a bare array of params is accepted too; "kind" is a free-form hint such
 * as "int", "uint", "float", "pointer", "string", "buffer", "raw"; a
 * capture's kind is "str", "bytes" or "array": each call holds it as the
 * blob of that name).  TYPED says the arguments come from DWARF rather
 * than raw registers.
 */
int64_t store_writer__add_function(struct store_writer *w, const char *name, const char *module,
				   const char *signature_json, bool typed);

/* Add one call; returns its call number n (1, 2, ... per function) or a
 * negative errno.  Nothing of C is kept after the return. */
int64_t store_writer__add_call(struct store_writer *w, const struct store_call *c);

/* Commit now.  0 or -errno. */
int store_writer__commit(struct store_writer *w);

/* Commit if a second or more passed since the last commit.  NOW_NS is
 * CLOCK_MONOTONIC ns (0: read the clock).  0 or -errno.  Call it on every
 * poll of the ring-buffer consumer, idle ones included: add_call commits by
 * itself only while calls keep coming, so the last calls before a quiet
 * spell wait for this to become durable. */
int store_writer__maybe_commit(struct store_writer *w, uint64_t now_ns);

/* Calls added so far (committed or not). */
uint64_t store_writer__calls(const struct store_writer *w);
/* The calls in the store as of its last commit (what a crash would keep). */
uint64_t store_writer__committed(const struct store_writer *w);

/* Record end_time_ns (CLOCK_REALTIME; 0: now) and commit the last batch;
 * W stays open, so that store_writer__errmsg() can say why it failed.
 * Nothing is added after it.  0 or the first error seen. */
int store_writer__end(struct store_writer *w, uint64_t end_time_ns);

/* store_writer__end() if not done yet, then close and free W (NULL
 * fine).  0 or the first error seen. */
int store_writer__close(struct store_writer *w, uint64_t end_time_ns);

#endif
