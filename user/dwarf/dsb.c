// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dsb.c: JSON strings of arbitrary bytes for user/dwarf/ (see dsb.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dwarf/dsb.h"

int dsb__json_str(struct strbuf *sb, const void *s, size_t n)
{
	const char *p = s, *end = p + n;
	int err;

	/* json_escape() takes C strings: escape NUL-free runs through it
	 * and write each NUL as \u0000 between them. */
	err = strbuf__putc(sb, '"');
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
			err = strbuf__puts(sb, "\\u0000");
			p++;
		}
	}
	if (!err)
		err = strbuf__putc(sb, '"');
	return err;
}
