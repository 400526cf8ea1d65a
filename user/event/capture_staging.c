// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "capture_staging.h"
#include "staging.h"

struct capture_staging {
	struct cmon_capture_batch *slots; /* the map, mmapped */
	size_t map_bytes;
	int ncpus;
	uint8_t *copy; /* a batch's records, copied out before FN sees them */
};

struct capture_staging *capture_staging__new(int map_fd, int ncpus)
{
	struct capture_staging *s = calloc(1, sizeof(*s));
	long page = sysconf(_SC_PAGESIZE);

	if (!s)
		return NULL;
	s->ncpus = ncpus;
	s->copy = malloc(CMON_CAPBATCH_BYTES);
	s->map_bytes = ((size_t)ncpus * sizeof(struct cmon_capture_batch) + (size_t)page - 1) &
		       ~((size_t)page - 1);
	s->slots = s->copy ? mmap(NULL, s->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0)
			   : MAP_FAILED;
	if (s->slots == MAP_FAILED) {
		int err = s->copy ? errno : ENOMEM;

		free(s->copy);
		free(s);
		errno = err;
		return NULL;
	}
	return s;
}

void capture_staging__free(struct capture_staging *s)
{
	if (!s)
		return;
	munmap(s->slots, s->map_bytes);
	free(s->copy);
	free(s);
}

/* Records of DATA (LEN bytes, each 8-aligned) to FN. */
static int each_record(const uint8_t *data, size_t len, capture_rec_fn fn, void *ctx)
{
	size_t off = 0;

	while (off + sizeof(struct cmon_capture_rec) <= len) {
		const struct cmon_capture_rec *r = (const void *)(data + off);
		size_t size = sizeof(*r) + r->len;
		int err;

		if (r->type != CMON_REC_CAPTURE || size > len - off)
			return 0; /* cannot be: the programs write whole records */
		err = fn(ctx, r, size);
		if (err)
			return err;
		off += (size + 7) & ~(size_t)7;
	}
	return 0;
}

int capture_staging__batch(const struct cmon_capture_batch *b, size_t size, capture_rec_fn fn,
			   void *ctx)
{
	size_t head = offsetof(struct cmon_capture_batch, data);

	if (size < head || b->len > size - head)
		return 0;
	return each_record(b->data, b->len, fn, ctx);
}

int capture_staging__sweep(struct capture_staging *s, bool final, capture_rec_fn fn, void *ctx,
			   bool *all)
{
	int err = 0;

	*all = true;
	for (int c = 0; c < s->ncpus && !err; c++) {
		struct cmon_capture_batch *b = &s->slots[c];
		uint32_t len;

		if (!__atomic_load_n(&b->len, __ATOMIC_RELAXED))
			continue; /* staged after this look: after the first sweep too */
		if (!staging__hold(&b->busy, final)) {
			*all = false;
			continue;
		}
		len = b->len;
		if (len > CMON_CAPBATCH_BYTES)
			len = 0; /* cannot be: the programs send a full batch first */
		/* Copied out so that the batch is let go before FN's work. */
		memcpy(s->copy, b->data, len);
		b->len = 0;
		b->n = 0;
		__atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
		err = each_record(s->copy, len, fn, ctx);
	}
	return err;
}
