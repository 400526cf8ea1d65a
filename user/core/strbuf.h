/*
 * strbuf.h: a growable byte buffer, always NUL-terminated, that writers,
 * renderers and escapers append to.  buf comes from malloc and cap is its
 * size; a zeroed struct is an empty buffer.
 */
#ifndef CMON_STRBUF_H
#define CMON_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *buf;
	size_t len, cap;
};

/* Make room for EXTRA more bytes (and the NUL).  0 or -ENOMEM. */
int strbuf__grow(struct strbuf *sb, size_t extra);

static inline int strbuf__reserve(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->cap && sb->buf)
		return 0;
	return strbuf__grow(sb, extra);
}

/* Append; each returns 0 or -ENOMEM (-EINVAL for a bad format). */
int strbuf__putn(struct strbuf *sb, const char *s, size_t n);
int strbuf__puts(struct strbuf *sb, const char *s);
int strbuf__putc(struct strbuf *sb, char c);
int strbuf__printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void strbuf__reset(struct strbuf *sb);   /* empty, keeping the memory */
void strbuf__release(struct strbuf *sb); /* free; the struct is empty again */

#endif
