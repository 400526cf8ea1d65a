// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * store_bench.c: how fast the capture store takes calls, and how fast a big
 * store opens and shows one.
 *
 *     store_bench [CALLS [DIR]]     (default 1000000 calls, in /tmp)
 *
 * Writes CALLS calls to a new store the way `cmon capture`'s consumer does
 * (4 functions, typed args JSON, one 64-byte buffer per call, maybe_commit
 * per drained batch of 256), and reports the sustained rate: overall and
 * the slowest 100,000-call stretch, commits included, the final close
 * (checkpoint) separately.  Then opens the store and reads one call, as
 * `cmon show RUN FUNC N` does, 20 times at random call numbers: cold
 * handle each time (open, look up, read the call and its buffer, close).
 * The store is removed at the end unless CMON_BENCH_KEEP is set.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmon/cmon.h>
#include "store/store_writer.h"

#define CHUNK 100000
#define BATCH 256
#define SHOWS 20

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const names[4] = { "parse_request", "hash_block", "send_reply",
					      "ns::Codec::decode(char const*, unsigned long)" };
	uint64_t ncalls = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	const char *base = argc > 2 ? argv[2] : "/tmp";
	const struct store_meta meta = { .command_line = "store_bench", .target_path = "/bin/true" };
	uint64_t t0, t1, tc, chunk_t, worst = 0, shows[SHOWS], sz = 0;
	struct store_writer *w;
	int64_t fid[4];
	char *dir, *path, *db;
	struct stat st;
	int err;

	if (!ncalls || asprintf(&dir, "%s/cmon-store-bench", base) < 0)
		return 2;
	err = store_writer__create(dir, &meta, &w);
	if (err) {
		fprintf(stderr, "store_bench: %s: %s\n", dir, strerror(-err));
		return 1;
	}
	path = strdup(store_writer__path(w));
	for (int i = 0; i < 4; i++)
		fid[i] = store_writer__add_function(w, names[i], "app",
			"{\"params\": [{\"name\": \"buf\", \"type\": \"const char *\", \"kind\": \"pointer\"},"
			" {\"name\": \"len\", \"type\": \"size_t\", \"kind\": \"uint\"},"
			" {\"name\": \"flags\", \"type\": \"int\", \"kind\": \"int\"}], \"ret\": \"int\"}",
			true);
	t0 = chunk_t = now_ns();
	for (uint64_t i = 0; i < ncalls; i++) {
		unsigned char data[64];
		char args[96], ret[24];
		const uint64_t shape[] = { 64 };
		struct store_blob b = { "buf", "|u1", 1, shape, false, data, sizeof(data) };
		struct store_call c = {
			.func_id = fid[i & 3], .pid = 4242, .tid = 4242 + (uint32_t)(i & 7),
			.comm = "app", .ts_ns = 1700000000000000000ull + i * 997,
			.latency_ns = 1000 + i % 5000, .status = "ok", .ret_json = ret,
			.args_json = args, .rss_entry = 10 << 20, .rss_exit = 10 << 20,
			.vms_entry = 100 << 20, .vms_exit = 100 << 20, .blobs = &b, .n_blobs = 1,
		};

		memset(data, (int)(i & 0xff), sizeof(data));
		memcpy(data, &i, sizeof(i));
		snprintf(args, sizeof(args), "{\"buf\": \"0x7ffd%08" PRIx64 "\", \"len\": 64,"
			 " \"flags\": %d}", i * 64, (int)(i % 3));
		snprintf(ret, sizeof(ret), "%d", (int)(i % 100));
		if (store_writer__add_call(w, &c) < 0) {
			fprintf(stderr, "store_bench: add_call: %s\n", store_writer__errmsg(w));
			return 1;
		}
		if ((i + 1) % BATCH == 0)
			store_writer__maybe_commit(w, now_ns());
		if ((i + 1) % CHUNK == 0) {
			uint64_t t = now_ns();

			if (t - chunk_t > worst)
				worst = t - chunk_t;
			chunk_t = t;
		}
	}
	t1 = now_ns();
	err = store_writer__close(w, 0);
	tc = now_ns();
	if (err) {
		fprintf(stderr, "store_bench: close: %s\n", strerror(-err));
		return 1;
	}
	if (asprintf(&db, "%s/calls.db", path) > 0 && !stat(db, &st))
		sz = (uint64_t)st.st_size;
	printf("write: %" PRIu64 " calls (64-byte buffer each) in %.3f s: %.0f calls/s;"
	       " close %.3f s; %.0f calls/s with close\n",
	       ncalls, (t1 - t0) / 1e9, ncalls / ((t1 - t0) / 1e9), (tc - t1) / 1e9,
	       ncalls / ((tc - t0) / 1e9));
	if (worst)
		printf("write: slowest %d-call stretch %.3f s: %.0f calls/s\n", CHUNK, worst / 1e9,
		       CHUNK / (worst / 1e9));
	printf("store: %s, %.1f MiB (%.0f bytes/call)\n", path, sz / 1048576.0,
	       (double)sz / (double)ncalls);

	srand(42);
	for (int k = 0; k < SHOWS; k++) {
		const char *fname = names[k & 3];
		uint64_t n = 1 + (uint64_t)rand() % (ncalls / 4 ? ncalls / 4 : 1);
		const struct cmon_blob *b;
		struct cmon_store *s;
		struct cmon_call *c;
		char msg[512];
		uint64_t a = now_ns();

		if (cmon_store_open_ex(path, 0, &s, msg, sizeof(msg))) {
			fprintf(stderr, "store_bench: %s\n", msg);
			return 1;
		}
		if (cmon_store_call(s, fname, n, &c) || cmon_call_blob(c, "buf", &b) ||
		    b->len != 64 || c->n_args != 3) {
			fprintf(stderr, "store_bench: show %s %" PRIu64 ": %s\n", fname, n,
				cmon_store_error(s));
			return 1;
		}
		cmon_call_free(c);
		cmon_store_close(s);
		shows[k] = now_ns() - a;
	}
	qsort(shows, SHOWS, sizeof(*shows), cmp_u64);
	printf("show: open + call N + close, %d random calls: median %.2f ms, max %.2f ms\n",
	       SHOWS, shows[SHOWS / 2] / 1e6, shows[SHOWS - 1] / 1e6);
	if (!getenv("CMON_BENCH_KEEP"))
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(db);
	free(path);
	free(dir);
	return 0;
}
