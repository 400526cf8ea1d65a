/*
 * ledger.h: which records reached the output.  A record handed to the
 * writer sits in a buffer until the next flush; only a flush that succeeds
 * (or, when it fails on a regular file, the bytes the file took) says it
 * was written.  So on a full disk the summary counts what is in the file,
 * and every record that is not there is counted as not written.
 */
#ifndef CMON_OUTPUT_LEDGER_H
#define CMON_OUTPUT_LEDGER_H

#include <stddef.h>
#include <stdint.h>

struct out_ledger {
	uint32_t *func;  /* the records since the last flush: function id */
	uint64_t *end;   /* and the output byte each ends at (UINT64_MAX: unknown) */
	size_t n, cap;
	uint64_t *written_per_func; /* [n_funcs] */
	size_t n_funcs;
	uint64_t written;   /* in the output */
	uint64_t unwritten; /* formatted or drained but not in the output */
};

int out_ledger__init(struct out_ledger *l, size_t n_funcs); /* 0 or -ENOMEM */

/* A record of FUNC handed to the writer, ending at output byte END.  0, or
 * -ENOMEM (the record is then counted as not written). */
int out_ledger__add(struct out_ledger *l, uint32_t func, uint64_t end);

/* The output was flushed: ERR 0, every pending record is written; ERR
 * < 0, those ending at or before ON_DISK are, and the rest are not; ERR >
 * 0 (a store's batch not committed yet), those ending at or before ON_DISK
 * are, and the rest stay pending. */
void out_ledger__settle(struct out_ledger *l, int err, uint64_t on_disk);

/* A record drained after the output failed: not written. */
void out_ledger__refuse(struct out_ledger *l);

void out_ledger__free(struct out_ledger *l);

#endif
