// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stream.c: records served on a unix socket; see stream.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "core/grow.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "stream.h"
#include "core/clock.h"

struct reader {
	int fd;
	struct strbuf backlog; /* bytes not sent yet; sent from `off` */
	size_t off;
	bool mid_line;         /* joined inside a line: skip to the next one */
};

struct stream {
	int lfd;
	char *path;
	dev_t dev;             /* the socket file bound: removed at the end only */
	ino_t ino;             /* while PATH still names it */
	struct reader *readers;
	size_t n, cap;
	uint64_t served, dropped;
	bool mid_line;         /* the last byte sent was not a line end */
};

static void reader__close(struct reader *r)
{
	close(r->fd);
	strbuf__release(&r->backlog);
	r->fd = -1;
}

static void accept_readers(struct stream *s)
{
	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (GROW(s->readers, s->n, s->cap, 8)) {
			close(fd);
			return;
		}
		/* stdio hands over full buffers, not lines: a reader that joins
		 * inside a line starts at the next one. */
		s->readers[s->n++] = (struct reader){ .fd = fd, .mid_line = s->mid_line };
		s->served++;
	}
}

/* Send up to N bytes of BUF without waiting: the count sent (0 when the
 * socket is full), or -1 when the reader is gone. */
static ssize_t send_some(int fd, const char *buf, size_t n)
{
	size_t sent = 0;

	while (sent < n) {
		ssize_t w = send(fd, buf + sent, n - sent, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			return -1;
		}
		sent += (size_t)w;
	}
	return (ssize_t)sent;
}

/* Send what R has pending, then BUF; keep what the socket does not take.
 * false: R is gone (closed by its end) or too slow (dropped). */
static bool reader__send(struct stream *s, struct reader *r, const char *buf, size_t n)
{
	size_t pending = r->backlog.len - r->off;
	ssize_t w;

	if (pending) {
		w = send_some(r->fd, r->backlog.buf + r->off, pending);
		if (w < 0)
			return false;
		r->off += (size_t)w;
		pending -= (size_t)w;
	}
	if (!pending) {
		r->backlog.len = 0;
		r->off = 0;
		if (n) {
			w = send_some(r->fd, buf, n);
			if (w < 0)
				return false;
			buf += w;
			n -= (size_t)w;
		}
	}
	if (!n)
		return true;
	if (pending + n > STREAM_READER_BACKLOG) {
		s->dropped++;
		return false;
	}
	if (r->off > r->backlog.len / 2) { /* compact before growing */
		memmove(r->backlog.buf, r->backlog.buf + r->off, pending);
		r->backlog.len = pending;
		r->off = 0;
	}
	if (strbuf__putn(&r->backlog, buf, n)) {
		s->dropped++;
		return false;
	}
	return true;
}

static void broadcast(struct stream *s, const char *buf, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct reader *r = &s->readers[i];
		const char *from = buf;
		size_t len = n;

		if (r->mid_line && n) {
			const char *nl = memchr(buf, '\n', n);

			from = nl ? nl + 1 : buf + n;
			len = n - (size_t)(from - buf);
			r->mid_line = !nl;
		}
		if (!reader__send(s, r, from, len)) {
			reader__close(&s->readers[i]);
			continue;
		}
		s->readers[k++] = s->readers[i];
	}
	s->n = k;
}

/* Remove the socket file only if PATH still names the one cmon bound:
 * another program may have put its own there since. */
static void unlink_own(const struct stream *s)
{
	struct stat st;

	if (!lstat(s->path, &st) && S_ISSOCK(st.st_mode) && st.st_dev == s->dev &&
	    st.st_ino == s->ino)
		unlink(s->path);
}

/* A socket file at PATH: something accepts connections there. */
static bool someone_listens(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	bool yes;

	if (fd < 0)
		return true; /* cannot tell: never take it */
	/* A full backlog answers EAGAIN: still a listener. */
	yes = !connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) || errno != ECONNREFUSED;
	close(fd);
	return yes;
}

/* Bind FD at SA->sun_path, read and write for cmon's user alone whatever
 * the umask: the stream is the traced program's data. */
static int bind_private(int fd, const struct sockaddr_un *sa)
{
	mode_t old = umask(0177);
	int err = bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) ? -errno : 0;

	umask(old);
	return err;
}

static ssize_t stream_write(void *cookie, const char *buf, size_t n)
{
	struct stream *s = cookie;

	accept_readers(s);
	broadcast(s, buf, n);
	if (n)
		s->mid_line = buf[n - 1] != '\n';
	return (ssize_t)n; /* the records are "written" whoever reads them */
}

static int stream_close(void *cookie)
{
	struct stream *s = cookie;
	double end = clock__mono_s() + 1.0;

	accept_readers(s);
	/* The tail: readers get a second to take what is kept for them. */
	for (;;) {
		struct pollfd pf[64];
		nfds_t np = 0;

		broadcast(s, NULL, 0);
		for (size_t i = 0; i < s->n && np < 64; i++)
			if (s->readers[i].backlog.len > s->readers[i].off)
				pf[np++] = (struct pollfd){ .fd = s->readers[i].fd, .events = POLLOUT };
		if (!np || clock__mono_s() >= end)
			break;
		poll(pf, np, 50);
	}
	for (size_t i = 0; i < s->n; i++) {
		if (s->readers[i].backlog.len > s->readers[i].off)
			s->dropped++;
		reader__close(&s->readers[i]);
	}
	log_report("stream %s: %llu reader%s served, %llu dropped (too slow)",
		   s->path, (unsigned long long)s->served, s->served == 1 ? "" : "s",
		(unsigned long long)s->dropped);
	close(s->lfd);
	unlink_own(s);
	free(s->readers);
	free(s->path);
	free(s);
	return 0;
}

FILE *stream__open(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	cookie_io_functions_t io = { .write = stream_write, .close = stream_close };
	struct stream *s = NULL;
	bool bound = false;
	struct stat st;
	FILE *f = NULL;
	int err;

	if (!*path || strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	memcpy(sa.sun_path, path, strlen(path));
	if (!lstat(path, &st)) {
		/* Only a socket of cmon's user that nobody listens on (left by
		 * an earlier run) is replaced: a live one is another program's. */
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			errno = EEXIST;
			return NULL;
		}
		if (someone_listens(&sa)) {
			errno = EADDRINUSE;
			return NULL;
		}
		unlink(path);
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path)))
		goto fail;
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0)
		goto fail;
	err = bind_private(s->lfd, &sa);
	if (err) {
		errno = -err;
		goto fail_sock;
	}
	bound = true;
	if (lstat(path, &st) || listen(s->lfd, 64))
		goto fail_sock;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	f = fopencookie(s, "w", io);
	if (!f)
		goto fail_sock;
	return f;
fail_sock:
	err = errno;
	close(s->lfd);
	if (bound)
		unlink_own(s);
	errno = err;
fail:
	err = errno;
	if (s)
		free(s->path);
	free(s);
	errno = err ? err : ENOMEM;
	return NULL;
}
