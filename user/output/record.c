// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "record.h"

const char *call_status__name(enum call_status s)
{
	switch (s) {
	case CALL_OK:
		return "ok";
	case CALL_NORETURN:
		return "noreturn";
	case CALL_ENTRY_ONLY:
		return "entry";
	case CALL_TAILCALL:
		return "tailcall";
	case CALL_NEVER_RETURNS:
		return "never-returns";
	case CALL_USDT:
		return "usdt";
	case CALL_LINE:
		return "line";
	case CALL_RAISED:
		return "exception";
	case CALL_YIELD:
		return "yield";
	}
	return "unknown";
}

bool call_record__has_ret(const struct call_record *rec)
{
	return rec->status == CALL_OK && !(rec->typed && rec->typed->returns_void);
}

bool call_record__typed_ret(const struct call_record *rec)
{
	const struct call_typed *t = rec->typed;

	return t && t->retval &&
	       (call_record__has_ret(rec) ||
		(t->python && (rec->status == CALL_YIELD || rec->status == CALL_RAISED)));
}

const char *call_typed__text(const struct call_typed *t, const char *v)
{
	if (!t || !t->python || !v)
		return v;
	if (!strcmp(v, "null"))
		return "None";
	if (!strcmp(v, "true"))
		return "True";
	if (!strcmp(v, "false"))
		return "False";
	return v;
}
