/*
 * cmon/cmon.h: libcmon, read a cmon capture store.
 *
 * `cmon capture ... -o run/` records every traced call's inputs in a store:
 * the folder run/ (or run-1/, run-2/, ...) holding calls.db.  libcmon opens
 * it read-only and gives back, by function name and call number (from 1),
 * each call's arguments by name with their types and values, its return
 * value, timing, memory, and the buffers captured with it.
 *
 *     struct cmon_store *s;
 *     struct cmon_call *c;
 *     char msg[256];
 *
 *     if (cmon_store_open_ex("run", 0, &s, msg, sizeof(msg)))
 *             errx(1, "%s", msg);
 *     if (cmon_store_call(s, "parse_request", 3, &c))
 *             errx(1, "%s", cmon_store_error(s));
 *     for (size_t i = 0; i < c->n_args; i++)
 *             printf("%s (%s) = %s\n", c->args[i].name, c->args[i].type,
 *                    c->args[i].value);
 *     cmon_call_free(c);
 *     cmon_store_close(s);
 *
 * Link with -lcmon -lsqlite3 -ljansson.
 *
 * Values are JSON text exactly as captured (integers keep all 64 bits).
 * Strings returned by the library are NUL-terminated and belong to the
 * object they came from: the store (meta, functions, processes) until
 * cmon_store_close, a call until cmon_call_free.  Structs are allocated by
 * the library only; their fields are read-only.  A store handle, and the
 * calls and iterators it gave, are for one thread at a time; open one
 * handle per thread.
 *
 * Errors: functions return 0 (CMON_OK) or a negative enum cmon_err; a
 * truncated, corrupted or foreign file gives CMON_ERR_CORRUPT or
 * CMON_ERR_NOTSTORE, never a crash.  cmon_strerror() names a code;
 * cmon_store_error() gives the message of the last failure on a store,
 * naming what was being read.
 */
#ifndef CMON_CMON_H
#define CMON_CMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The store format version this library reads (meta key format_version). */
#define CMON_STORE_FORMAT 1

/* A number the call does not have (latency of a call that never returned,
 * exit memory of an entry-only call). */
#define CMON_NONE UINT64_MAX

enum cmon_err {
	CMON_OK = 0,
	CMON_ERR_INVAL = -1,      /* bad argument (NULL, call number 0, ...) */
	CMON_ERR_NOMEM = -2,      /* out of memory */
	CMON_ERR_NOENT = -3,      /* no such file or folder */
	CMON_ERR_IO = -4,         /* cannot open or read it (permission, I/O error) */
	CMON_ERR_NOTSTORE = -5,   /* not a cmon store (empty, not SQLite, no cmon tables) */
	CMON_ERR_VERSION = -6,    /* a store format this library does not read */
	CMON_ERR_CORRUPT = -7,    /* truncated or corrupted store */
	CMON_ERR_BUSY = -8,       /* locked by its writer for too long */
	CMON_ERR_NOFUNC = -9,     /* no such function in the store */
	CMON_ERR_AMBIGUOUS = -10, /* function name in several modules: use MODULE:NAME */
	CMON_ERR_NOCALL = -11,    /* call number out of range */
	CMON_ERR_NOBLOB = -12,    /* the call has no captured buffer of that name */
};

/* A short description of ERR ("store is corrupted", ...); never NULL. */
const char *cmon_strerror(int err);

struct cmon_store;

/* Open flags. */
#define CMON_OPEN_CHECK 0x1u /* also run SQLite's quick_check (reads the whole file) */

/*
 * Open the store at PATH: a store folder, or its calls.db.  Read-only: the
 * store can be read while `cmon capture` is still writing it (calls
 * committed so far), and after a crash of the writer.  Checks that the file
 * is an SQLite database with cmon's tables and format version
 * CMON_STORE_FORMAT.  On success *OUT is the store; on failure *OUT is NULL
 * and, when ERRBUF is not NULL, ERRBUF (ERRLEN bytes) holds a one-line
 * message naming the file and the problem.  calls.db and SQLite's side
 * files next to it (-journal, -wal, -shm), when there, must be regular
 * files: anything else (a FIFO, which an open would wait on forever) gives
 * CMON_ERR_NOTSTORE before any is opened.
 */
int cmon_store_open_ex(const char *path, unsigned flags, struct cmon_store **out, char *errbuf,
		       size_t errlen);

/* cmon_store_open_ex(PATH, 0, OUT, NULL, 0). */
int cmon_store_open(const char *path, struct cmon_store **out);

/* Close S and free everything it gave (not the calls: cmon_call_free them
 * first).  NULL is fine. */
void cmon_store_close(struct cmon_store *s);

/* The message of the last failed call on S ("" if none). */
const char *cmon_store_error(const struct cmon_store *s);

/* The calls.db file S reads. */
const char *cmon_store_path(const struct cmon_store *s);

/* 1 when S records calls' notes (cmon_call.notes_json; NULL there then
 * means nothing was cut or unreadable); 0 for a store written before them,
 * whose notes are unknown. */
int cmon_store_has_notes(const struct cmon_store *s);

/*
 * Metadata: the value of KEY, or NULL when the store does not have it.
 * Keys: format_version, cmon_version, command_line, target_path, build_id,
 * hostname, start_time_ns, end_time_ns (absent: the writer did not close
 * the store, e.g. it was killed), last_commit_ns (times are CLOCK_REALTIME
 * ns, decimal), and any other the writer recorded.
 */
const char *cmon_store_meta(const struct cmon_store *s, const char *key);

/* Every meta entry, in key order: I from 0 to cmon_store_meta_count()-1.
 * Returns 0, or CMON_ERR_INVAL when I is out of range. */
size_t cmon_store_meta_count(const struct cmon_store *s);
int cmon_store_meta_at(const struct cmon_store *s, size_t i, const char **key,
		       const char **value);

/* One parameter of a function's signature. */
struct cmon_param {
	const char *name;
	const char *type;   /* C type as DWARF spells it ("const char *"); "" unknown */
	const char *kind;   /* hint: "int", "uint", "float", "pointer", "string", ...; "" */
};

/* A --capture of a function: each call holds it as the blob NAME. */
struct cmon_capture_info {
	const char *name;
	const char *kind;   /* "str" (text), "bytes" (raw bytes), "array" (numbers) */
};

struct cmon_function {
	const char *name;       /* as traced (demangled for C++) */
	const char *module;     /* file name of the object holding it; "" unknown */
	uint64_t calls;         /* calls recorded: numbered 1..calls */
	const char *signature;  /* the signature as stored (JSON); "" if none */
	const char *ret_type;   /* "" unknown */
	size_t n_params;
	const struct cmon_param *params;
	int typed;              /* 1: arguments typed from DWARF; 0: raw registers */
	size_t n_captures;      /* its --capture values, in the order given */
	const struct cmon_capture_info *captures;
};

/* Every function of the store, in the order they were declared. */
int cmon_store_functions(struct cmon_store *s, const struct cmon_function **list, size_t *n);

/* The function NAME: its exact name, or MODULE:NAME when the same name is
 * in several modules (CMON_ERR_AMBIGUOUS otherwise). */
int cmon_store_function(struct cmon_store *s, const char *name, const struct cmon_function **f);

struct cmon_process {
	uint32_t pid;
	const char *comm;       /* last name seen; "" unknown */
	uint64_t first_ts_ns, last_ts_ns;
	uint64_t calls;
	const char *cgroup;     /* capture --cgroup/--container: its cgroup v2 path;
				 * NULL: none named */
};

/* Every process that made a traced call, by pid. */
int cmon_store_processes(struct cmon_store *s, const struct cmon_process **list, size_t *n);

/* One argument of a call. */
struct cmon_arg {
	const char *name;
	const char *type;   /* from the signature; "" when not in it */
	const char *kind;   /* from the signature; "" */
	const char *value;  /* JSON text as captured; NULL: the call has no value for it */
};

/* A buffer captured with a call, as a numpy-style array.  SHAPE describes
 * DATA: the product of the dims times cmon_dtype_size(DTYPE) is LEN (a store
 * where it is not gives CMON_ERR_CORRUPT), so DATA can be indexed by SHAPE. */
struct cmon_blob {
	const char *name;       /* the argument or capture it belongs to */
	const char *dtype;      /* numpy dtype string: "|u1", "<i4", "<f8", ... */
	unsigned ndim;
	const uint64_t *shape;  /* ndim dims, C order, of what was kept (DATA) */
	int truncated;          /* 1: the capture was cut (at --capture-max or
				 * --strlen): the array was longer than SHAPE
				 * says, and its first elements are DATA */
	const void *data;
	size_t len;
};

struct cmon_call {
	const char *func;       /* function name and module */
	const char *module;
	uint64_t n;             /* call number, from 1, per function */
	uint32_t pid, tid;
	const char *comm;       /* the process's name; "" unknown */
	uint64_t ts_ns;         /* entry, CLOCK_REALTIME ns */
	uint64_t latency_ns;    /* CMON_NONE: did not return */
	const char *status;     /* "ok", "noreturn", "entry", "tailcall" */
	const char *ret;        /* JSON text; NULL: no return value */
	const char *ret_type;   /* from the signature; "" */
	uint64_t rss_entry, rss_exit, vms_entry, vms_exit; /* bytes; CMON_NONE: unknown */
	size_t n_args;          /* signature order, then any others the call has */
	const struct cmon_arg *args;
	size_t n_blobs;
	const struct cmon_blob *blobs;
	const char *args_json;  /* the arguments object as stored */
	void *internal_;        /* the library's */
	/* What the values do not say, as JSON text, NULL when nothing:
	 * {"truncated":[paths],"faults":[paths]}: a string or buffer cut at
	 * --strlen, a pointer that could not be read (its value reads null
	 * as a NULL pointer's does).  Paths as trace writes them ("s",
	 * "p->name").  Last: added after the rest, whose layout is unchanged
	 * (a store written before it has none: NULL). */
	const char *notes_json;
};

/* Call N (from 1; 0: CMON_ERR_INVAL, past the last: CMON_ERR_NOCALL) of
 * function FUNC (a name as for cmon_store_function).  Free *OUT with
 * cmon_call_free. */
int cmon_store_call(struct cmon_store *s, const char *func, uint64_t n, struct cmon_call **out);

/* The captured buffer NAME of C; *OUT belongs to C. */
int cmon_call_blob(const struct cmon_call *c, const char *name, const struct cmon_blob **out);

/* The argument NAME of C, or NULL. */
const struct cmon_arg *cmon_call_arg(const struct cmon_call *c, const char *name);

void cmon_call_free(struct cmon_call *c); /* NULL is fine */

/* Every call of a function, in call-number order, from call FIRST (>= 1;
 * 0: CMON_ERR_INVAL).  Calls come numbered FIRST, FIRST + 1, ... up to the
 * function's calls: a gap or a repeat in the store gives CMON_ERR_CORRUPT
 * from cmon_iter_next where it shows. */
struct cmon_iter;
int cmon_store_calls(struct cmon_store *s, const char *func, uint64_t first,
		     struct cmon_iter **out);
/* The next call (free it with cmon_call_free): returns 1 and sets *OUT, 0 at
 * the end, or a negative error. */
int cmon_iter_next(struct cmon_iter *it, struct cmon_call **out);
void cmon_iter_free(struct cmon_iter *it); /* NULL is fine */

/* Bytes per element of a numpy dtype string ("<i4": 4), or 0 if DTYPE is
 * not one libcmon knows ([<>|=] then b i u f c S V, then a size). */
size_t cmon_dtype_size(const char *dtype);

/* 1 when DTYPE is a numeric numpy dtype (kinds b i u f c): one a .npy file
 * and numpy.load turn into numbers. */
int cmon_dtype_numeric(const char *dtype);

#ifdef __cplusplus
}
#endif

#endif
