/*
 * strbuf.h: a growable byte buffer, always NUL-terminated, that writers,
 * renderers and escapers append to.  buf comes from malloc and cap is its
 * size; a zeroed struct is an empty buffer.
 */
#ifndef CMON_STRBUF_H
#define CMON_STRBUF_H

#include <stddef.h>
#include <string.h>

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

/* Append; each returns 0 or -ENOMEM (-EINVAL for a bad format).  Inline:
 * they are on the consumer's per-record path (a call each was ~10 % of it),
 * and a literal's length is then known at compile time. */
static inline int strbuf__putn(struct strbuf *sb, const char *s, size_t n)
{
	int err = strbuf__reserve(sb, n);

	if (err)
		return err;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
	return 0;
}

static inline int strbuf__puts(struct strbuf *sb, const char *s)
{
	return strbuf__putn(sb, s, strlen(s));
}

static inline int strbuf__putc(struct strbuf *sb, char c)
{
	int err = strbuf__reserve(sb, 1);

	if (err)
		return err;
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf__printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Empty, keeping the memory.  Inline: the typed rendering resets a few
 * buffers a record. */
static inline void strbuf__reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}
void strbuf__release(struct strbuf *sb); /* free; the struct is empty again */

#endif
