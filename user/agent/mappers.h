/*
 * mappers.h: which processes map which files now, from one pass over
 * /proc/PID/maps: what `cmon agent --status` shows as each probe's
 * processes (its files are mapped by them, and its filters let them count).
 */
#ifndef CMON_AGENT_MAPPERS_H
#define CMON_AGENT_MAPPERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mapping {
	pid_t pid;
	char comm[16];
	uint64_t dev, ino; /* an executable file-backed mapping */
};

struct mappers {
	struct mapping *v; /* by pid */
	size_t n;
};

/* Scan every process (those that vanish or cannot be read are skipped).
 * 0 or -ENOMEM. */
int mappers__scan(struct mappers *m);
void mappers__clear(struct mappers *m);

#endif
