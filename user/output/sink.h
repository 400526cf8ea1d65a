/*
 * sink.h: where a trace's records end.  A sink takes records one at a time
 * and makes them durable when flushed; the router (router.h) holds one per
 * output and counts what reached each.  Two kinds exist: a format's writer
 * on a stream or a file (file_sink.c: text, CSV, JSON, the views) and the
 * capture store (event/store_sink.c); and a ClickHouse table
 * (clickhouse.h), for either.  `cmon trace` and `cmon capture` differ
 * only in which one the router makes.
 */
#ifndef CMON_OUTPUT_SINK_H
#define CMON_OUTPUT_SINK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "output/record.h"
#include "output/writer.h"

struct out_sink;

struct out_sink_ops {
	/* REC of function FUNC_ID: 0; -errno (the record is not written, the
	 * output failed); or 1: the output dropped this one record, counted
	 * it, and goes on (a buffer full while a server is down). */
	int (*write)(struct out_sink *s, const struct call_record *rec, uint32_t func_id);
	/* Where the last record ends in the output, for the ledger: records
	 * ending at or before what a failed flush left on disk were written.
	 * UINT64_MAX: a view, which holds records until the end. */
	uint64_t (*bytes)(const struct out_sink *s);
	/* The end of the run (a header still due, a view's output, a store's
	 * end time): 0 or -errno.  Called once, before the last flush. */
	int (*finish)(struct out_sink *s);
	/* Make what was written durable: 0, or -errno with *ON_DISK set as
	 * writer__flush does; or 1 when only what ends at or before *ON_DISK
	 * is durable yet (a store commits its batch once a second). */
	int (*flush)(struct out_sink *s, uint64_t *on_disk);
	void (*free)(struct out_sink *s);
};

struct out_sink {
	const struct out_sink_ops *ops;
};

/* Makes the sink of process PID (and of function FUNC_ID, UINT32_MAX:
 * every function), named PATH (from an -o template):
 * 0 or -errno after one error line. */
typedef int out_sink_open_fn(void *ctx, pid_t pid, uint32_t func_id, const char *path,
			     struct out_sink **out);

static inline void out_sink__free(struct out_sink *s)
{
	if (s)
		s->ops->free(s);
}

/* file_sink.c: a writer of FMT (CSV: its schema's arrays must outlive it). */
struct file_sink_opts {
	enum out_format fmt;
	struct csv_schema csv;
	bool color;  /* text for a terminal: writer__set_color */
	unsigned width, strcut; /* text: writer__set_text */
};

/* On OUT, which stays open.  NULL: out of memory. */
struct out_sink *file_sink__new(const struct file_sink_opts *o, FILE *out);
/* out_sink_open_fn for a file per process (CTX: struct file_sink_opts):
 * PATH created or emptied, closed with the sink. */
int file_sink__open(void *ctx, pid_t pid, uint32_t func_id, const char *path,
		    struct out_sink **out);

#endif
