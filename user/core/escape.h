/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * escape.h: text as CSV and JSON carry it, the one place either is
 * escaped (rows, views, typed values, the agent's replies).  CSV (RFC
 * 4180): a field is quoted when it holds , " CR or LF or starts or ends
 * with a space, a quote inside doubled.  JSON: " and \ escaped, the short
 * escapes for \b \f \n \r \t, other control characters and DEL as
 * \u00xx; valid UTF-8 passes; a byte that is not part of a valid UTF-8
 * sequence becomes \u00xx of its value (read as Latin-1), so every line is
 * valid JSON whatever the traced program put in its strings.
 */
#ifndef CMON_ESCAPE_H
#define CMON_ESCAPE_H

#include <stddef.h>
#include <string.h>
#include "core/strbuf.h"

/*
 * Length of the valid UTF-8 sequence starting at S (N bytes available),
 * 2..4, or 0 when S[0] does not start one (stray continuation, overlong,
 * surrogate, above U+10FFFF, truncated).  Call only for S[0] >= 0x80.
 * Ranges from Unicode 15, table 3-7.
 */
static inline unsigned wr_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf, len;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;          /* overlong */
	else if (c == 0xed)
		hi = 0x9f;          /* surrogates */
	else if (c == 0xf0)
		lo = 0x90;          /* overlong */
	else if (c == 0xf4)
		hi = 0x8f;          /* above U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (unsigned i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* Worst case output of the raw escapers for N input bytes. */
#define WR_CSV_MAX(n) (2 * (n) + 2)
#define WR_JSON_MAX(n) (6 * (n) + 2)

/* Unchecked escapers: the caller reserved WR_*_MAX(n); the end is returned. */
char *writer__csv_put(char *p, const char *s, size_t n);
char *writer__json_put(char *p, const char *s, size_t n);

/* A JSON string's text (quotes included, N bytes, as json_escape writes
 * it) as a CSV field of its plain characters: escapes decoded to UTF-8,
 * quoted as writer__csv_put quotes; a NUL (\u0000) is left out (a text
 * field cannot hold it).  Needs WR_CSV_MAX(n) bytes. */
char *writer__csv_put_jstr(char *p, const char *json, size_t n);

/* Append S escaped (JSON: with its quotes); 0 or -ENOMEM. */
int csv_escape(struct strbuf *sb, const char *s);
int json_escape(struct strbuf *sb, const char *s);
/* N bytes, NULs included (as \u0000), as a JSON string; 0 or -ENOMEM. */
int json_escape_bytes(struct strbuf *sb, const void *s, size_t n);

#endif
