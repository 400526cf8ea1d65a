// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probe.c: one running probe of the agent: made, started, re-attached when
 * its target changes, ticked, expired, freed (probe_impl.h: the rest).
 */
#include "agent/probe_impl.h"
#include "elf/debuginfod.h"
#include "probe/duty.h"

const char *probe_state__name(enum probe_state s)
{
	switch (s) {
	case PROBE_APPLIED:
		return "applied";
	case PROBE_ERROR:
		return "error";
	case PROBE_EXPIRED:
		return "expired";
	}
	return "?";
}


/* ---------------------------------------------------------------- errors */

/* probe_impl.h: struct errcap. */
static void errcap_line(void *ctx, enum log_level level, const char *text)
{
	struct errcap *c = ctx;

	if (level == LOG_ERROR) {
		/* The one before is passed on: only the last is the probe's. */
		if (c->last)
			fprintf(stderr, "cmon: probe %s: %s\n", c->probe, c->last);
		free(c->last);
		c->last = strdup(text);
		return;
	}
	if (!strncmp(text, "libbpf: ", 8))
		fprintf(stderr, "%s\n", text);
	else
		fprintf(stderr, "cmon: probe %s: %s%s\n", c->probe,
			level == LOG_WARN ? "warning: " : "", text);
}

void probe__errcap_begin(struct errcap *c, const char *probe)
{
	c->probe = probe;
	c->last = NULL;
	log_set_sink(errcap_line, c);
}

/* Messages to stderr again; the last error (malloc'd), or NULL. */
char *probe__errcap_end(struct errcap *c)
{
	log_set_sink(NULL, NULL);
	return c->last;
}


void probe__lock(pthread_mutex_t *m)
{
	if (m)
		pthread_mutex_lock(m);
}

void probe__unlock(pthread_mutex_t *m)
{
	if (m)
		pthread_mutex_unlock(m);
}

/* ---------------------------------------------------------------- probe */

struct agent_probe *agent_probe__new(const struct probe_spec *spec, struct probe_pool *pool)
{
	struct agent_probe *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pool = pool;
	p->spec = probe_spec__dup(spec);
	if (!p->spec)
		goto fail;
	if (spec->per_pid) {
		p->cap = pid_cap__new(spec->max_pids);
		if (!p->cap)
			goto fail;
	}
	if (spec->instrument != INSTR_LOG) {
		p->fcap = name_cap__new(spec->max_functions ? spec->max_functions
							    : SPEC_DEFAULT_MAX_FUNCTIONS);
		if (!p->fcap)
			goto fail;
	}
	p->state = PROBE_ERROR;
	p->error = strdup(spec->error ? spec->error : "not attached yet");
	if (!p->error)
		goto fail;
	return p;
fail:
	agent_probe__free(p);
	errno = ENOMEM;
	return NULL;
}

void probe__set_error(struct agent_probe *p, const char *msg)
{
	char *e = strdup(msg ? msg : "unknown error");

	if (e) {
		free(p->error);
		p->error = e;
	}
	p->state = PROBE_ERROR;
}

static void record_ident(struct agent_probe *p, const struct ident *id)
{
	p->have_ident = true;
	p->dev = id->dev;
	p->ino = id->ino;
	p->size = id->size;
	p->mtime_ns = id->mtime_ns;
	p->change_seen = false;
}

/* Add what G counted (when READABLE) to P's carried-over values; the
 * source starts afresh after this.  Under the lock. */
void probe__fold_read(struct agent_probe *p, struct probe_gen *g, bool readable)
{
	struct probe_totals tot = {};

	if (readable && probe_read__gen(p, g, &p->base, &tot) == 0) {
		p->base_hits += tot.hits;
		p->base_lost += tot.lost;
		p->base_filtered += tot.filtered;
		p->base_run_ns += tot.run_ns;
		p->base_run_cnt += tot.run_cnt;
		probe_totals__add_host(p->base_host, &p->n_base_host, tot.host, tot.n_host, 1.0);
	}
	series_table__normalize(&p->base);
	if (p->cap)
		pid_cap__forget_routed(p->cap); /* the next map starts empty */
}

/* Fold a log probe's generation's counts into P's carried-over values (G
 * detached first, so they are final).  Under the lock. */
static void fold_gen(struct agent_probe *p, struct probe_gen *g)
{
	if (g->tracer) {
		pytrace__restore(g->py);
		tracer__detach(g->tracer);
		tracer__drain(g->tracer);
		if (p->log)
			logsink__flush(p->log);
	}
	probe__fold_read(p, g, true);
}

int agent_probe__start(struct agent_probe *p, pthread_mutex_t *m)
{
	const struct probe_spec *s = p->spec;
	struct probe_gen *g = NULL;
	struct ident id;
	char *msg = NULL;
	int err;

	if (s->error) {
		probe__lock(m);
		probe__set_error(p, s->error);
		probe__unlock(m);
		log_warn("probe %s: %s", s->id, s->error);
		return -EINVAL;
	}
	id = probe_gen__ident(s->target);
	if (s->instrument == INSTR_LOG && s->log_clickhouse && !p->ch) {
		/* A server that does not answer yet is waited for (records
		 * held); one that answers with an error fails the probe. */
		struct ch_sink_opts co = { .url = s->log_clickhouse, .cgroup = s->cgroup,
					   .defer_setup = true };
		struct out_sink *ch = NULL;
		struct errcap cap;

		probe__errcap_begin(&cap, s->id);
		err = ch_sink__open(&co, &ch);
		msg = probe__errcap_end(&cap);
		probe__lock(m);
		p->ch = ch;
		if (err)
			probe__set_error(p, msg ? msg : strerror(-err));
		probe__unlock(m);
		free(msg);
		msg = NULL;
		if (err)
			return err;
	}
	if (s->instrument == INSTR_LOG && s->log_path && !p->log) {
		char *why = NULL;
		struct logsink *ls = logsink__open(s->log_path, s->log_max_bytes, s->log_keep, &why);

		err = ls ? 0 : -errno;
		probe__lock(m);
		p->log = ls;
		probe__unlock(m);
		if (err) {
			if (asprintf(&msg, "log %s: %s", s->log_path, why ? why : strerror(-err)) < 0)
				msg = NULL;
			free(why);
			probe__lock(m);
			probe__set_error(p, msg);
			/* The target as it was refused: only its change (or a
			 * reload, SIGHUP) tries again, not every check. */
			record_ident(p, &id);
			probe__unlock(m);
			log_warn("probe %s: %s", s->id, p->error);
			free(msg);
			return err;
		}
	}
	err = probe_gen__build(p, &g, &msg);
	probe__lock(m);
	record_ident(p, g ? &g->ident : &id);
	if (!err && g->share_key) {
		/* Applied when its share is attached (probe_pool__commit). */
		g->starting = true;
		p->gen = g;
		err = probe_share__join(p, g);
		if (err) {
			p->gen = NULL;
			probe_gen__free(g);
			g = NULL;
			probe__set_error(p, strerror(-err));
		}
		probe__unlock(m);
		free(msg);
		return err;
	}
	if (err) {
		probe__set_error(p, msg);
	} else {
		p->gen = g;
		p->state = PROBE_APPLIED;
		free(p->error);
		p->error = NULL;
		p->applied_at = clock__wall_s();
		p->expires_ms = s->lifespan_ms ? clock__mono_ms() + s->lifespan_ms : 0;
	}
	probe__unlock(m);
	if (err)
		log_warn("probe %s: not applied: %s", s->id, msg ? msg : strerror(-err));
	else
		log_info("probe %s: applied: %zu function%s, %zu probe%s attached in %.1f ms%s",
			 s->id, g->set->n_funcs, g->set->n_funcs == 1 ? "" : "s", g->n_probes,
			 g->n_probes == 1 ? "" : "s", g->attach_ms,
			 s->lifespan_ms ? " (with a lifespan)" : "");
	free(msg);
	return err;
}

/* Re-resolve and re-attach an applied probe (a replaced binary, a full
 * per-pid map), carrying its counts over. */
static void reattach(struct agent_probe *p, pthread_mutex_t *m, const char *why)
{
	struct probe_gen *g = NULL, *old;
	char *msg = NULL;
	int err;

	log_info("probe %s: %s: attaching again", p->spec->id, why);
	err = probe_gen__build(p, &g, &msg);
	probe__lock(m);
	old = p->gen;
	if (old && old->share) {
		probe_share__fold(p, old, true);
		probe_share__drop(old->share, p);
	} else if (old) {
		fold_gen(p, old);
	}
	p->gen = g;
	/* Counted when attached: a shared generation at the next commit. */
	if (g && g->share_key)
		g->replacing = true;
	else
		p->reattached++;
	if (g && g->share_key && probe_share__join(p, g)) {
		p->gen = NULL;
		probe_gen__free(g);
		g = NULL;
		err = -ENOMEM;
	}
	if (g)
		record_ident(p, &g->ident);
	else
		probe__set_error(p, msg ? msg : strerror(-err));
	probe__unlock(m);
	probe_gen__free(old);
	if (err)
		log_warn("probe %s: after %s: %s", p->spec->id, why, msg ? msg : strerror(-err));
	free(msg);
}

void agent_probe__budget_changed(struct agent_probe *p, double budget, pthread_mutex_t *m)
{
	struct probe_gen *g = p->gen;
	struct duty *d;

	if (p->state != PROBE_APPLIED || !g || !g->tracer || g->py || g->share || p->spec->n_py)
		return;
	if (!g->bfn) {
		/* its links are one for all its functions: split them */
		if (budget > 0)
			reattach(p, m, "a budget was set");
		return;
	}
	if (budget > 0)
		return; /* in place: the budget's next round */
	d = tracer__duty(g->tracer);
	probe__lock(m);
	for (uint32_t i = 0; i < g->set->n_funcs; i++) {
		if (d && g->bfn[i].fraction > 0 && g->bfn[i].fraction < 1 &&
		    duty__set(d, i, 1, BUDGET_PERIOD_NS))
			continue; /* left as it is (said by the duty cycler) */
		struct cmon_func_stats st;

		memset(&g->bfn[i], 0, sizeof(g->bfn[i])); /* metered again under a budget */
		/* what it called whole until then is not the next budget's */
		if (!tracer__func_stats(g->tracer, i, &st))
			g->bfn[i].billed = st.calls - st.cut;
	}
	probe__unlock(m);
	log_info("probe %s: no budget: its functions attached all the time", p->spec->id);
}

bool agent_probe__check_target(struct agent_probe *p, pthread_mutex_t *m)
{
	struct ident id;

	if (p->state == PROBE_EXPIRED || p->spec->error)
		return false;
	id = probe_gen__ident(p->spec->target);
	/* Missing (mid-upgrade, or uninstalled): keep what is attached. */
	if (!id.exists)
		return false;
	if (p->have_ident && id.dev == p->dev && id.ino == p->ino && id.size == p->size &&
	    id.mtime_ns == p->mtime_ns) {
		p->change_seen = false;
		return false;
	}
	/* Act on a change once it is stable: a file being written in place
	 * changes size and mtime from one check to the next. */
	if (!p->change_seen || id.dev != p->seen_dev || id.ino != p->seen_ino ||
	    id.size != p->seen_size || id.mtime_ns != p->seen_mtime_ns) {
		p->change_seen = true;
		p->seen_dev = id.dev;
		p->seen_ino = id.ino;
		p->seen_size = id.size;
		p->seen_mtime_ns = id.mtime_ns;
		return false;
	}
	p->change_seen = false;
	if (p->state == PROBE_ERROR) {
		log_info("probe %s: %s changed: trying again", p->spec->id, p->spec->target);
		agent_probe__start(p, m);
	} else {
		reattach(p, m, "the target was replaced");
	}
	return true;
}

bool agent_probe__check_debuginfo(struct agent_probe *p, pthread_mutex_t *m)
{
	if (!p->dwarf_waiting || p->state == PROBE_EXPIRED || p->spec->error ||
	    debuginfod__generation() == p->dwarf_gen)
		return false;
	p->dwarf_waiting = false;
	if (p->state == PROBE_ERROR) {
		log_info("probe %s: debuginfod answered: trying again", p->spec->id);
		agent_probe__start(p, m);
	} else {
		reattach(p, m, "debuginfod answered");
	}
	return true;
}

void agent_probe__expire(struct agent_probe *p)
{
	struct probe_gen *g = p->gen;

	if (g && g->share) {
		probe_share__fold(p, g, true);
		probe_share__drop(g->share, p);
	} else if (g) {
		fold_gen(p, g);
	}
	p->gen = NULL;
	p->state = PROBE_EXPIRED;
	p->expired_at = clock__wall_s();
	p->expires_ms = 0;
	if (p->log)
		logsink__flush(p->log);
	/* The BPF objects are freed here, under the caller's lock: detaching
	 * uprobe_multi links is quick. */
	probe_gen__free(g);
}

static bool proc_alive(void *ctx, uint32_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	return !stat(path, &st);
}

void agent_probe__tick(struct agent_probe *p, uint64_t now_ms, pthread_mutex_t *m)
{
	if (p->state == PROBE_APPLIED && p->expires_ms && now_ms >= p->expires_ms) {
		probe__lock(m);
		agent_probe__expire(p);
		probe__unlock(m);
		log_info("probe %s: lifespan over: detached (its metrics stay)", p->spec->id);
		return;
	}
	if (!p->cap)
		return;
	probe__lock(m);
	{
		uint32_t freed[64];
		size_t n = pid_cap__sweep(p->cap, proc_alive, NULL, freed, 64);

		/* An exited process's label goes; its counts join "other". */
		for (size_t i = 0; i < n; i++)
			series_table__relabel(&p->base, freed[i], SERIES_PID_OTHER);
		if (n)
			series_table__normalize(&p->base);
		if (p->gen && p->gen->share && p->gen->attached) {
			struct probe_share *sh = p->gen->share;
			uint64_t cap = (uint64_t)sh->opts.max_pids * sh->set->n_funcs;

			/* The kernel map never forgets a process: start a new
			 * one before it is full (the next commit). */
			if (!probe_share__refresh(sh, false) &&
			    (sh->unslotted || sh->live_keys * 4 >= cap * 3)) {
				if (!sh->rotate)
					log_info("probe %s: the per-process map is nearly full: "
						 "attaching again", p->spec->id);
				sh->rotate = true;
			}
		}
	}
	probe__unlock(m);
}

int agent_probe__drain(struct agent_probe *p, bool *more)
{
	struct probe_gen *g = p->gen;
	int n;

	*more = false;
	if (!g || !g->tracer)
		return 0;
	if (g->py)
		pytrace__tick(g->py);
	g->drained = 0;
	g->drain_cut = false;
	g->drain_deadline_ns = clock__mono_ns() + DRAIN_BUDGET_NS;
	n = tracer__drain(g->tracer);
	if (p->log)
		logsink__flush(p->log);
	if (g->drain_cut) {
		*more = true;
		return (int)g->drained;
	}
	return n;
}

void agent_probe__free(struct agent_probe *p)
{
	if (!p)
		return;
	if (p->gen && p->gen->share)
		probe_share__drop(p->gen->share, p);
	probe_gen__free(p->gen);
	logsink__close(p->log);
	out_sink__free(p->ch); /* what it holds goes out first (its linger) */
	pid_cap__free(p->cap);
	cgroup_names__free(p->cg_names);
	free(p->cgroup_label);
	name_cap__free(p->fcap);
	series_table__clear(&p->base);
	probe_spec__free(p->spec);
	free(p->error);
	free(p);
}

