// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * schema.c: the record files' version, checked the same way by every
 * reader (export, report).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "output/schema.h"

int schema__check(long long v)
{
	return v >= 1 && v <= CMON_SCHEMA ? 0 : -EPROTO;
}

int schema__check_json(const json_t *o, long long *v)
{
	const json_t *s = json_object_get(o, "schema");

	*v = CMON_SCHEMA;
	if (!s)
		return 0;
	if (!json_is_integer(s))
		return -EINVAL;
	*v = json_integer_value(s);
	return schema__check(*v);
}

int schema__check_text(const char *t, long long *v)
{
	char *end;

	*v = CMON_SCHEMA;
	if (!t || !*t)
		return -EINVAL; /* the column is there: each row has its version */
	errno = 0;
	*v = strtoll(t, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return schema__check(*v);
}

int schema__refusal(char *buf, size_t len, long long v)
{
	if (v < 1)
		return snprintf(buf, len, "schema %lld is not a version of cmon's files", v);
	return snprintf(buf, len, "schema %lld, newer than this cmon reads (%d): read it with a "
			"newer cmon", v, CMON_SCHEMA);
}
