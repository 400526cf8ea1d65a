/*
 * launch.h: start a program paused before exec, so its probes are in place
 * before its first instruction runs, then let it go.
 *
 * The child waits on a pipe; cmon attaches with the child's pid (uprobes are
 * installed as exec maps the files), then releases it.  If cmon dies before
 * that, the pipe closes and the child exits without running the program.
 */
#ifndef CMON_LAUNCH_H
#define CMON_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int go_fd;    /* write end: one byte releases the child */
	int err_fd;   /* read end: errno of a failed exec, EOF on success */
	int pidfd;    /* readable when the child exits */
	/* Set before launch__start: the child stops (ptrace) right after its
	 * exec, its files mapped, until launch__continue (--watch needs the
	 * executable's load address before the first instruction). */
	bool stop_at_exec;
	bool stopped;  /* held after exec now */
};

/* Fork a child that will execv(PATH, ARGV).  Returns 0 or a negative errno. */
/* Note the signal dispositions cmon was started with (first thing in
 * main): a launched program gets them back, whatever cmon set since. */
void launch__save_dispositions(void);

int launch__start(const char *path, char *const argv[], struct launch *l);

/* Release the child into execv.  Returns 0, or the negative errno of a
 * failed exec (the child has then exited). */
int launch__release(struct launch *l);

/* stop_at_exec: let the child go on from its exec stop (0 or -errno). */
int launch__continue(struct launch *l);

/* Reap the child if it has exited: 1 and its wait status, 0 if it runs. */
int launch__reap(struct launch *l, int *status, int block);

/* Kill a child that never ran (attach failed) and reap it. */
void launch__abort(struct launch *l);
void launch__close(struct launch *l);

#endif
