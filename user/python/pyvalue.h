/*
 * pyvalue.h: Python values as JSON text, as --py writes an argument, a
 * return or an exception: what the kernel read (struct cmon_py_val), and
 * what only the process's memory says (a type's name, an IntEnum member's
 * name, a str that is not ASCII), read while it lives and kept.
 */
#ifndef CMON_PYVALUE_H
#define CMON_PYVALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cmon_abi.h"
#include "core/hmap.h"
#include "core/strbuf.h"
#include "python/pylayout.h"

/* What one process's values need: its pid, layout, and names read so far. */
struct pyvalue_ctx {
	pid_t pid;
	const struct py_layout *layout;
	struct hmap types; /* type address -> its tp_name (malloc'd) */
	struct hmap names; /* (type, object) -> an enum member's name (malloc'd; "" none) */
};

void pyvalue__release(struct pyvalue_ctx *vc);

/* The text (UTF-8) of the str object at OBJ, malloc'd; NULL when unreadable. */
char *pyvalue__str(pid_t pid, uint64_t obj, const struct py_layout *l);

/* FN(CTX, KEY, VALUE) for each entry of the dict at DICT (a combined
 * one: a class's, tp_subclasses) until it returns true. */
typedef bool (*pyvalue_dict_fn)(void *ctx, uint64_t key, uint64_t value);
void pyvalue__dict_each(pid_t pid, const struct cmon_py_offsets *o, uint64_t dict,
			pyvalue_dict_fn fn, void *ctx);

/* V as JSON text appended to SB.  0 or -ENOMEM. */
int pyvalue__render(struct pyvalue_ctx *vc, const struct cmon_py_val *v, struct strbuf *sb);

/* An exception (its type's name, its message value MSG) as a JSON object:
 * {"type":"ValueError","message":"bad"}. */
int pyvalue__render_exception(struct pyvalue_ctx *vc, const char *type,
			      const struct cmon_py_val *msg, struct strbuf *sb);

/* S (N bytes) as a JSON string. */
int pyvalue__json_string(struct strbuf *sb, const char *s, size_t n);

#endif
