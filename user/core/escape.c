// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* escape.c: CSV and JSON text (escape.h says how). */
#include <errno.h>
#include <stdbool.h>
#include "core/escape.h"

static inline char *esc_mem(char *p, const void *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

static const char *esc_str(const char *s) { return s ? s : ""; }

static const char hexdigits[] = "0123456789abcdef";

/* 0: copy as is; 1: \u00xx or (non-ASCII) check UTF-8; else the short
 * escape letter. */
static const unsigned char json_class[256] = {
	[0x00 ... 0x07] = 1, ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n',
	[0x0b] = 1, ['\f'] = 'f', ['\r'] = 'r', [0x0e ... 0x1f] = 1,
	['"'] = '"', ['\\'] = '\\', [0x7f ... 0xff] = 1,
};

static inline char *json_u00(char *p, unsigned c)
{
	p = esc_mem(p, "\\u00", 4);
	*p++ = hexdigits[c >> 4];
	*p++ = hexdigits[c & 0xf];
	return p;
}

char *writer__json_put(char *p, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	*p++ = '"';
	while (i < n) {
		size_t run = i;
		unsigned cls, len;

		/* Copy the plain ASCII run in one go. */
		while (run < n && !json_class[u[run]])
			run++;
		p = esc_mem(p, u + i, run - i);
		i = run;
		if (i == n)
			break;
		cls = json_class[u[i]];
		if (cls > 1) {
			*p++ = '\\';
			*p++ = (char)cls;
			i++;
		} else if (u[i] < 0x80 ||
			   !(len = wr_utf8_len(u + i, n - i))) {
			p = json_u00(p, u[i]); /* control, DEL, invalid byte */
			i++;
		} else {
			p = esc_mem(p, u + i, len);
			i += len;
		}
	}
	*p++ = '"';
	return p;
}

int json_escape(struct strbuf *sb, const char *s)
{
	size_t n;
	int err;

	s = esc_str(s);
	n = strlen(s);
	err = strbuf__reserve(sb, WR_JSON_MAX(n));
	if (err)
		return err;
	sb->len = (size_t)(writer__json_put(sb->buf + sb->len, s, n) - sb->buf);
	sb->buf[sb->len] = '\0';
	return 0;
}

/* Bytes that force quoting anywhere in a field. */
static const bool csv_special[256] = {
	[','] = true, ['"'] = true, ['\r'] = true, ['\n'] = true,
};

char *writer__csv_put(char *p, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	bool quote = n && (u[0] == ' ' || u[n - 1] == ' ');

	for (size_t i = 0; !quote && i < n; i++)
		quote = csv_special[u[i]];
	if (!quote)
		return esc_mem(p, s, n);
	*p++ = '"';
	for (size_t i = 0; i < n; i++) {
		if (u[i] == '"')
			*p++ = '"';
		*p++ = (char)u[i];
	}
	*p++ = '"';
	return p;
}

static unsigned hexval(char c)
{
	return c >= '0' && c <= '9' ? (unsigned)(c - '0') : ((unsigned)c | 0x20) - 'a' + 10;
}

/* Code point C as UTF-8 at P (C < 0x10000: what \uXXXX holds). */
static char *utf8_put(char *p, unsigned c)
{
	if (c < 0x80) {
		*p++ = (char)c;
	} else if (c < 0x800) {
		*p++ = (char)(0xc0 | c >> 6);
		*p++ = (char)(0x80 | (c & 0x3f));
	} else {
		*p++ = (char)(0xe0 | c >> 12);
		*p++ = (char)(0x80 | (c >> 6 & 0x3f));
		*p++ = (char)(0x80 | (c & 0x3f));
	}
	return p;
}

char *writer__csv_put_jstr(char *p, const char *json, size_t n)
{
	const char *s = json + 1, *end = json + (n >= 2 ? n - 1 : 1);
	char *start = p + 1, *q = start; /* decoded after a quote, which may stay */
	bool quote = false;

	if (n < 2)
		return p;
	while (s < end) {
		char c = *s++;

		if (c == '\\' && s < end) {
			char e = *s++;
			unsigned u;

			switch (e) {
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u':
				if (end - s < 4)
					continue;
				u = hexval(s[0]) << 12 | hexval(s[1]) << 8 | hexval(s[2]) << 4 |
				    hexval(s[3]);
				s += 4;
				if (u == 0)
					continue;
				if (u >= 0x80) {
					q = utf8_put(q, u);
					continue;
				}
				c = (char)u;
				break;
			default: c = e; break; /* \" \\ \/ */
			}
		}
		if (csv_special[(unsigned char)c])
			quote = true;
		if (c == '"')
			*q++ = '"';
		*q++ = c;
	}
	if (q > start && (start[0] == ' ' || q[-1] == ' '))
		quote = true;
	if (!quote) {
		memmove(p, start, (size_t)(q - start));
		return p + (q - start);
	}
	*p = '"';
	*q++ = '"';
	return q;
}

int csv_escape(struct strbuf *sb, const char *s)
{
	size_t n;
	int err;

	s = esc_str(s);
	n = strlen(s);
	err = strbuf__reserve(sb, WR_CSV_MAX(n));
	if (err)
		return err;
	sb->len = (size_t)(writer__csv_put(sb->buf + sb->len, s, n) - sb->buf);
	sb->buf[sb->len] = '\0';
	return 0;
}


int json_escape_bytes(struct strbuf *sb, const void *s, size_t n)
{
	int err = strbuf__reserve(sb, WR_JSON_MAX(n));

	if (err)
		return err;
	sb->len = (size_t)(writer__json_put(sb->buf + sb->len, s, n) - sb->buf);
	sb->buf[sb->len] = '\0';
	return 0;
}
