/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * spool.h: records the consumer has taken from the kernel but not yet
 * decoded, typed and written, first in, first out.  When the programs make
 * records faster than they can be typed and written (a flat-out loop, a
 * slow disk), the consumer copies the ring buffer's records here (a
 * memcpy each) and frees the ring for the programs; the spool is worked
 * off between polls and after the trace ends.  Records are kept as the
 * kernel wrote them, in chunks: the first few in memory, the rest
 * compressed (LZ4) into an unnamed file, so cmon's memory stays bounded at
 * any rate and only the disk bounds how far behind the consumer may fall.
 */
#ifndef CMON_SPOOL_H
#define CMON_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spool;

struct spool_opts {
	/* Where the spill file is made (an unnamed O_TMPFILE, gone when cmon
	 * is); NULL, or a folder that cannot have one: the temporary folder;
	 * where neither can, the spool keeps MEM_BYTES in memory, no more. */
	const char *dir;
	bool memory_only;  /* no file at all */
	/* One thread puts while another takes (each alone in its role):
	 * a lock inside. */
	bool shared;
	size_t mem_bytes;  /* chunks kept in memory; 0: 1 MiB */
	uint64_t max_bytes; /* compressed bytes on disk at most; 0: 1 GiB */
};

/* NULL and errno.  A spill file that cannot be made is not an error: the
 * spool then keeps to memory (spool__on_disk says so). */
struct spool *spool__new(const struct spool_opts *opts);
void spool__free(struct spool *s);

/* Append a record of SIZE bytes (KIND: the caller's tag).  0; -ENOSPC when
 * the spool is full; -errno when the spill file failed (the record is
 * not kept). */
int spool__put(struct spool *s, uint32_t kind, const void *rec, size_t size);

/* Room for at least BYTES more raw record bytes (the caller's next poll). */
bool spool__has_room(struct spool *s, size_t bytes);

bool spool__empty(const struct spool *s);

/* Hand FN the oldest records, in order, until it has had MAX (0: all) or
 * returns nonzero (that record is used up; its value is returned).
 * Returns 0, FN's value, or -errno (a spill file that cannot be read: the
 * records on it are lost and counted, spool__lost). */
typedef int (*spool_fn)(void *ctx, uint32_t kind, const void *rec, size_t size);
int spool__take(struct spool *s, size_t max, spool_fn fn, void *ctx);

struct spool_stats {
	uint64_t records;      /* ever put */
	uint64_t waiting;      /* in the spool now */
	uint64_t raw_bytes;    /* record bytes ever put */
	uint64_t disk_bytes;   /* compressed bytes ever written to the spill file */
	uint64_t peak_disk;    /* the spill file's largest size */
	uint64_t lost;         /* records on a spill file that could not be read back */
	bool on_disk;          /* a spill file is open */
};
void spool__stats(struct spool *s, struct spool_stats *out);

#endif
