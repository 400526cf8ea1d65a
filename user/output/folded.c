// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * folded.c: -F folded, one line per distinct stack of traced calls,
 *
 *   comm;outer;middle;leaf 1021
 *
 * weighted by SELF time in ns (the call's latency minus its traced
 * callees'), the input of flamegraph.pl, inferno-flamegraph and speedscope.
 * The stack's root is the process name.  Stacks come from the nesting of
 * traced calls per thread (callgroup.h): untraced functions in between do
 * not appear.  A call with no known latency (noreturn, --no-return, a
 * USDT or --line record) weighs nothing itself but its callees keep it in
 * their stacks; at the end one line on stderr says how many such calls
 * there were, by status (cmon trace refuses --no-return -F folded: it
 * could write nothing).  ';' in a name
 * becomes ':' and line ends become spaces, so every line splits back.
 * When the hold bound cuts a thread's calls (callgroup.h), their stacks
 * start below the caller still running, and a warning says so.
 * Written at the end, sorted by stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "callgroup.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "view.h"

struct folded_view {
	struct view v;
	struct callgroups groups;
	struct hmap stacks; /* "comm;f;g" -> self ns */
	struct strbuf key;
	uint64_t calls;                        /* every call seen */
	uint64_t untimed[CALL_YIELD + 1];      /* by status: no latency, no weight */
};

/* What SB holds from AT on, as one frame: ';' becomes ':', line ends
 * spaces. */
static int fix_frame(struct strbuf *sb, size_t at)
{
	for (size_t i = at; i < sb->len; i++) {
		if (sb->buf[i] == ';')
			sb->buf[i] = ':';
		else if (sb->buf[i] == '\n' || sb->buf[i] == '\r')
			sb->buf[i] = ' ';
	}
	return 0;
}

static int put_frame(struct strbuf *sb, const char *name)
{
	size_t at = sb->len;
	int err = strbuf__puts(sb, name);

	return err ? err : fix_frame(sb, at);
}

/* The stack of call I: its callers (PARENT links) from the root down. */
static int put_stack(struct strbuf *sb, const struct held_call *calls, const ssize_t *parent,
		     size_t i)
{
	int err = 0;

	if (parent[i] >= 0)
		err = put_stack(sb, calls, parent, (size_t)parent[i]);
	else
		err = put_frame(sb, calls[i].comm);
	if (!err)
		err = strbuf__putc(sb, ';');
	if (!err && calls[i].where) { /* a Python function: "qualname (file:line)" */
		size_t at = sb->len;

		err = strbuf__printf(sb, "%s (%s)", calls[i].func, calls[i].where);
		if (!err)
			fix_frame(sb, at);
	} else if (!err) {
		err = put_frame(sb, calls[i].func);
	}
	return err;
}

static int on_group(void *ctx, const struct held_call *calls, size_t n, bool cut)
{
	struct folded_view *f = ctx;
	ssize_t *parent = malloc(n * sizeof(*parent)), *stack = malloc(n * sizeof(*stack));
	uint64_t *child_ns = calloc(n, sizeof(*child_ns));
	size_t depth = 0;
	int err = 0;

	(void)cut;
	if (!parent || !stack || !child_ns) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		while (depth && calls[stack[depth - 1]].depth >= calls[i].depth)
			depth--;
		parent[i] = depth ? stack[depth - 1] : -1;
		if (parent[i] >= 0 && calls[i].has_exit)
			child_ns[parent[i]] += calls[i].latency_ns;
		stack[depth++] = (ssize_t)i;
	}
	f->calls += n;
	for (size_t i = 0; i < n; i++)
		if (!calls[i].has_exit && (unsigned)calls[i].status <= CALL_YIELD)
			f->untimed[calls[i].status]++;
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t self, *w;

		if (!calls[i].has_exit || calls[i].latency_ns <= child_ns[i])
			continue;
		self = calls[i].latency_ns - child_ns[i];
		strbuf__reset(&f->key);
		err = put_stack(&f->key, calls, parent, i);
		if (err)
			break;
		w = hmap__get(&f->stacks, f->key.buf, f->key.len, NULL);
		if (!w)
			err = -ENOMEM;
		else
			*w += self;
	}
out:
	free(parent);
	free(stack);
	free(child_ns);
	return err;
}

static int folded_write(struct view *v, const struct call_record *rec)
{
	struct folded_view *f = (struct folded_view *)v;

	f->groups.replay = v->replay;
	return callgroups__add(&f->groups, rec);
}

static int by_key(const void *a, const void *b)
{
	const struct hmap_entry *const *x = a, *const *y = b;

	return strcmp((*x)->key, (*y)->key);
}

/* One line: the calls the stacks could not weigh, and why (nothing was
 * dropped quietly: an empty output with "events written: 6" said nothing). */
static void note_untimed(const struct folded_view *f)
{
	char by[256];
	size_t at = 0;
	uint64_t total = 0;

	by[0] = '\0';
	for (unsigned s = 0; s <= CALL_YIELD; s++) {
		if (!f->untimed[s])
			continue;
		total += f->untimed[s];
		if (at < sizeof(by)) {
			int k = snprintf(by + at, sizeof(by) - at, "%s%llu %s", at ? ", " : "",
					 (unsigned long long)f->untimed[s],
					 call_status__name((enum call_status)s));

			at += k > 0 ? (size_t)k : 0;
		}
	}
	if (total)
		log_warn("folded: %llu of %llu call%s had no latency, so no weight of their "
			 "own in the stacks (%s)", (unsigned long long)total,
			 (unsigned long long)f->calls, f->calls == 1 ? "" : "s", by);
}

static int folded_finish(struct view *v)
{
	struct folded_view *f = (struct folded_view *)v;
	const struct hmap_entry **sorted = NULL;
	size_t n = 0;
	int err = callgroups__flush_all(&f->groups);

	if (!err)
		note_untimed(f);
	if (f->groups.cuts)
		log_warn("folded: %llu time%s a thread held more than %zu calls under one caller: "
			 "those stacks start below it", (unsigned long long)f->groups.cuts,
			 f->groups.cuts == 1 ? "" : "s", f->groups.max_held);
	if (err || !f->stacks.n)
		return err;
	sorted = malloc(f->stacks.n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < f->stacks.cap; i++)
		if (f->stacks.slots[i].key)
			sorted[n++] = &f->stacks.slots[i];
	qsort(sorted, n, sizeof(*sorted), by_key);
	for (size_t i = 0; i < n && !err; i++) {
		strbuf__reset(&f->key);
		err = strbuf__printf(&f->key, "%s %" PRIu64 "\n", sorted[i]->key, sorted[i]->value);
		if (!err)
			err = view__put(v, f->key.buf, f->key.len);
	}
	free(sorted);
	return err;
}

static void folded_free(struct view *v)
{
	struct folded_view *f = (struct folded_view *)v;

	callgroups__release(&f->groups);
	hmap__release(&f->stacks);
	strbuf__release(&f->key);
	free(f);
}

static const struct view_ops folded_ops = { folded_write, folded_finish, folded_free };

struct view *folded_view__new(void)
{
	struct folded_view *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->v.ops = &folded_ops;
	callgroups__init(&f->groups, on_group, f, 0);
	return &f->v;
}
