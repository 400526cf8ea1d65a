// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probe_share.c: probes counting the same functions share one profiler;
 * the pool commits a reload's shares at once.
 */
#include "core/grow.h"
#include "agent/probe_impl.h"
#include "agent/metrics.h"

/* ---------------------------------------------------------------- shares */

/* Join the share of G's kind (made when there is none).  0 or -ENOMEM. */
int probe_share__join(struct agent_probe *p, struct probe_gen *g)
{
	struct probe_pool *pool = p->pool;
	struct probe_share *sh;

	for (sh = pool->shares; sh; sh = sh->next)
		if (!strcmp(sh->key, g->share_key))
			break;
	if (!sh) {
		sh = calloc(1, sizeof(*sh));
		if (!sh)
			return -ENOMEM;
		sh->key = strdup(g->share_key);
		if (!sh->key) {
			free(sh);
			return -ENOMEM;
		}
		sh->pool = pool;
		sh->opts = g->po;
		sh->gate_fd = profiler__gate_new();
		if (sh->gate_fd < 0) {
			int err = sh->gate_fd;

			free(sh->key);
			free(sh);
			return err;
		}
		sh->next = pool->shares;
		pool->shares = sh;
	}
	if (GROW(sh->members, sh->n_members, sh->cap_members, 4))
		return -ENOMEM;
	sh->members[sh->n_members++] = p;
	sh->dirty = true;
	g->share = sh;
	g->attached = false;
	return 0;
}

/* P leaves its share (attached again without it at the next commit). */
void probe_share__drop(struct probe_share *sh, struct agent_probe *p)
{
	for (size_t i = 0; i < sh->n_members; i++) {
		if (sh->members[i] == p) {
			memmove(sh->members + i, sh->members + i + 1,
				(sh->n_members - i - 1) * sizeof(*sh->members));
			sh->n_members--;
			break;
		}
	}
	sh->dirty = true;
}

static int row_cmp(const void *a, const void *b)
{
	const struct share_row *x = a, *y = b;

	if (x->func_id != y->func_id)
		return x->func_id < y->func_id ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int on_share_profile(void *ctx, const struct func_profile *fp)
{
	struct probe_share *sh = ctx;
	struct share_row *r;

	if (GROW(sh->rows, sh->n_rows, sh->cap_rows, 64))
		return -ENOMEM;
	r = &sh->rows[sh->n_rows++];
	r->func_id = fp->func_id;
	r->pid = fp->pid;
	/* Latencies are the function's own: the kernel took the probes'
	 * cost out of each (profiler_opts.calib). */
	series_val__from_profile(&r->v, fp);
	sh->hits += r->v.calls;
	if (sh->seen && fp->func_id < sh->set->n_funcs)
		sh->seen[fp->func_id] += fp->seen_calls;
	if (sh->opts.per_pid) {
		if (fp->pid)
			sh->live_keys++;
		else
			sh->unslotted += fp->calls;
	}
	return 0;
}

/* Read SH's profiler, once per round of reads unless FORCE.  Under the
 * lock. */
int probe_share__refresh(struct probe_share *sh, bool force)
{
	int err, n;

	if (!sh->prof)
		return -ENODEV;
	if (!force && sh->epoch == sh->pool->epoch && sh->epoch)
		return 0;
	sh->n_rows = 0;
	sh->hits = sh->live_keys = sh->unslotted = 0;
	if (sh->seen)
		memset(sh->seen, 0, sh->set->n_funcs * sizeof(*sh->seen));
	err = profiler__read(sh->prof, on_share_profile, sh);
	if (err) {
		sh->n_rows = 0;
		sh->epoch = 0;
		return err;
	}
	if (sh->n_rows) /* rows is NULL before the first one */
		qsort(sh->rows, sh->n_rows, sizeof(*sh->rows), row_cmp);
	sh->have_run = !profiler__prog_stats(sh->prof, &sh->run_ns, &sh->run_cnt);
	n = profiler__host_prog_stats(sh->prof, sh->host);
	sh->n_host = n > 0 ? (size_t)n : 0;
	sh->epoch = sh->pool->epoch;
	return 0;
}

/* Fold P's counts in its share's profiler into its carried-over values (a
 * detached profiler's are final), read now unless the caller just did
 * (REFRESH false).  Under the lock. */
void probe_share__fold(struct agent_probe *p, struct probe_gen *g, bool refresh)
{
	if (!g->attached || !g->share->prof)
		return;
	probe__fold_read(p, g, !probe_share__refresh(g->share, refresh));
	g->attached = false;
}

struct probe_pool *probe_pool__new(void)
{
	struct probe_pool *pool = calloc(1, sizeof(*pool));

	if (pool)
		pool->epoch = 1;
	return pool;
}

void probe_pool__next_read(struct probe_pool *pool) { pool->epoch++; }

static void share_free(struct probe_share *sh)
{
	profiler__free(sh->prof);
	probe_set__free(sh->set);
	free(sh->members);
	free(sh->rows);
	free(sh->seen);
	free(sh->bfn);
	free(sh->key);
	close(sh->gate_fd);
	free(sh);
}

void probe_pool__free(struct probe_pool *pool)
{
	if (!pool)
		return;
	while (pool->shares) {
		struct probe_share *sh = pool->shares;

		pool->shares = sh->next;
		share_free(sh);
	}
	free(pool);
}

/* The union of SH's members' functions, loaded and attached: *SET, *PROF
 * and each member's function ids in IDS[k].  Slow: no lock held.  0, or
 * -errno with *MSG. */
static int share_build(struct probe_share *sh, uint32_t **ids, struct probe_set **set,
		       struct profiler **prof, uint32_t *gen, char **msg)
{
	const struct probe_set **sets = calloc(sh->n_members, sizeof(*sets));
	struct errcap cap;
	int err;

	*set = NULL;
	*prof = NULL;
	*msg = NULL;
	if (!sets)
		return -ENOMEM;
	for (size_t k = 0; k < sh->n_members; k++)
		sets[k] = sh->members[k]->gen->set;
	err = probe_set__union(sets, sh->n_members, ids, set);
	free(sets);
	if (err)
		return err;
	probe__errcap_begin(&cap, sh->members[0]->spec->id);
	{
		/* One condition per share (it is in the key): for the union. */
		struct profiler_opts po = sh->opts;
		struct cmon_expr_prog *exprs = NULL;

		err = expr__compile_run(sh->members[0]->spec->if_expr, NULL, *set, false, &exprs);
		/* Latencies reach it as its series have them: the function's
		 * own, taken out in the kernel (its bias stays 0). */
		po.exprs = exprs;
		po.calib = probe_calib__host();
		/* Counting from the store that retires the one attached now. */
		*gen = sh->gen + 1 ? sh->gen + 1 : 1;
		po.gen = *gen;
		po.gate_fd = sh->gate_fd;
		po.duty = sh->pool->budget > 0;
		if (!err) {
			*prof = profiler__new(*set, &po);
			if (!*prof)
				err = -errno;
		}
		free(exprs);
	}
	if (!err)
		err = profiler__attach(*prof);
	*msg = probe__errcap_end(&cap);
	if (!err) {
		free(*msg);
		*msg = NULL;
		return 0;
	}
	profiler__free(*prof);
	*prof = NULL;
	probe_set__free(*set);
	*set = NULL;
	return err;
}

/* Members joined: applied; already applied: carried over. */
static void share_swap_in(struct probe_share *sh, uint32_t **ids)
{
	size_t per_func = sh->set->n_funcs ? sh->n_probes / sh->set->n_funcs : 0;

	for (size_t k = 0; k < sh->n_members; k++) {
		struct agent_probe *p = sh->members[k];
		struct probe_gen *g = p->gen;

		free(g->ids);
		g->ids = ids[k];
		ids[k] = NULL;
		g->attached = true;
		g->n_probes = per_func * g->set->n_funcs;
		g->attach_ms = sh->attach_ms;
		if (g->replacing || (sh->rotate && !g->starting))
			p->reattached++;
		g->replacing = false;
		if (!g->starting)
			continue;
		g->starting = false;
		p->state = PROBE_APPLIED;
		free(p->error);
		p->error = NULL;
		p->applied_at = clock__wall_s();
		p->expires_ms = p->spec->lifespan_ms ? clock__mono_ms() + p->spec->lifespan_ms : 0;
	}
}

/* Every member goes to state error with MSG; their generations go. */
static void share_fail(struct probe_share *sh, const char *msg, size_t *failed)
{
	while (sh->n_members) {
		struct agent_probe *p = sh->members[--sh->n_members];
		struct probe_gen *g = p->gen;

		probe__set_error(p, msg);
		p->gen = NULL;
		probe_gen__free(g);
		(*failed)++;
	}
}

size_t probe_pool__commit(struct probe_pool *pool, pthread_mutex_t *m)
{
	size_t failed = 0;

	for (struct probe_share **at = &pool->shares; *at;) {
		struct probe_share *sh = *at;
		struct probe_set *set = NULL, *old_set;
		struct profiler *prof = NULL, *old_prof;
		uint32_t **ids = NULL, gen = 0;
		size_t n = sh->n_members;
		char **names = NULL; /* the members, logged after */
		bool *joined = NULL;
		char *msg = NULL;
		int err = 0;

		if (!sh->dirty && !sh->rotate) {
			at = &sh->next;
			continue;
		}
		names = calloc(n + 1, sizeof(*names));
		joined = calloc(n + 1, sizeof(*joined));
		for (size_t k = 0; names && joined && k < n; k++) {
			names[k] = strdup(sh->members[k]->spec->id);
			joined[k] = sh->members[k]->gen->starting;
		}
		if (n) {
			ids = calloc(n, sizeof(*ids));
			err = ids ? 0 : -ENOMEM;
			for (size_t k = 0; k < n && !err; k++) {
				ids[k] = calloc(sh->members[k]->gen->set->n_funcs + 1, sizeof(**ids));
				if (!ids[k])
					err = -ENOMEM;
			}
			if (!err)
				err = share_build(sh, ids, &set, &prof, &gen, &msg);
		}
		probe__lock(m);
		/* The new profiler counts from here, the old one no more. */
		if (prof) {
			err = profiler__gate_set(sh->gate_fd, gen);
			if (err) {
				profiler__free(prof);
				prof = NULL;
				probe_set__free(set);
				set = NULL;
			} else {
				sh->gen = gen;
			}
		}
		/* The old profiler's counts, final, go to each member's base. */
		if (sh->prof) {
			profiler__detach(sh->prof);
			probe_share__refresh(sh, true); /* once for all */
			for (size_t k = 0; k < n; k++)
				probe_share__fold(sh->members[k], sh->members[k]->gen, false);
		}
		old_prof = sh->prof;
		old_set = sh->set;
		sh->prof = prof;
		sh->set = set;
		/* a new profiler: its functions' budget state begins again */
		free(sh->seen);
		free(sh->bfn);
		sh->seen = NULL;
		sh->bfn = NULL;
		if (prof && sh->pool->budget > 0) {
			sh->seen = calloc(set->n_funcs + 1, sizeof(*sh->seen));
			sh->bfn = calloc(set->n_funcs + 1, sizeof(*sh->bfn));
		}
		sh->epoch = 0;
		sh->n_rows = 0;
		if (prof) {
			sh->n_probes = profiler__probe_count(prof);
			sh->attach_ms = (double)profiler__attach_ns(prof) / 1e6;
			share_swap_in(sh, ids);
		} else if (n) {
			if (!msg)
				msg = strdup(strerror(-err));
			share_fail(sh, msg, &failed);
		}
		sh->dirty = sh->rotate = false;
		if (!sh->n_members)
			*at = sh->next; /* unlinked: freed below */
		probe__unlock(m);
		for (size_t k = 0; names && joined && k < n; k++) {
			if (!names[k] || (prof && !joined[k])) {
				free(names[k]);
				continue;
			}
			if (prof)
				log_info("probe %s: applied: %zu probes attached in %.1f ms for the %zu "
					 "function%s of %zu probe%s on this file", names[k], sh->n_probes,
					 sh->attach_ms, sh->set->n_funcs, sh->set->n_funcs == 1 ? "" : "s",
					 n, n == 1 ? "" : "s");
			else
				log_warn("probe %s: not applied: %s", names[k], msg ? msg : strerror(-err));
			free(names[k]);
		}
		free(names);
		free(joined);
		profiler__free(old_prof);
		probe_set__free(old_set);
		for (size_t k = 0; ids && k < n; k++)
			free(ids[k]);
		free(ids);
		free(msg);
		if (!sh->n_members)
			share_free(sh);
		else
			at = &sh->next;
	}
	return failed;
}


void probe_pool__set_budget(struct probe_pool *pool, double budget)
{
	bool split = budget > 0, was = pool->budget > 0;

	if (pool->budget == budget)
		return;
	pool->budget = budget;
	memset(&pool->ledger, 0, sizeof(pool->ledger));
	/* Profilers made with (or without) per-function links: again.  A
	 * new value: kept from the next round. */
	for (struct probe_share *sh = pool->shares; sh && split != was; sh = sh->next)
		sh->dirty = true;
	if (!budget)
		pool->cost = 0;
}

/* What one call to function I of SH costs the traced process: its traps
 * as this host measured them, and the BPF programs' own time per call. */
static double call_cost_ns(const struct probe_share *sh, size_t i)
{
	const struct probe_calib *c = probe_calib__host();
	double ns = (double)probe_calib__caller_cost(c, &sh->set->funcs[i]);

	if (sh->have_run && sh->run_cnt)
		ns += 2 * (double)sh->run_ns / (double)sh->run_cnt; /* an entry and a return */
	return ns;
}

static int add_item(struct budget_item **v, size_t *n, size_t *cap, struct budget_item it)
{
	if (GROW(*v, *n, *cap, 64))
		return -ENOMEM;
	(*v)[(*n)++] = it;
	return 0;
}

/* A log probe's generation under the budget: its tracer's cycler. */
static struct duty *log_duty(const struct agent_probe *p)
{
	const struct probe_gen *g = p->gen;

	if (!g || !g->tracer || !g->bfn || g->py || p->state != PROBE_APPLIED)
		return NULL;
	return tracer__duty(g->tracer);
}

/* Function I of log probe P: calls seen whole (entered and returned in one
 * window: a record each, unless lost) and what one costs. */
static int log_func(const struct agent_probe *p, size_t i, uint64_t *seen, double *cost_ns)
{
	const struct probe_gen *g = p->gen;
	struct cmon_func_stats st;
	uint64_t run_ns, run_cnt;

	if (tracer__func_stats(g->tracer, (unsigned)i, &st))
		return -EIO;
	*seen = st.calls - st.cut;
	*cost_ns = (double)probe_calib__caller_cost(probe_calib__host(), &g->set->funcs[i]);
	if (!tracer__prog_stats(g->tracer, &run_ns, &run_cnt) && run_cnt)
		*cost_ns += 2 * (double)run_ns / (double)run_cnt;
	return 0;
}

/* Every function under the budget: the shares' (unless not SHARES), then
 * the log probes'. */
static int budget_items(struct probe_pool *pool, struct agent_probe *const *probes, size_t n_probes,
			bool refresh, bool shares, struct budget_item **v, size_t *n)
{
	size_t cap = 0;
	int err = 0;

	*v = NULL;
	*n = 0;
	for (struct probe_share *sh = shares ? pool->shares : NULL; sh && !err; sh = sh->next) {
		struct duty *d;

		if (!sh->prof || !sh->bfn || !sh->seen || !sh->n_members)
			continue;
		if (refresh && probe_share__refresh(sh, false))
			continue;
		d = profiler__duty(sh->prof);
		for (size_t i = 0; d && i < sh->set->n_funcs && !err; i++)
			err = add_item(v, n, &cap, (struct budget_item){
				.duty = d, .func_id = (uint32_t)i, .st = &sh->bfn[i],
				.seen = sh->seen[i], .cost_ns = call_cost_ns(sh, i),
				.probe = sh->members[0]->spec->id, .func = sh->set->funcs[i].name,
			});
	}
	for (size_t k = 0; k < n_probes && !err; k++) {
		struct agent_probe *p = probes[k];
		struct duty *d = log_duty(p);

		for (size_t i = 0; d && i < p->gen->set->n_funcs && !err; i++) {
			struct budget_item it = {
				.duty = d, .func_id = (uint32_t)i, .st = &p->gen->bfn[i],
				.probe = p->spec->id, .func = p->gen->set->funcs[i].name,
			};

			if (!log_func(p, i, &it.seen, &it.cost_ns))
				err = add_item(v, n, &cap, it);
		}
	}
	return err;
}

bool probe_pool__keep_budget(struct probe_pool *pool, struct agent_probe *const *probes,
			     size_t n_probes, pthread_mutex_t *m)
{
	struct budget_item *v;
	size_t n;

	if (!(pool->budget > 0))
		return false;
	probe__lock(m);
	if (!budget_items(pool, probes, n_probes, true, true, &v, &n))
		pool->cost = budget__keep(v, n, pool->budget, &pool->ledger);
	probe__unlock(m);
	free(v);
	return pool->ledger.metering;
}

static int render_fn(void *ctx, const struct probe_budget_row *r)
{
	struct expo *e = ctx;
	struct metric_label l[2] = { { "probe", r->probe }, { "function", r->func } };
	int err = expo__add(e, "cmon_agent_sampled", l, 2, r->sampled);

	if (!err)
		err = expo__add(e, "cmon_agent_function_overhead_ratio", l, 2, r->overhead);
	if (!err)
		err = expo__add_u64(e, "cmon_agent_calls_seen_total", l, 2, r->seen);
	if (!err && r->calib_ns > 0)
		err = expo__add(e, "cmon_agent_call_cost_calibrated_seconds", l, 2, r->calib_ns / 1e9);
	if (!err && r->measured_ns > 0)
		err = expo__add(e, "cmon_agent_call_cost_measured_seconds", l, 2, r->measured_ns / 1e9);
	return err;
}

int probe_pool__render_budget(struct probe_pool *pool, struct agent_probe *const *probes,
			      size_t n_probes, struct expo *e)
{
	int err = 0;

	if (!(pool->budget > 0))
		return 0;
	err = expo__add(e, "cmon_agent_budget_ratio", NULL, 0, pool->budget);
	if (!err)
		err = expo__add(e, "cmon_agent_overhead_ratio", NULL, 0, pool->cost);
	if (!err)
		err = probe_pool__budget_each(pool, probes, n_probes, render_fn, e);
	return err;
}

/* A share's functions under the budget, per member probe: a function
 * several members name is one set of probes, its cost split among them
 * (the probes' costs still add up to the total). */
static int share_each(const struct probe_share *sh, probe_budget_fn fn, void *ctx)
{
	uint32_t *members = calloc(sh->set->n_funcs + 1, sizeof(*members));
	int err = 0;

	if (!members)
		return -ENOMEM;
	for (size_t k = 0; k < sh->n_members; k++) {
		const struct probe_gen *g = sh->members[k]->gen;

		for (size_t j = 0; g && g->ids && j < g->set->n_funcs; j++)
			if (g->ids[j] < sh->set->n_funcs)
				members[g->ids[j]]++;
	}
	for (size_t k = 0; k < sh->n_members && !err; k++) {
		const struct probe_gen *g = sh->members[k]->gen;

		for (size_t j = 0; g && g->ids && j < g->set->n_funcs && !err; j++) {
			uint32_t i = g->ids[j];
			const struct budget_fn *st;
			double fr;

			if (i >= sh->set->n_funcs)
				continue;
			st = &sh->bfn[i];
			fr = st->fraction ? st->fraction : 1;
			err = fn(ctx, &(struct probe_budget_row){
					.probe = sh->members[k]->spec->id, .func = sh->set->funcs[i].name,
					.sampled = fr, .overhead = st->cpu * fr / members[i],
					.seen = sh->seen[i], .calib_ns = st->calib_ns,
					.measured_ns = st->measured.per_call_ns,
				});
		}
	}
	free(members);
	return err;
}

int probe_pool__budget_each(struct probe_pool *pool, struct agent_probe *const *probes,
			    size_t n_probes, probe_budget_fn fn, void *ctx)
{
	struct budget_item *v = NULL;
	size_t n = 0;
	int err = 0;

	if (!(pool->budget > 0))
		return 0;
	for (struct probe_share *sh = pool->shares; sh && !err; sh = sh->next)
		if (sh->prof && sh->bfn && sh->seen && sh->n_members && profiler__duty(sh->prof))
			err = share_each(sh, fn, ctx);
	if (!err)
		err = budget_items(pool, probes, n_probes, false, false, &v, &n);
	for (size_t i = 0; i < n && !err; i++) {
		double fr = v[i].st->fraction ? v[i].st->fraction : 1;

		err = fn(ctx, &(struct probe_budget_row){
				.probe = v[i].probe, .func = v[i].func, .sampled = fr,
				.overhead = v[i].st->cpu * fr, .seen = v[i].seen,
				.calib_ns = v[i].st->calib_ns,
				.measured_ns = v[i].st->measured.per_call_ns,
			});
	}
	free(v);
	return err;
}

void probe_pool__budget(const struct probe_pool *pool, double *budget, double *cost)
{
	*budget = pool->budget;
	*cost = pool->budget > 0 ? pool->cost : 0;
}
