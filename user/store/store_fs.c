// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * store_fs.c: owner-only, never-following, never-overwriting creation of
 * store and export folders and files.  Everything goes through a parent
 * directory fd and *at() calls, so a symlink planted at the final name is
 * seen as "exists" (mkdirat does not follow it) and skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store/store_fs.h"

char *store_fs__strip_slashes(const char *path)
{
	size_t n = strlen(path);
	char *s;

	while (n > 1 && path[n - 1] == '/')
		n--;
	s = strndup(path, n);
	if (!s)
		errno = ENOMEM;
	return s;
}

int store_fs__mkdirat(int dirfd, const char *name)
{
	struct stat st;
	int fd;

	if (mkdirat(dirfd, name, 0700))
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* The umask can only have narrowed 0700; make it exact anyway, and make
	 * sure what we opened is the folder we made (not swapped in between). */
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -ENOTDIR;
	}
	if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int store_fs__create(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && (st.st_mode & 07777) != 0600 && fchmod(fd, 0600)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int store_fs__write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t k = write(fd, p, len);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

int store_fs__mkdir_unique(const char *path, char **actual, int *dirfd)
{
	char *clean = NULL, *parent = NULL, *cand = NULL;
	const char *base;
	size_t cap;
	int pfd = -1, fd = -1, err = 0;

	*actual = NULL;
	*dirfd = -1;
	if (!path || !*path)
		return -EINVAL;
	clean = store_fs__strip_slashes(path);
	if (!clean)
		return -ENOMEM;
	base = strrchr(clean, '/');
	if (base) {
		parent = base == clean ? strdup("/") : strndup(clean, (size_t)(base - clean));
		base++;
	} else {
		parent = strdup(".");
		base = clean;
	}
	if (!parent) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		err = -EINVAL;
		goto cleanup;
	}
	/* The parent path is the user's to resolve (symlinks included); only
	 * the component we create must never be followed. */
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		err = -errno;
		goto cleanup;
	}
	cap = strlen(clean) + 16;
	cand = malloc(cap);
	if (!cand) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int i = 0; i <= STORE_FS_MAX_SUFFIX; i++) {
		if (i == 0)
			snprintf(cand, cap, "%s", clean);
		else
			snprintf(cand, cap, "%s-%d", clean, i);
		/* The last component of CAND, created relative to the parent. */
		fd = store_fs__mkdirat(pfd, cand + (base - clean));
		if (fd >= 0)
			break;
		if (fd != -EEXIST) {
			err = fd;
			goto cleanup;
		}
	}
	if (fd < 0) {
		err = -EEXIST;
		goto cleanup;
	}
	*actual = cand;
	cand = NULL;
	*dirfd = fd;
cleanup:
	free(cand);
	if (pfd >= 0)
		close(pfd);
	free(parent);
	free(clean);
	return err;
}
