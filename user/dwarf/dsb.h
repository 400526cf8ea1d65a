/*
 * dsb.h: private to user/dwarf/: JSON strings of arbitrary bytes (NULs
 * included), appended to a struct strbuf (core/strbuf.h) as json_escape()
 * does for C strings.
 */
#ifndef CMON_DSB_H
#define CMON_DSB_H

#include <stddef.h>
#include <stdint.h>
#include "output/writer.h"

/* A JSON string of N bytes (any bytes, NULs included) with quotes, escaped
 * as json_escape() does. */
int dsb__json_str(struct strbuf *sb, const void *s, size_t n);

#endif
