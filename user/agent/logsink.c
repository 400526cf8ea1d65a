// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* logsink.c: JSON Lines to a file rotated by size. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "agent/logsink.h"
#include "core/log.h"
#include "output/writer.h"

struct logsink {
	char *path;
	uint64_t max_bytes;
	unsigned keep;
	FILE *out;
	struct writer *w;
	uint64_t records, rotations;
};

static int open_file(struct logsink *s)
{
	int fd = open(s->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);

	if (fd < 0)
		return -errno;
	s->out = fdopen(fd, "a");
	if (!s->out) {
		close(fd);
		return -ENOMEM;
	}
	/* ftell is the size from here on (appends move the position). */
	fseek(s->out, 0, SEEK_END);
	s->w = writer__new(OUT_JSON, s->out);
	if (!s->w) {
		fclose(s->out);
		s->out = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int close_file(struct logsink *s)
{
	int err = 0;

	if (s->w)
		err = writer__finish(s->w);
	writer__free(s->w);
	s->w = NULL;
	if (s->out && fclose(s->out) && !err)
		err = -errno;
	s->out = NULL;
	return err;
}

struct logsink *logsink__open(const char *path, uint64_t max_bytes, unsigned keep)
{
	struct logsink *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	s->path = strdup(path);
	s->max_bytes = max_bytes;
	s->keep = keep;
	if (!s->path) {
		err = -ENOMEM;
		goto fail;
	}
	err = open_file(s);
	if (err)
		goto fail;
	return s;
fail:
	logsink__close(s);
	errno = -err;
	return NULL;
}

/* PATH.N, or PATH itself for N == 0. */
static char *numbered(const char *path, unsigned n)
{
	char *s = NULL;

	if (!n)
		return strdup(path);
	if (asprintf(&s, "%s.%u", path, n) < 0)
		return NULL;
	return s;
}

static int rotate(struct logsink *s)
{
	int err = close_file(s);

	if (err)
		log_warn("%s: %s", s->path, strerror(-err));
	if (!s->keep) {
		if (unlink(s->path) && errno != ENOENT)
			log_warn("cannot remove %s: %s", s->path, strerror(errno));
	}
	for (unsigned n = s->keep; n >= 1; n--) {
		char *from = numbered(s->path, n - 1), *to = numbered(s->path, n);

		if (from && to && rename(from, to) && errno != ENOENT)
			log_warn("cannot rename %s to %s: %s", from, to, strerror(errno));
		free(from);
		free(to);
	}
	s->rotations++;
	return open_file(s);
}

int logsink__write(struct logsink *s, const struct call_record *rec)
{
	long pos;
	int err;

	if (!s->out) {
		/* A failed rotation: try again to open. */
		err = open_file(s);
		if (err)
			return err;
	}
	pos = ftell(s->out); /* the file's size, buffered bytes included */
	if (pos > 0 && (uint64_t)pos >= s->max_bytes) {
		err = rotate(s);
		if (err)
			return err;
	}
	err = writer__write(s->w, rec);
	if (!err)
		__atomic_fetch_add(&s->records, 1, __ATOMIC_RELAXED); /* read by the HTTP thread */
	return err;
}

int logsink__flush(struct logsink *s)
{
	if (!s->out)
		return 0;
	return fflush(s->out) ? -errno : 0;
}

uint64_t logsink__records(const struct logsink *s)
{
	return __atomic_load_n(&s->records, __ATOMIC_RELAXED);
}
uint64_t logsink__rotations(const struct logsink *s) { return s->rotations; }

void logsink__close(struct logsink *s)
{
	if (!s)
		return;
	close_file(s);
	free(s->path);
	free(s);
}
