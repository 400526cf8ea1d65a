/*
 * changed.h: what a call changed through a pointer parameter
 * (--capture-at both): the leaves of its rendered value at the entry and
 * at the return that differ, as "path": [before, after] members of a JSON
 * object ("a->balance": [100, 110], "buf": ["old", "new"]).
 */
#ifndef CMON_CHANGED_H
#define CMON_CHANGED_H

#include <stddef.h>
#include "core/strbuf.h"

/* Compare BEFORE and AFTER (JSON values of parameter NAME, a pointer) and
 * append a `"path":[b,a]` member to OUT for each leaf that differs, with
 * a comma before each but the first (*N counts the members so far).
 * 0, or -ENOMEM. */
int changed__diff(struct strbuf *out, size_t *n, const char *name, const char *before,
		  const char *after);

#endif
