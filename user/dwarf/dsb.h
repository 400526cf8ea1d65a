/*
 * dsb.h: private to user/dwarf/.  Appending to a struct strbuf (writer.h)
 * from outside user/output/, keeping its invariants (buf from malloc, cap
 * its size, NUL-terminated), so json_escape() can append to the same
 * buffer.
 */
#ifndef CMON_DSB_H
#define CMON_DSB_H

#include <stddef.h>
#include <stdint.h>
#include "output/writer.h"

int dsb__reserve(struct strbuf *sb, size_t extra);            /* 0 or -ENOMEM */
int dsb__putn(struct strbuf *sb, const char *s, size_t n);
int dsb__puts(struct strbuf *sb, const char *s);
int dsb__putc(struct strbuf *sb, char c);
int dsb__printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string of N bytes (any bytes, NULs included) with quotes, escaped
 * as json_escape() does. */
int dsb__json_str(struct strbuf *sb, const void *s, size_t n);

#endif
