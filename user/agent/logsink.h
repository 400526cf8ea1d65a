/*
 * logsink.h: the `log` instrument's output: call records as JSON Lines
 * (the `cmon trace -F json` format) in a file rotated by size: when a
 * write takes PATH past MAX_BYTES, PATH.KEEP-1 .. PATH.1 move up one
 * (PATH.KEEP is dropped), PATH becomes PATH.1, and a new PATH starts.
 * With KEEP 0 the file is just started afresh.  At most about
 * (KEEP + 1) x MAX_BYTES of disk, plus one record.  A file that cannot
 * move (PATH.1 a folder another user made) stops at its size: records are
 * refused (the caller counts them lost), the trouble is logged once, and
 * the rotation is tried again every 10 s.
 */
#ifndef CMON_AGENT_LOGSINK_H
#define CMON_AGENT_LOGSINK_H

#include <stdint.h>
#include "output/record.h"

struct logsink;

/* Open PATH for appending (created 0640), never through a symbolic link
 * and never in a folder other users could use to redirect it: the folder
 * must belong to root or to us, and be writable by nobody else unless it
 * is sticky (like /tmp), where the file must be ours.  NULL and errno, with
 * *WHY (the caller frees it) saying why when known. */
struct logsink *logsink__open(const char *path, uint64_t max_bytes, unsigned keep, char **why);

/* Write one record (rotating first when the file is full).  0 or -errno. */
int logsink__write(struct logsink *s, const struct call_record *rec);

/* Hand what is buffered to the kernel.  0 or -errno. */
int logsink__flush(struct logsink *s);

/* Written since open; may be called from another thread than the writer's. */
uint64_t logsink__records(const struct logsink *s);
uint64_t logsink__rotations(const struct logsink *s);
void logsink__close(struct logsink *s); /* flush and close; NULL fine */

#endif
