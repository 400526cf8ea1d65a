// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/clock.h"
#include "decode.h"


int decoder__init(struct decoder *d, const struct probe_set *set, const struct probe_calib *calib)
{
	int64_t best = INT64_MAX;

	d->set = set;
	d->bias_ns = d->lead_ns = d->spread_ns = NULL;
	if (calib && calib->valid) {
		d->bias_ns = calloc(set->n_funcs ? set->n_funcs : 1, sizeof(*d->bias_ns));
		d->lead_ns = calloc(set->n_funcs ? set->n_funcs : 1, sizeof(*d->lead_ns));
		d->spread_ns = calloc(set->n_funcs ? set->n_funcs : 1, sizeof(*d->spread_ns));
		if (!d->bias_ns || !d->lead_ns || !d->spread_ns) {
			decoder__release(d);
			return -ENOMEM;
		}
		for (size_t i = 0; i < set->n_funcs; i++) {
			const struct probe_func *f = &set->funcs[i];

			d->bias_ns[i] = probe_calib__bias(calib, f);
			d->spread_ns[i] = probe_calib__spread(calib, f);
			/* the single-step's extra cost comes before the function
			 * runs (a step-timed call's ts_ns is moved by its step) */
			if (f->entry.cost == PROBE_COST_SINGLESTEP && !probe_func__step_timed(f) &&
			    !f->body_skip)
				d->lead_ns[i] = probe_calib__step_lead(calib);
		}
	}
	/* Take the offset from the tightest of a few readings. */
	for (int i = 0; i < 5; i++) {
		int64_t m0 = (int64_t)clock__ns(CLOCK_MONOTONIC);
		int64_t r = (int64_t)clock__ns(CLOCK_REALTIME);
		int64_t m1 = (int64_t)clock__ns(CLOCK_MONOTONIC);

		if (m1 - m0 < best) {
			best = m1 - m0;
			d->mono_to_real_ns = r - (m0 + (m1 - m0) / 2);
		}
	}
	return 0;
}

void decoder__release(struct decoder *d)
{
	free(d->bias_ns);
	free(d->lead_ns);
	free(d->spread_ns);
	d->bias_ns = d->lead_ns = d->spread_ns = NULL;
}

static enum call_status status_of(uint32_t flags)
{
	if (flags & CMON_CALL_USDT)
		return CALL_USDT;
	if (flags & CMON_CALL_LINE)
		return CALL_LINE;
	if (flags & CMON_CALL_NEVER_RETURNS)
		return CALL_NEVER_RETURNS;
	if (flags & CMON_CALL_ENTRY_ONLY)
		return CALL_ENTRY_ONLY;
	if (flags & CMON_CALL_TAILCALL)
		return CALL_TAILCALL;
	if (flags & CMON_CALL_RETURNED)
		return CALL_OK;
	return CALL_NORETURN;
}

int decoder__decode(const struct decoder *d, const struct cmon_call_rec *in,
		    struct call_record *out)
{
	const struct probe_func *f;

	if (in->type != CMON_REC_CALL || in->func_id >= d->set->n_funcs)
		return -EINVAL;
	f = &d->set->funcs[in->func_id];
	/* A step-timed call (probe_func__step_timed) starts where its latency
	 * does, at its step probe: the record's exit time is the return's less
	 * that step (order_ns keeps the return's own), so spans nest as the
	 * calls did.  IN's ts_entry_ns stays the call's identity (captures and
	 * stacks are tagged with it). */
	out->ts_ns = in->ts_entry_ns + (uint64_t)d->mono_to_real_ns;
	if (in->ts_exit_ns && in->order_ns > in->ts_exit_ns)
		out->ts_ns += in->order_ns - in->ts_exit_ns;
	else if (in->ts_exit_ns && d->lead_ns && d->lead_ns[in->func_id] &&
		 in->ts_exit_ns - in->ts_entry_ns > d->lead_ns[in->func_id])
		out->ts_ns += d->lead_ns[in->func_id];
	out->pid = in->pid;
	out->tid = in->tid;
	out->comm = in->comm; /* the kernel NUL-terminates it */
	out->cgroup = NULL;
	out->func = f->name;
	out->module = d->set->objects[f->object].module;
	out->status = status_of(in->flags);
	/* An entry-only record's depth is known where a shadow stack was
	 * kept (not with --no-return). */
	out->depth = (in->flags & CMON_CALL_ENTRY_ONLY) && !(in->flags & CMON_CALL_DEPTH) ?
			     -1 : (int)in->depth;
	for (int i = 0; i < CMON_MAX_ARGS; i++)
		out->args[i] = (int64_t)in->args[i];
	/* a USDT site's unsigned 64-bit arguments (8@): as such, not as -1 */
	out->args_unsigned = 0;
	for (uint32_t i = 0; f->usdt && i < f->usdt_spec.n_args && i < CMON_MAX_ARGS; i++)
		if (f->usdt_spec.args[i].size == 8 && !f->usdt_spec.args[i].is_signed)
			out->args_unsigned |= (uint8_t)(1u << i);
	out->ret = (int64_t)in->ret;
	out->latency_ns = probe_calib__own(in->ts_exit_ns > in->ts_entry_ns ?
					   in->ts_exit_ns - in->ts_entry_ns : 0,
					   d->bias_ns ? d->bias_ns[in->func_id] : 0);
	out->latency_lt_ns = in->ts_exit_ns && d->spread_ns ?
				     probe_calib__bound(out->latency_ns, d->spread_ns[in->func_id]) : 0;
	out->rss_entry = in->rss_entry;
	out->vms_entry = in->vms_entry;
	out->rss_exit = in->rss_exit;
	out->vms_exit = in->vms_exit;
	/* Every field set: a caller that adds none of its own (the agent's
	 * log) must not write what its stack held before. */
	out->typed = NULL; /* the typer's, when the function has DWARF */
	out->line_timed = false;
	out->stack = NULL;    /* --stack: the caller's */
	out->rendered = NULL; /* the typer's */
	out->sampled = 0;  /* the agent's budget stamps its own */
	out->call_no = 0;  /* a store's call (export) */
	out->no_regs = false;
	return 0;
}
