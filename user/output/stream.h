/*
 * stream.h: `-o unix:PATH`, the records served live on a unix socket to
 * every reader connected (JSON Lines unless -F says otherwise).
 *
 * The output is a stdio stream (fopencookie) that the writers use as any
 * file; what is written is sent to every reader when the stream is flushed
 * (after each drain of the ring buffer) or its 256 KiB buffer fills, never
 * waiting on a reader: what a reader's socket cannot take is kept for it, up to
 * STREAM_READER_BACKLOG bytes, and a reader that falls further behind is
 * disconnected and counted as dropped.  The tracer is never slowed by a
 * reader.  Readers connecting later get the records from then on.  At the
 * end, readers get up to a second to take what is kept for them; the
 * socket file is removed (only if PATH still names the one cmon made), and
 * a summary line goes to stderr.  The socket is its user's alone (0600,
 * whatever the umask): the records are the traced program's data.
 */
#ifndef CMON_STREAM_H
#define CMON_STREAM_H

#include <stdio.h>

#define STREAM_READER_BACKLOG (64u << 20)

/* Listen on the unix socket PATH.  A socket file there is replaced only
 * when it is cmon's user's and nothing listens on it (errno EADDRINUSE when
 * a program does, EEXIST for another user's socket or any other file).  A FILE to fflush when readers
 * should get what was written, closed with fclose; NULL and errno on
 * failure.  Its buffering is the caller's (file__buffer): a send per
 * record per reader would cost the consumer microseconds. */
FILE *stream__open(const char *path);

#endif
