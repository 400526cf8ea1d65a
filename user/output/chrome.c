// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * chrome.c: -F chrome, the Chrome Trace Event format (JSON array form) that
 * Perfetto (ui.perfetto.dev) and chrome://tracing open:
 *
 *   {"name":"outer","cat":"ok","ph":"X","pid":P,"tid":T,"ts":1732500000000.123,
 *    "dur":5.870,"args":{"args":{"x":10},"return":25}}
 *
 * one complete event per call, ts and dur in µs (ns kept as 3 decimals);
 * "args" holds the typed parameters nested under "args" (as -F json has
 * them, so no parameter name collides with cmon's keys), "captures",
 * "return", with --capture-at both "at_return" and "changed", and
 * "truncated" / "faults" (value paths cut short or not readable) when
 * there are any, with --stack "stack" (the frames, as -F json has them); raw records have arg0..arg5 and "return"
 * instead.  "cat"
 * is the call's status, so calls that never returned (cat "noreturn", dur
 * 0) can be picked out; --no-return records are cat "entry".  Counter
 * events ("ph":"C", name "memory", args rss and vms in bytes) per process
 * at each call's entry and return when the value changed; process and
 * thread names as metadata events ("ph":"M") when a pid or tid is first
 * seen.  Written as records come (nothing is held); the closing "]" is
 * written at the end, and a file cut short still loads (the format allows
 * a missing "]").  Events are separated by ",\n" written before each one
 * but the first, so the array never ends in a comma.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "core/hmap.h"
#include "core/strbuf.h"
#include "view.h"
#include "writer_impl.h"

struct chrome_view {
	struct view v;
	struct strbuf line;
	struct hmap pids;  /* pid -> 1 (named) */
	struct hmap tids;
	struct hmap mem;   /* pid -> index + 1 in last_mem */
	struct { uint64_t rss, vms; } *last_mem;
	size_t n_mem, cap_mem;
	bool started;     /* "[" written */
	bool have_event;  /* the next event needs a comma before it */
};

static int begin_event(struct chrome_view *c)
{
	const char *sep = !c->started ? "[\n" : c->have_event ? ",\n" : "";

	c->started = true;
	c->have_event = true;
	return strbuf__puts(&c->line, sep);
}

static int put_ts(struct strbuf *sb, const char *key, uint64_t ns)
{
	return strbuf__printf(sb, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

static int put_str(struct strbuf *sb, const char *key, const char *s)
{
	int err = strbuf__printf(sb, "\"%s\":", key);

	return err ? err : json_escape(sb, s ? s : "");
}

static int meta_event(struct chrome_view *c, const char *what, uint32_t pid, uint32_t tid,
		      const char *name)
{
	struct strbuf *sb = &c->line;
	int err = begin_event(c) || strbuf__printf(sb, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu32
				 ",\"tid\":%" PRIu32 ",\"args\":{", what, pid, tid);

	if (!err)
		err = put_str(sb, "name", name);
	return err ? -ENOMEM : strbuf__puts(sb, "}}");
}

/* A "memory" counter for PID at TS when RSS/VMS differ from the last one. */
static int mem_event(struct chrome_view *c, uint32_t pid, uint64_t ts, uint64_t rss, uint64_t vms)
{
	bool added;
	uint64_t *slot = hmap__get(&c->mem, &pid, sizeof(pid), &added);

	if (!rss && !vms)
		return 0; /* not measured (a store without it) */
	if (!slot)
		return -ENOMEM;
	if (added) {
		if (GROW(c->last_mem, c->n_mem, c->cap_mem, 16))
			return -ENOMEM;
		*slot = ++c->n_mem;
	} else if (c->last_mem[*slot - 1].rss == rss && c->last_mem[*slot - 1].vms == vms) {
		return 0;
	}
	c->last_mem[*slot - 1].rss = rss;
	c->last_mem[*slot - 1].vms = vms;
	if (begin_event(c) || strbuf__printf(&c->line, "{\"name\":\"memory\",\"ph\":\"C\",\"pid\":%" PRIu32, pid) ||
	    put_ts(&c->line, "ts", ts) ||
	    strbuf__printf(&c->line, ",\"args\":{\"rss\":%" PRIu64 ",\"vms\":%" PRIu64 "}}", rss,
			   vms))
		return -ENOMEM;
	return 0;
}

static int call_args(struct strbuf *sb, const struct call_record *rec)
{
	const struct call_typed *t = rec->typed;
	int err = strbuf__puts(sb, ",\"args\":{");

	if (t) {
		/* The parameters one level down, as -F json nests them: their
		 * names can then not collide with "captures" and "return". */
		if (!err)
			err = strbuf__puts(sb, "\"args\":{");
		for (size_t i = 0; i < t->n_cells && !err; i++) {
			err = strbuf__puts(sb, i ? "," : "");
			if (!err)
				err = json_escape(sb, t->names[i]);
			if (!err)
				err = strbuf__printf(sb, ":%s", t->cells[i]);
		}
		if (!err)
			err = strbuf__puts(sb, "}");
		if (!err && t->captures && strcmp(t->captures, "{}"))
			err = strbuf__printf(sb, ",\"captures\":%s", t->captures);
		if (!err && call_record__typed_ret(rec) && strcmp(t->retval, "null"))
			err = strbuf__printf(sb, ",\"return\":%s", t->retval);
		/* --capture-at both: the pointers' values at the return, and
		 * the leaves that changed ({} when none did), as in -F json. */
		if (!err && t->at_return)
			err = strbuf__printf(sb, ",\"at_return\":%s", t->at_return);
		if (!err && t->changed)
			err = strbuf__printf(sb, ",\"changed\":%s", t->changed);
		/* Value paths cut short or unreadable, as -F json lists them. */
		if (!err && t->truncated)
			err = strbuf__printf(sb, ",\"truncated\":%s", t->truncated);
		if (!err && t->faults)
			err = strbuf__printf(sb, ",\"faults\":%s", t->faults);
	} else {
		for (int i = 0; i < 6 && !err; i++) {
			char num[DECIMAL_MAX + 1];

			*wr_arg_decimal(num, rec, i) = '\0';
			err = strbuf__printf(sb, "%s\"arg%d\":%s", i ? "," : "", i, num);
		}
		if (!err && rec->status == CALL_OK)
			err = strbuf__printf(sb, ",\"return\":%" PRId64, rec->ret);
	}
	/* --stack: the frames at the entry, innermost first, as in -F json */
	if (!err && rec->stack)
		err = writer__json_stack(sb, rec->stack);
	return err ? err : strbuf__puts(sb, "}");
}

static int chrome_write(struct view *v, const struct call_record *rec)
{
	struct chrome_view *c = (struct chrome_view *)v;
	struct strbuf *sb = &c->line;
	bool has_exit = rec->status == CALL_OK || rec->status == CALL_TAILCALL ||
			rec->status == CALL_RAISED || rec->status == CALL_YIELD;
	bool added;
	int err = 0;

	strbuf__reset(sb);
	if (!hmap__get(&c->pids, &rec->pid, sizeof(rec->pid), &added) ||
	    (added && meta_event(c, "process_name", rec->pid, rec->pid, rec->comm)))
		err = -ENOMEM;
	if (!err && (!hmap__get(&c->tids, &rec->tid, sizeof(rec->tid), &added) ||
		     (added && meta_event(c, "thread_name", rec->pid, rec->tid, rec->comm))))
		err = -ENOMEM;
	if (!err)
		err = begin_event(c) || strbuf__puts(sb, "{") ? -ENOMEM : 0;
	if (!err)
		err = put_str(sb, "name", rec->func);
	if (!err)
		err = strbuf__printf(sb, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%" PRIu32
				     ",\"tid\":%" PRIu32, call_status__name(rec->status), rec->pid,
				     rec->tid);
	if (!err)
		err = put_ts(sb, "ts", rec->ts_ns);
	if (!err)
		err = put_ts(sb, "dur", has_exit ? rec->latency_ns : 0);
	if (!err)
		err = call_args(sb, rec);
	if (!err)
		err = strbuf__puts(sb, "}");
	if (!err)
		err = mem_event(c, rec->pid, rec->ts_ns, rec->rss_entry, rec->vms_entry);
	if (!err && has_exit)
		err = mem_event(c, rec->pid, rec->ts_ns + rec->latency_ns, rec->rss_exit,
				rec->vms_exit);
	return err ? err : view__put(v, sb->buf, sb->len);
}

static int chrome_finish(struct view *v)
{
	struct chrome_view *c = (struct chrome_view *)v;

	strbuf__reset(&c->line);
	if (strbuf__puts(&c->line, c->started ? "\n]\n" : "[\n]\n"))
		return -ENOMEM;
	c->started = true;
	return view__put(v, c->line.buf, c->line.len);
}

static void chrome_free(struct view *v)
{
	struct chrome_view *c = (struct chrome_view *)v;

	strbuf__release(&c->line);
	hmap__release(&c->pids);
	hmap__release(&c->tids);
	hmap__release(&c->mem);
	free(c->last_mem);
	free(c);
}

static const struct view_ops chrome_ops = { chrome_write, chrome_finish, chrome_free };

struct view *chrome_view__new(void)
{
	struct chrome_view *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->v.ops = &chrome_ops;
	return &c->v;
}
