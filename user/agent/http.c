// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * http.c: the agent's HTTP endpoint on libmicrohttpd.  cmon binds the
 * socket itself (one clear error line for a busy or forbidden port, and the
 * real port when 0 was asked for) and hands it to libmicrohttpd, which
 * serves it from one internal thread (epoll).
 *
 * Any local user can connect, so no client may keep a scraper out:
 *  - a request's line and headers must arrive within HEADER_S of the
 *    connection or of the request line, its answer be taken within
 *    RESPONSE_S, and an idle keep-alive connection lasts IDLE_S: a watchdog
 *    thread shuts down the sockets past their deadline (libmicrohttpd's own
 *    timeout is only for idleness, which a client sending a header line
 *    every few seconds never is);
 *  - at PER_ADDR_MAX connections from one address, or CONN_SOFT_MAX in
 *    all, a new connection evicts the oldest one that is not being
 *    answered (idle, or still sending its headers), so a scraper's fresh
 *    connection always gets in;
 *  - requests are small GETs: 8 KiB of memory per connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include "agent/http.h"
#include "agent/privs.h"
#include "core/log.h"
#include "core/clock.h"

#define HEADER_S 5.0      /* request line and headers, from connect or the line */
#define RESPONSE_S 30.0   /* the answer taken by the client */
#define IDLE_S 10         /* keep-alive between requests */
#define PER_ADDR_MAX 32u  /* connections from one address before evicting */
#define CONN_SOFT_MAX 512u /* connections in all before evicting */
#define CONN_HARD_MAX 1024u /* libmicrohttpd refuses beyond */

enum conn_phase { CONN_WAITING, CONN_ANSWERING };

/* One client connection, from libmicrohttpd's "started" to "closed". */
struct conn {
	struct conn *prev, *next; /* oldest first */
	struct sockaddr_storage addr;
	int fd;
	enum conn_phase phase;
	double deadline;          /* monotonic s */
	bool evicted;             /* shut down, close pending */
	struct MHD_Connection *mc;
	bool refused;             /* answered by refuse_bad_length() */
};

struct agent_http {
	struct MHD_Daemon *d;
	agent_http_fn fn;
	void *ctx;
	char addr[64];
	/* Connections and the watchdog, under LOCK. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t watchdog;
	bool have_watchdog, stopping;
	bool unprivileged;
	struct conn *oldest, *newest;
	unsigned live;            /* not evicted */
	uint64_t evictions, timeouts;
};

static bool same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

/* Shut C's socket down: libmicrohttpd sees the end and closes it.  The fd
 * is still libmicrohttpd's: it closes it only after telling us (under the
 * lock), so it cannot have been reused.  Under the lock. */
static void evict(struct agent_http *h, struct conn *c)
{
	if (c->evicted)
		return;
	shutdown(c->fd, SHUT_RDWR);
	c->evicted = true;
	h->live--;
}

/* The oldest connection not being answered (from ADDR, or any), or NULL. */
static struct conn *oldest_waiting(struct agent_http *h, const struct sockaddr *addr)
{
	for (struct conn *c = h->oldest; c; c = c->next)
		if (!c->evicted && c->phase == CONN_WAITING &&
		    (!addr || same_host((struct sockaddr *)&c->addr, addr)))
			return c;
	return NULL;
}

/* A new connection from ADDR: make room, or refuse it. */
/* libmicrohttpd starts its thread itself: the first call on it drops its
 * privileges, before any client byte is parsed there.  0: dropped (or not
 * asked to), -errno: refuse. */
static int drop_this_thread(const struct agent_http *h, const char *name)
{
	static __thread int done; /* 1 dropped, -errno failed */

	if (!h->unprivileged)
		return 0;
	if (!done) {
		int err = agent_privs__drop_thread();

		done = err ? err : 1;
		pthread_setname_np(pthread_self(), name);
	}
	return done < 0 ? done : 0;
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct agent_http *h = cls;
	enum MHD_Result ret = MHD_YES;
	unsigned from_addr = 0;
	struct conn *victim;

	(void)len;
	if (drop_this_thread(h, "cmon-http"))
		return MHD_NO;
	pthread_mutex_lock(&h->lock);
	for (struct conn *c = h->oldest; c; c = c->next)
		if (!c->evicted && same_host((struct sockaddr *)&c->addr, addr))
			from_addr++;
	if (from_addr >= PER_ADDR_MAX) {
		victim = oldest_waiting(h, addr);
		if (victim) {
			evict(h, victim);
			h->evictions++;
		} else {
			ret = MHD_NO;
		}
	}
	if (ret == MHD_YES && h->live >= CONN_SOFT_MAX) {
		victim = oldest_waiting(h, NULL);
		if (victim) {
			evict(h, victim);
			h->evictions++;
		} else {
			ret = MHD_NO;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct agent_http *h = cls;
	struct conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd, *addr;

		c = calloc(1, sizeof(*c));
		fd = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		addr = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (!c || !fd || !addr) {
			free(c); /* not watched: libmicrohttpd's idle timeout still applies */
			return;
		}
		c->fd = fd->connect_fd;
		c->mc = mc;
		memcpy(&c->addr, addr->client_addr,
		       addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								: sizeof(struct sockaddr_in));
		c->phase = CONN_WAITING;
		c->deadline = clock__mono_s() + HEADER_S;
		pthread_mutex_lock(&h->lock);
		c->prev = h->newest;
		if (h->newest)
			h->newest->next = c;
		else
			h->oldest = c;
		h->newest = c;
		h->live++;
		pthread_mutex_unlock(&h->lock);
		*socket_context = c;
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&h->lock);
	if (!c->evicted)
		h->live--;
	if (c->prev)
		c->prev->next = c->next;
	else
		h->oldest = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		h->newest = c->prev;
	pthread_mutex_unlock(&h->lock);
	*socket_context = NULL;
	free(c);
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

static void set_phase(struct agent_http *h, struct MHD_Connection *mc, enum conn_phase phase,
		      double within)
{
	struct conn *c = conn_of(mc);

	if (!c)
		return;
	pthread_mutex_lock(&h->lock);
	c->phase = phase;
	c->deadline = clock__mono_s() + within;
	pthread_mutex_unlock(&h->lock);
}

/* The request line is in: its headers have HEADER_S from now. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *mc)
{
	(void)uri;
	set_phase(cls, mc, CONN_WAITING, HEADER_S);
	return NULL;
}

/* Answered: the next request may come while the connection is idle. */
static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)con_cls;
	(void)toe;
	set_phase(cls, mc, CONN_WAITING, IDLE_S + HEADER_S);
}

/*
 * libmicrohttpd 0.9.75 answers a Content-Length that does not parse (400)
 * or overflows (413) with its header block twice: its error path builds
 * the header, and the state it set is then overwritten, so the header is
 * built again (fixed upstream after 0.9.75; Debian 12 ships 0.9.75).  No
 * callback of ours runs in between, but its log line does, from the
 * thread handling that connection: the one connection whose headers are
 * in (REQUEST_HEADER_SIZE known) that we have not answered.  It gets the
 * answer once from here, and its socket is shut down: libmicrohttpd's
 * own copy then fails to send and the connection closes.
 */
static void refuse_bad_length(struct agent_http *h, bool too_large)
{
	static const char too_large_msg[] = "HTTP/1.1 413 Content Too Large\r\n"
					    "Connection: close\r\n"
					    "Content-Type: text/plain; charset=utf-8\r\n"
					    "Content-Length: 25\r\n\r\n"
					    "Content-Length too large\n";
	static const char bad_msg[] = "HTTP/1.1 400 Bad Request\r\n"
				      "Connection: close\r\n"
				      "Content-Type: text/plain; charset=utf-8\r\n"
				      "Content-Length: 31\r\n\r\n"
				      "Content-Length is not a number\n";
	struct conn *found = NULL;
	unsigned n = 0;

	pthread_mutex_lock(&h->lock);
	for (struct conn *c = h->oldest; c; c = c->next) {
		if (c->refused || c->evicted || c->phase != CONN_WAITING ||
		    !MHD_get_connection_info(c->mc, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE))
			continue;
		found = c;
		n++;
	}
	if (n == 1) {
		const char *m = too_large ? too_large_msg : bad_msg;
		size_t len = too_large ? sizeof(too_large_msg) - 1 : sizeof(bad_msg) - 1;

		found->refused = true;
		(void)!send(found->fd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		shutdown(found->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&h->lock);
}

/* libmicrohttpd's own messages: only the ones above are acted on. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)ap;
	if (strstr(fmt, "Content-Length' header"))
		refuse_bad_length(cls, strstr(fmt, "Too large value") != NULL);
}

static void *watchdog(void *arg)
{
	struct agent_http *h = arg;

	drop_this_thread(h, "cmon-watchdog"); /* it reads no client byte */

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		struct timespec ts;
		double now = clock__mono_s();

		for (struct conn *c = h->oldest; c; c = c->next) {
			if (!c->evicted && c->deadline < now) {
				evict(h, c);
				h->timeouts++;
			}
		}
		ts = clock__wall_in_ms(250);
		pthread_cond_timedwait(&h->wake, &h->lock, &ts);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static int parse_port(const char *s, in_port_t *port)
{
	char *end;
	long v;

	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 65535)
		return -EINVAL;
	*port = htons((uint16_t)v);
	return 0;
}

int agent_http__parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	const char *colon;
	char host[64];
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = 0;
		in6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return -EINVAL;
		*len = sizeof(*in6);
		return parse_port(close + 2, &in6->sin6_port);
	}
	colon = strrchr(s, ':');
	in4->sin_family = AF_INET;
	*len = sizeof(*in4);
	if (!colon) {
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return parse_port(s, &in4->sin_port);
	}
	hl = (size_t)(colon - s);
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = 0;
	if (!strcmp(host, "localhost") || !*host)
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
		return -EINVAL;
	return parse_port(colon + 1, &in4->sin_port);
}

const char *agent_http__format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in4->sin_port));
	}
	return buf;
}

int agent_http__is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, char *body, size_t len,
			     const char *type)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct agent_http *h = cls;
	const char *type = "text/plain; charset=utf-8";
	struct mbuf body = {};
	char *text;
	size_t len;
	int status;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("GET only\n"), 9, type);
	/* A GET has no body: answer at the first call, within RESPONSE_S. */
	set_phase(h, c, CONN_ANSWERING, RESPONSE_S);
	status = h->fn(h->ctx, url, &body, &type);
	if (body.err) {
		mbuf__release(&body);
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, strdup("out of memory\n"), 14,
			     "text/plain; charset=utf-8");
	}
	text = mbuf__take(&body, &len);
	if (!text)
		return MHD_NO;
	return reply(c, (unsigned)status, text, len, type);
}

struct agent_http *agent_http__start(const char *listen_addr, agent_http_fn fn, void *ctx,
				     bool unprivileged)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct agent_http *h = NULL;
	int fd = -1, one = 1, err;

	err = agent_http__parse_addr(listen_addr, &ss, &len);
	if (err) {
		log_error("--listen %s: not HOST:PORT (an IPv4 address, [IPv6] or localhost)",
			  listen_addr);
		goto fail;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = -errno;
		log_error("socket: %s", strerror(errno));
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
		err = -errno;
		log_error("cannot listen on %s: %s", listen_addr, strerror(errno));
		goto fail;
	}
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	h = calloc(1, sizeof(*h));
	if (!h) {
		err = -ENOMEM;
		goto fail;
	}
	h->fn = fn;
	h->ctx = ctx;
	h->unprivileged = unprivileged;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->wake, NULL);
	agent_http__format_addr((struct sockaddr *)&ss, h->addr, sizeof(h->addr));
	if (!agent_http__is_loopback((struct sockaddr *)&ss))
		log_warn("serving metrics on %s, beyond this machine", h->addr);
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG |
					(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				0 /* port: the socket's */, on_accept, h, on_request, h,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, CONN_HARD_MAX,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)8192,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				MHD_OPTION_URI_LOG_CALLBACK, on_request_line, h,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
				MHD_OPTION_END);
	if (!h->d) {
		err = -EIO;
		log_error("cannot start the HTTP server on %s", h->addr);
		goto fail;
	}
	fd = -1; /* libmicrohttpd's now */
	err = -pthread_create(&h->watchdog, NULL, watchdog, h);
	if (err) {
		log_error("cannot start the HTTP watchdog: %s", strerror(-err));
		goto fail;
	}
	h->have_watchdog = true;
	return h;
fail:
	agent_http__stop(h);
	if (fd >= 0)
		close(fd);
	errno = -err;
	return NULL;
}

const char *agent_http__address(const struct agent_http *h) { return h->addr; }

void agent_http__stats(struct agent_http *h, uint64_t *evictions, uint64_t *timeouts)
{
	pthread_mutex_lock(&h->lock);
	*evictions = h->evictions;
	*timeouts = h->timeouts;
	pthread_mutex_unlock(&h->lock);
}

void agent_http__stop(struct agent_http *h)
{
	if (!h)
		return;
	if (h->d)
		MHD_stop_daemon(h->d); /* closes the listen socket and connections */
	if (h->have_watchdog) {
		pthread_mutex_lock(&h->lock);
		h->stopping = true;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->watchdog, NULL);
	}
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->wake);
	free(h);
}
