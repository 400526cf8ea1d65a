/*
 * http_client.h: HTTP POSTs to one server through libcurl, loaded when the
 * first client is made (dlopen), so that `cmon trace` carries libcurl and
 * its TLS stack in memory only when an output needs them.  A client makes
 * a connection per request (libcurl never resends one by itself) and is
 * used by one thread at a time.
 */
#ifndef CMON_NET_HTTP_CLIENT_H
#define CMON_NET_HTTP_CLIENT_H

#include <stddef.h>
#include "core/strbuf.h"

struct http_client;

struct http_client_opts {
	const char *host;  /* a name or an address */
	unsigned port;
	const char *user;  /* basic authentication; NULL: none */
	const char *password;
	unsigned connect_timeout_ms; /* 0: 2000 */
	unsigned timeout_ms;         /* the whole request; 0: 10000 */
};

/* A client (nothing is sent yet).  0, or -errno with one error line
 * (-ENOENT: libcurl could not be loaded). */
int http_client__new(const struct http_client_opts *o, struct http_client **out);

/*
 * POST BODY (LEN bytes; NULL: none) to PATH (path and query, escaped by
 * the caller: http_client__escape).  A response came: 0, its status in
 * *STATUS and its body in RESP (emptied first; cut past 64 KiB).  None
 * came: -ECONNREFUSED (nothing listens), -ETIMEDOUT, -EHOSTUNREACH (name or
 * route), -EIO (anything else), with RESP holding curl's reason.
 */
int http_client__post(struct http_client *c, const char *path, const void *body, size_t len,
		      long *status, struct strbuf *resp);

/* S percent-encoded for a query string, appended to SB.  0 or -ENOMEM. */
int http_client__escape(struct strbuf *sb, const char *s);

void http_client__free(struct http_client *c); /* NULL fine */

#endif
