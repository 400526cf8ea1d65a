/*
 * debuginfod.h: debug files fetched by build ID from debuginfod servers,
 * through elfutils' client (libdebuginfod) and its cache.
 *
 * The command sets the process up once (debuginfod__setup) before any
 * lookup: whether servers are configured, what a fetch shows, whether a
 * lookup may wait.  The servers, the cache directory and the timeout are
 * the client's own variables (DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH,
 * DEBUGINFOD_TIMEOUT, ...), which libdebuginfod reads itself: its API has
 * no setter for them, and a user's settings for gdb or perf work for cmon
 * unchanged.  main reads DEBUGINFOD_URLS only to say whether a lookup is
 * on at all and which servers a message names.
 *
 * Every build ID is looked up once a process: the answer (a path in the
 * cache, or why not) is kept, and a failure is one warning naming the file
 * it was for.  In the background mode (the agent) a lookup never waits: an
 * answer not known yet is -EAGAIN while a worker thread fetches it, and
 * debuginfod__generation() moves when a fetch has ended.
 */
#ifndef CMON_DEBUGINFOD_H
#define CMON_DEBUGINFOD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* A fetch's progress: DONE of TOTAL bytes (TOTAL 0: not known yet);
 * FINISHED once at the end (ERR 0: the file arrived, else -errno). */
struct debuginfod_progress {
	const char *file; /* the file whose debug info is fetched */
	const char *url;  /* the server answering, NULL until one does */
	long done, total;
	bool finished;
	int err;
};
typedef void (*debuginfod_progress_fn)(void *ctx, const struct debuginfod_progress *p);

struct debuginfod_setup {
	const char *urls;  /* DEBUGINFOD_URLS as main read it: NULL or "": off */
	bool disabled;     /* --no-debuginfod */
	bool background;   /* never wait: fetch on a worker thread */
	debuginfod_progress_fn progress; /* foreground fetches; NULL: none */
	void *ctx;
	/* Non-zero: a fetch under way is abandoned (the user's Ctrl-C). */
	volatile sig_atomic_t *stop;
};

/* Before any lookup; called again, it replaces the settings.  0, -ENOMEM. */
int debuginfod__setup(const struct debuginfod_setup *s);
bool debuginfod__enabled(void);
/* The servers as set up ("" when off). */
const char *debuginfod__urls(void);

/*
 * The debug file of build ID BID (LEN bytes, the raw note) of FILE (named
 * in messages).  0 and *PATH (malloc'd: the file in the client's cache; the
 * caller checks it is the right one), -ENOSYS (off), -EAGAIN (background:
 * being fetched), or the fetch's -errno (-ENOENT: no server has it,
 * -ECONNREFUSED, -ETIMEDOUT, -EINTR: abandoned), said once as a warning.
 */
int debuginfod__find(const unsigned char *bid, size_t len, const char *file, char **path);

/* The file *PATH named by debuginfod__find was not usable (REASON): said
 * once, and the build ID's answer becomes -EBADMSG. */
void debuginfod__reject(const unsigned char *bid, size_t len, const char *file,
			const char *path, const char *reason);

/* Moves each time a background fetch ends (its answer is then known). */
unsigned debuginfod__generation(void);
/* Fetches of this thread's lookups that were deferred (-EAGAIN): a caller
 * compares it before and after a resolution. */
unsigned debuginfod__deferred(void);

/* Stop the worker (a fetch under way is abandoned) and free the answers. */
void debuginfod__shutdown(void);

#endif
