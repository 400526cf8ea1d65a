// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "strbuf.h"

int strbuf__grow(struct strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *p;

	if (sb->len > SIZE_MAX / 4 || extra > SIZE_MAX / 4 - sb->len)
		return -ENOMEM;
	need = sb->len + extra + 1; /* + NUL */
	if (need <= sb->cap && sb->buf)
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

int strbuf__printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	err = strbuf__reserve(sb, (size_t)n);
	if (err)
		return err;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

void strbuf__release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}
