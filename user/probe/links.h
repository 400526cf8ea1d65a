/*
 * links.h: attach a probe set's entry and exit programs, one uprobe_multi
 * link per (process, file, kind), and detach them all at once.  Shared by
 * every subcommand: trace, profile and the agent attach the same way, with
 * their own BPF programs behind the same cookie layout (cmon.h).
 */
#ifndef CMON_LINKS_H
#define CMON_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include "probe/resolve.h"

struct probe_links;

struct probe_links_opts {
	int entry_prog_fd;
	int exit_prog_fd;  /* ignored when entry_only */
	bool entry_only;
};

/* Attach every probe of SET.  On failure nothing stays attached and one
 * error line has been printed.  Returns 0 and the links, or -errno. */
int probe_links__attach(const struct probe_set *set, const struct probe_links_opts *opts,
			struct probe_links **out);

size_t probe_links__probe_count(const struct probe_links *l); /* addresses x processes */
unsigned long long probe_links__attach_ns(const struct probe_links *l);

/* Detach (close every link) and free.  NULL is fine. */
void probe_links__free(struct probe_links *l);

#endif
