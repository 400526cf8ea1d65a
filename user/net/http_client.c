// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * http_client.c: see http_client.h.  libcurl's functions are looked up
 * once (dlopen of the soname Debian's libcurl4 installs); its headers give
 * the types and option numbers, which are part of its stable ABI.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include "core/log.h"
#include "http_client.h"

#define RESP_MAX (64u << 10)

static struct {
	int err; /* 0: loaded */
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} curl;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void load_curl(void)
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		log_error("cannot load libcurl (package libcurl4): %s", dlerror());
		curl.err = -ENOENT;
		return;
	}
#define SYM(field, name)                                                       \
	do {                                                                   \
		*(void **)&curl.field = dlsym(h, name);                        \
		if (!curl.field) {                                             \
			log_error("libcurl has no %s", name);                  \
			curl.err = -ENOENT;                                    \
			return;                                                \
		}                                                              \
	} while (0)
	SYM(global_init, "curl_global_init");
	SYM(easy_init, "curl_easy_init");
	SYM(easy_setopt, "curl_easy_setopt");
	SYM(easy_perform, "curl_easy_perform");
	SYM(easy_getinfo, "curl_easy_getinfo");
	SYM(easy_cleanup, "curl_easy_cleanup");
	SYM(easy_strerror, "curl_easy_strerror");
	SYM(slist_append, "curl_slist_append");
	SYM(slist_free_all, "curl_slist_free_all");
#undef SYM
	/* once, before any thread uses it (not thread-safe in older libcurl) */
	if (curl.global_init(CURL_GLOBAL_DEFAULT)) {
		log_error("libcurl failed to start");
		curl.err = -EIO;
	}
}

struct http_client {
	CURL *h;
	struct curl_slist *headers;
	char *base; /* http://HOST:PORT */
	char errbuf[CURL_ERROR_SIZE];
	struct strbuf *resp; /* the current request's */
	char *url;
	size_t url_cap;
};

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
	struct http_client *c = ctx;
	size_t len = size * n, room;

	room = c->resp->len < RESP_MAX ? RESP_MAX - c->resp->len : 0;
	if (room && strbuf__putn(c->resp, p, len < room ? len : room))
		return 0; /* out of memory: the transfer fails */
	return len;
}

int http_client__new(const struct http_client_opts *o, struct http_client **out)
{
	struct http_client *c;
	bool v6 = strchr(o->host, ':') != NULL;
	int n;

	*out = NULL;
	pthread_once(&curl_once, load_curl);
	if (curl.err)
		return curl.err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	n = asprintf(&c->base, v6 ? "http://[%s]:%u" : "http://%s:%u", o->host, o->port);
	c->h = n < 0 ? NULL : curl.easy_init();
	/* "Expect:" off: no round trip before a large body */
	c->headers = c->h ? curl.slist_append(NULL, "Expect:") : NULL;
	if (!c->headers) {
		if (n < 0)
			c->base = NULL;
		http_client__free(c);
		return -ENOMEM;
	}
	curl.easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM */
	curl.easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(o->connect_timeout_ms ? o->connect_timeout_ms : 2000));
	curl.easy_setopt(c->h, CURLOPT_TIMEOUT_MS, (long)(o->timeout_ms ? o->timeout_ms : 10000));
	/* A fresh connection per request: on a kept one that died, libcurl
	 * sends a POST again by itself, and an INSERT must be sent once
	 * unless its caller decides otherwise (clickhouse.c asks first). */
	curl.easy_setopt(c->h, CURLOPT_FORBID_REUSE, 1L);
	curl.easy_setopt(c->h, CURLOPT_FRESH_CONNECT, 1L);
	curl.easy_setopt(c->h, CURLOPT_HTTPHEADER, c->headers);
	curl.easy_setopt(c->h, CURLOPT_ERRORBUFFER, c->errbuf);
	curl.easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_data);
	curl.easy_setopt(c->h, CURLOPT_WRITEDATA, c);
	curl.easy_setopt(c->h, CURLOPT_PROXY, ""); /* never through an environment's proxy */
	if (o->user) {
		curl.easy_setopt(c->h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl.easy_setopt(c->h, CURLOPT_USERNAME, o->user);
		curl.easy_setopt(c->h, CURLOPT_PASSWORD, o->password ? o->password : "");
	}
	*out = c;
	return 0;
}

static int curl_errno(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

int http_client__post(struct http_client *c, const char *path, const void *body, size_t len,
		      long *status, struct strbuf *resp)
{
	size_t need = strlen(c->base) + strlen(path) + 1;
	CURLcode rc;

	strbuf__reset(resp);
	*status = 0;
	if (need > c->url_cap) {
		char *u = realloc(c->url, need);

		if (!u)
			return -ENOMEM;
		c->url = u;
		c->url_cap = need;
	}
	snprintf(c->url, need, "%s%s", c->base, path);
	c->resp = resp;
	c->errbuf[0] = '\0';
	curl.easy_setopt(c->h, CURLOPT_URL, c->url);
	curl.easy_setopt(c->h, CURLOPT_POST, 1L);
	curl.easy_setopt(c->h, CURLOPT_POSTFIELDS, body ? (const char *)body : "");
	curl.easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
	rc = curl.easy_perform(c->h);
	c->resp = NULL;
	if (rc != CURLE_OK) {
		strbuf__reset(resp);
		strbuf__puts(resp, c->errbuf[0] ? c->errbuf : curl.easy_strerror(rc));
		return curl_errno(rc);
	}
	curl.easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, status);
	return 0;
}

int http_client__escape(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		int err;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("-_.~", ch)) {
			err = strbuf__putc(sb, (char)ch);
		} else {
			char e[3] = { '%', hex[ch >> 4], hex[ch & 15] };

			err = strbuf__putn(sb, e, 3);
		}
		if (err)
			return err;
	}
	return 0;
}

void http_client__free(struct http_client *c)
{
	if (!c)
		return;
	if (c->h)
		curl.easy_cleanup(c->h);
	if (c->headers)
		curl.slist_free_all(c->headers);
	free(c->base);
	free(c->url);
	free(c);
}
