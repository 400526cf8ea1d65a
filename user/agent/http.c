// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * http.c: the agent's HTTP endpoint on libmicrohttpd.  cmon binds the
 * socket itself (one clear error line for a busy or forbidden port, and the
 * real port when 0 was asked for) and hands it to libmicrohttpd, which
 * serves it from one internal thread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>
#include "agent/http.h"
#include "core/log.h"

struct agent_http {
	struct MHD_Daemon *d;
	agent_http_fn fn;
	void *ctx;
	char addr[64];
};

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
	/* A GET has no body: answer at the first call. */
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

struct agent_http *agent_http__start(const char *listen_addr, agent_http_fn fn, void *ctx)
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
	agent_http__format_addr((struct sockaddr *)&ss, h->addr, sizeof(h->addr));
	if (!agent_http__is_loopback((struct sockaddr *)&ss))
		log_warn("serving metrics on %s, beyond this machine", h->addr);
	/* A few connections at a time, short timeouts: a scraper, not the web. */
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
					(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				0 /* port: the socket's */, NULL, NULL, on_request, h,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)16,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				MHD_OPTION_END);
	if (!h->d) {
		err = -EIO;
		log_error("cannot start the HTTP server on %s", h->addr);
		goto fail;
	}
	return h;
fail:
	free(h);
	if (fd >= 0)
		close(fd);
	errno = -err;
	return NULL;
}

const char *agent_http__address(const struct agent_http *h) { return h->addr; }

void agent_http__stop(struct agent_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d); /* closes the listen socket too */
	free(h);
}
