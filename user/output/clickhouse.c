// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* clickhouse.c: see clickhouse.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include "core/clock.h"
#include "core/decimal.h"
#include "core/escape.h"
#include "core/log.h"
#include "net/http_client.h"
#include "ch_url.h"
#include "clickhouse.h"

const char *const ch_sink__columns[][2] = {
	{ "host", "String" },      { "pid", "UInt32" },       { "tid", "UInt32" },
	{ "comm", "String" },      { "function", "String" },  { "module", "String" },
	{ "cgroup", "String" },    { "ts", "DateTime" },      { "ts_ns", "UInt64" },
	{ "latency_ns", "UInt64" }, { "status", "String" },   { "depth", "Int32" },
	{ "rss_entry", "UInt64" }, { "rss_exit", "UInt64" },  { "vms_entry", "UInt64" },
	{ "vms_exit", "UInt64" },  { "args", "String" },      { "retval", "String" },
	{ "captures", "String" },  { "regs", "Array(Int64)" }, { "ret", "Int64" },
	{ "sampled", "Float32" },  { "batch", "UInt64" },     { "seq", "UInt32" },
};
const unsigned ch_sink__n_columns = sizeof(ch_sink__columns) / sizeof(ch_sink__columns[0]);

#define BACKOFF_MIN_NS (100 * 1000000ull)
#define BACKOFF_MAX_NS (5000 * 1000000ull)

struct ch_batch {
	struct ch_batch *next;
	uint64_t id;
	uint64_t first;   /* position (1-based record number) of its first row */
	uint32_t rows;
	uint32_t ts_min, ts_max;
	bool maybe_sent;  /* an INSERT of it got no answer: ask before resending */
	struct strbuf body;
};

struct ch_sink {
	struct out_sink base;
	struct ch_url url;
	struct http_client *http;
	char host[256];
	char *cgroup;
	bool defer_setup;
	struct strbuf row;   /* the caller's thread: the row being made */
	struct strbuf scratch; /* the sender's: queries, answers */
	struct strbuf answer;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool thread_started;
	/* Under MU. */
	struct ch_batch *open;           /* filling */
	uint64_t open_since_ns;
	struct ch_batch *head, *tail;    /* sealed, oldest first */
	uint64_t next_id;
	uint64_t accepted, confirmed;    /* positions */
	uint64_t bytes;                  /* bodies held */
	uint64_t inserted, dropped, lost, retries, errors;
	bool ready;     /* the table is there and fits */
	bool up;
	bool stopping;
	uint64_t give_up_ns; /* stopping: no progress until then, give up */
	char *last_error;    /* logged once while it lasts */
};

static inline struct ch_sink *ch_of(const struct out_sink *s) { return (struct ch_sink *)s; }

/* ------------------------------------------------------------- requests */

/* The server's first line of text, cut short, for a message. */
static const char *first_line(const struct strbuf *sb)
{
	static __thread char buf[240];
	const char *s = sb->buf ? sb->buf : "";
	size_t n = strcspn(s, "\r\n");

	snprintf(buf, sizeof(buf), "%.*s%s", (int)(n > 200 ? 200 : n), s, n > 200 ? "..." : "");
	return buf;
}

/*
 * Run SQL (a query in the body, or with BODY the INSERT in the URL's query
 * string and the rows in the body).  0: answered 200, its text in
 * s->answer.  -EPROTO: answered with an error (*WHY its first line).
 * -errno: no answer (*SENT: the request may have reached the server).
 */
static int request(struct ch_sink *s, const char *path, const char *sql, const struct strbuf *body,
		   bool *sent, const char **why)
{
	long status;
	int err;

	*sent = false;
	err = body ? http_client__post(s->http, path, body->buf, body->len, &status, &s->answer)
		   : http_client__post(s->http, path, sql, strlen(sql), &status, &s->answer);
	if (err) {
		/* refused or not found: nothing was sent */
		*sent = err != -ECONNREFUSED && err != -EHOSTUNREACH;
		*why = first_line(&s->answer);
		return err;
	}
	if (status != 200) {
		*why = first_line(&s->answer);
		return -EPROTO;
	}
	return 0;
}

static int query(struct ch_sink *s, const char *sql, const char **why)
{
	bool sent;

	return request(s, "/", sql, NULL, &sent, why);
}

/* The table there, made when missing, its columns checked: 0; -EPROTO
 * or -EINVAL (*WHY: an answer, or a column that does not fit); -errno
 * when the server did not answer. */
static int setup_table(struct ch_sink *s, char *why, size_t len)
{
	const struct ch_url *u = &s->url;
	const char *w = NULL;
	char sql[4096];
	int err, n;

	snprintf(sql, sizeof(sql),
		 "SELECT name, type FROM system.columns WHERE database = '%s' AND table = '%s' "
		 "FORMAT TabSeparated", u->db, u->table);
	err = query(s, sql, &w);
	if (err) {
		snprintf(why, len, "%s", w ? w : "");
		return err;
	}
	if (s->answer.len) {
		/* It exists: every column of ours, with our type. */
		for (unsigned i = 0; i < ch_sink__n_columns; i++) {
			const char *name = ch_sink__columns[i][0], *type = ch_sink__columns[i][1];
			const char *p = s->answer.buf, *found = NULL;
			size_t nl = strlen(name);

			while (p && *p) {
				if (!strncmp(p, name, nl) && p[nl] == '\t') {
					found = p + nl + 1;
					break;
				}
				p = strchr(p, '\n');
				p = p ? p + 1 : NULL;
			}
			if (!found) {
				snprintf(why, len, "table %s.%s has no column %s (%s): it was not made "
					 "by cmon", u->db, u->table, name, type);
				return -EINVAL;
			}
			n = (int)strcspn(found, "\n");
			if ((size_t)n != strlen(type) || strncmp(found, type, (size_t)n)) {
				snprintf(why, len, "table %s.%s: column %s is %.*s, cmon writes %s",
					 u->db, u->table, name, n > 64 ? 64 : n, found, type);
				return -EINVAL;
			}
		}
		return 0;
	}
	snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS %s", u->db);
	err = query(s, sql, &w);
	if (!err) {
		n = snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS %s.%s (", u->db, u->table);
		for (unsigned i = 0; i < ch_sink__n_columns; i++)
			n += snprintf(sql + n, sizeof(sql) - (size_t)n, "%s%s %s", i ? ", " : "",
				      ch_sink__columns[i][0], ch_sink__columns[i][1]);
		/* per function, then time: "F over the last hour" reads one range */
		snprintf(sql + n, sizeof(sql) - (size_t)n,
			 ") ENGINE = MergeTree PARTITION BY toYYYYMMDD(ts) ORDER BY (function, ts)");
		err = query(s, sql, &w);
	}
	if (err)
		snprintf(why, len, "%s", w ? w : "");
	return err;
}

/* Did batch B land (an INSERT of it got no answer)?  1: yes (all of it),
 * 0: no, and it is not running; -EAGAIN: it still runs; -errno: no answer. */
static int batch_landed(struct ch_sink *s, const struct ch_batch *b, const char **why)
{
	char sql[512];
	unsigned long long n;
	int err;

	snprintf(sql, sizeof(sql), "SELECT count() FROM system.processes WHERE query_id = "
		 "'cmon-%016llx'", (unsigned long long)b->id);
	err = query(s, sql, why);
	if (err)
		return err;
	if (strtoull(s->answer.buf ? s->answer.buf : "0", NULL, 10))
		return -EAGAIN;
	snprintf(sql, sizeof(sql), "SELECT count() FROM %s.%s WHERE batch = %llu AND ts >= %u AND "
		 "ts <= %u", s->url.db, s->url.table, (unsigned long long)b->id, b->ts_min, b->ts_max);
	err = query(s, sql, why);
	if (err)
		return err;
	n = strtoull(s->answer.buf ? s->answer.buf : "0", NULL, 10);
	if (n && n != b->rows)
		/* one block is all or nothing: this is not ours to fix */
		log_warn("clickhouse %s: batch %016llx has %llu of its %u rows in the table",
			 ch_url__name(&s->url), (unsigned long long)b->id, n, b->rows);
	return n ? 1 : 0;
}

/* Send batch B: 0 once it is in the table, else -errno (*WHY). */
static int deliver(struct ch_sink *s, struct ch_batch *b, char *why, size_t len)
{
	const char *w = NULL;
	bool sent;
	int err;

	if (!s->ready) {
		err = setup_table(s, why, len);
		if (err)
			return err;
		s->ready = true;
	}
	if (b->maybe_sent) {
		err = batch_landed(s, b, &w);
		if (err == 1)
			return 0;
		if (err < 0) {
			snprintf(why, len, "%s", err == -EAGAIN ? "an earlier INSERT of the batch "
				 "still runs" : w ? w : "");
			return err;
		}
		b->maybe_sent = false;
	}
	strbuf__reset(&s->scratch);
	if (strbuf__printf(&s->scratch, "/?query_id=cmon-%016llx&query=", (unsigned long long)b->id) ||
	    http_client__escape(&s->scratch, "INSERT INTO ") ||
	    http_client__escape(&s->scratch, s->url.db) || strbuf__putc(&s->scratch, '.') ||
	    http_client__escape(&s->scratch, s->url.table) ||
	    http_client__escape(&s->scratch, " FORMAT JSONEachRow"))
		return -ENOMEM;
	err = request(s, s->scratch.buf, NULL, &b->body, &sent, &w);
	if (err) {
		if (sent)
			b->maybe_sent = true;
		snprintf(why, len, "%s", w ? w : "");
	}
	return err;
}

/* ------------------------------------------------------------- the thread */

static void seal_open(struct ch_sink *s)
{
	struct ch_batch *b = s->open;

	if (!b || !b->rows)
		return;
	s->open = NULL;
	if (s->tail)
		s->tail->next = b;
	else
		s->head = b;
	s->tail = b;
}

static void batch_free(struct ch_batch *b)
{
	if (!b)
		return;
	strbuf__release(&b->body);
	free(b);
}

/* Say a failure once while it lasts (the thread's; under MU). */
static void note_error(struct ch_sink *s, int err, const char *why)
{
	bool answered = err == -EPROTO || err == -EINVAL;
	char line[400];

	s->errors++;
	s->up = false;
	if (answered)
		snprintf(line, sizeof(line), "%s", why);
	else
		snprintf(line, sizeof(line), "no answer (%s%s%s)", strerror(-err), *why ? ": " : "", why);
	/* One line an outage: a server that does not answer is one state
	 * however it fails to (reset, refused, timed out); each different
	 * error it answers with is another. */
	if (s->last_error && (answered ? !strcmp(s->last_error, line)
				       : !strncmp(s->last_error, "no answer", 9)))
		return;
	free(s->last_error);
	s->last_error = strdup(line);
	log_warn("clickhouse %s: %s; %llu records waiting, retrying", ch_url__name(&s->url), line,
		 (unsigned long long)(s->accepted - s->confirmed));
}

static void timed_wait(struct ch_sink *s, uint64_t until_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(until_ns / 1000000000ull),
			       .tv_nsec = (long)(until_ns % 1000000000ull) };

	pthread_cond_timedwait(&s->cv, &s->mu, &ts);
}

static void *sender(void *arg)
{
	struct ch_sink *s = arg;
	uint64_t backoff = BACKOFF_MIN_NS, retry_at = 0;
	char why[512];

	pthread_mutex_lock(&s->mu);
	for (;;) {
		uint64_t now = clock__mono_ns(), flush_ns = s->url.flush_ms * 1000000ull;
		struct ch_batch *b;
		int err;

		if (s->open && s->open->rows && (s->stopping || now - s->open_since_ns >= flush_ns))
			seal_open(s);
		if (!s->head) {
			if (s->stopping)
				break;
			timed_wait(s, s->open && s->open->rows ? s->open_since_ns + flush_ns
							       : now + flush_ns);
			continue;
		}
		if (s->stopping && now >= s->give_up_ns)
			break;
		if (now < retry_at) {
			timed_wait(s, s->stopping && s->give_up_ns < retry_at ? s->give_up_ns
									      : retry_at);
			continue;
		}
		b = s->head;
		pthread_mutex_unlock(&s->mu);
		why[0] = '\0';
		err = deliver(s, b, why, sizeof(why));
		pthread_mutex_lock(&s->mu);
		if (err) {
			note_error(s, err, why);
			if (b->maybe_sent || err != -EAGAIN)
				s->retries++;
			retry_at = clock__mono_ns() + backoff;
			backoff = backoff * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : backoff * 2;
			continue;
		}
		if (s->last_error)
			log_warn("clickhouse %s: inserting again", ch_url__name(&s->url));
		free(s->last_error);
		s->last_error = NULL;
		s->up = true;
		backoff = BACKOFF_MIN_NS;
		retry_at = 0;
		s->head = b->next;
		if (!s->head)
			s->tail = NULL;
		s->confirmed = b->first + b->rows - 1;
		s->inserted += b->rows;
		s->bytes -= b->body.len;
		if (s->stopping)
			s->give_up_ns = clock__mono_ns() + s->url.linger_ms * 1000000ull;
		batch_free(b);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* ------------------------------------------------------------- rows */

#define PUT(sb, lit) strbuf__putn(sb, lit, sizeof(lit) - 1)

static int put_u64(struct strbuf *sb, uint64_t v)
{
	int err = strbuf__reserve(sb, DECIMAL_MAX);

	if (err)
		return err;
	sb->len = (size_t)(decimal__u64(sb->buf + sb->len, v) - sb->buf);
	sb->buf[sb->len] = '\0';
	return 0;
}

static int put_i64(struct strbuf *sb, int64_t v)
{
	int err = strbuf__reserve(sb, DECIMAL_MAX);

	if (err)
		return err;
	sb->len = (size_t)(decimal__i64(sb->buf + sb->len, v) - sb->buf);
	sb->buf[sb->len] = '\0';
	return 0;
}

/* A JSON text (a typed value) as a JSON string: "" for none. */
static int put_text(struct strbuf *sb, const char *json)
{
	return json_escape(sb, json ? json : "");
}

static bool has_exit(const struct call_record *r)
{
	return r->status == CALL_OK || r->status == CALL_TAILCALL || r->status == CALL_RAISED ||
	       r->status == CALL_YIELD || (r->status == CALL_LINE && r->line_timed);
}

/* REC as one JSONEachRow line of batch ID, row SEQ, into SB. */
static int format_row(struct ch_sink *s, struct strbuf *sb, const struct call_record *r,
		      uint64_t id, uint32_t seq)
{
	const struct call_typed *t = r->typed;
	bool exit = has_exit(r), ret = call_record__has_ret(r);
	int err = 0;

	err |= PUT(sb, "{\"host\":");
	err |= json_escape(sb, s->host);
	err |= PUT(sb, ",\"pid\":");
	err |= put_u64(sb, r->pid);
	err |= PUT(sb, ",\"tid\":");
	err |= put_u64(sb, r->tid);
	err |= PUT(sb, ",\"comm\":");
	err |= json_escape(sb, r->comm ? r->comm : "");
	err |= PUT(sb, ",\"function\":");
	err |= json_escape(sb, r->func ? r->func : "");
	err |= PUT(sb, ",\"module\":");
	err |= json_escape(sb, r->module ? r->module : "");
	err |= PUT(sb, ",\"cgroup\":");
	err |= json_escape(sb, s->cgroup ? s->cgroup : "");
	err |= PUT(sb, ",\"ts\":");
	err |= put_u64(sb, r->ts_ns / 1000000000ull);
	err |= PUT(sb, ",\"ts_ns\":");
	err |= put_u64(sb, r->ts_ns);
	err |= PUT(sb, ",\"latency_ns\":");
	err |= put_u64(sb, exit ? r->latency_ns : 0);
	err |= PUT(sb, ",\"status\":");
	err |= json_escape(sb, call_status__name(r->status));
	err |= PUT(sb, ",\"depth\":");
	err |= put_i64(sb, r->depth);
	err |= PUT(sb, ",\"rss_entry\":");
	err |= put_u64(sb, r->rss_entry);
	err |= PUT(sb, ",\"rss_exit\":");
	err |= put_u64(sb, exit ? r->rss_exit : 0);
	err |= PUT(sb, ",\"vms_entry\":");
	err |= put_u64(sb, r->vms_entry);
	err |= PUT(sb, ",\"vms_exit\":");
	err |= put_u64(sb, exit ? r->vms_exit : 0);
	err |= PUT(sb, ",\"args\":");
	err |= put_text(sb, t ? t->args : NULL);
	err |= PUT(sb, ",\"retval\":");
	err |= put_text(sb, t && ret && !t->returns_void ? t->retval : NULL);
	err |= PUT(sb, ",\"captures\":");
	err |= put_text(sb, t ? t->captures : NULL);
	err |= PUT(sb, ",\"regs\":[");
	for (int i = 0; i < 6 && r->status != CALL_LINE; i++) {
		if (i)
			err |= strbuf__putc(sb, ',');
		err |= put_i64(sb, r->args[i]);
	}
	err |= PUT(sb, "],\"ret\":");
	err |= put_i64(sb, ret ? r->ret : 0);
	err |= PUT(sb, ",\"sampled\":");
	if (r->sampled > 0 && r->sampled < 1)
		err |= strbuf__printf(sb, "%.4f", r->sampled);
	else
		err |= strbuf__putc(sb, '1');
	err |= PUT(sb, ",\"batch\":");
	err |= put_u64(sb, id);
	err |= PUT(sb, ",\"seq\":");
	err |= put_u64(sb, seq);
	err |= PUT(sb, "}\n");
	return err ? -ENOMEM : 0;
}

/* ------------------------------------------------------------- the sink */

static int ch_write(struct out_sink *os, const struct call_record *rec, uint32_t func_id)
{
	struct ch_sink *s = ch_of(os);
	struct ch_batch *b;
	uint32_t sec = (uint32_t)(rec->ts_ns / 1000000000ull);
	bool wake = false;
	int err;

	pthread_mutex_lock(&s->mu);
	if (!s->open) {
		b = calloc(1, sizeof(*b));
		if (!b) {
			pthread_mutex_unlock(&s->mu);
			return -ENOMEM;
		}
		b->id = s->next_id++;
		b->first = s->accepted + 1;
		b->ts_min = UINT32_MAX;
		s->open = b;
		s->open_since_ns = clock__mono_ns();
	}
	b = s->open;
	strbuf__reset(&s->row);
	err = format_row(s, &s->row, rec, b->id, b->rows);
	if (err) {
		pthread_mutex_unlock(&s->mu);
		return err;
	}
	if (s->bytes + s->row.len > s->url.buffer_bytes) {
		s->dropped++;
		pthread_mutex_unlock(&s->mu);
		return 1; /* counted here and by the caller, the output goes on */
	}
	if (strbuf__putn(&b->body, s->row.buf, s->row.len)) {
		pthread_mutex_unlock(&s->mu);
		return -ENOMEM;
	}
	s->bytes += s->row.len;
	b->rows++;
	s->accepted++;
	if (sec < b->ts_min)
		b->ts_min = sec;
	if (sec > b->ts_max)
		b->ts_max = sec;
	if (b->rows >= s->url.batch_rows) {
		seal_open(s);
		wake = true;
	}
	pthread_mutex_unlock(&s->mu);
	if (wake)
		pthread_cond_signal(&s->cv);
	return 0;
}

static uint64_t ch_bytes(const struct out_sink *os)
{
	struct ch_sink *s = ch_of(os);
	uint64_t n;

	pthread_mutex_lock(&s->mu);
	n = s->accepted;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* The end: what is held goes out, retried for linger_ms without progress. */
static int ch_finish(struct out_sink *os)
{
	struct ch_sink *s = ch_of(os);

	if (!s->thread_started)
		return 0;
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	s->give_up_ns = clock__mono_ns() + s->url.linger_ms * 1000000ull;
	pthread_mutex_unlock(&s->mu);
	pthread_cond_signal(&s->cv);
	pthread_join(s->thread, NULL);
	s->thread_started = false;
	pthread_mutex_lock(&s->mu);
	seal_open(s); /* a thread that gave up left it */
	for (struct ch_batch *b = s->head; b; b = b->next)
		s->lost += b->rows;
	if (s->lost)
		log_error("clickhouse %s: %llu records not inserted: %s", ch_url__name(&s->url),
			  (unsigned long long)s->lost, s->last_error ? s->last_error : "gave up");
	pthread_mutex_unlock(&s->mu);
	return s->lost ? -EIO : 0;
}

static int ch_flush(struct out_sink *os, uint64_t *on_disk)
{
	struct ch_sink *s = ch_of(os);
	int ret;

	pthread_mutex_lock(&s->mu);
	*on_disk = s->confirmed;
	if (s->stopping && !s->thread_started && s->head)
		ret = -EIO; /* finished: what is left is lost */
	else
		ret = s->confirmed < s->accepted ? 1 : 0;
	pthread_mutex_unlock(&s->mu);
	return ret;
}

static void ch_free(struct out_sink *os)
{
	struct ch_sink *s = ch_of(os);
	struct ch_batch *b, *next;

	if (!s)
		return;
	if (s->thread_started)
		ch_finish(os);
	for (b = s->head; b; b = next) {
		next = b->next;
		batch_free(b);
	}
	batch_free(s->open);
	http_client__free(s->http);
	ch_url__free(&s->url);
	strbuf__release(&s->row);
	strbuf__release(&s->scratch);
	strbuf__release(&s->answer);
	free(s->cgroup);
	free(s->last_error);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static const struct out_sink_ops ch_sink_ops = {
	.write = ch_write,
	.bytes = ch_bytes,
	.finish = ch_finish,
	.flush = ch_flush,
	.free = ch_free,
};

bool ch_sink__is(const struct out_sink *s)
{
	return s && s->ops == &ch_sink_ops;
}

void ch_sink__stats(const struct out_sink *os, struct ch_stats *st)
{
	struct ch_sink *s = ch_of(os);

	pthread_mutex_lock(&s->mu);
	st->accepted = s->accepted;
	st->inserted = s->inserted;
	st->dropped = s->dropped;
	st->lost = s->lost;
	st->pending = s->accepted - s->confirmed - s->lost;
	st->buffered_bytes = s->bytes;
	st->retries = s->retries;
	st->errors = s->errors;
	st->up = s->up;
	pthread_mutex_unlock(&s->mu);
}

int ch_sink__open(const struct ch_sink_opts *o, struct out_sink **out)
{
	struct ch_sink *s;
	pthread_condattr_t ca;
	char why[512] = "";
	uint64_t seed = 0;
	int err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base.ops = &ch_sink_ops;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	err = ch_url__parse(o->url, &s->url, why, sizeof(why));
	if (err) {
		log_error("bad ClickHouse URL: %s", why);
		goto fail;
	}
	if (o->cgroup && !(s->cgroup = strdup(o->cgroup))) {
		err = -ENOMEM;
		goto fail;
	}
	if (gethostname(s->host, sizeof(s->host) - 1))
		snprintf(s->host, sizeof(s->host), "unknown");
	/* Batch ids: unique across hosts and runs without coordination. */
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = clock__wall_ns() ^ ((uint64_t)getpid() << 32);
	s->next_id = seed & ~0xffffffull; /* 2^24 batches before the low bits carry */
	err = http_client__new(&(struct http_client_opts){ .host = s->url.host,
							    .port = s->url.port,
							    .user = s->url.user,
							    .password = s->url.password },
			       &s->http);
	if (err)
		goto fail;
	err = setup_table(s, why, sizeof(why));
	if (!err) {
		s->ready = true;
		s->up = true;
	} else if (err == -EPROTO || err == -EINVAL || !o->defer_setup) {
		if (err == -EPROTO || err == -EINVAL)
			log_error("clickhouse %s: %s", ch_url__name(&s->url), why);
		else
			log_error("clickhouse %s: no answer (%s%s%s)", ch_url__name(&s->url),
				  strerror(-err), why[0] ? ": " : "", why);
		goto fail;
	} else {
		note_error(s, err, why); /* set up by the thread once it answers */
	}
	s->defer_setup = o->defer_setup;
	err = -pthread_create(&s->thread, NULL, sender, s);
	if (err) {
		log_error("cannot start the ClickHouse sender: %s", strerror(-err));
		goto fail;
	}
	s->thread_started = true;
	*out = &s->base;
	return 0;
fail:
	ch_free(&s->base);
	return err;
}
