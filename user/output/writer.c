// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * writer.c: the writer object.  Records are formatted into one reusable
 * buffer and handed to stdio WRITER_HANDOFF bytes at a time, and whatever is
 * left at each flush (the consumer flushes after every poll): an fwrite per
 * record (its lock, its copy, ferror) was ~5 % of the consumer's time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include "core/log.h"
#include "view.h"
#include "writer_impl.h"

struct writer {
	enum out_format fmt;
	FILE *out;
	struct strbuf line; /* rows not yet handed to stdio */
	struct text_clock clock;
	bool header_done;
	struct text_opts text; /* text: colour, width, strings cut */
	int err; /* first write error; the stream is not used after it */
	struct csv_schema schema;   /* CSV: what the table holds */
	struct csv_table *csv;      /* made at the header */
	struct view *view; /* chrome, tree, folded: they see the whole run */
	uint64_t bytes;    /* rows formatted (handed to stdio or waiting in
			    * line), header included */
};

#define WRITER_HANDOFF 65536

int out_format__parse(const char *name, enum out_format *fmt)
{
	static const struct { const char *name; enum out_format fmt; } names[] = {
		{ "text", OUT_TEXT }, { "csv", OUT_CSV }, { "json", OUT_JSON },
		{ "chrome", OUT_CHROME }, { "tree", OUT_TREE }, { "folded", OUT_FOLDED },
	};

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(name, names[i].name)) {
			*fmt = names[i].fmt;
			return 0;
		}
	}
	return -EINVAL;
}

struct writer *writer__new(enum out_format fmt, FILE *out)
{
	struct writer *w;

	if (!out || fmt < OUT_TEXT || fmt > OUT_FOLDED) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	if (fmt >= OUT_CHROME) {
		w->view = view__new(fmt, out);
		if (!w->view) {
			free(w);
			return NULL;
		}
	}
	w->fmt = fmt;
	w->out = out;
	w->clock.sec = INT64_MIN;
	w->schema.only = UINT32_MAX;
	w->text.strcut = WRITER_TEXT_STRLEN;
	w->header_done = fmt == OUT_JSON; /* JSON Lines has no header */
	if (strbuf__grow(&w->line, WRITER_HANDOFF + 4096)) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

static int put_header(struct writer *w)
{
	if (w->fmt != OUT_CSV)
		return writer__text_header(&w->line, w->text.color);
	if (!w->csv) {
		w->csv = csv_table__new(&w->schema);
		if (!w->csv)
			return -ENOMEM;
	}
	return csv_table__header(w->csv, &w->line);
}

int writer__set_schema(struct writer *w, const struct csv_schema *s)
{
	if (w->header_done && w->fmt != OUT_JSON)
		return -EBUSY;
	w->schema = *s;
	return 0;
}

/* Hand the rows to stdio.  errno from a failed write(2) (ENOSPC, EPIPE)
 * says more than EIO, so keep it when there is one. */
static int hand_over(struct writer *w)
{
	size_t n = w->line.len;

	w->line.len = 0;
	if (w->err || !n)
		return w->err;
	errno = 0;
	if (fwrite(w->line.buf, 1, n, w->out) != n || ferror(w->out)) {
		w->err = errno > 0 ? -errno : -EIO;
		log_debug("output write failed: %s", strerror(-w->err));
	}
	return w->err;
}

int writer__write(struct writer *w, const struct call_record *rec)
{
	size_t start = w->line.len;
	int err;

	if (w->err)
		return w->err;
	if (w->view)
		return w->err = w->view->ops->write(w->view, rec);
	if (!w->header_done) {
		err = put_header(w);
		if (err) {
			w->line.len = start;
			return err;
		}
	}
	switch (w->fmt) {
	case OUT_CSV:
		err = csv_table__row(w->csv, &w->line, rec);
		break;
	case OUT_JSON:
		err = writer__json_row(&w->line, rec);
		if (!err && rec->cgroup)
			err = strbuf__puts(&w->line, ",\"cgroup\":");
		if (!err && rec->cgroup)
			err = json_escape(&w->line, rec->cgroup);
		if (!err && rec->typed)
			err = writer__json_typed(&w->line, rec);
		if (!err && rec->stack)
			err = writer__json_stack(&w->line, rec->stack);
		if (!err && rec->call_no)
			err = strbuf__printf(&w->line, ",\"call\":%" PRIu64, rec->call_no);
		if (!err)
			err = strbuf__puts(&w->line, "}\n");
		break;
	default:
		err = writer__text_row(&w->line, &w->clock, rec, &w->text);
		break;
	}
	if (err) {
		w->line.len = start; /* the header is retried with the next record */
		return err;
	}
	w->header_done = true;
	w->bytes += w->line.len - start;
	return w->line.len >= WRITER_HANDOFF ? hand_over(w) : 0;
}

uint64_t writer__bytes(const struct writer *w)
{
	return w->view ? UINT64_MAX : w->bytes;
}

int writer__flush(struct writer *w, uint64_t *on_disk)
{
	struct stat st;
	off_t pos;

	*on_disk = 0;
	if (!hand_over(w)) {
		errno = 0;
		if (!fflush(w->out) && !ferror(w->out))
			return 0;
		w->err = errno > 0 ? -errno : -EIO;
	}
	/* A regular file's offset is what write(2) took (it was emptied at
	 * the start): the records that end before it are there whole. */
	if (!fstat(fileno(w->out), &st) && S_ISREG(st.st_mode) &&
	    (pos = lseek(fileno(w->out), 0, SEEK_CUR)) > 0)
		*on_disk = (uint64_t)pos;
	return w->err;
}

static bool colors_off; /* NO_COLOR */

void writer__no_color(void)
{
	colors_off = true;
}

void writer__set_color(struct writer *w, bool on)
{
	w->text.color = on && !colors_off && w->fmt == OUT_TEXT;
}

void writer__set_text(struct writer *w, unsigned width, unsigned strcut)
{
	w->text.width = width;
	w->text.strcut = strcut;
}

void writer__set_replay(struct writer *w)
{
	if (w->view)
		w->view->replay = true;
}

int writer__finish(struct writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (w->view)
		w->err = w->view->ops->finish(w->view);
	if (!w->err && !w->header_done && !w->view) {
		size_t start = w->line.len;

		err = put_header(w);
		if (err)
			return err;
		w->header_done = true;
		w->bytes += w->line.len - start;
	}
	if (hand_over(w))
		return w->err;
	errno = 0;
	if (fflush(w->out) || ferror(w->out))
		w->err = errno > 0 ? -errno : -EIO;
	return w->err;
}

void writer__free(struct writer *w)
{
	if (!w)
		return;
	if (w->view)
		w->view->ops->free(w->view);
	hand_over(w); /* rows written but neither flushed nor finished */
	strbuf__release(&w->line);
	csv_table__free(w->csv);
	free(w);
}
