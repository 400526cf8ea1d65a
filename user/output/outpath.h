/*
 * outpath.h: output names with per-process and per-function fields.  In
 * -o TEMPLATE, %p is the process id, %r its rank (OMPI_COMM_WORLD_RANK,
 * PMI_RANK, SLURM_PROCID or RANK in its environment, the first set;
 * "norank" if none), %f the function's name (bytes other than letters,
 * digits, '_', '.', '-' as '_'), %% a '%'.
 */
#ifndef CMON_OUTPUT_OUTPATH_H
#define CMON_OUTPUT_OUTPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Does TEMPLATE name a file per process or per function (a %p, %r or %f
 * field)? */
bool out_path__per_process(const char *tmpl);
/* Does it name a file per function (a %f field)? */
bool out_path__per_function(const char *tmpl);

/* A '%' other than %p, %r, %f, %%: -EINVAL, with its position in *AT. */
int out_path__check(const char *tmpl, size_t *at);

/* The rank of process PID into BUF ("norank" when none is set). */
void out_path__rank(pid_t pid, char *buf, size_t len);

/* Ranks read early (-p PIDs, a launched program: a process may be gone
 * when its first record is drained); others are read when asked. */
struct rank_book {
	struct rank_entry { pid_t pid; char rank[32]; } *v;
	size_t n, cap;
};
void rank_book__note(struct rank_book *b, pid_t pid);
void rank_book__rank(const struct rank_book *b, pid_t pid, char *buf, size_t len);
void rank_book__free(struct rank_book *b);

/* TEMPLATE for process PID (RANK for %r) and function FUNC (for %f; NULL:
 * "") into *OUT (malloc'd).  0, -EINVAL (a malformed template), -ENOMEM. */
int out_path__expand(const char *tmpl, pid_t pid, const char *rank, const char *func, char **out);

#endif
