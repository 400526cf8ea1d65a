// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mappers.c: one pass over /proc: each process's executable mappings. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "agent/mappers.h"
#include "proc/procmaps.h"

static int add(struct mappers *m, size_t *cap, pid_t pid, const char *comm,
	       const struct proc_object *o)
{
	if (GROW(m->v, m->n, *cap, 256))
		return -ENOMEM;
	m->v[m->n] = (struct mapping){ .pid = pid, .dev = o->dev, .ino = o->inode };
	memcpy(m->v[m->n].comm, comm, 16);
	m->n++;
	return 0;
}

int mappers__scan(struct mappers *m)
{
	struct dirent *de;
	size_t cap = 0;
	int err = 0;
	DIR *d;

	m->v = NULL;
	m->n = 0;
	d = opendir("/proc");
	if (!d)
		return 0; /* nothing to show */
	while (!err && (de = readdir(d))) {
		struct proc_object *objs = NULL;
		size_t n = 0;
		char comm[16];
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (proc_objects__read(pid, &objs, &n))
			continue;
		proc__comm(pid, comm, sizeof(comm));
		for (size_t i = 0; i < n && !err; i++)
			err = add(m, &cap, pid, comm, &objs[i]);
		proc_objects__free(objs, n);
	}
	closedir(d);
	return err;
}

void mappers__clear(struct mappers *m)
{
	free(m->v);
	m->v = NULL;
	m->n = 0;
}
