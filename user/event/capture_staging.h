/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * capture_staging.h: the user-space half of bpf/capture_staging.bpf.h.
 * Capture records reach user space one at a time through the ring buffer
 * (large ones, or when the CPU's batch was held), a batch at a time through
 * it (a full batch), and from a CPU's partial batch, taken from the mmapped
 * map at every poll.
 *
 * A poll sweeps the call records (staging.h), then the captures, then
 * reads the ring buffer as far as it was filled after both: a call record
 * that goes out (written before the first sweep) had its capture written
 * before it, so the capture was swept or sent before the ring's fill was
 * read.
 */
#ifndef CMON_CAPTURE_STAGING_H
#define CMON_CAPTURE_STAGING_H

#include <stdbool.h>
#include <stddef.h>
#include "cmon_abi.h"

/* A capture record of SIZE bytes (header and items). */
typedef int (*capture_rec_fn)(void *ctx, const struct cmon_capture_rec *rec, size_t size);

struct capture_staging;

/* MAP_FD: the loaded `capture_staging` map (NCPUS slots).  NULL and errno. */
struct capture_staging *capture_staging__new(int map_fd, int ncpus);
void capture_staging__free(struct capture_staging *s); /* NULL fine */

/* Take every CPU's partial batch and hand FN its records (FINAL: after
 * the probes are gone, waiting longer for a holder).  Returns 0, or FN's
 * first error; *ALL is false when a batch was held past the wait (its
 * records stay for the next sweep: call records must then wait too). */
int capture_staging__sweep(struct capture_staging *s, bool final, capture_rec_fn fn, void *ctx,
			   bool *all);

/* The records of batch B (SIZE bytes, from the ring buffer) to FN. */
int capture_staging__batch(const struct cmon_capture_batch *b, size_t size, capture_rec_fn fn,
			   void *ctx);

#endif
