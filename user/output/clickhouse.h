/*
 * clickhouse.h: call records inserted into a ClickHouse table (ch_url.h
 * names it) through its HTTP interface, as a sink (sink.h) for `trace`
 * and `capture -o clickhouse://...` and the agent's `log: {clickhouse:}`.
 *
 * The table is created when missing (MergeTree ordered by function and
 * time: the per-function time queries of examples/clickhouse/); one that
 * exists must have every column cmon writes, with its type.  Records are
 * formatted as JSONEachRow rows on the caller's thread into the open
 * batch; a batch goes out when it holds `batch` rows or is `flush_ms`
 * old, from a thread of the sink's own, so the caller never waits on the
 * network.  While the server is down or slow, batches wait in a buffer of
 * `buffer` bytes and are retried (backing off to 5 s); a record that finds
 * the buffer full is dropped and counted, never blocking.
 *
 * No duplicates: each batch carries an id (column batch, and the INSERT's
 * query_id).  An INSERT that got no answer may have landed, so before it
 * is sent again the server is asked whether that query still runs and how
 * many rows of the batch it holds (one block: all or none).
 */
#ifndef CMON_OUTPUT_CLICKHOUSE_H
#define CMON_OUTPUT_CLICKHOUSE_H

#include <stdbool.h>
#include <stdint.h>
#include "output/sink.h"

struct ch_sink_opts {
	const char *url;    /* clickhouse://... (ch_url.h) */
	const char *cgroup; /* the records' cgroup when the caller knows it; NULL */
	/* The server does not answer at open: set up the table later, from
	 * the sink's thread, holding records meanwhile (the agent, which
	 * must not fail a probe because ClickHouse starts after it).
	 * Otherwise such a server fails the open. */
	bool defer_setup;
};

/* 0 and the sink, or -errno after one error line (the URL, an unreachable
 * server, its error answer, a table whose columns do not fit). */
int ch_sink__open(const struct ch_sink_opts *o, struct out_sink **out);

/* Is S a sink ch_sink__open made? */
bool ch_sink__is(const struct out_sink *s);

struct ch_stats {
	uint64_t accepted;  /* records taken into a batch */
	uint64_t inserted;  /* in the table (the server said so) */
	uint64_t dropped;   /* refused: the buffer was full */
	uint64_t lost;      /* taken, never inserted: given up at the end */
	uint64_t pending;   /* taken, not inserted yet */
	uint64_t buffered_bytes;
	uint64_t retries;   /* requests sent again */
	uint64_t errors;    /* requests that failed */
	bool up;            /* the last request was answered with success */
};

/* S's counts (any thread). */
void ch_sink__stats(const struct out_sink *s, struct ch_stats *st);

/* The columns cmon writes, as "name Type" (unit tests, examples). */
extern const char *const ch_sink__columns[][2];
extern const unsigned ch_sink__n_columns;

#endif
