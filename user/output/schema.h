/*
 * schema.h: the version of the record files cmon writes (trace, export and
 * profile CSV and JSON Lines), in each of them as a first column / key
 * "schema" holding this number, and checked by every reader of them
 * (docs/cmon-output.md, "Schema").  A column or key added, or a new value
 * of status, keeps the version; one renamed, removed, or read another way
 * (its unit, type or meaning) makes the next.
 */
#ifndef CMON_SCHEMA_H
#define CMON_SCHEMA_H

#include <stddef.h>
#include <jansson.h>

#define CMON_SCHEMA 1
#define CMON_SCHEMA_TEXT "1"

/* A file's version V: 0 when this cmon reads it, -EPROTO when it is newer
 * (or not a version: below 1). */
int schema__check(long long v);

/* Record O's "schema": 0 when absent (a file from before versions) or
 * readable; -EPROTO when newer (*V the version); -EINVAL when not an
 * integer. */
int schema__check_json(const json_t *o, long long *v);

/* A CSV cell T of the "schema" column: as schema__check_json. */
int schema__check_text(const char *t, long long *v);

/* The one line that says why a file of version V is refused, after its
 * name: "schema 99, newer than this cmon reads (1): read it with a newer
 * cmon".  Its length (snprintf's). */
int schema__refusal(char *buf, size_t len, long long v);

#endif
