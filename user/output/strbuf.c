// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* strbuf.c: the growable line buffer the writers format into. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "writer_impl.h"

const char writer__digits2[200] =
	"00010203040506070809"
	"10111213141516171819"
	"20212223242526272829"
	"30313233343536373839"
	"40414243444546474849"
	"50515253545556575859"
	"60616263646566676869"
	"70717273747576777879"
	"80818283848586878889"
	"90919293949596979899";

int strbuf__grow(struct strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *p;

	if (sb->len > SIZE_MAX / 4 || extra > SIZE_MAX / 4 - sb->len)
		return -ENOMEM;
	need = sb->len + extra + 1; /* + NUL */
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

/* Keeps the memory: the writer reuses one buffer for every line. */
void strbuf__reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf__release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}
