/* runs.h: capture stores as a set (cmd_runs.c): `cmon ls DIR`, `cmon rm`. */
#ifndef CMON_RUNS_H
#define CMON_RUNS_H

#include <stdbool.h>

/* PATH is a folder holding an entry calls.db (of any type: a FIFO, a symlink
 * there is a store to refuse with a reason, not another folder). */
bool runs__is_store_dir(const char *path);

/* `cmon ls DIR` on a folder of stores: one line per store; an exit status. */
int runs__list_dir(const char *dir);

#endif
