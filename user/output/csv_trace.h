/*
 * csv_trace.h: a trace CSV (what `cmon trace -F csv` writes, wide or
 * long) read back as calls, each the object a `trace -F json` line is, so
 * `cmon export` views any recording the same way.
 */
#ifndef CMON_CSV_TRACE_H
#define CMON_CSV_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

/* Does the first line HEAD (its bytes, no NUL needed past LEN) look like a
 * trace CSV's header? */
bool csv_trace__is_header(const char *head, size_t len);

/* Every call of the trace CSV IN, in file order: *OUT (N of them; each to
 * json_decref, the array to free); CUT_OK: a last record without its line
 * end (a trace killed while writing it) is left out, not an error.  0; -EINVAL when IN is not a trace CSV
 * of cmon's (*ROW: 1 for the header, else the record that is not a call);
 * -EPROTO when its "schema" is newer than this cmon reads (*SCHEMA, for
 * schema__refusal); -ENOMEM or -EIO.  A file without the column (before
 * versions) is read as version 1. */
int csv_trace__read(FILE *in, bool cut_ok, json_t ***out, size_t *n, size_t *row,
		    long long *schema);

#endif
