// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probe_read.c: a probe's series read from the kernel (and carried over
 * re-attachments), and rendered in the exposition.
 */
#include "agent/probe_impl.h"

/* ---------------------------------------------------------------- reading */

struct read_ctx {
	struct agent_probe *p;
	struct probe_gen *g;
	bool *folded;              /* per function: summed into "other" */
	struct series_table *t;
	struct probe_totals *tot;
	int err;
};

/* One row of the share's read: the probe's function FUNC (its own index)
 * in process KPID (0: the kernel had no slot). */
static int add_row(struct read_ctx *rc, uint32_t func, uint32_t kpid, const struct series_val *v)
{
	uint32_t pid = SERIES_PID_NONE;
	const char *name;

	if (rc->p->spec->per_pid) {
		if (kpid == 0)
			pid = SERIES_PID_OTHER; /* the kernel had no slot for them */
		else
			pid = pid_cap__admit(rc->p->cap, kpid) ? kpid : SERIES_PID_OTHER;
	}
	/* every entry seen, those if: left out too (as a log probe counts) */
	rc->tot->hits += v->calls + v->filtered;
	rc->tot->lost += v->lost;
	rc->tot->filtered += v->filtered;
	name = rc->g->names[func];
	if (!name_cap__admit(rc->p->fcap, name)) {
		name = SERIES_FUNC_OTHER;
		if (rc->folded && !rc->folded[func]) {
			rc->folded[func] = true;
			rc->tot->functions_other++;
		}
	}
	rc->err = series_table__add(rc->t, name, pid, v);
	return rc->err;
}

/* py: one Python function's (and process's) sums into the table. */
static int py_row(void *ctx, const struct func_profile *fp)
{
	struct read_ctx *rc = ctx;
	uint32_t pid = SERIES_PID_NONE;
	const char *name = pyprof__name(rc->g->pp, fp->func_id);
	struct series_val v;

	series_val__from_profile(&v, fp);
	if (rc->p->spec->per_pid)
		pid = pid_cap__admit(rc->p->cap, fp->pid) ? fp->pid : SERIES_PID_OTHER;
	rc->tot->hits += v.calls;
	rc->tot->functions++;
	if (!name || !name_cap__admit(rc->p->fcap, name)) {
		name = SERIES_FUNC_OTHER;
		rc->tot->functions_other++;
	}
	rc->err = series_table__add(rc->t, name, pid, &v);
	return rc->err;
}

/* The probe's rows in its share's last read. */
static int read_share(struct read_ctx *rc)
{
	const struct probe_share *sh = rc->g->share;

	for (uint32_t i = 0; i < rc->g->set->n_funcs && !rc->err; i++) {
		uint32_t id = rc->g->ids[i];
		size_t lo = 0, hi = sh->n_rows;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (sh->rows[mid].func_id < id)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < sh->n_rows && sh->rows[lo].func_id == id && !rc->err; lo++)
			add_row(rc, i, sh->rows[lo].pid, &sh->rows[lo].v);
	}
	return rc->err;
}

void probe_totals__add_host(struct bpf_prog_run *host, size_t *n_host,
			    const struct bpf_prog_run *runs, size_t n, double part)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		while (k < *n_host && strcmp(host[k].name, runs[i].name))
			k++;
		if (k == *n_host) {
			if (k == BPF_SET_MAX_HOST_PROGS)
				continue; /* every set has the same few */
			host[k] = (struct bpf_prog_run){ .run_ns = 0 };
			memcpy(host[k].name, runs[i].name, sizeof(host[k].name));
			(*n_host)++;
		}
		host[k].run_ns += (uint64_t)((double)runs[i].run_ns * part);
		host[k].run_cnt += (uint64_t)((double)runs[i].run_cnt * part);
	}
}

/* A log probe's tracer: its programs run by the host's events. */
static void add_tracer_host(const struct tracer *tr, struct probe_totals *tot)
{
	struct bpf_prog_run runs[BPF_SET_MAX_HOST_PROGS];
	int n = tracer__host_prog_stats(tr, runs);

	if (n > 0)
		probe_totals__add_host(tot->host, &tot->n_host, runs, (size_t)n, 1.0);
}

int probe_read__gen(struct agent_probe *p, struct probe_gen *g, struct series_table *t,
		    struct probe_totals *tot)
{
	struct read_ctx rc = { .p = p, .g = g, .t = t, .tot = tot };
	static const struct series_val zero;
	int err = 0;

	if (g->py) {
		rc.err = pyprof__read(g->pp, py_row, &rc);
		if (g->tracer) {
			struct cmon_func_stats st;

			if (!tracer__func_stats(g->tracer, g->py_func, &st))
				tot->lost += st.lost_ringbuf + st.lost_depth + st.lost_nomem +
					     st.lost_uret;
			add_tracer_host(g->tracer, tot);
		}
		return rc.err;
	}
	tot->functions += g->set->n_funcs;
	if (g->tracer) {
		for (size_t i = 0; i < g->set->n_funcs; i++) {
			struct cmon_func_stats st;

			if (tracer__func_stats(g->tracer, (unsigned)i, &st))
				continue;
			tot->hits += st.calls;
			tot->lost += st.lost_ringbuf + st.lost_depth + st.lost_nomem + st.lost_uret;
			tot->filtered += st.filtered;
		}
		add_tracer_host(g->tracer, tot);
		return 0;
	}
	/* Every function has its series from the start (rate() needs the 0);
	 * past the label cap, those labelled already (the others are given
	 * their label at their first call, while there is room). */
	if (!p->spec->per_pid) {
		bool all = g->set->n_funcs <= name_cap__max(p->fcap);

		for (size_t i = 0; i < g->set->n_funcs && !err; i++)
			if (all ? name_cap__admit(p->fcap, g->names[i])
				: name_cap__has(p->fcap, g->names[i]))
				err = series_table__add(t, g->names[i], SERIES_PID_NONE, &zero);
	}
	if (err)
		return err;
	if (!g->share || !g->attached)
		return 0;
	err = probe_share__refresh(g->share, false);
	if (err)
		return err;
	rc.folded = calloc(g->set->n_funcs ? g->set->n_funcs : 1, sizeof(*rc.folded));
	err = read_share(&rc);
	free(rc.folded);
	if (err)
		return err;
	if (g->share->have_run) {
		const struct probe_share *sh = g->share;
		double part = sh->hits ? (double)tot->hits / (double)sh->hits
				       : 1.0 / (double)(sh->n_members ? sh->n_members : 1);

		/* The programs run for every probe of the share: each gets
		 * its part by the calls it counted. */
		tot->run_ns += (uint64_t)((double)sh->run_ns * part);
		tot->run_cnt += (uint64_t)((double)sh->run_cnt * part);
		tot->have_run = true;
		probe_totals__add_host(tot->host, &tot->n_host, sh->host, sh->n_host, part);
	}
	return 0;
}

int agent_probe__read(struct agent_probe *p, struct series_table *out, struct probe_totals *tot)
{
	int err = 0;

	memset(tot, 0, sizeof(*tot));
	err = series_table__merge(out, &p->base);
	if (!err && p->gen) {
		err = probe_read__gen(p, p->gen, out, tot);
		tot->probes = p->gen->n_probes;
	}
	series_table__normalize(out);
	tot->hits += p->base_hits;
	tot->lost += p->base_lost;
	tot->filtered += p->base_filtered;
	tot->run_ns += p->base_run_ns;
	tot->run_cnt += p->base_run_cnt;
	probe_totals__add_host(tot->host, &tot->n_host, p->base_host, p->n_base_host, 1.0);
	if (p->log)
		tot->records = logsink__records(p->log);
	if (p->ch) {
		struct ch_stats st;

		ch_sink__stats(p->ch, &st);
		tot->ch = true;
		tot->records = st.inserted;
		tot->lost += st.dropped + st.lost;
		tot->ch_pending = st.pending;
		tot->ch_dropped = st.dropped;
		tot->ch_lost = st.lost;
		tot->ch_errors = st.errors;
		tot->ch_up = st.up;
	}
	tot->lost += __atomic_load_n(&p->log_errors, __ATOMIC_RELAXED); /* the file did not take */
	if (p->spec->instrument != INSTR_LOG && !p->spec->error)
		tot->have_run = true;
	return err;
}

size_t agent_probe__files(const struct agent_probe *p, const struct probe_object **objs)
{
	*objs = NULL;
	if (!p->gen || !p->gen->set)
		return 0;
	*objs = p->gen->set->objects;
	return p->gen->set->n_objects;
}

/* ---------------------------------------------------------------- rendering */

static int family_name(const struct probe_spec *s, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s%s", s->metric, s->instrument == INSTR_COUNT ? "_total" : "");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int agent_probe__family(const struct agent_probe *p, struct expo *e)
{
	const struct probe_spec *s = p->spec;
	char name[512];
	int err;

	if (s->error || s->instrument == INSTR_LOG)
		return 0;
	err = family_name(s, name, sizeof(name));
	if (err)
		return err;
	switch (s->instrument) {
	case INSTR_COUNT:
		return expo__family(e, name, METRIC_COUNTER,
				    "Calls of the probed functions, counted in the kernel by cmon.");
	case INSTR_LATENCY:
		return expo__family(e, name, METRIC_HISTOGRAM,
				    "Latency of the probed functions in seconds, from entry to "
				    "return (bucket bounds exact to 2 %).");
	case INSTR_ARG:
		return expo__family(e, name, METRIC_HISTOGRAM,
				    "An argument (or the return value) of the probed functions at "
				    "the width and sign of its C type, in log2 buckets "
				    "(le = 2^k - 1).");
	default:
		return 0;
	}
}

int agent_probe__render(const struct agent_probe *p, const struct series_table *t, struct expo *e)
{
	const struct probe_spec *s = p->spec;
	struct metric_label *labels;
	char name[512], pidbuf[16];
	size_t n;
	int err = 0;

	if (s->error || s->instrument == INSTR_LOG || !t->n)
		return 0;
	err = family_name(s, name, sizeof(name));
	if (err)
		return err;
	labels = calloc(4 + s->n_labels, sizeof(*labels));
	if (!labels)
		return -ENOMEM;
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct series_row *r = &t->rows[i];

		n = 0;
		labels[n++] = (struct metric_label){ "probe", s->id };
		labels[n++] = (struct metric_label){ "function", r->func };
		if (s->per_pid) {
			if (r->pid == SERIES_PID_OTHER)
				snprintf(pidbuf, sizeof(pidbuf), "other");
			else
				snprintf(pidbuf, sizeof(pidbuf), "%u", r->pid);
			labels[n++] = (struct metric_label){ "pid", pidbuf };
		}
		if (p->cgroup_label) {
			/* A process's own cgroup (per_pid: as many as pid labels),
			 * else the spec's, which holds them all. */
			const char *cg = s->per_pid && r->pid != SERIES_PID_OTHER && p->cg_names
						 ? cgroup_names__of(p->cg_names, (pid_t)r->pid)
						 : NULL;

			labels[n++] = (struct metric_label){ "cgroup", cg ? cg : p->cgroup_label };
		}
		for (size_t k = 0; k < s->n_labels; k++)
			labels[n++] = (struct metric_label){ s->labels[k].name, s->labels[k].value };
		switch (s->instrument) {
		case INSTR_COUNT:
			err = expo__add_u64(e, name, labels, n, r->v.calls);
			break;
		case INSTR_LATENCY:
			err = expo__add_hist(e, name, labels, n, series_lat_le, r->v.lat_le,
					     SERIES_LAT_NBOUNDS, true, (double)r->v.lat_sum_ns / 1e9,
					     r->v.lat_count);
			break;
		case INSTR_ARG:
			err = expo__add_hist(e, name, labels, n, series_arg_le, r->v.arg_le,
					     SERIES_ARG_NBOUNDS, false, 0, r->v.arg_count);
			break;
		default:
			break;
		}
	}
	free(labels);
	return err;
}
