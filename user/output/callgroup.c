// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * callgroup.c: per-thread groups of calls for the views that nest them
 * (tree, folded); see callgroup.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "callgroup.h"
#include "core/grow.h"
#include "core/strbuf.h"
#include "writer_impl.h"

struct thread_hold {
	uint32_t tid;
	struct held_call *calls;
	size_t n, cap;
};

/* The process-wide default (main sets it from $CMON_VIEW_HOLD_MAX). */
static size_t default_max_held = CALLGROUP_MAX_HELD_DEFAULT;

void callgroups__set_default_max_held(size_t max_held)
{
	if (max_held)
		default_max_held = max_held;
}

void callgroups__init(struct callgroups *g, callgroup_fn fn, void *ctx, size_t max_held)
{
	memset(g, 0, sizeof(*g));
	g->fn = fn;
	g->ctx = ctx;
	g->max_held = max_held ? max_held : default_max_held;
}

static void held__release(struct held_call *h)
{
	free(h->func);
	free(h->where);
	free(h->comm);
	free(h->args);
	free(h->ret);
	free(h->notes);
	free(h->stack);
}

/* "name=value, ..." for typed records, the six registers for raw ones. */
static char *render_args(const struct call_record *rec)
{
	struct strbuf sb = {};
	int err = strbuf__puts(&sb, "");

	if (rec->typed) {
		const struct call_typed *t = rec->typed;

		for (size_t i = 0; i < t->n_cells && !err; i++)
			err = strbuf__printf(&sb, "%s%s=%s", i ? ", " : "", t->names[i],
					     call_typed__text(t, t->cells[i]));
	} else {
		for (int i = 0; i < 6 && !err; i++)
			err = rec->args_unsigned >> i & 1
				      ? strbuf__printf(&sb, "%s%" PRIu64, i ? ", " : "",
						       (uint64_t)rec->args[i])
				      : strbuf__printf(&sb, "%s%" PRId64, i ? ", " : "", rec->args[i]);
	}
	if (err) {
		strbuf__release(&sb);
		return NULL;
	}
	return sb.buf;
}

static char *render_ret(const struct call_record *rec, int *err)
{
	char num[32];
	const char *s;
	char *out;

	*err = 0;
	if (rec->status != CALL_OK)
		return NULL;
	if (rec->typed) {
		s = rec->typed->retval;
		if (!s || (!strcmp(s, "null") && !rec->typed->python))
			return NULL; /* void */
		s = call_typed__text(rec->typed, s);
	} else {
		snprintf(num, sizeof(num), "%" PRId64, rec->ret);
		s = num;
	}
	out = strdup(s);
	if (!out)
		*err = -ENOMEM;
	return out;
}

/* "captures={...} changed={...} truncated=[...] faults=[...]", as the
 * text table ends its row with them (writer__typed_notes).  NULL with *ERR
 * 0: nothing to say. */
static char *render_notes(const struct call_record *rec, int *err)
{
	struct strbuf sb = {};

	*err = writer__typed_notes(&sb, rec->typed);
	if (*err || !sb.len) {
		strbuf__release(&sb);
		return NULL;
	}
	memmove(sb.buf, sb.buf + 1, sb.len); /* its leading space, and the NUL */
	return sb.buf;
}

static int held__init(struct held_call *h, const struct call_record *rec, bool details)
{
	int err2 = 0;
	int err;

	memset(h, 0, sizeof(*h));
	h->ts_ns = rec->ts_ns;
	h->latency_ns = rec->latency_ns;
	h->latency_lt_ns = rec->latency_lt_ns;
	h->pid = rec->pid;
	h->tid = rec->tid;
	h->depth = rec->depth < 0 ? 0 : rec->depth;
	h->status = rec->status;
	h->has_exit = rec->status == CALL_OK || rec->status == CALL_TAILCALL ||
		      rec->status == CALL_RAISED || rec->status == CALL_YIELD;
	h->func = strdup(rec->func ? rec->func : "");
	if (rec->typed && rec->typed->python && rec->module && !(h->where = strdup(rec->module)))
		err2 = -ENOMEM;
	h->comm = strdup(rec->comm ? rec->comm : "");
	h->args = render_args(rec);
	h->ret = render_ret(rec, &err);
	if (details) {
		h->notes = render_notes(rec, &err2);
		if (rec->stack && !(h->stack = strdup(rec->stack)))
			err2 = -ENOMEM;
	}
	if (!h->func || !h->comm || !h->args || err || err2) {
		held__release(h);
		return -ENOMEM;
	}
	return 0;
}

static struct thread_hold *thread_of(struct callgroups *g, uint32_t tid)
{
	bool added;
	uint64_t *slot = hmap__get(&g->index, &tid, sizeof(tid), &added);

	if (!slot)
		return NULL;
	if (added) {
		if (GROW(g->threads, g->n_threads, g->cap_threads, 16))
			return NULL;
		memset(&g->threads[g->n_threads], 0, sizeof(g->threads[0]));
		g->threads[g->n_threads].tid = tid;
		*slot = ++g->n_threads;
	}
	return &g->threads[*slot - 1];
}

/* Entry order; a caller before the callee that entered in the same ns. */
static int by_entry(const void *a, const void *b)
{
	const struct held_call *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->depth - y->depth;
}

static int hand_over(struct callgroups *g, struct thread_hold *t, bool cut)
{
	int err = 0;

	if (!t->n)
		return 0;
	if (!g->replay)
		qsort(t->calls, t->n, sizeof(*t->calls), by_entry);
	if (cut)
		g->cuts++;
	err = g->fn(g->ctx, t->calls, t->n, cut);
	for (size_t i = 0; i < t->n; i++)
		held__release(&t->calls[i]);
	t->n = 0;
	return err;
}

int callgroups__add(struct callgroups *g, const struct call_record *rec)
{
	struct thread_hold *t = thread_of(g, rec->tid);
	int err;

	if (!t)
		return -ENOMEM;
	if (g->replay && rec->depth <= 0) {
		err = hand_over(g, t, false);
		if (err)
			return err;
	}
	if (GROW(t->calls, t->n, t->cap, 64))
		return -ENOMEM;
	err = held__init(&t->calls[t->n], rec, g->details);
	if (err)
		return err;
	t->n++;
	if (g->replay)
		return 0;
	if (rec->depth <= 0)
		return hand_over(g, t, false);
	if (t->n >= g->max_held)
		return hand_over(g, t, true);
	return 0;
}

int callgroups__flush_all(struct callgroups *g)
{
	int err = 0;

	/* Calls still held at the end are under a caller that never ended in
	 * the trace (a cut group in trace mode; in replay, a whole group). */
	for (size_t i = 0; i < g->n_threads && !err; i++)
		err = hand_over(g, &g->threads[i], false);
	return err;
}

void callgroups__release(struct callgroups *g)
{
	for (size_t i = 0; i < g->n_threads; i++) {
		struct thread_hold *t = &g->threads[i];

		for (size_t k = 0; k < t->n; k++)
			held__release(&t->calls[k]);
		free(t->calls);
	}
	free(g->threads);
	hmap__release(&g->index);
	memset(g, 0, sizeof(*g));
}
