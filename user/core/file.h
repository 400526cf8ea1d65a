/* file.h: small whole-file helpers. */
#ifndef CMON_FILE_H
#define CMON_FILE_H

#include <stddef.h>

/*
 * Read the regular file PATH whole (at most MAX bytes; 0: no limit) into a
 * malloc'd, NUL-terminated buffer.  A file that shrinks while being read
 * gives what was there.  Returns 0, or -errno: -EINVAL for a file that is
 * not regular, -EFBIG for one larger than MAX.
 */
int file__read_all(const char *path, size_t max, char **data, size_t *len);

#endif
