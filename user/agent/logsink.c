// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * logsink.c: JSON Lines to a file rotated by size.
 *
 * The agent writes as root into a folder a spec names, maybe one other
 * users can write to: the folder is opened once (its last component not
 * followed) and checked, and the file and its rotations are opened and
 * renamed relative to it, the file with O_NOFOLLOW, so no symbolic or hard
 * link planted there can send the records (or the O_CREAT) elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
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
	char *base;         /* the file's name in its folder */
	int dir_fd;
	bool shared_dir;    /* writable by others (sticky): the file must be ours */
	uint64_t max_bytes;
	unsigned keep;
	FILE *out;
	struct writer *w;
	uint64_t at_open;   /* the file's size when opened */
	uint64_t records, rotations;
};

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* Open S's folder and decide whether writing there is safe: owned by us
 * or root, and writable by nobody else unless sticky.  0, or -errno with
 * *WHY. */
static int open_dir(struct logsink *s, char **why)
{
	char *copy = strdup(s->path), *dir;
	struct stat st;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0) {
		err = -errno;
		*why = fmt("folder %s: %s", dir,
			   err == -ENOTDIR ? "not a folder (or a symbolic link)" : strerror(-err));
		goto cleanup;
	}
	if (fstat(s->dir_fd, &st)) {
		err = -errno;
		*why = fmt("folder %s: %s", dir, strerror(-err));
		goto cleanup;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		err = -EPERM;
		*why = fmt("folder %s belongs to uid %u: it could redirect the file", dir,
			   (unsigned)st.st_uid);
		goto cleanup;
	}
	s->shared_dir = st.st_mode & (S_IWGRP | S_IWOTH);
	if (s->shared_dir && !(st.st_mode & S_ISVTX)) {
		err = -EPERM;
		*why = fmt("folder %s is writable by other users and not sticky", dir);
		goto cleanup;
	}
cleanup:
	free(copy);
	return err;
}

static int open_file(struct logsink *s, char **why)
{
	struct stat st;
	int fd, err;

	fd = openat(s->dir_fd, s->base,
		    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
		    0640);
	if (fd < 0) {
		err = -errno;
		*why = err == -ELOOP ? fmt("a symbolic link (not followed)") : fmt("%s", strerror(-err));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		*why = fmt("%s", strerror(-err));
		goto fail;
	}
	err = -EPERM;
	if (!S_ISREG(st.st_mode)) {
		*why = fmt("not a regular file");
		goto fail;
	}
	if (st.st_nlink != 1) {
		*why = fmt("has %lu hard links: not written", (unsigned long)st.st_nlink);
		goto fail;
	}
	if (s->shared_dir && st.st_uid != geteuid()) {
		*why = fmt("belongs to uid %u, in a folder other users can write", (unsigned)st.st_uid);
		goto fail;
	}
	fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);
	s->out = fdopen(fd, "a");
	if (!s->out) {
		close(fd);
		return -ENOMEM;
	}
	fd = -1;
	/* Its size: the writer counts what is added (it holds rows back). */
	fseek(s->out, 0, SEEK_END);
	s->at_open = ftell(s->out) > 0 ? (uint64_t)ftell(s->out) : 0;
	s->w = writer__new(OUT_JSON, s->out);
	if (!s->w) {
		fclose(s->out);
		s->out = NULL;
		return -ENOMEM;
	}
	return 0;
fail:
	close(fd);
	return err;
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

struct logsink *logsink__open(const char *path, uint64_t max_bytes, unsigned keep, char **why)
{
	struct logsink *s = calloc(1, sizeof(*s));
	char *copy = NULL;
	int err;

	*why = NULL;
	if (!s)
		return NULL;
	s->dir_fd = -1;
	s->path = strdup(path);
	copy = strdup(path);
	s->max_bytes = max_bytes;
	s->keep = keep;
	if (!s->path || !copy) {
		err = -ENOMEM;
		goto fail;
	}
	s->base = strdup(basename(copy));
	if (!s->base) {
		err = -ENOMEM;
		goto fail;
	}
	err = open_dir(s, why);
	if (!err)
		err = open_file(s, why);
	if (err)
		goto fail;
	free(copy);
	return s;
fail:
	free(copy);
	logsink__close(s);
	errno = -err;
	return NULL;
}

/* BASE.N, or BASE itself for N == 0. */
static char *numbered(const char *base, unsigned n)
{
	return n ? fmt("%s.%u", base, n) : strdup(base);
}

/* Open the file again (after a rotation or a failed one), logging why not. */
static int reopen(struct logsink *s)
{
	char *why = NULL;
	int err = open_file(s, &why);

	if (err)
		log_warn("%s: %s", s->path, why ? why : strerror(-err));
	free(why);
	return err;
}

/* Renames within the folder: they move links, never follow them. */
static int rotate(struct logsink *s)
{
	int err = close_file(s);

	if (err)
		log_warn("%s: %s", s->path, strerror(-err));
	if (!s->keep) {
		if (unlinkat(s->dir_fd, s->base, 0) && errno != ENOENT)
			log_warn("cannot remove %s: %s", s->path, strerror(errno));
	}
	for (unsigned n = s->keep; n >= 1; n--) {
		char *from = numbered(s->base, n - 1), *to = numbered(s->base, n);

		if (from && to && renameat(s->dir_fd, from, s->dir_fd, to) && errno != ENOENT)
			log_warn("cannot rename %s to %s in the folder of %s: %s", from, to, s->path,
				 strerror(errno));
		free(from);
		free(to);
	}
	s->rotations++;
	return reopen(s);
}

int logsink__write(struct logsink *s, const struct call_record *rec)
{
	uint64_t size;
	int err;

	if (!s->out) {
		/* A failed rotation: try again to open. */
		err = reopen(s);
		if (err)
			return err;
	}
	size = s->at_open + writer__bytes(s->w); /* rows held back included */
	if (size > 0 && size >= s->max_bytes) {
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
	uint64_t on_disk;

	if (!s->out)
		return 0;
	return writer__flush(s->w, &on_disk);
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
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	free(s->base);
	free(s->path);
	free(s);
}
