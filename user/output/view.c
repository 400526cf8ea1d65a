// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* view.c: choosing a view, and the one output helper they share. */
#include <errno.h>
#include "view.h"

struct view *view__new(enum out_format fmt, FILE *out)
{
	struct view *v;

	switch (fmt) {
	case OUT_CHROME:
		v = chrome_view__new();
		break;
	case OUT_TREE:
		v = tree_view__new();
		break;
	case OUT_FOLDED:
		v = folded_view__new();
		break;
	default:
		errno = EINVAL;
		return NULL;
	}
	if (v)
		v->out = out;
	return v;
}

int view__put(struct view *v, const char *s, size_t n)
{
	errno = 0;
	if (fwrite(s, 1, n, v->out) != n || ferror(v->out))
		return errno > 0 ? -errno : -EIO;
	return 0;
}
