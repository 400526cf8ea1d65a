/*
 * agent.h: `cmon agent`: probes from a spec file (spec.h), applied and
 * re-applied while it runs, their metrics served to Prometheus.
 *
 * The main loop polls inotify (the spec's directory: editors replace files
 * by rename), a signalfd (SIGHUP: reload now; SIGTERM, SIGINT: stop) and a
 * 1 s tick (lifespans, replaced binaries, exited processes' labels); log
 * probes are drained every 100 ms.  The HTTP server runs in
 * libmicrohttpd's thread; one mutex guards the probe list against it.
 *
 * Applying a spec is a diff by probe name against what runs: unchanged
 * probes are left alone (their counters go on), changed ones are replaced,
 * removed ones detached, new ones attached; a probe that fails is kept in
 * state error with its message and never stops the others.
 *
 * Served:
 *   /metrics  Prometheus text format 0.0.4
 *   /status   JSON: the agent and each probe's state (cmon agent --status)
 */
#ifndef CMON_AGENT_AGENT_H
#define CMON_AGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include "agent/metrics.h"
#include "agent/spec.h"

#define AGENT_DEFAULT_LISTEN "127.0.0.1:9464"

struct agent_opts {
	const char *spec_path;
	const char *listen;   /* NULL: AGENT_DEFAULT_LISTEN */
	bool keep_privileges; /* do not drop capabilities (tests, debugging) */
};

struct agent;

/* Load the spec, start serving, apply it.  NULL and errno after one error
 * line (an unusable spec, a busy port, no privilege). */
struct agent *agent__new(const struct agent_opts *opts);

/* Run until SIGTERM or SIGINT.  0, or -errno of a failure of the loop. */
int agent__run(struct agent *a);

/* Apply SPEC (the caller keeps it) as the diff above; FORCE retries probes
 * in error that did not change.  0 or -ENOMEM. */
int agent__apply(struct agent *a, struct agent_spec *spec, bool force);

/* The exposition and the status document, as served. */
int agent__render_metrics(struct agent *a, struct mbuf *out);
int agent__render_status(struct agent *a, struct mbuf *out);

/* Stop serving, detach everything, free.  NULL fine. */
void agent__free(struct agent *a);

#endif
