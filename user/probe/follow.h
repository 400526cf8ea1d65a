/*
 * follow.h: a traced program's children, from user space (issue 14).
 *
 * The BPF side (bpf/follow.bpf.h) keeps the followed processes in a map:
 * the roots put there by follow__add_root, every process a followed one
 * forks (added in the kernel before it runs), each removed when it exits.
 * The executable's links have no pid filter while following (links.h), so
 * a child is traced in it from its first instruction; its libraries' links
 * are its own, attached by follow__scan once it is seen (calls a child
 * makes in a library before that are not recorded: docs/cmon-output.md
 * "Children"), unless --host-wide-probes made them for every process
 * before the program ran (probe_links_opts.host_wide: no own links).
 */
#ifndef CMON_FOLLOW_H
#define CMON_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "cmon_abi.h"
#include "probe/links.h"

struct follow;
struct bpf_program;
struct bpf_link;

/* MAP_FD: the BPF map `followed`; STATS_FD: `follow_stats`.  SET and OPTS
 * are kept (not copied) for the children's links. */
int follow__new(int map_fd, int stats_fd, const struct probe_set *set,
		const struct probe_links_opts *opts, struct follow **out);

/* Attach FORK_PROG (follow.bpf.h's fork tracepoint) to *FORK_LINK, make
 * *OUT and put the set's processes in the map as roots: before the probes
 * are attached, so no call of theirs is filtered out.  0, or -errno after
 * one error line (the caller destroys *FORK_LINK and frees *OUT). */
int follow__start(struct bpf_program *fork_prog, int map_fd, int stats_fd,
		  const struct probe_set *set, const struct probe_links_opts *opts,
		  struct bpf_link **fork_link, struct follow **out);

/* Tests only (CMON_TEST_NO_CHILD_LINKS, read by main): children get no
 * links of their own, so that what they are traced by without them shows. */
void follow__test_no_child_links(void);

/* A process traced with its own links already (the launched program, -p). */
int follow__add_root(struct follow *f, pid_t pid);

/* Attach the links of children not seen yet, let go of those of children
 * that have exited.  Returns the number of followed processes alive
 * (0: every one has exited) or -errno. */
int follow__scan(struct follow *f);

/* The followed processes alive at the last scan, roots included (for
 * flushing their pending calls at the end). */
size_t follow__count(const struct follow *f);
pid_t follow__pid(const struct follow *f, size_t i);
/* Children followed, children not followed (the map was full), children
 * whose library links failed; and probes attached for children. */
void follow__stats(const struct follow *f, uint64_t *forks, uint64_t *unfollowed,
		   uint64_t *failed);

/* A followed child PID exec'd from a thread other than its leader: its
 * links made again (probe_links__reattach).  1 when PID is such a child
 * (0: not one, nothing done), or -errno. */
int follow__reattach(struct follow *f, pid_t pid);

/* The followed children's return probes' links into C, to be closed with
 * the roots' (probe/detach.h), before follow__detach. */
struct link_closer;
void follow__take_returns(struct follow *f, struct link_closer *c);
/* Detach every child's links (the list of processes stays). */
void follow__detach(struct follow *f);
void follow__free(struct follow *f); /* NULL is fine */

/* Children that exited before a scan saw them, when children need links of
 * their own: their calls in libraries were not recorded (their calls in
 * the executable were). */
uint64_t follow__missed(const struct follow *f);

#endif
