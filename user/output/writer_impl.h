/*
 * writer_impl.h: private to user/output/.  The per-format row builders and
 * the unchecked append helpers they share.  A row builder reserves the
 * worst case for the whole row once, then writes through a plain cursor:
 * no bounds check per byte, no printf.
 */
#ifndef CMON_WRITER_IMPL_H
#define CMON_WRITER_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "core/decimal.h"
#include "core/escape.h"
#include "writer.h"

static inline char *wr_mem(char *p, const void *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* A string literal without its NUL; the length is a constant. */
#define WR_LIT(p, lit) wr_mem((p), (lit), sizeof(lit) - 1)

/* Argument I of REC in decimal: signed, but unsigned when the record says
 * so (a USDT 8@ argument). */
static inline char *wr_arg_decimal(char *p, const struct call_record *rec, int i)
{
	return rec->args_unsigned >> i & 1 ? decimal__u64(p, (uint64_t)rec->args[i])
					   : decimal__i64(p, rec->args[i]);
}

/* Row builders: append the header line, or one record's line, to SB;
 * 0 or -ENOMEM. */
int writer__json_row(struct strbuf *sb, const struct call_record *rec);

/* csv.c: a CSV table's columns (from a csv_schema), its header and rows. */
struct csv_table;
struct csv_schema;
struct csv_table *csv_table__new(const struct csv_schema *s); /* NULL: ENOMEM */
void csv_table__free(struct csv_table *t);
enum csv_shape csv_table__shape(const struct csv_table *t);
int csv_table__header(struct csv_table *t, struct strbuf *sb);
int csv_table__row(struct csv_table *t, struct strbuf *sb, const struct call_record *rec);

/* Text mode keeps the last formatted second: localtime_r per row is slow. */
struct text_clock {
	int64_t sec;      /* INT64_MIN: nothing cached */
	char hms[8];      /* "HH:MM:SS" of sec */
};
/* COLOR: SGR escapes for a terminal (writer__set_color). */
int writer__text_header(struct strbuf *sb, bool color);

/* typed.c: the DWARF-typed parts appended to a row already built. */
/* " captures={...} changed={...} truncated=[...] faults=[...]", those T
 * has (T NULL: none), appended: how the text table and the tree end a
 * call's line.  0 or -ENOMEM. */
int writer__typed_notes(struct strbuf *sb, const struct call_typed *t);
int writer__json_typed(struct strbuf *sb, const struct call_record *rec);
/* --stack: FRAMES (one a line) as a JSON "stack" array, or "at" lines. */
int writer__json_stack(struct strbuf *sb, const char *frames);
int writer__text_stack(struct strbuf *sb, const char *frames);
/* How the text table is shown. */
struct text_opts {
	bool color;      /* SGR escapes for a terminal (writer__set_color) */
	unsigned width;  /* the terminal's columns: each row cut to them; 0: whole */
	unsigned strcut; /* strings shown up to this many characters; 0: whole */
};
/* REC's row, its line end and its --stack lines, appended to SB. */
int writer__text_row(struct strbuf *sb, struct text_clock *clk, const struct call_record *rec,
		     const struct text_opts *o);

/* NULL names are written as empty strings. */
static inline const char *wr_str(const char *s)
{
	return s ? s : "";
}

/* Exit-time values (latency, *_exit) exist for returned calls, and for a
 * --lines line once the thread's next line event closed it. */
static inline bool wr_has_exit(const struct call_record *rec)
{
	return rec->status == CALL_OK || rec->status == CALL_TAILCALL ||
	       rec->status == CALL_RAISED || rec->status == CALL_YIELD ||
	       (rec->status == CALL_LINE && rec->line_timed);
}

/* The raw argument registers a record has: a source line (--line) has
 * none, except where --locals read them at the line (its locals typed from
 * them: such a record is typed).  Without them arg0..arg5 are absent. */
static inline bool wr_has_args(const struct call_record *rec)
{
	return rec->status != CALL_LINE || rec->typed;
}

/* The text table shows the typed return value (CALL_OK). */
static inline bool wr_text_typed_ret(const struct call_record *rec)
{
	const struct call_typed *t = rec->typed;

	return call_record__typed_ret(rec) && !t->returns_void &&
	       (strcmp(t->retval, "null") || t->python);
}

#endif
