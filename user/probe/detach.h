/*
 * detach.h: closing return-probe links so that no close waits on another.
 *
 * Since Linux 6.12 a pending uretprobe holds an SRCU lease
 * (uretprobes_srcu) from its function's entry until the function returns
 * or its thread's lease timer fires, and every uprobe detach on the host
 * (uprobe_unregister_sync, in each link's close) waits for the leases
 * taken before it.  The timer is pushed back 100 ms at each uretprobed
 * call the thread makes, so a thread inside a traced outer function
 * (main, an event loop) that keeps calling traced functions holds its
 * lease until that function returns: closing one link while another
 * return link still fires in that thread blocks until then (the program's
 * end, or never; the close is uninterruptible, and every other tracer's
 * detach on the host waits with it).  Once no return probe is left to
 * fire, the timer runs out and every waiting close completes.
 *
 * So at the end (bpf_set__detach_probes) no call opens a frame any more
 * (filter.bpf.h's entries_closed), then every return link goes at once,
 * each close in a thread of its own, all joined; then the rest, which no
 * longer wait.  Detaching one function while others stay (duty cycling)
 * can still wait so: the others' return probes keep firing.
 */
#ifndef CMON_PROBE_DETACH_H
#define CMON_PROBE_DETACH_H

#include <stddef.h>

/* Link file descriptors gathered to be closed together. */
struct link_closer {
	int *fds;
	size_t n, cap;
};

/* FD into C (closed at once if there is no room: it is never leaked). */
void link_closer__add(struct link_closer *c, int fd);

/* Close every fd of C, each in its own thread when there are several
 * (where a thread cannot be had, from this one, after the others have
 * started), and wait for all; C is empty after. */
void link_closer__close_together(struct link_closer *c);

#endif
