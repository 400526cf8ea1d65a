// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * typed.c: the typed parts of a record (DWARF names and values), appended
 * to a row the format's own writer has opened (the writer ends it): extra
 * CSV columns, JSON keys, name=value pairs in text.  Values arrive as JSON
 * text, already escaped.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "writer_impl.h"

int writer__json_typed(struct strbuf *sb, const struct call_record *rec)
{
	const struct call_typed *t = rec->typed;
	int err;

	if (!t)
		return 0;
	err = strbuf__puts(sb, ",\"args\":");
	if (!err)
		err = strbuf__puts(sb, t->args ? t->args : "{}");
	if (!err)
		err = strbuf__puts(sb, ",\"retval\":");
	if (!err)
		err = strbuf__puts(sb, call_record__typed_ret(rec) ? t->retval : "null");
	if (!err && t->task) {
		err = strbuf__puts(sb, ",\"task\":");
		if (!err)
			err = strbuf__puts(sb, t->task);
	}
	if (!err && t->captures) {
		err = strbuf__puts(sb, ",\"captures\":");
		if (!err)
			err = strbuf__puts(sb, t->captures);
	}
	if (!err && t->truncated) {
		err = strbuf__puts(sb, ",\"truncated\":");
		if (!err)
			err = strbuf__puts(sb, t->truncated);
	}
	if (!err && t->faults) {
		err = strbuf__puts(sb, ",\"faults\":");
		if (!err)
			err = strbuf__puts(sb, t->faults);
	}
	if (!err && t->at_return) {
		err = strbuf__puts(sb, ",\"at_return\":");
		if (!err)
			err = strbuf__puts(sb, t->at_return);
	}
	if (!err && t->changed) {
		err = strbuf__puts(sb, ",\"changed\":");
		if (!err)
			err = strbuf__puts(sb, t->changed);
	}
	return err;
}

int writer__typed_notes(struct strbuf *sb, const struct call_typed *t)
{
	/* --capture values and what --capture-at both found changed ({}:
	 * none), then the values that are not what the program held: cut at
	 * --strlen or --capture-max, or unreadable (null, as a NULL shows). */
	const struct { const char *key, *json; } parts[] = {
		{ "task", t ? t->task : NULL },
		{ "captures", t ? t->captures : NULL },
		{ "changed", t ? t->changed : NULL },
		{ "truncated", t ? t->truncated : NULL },
		{ "faults", t ? t->faults : NULL },
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && !err; i++)
		if (parts[i].json && strcmp(parts[i].json, "{}"))
			err = strbuf__printf(sb, " %s=%s", parts[i].key, parts[i].json);
	return err;
}

/* --stack: "stack": ["func+0x1f (module)", ...] at the row's end. */
int writer__json_stack(struct strbuf *sb, const char *frames)
{
	int err;

	err = strbuf__puts(sb, ",\"stack\":[");
	for (const char *p = frames; !err && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (p != frames)
			err = strbuf__putc(sb, ',');
		if (!err)
			err = strbuf__reserve(sb, WR_JSON_MAX(n));
		if (!err)
			sb->len = (size_t)(writer__json_put(sb->buf + sb->len, p, n) - sb->buf);
		p += n + (nl != NULL);
	}
	return err ? err : strbuf__putc(sb, ']');
}

/* --stack in the table: one indented "at FRAME" line a frame under the row. */
int writer__text_stack(struct strbuf *sb, const char *frames)
{
	int err = 0;

	for (const char *p = frames; !err && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		err = strbuf__puts(sb, "    at ");
		if (!err)
			err = strbuf__putn(sb, p, n);
		if (!err)
			err = strbuf__putc(sb, '\n');
		p += n + (nl != NULL);
	}
	return err;
}
