// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "changed.h"
#include "core/escape.h"

#define MAX_DEPTH 16

static int put_member(struct strbuf *out, size_t *n, const char *path, const json_t *b,
		      const json_t *a)
{
	char *bt = json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT),
	     *at = json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT);
	int err = bt && at ? 0 : -ENOMEM;

	if (!err && *n)
		err = strbuf__putc(out, ',');
	err = err ?: json_escape(out, path);
	err = err ?: strbuf__printf(out, ":[%s,%s]", bt, at);
	free(bt);
	free(at);
	if (!err)
		(*n)++;
	return err;
}

/* PATH's leaves in B and A: objects member by member (SEP before the
 * first level's names: "->" under the pointer, "." below), arrays element
 * by element; anything else compared whole. */
static int walk(struct strbuf *out, size_t *n, struct strbuf *path, const char *sep,
		const json_t *b, const json_t *a, int depth)
{
	size_t len = path->len;
	int err = 0;

	if (depth < MAX_DEPTH && json_is_object(b) && json_is_object(a)) {
		const char *key;
		json_t *bv;

		json_object_foreach((json_t *)b, key, bv) {
			json_t *av = json_object_get(a, key);

			if (!av)
				continue;
			err = strbuf__puts(path, sep) ?: strbuf__puts(path, key);
			err = err ?: walk(out, n, path, ".", bv, av, depth + 1);
			path->len = len;
			path->buf[len] = '\0';
			if (err)
				return err;
		}
		return 0;
	}
	if (depth < MAX_DEPTH && json_is_array(b) && json_is_array(a) &&
	    json_array_size(b) == json_array_size(a)) {
		for (size_t i = 0; i < json_array_size(b) && !err; i++) {
			err = strbuf__printf(path, "[%zu]", i);
			err = err ?: walk(out, n, path, ".", json_array_get(b, i), json_array_get(a, i),
					  depth + 1);
			path->len = len;
			path->buf[len] = '\0';
		}
		return err;
	}
	if (json_equal((json_t *)b, (json_t *)a))
		return 0;
	return put_member(out, n, path->buf ? path->buf : "", b, a);
}

int changed__diff(struct strbuf *out, size_t *n, const char *name, const char *before,
		  const char *after)
{
	json_t *b = json_loads(before, JSON_DECODE_ANY, NULL);
	json_t *a = json_loads(after, JSON_DECODE_ANY, NULL);
	struct strbuf path = { 0 };
	int err = 0;

	if (b && a) {
		err = strbuf__puts(&path, name);
		err = err ?: walk(out, n, &path, "->", b, a, 0);
	}
	json_decref(b);
	json_decref(a);
	strbuf__release(&path);
	return err;
}
