/* file.h: small whole-file helpers. */
#ifndef CMON_FILE_H
#define CMON_FILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Read the regular file PATH whole (at most MAX bytes; 0: no limit) into a
 * malloc'd, NUL-terminated buffer.  A file that shrinks while being read
 * gives what was there.  Returns 0, or -errno: -EINVAL for a file that is
 * not regular, -EFBIG for one larger than MAX.
 */
int file__read_all(const char *path, size_t max, char **data, size_t *len);

/*
 * Give stream F a SIZE-byte buffer, before its first I/O.  What
 * setvbuf(F, NULL, _IOFBF, SIZE) does not do: glibc then takes st_blksize
 * (4 KiB) whatever SIZE says, so cmon's 1 MiB output buffer was a write(2)
 * every 4 KiB.  Returns the buffer, which must outlive F (free it after
 * fclose), or NULL without memory (F keeps its default).
 */
void *file__buffer(FILE *f, size_t size);

/* The columns of the terminal FD is; 0 when it is not one or says none. */
unsigned file__term_columns(int fd);

#endif
