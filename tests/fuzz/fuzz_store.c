// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_store: libcmon's store reader (store/libcmon.c) on a hostile
 * calls.db.  An input is either a whole database file (it starts with
 * SQLite's magic) or an SQL script run on a copy of a known store (calls
 * with arguments, blobs, a C++ name, a raw function): what a person with
 * the sqlite3 shell can make of a store.  The store is then opened (with
 * and without its integrity check) and read whole: meta, functions,
 * processes, every call with its arguments and blobs.  Every failure is
 * one line; a blob's shape describes its bytes.  `make fuzz` runs it under
 * libFuzzer; tests/unit/test_fuzz_corpus.c replays the kept corpus
 * (tests/fuzz/corpus/store) in `make test`.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sqlite3.h>
#include "cmon/cmon.h"
#include "store/store_writer.h"

#define FUZZ_STORE_T0 1700000000000000000ull
#define FUZZ_STORE_CALLS 1000   /* read at most this many calls a function */
#define FUZZ_STORE_STEPS 20000  /* thousands of SQLite VM steps a script may take */

static char fuzz_store_dir[64];
static char fuzz_store_db[128];
static unsigned char *fuzz_store_seed;
static size_t fuzz_store_seed_len;

static void fuzz_store_rm(void)
{
	static const char *const sides[] = { "", "-journal", "-wal", "-shm" };
	char p[160];

	for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", fuzz_store_db, sides[i]);
		unlink(p);
	}
}

static void fuzz_store_cleanup(void)
{
	char p[96];

	fuzz_store_rm();
	snprintf(p, sizeof(p), "%s/seed", fuzz_store_dir);
	snprintf(fuzz_store_db, sizeof(fuzz_store_db), "%s/calls.db", p);
	fuzz_store_rm();
	rmdir(p);
	rmdir(fuzz_store_dir);
}

static unsigned char *fuzz_store_slurp(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
	    !(buf = malloc((size_t)n)) || fread(buf, 1, (size_t)n, f) != (size_t)n)
		abort();
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The known store: the values of tests/unit/store_fill.c, in a private
 * folder under $TMPDIR, kept as bytes each input starts from. */
static void fuzz_store_init(void)
{
	static const int32_t values[5] = { 1, -2, 3, 40000, -5 };
	static const double matrix[6] = { 0.5, 1.5, 2.5, 3.5, 4.5, 5.5 };
	const struct store_meta meta = {
		.cmon_version = "0.1.0", .command_line = "cmon capture --func parse_* -o run",
		.target_path = "/usr/bin/app", .build_id = "0123456789abcdef",
		.hostname = "fuzzhost", .start_time_ns = FUZZ_STORE_T0,
	};
	const uint64_t s6[] = { 6 }, s5[] = { 5 }, s23[] = { 2, 3 };
	const struct store_blob b1 = { "buf", "|u1", 1, s6, false, "GET /a", 6 };
	const struct store_blob v1 = { "values", "<i4", 1, s5, true, values, sizeof(values) };
	const struct store_blob m = { "matrix", "<f8", 2, s23, false, matrix, sizeof(matrix) };
	const char *tmp = getenv("TMPDIR");
	struct store_writer *w;
	int64_t parse, sum, resize, raw;
	char seed[96];

	snprintf(fuzz_store_dir, sizeof(fuzz_store_dir), "%s/cmon-fuzz-store-XXXXXX",
		 tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(fuzz_store_dir))
		abort();
	snprintf(seed, sizeof(seed), "%s/seed", fuzz_store_dir);
	if (store_writer__create(seed, &meta, &w))
		abort();
	parse = store_writer__add_function(w, "parse_request", "app",
		"{\"params\": [{\"name\": \"buf\", \"type\": \"const char *\", \"kind\": \"string\"},"
		" {\"name\": \"len\", \"type\": \"size_t\", \"kind\": \"uint\"}], \"ret\": \"int\","
		" \"captures\": [{\"name\": \"buf\", \"kind\": \"bytes\"}]}", true);
	sum = store_writer__add_function(w, "sum_array", "libm2.so",
		"{\"params\": [{\"name\": \"values\", \"type\": \"const int32_t *\","
		" \"kind\": \"pointer\"}, {\"name\": \"n\", \"type\": \"int\", \"kind\": \"int\"}],"
		" \"ret\": \"int\"}", true);
	resize = store_writer__add_function(w, "ns::Widget::resize(int, int)", "app",
		"{\"params\": [{\"name\": \"this\", \"type\": \"ns::Widget *\", \"kind\": \"pointer\"}],"
		" \"ret\": \"void\"}", true);
	raw = store_writer__add_function(w, "raw_fn", "app",
		"[{\"name\": \"arg0\", \"type\": \"u64\", \"kind\": \"raw\"}]", false);
	if (parse < 0 || sum < 0 || resize < 0 || raw < 0)
		abort();
	{
		const struct store_call calls[] = {
			{ parse, 100, 101, "app", FUZZ_STORE_T0 + 1000, 1500, "ok", "0",
			  "{\"buf\": \"GET /a\", \"len\": 6}", 4096, 8192, 1, 1, &b1, 1,
			  "{\"truncated\":[\"buf\"]}" },
			{ parse, 200, 201, "worker", FUZZ_STORE_T0 + 2000, STORE_NONE, "noreturn", NULL,
			  "{\"buf\": \"a\\\"\\u00e9\\n\", \"len\": 18446744073709551615}",
			  STORE_NONE, STORE_NONE, 1, 1, NULL, 0, NULL },
			{ sum, 100, 101, "app", FUZZ_STORE_T0 + 3000, 700, "ok", "39997",
			  "{\"values\": \"0x7ffd0000\", \"n\": 5}", 1, 1, 1, 1, &v1, 1, NULL },
			{ resize, 100, 102, "app", FUZZ_STORE_T0 + 4000, 900, "ok", NULL,
			  "{\"this\": \"0x1000\"}", 1, 2, 3, 4, &m, 1, NULL },
			{ raw, 300, 301, NULL, FUZZ_STORE_T0 + 5000, 50, "entry", "[1, -7.5e3, null]",
			  "{\"arg0\": 1}", 1, 1, 1, 1, NULL, 0, NULL },
		};
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			if (store_writer__add_call(w, &calls[i]) < 1)
				abort();
	}
	if (store_writer__set_meta(w, "events_lost", "0") ||
	    store_writer__close(w, FUZZ_STORE_T0 + 5000000000ull))
		abort();
	snprintf(fuzz_store_db, sizeof(fuzz_store_db), "%s/calls.db", seed);
	fuzz_store_seed = fuzz_store_slurp(fuzz_store_db, &fuzz_store_seed_len);
	snprintf(fuzz_store_db, sizeof(fuzz_store_db), "%s/calls.db", fuzz_store_dir);
	atexit(fuzz_store_cleanup);
}

static int fuzz_store_progress(void *ctx)
{
	return ++*(unsigned *)ctx > FUZZ_STORE_STEPS;
}

/* Only what changes calls.db itself: no other file is attached, written
 * (VACUUM INTO) or loaded. */
static int fuzz_store_auth(void *ctx, int action, const char *a, const char *b, const char *c,
			   const char *d)
{
	(void)ctx;
	(void)b;
	(void)c;
	(void)d;
	if (action == SQLITE_ATTACH || action == SQLITE_DETACH)
		return SQLITE_DENY;
	if (action == SQLITE_FUNCTION && a && !strcasecmp(a, "load_extension"))
		return SQLITE_DENY;
	return SQLITE_OK;
}

static void fuzz_store_write(const void *data, size_t len)
{
	int fd = open(fuzz_store_db, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd))
		abort();
}

/* Run SQL (LEN bytes) on a copy of the known store, bounded in time, size
 * and reach. */
static void fuzz_store_edit(const uint8_t *sql, size_t len)
{
	unsigned steps = 0;
	sqlite3 *db;
	char *text;

	for (size_t i = 0; i + 6 <= len; i++)
		if (!strncasecmp((const char *)sql + i, "vacuum", 6))
			return; /* VACUUM INTO writes another file */
	fuzz_store_write(fuzz_store_seed, fuzz_store_seed_len);
	text = strndup((const char *)sql, len);
	if (!text)
		abort();
	if (sqlite3_open_v2(fuzz_store_db, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		abort();
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_progress_handler(db, 1000, fuzz_store_progress, &steps);
	sqlite3_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL); /* no fsync an input */
	sqlite3_set_authorizer(db, fuzz_store_auth, NULL);
	sqlite3_exec(db, text, NULL, NULL, NULL); /* an error keeps what was done */
	sqlite3_close_v2(db);
	free(text);
}

static void fuzz_store_one_line(const char *msg)
{
	if (!msg || strchr(msg, '\n'))
		abort();
}

static void fuzz_store_call(struct cmon_call *c)
{
	for (size_t i = 0; i < c->n_args; i++)
		if (!c->args[i].name || cmon_call_arg(c, c->args[i].name) == NULL)
			abort();
	for (size_t i = 0; i < c->n_blobs; i++) {
		const struct cmon_blob *b = &c->blobs[i];
		const struct cmon_blob *o;
		uint64_t elems = 1;
		volatile unsigned char sink = 0;

		for (unsigned d = 0; d < b->ndim; d++)
			elems *= b->shape[d];
		if (elems * cmon_dtype_size(b->dtype) != b->len || cmon_call_blob(c, b->name, &o))
			abort();
		for (size_t k = 0; k < b->len; k++)
			sink ^= ((const unsigned char *)b->data)[k];
		(void)sink;
	}
}

static void fuzz_store_read(unsigned flags)
{
	const struct cmon_function *fs;
	const struct cmon_process *ps;
	struct cmon_store *s = NULL;
	char err[512];
	size_t nf, np;

	err[0] = 0;
	if (cmon_store_open_ex(fuzz_store_db, flags, &s, err, sizeof(err))) {
		if (s)
			abort();
		fuzz_store_one_line(err);
		return;
	}
	for (size_t i = 0; i < cmon_store_meta_count(s); i++) {
		const char *k, *v;

		if (cmon_store_meta_at(s, i, &k, &v) || !k || !v)
			abort();
	}
	if (cmon_store_processes(s, &ps, &np))
		fuzz_store_one_line(cmon_store_error(s));
	if (cmon_store_functions(s, &fs, &nf)) {
		fuzz_store_one_line(cmon_store_error(s));
		nf = 0;
	}
	for (size_t i = 0; i < nf; i++) {
		struct cmon_iter *it = NULL;
		struct cmon_call *c = NULL;
		const struct cmon_function *f;
		int rc = 0;

		if (cmon_store_function(s, fs[i].name, &f)) {
			fuzz_store_one_line(cmon_store_error(s));
			continue;
		}
		if (!cmon_store_call(s, fs[i].name, 1, &c))
			fuzz_store_call(c);
		else
			fuzz_store_one_line(cmon_store_error(s));
		cmon_call_free(c);
		if (cmon_store_calls(s, fs[i].name, 1, &it)) {
			fuzz_store_one_line(cmon_store_error(s));
			continue;
		}
		for (unsigned n = 0; n < FUZZ_STORE_CALLS && (rc = cmon_iter_next(it, &c)) == 1; n++) {
			fuzz_store_call(c);
			cmon_call_free(c);
		}
		if (rc < 0)
			fuzz_store_one_line(cmon_store_error(s));
		cmon_iter_free(it);
	}
	cmon_store_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char magic[16] = "SQLite format 3";

	if (!fuzz_store_seed)
		fuzz_store_init();
	fuzz_store_rm();
	if (size >= sizeof(magic) && !memcmp(data, magic, sizeof(magic)))
		fuzz_store_write(data, size);
	else
		fuzz_store_edit(data, size);
	fuzz_store_read(0);
	fuzz_store_read(CMON_OPEN_CHECK);
	fuzz_store_rm();
	return 0;
}
