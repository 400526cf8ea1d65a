// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* jscan.c: see jscan.h. */
#include <string.h>
#include "jscan.h"

const char *jscan__ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static const char *js_string(const char *p, const char *e)
{
	if (p >= e || *p != '"')
		return NULL;
	for (p++; p < e; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c != '\\')
			continue;
		if (++p >= e)
			return NULL;
		switch (*p) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			break;
		case 'u':
			if (e - p < 5)
				return NULL;
			for (int i = 1; i <= 4; i++)
				if (hexval(p[i]) < 0)
					return NULL;
			p += 4;
			break;
		default:
			return NULL;
		}
	}
	return NULL;
}

static const char *js_number(const char *p, const char *e)
{
	if (p < e && *p == '-')
		p++;
	if (p >= e)
		return NULL;
	if (*p == '0') {
		p++;
	} else if (*p >= '1' && *p <= '9') {
		while (p < e && is_digit(*p))
			p++;
	} else {
		return NULL;
	}
	if (p < e && *p == '.') {
		if (++p >= e || !is_digit(*p))
			return NULL;
		while (p < e && is_digit(*p))
			p++;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p >= e || !is_digit(*p))
			return NULL;
		while (p < e && is_digit(*p))
			p++;
	}
	return p;
}

static const char *js_lit(const char *p, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(e - p) >= n && !memcmp(p, lit, n) ? p + n : NULL;
}

const char *jscan__value(const char *p, const char *e, int depth)
{
	if (depth > JSCAN_MAX_DEPTH || p >= e)
		return NULL;
	switch (*p) {
	case '"':
		return js_string(p, e);
	case 't':
		return js_lit(p, e, "true");
	case 'f':
		return js_lit(p, e, "false");
	case 'n':
		return js_lit(p, e, "null");
	case '{':
		p = jscan__ws(p + 1, e);
		if (p < e && *p == '}')
			return p + 1;
		for (;;) {
			p = js_string(p, e);
			if (!p)
				return NULL;
			p = jscan__ws(p, e);
			if (p >= e || *p != ':')
				return NULL;
			p = jscan__value(jscan__ws(p + 1, e), e, depth + 1);
			if (!p)
				return NULL;
			p = jscan__ws(p, e);
			if (p < e && *p == '}')
				return p + 1;
			if (p >= e || *p != ',')
				return NULL;
			p = jscan__ws(p + 1, e);
		}
	case '[':
		p = jscan__ws(p + 1, e);
		if (p < e && *p == ']')
			return p + 1;
		for (;;) {
			p = jscan__value(p, e, depth + 1);
			if (!p)
				return NULL;
			p = jscan__ws(p, e);
			if (p < e && *p == ']')
				return p + 1;
			if (p >= e || *p != ',')
				return NULL;
			p = jscan__ws(p + 1, e);
		}
	default:
		return js_number(p, e);
	}
}

bool jscan__valid(const char *s, size_t n)
{
	const char *e = s + n, *p = jscan__value(jscan__ws(s, e), e, 0);

	return p && jscan__ws(p, e) == e;
}

static char *put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | cp >> 18);
		*o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

static unsigned hex4(const char *p)
{
	return (unsigned)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]));
}

char *jscan__decode(struct arena **a, const char *p, const char *e)
{
	/* Every escape is at least as long as its UTF-8 output. */
	char *out = arena__alloc(a, (size_t)(e - p) + 1), *o = out;

	if (!out)
		return NULL;
	for (p++, e--; p < e; p++) {
		unsigned cp;

		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		p++;
		switch (*p) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			cp = hex4(p + 1);
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && e - p >= 7 && p[1] == '\\' && p[2] == 'u') {
				unsigned lo = hex4(p + 3);

				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				}
			}
			if (cp == 0 || (cp >= 0xd800 && cp < 0xe000))
				cp = 0xfffd;
			o = put_utf8(o, cp);
			break;
		default:
			*o++ = *p; /* " \ / */
			break;
		}
	}
	*o = '\0';
	return out;
}

long jscan__members(struct arena **a, const char *p, const char *e, struct jscan_member **out)
{
	struct jscan_member *m = NULL;
	long n = 0;
	size_t cap = 0;

	p = jscan__ws(p, e);
	if (p >= e || *p != '{')
		return -1;
	p = jscan__ws(p + 1, e);
	if (p < e && *p == '}') {
		p = jscan__ws(p + 1, e);
		goto done;
	}
	for (;;) {
		const char *ks = p, *ke = js_string(p, e), *vs, *ve;

		if (!ke)
			return -1;
		p = jscan__ws(ke, e);
		if (p >= e || *p != ':')
			return -1;
		vs = jscan__ws(p + 1, e);
		ve = jscan__value(vs, e, 1);
		if (!ve)
			return -1;
		if (ARENA_GROW(a, m, n, cap, 8))
			return -2;
		m[n].key = jscan__decode(a, ks, ke);
		if (!m[n].key)
			return -2;
		m[n].v = vs;
		m[n].ve = ve;
		m[n].used = false;
		n++;
		p = jscan__ws(ve, e);
		if (p < e && *p == '}') {
			p = jscan__ws(p + 1, e);
			break;
		}
		if (p >= e || *p != ',')
			return -1;
		p = jscan__ws(p + 1, e);
	}
done:
	if (p != e)
		return -1;
	*out = m;
	return n;
}
