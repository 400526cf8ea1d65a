/*
 * setunion.h: one probe set covering several: the agent attaches many
 * probes on the same file with one set of links and maps (one profiler),
 * instead of one each (~14 file descriptors and ~120 KB a probe).
 */
#ifndef CMON_SETUNION_H
#define CMON_SETUNION_H

#include <stddef.h>
#include <stdint.h>
#include "probe/resolve.h"

/*
 * The union of SETS[0..N): objects merged by (dev, inode), functions by
 * (object, address), targets by pid.  IDS[k][i] gets the union's func_id of
 * SETS[k]'s function i (IDS[k] has room for SETS[k]->n_funcs).  Sets that
 * disagree on binary mode or the program they are scoped to cannot be
 * merged: -EINVAL.  0 and *OUT (probe_set__free), or -errno.
 */
int probe_set__union(const struct probe_set *const *sets, size_t n, uint32_t *const *ids,
		     struct probe_set **out);

#endif
