// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* file_sink.c: a format's writer as a sink (sink.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/file.h"
#include "core/log.h"
#include "sink.h"

struct file_sink {
	struct out_sink base;
	struct writer *w;
	FILE *f;
	void *buf;  /* F's stdio buffer, when the file is ours */
	bool owned; /* a file per process: closed here */
};

static int fs_write(struct out_sink *s, const struct call_record *rec, uint32_t func_id)
{
	return writer__write(((struct file_sink *)s)->w, rec);
}

static uint64_t fs_bytes(const struct out_sink *s)
{
	return writer__bytes(((const struct file_sink *)s)->w);
}

static int fs_finish(struct out_sink *s)
{
	return writer__finish(((struct file_sink *)s)->w);
}

static int fs_flush(struct out_sink *s, uint64_t *on_disk)
{
	struct file_sink *fs = (struct file_sink *)s;

	/* A view (tree, folded, chrome) holds its records until the end:
	 * what it may have written goes out, nothing is settled. */
	if (writer__bytes(fs->w) == UINT64_MAX) {
		*on_disk = 0;
		fflush(fs->f);
		return 0;
	}
	return writer__flush(fs->w, on_disk);
}

static void fs_free(struct out_sink *s)
{
	struct file_sink *fs = (struct file_sink *)s;

	writer__free(fs->w);
	if (fs->owned)
		fclose(fs->f);
	free(fs->buf);
	free(fs);
}

static const struct out_sink_ops file_sink_ops = {
	.write = fs_write,
	.bytes = fs_bytes,
	.finish = fs_finish,
	.flush = fs_flush,
	.free = fs_free,
};

struct out_sink *file_sink__new(const struct file_sink_opts *o, FILE *out)
{
	struct file_sink *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	fs->base.ops = &file_sink_ops;
	fs->f = out;
	fs->w = writer__new(o->fmt, out);
	if (!fs->w) {
		free(fs);
		return NULL;
	}
	writer__set_schema(fs->w, &o->csv);
	writer__set_color(fs->w, o->color);
	writer__set_text(fs->w, o->width, o->strcut);
	return &fs->base;
}

int file_sink__open(void *ctx, pid_t pid, uint32_t func_id, const char *path,
		    struct out_sink **out)
{
	struct file_sink_opts o = *(const struct file_sink_opts *)ctx;

	/* A new file is the user's alone; one that exists keeps its mode. */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	void *buf;
	int err;

	*out = NULL;
	if (!f) {
		err = -errno;
		log_error("cannot write %s (process %d): %s", path, (int)pid, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	buf = file__buffer(f, 1 << 16);
	o.csv.only = func_id;
	*out = file_sink__new(&o, f);
	if (!*out) {
		fclose(f);
		free(buf);
		return -ENOMEM;
	}
	((struct file_sink *)*out)->owned = true;
	((struct file_sink *)*out)->buf = buf;
	return 0;
}
