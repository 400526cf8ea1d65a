// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * read_store.c: libcmon's example.  Lists the functions of a capture store,
 * or prints one call's arguments and buffers.
 *
 *     read_store RUN               functions and their call counts
 *     read_store RUN FUNC [N]      call N (default 1) of FUNC
 *
 * Build: cc -Iinclude read_store.c libcmon.a -lsqlite3 -ljansson
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmon/cmon.h>

static int list(struct cmon_store *s)
{
	const struct cmon_function *fs;
	size_t n;

	if (cmon_store_functions(s, &fs, &n)) {
		fprintf(stderr, "read_store: %s\n", cmon_store_error(s));
		return 1;
	}
	printf("store %s, cmon %s\n", cmon_store_path(s), cmon_store_meta(s, "cmon_version"));
	for (size_t i = 0; i < n; i++) {
		printf("%s (%s): %" PRIu64 " calls, %zu params:", fs[i].name, fs[i].module,
		       fs[i].calls, fs[i].n_params);
		for (size_t j = 0; j < fs[i].n_params; j++)
			printf(" %s %s", fs[i].params[j].type, fs[i].params[j].name);
		printf("\n");
	}
	return 0;
}

static int show(struct cmon_store *s, const char *func, uint64_t n)
{
	struct cmon_call *c;

	if (cmon_store_call(s, func, n, &c)) {
		fprintf(stderr, "read_store: %s\n", cmon_store_error(s));
		return 1;
	}
	printf("%s call %" PRIu64 ": pid %" PRIu32 " tid %" PRIu32 ", status %s, ret %s\n",
	       c->func, c->n, c->pid, c->tid, c->status, c->ret ? c->ret : "-");
	for (size_t i = 0; i < c->n_args; i++)
		printf("  %s (%s) = %s\n", c->args[i].name, c->args[i].type,
		       c->args[i].value ? c->args[i].value : "-");
	for (size_t i = 0; i < c->n_blobs; i++) {
		const struct cmon_blob *b = &c->blobs[i];

		printf("  buffer %s: %s, %u dims, %zu bytes%s\n", b->name, b->dtype, b->ndim, b->len,
		       b->truncated ? " (truncated)" : "");
		/* Typed access: an int32 array is just that in memory. */
		if (cmon_dtype_numeric(b->dtype) && cmon_dtype_size(b->dtype) == 4 &&
		    b->dtype[1] == 'i') {
			const int32_t *v = b->data;

			printf("   ");
			for (size_t k = 0; k < b->len / 4; k++)
				printf(" %" PRId32, v[k]);
			printf("\n");
		}
	}
	cmon_call_free(c);
	return 0;
}

int main(int argc, char **argv)
{
	struct cmon_store *s;
	char msg[512];
	int rc;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: read_store RUN [FUNC [N]]\n");
		return 2;
	}
	if (cmon_store_open_ex(argv[1], 0, &s, msg, sizeof(msg))) {
		fprintf(stderr, "read_store: %s\n", msg);
		return 1;
	}
	if (argc == 2)
		rc = list(s);
	else
		rc = show(s, argv[2], argc == 4 ? strtoull(argv[3], NULL, 10) : 1);
	cmon_store_close(s);
	return rc;
}
