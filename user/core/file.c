// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "file.h"

void *file__buffer(FILE *f, size_t size)
{
	void *buf = malloc(size);

	if (buf && setvbuf(f, buf, _IOFBF, size)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int file__read_all(const char *path, size_t max, char **data, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	size_t done = 0;
	int fd, err = 0;

	*data = NULL;
	*len = 0;
	/* O_NONBLOCK: a FIFO opens at once (and is refused below), not when a writer comes. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	if (max && (size_t)st.st_size > max) {
		err = -EFBIG;
		goto cleanup;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto cleanup;
		}
		if (n == 0)
			break; /* shrank while we read: what was there */
		done += (size_t)n;
	}
	buf[done] = '\0';
	*data = buf;
	*len = done;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

unsigned file__term_columns(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws))
		return 0;
	return ws.ws_col;
}
