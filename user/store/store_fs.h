/*
 * store_fs.h: creating the folders and files of a store or an export
 * without ever following a symlink, with owner-only permissions (captured
 * arguments can hold secrets), and without overwriting anything: a folder
 * that exists already makes NAME-1, NAME-2, ... as callmonitor does.
 */
#ifndef CMON_STORE_FS_H
#define CMON_STORE_FS_H

#include <stddef.h>

/* Suffixes tried after PATH itself: PATH-1 .. PATH-STORE_FS_MAX_SUFFIX. */
#define STORE_FS_MAX_SUFFIX 9999

/*
 * Create a new folder, mode 0700, at PATH or, when PATH exists (as anything,
 * a symlink included: it is never followed), at the first free PATH-N.
 * Trailing slashes of PATH are ignored; its parent must exist.  On success
 * *ACTUAL is the path used (malloc'ed) and *DIRFD an O_DIRECTORY fd on it
 * (O_CLOEXEC).  Returns 0 or a negative errno (-EEXIST when every suffix is
 * taken, -ENOTDIR/-ELOOP when the folder was swapped for something else).
 */
int store_fs__mkdir_unique(const char *path, char **actual, int *dirfd);

/* Create folder NAME (one path component) in DIRFD, 0700, and open it
 * (O_NOFOLLOW).  Returns the new fd, or a negative errno (-EEXIST if NAME
 * exists). */
int store_fs__mkdirat(int dirfd, const char *name);

/* Create file NAME in DIRFD, 0600, O_EXCL | O_NOFOLLOW, for writing.
 * Returns the fd or a negative errno. */
int store_fs__create(int dirfd, const char *name);

/* Write all LEN bytes to FD (retrying short writes).  0 or -errno. */
int store_fs__write_all(int fd, const void *buf, size_t len);

/* Copy PATH without its trailing slashes (at least "/" is kept); NULL and
 * errno on failure. */
char *store_fs__strip_slashes(const char *path);

#endif
