/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * staging.h: the user-space half of bpf/staging.bpf.h.  Call records reach
 * user space three ways: one at a time through the ring buffer (a batch
 * was held), CMON_BATCH at a time through it (a full batch), and from a
 * CPU's partial batch, taken from the mmapped map at every poll.  A thread
 * that moved CPUs has records in two batches, so they wait in a window and
 * are handed on in time order (cmon_call_rec.order_ns).
 *
 * A poll:   staging__sweep (the cutoff: its start), then read the ring
 *           buffer as far as it was filled when the sweep ended, then
 *           staging__deliver(cutoff).
 * Every record written before the sweep passed its CPU is then in the
 * window (in the map, or sent to the ring buffer before the sweep ended),
 * so the records before the cutoff can go out in order; later ones wait a
 * poll.
 */
#ifndef CMON_STAGING_H
#define CMON_STAGING_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "cmon_abi.h"

struct staging;

/* MAP_FD: the loaded `staging` map (NCPUS slots; -1: a window alone, for
 * tests).  NULL and errno. */
struct staging *staging__new(int map_fd, int ncpus);
void staging__free(struct staging *s);

/* A record (or a batch's) from the ring buffer into the window.  0 or
 * -ENOMEM. */
int staging__add(struct staging *s, const struct cmon_call_rec *rec);
int staging__add_batch(struct staging *s, const struct cmon_batch *b);

/* Take every CPU's partial batch (FINAL: after the probes are gone, waiting
 * for any holder); they join the window at staging__deliver, after what
 * the ring buffer brought meanwhile: the newest records of their CPUs.  Returns the cutoff for
 * staging__deliver: the sweep's start; 0 on -ENOMEM (nothing is lost: the
 * batches not taken stay in the map). */
uint64_t staging__sweep(struct staging *s, bool final);

/* Hand FN the window's records written before CUTOFF (UINT64_MAX: all), in
 * time order; the rest wait.  A window past its bound goes out whole.  FN's
 * first error is returned: the record it refused is used up, as the ring
 * buffer's would be; the ones after it stay. */
typedef int (*staging_fn)(void *ctx, const struct cmon_call_rec *rec);
int staging__deliver(struct staging *s, uint64_t cutoff, staging_fn fn, void *ctx);

/* Hold a batch's BUSY word (a call or a capture batch) as its programs do,
 * with an atomic exchange, waiting a record's time for a holder (FINAL:
 * after the probes are gone, longer).  False: still held (its task was
 * preempted, or is faulting a page in). */
bool staging__hold(__u64 *busy, bool final);

/* Records waiting in the window. */
size_t staging__waiting(const struct staging *s);

#endif
