// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ch_url.c: see ch_url.h. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ch_url.h"

#define PREFIX "clickhouse://"

bool ch_url__is(const char *s)
{
	return s && !strncmp(s, PREFIX, sizeof(PREFIX) - 1);
}

static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool ident(const char *s, size_t n)
{
	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* N bytes of S percent-decoded, or NULL (errno EINVAL: a bad escape). */
static char *decode(const char *s, size_t n)
{
	char *d = malloc(n + 1), *o = d;

	if (!d)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%') {
			int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
			int lo = hi >= 0 ? hexval(s[i + 2]) : -1;

			if (lo < 0 || (hi == 0 && lo == 0)) {
				free(d);
				errno = EINVAL;
				return NULL;
			}
			*o++ = (char)(hi << 4 | lo);
			i += 2;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return d;
}

static int number(const char *v, uint64_t lo, uint64_t hi, bool size, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -EINVAL;
	if (size && *end) {
		unsigned shift = *end == 'k' || *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;

		if (!shift || end[1] || n > (UINT64_MAX >> shift))
			return -EINVAL;
		n <<= shift;
		end++;
	}
	if (*end || n < lo || n > hi)
		return -EINVAL;
	*out = n;
	return 0;
}

static int read_password(const char *path, char **out, char *why, size_t len)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err;

	if (!f) {
		err = -errno;
		snprintf(why, len, "cannot read password_file %s: %s", path, strerror(-err));
		return err;
	}
	n = getline(&line, &cap, f);
	fclose(f);
	if (n < 0) {
		free(line);
		line = strdup(""); /* an empty file: an empty password */
		if (!line)
			return -ENOMEM;
		n = 0;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	*out = line;
	return 0;
}

static int option(struct ch_url *u, const char *k, size_t kn, const char *v, char *why,
		  size_t len)
{
	uint64_t n;

#define IS(name) (kn == sizeof(name) - 1 && !strncmp(k, name, kn))
	if (IS("password_file")) {
		free(u->password);
		u->password = NULL;
		return read_password(v, &u->password, why, len);
	}
	if (IS("batch")) {
		if (number(v, 1, 100000, false, &n))
			return fail(why, len, "batch must be 1 to 100000 rows");
		u->batch_rows = (unsigned)n;
	} else if (IS("flush_ms")) {
		if (number(v, 10, 60000, false, &n))
			return fail(why, len, "flush_ms must be 10 to 60000");
		u->flush_ms = (unsigned)n;
	} else if (IS("buffer")) {
		if (number(v, 1u << 20, 16ull << 30, true, &n))
			return fail(why, len, "buffer must be 1M to 16G bytes");
		u->buffer_bytes = n;
	} else if (IS("linger_ms")) {
		if (number(v, 0, 600000, false, &n))
			return fail(why, len, "linger_ms must be 0 to 600000");
		u->linger_ms = (unsigned)n;
	} else {
		return fail(why, len, "unknown option '%.*s' (password_file, batch, flush_ms, "
			    "buffer, linger_ms)", (int)(kn > 40 ? 40 : kn), k);
	}
#undef IS
	return 0;
}

/* The query string Q: KEY=VALUE pairs joined by '&', values decoded. */
static int options(struct ch_url *u, const char *q, char *why, size_t len)
{
	while (*q) {
		const char *amp = strchr(q, '&'), *end = amp ? amp : q + strlen(q);
		const char *eq = memchr(q, '=', (size_t)(end - q));
		char *v;
		int err;

		if (!eq)
			return fail(why, len, "option '%.*s' has no value", (int)(end - q > 40 ? 40 : end - q), q);
		v = decode(eq + 1, (size_t)(end - eq - 1));
		if (!v)
			return errno == ENOMEM ? -ENOMEM : fail(why, len, "bad %%-escape in an option");
		err = option(u, q, (size_t)(eq - q), v, why, len);
		free(v);
		if (err)
			return err;
		q = amp ? amp + 1 : end;
	}
	return 0;
}

int ch_url__parse(const char *s, struct ch_url *u, char *why, size_t len)
{
	const char *p, *at, *slash, *hostend, *q, *dot, *path_end;
	unsigned long port = 8123;

	memset(u, 0, sizeof(*u));
	u->batch_rows = 10000;
	u->flush_ms = 1000;
	u->buffer_bytes = 64ull << 20;
	u->linger_ms = 5000;
	if (!ch_url__is(s))
		return fail(why, len, "not a clickhouse:// URL");
	p = s + sizeof(PREFIX) - 1;
	slash = strchr(p, '/');
	if (!slash)
		return fail(why, len, "no /DB.TABLE after the host");
	at = memchr(p, '@', (size_t)(slash - p));
	if (at) {
		const char *colon = memchr(p, ':', (size_t)(at - p));

		u->user = decode(p, (size_t)((colon ? colon : at) - p));
		if (colon && u->user)
			u->password = decode(colon + 1, (size_t)(at - colon - 1));
		if (!u->user || (colon && !u->password))
			return errno == ENOMEM ? -ENOMEM : fail(why, len, "bad %%-escape in the user");
		if (!u->user[0])
			return fail(why, len, "an empty user name");
		p = at + 1;
	}
	if (*p == '[') { /* [IPv6] */
		const char *close = memchr(p, ']', (size_t)(slash - p));

		if (!close || close == p + 1)
			return fail(why, len, "bad [address]");
		u->host = strndup(p + 1, (size_t)(close - p - 1));
		hostend = close + 1;
		if (hostend != slash && *hostend != ':')
			return fail(why, len, "bad [address]");
	} else {
		hostend = memchr(p, ':', (size_t)(slash - p));
		if (!hostend)
			hostend = slash;
		u->host = strndup(p, (size_t)(hostend - p));
	}
	if (!u->host)
		return -ENOMEM;
	if (!u->host[0])
		return fail(why, len, "no host");
	for (const char *c = u->host; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr(".-_:", *c))
			return fail(why, len, "bad host name");
	if (*hostend == ':') {
		char *end;

		if (!isdigit((unsigned char)hostend[1]))
			return fail(why, len, "bad port");
		port = strtoul(hostend + 1, &end, 10);
		if (end != slash || port == 0 || port > 65535)
			return fail(why, len, "bad port (1-65535)");
	}
	u->port = (unsigned)port;
	q = strchr(slash, '?');
	path_end = q ? q : slash + strlen(slash);
	p = slash + 1;
	dot = memchr(p, '.', (size_t)(path_end - p));
	if (dot) {
		if (!ident(p, (size_t)(dot - p)))
			return fail(why, len, "bad database name (letters, digits, _)");
		u->db = strndup(p, (size_t)(dot - p));
		p = dot + 1;
	} else {
		u->db = strdup("default");
	}
	if (!u->db)
		return -ENOMEM;
	if (p == path_end)
		return fail(why, len, "no table");
	if (!ident(p, (size_t)(path_end - p)))
		return fail(why, len, "bad table name (letters, digits, _)");
	u->table = strndup(p, (size_t)(path_end - p));
	if (!u->table)
		return -ENOMEM;
	return q ? options(u, q + 1, why, len) : 0;
}

const char *ch_url__name(const struct ch_url *u)
{
	static __thread char buf[512];
	bool v6 = u->host && strchr(u->host, ':');

	snprintf(buf, sizeof(buf), v6 ? "[%s]:%u/%s.%s" : "%s:%u/%s.%s", u->host ? u->host : "?",
		 u->port, u->db ? u->db : "?", u->table ? u->table : "?");
	return buf;
}

void ch_url__free(struct ch_url *u)
{
	if (!u)
		return;
	free(u->host);
	free(u->db);
	free(u->table);
	free(u->user);
	if (u->password) /* not left in freed memory */
		explicit_bzero(u->password, strlen(u->password));
	free(u->password);
	memset(u, 0, sizeof(*u));
}
