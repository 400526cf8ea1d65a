/*
 * writer.h: turn call records into text (an aligned table for a person),
 * CSV (RFC 4180) or JSON Lines.  The output contract is in README.md; the
 * column names and order below are part of it.
 *
 *   ts_ns,pid,tid,comm,func,depth,arg0,arg1,arg2,arg3,arg4,arg5,ret,
 *   latency_ns,rss_entry,rss_exit,vms_entry,vms_exit,status,module
 *   [, one column per typed parameter name, retval]
 *   [, captures] [, at_return, changed] [, truncated, faults]
 *
 * Typed records (DWARF) also carry, in JSON, "args" {name: value},
 * "retval", and when present "captures", "truncated" and "faults"; in text
 * their parameters are shown as name=value instead of the raw registers.
 *
 * Values that a record does not have (ret of an unreturned call, depth -1)
 * are empty in CSV and null in JSON.  Every byte a traced program can put in
 * a string is escaped: CSV quotes fields holding , " CR LF (and any field
 * starting with a space); JSON escapes " \ and all control characters, and
 * bytes that are not valid UTF-8 become \u00XX of the byte (latin-1), so
 * every line is valid JSON.
 */
#ifndef CMON_WRITER_H
#define CMON_WRITER_H

#include <stdio.h>
#include <stddef.h>
#include "record.h"
#include "core/strbuf.h"
#include "core/escape.h"

/* OUT_CHROME and later are views of the whole run (view.h): Chrome Trace
 * Event JSON, call trees, folded stacks. */
enum out_format { OUT_TEXT = 0, OUT_CSV, OUT_JSON, OUT_CHROME, OUT_TREE, OUT_FOLDED };

/* "text" / "csv" / "json" / "chrome" / "tree" / "folded" -> format;
 * returns 0 or -EINVAL. */
int out_format__parse(const char *name, enum out_format *fmt);

struct writer;

/* A writer on OUT (not closed by the writer).  Text and CSV print their
 * header line at the first record, or at writer__finish when no record came. */
struct writer *writer__new(enum out_format fmt, FILE *out);
int writer__write(struct writer *w, const struct call_record *rec); /* 0 or -errno (EIO..) */

/* CSV columns for what JSON gives as keys besides the values: each cell
 * holds that key's text, empty when the call has none. */
enum csv_extra {
	CSV_AT_RETURN = 1u << 1, /* "at_return", "changed" (--capture-at both) */
	CSV_NOTES = 1u << 2,     /* "truncated", "faults", "unavailable" (typed values) */
	CSV_CGROUP = 1u << 3,    /* "cgroup": the record's (--cgroup, --container) */
	CSV_CALL = 1u << 4,      /* "call": the record's call_no (a store's calls) */
};

/* What JSON text T (N bytes) is: enum render_kind (render.h). */
uint8_t csv__kind_of(const char *t, size_t n);

/* A CSV table's shape: wide (a row a call, a column a value) or long (a
 * row per value: name, value); AUTO: wide when its functions' values have
 * the same columns, else long. */
enum csv_shape { CSV_AUTO = 0, CSV_WIDE, CSV_LONG };

struct render_cols;
/* What a CSV table is made of, given before its first record (and which
 * must outlive the writer). */
struct csv_schema {
	const struct render_cols *const *funcs; /* [n_funcs]: each function's
						 * value columns; NULL: raw */
	size_t n_funcs;
	uint32_t only;      /* UINT32_MAX: every function; else this one (-o %f) */
	const char *const *cells; /* columns of values without leaves (--py), */
	size_t n_cells;           /* "args.NAME" ("": "args") */
	unsigned extras;    /* enum csv_extra */
	enum csv_shape shape;
};

/* The shape S makes (AUTO decided). */
enum csv_shape csv_schema__shape(const struct csv_schema *s);
/* Call before the first record; 0, -EBUSY after it. */
int writer__set_schema(struct writer *w, const struct csv_schema *s);

/* Records come from a store, in entry order per thread with depth computed
 * from the calls' intervals (cmon export): tree and folded group them as
 * they come instead of waiting for each outermost call to end. */
/* Text for a terminal: the header and function names bold, a status in
 * place of a return value yellow (SGR escapes).  Ignored for other formats
 * and after writer__no_color. */
void writer__set_color(struct writer *w, bool on);
/* NO_COLOR is set (https://no-color.org): no writer colours its text. */
void writer__no_color(void);
/* Text: each row cut to WIDTH columns (a terminal's; 0: whole), strings
 * shown up to STRCUT characters (0: whole; WRITER_TEXT_STRLEN unless set).
 * CSV and JSON keep every value whole. */
#define WRITER_TEXT_STRLEN 32
void writer__set_text(struct writer *w, unsigned width, unsigned strcut);
void writer__set_replay(struct writer *w);
int writer__finish(struct writer *w); /* header if none yet, flush; 0 or -errno */

/* Bytes handed to the stream so far (records' ends are counted against
 * it); UINT64_MAX for a view, whose output is not one row per record. */
uint64_t writer__bytes(const struct writer *w);

/* Flush the stream: 0, or -errno with *ON_DISK the bytes a regular file
 * holds (0 otherwise).  After an error the stream is not written again. */
int writer__flush(struct writer *w, uint64_t *on_disk);
void writer__free(struct writer *w);  /* NULL fine */


#endif
