/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pending.h: capture records waiting for their call records.  A call's
 * captures reach user space before its call record (written at its entry,
 * or at its return before the record), and wait here keyed by (tid, entry
 * time, function, side).  A capture whose call record was lost (the ring
 * buffer was full) would wait forever: past a byte bound the oldest is let
 * go, and counted.
 */
#ifndef CMON_PENDING_H
#define CMON_PENDING_H

#include <stddef.h>
#include <stdint.h>
#include "cmon_abi.h"

struct pending_caps;

/* MAX_BYTES: what the waiting captures may hold (0: the default, 64 MiB). */
struct pending_caps *pending__new(size_t max_bytes);
void pending__free(struct pending_caps *pc); /* NULL fine */

/* Keep a copy of REC (its header and REC->len bytes of items): 0 or -ENOMEM. */
int pending__put(struct pending_caps *pc, const struct cmon_capture_rec *rec);

/* The capture kept for this call and side, no longer waiting (given back
 * with pending__release), or NULL. */
struct cmon_capture_rec *pending__take(struct pending_caps *pc, uint32_t tid, uint64_t ts,
				       uint32_t func_id, uint32_t at_return);
void pending__release(struct cmon_capture_rec *rec); /* NULL fine */

/* The call (TID, TS, FUNC_ID) was left out at its return: forget its
 * entry capture, now, or when it comes (staged on another CPU, it may come
 * after this word; the last PENDING_FORGOTTEN such calls are remembered). */
#define PENDING_FORGOTTEN 64
void pending__forget(struct pending_caps *pc, uint32_t tid, uint64_t ts, uint32_t func_id);

/* Captures let go unmatched to stay under the bound, and waiting now. */
uint64_t pending__evicted(const struct pending_caps *pc);
size_t pending__count(const struct pending_caps *pc);

#endif
