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
	/* Set before launch__start: the child in a process group of its own
	 * (cmon break: a Ctrl-C at cmon's prompt is cmon's, not the program's). */
	bool own_group;
	bool ran_to;   /* launch__run_to took it past its first exec */
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

/*
 * For a program that is not the one to trace (a script, a pyenv shim):
 * release it (stop_at_exec set) and let it run from exec to exec, as the
 * shell would, until it execs a file IS_TARGET(CTX, PATH) takes; it is
 * held there (launch__release then lets it go).  0 and *EXE (malloc'd),
 * -ENOENT when it ended first (*EXE: the last file it ran), -errno.
 */
typedef bool (*launch_target_fn)(void *ctx, const char *exe);
int launch__run_to(struct launch *l, launch_target_fn is_target, void *ctx, char **exe);

/* Reap the child if it has exited: 1 and its wait status, 0 if it runs. */
int launch__reap(struct launch *l, int *status, int block);

/* Kill a child that never ran (attach failed) and reap it. */
void launch__abort(struct launch *l);
void launch__close(struct launch *l);

#endif
