// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tree.c: -F tree, calls in entry order nested per thread, as `uftrace
 * replay` shows them:
 *
 *   # DURATION     TID     FUNCTION
 *               [  4242] | outer(x=10) {
 *               [  4242] |   middle(x=10) {
 *      1.021 us [  4242] |     leaf(x=10) = 11;
 *      3.412 us [  4242] |   } = 22; // middle
 *      5.870 us [  4242] | } = 25; // outer
 *
 * A call with traced callees opens a block; its duration and return value
 * are on the closing line.  The line that ends a call ends its comment (a
 * leaf's own, or the closing line's after the name) with the --capture
 * values, --capture-at both's changes and what its values do not say:
 * " // captures={"v":[1,2]} changed={"a->n":[1,2]} truncated=["s"]".
 * at_return is not repeated: it is the arguments with "changed" applied.
 * --stack's frames follow the call's first line, one "// at FRAME" line
 * each, indented one level under it.  A thread's calls are printed when its
 * outermost traced call has ended (callgroup.h); a group printed earlier
 * because the hold bound was reached is preceded by a "# note" line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "callgroup.h"
#include "core/cxxname.h"
#include "core/strbuf.h"
#include "view.h"

struct tree_view {
	struct view v;
	struct callgroups groups;
	struct strbuf line;
	bool header_done;
	int err;
};

static void put_duration(struct strbuf *sb, const struct held_call *c)
{
	/* A bound when the latency is not a measurement (README: latencies). */
	double ns = (double)(c->latency_lt_ns ? c->latency_lt_ns : c->latency_ns);
	const char *lt = c->latency_lt_ns ? "<" : "";
	char num[40];

	if (!c->has_exit) {
		strbuf__printf(sb, "%10s ", c->status == CALL_NORETURN ? "noreturn" : "");
		return;
	}
	if (ns < 1e6)
		snprintf(num, sizeof(num), "%s%.3f us", lt, ns / 1e3);
	else if (ns < 1e9)
		snprintf(num, sizeof(num), "%s%.3f ms", lt, ns / 1e6);
	else
		snprintf(num, sizeof(num), "%s%.3f  s", lt, ns / 1e9);
	strbuf__printf(sb, "%10s ", num);
}

static void put_prefix(struct strbuf *sb, const struct held_call *c, bool with_duration,
		       int depth)
{
	if (with_duration)
		put_duration(sb, c);
	else
		strbuf__printf(sb, "%10s ", "");
	strbuf__printf(sb, "[%6" PRIu32 "] | %*s", c->tid, 2 * depth, "");
}

/* What a call that did not return normally ended with, or NULL. */
static const char *status_mark(const struct held_call *c)
{
	switch (c->status) {
	case CALL_NORETURN: return "noreturn";
	case CALL_NEVER_RETURNS: return "never returns";
	case CALL_TAILCALL: return "tail call";
	case CALL_RAISED: return "exception";
	case CALL_YIELD: return "yield";
	default: return NULL;
	}
}

/* " = RET;" or ";" (and a mark for calls that did not return); true when
 * that mark opened a comment. */
static bool put_end(struct strbuf *sb, const struct held_call *c)
{
	const char *mark = c->ret ? NULL : status_mark(c);

	if (c->ret)
		strbuf__printf(sb, " = %s;", c->ret);
	else if (mark)
		strbuf__printf(sb, "; // %s", mark);
	else
		strbuf__puts(sb, ";");
	return mark != NULL;
}

/* The call's --capture values and changes, and what its values do not say
 * (captures={...} changed={...} truncated=[...] faults=[...]), at the end of
 * the line that ends the call, in its comment. */
static void put_notes(struct strbuf *sb, const struct held_call *c, bool in_comment)
{
	if (c->notes)
		strbuf__printf(sb, "%s%s", in_comment ? " " : " // ", c->notes);
}

/* --stack: the call's frames under its line, one indented comment each. */
static void put_stack(struct strbuf *sb, const struct held_call *c, int depth)
{
	for (const char *p = c->stack; p && *p;) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);

		put_prefix(sb, c, false, depth + 1);
		strbuf__printf(sb, "// at %.*s\n", n, p);
		p += n + (nl != NULL);
	}
}

static void close_block(struct strbuf *sb, const struct held_call *c, int depth)
{
	const char *mark = c->ret ? NULL : status_mark(c);

	put_prefix(sb, c, true, depth);
	if (c->ret)
		strbuf__printf(sb, "} = %s; // %s", c->ret, c->func);
	else
		strbuf__printf(sb, "}; // %s%s%s", c->func, mark ? ", " : "", mark ? mark : "");
	put_notes(sb, c, true);
	strbuf__puts(sb, "\n");
}

/* "f(x=1)": a demangled C++ name's own parameter list ("f(int)") gives
 * way to the values, and stays when there are none ("f(int)", not
 * "f(int)()"). */
static void put_call(struct strbuf *sb, const struct held_call *c)
{
	const char *list = cxxname__params(c->func);

	if (!list)
		strbuf__printf(sb, "%s(%s)", c->func, c->args);
	else if (!c->args[0])
		strbuf__puts(sb, c->func);
	else
		strbuf__printf(sb, "%.*s(%s)", (int)(list - c->func), c->func, c->args);
}

static int on_group(void *ctx, const struct held_call *calls, size_t n, bool cut)
{
	struct tree_view *t = ctx;
	struct strbuf *sb = &t->line;
	size_t *open = calloc(n, sizeof(*open)), n_open = 0;
	int base = n ? calls[0].depth : 0, err;

	if (!open)
		return -ENOMEM;
	strbuf__reset(sb);
	if (!t->header_done) {
		strbuf__puts(sb, "# DURATION     TID     FUNCTION\n");
		t->header_done = true;
	}
	if (cut)
		strbuf__printf(sb, "# note: thread %" PRIu32 " held %zu calls under a caller still "
				   "running (the bound): printed now, its caller comes later\n",
			       calls[0].tid, n);
	for (size_t i = 0; i < n; i++)
		if (calls[i].depth < base)
			base = calls[i].depth;
	for (size_t i = 0; i < n; i++) {
		const struct held_call *c = &calls[i];
		int d = c->depth - base;

		while (n_open && calls[open[n_open - 1]].depth >= c->depth) {
			n_open--;
			close_block(sb, &calls[open[n_open]], calls[open[n_open]].depth - base);
		}
		/* (an entry-only call keeps no frame: nothing is under it) */
		if (i + 1 < n && calls[i + 1].depth > c->depth && c->status != CALL_ENTRY_ONLY) {
			put_prefix(sb, c, false, d);
			put_call(sb, c);
			strbuf__puts(sb, " {\n");
			put_stack(sb, c, d);
			open[n_open++] = i;
		} else {
			put_prefix(sb, c, true, d);
			put_call(sb, c);
			put_notes(sb, c, put_end(sb, c));
			strbuf__puts(sb, "\n");
			put_stack(sb, c, d);
		}
	}
	while (n_open) {
		n_open--;
		close_block(sb, &calls[open[n_open]], calls[open[n_open]].depth - base);
	}
	free(open);
	/* strbuf__printf failures leave sb short; a NULL buf means none fit. */
	if (!sb->buf)
		return -ENOMEM;
	err = view__put(&t->v, sb->buf, sb->len);
	return err;
}

static int tree_write(struct view *v, const struct call_record *rec)
{
	struct tree_view *t = (struct tree_view *)v;

	t->groups.replay = v->replay;
	return callgroups__add(&t->groups, rec);
}

static int tree_finish(struct view *v)
{
	struct tree_view *t = (struct tree_view *)v;
	int err = callgroups__flush_all(&t->groups);

	if (!err && !t->header_done) {
		t->header_done = true;
		err = view__put(v, "# DURATION     TID     FUNCTION\n", 32);
	}
	return err;
}

static void tree_free(struct view *v)
{
	struct tree_view *t = (struct tree_view *)v;

	callgroups__release(&t->groups);
	strbuf__release(&t->line);
	free(t);
}

static const struct view_ops tree_ops = { tree_write, tree_finish, tree_free };

struct view *tree_view__new(void)
{
	struct tree_view *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->v.ops = &tree_ops;
	callgroups__init(&t->groups, on_group, t, 0);
	t->groups.details = true;
	return &t->v;
}
