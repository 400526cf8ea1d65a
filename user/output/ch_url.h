/*
 * ch_url.h: where records go in ClickHouse, as `-o` and the agent's
 * `log: {clickhouse: ...}` name it:
 *
 *   clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/[DB.]TABLE[?OPTION=VALUE&...]
 *
 * PORT is the server's HTTP port (default 8123), DB "default" when left
 * out; DB and TABLE are identifiers ([A-Za-z_][A-Za-z0-9_]*).  USER and
 * PASSWORD are percent-decoded.  Options:
 *   password_file=PATH  the password, read from PATH's first line (so it
 *                       is in no command line or spec)
 *   batch=N             rows per INSERT (1..100000; default 10000)
 *   flush_ms=N          an open batch is sent after N ms (10..60000;
 *                       default 1000: a quiet process's calls arrive
 *                       within about a second)
 *   buffer=SIZE         records held while the server is slow or down,
 *                       in bytes (k/M/G suffixes; 1M..16G; default 64M);
 *                       past it records are dropped and counted
 *   linger_ms=N         at the end, how long to keep retrying a server
 *                       that does not answer (0..600000; default 5000)
 */
#ifndef CMON_OUTPUT_CH_URL_H
#define CMON_OUTPUT_CH_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ch_url {
	char *host;
	unsigned port;
	char *db, *table;
	char *user, *password; /* NULL: none */
	unsigned batch_rows;
	unsigned flush_ms;
	uint64_t buffer_bytes;
	unsigned linger_ms;
};

/* Does S name ClickHouse (starts "clickhouse://")? */
bool ch_url__is(const char *s);

/*
 * Parse S into U (freed with ch_url__free, also on failure).  0, or
 * -errno with the reason in WHY (LEN bytes: "no table", "unknown option
 * 'x'"; never the password): -EINVAL, or reading the password file.
 */
int ch_url__parse(const char *s, struct ch_url *u, char *why, size_t len);

/* "HOST:PORT/DB.TABLE": what messages name (never the credentials).
 * Static per thread. */
const char *ch_url__name(const struct ch_url *u);

void ch_url__free(struct ch_url *u);

#endif
