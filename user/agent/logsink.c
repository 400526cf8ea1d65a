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
#include "core/clock.h"
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
	/* A rotation or an open that failed (LOG.1 a folder someone made in
	 * a sticky /tmp, the file replaced by one not ours): the file is left
	 * at its size, records are refused (counted lost by the caller) and
	 * tried again after LOGSINK_RETRY_S; the first failure alone is
	 * logged, never one a record. */
	bool stuck;
	bool warned;
	double retry_at;
};

#define LOGSINK_RETRY_S 10.0

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

/* The first trouble of S is said, the rest only counted (as lost
 * records, by the caller). */
static void warn_once(struct logsink *s, const char *fmt_, ...) __attribute__((format(printf, 2, 3)));
static void warn_once(struct logsink *s, const char *fmt_, ...)
{
	va_list ap;
	char *msg;

	if (s->warned)
		return;
	s->warned = true;
	va_start(ap, fmt_);
	if (vasprintf(&msg, fmt_, ap) < 0)
		msg = NULL;
	va_end(ap);
	log_warn("%s: %s (records are counted lost until it works again, tried every %.0f s; "
		 "said once)", s->path, msg ? msg : "out of memory", LOGSINK_RETRY_S);
	free(msg);
}

static int stuck(struct logsink *s, int err)
{
	s->stuck = true;
	s->retry_at = clock__mono_s() + LOGSINK_RETRY_S;
	return err;
}

/* Open the file again (after a rotation or a failed one). */
static int reopen(struct logsink *s)
{
	char *why = NULL;
	int err = open_file(s, &why);

	if (err)
		warn_once(s, "cannot open: %s", why ? why : strerror(-err));
	free(why);
	return err ? stuck(s, err) : 0;
}

/* Renames within the folder: they move links, never follow them.  The
 * file itself must move (or go, KEEP 0), else it would grow past
 * max_bytes without bound: then it stays closed at its size. */
static int rotate(struct logsink *s)
{
	char *first_err = NULL;
	int err = close_file(s);

	if (err)
		warn_once(s, "%s", strerror(-err));
	if (!s->keep && unlinkat(s->dir_fd, s->base, 0) && errno != ENOENT) {
		err = -errno;
		warn_once(s, "cannot remove it to start afresh: %s: it stops at its size",
			  strerror(-err));
		return stuck(s, err);
	}
	for (unsigned n = s->keep; n >= 1; n--) {
		char *from = numbered(s->base, n - 1), *to = numbered(s->base, n);

		err = !from || !to ? -ENOMEM
		      : renameat(s->dir_fd, from, s->dir_fd, to) && errno != ENOENT ? -errno : 0;
		if (err && n == 1)
			warn_once(s, "cannot rename it to %s: %s: it cannot rotate and stops at its "
				  "size", to ? to : "", strerror(-err));
		else if (err && !first_err) /* an older rotation lost: said if the file moves */
			first_err = fmt("cannot rename %s to %s in its folder: %s", from ? from : "",
					to ? to : "", strerror(-err));
		free(from);
		free(to);
		if (err && n == 1) {
			free(first_err);
			return stuck(s, err);
		}
	}
	if (first_err)
		warn_once(s, "%s", first_err);
	free(first_err);
	s->rotations++;
	s->stuck = false;
	return reopen(s);
}

int logsink__write(struct logsink *s, const struct call_record *rec)
{
	uint64_t size;
	int err;

	if (!s->out) {
		/* Stuck: nothing is written until the retry is due; then the
		 * full file rotates (or the file opens) first. */
		if (s->stuck && clock__mono_s() < s->retry_at)
			return -EAGAIN;
		err = s->stuck && s->at_open >= s->max_bytes ? rotate(s) : reopen(s);
		if (err)
			return err;
	}
	size = s->at_open + writer__bytes(s->w); /* rows held back included */
	if (size > 0 && size >= s->max_bytes) {
		s->at_open = size; /* what is left there, should the rotation fail */
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
