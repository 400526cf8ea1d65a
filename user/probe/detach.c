// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Return links closed together (detach.h says why).
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "core/grow.h"
#include "probe/detach.h"

/* A closing thread only waits in the kernel: the smallest stack will do. */
#define CLOSER_STACK (PTHREAD_STACK_MIN > 65536 ? PTHREAD_STACK_MIN : 65536)

void link_closer__add(struct link_closer *c, int fd)
{
	if (fd < 0)
		return;
	if (GROW(c->fds, c->n, c->cap, 16)) {
		close(fd);
		return;
	}
	c->fds[c->n++] = fd;
}

static void *close_one(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

void link_closer__close_together(struct link_closer *c)
{
	pthread_t *threads = c->n > 1 ? calloc(c->n, sizeof(*threads)) : NULL;
	bool *started = threads ? calloc(c->n, sizeof(*started)) : NULL;
	pthread_attr_t attr;
	bool have_attr = started && !pthread_attr_init(&attr);

	if (have_attr)
		pthread_attr_setstacksize(&attr, CLOSER_STACK);
	for (size_t i = 0; have_attr && i < c->n; i++)
		started[i] = !pthread_create(&threads[i], &attr, close_one,
					     (void *)(intptr_t)c->fds[i]);
	if (have_attr)
		pthread_attr_destroy(&attr);
	/* The ones no thread took: here, now that the others are closing. */
	for (size_t i = 0; i < c->n; i++)
		if (!started || !started[i])
			close(c->fds[i]);
	for (size_t i = 0; started && i < c->n; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
	free(started);
	free(threads);
	free(c->fds);
	c->fds = NULL;
	c->n = c->cap = 0;
}
