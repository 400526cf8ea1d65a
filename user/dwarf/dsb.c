// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dsb.c: strbuf appends for user/dwarf/ (see dsb.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dwarf/dsb.h"

int dsb__reserve(struct strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *p;

	if (sb->len > SIZE_MAX / 4 || extra > SIZE_MAX / 4 - sb->len)
		return -ENOMEM;
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(sb->buf, cap);
	if (!p)
		return -ENOMEM;
	sb->buf = p;
	sb->cap = cap;
	return 0;
}

int dsb__putn(struct strbuf *sb, const char *s, size_t n)
{
	int err = dsb__reserve(sb, n);

	if (err)
		return err;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
	return 0;
}

int dsb__puts(struct strbuf *sb, const char *s)
{
	return dsb__putn(sb, s, strlen(s));
}

int dsb__putc(struct strbuf *sb, char c)
{
	return dsb__putn(sb, &c, 1);
}

int dsb__printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	err = dsb__reserve(sb, (size_t)n);
	if (err)
		return err;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

int dsb__json_str(struct strbuf *sb, const void *s, size_t n)
{
	const char *p = s, *end = p + n;
	int err;

	/* json_escape() takes C strings: escape NUL-free runs through it
	 * and write each NUL as \u0000 between them. */
	err = dsb__putc(sb, '"');
	while (!err && p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t run = nul ? (size_t)(nul - p) : (size_t)(end - p);

		if (run) {
			size_t before = sb->len;
			char *tmp = strndup(p, run);

			if (!tmp)
				return -ENOMEM;
			err = json_escape(sb, tmp);
			free(tmp);
			if (!err) {
				/* json_escape quoted the run: drop its quotes */
				memmove(sb->buf + before, sb->buf + before + 1, sb->len - before - 2);
				sb->len -= 2;
				sb->buf[sb->len] = '\0';
			}
		}
		if (err)
			break;
		p += run;
		if (p < end) {
			err = dsb__puts(sb, "\\u0000");
			p++;
		}
	}
	if (!err)
		err = dsb__putc(sb, '"');
	return err;
}
