/*
 * http.h: the agent's HTTP endpoint, served by libmicrohttpd from a thread
 * of its own.  Only GET and HEAD; the handler runs on that thread and must
 * lock whatever it shares with the main loop.
 */
#ifndef CMON_AGENT_HTTP_H
#define CMON_AGENT_HTTP_H

#include <stdint.h>
#include <sys/socket.h>
#include "agent/metrics.h"

/* Fill BODY for PATH (query string removed) and return the HTTP status
 * (200, 404, 500...); *CONTENT_TYPE may be set to a static string. */
typedef int (*agent_http_fn)(void *ctx, const char *path, struct mbuf *body,
			     const char **content_type);

/*
 * "HOST:PORT" with HOST an IPv4 address, "[IPv6]" or "localhost"; a bare
 * "PORT" means 127.0.0.1.  No name lookups.  0 or -EINVAL.
 */
int agent_http__parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len);

/* "127.0.0.1:9464", "[::1]:9464" into BUF (LEN bytes). */
const char *agent_http__format_addr(const struct sockaddr *sa, char *buf, size_t len);

/* Is the address a loopback one (127.0.0.0/8, ::1)? */
int agent_http__is_loopback(const struct sockaddr *sa);

struct agent_http;

/* Bind LISTEN and serve.  UNPRIVILEGED: the server's threads give up their
 * uid and every capability (agent_privs__drop_thread) before they read a
 * byte from a client, named "cmon-http" and "cmon-watchdog"; a thread that
 * cannot drop refuses every connection.  NULL and errno (EADDRINUSE,
 * EACCES, EINVAL ...), after one error line. */
struct agent_http *agent_http__start(const char *listen, agent_http_fn fn, void *ctx,
				     bool unprivileged);

/* The bound address ("127.0.0.1:40123" for a port 0 request). */
const char *agent_http__address(const struct agent_http *h);

/* Connections closed by the agent: EVICTIONS to make room for new
 * clients, TIMEOUTS for requests too slow to arrive or to be read. */
void agent_http__stats(struct agent_http *h, uint64_t *evictions, uint64_t *timeouts);

/* Stop serving: waits for a running request; closes the socket.  NULL fine. */
void agent_http__stop(struct agent_http *h);

#endif
