// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_trace.c: `cmon trace` and `cmon capture`: resolve, plan the typed
 * arguments, attach, stream records (typed where DWARF allows) to the
 * router's sinks (a format's writer, or a capture store: the one thing in
 * which trace and capture differ), report what was written and what was
 * lost, detach.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "core/clock.h"
#include "cli/breakpoint.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/file.h"
#include "core/grow.h"
#include "core/log.h"
#include "proc/procmaps.h"
#include "event/pipeline.h"
#include "event/tracer.h"
#include "event/typer.h"
#include "event/watcher.h"
#include "probe/host.h"
#include "filter/expr.h"
#include "dwarf/debuginfo.h"
#include "event/spool.h"
#include "event/stacks.h"
#include "event/store_sink.h"
#include "output/ch_url.h"
#include "output/clickhouse.h"
#include "output/outpath.h"
#include "output/router.h"
#include "output/sink.h"
#include "probe/follow.h"
#include "python/cpython.h"

struct trace_run {
	enum cmd_kind kind;  /* CMD_TRACE or CMD_CAPTURE */
	struct cmd_opts opts;
	struct typer *typer;
	struct pytrace *py; /* --py */
	uint32_t py_func;   /* the evaluator's func_id: Python calls count under it */
	uint64_t lost_uret; /* returns nested past the kernel's uretprobes (report) */
	uint64_t py_nested; /* Python calls lost nested past 64 (returns, cmon's stack) */
	const struct render_cols **csv_funcs; /* CSV: each function's columns */
	const char **func_names;  /* -o %f */
	/* The router's sinks: trace's writers, or capture's stores */
	struct file_sink_opts file_opts;
	struct store_sink_opts store_opts;
	char *cmdline;      /* capture: cmon's own command line */
	char *spool_dir;    /* the spool's folder, when cut from -o */
	char exe_path[32];  /* capture -p: the process's executable (its build-id) */
	struct stack_book *stacks; /* --stack */
	struct strbuf stack_text;
	/* --lines FUNC: each thread's last line record, written when the
	 * thread's next line event (or FUNC's return) says how long the line
	 * took and what RSS did meanwhile. */
	bool lines_mode;
	struct held_line {
		uint32_t tid, func_id;
		bool used;
		uint64_t ts_raw;
		char comm[CMON_COMM_LEN];
		struct call_record rec;
	} *held;
	size_t n_held, cap_held;
	int argc;
	char **argv;
	struct session ses;  /* patterns, output, processes */
	struct probe_set *set;
	struct pipeline *pipe;
	struct tracer *tracer;     /* the pipeline's: its counters */
	const struct probe_calib *calib; /* the probes' own cost; NULL: raw latencies */
	struct cmon_expr_prog *exprs; /* --if / --on-change, 2 per function */
	struct out_router *router; /* where records go, what reached it */
	uint64_t handed;           /* records given to the router */
	bool max_reached;
	int write_err;
	/* Records received per process, written or not, for the summary
	 * when children are followed (last used first: records come in runs). */
	struct proc_count {
		pid_t pid;
		uint64_t records;
		char comm[CMON_COMM_LEN];
	} *procs;
	size_t n_procs, cap_procs;
	/* -p: the processes each had forked before cmon came (--follow takes
	 * those forked from now on): named when their parent made no call. */
	struct early_child {
		pid_t parent, pid;
		char parent_comm[CMON_COMM_LEN]; /* read while it runs */
	} *early;
	size_t n_early;
	/* break: the probe address of the last stack (its hit's), stops seen */
	uint64_t break_probe_ip;
	unsigned stops_seen;
	struct watcher *watcher; /* --watch */
};

#define SUMMARY_PROCS 32 /* processes the summary names, in order of their first record */

static void count_process(struct trace_run *r, const struct cmon_call_rec *rec)
{
	struct proc_count *p = NULL;

	if (!r->ses.follow)
		return;
	if (r->n_procs && r->procs[r->n_procs - 1].pid == (pid_t)rec->pid)
		p = &r->procs[r->n_procs - 1];
	for (size_t i = 0; !p && i < r->n_procs; i++)
		if (r->procs[i].pid == (pid_t)rec->pid)
			p = &r->procs[i];
	if (!p) {
		if (GROW(r->procs, r->n_procs, r->cap_procs, 16))
			return; /* the summary only: the record is written */
		p = &r->procs[r->n_procs++];
		memset(p, 0, sizeof(*p));
		p->pid = (pid_t)rec->pid;
	}
	p->records++;
	memcpy(p->comm, rec->comm, sizeof(p->comm));
	p->comm[CMON_COMM_LEN - 1] = 0;
}

static int on_capture(void *ctx, const struct cmon_capture_rec *rec, size_t size)
{
	struct trace_run *r = ctx;

	if (rec->at_return == CMON_CAPTURE_DROP && r->stacks)
		stack_book__forget(r->stacks, rec->tid, rec->ts_entry_ns);
	return typer__capture(r->typer, rec) ? -1 : 0;
}

static int on_stack(void *ctx, const struct cmon_stack_rec *rec)
{
	struct trace_run *r = ctx;

	if (r->kind == CMD_BREAK)
		r->break_probe_ip = rec->ips[0];
	stack_book__add(r->stacks, rec);
	return 0;
}

/* CR of FUNC_ID to the output; counted for --max-events.
 * 0, -1 to stop (the maximum), after a write error 0 with it noted. */
static int emit(struct trace_run *r, const struct call_record *cr, uint32_t func_id)
{
	int err = out_router__write(r->router, cr, func_id);

	if (err) {
		r->write_err = err;
		return 0;
	}
	r->handed++;
	if (r->opts.max_events && r->handed >= r->opts.max_events) {
		r->max_reached = true;
		return -1;
	}
	return 0;
}

static struct held_line *held_of(struct trace_run *r, uint32_t tid)
{
	struct held_line *v;

	for (size_t i = 0; i < r->n_held; i++)
		if (r->held[i].tid == tid)
			return &r->held[i];
	if (GROW(r->held, r->n_held, r->cap_held, 4))
		return NULL;
	v = &r->held[r->n_held++];
	v->tid = tid; /* GROW zeroed the rest */
	return v;
}

/* --lines: a record of a line site or of its function, on thread TID.
 * Writes the thread's held line, timed by this event when it is a line or
 * FUNC's return; holds a line.  1: held (not to be written now), 0: write
 * CR as usual, -1: stop. */
static int lines_event(struct trace_run *r, const struct probe_func *f,
		       const struct cmon_call_rec *raw, struct call_record *cr)
{
	struct held_line *h = held_of(r, raw->tid);

	if (!h)
		return 0; /* out of memory: written as it comes */
	if (h->used) {
		bool returned = cr->status == CALL_OK || cr->status == CALL_TAILCALL;

		if (f->in_lines || returned) {
			uint64_t end = f->in_lines ? raw->ts_entry_ns : raw->ts_exit_ns;

			h->rec.latency_ns = end > h->ts_raw ? end - h->ts_raw : 0;
			h->rec.rss_exit = f->in_lines ? raw->rss_entry : raw->rss_exit;
			h->rec.vms_exit = f->in_lines ? raw->vms_entry : raw->vms_exit;
			h->rec.line_timed = true;
		}
		h->used = false;
		if (emit(r, &h->rec, h->func_id) < 0)
			return -1;
	}
	if (!f->in_lines)
		return 0;
	h->used = true;
	h->rec = *cr;
	memcpy(h->comm, raw->comm, sizeof(h->comm));
	h->rec.comm = h->comm;
	h->rec.typed = NULL;
	h->rec.stack = NULL;
	h->rec.rendered = NULL;
	h->ts_raw = raw->ts_entry_ns;
	h->func_id = raw->func_id;
	return 1;
}

/* The end: lines still held are written untimed. */
static void flush_held_lines(struct trace_run *r)
{
	for (size_t i = 0; i < r->n_held; i++) {
		if (r->held[i].used && !r->write_err) {
			r->held[i].used = false;
			emit(r, &r->held[i].rec, r->held[i].func_id);
		}
	}
}

static void settle_output(struct trace_run *r, bool final);

/* A record drained after the output failed: never written, counted. */
static void refuse_record(struct trace_run *r)
{
	out_router__refuse(r->router);
}

/* A C call (CR: decoded; NULL when it did not decode). */
static int on_call(void *ctx, const struct cmon_call_rec *rec, struct call_record *crp)
{
	struct trace_run *r = ctx;
	const struct render_out *ro = NULL;
	struct call_record cr;
	int err;

	if (r->max_reached)
		return -1;
	count_process(r, rec); /* written or not: the summary's counts add up */
	if (r->write_err) {
		refuse_record(r);
		return 0;
	}
	if (!crp)
		return 0;
	cr = *crp;
	cr.typed = typer__render(r->typer, rec, &ro);
	cr.rendered = ro;
	cr.cgroup = session__cgroup_of(&r->ses, (pid_t)rec->pid);
	cr.stack = NULL;
	cr.line_timed = false;
	if (r->stacks) {
		const struct probe_func *f = &r->set->funcs[rec->func_id];
		const struct probe_object *o = &r->set->objects[f->object];
		struct stack_anchor at = { o->attach_path, o->module,
					   f->addr + (f->body_skip ? f->body_skip : f->entry.skip) };

		r->stack_text.len = 0;
		if (!stack_book__take(r->stacks, (pid_t)rec->pid, rec->tid, rec->ts_entry_ns,
				      f->usdt || f->python ? NULL : &at, &r->stack_text))
			cr.stack = r->stack_text.buf;
	}
	if (r->lines_mode) {
		const struct probe_func *f = &r->set->funcs[rec->func_id];

		if (f->in_lines || f->lines_owner) {
			err = lines_event(r, f, rec, &cr);
			if (err)
				return err > 0 ? 0 : -1;
		}
	}
	err = emit(r, &cr, rec->func_id);
	if (r->kind == CMD_BREAK) {
		/* The report is out before the wait: flush it. */
		settle_output(r, false);
		fflush(r->ses.out);
		/* The last stop: the program resumes without probes, as it
		 * runs untraced (later hits would only cost it time). */
		if (r->stops_seen + 1 >= r->opts.break_count)
			tracer__detach_probes(r->tracer);
		breakpoint__stopped((pid_t)rec->pid, rec->tid, r->set->funcs[rec->func_id].name,
				    r->break_probe_ip, ++r->stops_seen);
	}
	return err;
}

/* cmon break --py: REC stopped its process at a Python call (CR: it
 * decoded).  Once the thread is stopped, its Python stack is read, the
 * call written with it, and the stop handled as break does for C. */
static int py_break_stop(struct trace_run *r, const struct cmon_py_rec *rec,
			 struct call_record *cr)
{
	char where[CMON_PY_QUALNAME_MAX + CMON_PY_FILENAME_MAX + 16];
	int err = 0;

	breakpoint__wait_stop((pid_t)rec->pid, rec->tid);
	if (cr) {
		r->stack_text.len = 0;
		if (!pytrace__stack(r->py, rec, &r->stack_text))
			cr->stack = r->stack_text.buf;
		err = emit(r, cr, r->py_func);
		settle_output(r, false);
		fflush(r->ses.out);
	}
	if (r->stops_seen + 1 >= r->opts.break_count)
		tracer__detach_probes(r->tracer);
	/* "qualname (file:line)" */
	{
		uint64_t at;
		const char *way = pytrace__way(r->py, (pid_t)rec->pid, &at);

		snprintf(where, sizeof(where), "%s (%s)", cr ? cr->func : way,
			 cr ? cr->module : "?");
		breakpoint__stopped((pid_t)rec->pid, rec->tid, where, at, ++r->stops_seen);
	}
	return err;
}

/* --py: a Python call to write (N: pytrace__decode's value). */
static int on_py_call(void *ctx, const struct cmon_py_rec *rec, struct call_record *cr, int n)
{
	struct trace_run *r = ctx;

	if (r->max_reached)
		return -1;
	if (r->write_err) {
		refuse_record(r);
		return 0;
	}
	if (rec->flags & CMON_PY_BREAK)
		return py_break_stop(r, rec, n > 0 ? cr : NULL);
	if (n <= 0)
		return 0;
	return emit(r, cr, r->py_func);
}

/* --py: the processes must run a CPython cmon knows; the evaluator's probe is
 * the Python programs'.  0 or -errno after one error line. */
static int py_prepare(struct trace_run *r)
{
	int err = 0;

	if (!r->opts.n_py)
		return 0;
	if (r->opts.binary || r->opts.cgroup || r->opts.container) {
		log_error("--py needs the interpreter's process: -p PID or -- CMD, not --%s",
			  r->opts.binary ? "binary" : r->opts.cgroup ? "cgroup" : "container");
		return -EINVAL;
	}
	r->py = pytrace__new(r->opts.py, r->opts.n_py, r->opts.strlen, r->opts.py_resumes);
	if (!r->py) {
		log_error("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->opts.n_pids && !err; i++)
		err = pytrace__add_process(r->py, r->opts.pids[i], NULL, false);
	if (!err && r->ses.launched)
		err = pytrace__add_process(r->py, r->ses.launch.pid, r->ses.launch_path, true);
	return err;
}

/* After each drain: the output gets what was written (a terminal, a pipe,
 * a file, unix-socket readers), and the ledger learns what reached it. */
static void settle_output(struct trace_run *r, bool final)
{
	int err = out_router__settle(r->router, final);

	if (err && !r->write_err)
		r->write_err = err;
}

/* Records that reached the output: of function FUNC, or all (SIZE_MAX). */
static uint64_t written(const struct trace_run *r, size_t func)
{
	return func == SIZE_MAX ? out_router__written(r->router)
				: out_router__written_func(r->router, func);
}

static uint64_t unwritten(const struct trace_run *r)
{
	return out_router__unwritten(r->router);
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	for (int i = 0; s && i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* capture: what the store says of the run (command line, target, the
 * build-id's file).  0 or -ENOMEM. */
static int store_opts(struct trace_run *r)
{
	const struct probe_object *first = &r->set->objects[r->set->targets[0].objects[0]];

	r->cmdline = join_args(r->argc + 1, r->argv - 1); /* from "cmon" */
	if (!r->cmdline)
		return -ENOMEM;
	if (r->opts.n_pids)
		snprintf(r->exe_path, sizeof(r->exe_path), "/proc/%d/exe", (int)r->opts.pids[0]);
	r->store_opts = (struct store_sink_opts){
		.set = r->set,
		.typer = r->typer,
		.command_line = r->cmdline,
		.target_path = r->ses.launch_path ? r->ses.launch_path
			       : r->opts.binary	  ? r->opts.binary
						  : first->path,
		.build_id_path = r->ses.launch_path ? r->ses.launch_path
				 : r->opts.binary   ? r->opts.binary
				 : r->opts.n_pids   ? r->exe_path
						    : first->attach_path,
		.quiet = r->opts.quiet,
	};
	return 0;
}

/* The router and its sinks: trace's format on the output (or a file per
 * process: -o 'out.%p'), capture's store (or one per process, made at the
 * process's first record).  0 or -errno after one error line. */
static int make_router(struct trace_run *r)
{
	struct out_router_opts oo = { .n_funcs = r->set->n_funcs };
	const char *tmpl = NULL;
	struct out_sink *sink = NULL;
	int err = 0;

	if (r->opts.output && ch_url__is(r->opts.output)) {
		/* a table, for trace and capture alike (captures in a column) */
		err = ch_sink__open(&(struct ch_sink_opts){ .url = r->opts.output }, &sink);
		if (err)
			return err;
	} else if (r->kind == CMD_CAPTURE) {
		err = store_opts(r);
		if (err) {
			log_error("out of memory");
			return err;
		}
		oo.open = store_sink__open;
		oo.open_ctx = &r->store_opts;
		if (r->opts.output && out_path__per_process(r->opts.output))
			tmpl = r->opts.output;
		else
			err = store_sink__open(&r->store_opts, 0, UINT32_MAX,
					       r->opts.output ? r->opts.output : "cmon-capture", &sink);
		if (err)
			return err;
	} else {
		struct csv_schema *cs = &r->file_opts.csv;

		r->file_opts.fmt = r->opts.format;
		cs->only = UINT32_MAX;
		cs->shape = r->opts.csv_shape;
		r->csv_funcs = calloc(r->set->n_funcs + 1, sizeof(*r->csv_funcs));
		r->func_names = calloc(r->set->n_funcs + 1, sizeof(*r->func_names));
		if (!r->csv_funcs || !r->func_names) {
			log_error("out of memory");
			return -ENOMEM;
		}
		for (size_t i = 0; i < r->set->n_funcs; i++) {
			r->csv_funcs[i] = typer__cols(r->typer, (uint32_t)i);
			r->func_names[i] = r->set->funcs[i].name;
		}
		cs->funcs = r->csv_funcs;
		cs->n_funcs = r->set->n_funcs;
		oo.func_names = r->func_names;
		/* CSV carries what JSON gives as keys, so nothing asked is dropped */
		if (r->opts.capture_at == PLAN_AT_BOTH)
			cs->extras |= CSV_AT_RETURN;
		if (r->opts.n_captures || typer__typed_count(r->typer))
			cs->extras |= CSV_NOTES;
		if (r->ses.cgroup_on)
			cs->extras |= CSV_CGROUP;
		if (r->py) {
			/* CSV: one more column, "args", the Python call's args object */
			static const char *const py_cells[] = { "" };

			pytrace__set_args_column(r->py, 0);
			cs->cells = py_cells;
			cs->n_cells = 1;
		}
		if (r->opts.format == OUT_CSV && (!r->opts.output ||
						   !out_path__per_function(r->opts.output)) &&
		    csv_schema__shape(cs) == CSV_LONG && r->opts.csv_shape == CSV_AUTO)
			log_info("the functions' values have different columns: one CSV row per "
				 "value (--csv long); -o 'NAME.%%f.csv' writes a table per function");
		oo.open = file_sink__open;
		oo.open_ctx = &r->file_opts;
		/* a table for a person at a terminal: in colour (not NO_COLOR) */
		r->file_opts.color = r->ses.out && isatty(fileno(r->ses.out));
		/* and each row cut to the terminal's width: a file keeps it whole */
		r->file_opts.width = r->file_opts.color ? file__term_columns(fileno(r->ses.out)) : 0;
		r->file_opts.strcut = r->opts.text_strlen;
		if (r->ses.out)
			sink = file_sink__new(&r->file_opts, r->ses.out);
		else
			tmpl = r->opts.output;
	}
	r->router = tmpl ? out_router__per_process(tmpl, &oo) : out_router__single(sink, &oo);
	if (!r->router) {
		log_error("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->opts.n_pids; i++)
		out_router__note_process(r->router, r->opts.pids[i]);
	if (r->ses.launched)
		out_router__note_process(r->router, r->ses.launch.pid);
	return 0;
}

struct lost_list {
	struct strbuf sb;
	uint64_t total;
};

static void add_lost(void *ctx, uint32_t pid, const char *qualname, const char *where,
		     uint64_t n)
{
	struct lost_list *l = ctx;

	(void)pid;
	(void)where;
	l->total += n;
	strbuf__printf(&l->sb, "%s%s %llu", l->sb.len ? ", " : "", qualname,
		       (unsigned long long)n);
}

/* --py: calls made in processes past the ones cmon holds (not traced). */
static uint64_t py_untraced(const struct trace_run *r)
{
	unsigned max;

	return r->py && r->tracer ? tracer__py_procs_full(r->tracer, &max) : 0;
}

/* --py's own lines: calls filtered, patterns that matched nothing, calls
 * lost by function. */
static void py_report(struct trace_run *r)
{
	struct lost_list lost = { 0 };
	struct cmon_func_stats st;
	uint64_t f = pytrace__filtered(r->py);

	if (!tracer__func_stats(r->tracer, r->py_func, &st))
		f += st.outside_focus;
	if (f)
		fprintf(stderr, "cmon: python calls filtered: %llu (counted while cmon named "
				"their code object; no --py pattern selects it)\n",
			(unsigned long long)f);
	session__say_unmatched_py(&r->ses, r->py);
	session__say_py_untraced(r->tracer);
	{
		size_t procs, forks;
		uint64_t gone;

		pytrace__sizes(r->py, &procs, &forks, &gone);
		log_info("--py: processes known at the end: %zu, forks kept: %zu (%llu forked "
			 "children let go as they exited)", procs, forks, (unsigned long long)gone);
	}
	pytrace__each_lost(r->py, add_lost, &lost);
	if (pytrace__undecoded(r->py))
		fprintf(stderr, "cmon: python records not decoded: %llu (their process's "
				"interpreter or their code object not known; counted lost)\n",
			(unsigned long long)pytrace__undecoded(r->py));
	if (lost.total)
		fprintf(stderr, "cmon: python calls lost: %llu, by function: %s\n",
			(unsigned long long)lost.total, lost.sb.buf);
	if (r->py_nested)
		fprintf(stderr, "cmon:   %llu of them nested deeper than %d selected calls of a "
				"thread (the kernel's return probes; calls not selected take "
				"none)\n",
			(unsigned long long)r->py_nested, CMON_KERNEL_URET_DEPTH);
	strbuf__release(&lost.sb);
}

/* What the kernel counted over all of a run's functions. */
struct trace_counts {
	uint64_t lost, lost_captures, filtered, unchanged;
};

/* Sum each function's counters into C; R keeps the returns lost and the
 * Python calls nested too deep (py_report says them). */
static void sum_func_stats(struct trace_run *r, struct trace_counts *c)
{
	for (size_t i = 0; i < r->set->n_funcs; i++) {
		struct cmon_func_stats st;

		if (!tracer__func_stats(r->tracer, (unsigned)i, &st)) {
			c->lost += st.lost_ringbuf + st.lost_depth + st.lost_nomem + st.lost_uret;
			r->lost_uret += st.lost_uret;
			if (r->set->funcs[i].python)
				r->py_nested += st.lost_uret + st.lost_depth;
			c->lost_captures += st.lost_capture;
			c->filtered += st.filtered;
			c->unchanged += st.unchanged;
		}
	}
}

/* cmon break: hits and stops; LOST, Python calls not examined. */
static void break_summary(struct trace_run *r, uint64_t lost)
{
	uint64_t hits, blost;

	tracer__break_hits(r->tracer, &hits, &blost);
	if (!r->opts.quiet)
		fprintf(stderr, "cmon: hits: %llu, stops: %u%s\n", (unsigned long long)hits,
			r->stops_seen, blost ? " (some hits not recorded: not stopped)" : "");
	if (r->py && !r->opts.quiet)
		session__say_unmatched_py(&r->ses, r->py);
	if (r->py && lost && !r->opts.quiet)
		fprintf(stderr, "cmon: python calls not examined: %llu (the ring buffer was "
				"full as their function was first seen; examined at a later "
				"call)\n", (unsigned long long)lost);
}

/* Events written, not written, filtered out, unchanged and lost. */
static void events_summary(struct trace_run *r, const struct trace_counts *c)
{
	fprintf(stderr, "cmon: events written: %llu", (unsigned long long)written(r, SIZE_MAX));
	if (out_router__files(r->router))
		fprintf(stderr, " (%zu file%s, one per process)", out_router__files(r->router),
			out_router__files(r->router) == 1 ? "" : "s");
	fputc('\n', stderr);
	if (r->stacks && stack_book__dropped(r->stacks))
		fprintf(stderr, "cmon: stacks dropped: %llu (calls written without their stack)\n",
			(unsigned long long)stack_book__dropped(r->stacks));
	if (unwritten(r) && r->write_err)
		fprintf(stderr, "cmon: events not written: %llu (the output failed: %s)\n",
			(unsigned long long)unwritten(r), strerror(-r->write_err));
	else if (unwritten(r))
		fprintf(stderr, "cmon: events not written: %llu (dropped: the output's buffer "
			"was full)\n", (unsigned long long)unwritten(r));
	if (r->opts.if_expr)
		fprintf(stderr, "cmon: %llu calls filtered out by --if\n",
			(unsigned long long)c->filtered);
	if (r->opts.on_change)
		fprintf(stderr, "cmon: %llu calls unchanged (--on-change)\n",
			(unsigned long long)c->unchanged);
	fprintf(stderr, "cmon: events lost: %llu\n", (unsigned long long)c->lost);
}

/* How the consumer kept up: waits for room (--block), sleeps, spooling. */
static void consumer_summary(struct trace_run *r)
{
	uint64_t wakeups, sleeps;
	struct spool_stats sp;

	if (r->opts.block_ns)
		session__say_room_waits(r->tracer);
	tracer__wakeups(r->tracer, &wakeups, &sleeps);
	log_info("the consumer slept %llu times; the buffer filling woke it %llu times",
		 (unsigned long long)sleeps, (unsigned long long)wakeups);
	if (tracer__spool_stats(r->tracer, &sp))
		log_info("spooled: %llu records (%llu bytes; %llu compressed on disk, "
			 "%llu at most at once)", (unsigned long long)sp.records,
			 (unsigned long long)sp.raw_bytes, (unsigned long long)sp.disk_bytes,
			 (unsigned long long)sp.peak_disk);
}

/* Children followed, and the first SUMMARY_PROCS processes' records. */
static void children_summary(struct trace_run *r)
{
	uint64_t forks, unfollowed, failed;

	follow__stats(r->ses.follow, &forks, &unfollowed, &failed);
	fprintf(stderr, "cmon: children followed: %llu\n", (unsigned long long)forks);
	if (unfollowed)
		fprintf(stderr, "cmon: children not followed: %llu (more than %d processes "
				"at once)\n", (unsigned long long)unfollowed, CMON_FOLLOW_MAX);
	if (failed)
		fprintf(stderr, "cmon: children traced in their executable only: %llu (see "
				"above)\n", (unsigned long long)failed);
	if (follow__missed(r->ses.follow))
		fprintf(stderr, "cmon: children gone before their library probes were "
				"attached: %llu (their library calls are not recorded)\n",
			(unsigned long long)follow__missed(r->ses.follow));
	for (size_t i = 0; i < r->n_procs && i < SUMMARY_PROCS; i++)
		fprintf(stderr, "cmon:   process %d (%s): %llu records%s\n",
			(int)r->procs[i].pid, r->procs[i].comm,
			(unsigned long long)r->procs[i].records,
			unwritten(r) ? " (written or not)" : "");
	if (r->n_procs > SUMMARY_PROCS)
		fprintf(stderr, "cmon:   and %zu more processes\n", r->n_procs - SUMMARY_PROCS);
}

/* A row per function with something to say (calls, written, lost and why);
 * the functions never called, counted in one line. */
static void func_table(struct trace_run *r)
{
	size_t rows = 0, never = 0;

	for (size_t i = 0; i < r->set->n_funcs; i++) {
		struct cmon_func_stats st;
		uint64_t l;

		/* Probed for --focus alone: not a function the user traces. */
		if (r->set->funcs[i].quiet || tracer__func_stats(r->tracer, (unsigned)i, &st))
			continue;
		l = st.lost_ringbuf + st.lost_depth + st.lost_nomem + st.lost_uret;
		/* A row of zeros says nothing: counted below instead (a glob
		 * over a library probes thousands never called) */
		if (!st.calls && !l && !written(r, i) && !st.outside_focus && !st.filtered &&
		    !st.unchanged) {
			never++;
			continue;
		}
		if (!rows++)
			fprintf(stderr, "cmon: %-32s %12s %12s %10s\n", "function", "calls",
				"written", "lost");
		fprintf(stderr, "cmon: %-32s %12llu %12llu %10llu", r->set->funcs[i].name,
			(unsigned long long)st.calls, (unsigned long long)written(r, i),
			(unsigned long long)l);
		if (st.lost_depth)
			fprintf(stderr, "  (%llu nested deeper than %d)",
				(unsigned long long)st.lost_depth,
				r->set->funcs[i].python ? CMON_PY_STACK_DEPTH : CMON_STACK_DEPTH);
		if (st.lost_uret && r->set->funcs[i].python)
			fprintf(stderr, "  (%llu returns nested past the kernel's %d return probes)",
				(unsigned long long)st.lost_uret, CMON_KERNEL_URET_DEPTH);
		else if (st.lost_uret)
			fprintf(stderr, "  (%llu returns nested past the kernel's %d uretprobes: "
					"--return-probe insn sees them)",
				(unsigned long long)st.lost_uret, CMON_KERNEL_URET_DEPTH);
		if (r->opts.n_focus && !r->set->funcs[i].python)
			fprintf(stderr, r->opts.max_depth >= 0 ? "  (%llu outside --focus or below "
								  "--max-depth)"
							       : "  (%llu outside --focus)",
				(unsigned long long)st.outside_focus);
		if (r->opts.if_expr)
			fprintf(stderr, "  (%llu filtered)", (unsigned long long)st.filtered);
		if (r->opts.on_change)
			fprintf(stderr, "  (%llu unchanged)", (unsigned long long)st.unchanged);
		fputc('\n', stderr);
	}
	if (never)
		fprintf(stderr, "cmon: functions never called: %zu%s\n", never,
			rows ? "" : " (all of them)");
}

/* The run's summary on stderr.  Calls whose record was not written, and
 * calls written without their captured values (a capture record did not
 * fit): both are losses, returned. */
static uint64_t report(struct trace_run *r)
{
	struct trace_counts c = {};

	sum_func_stats(r, &c);
	if (r->kind == CMD_BREAK) {
		break_summary(r, c.lost);
		return 0;
	}
	/* records an output dropped and went on (a full buffer) */
	c.lost += out_router__dropped(r->router);
	/* --py records whose process or code object was not known */
	if (r->py)
		c.lost += pytrace__undecoded(r->py);
	if (r->opts.quiet)
		return c.lost + c.lost_captures;
	events_summary(r, &c);
	consumer_summary(r);
	if (r->ses.follow)
		children_summary(r);
	if (c.lost_captures)
		fprintf(stderr, "cmon: captures lost: %llu (calls written without their captured "
				"values)\n", (unsigned long long)c.lost_captures);
	if (r->py)
		py_report(r);
	if (typer__unavailable(r->typer))
		fprintf(stderr, "cmon: values unavailable: %llu (floats in SSE/x87 registers, which "
				"a uprobe cannot read)\n",
			(unsigned long long)typer__unavailable(r->typer));
	if (typer__orphans(r->typer))
		fprintf(stderr, "cmon: captures dropped unmatched: %llu (their call records were "
				"lost; the oldest waiting captures are let go past 64 MiB)\n",
			(unsigned long long)typer__orphans(r->typer));
	func_table(r);
	return c.lost + c.lost_captures;
}

/* The probe's own cost per site class, subtracted from latencies (unless
 * --raw-latency, or no returns are observed).  A calibration that cannot
 * run leaves latencies raw, with a warning. */
static void calibrate(struct trace_run *r)
{
	if (!r->opts.raw_latency && !r->opts.no_return)
		r->calib = probe_calib__host();
	/* --if's latency_ns is the one the records show. */
	expr__set_latency_bias(r->exprs, r->set, r->calib);
}

/* Where the spool's file goes: beside the output (a store's folder, a
 * file's), so that it uses the disk the output does; else a temporary
 * folder.  R's own string. */
static const char *spool_dir(struct trace_run *r)
{
	const char *out = r->opts.output;
	const char *slash;
	struct stat st;

	free(r->spool_dir);
	r->spool_dir = NULL;
	if (out && ch_url__is(out))
		return NULL; /* a server's table: a temporary folder */
	if (r->kind == CMD_CAPTURE && out && !out_path__per_process(out))
		return out; /* the store's folder, made by now */
	if (!out)
		return r->kind == CMD_CAPTURE ? "cmon-capture" : NULL;
	/* a file's folder; not /dev's for /dev/null, nor a pipe's */
	if (r->kind != CMD_CAPTURE && (stat(out, &st) || !S_ISREG(st.st_mode)))
		return NULL;
	slash = strrchr(out, '/');
	if (!slash)
		return ".";
	r->spool_dir = strndup(out, slash == out ? 1 : (size_t)(slash - out));
	return r->spool_dir;
}

static uint64_t records_of(const struct trace_run *r, pid_t pid)
{
	for (size_t i = 0; i < r->n_procs; i++)
		if (r->procs[i].pid == pid)
			return r->procs[i].records;
	return 0;
}

/* The children each -p process has now, before its probes fire. */
static int note_early_children(struct trace_run *r)
{
	for (size_t i = 0; i < r->opts.n_pids; i++) {
		pid_t *kids = NULL;
		size_t n = 0;
		struct early_child *e;
		char comm[CMON_COMM_LEN];
		int err = proc__children(r->opts.pids[i], &kids, &n);

		e = err || !n ? NULL : realloc(r->early, (r->n_early + n) * sizeof(*e));
		proc__comm(r->opts.pids[i], comm, sizeof(comm));
		for (size_t k = 0; e && k < n; k++) {
			e[r->n_early + k] = (struct early_child){ r->opts.pids[i], kids[k] };
			memcpy(e[r->n_early + k].parent_comm, comm, sizeof(comm));
		}
		if (e) {
			r->early = e;
			r->n_early += n;
		}
		free(kids);
		if (err || (n && !e))
			return -ENOMEM;
	}
	return 0;
}

/* A -p process that made no traced call while processes it had forked
 * before cmon came made none recorded either (an nginx master whose
 * workers serve): say so, and name them. */
static void say_idle_parents(const struct trace_run *r)
{
	for (size_t i = 0; i < r->opts.n_pids; i++) {
		pid_t p = r->opts.pids[i];
		struct strbuf pids = { 0 };
		const char *comm = "";
		size_t n = 0;

		if (records_of(r, p))
			continue;
		for (size_t k = 0; k < r->n_early; k++)
			if (r->early[k].parent == p && !records_of(r, r->early[k].pid) &&
			    !strbuf__printf(&pids, "%s%d", n ? " -p " : "", (int)r->early[k].pid)) {
				comm = r->early[k].parent_comm;
				n++;
			}
		if (n && pids.buf)
			log_warn("process %d%s%s%s made no traced call; %zu process%s it forked "
				 "before cmon %s not traced (--follow takes those forked from now "
				 "on): add -p %s", (int)p, comm[0] ? " (" : "", comm,
				 comm[0] ? ")" : "", n, n == 1 ? "" : "es", n == 1 ? "is" : "are",
				 pids.buf);
		strbuf__release(&pids);
	}
}

static void cleanup_run(struct trace_run *r)
{
	watcher__free(r->watcher);
	pytrace__free(r->py); /* restores its hooks first, whatever happened */
	free(r->csv_funcs);
	free(r->func_names);
	pipeline__free(r->pipe);
	free(r->exprs);
	stack_book__free(r->stacks);
	free(r->held);
	free(r->procs);
	free(r->early);
	strbuf__release(&r->stack_text);
	typer__free(r->typer);
	out_router__free(r->router); /* closes the stores of a run that failed */
	free(r->cmdline);
	free(r->spool_dir);
	session__cleanup(&r->ses);
	probe_set__free(r->set);
	cmd_opts__free(&r->opts);
}

/* --watch on the one process (launched: stopped right after its exec, so
 * its addresses are known before its first instruction), then let it go. */
static int start_watch(struct trace_run *r, bool csv_header)
{
	struct watcher_opts wo = {
		.pid = r->ses.launched ? r->ses.launch.pid : r->opts.pids[0],
		.exprs = r->opts.watches,
		.n_exprs = r->opts.n_watches,
		.out = r->ses.out,
		.fmt = r->opts.format,
		.csv_header = csv_header,
	};
	int err;

	err = watcher__new(&wo, &r->watcher);
	if (!err)
		err = watcher__attach(r->watcher);
	if (!err)
		err = session__continue(&r->ses);
	if (!err && !r->opts.quiet)
		fprintf(stderr, "cmon: watching %zu address%s in process %d\n",
			watcher__count(r->watcher), watcher__count(r->watcher) == 1 ? "" : "es",
			(int)wo.pid);
	return err;
}

/* trace --watch without functions: the watchpoints alone. */
static int watch_only(struct trace_run *r, int *status, bool *have_status, uint64_t *lost)
{
	double deadline = 0;
	int err;

	err = session__open_pidfds(&r->ses);
	if (!err)
		err = session__start_output(&r->ses);
	if (!err)
		err = session__release(&r->ses);
	session__install_signals();
	if (!err)
		err = start_watch(r, true);
	if (err)
		return err;
	if (r->opts.duration_s > 0)
		deadline = clock__mono_s() + r->opts.duration_s;
	while (!session_stop_signal) {
		int n = watcher__poll(r->watcher, r->opts.poll_ms);

		if (n < 0) {
			log_error("cannot write output: %s", strerror(-n));
			err = n;
			break;
		}
		if (session__targets_gone(&r->ses, status, have_status))
			break;
		if (deadline && clock__mono_s() >= deadline)
			break;
	}
	watcher__detach(r->watcher);
	watcher__drain(r->watcher);
	*lost = watcher__report(r->watcher, r->opts.quiet);
	if (r->ses.launched && !*have_status && r->ses.launch.pid > 0 && !session_stop_signal &&
	    !deadline)
		*have_status = launch__reap(&r->ses.launch, status, 1);
	return err;
}

/* cmon break: stops the BPF program sent (hits recorded, up to --count). */
static uint64_t break_stops(const struct trace_run *r)
{
	uint64_t hits = 0, lost = 0;

	if (!r->tracer)
		return 0;
	tracer__break_hits(r->tracer, &hits, &lost);
	hits = hits < r->opts.break_count ? hits : r->opts.break_count;
	return hits > lost ? hits - lost : 0;
}

static pid_t break_pid(const struct trace_run *r)
{
	return r->ses.launched ? r->ses.launch.pid : r->opts.n_pids ? r->opts.pids[0] : 0;
}

/* Targets and patterns resolved, --if compiled, the typer, the router,
 * the calibration: everything before the programs load.  0 or -errno
 * after one error line (*USAGE_ERR: an expression that does not fit). */
static int prepare(struct trace_run *r, bool *usage_err)
{
	struct typer_opts ty = {};
	struct resolve_opts ro = {};
	int err = py_prepare(r);

	if (err)
		return err;
	session__resolve_opts(&r->ses, &ro);
	ro.ret_choice = r->opts.no_return ? RETURN_OFF : r->opts.ret_choice;
	err = probe_set__resolve(&ro, &r->set);
	if (err)
		return err;
	if (r->py) {
		long id = pytrace__mark(r->py, r->set, r->opts.follow > 0);

		if (id < 0)
			return (int)id;
		r->py_func = (uint32_t)id;
	}
	session__cover_binary(&r->ses, r->set->exe_dev, r->set->exe_ino);
	session__cover_cgroup(&r->ses, r->set);

	/* --if / --on-change: names checked against every function's DWARF;
	 * an expression that does not fit a function is a usage error. */
	err = expr__compile_run(r->opts.if_expr, r->opts.on_change, r->set, r->opts.no_return,
				&r->exprs);
	if (err == -EINVAL)
		*usage_err = true;
	if (err)
		return err;

	ty.raw = r->opts.raw;
	ty.strlen = r->opts.strlen;
	ty.deref = r->opts.deref;
	ty.deref_set = r->opts.deref_set;
	ty.capture_max = r->opts.capture_max;
	ty.captures = r->opts.captures;
	ty.n_captures = r->opts.n_captures;
	ty.locals = r->opts.locals;
	ty.capture_at = r->opts.capture_at;
	ty.leaves = r->opts.format == OUT_CSV;
	err = typer__new(r->set, &ty, &r->typer);
	if (err)
		return err;
	malloc_trim(0); /* DWARF parsing is over: give its memory back */
	err = make_router(r);
	if (!err)
		err = session__open_pidfds(&r->ses);
	if (!err)
		calibrate(r);
	return err;
}

/* The pipeline's settings: trace's callbacks, the tracer's options. */
static int pipeline_opts(struct trace_run *r, struct pipeline_opts *po)
{
	struct tracer_opts *to = &po->tracer;

	po->decode = true;
	po->calib = r->calib;
	po->py = r->py;
	po->ops = (struct pipeline_ops){ .call = on_call, .capture = on_capture,
					 .py_call = on_py_call, .ctx = r };
	to->entry_only = r->opts.no_return;
	to->ringbuf_bytes = r->opts.ringbuf_bytes;
	to->block_ns = r->opts.block_ns;
	to->plans = typer__plans(r->typer);
	to->sleepable = !r->opts.no_fault_in;
	to->focus = r->opts.n_focus > 0;
	r->lines_mode = r->opts.n_lines_of > 0;
	if (r->opts.stack) {
		r->stacks = stack_book__new();
		if (!r->stacks) {
			log_error("out of memory");
			return -ENOMEM;
		}
		po->ops.stack = on_stack;
		for (size_t i = 0; i < r->set->n_objects; i++)
			stack_book__fixed_object(r->stacks, r->set->objects[i].attach_path,
						 r->set->objects[i].module);
	}
	to->spool = true;
	to->spool_dir = spool_dir(r);
	to->max_depth = r->opts.max_depth;
	to->line_regs = r->opts.locals;
	to->follow = r->opts.follow > 0;
	to->host_wide = r->opts.host_wide;
	/* --cgroup: its processes and those below it, decided in the kernel */
	to->filter_cgroup = r->ses.cgroup.id;
	to->filter_cgroup_level = r->ses.cgroup.level;
	to->break_count = r->kind == CMD_BREAK ? r->opts.break_count : 0;
	to->exprs = r->exprs; /* --py: the pipeline makes the pattern rows (strict for break) */
	return 0;
}

/* The programs loaded and attached, the output started, the program let
 * go.  0 or -errno after one error line. */
static int attach(struct trace_run *r)
{
	static char step[128];
	struct pipeline_opts po = {};
	int err = pipeline_opts(r, &po);

	if (err)
		return err;
	if (r->kind == CMD_BREAK)
		breakpoint__target(break_pid(r));
	if (session_stop_signal) /* interrupted while starting: nothing attached */
		return 0;
	snprintf(step, sizeof(step), "loading the BPF programs of %zu function%s (the kernel "
		 "verifies them)", r->set->n_funcs, r->set->n_funcs == 1 ? "" : "s");
	session__step(step);
	r->pipe = pipeline__new(r->set, &po);
	if (!r->pipe)
		return -errno;
	r->tracer = pipeline__tracer(r->pipe);
	session__step("attaching the probes");
	err = pipeline__attach(r->pipe);
	if (err)
		return err;
	session__starting(&r->ses, false);
	r->ses.follow = tracer__follow(r->tracer);
	session__install_signals();
	/* before "attached": what a user does after it is not "before cmon" */
	err = note_early_children(r);
	if (err)
		return err;
	if (!r->opts.quiet)
		fprintf(stderr, "cmon: attached %zu probes in %.1f ms (%zu function%s, %zu typed "
				"from DWARF)\n",
			tracer__probe_count(r->tracer), (double)tracer__attach_ns(r->tracer) / 1e6,
			r->set->n_funcs, r->set->n_funcs == 1 ? "" : "s", typer__typed_count(r->typer));
	err = session__start_output(&r->ses);
	if (!err)
		err = session__release(&r->ses);
	if (!err && r->opts.n_watches)
		err = start_watch(r, false);
	return err;
}

/* Poll until a signal, the targets' end, --duration, --max-events, break's
 * last stop or an output error.  0 or -errno after one error line. */
static int run(struct trace_run *r, double deadline, int *status, bool *have_status)
{
	while (!session_stop_signal && !r->max_reached && !r->write_err) {
		int n = pipeline__poll(r->pipe, r->opts.poll_ms);

		if (r->watcher && n >= 0) {
			int m = watcher__poll(r->watcher, 0);

			if (m < 0 && !r->write_err)
				r->write_err = m;
		}

		/* A negative count from our own callback means stop, not failure. */
		if (n < 0 && n != -EINTR && !r->max_reached && !r->write_err) {
			log_error("reading the ring buffer: %s", strerror(-n));
			return n;
		}
		settle_output(r, false);
		if (session__targets_gone(&r->ses, status, have_status))
			break;
		/* break -p: the last stop resumed, the probes gone, nothing more
		 * to wait for (a launched program is waited for: its status is
		 * cmon's) */
		if (r->kind == CMD_BREAK && !r->ses.launched &&
		    r->stops_seen >= r->opts.break_count)
			break;
		if (deadline && clock__mono_s() >= deadline)
			break;
	}
	return 0;
}

/* No call starts or ends past this point; what is recorded is written,
 * then the calls still pending in threads that run on; the report.
 * ERR: the run's.  Returns the run's error; *LOST the losses. */
static int finish(struct trace_run *r, int err, uint64_t *lost)
{
	/* The processes given on the command line: their pending calls are
	 * flushed as such (a followed child's too). */
	size_t n_roots;
	pid_t *roots = session__roots(&r->ses, &n_roots);

	pipeline__stop(r->pipe);
	if (r->watcher) {
		watcher__detach(r->watcher);
		watcher__drain(r->watcher);
	}
	pipeline__finish(r->pipe, roots, n_roots, true);
	free(roots);
	if (r->kind == CMD_BREAK)
		breakpoint__finish(break_pid(r), break_stops(r));
	flush_held_lines(r);
	settle_output(r, true);
	if (r->write_err) {
		log_error("cannot write output: %s", strerror(-r->write_err));
		err = r->write_err;
	}
	*lost = report(r);
	if (!r->opts.quiet)
		say_idle_parents(r);
	if (r->watcher)
		*lost += watcher__report(r->watcher, r->opts.quiet);
	if (*lost && *lost == r->py_nested && !r->opts.quiet)
		log_warn("%llu python calls were not seen whole (see above): selected calls "
			 "nested deeper than %d on a thread", (unsigned long long)*lost,
			 CMON_KERNEL_URET_DEPTH);
	else if (*lost && r->py && *lost == pytrace__undecoded(r->py) && !r->opts.quiet)
		log_warn("%llu python records were not decoded (see above): their process "
			 "was not known to be a traced one's child", (unsigned long long)*lost);
	else if (*lost && *lost == py_untraced(r) && !r->opts.quiet)
		log_warn("%llu python calls were not traced (see above): made in more "
			 "interpreter processes at once than cmon holds", (unsigned long long)*lost);
	else if (*lost && *lost == r->lost_uret && !r->opts.quiet)
		log_warn("%llu returns were not seen (see above): nested past the kernel's %d "
			 "uretprobes; --return-probe insn sees them", (unsigned long long)*lost,
			 CMON_KERNEL_URET_DEPTH);
	else if (*lost && !r->opts.quiet)
		log_warn("%llu events were lost (see above): a larger --ringbuf-size absorbs a "
			 "burst; calls faster than cmon writes them need --raw (no DWARF "
			 "typing) or cmon profile", (unsigned long long)*lost);
	return err;
}

/* trace, capture and break: prepare, attach, run, finish. */
int trace__run(enum cmd_kind kind, int argc, char **argv)
{
	struct trace_run r = { .kind = kind, .argc = argc, .argv = argv };
	bool have_status = false, usage_err = false;
	int status = 0, err;
	pid_t left;
	uint64_t lost = 0;
	double deadline = 0;

	session__init(&r.ses, &r.opts);
	err = cmd_opts__begin(kind, argc, argv, &r.opts);
	if (err >= 0)
		return err;
	/* A launched program writes to cmon's stdout too: its lines would be
	 * rows of the table (a terminal shows both, a file gets both). */
	if (kind == CMD_TRACE && r.opts.format == OUT_CSV && r.opts.cmd &&
	    (!r.opts.output || !strcmp(r.opts.output, "-")) && !isatty(STDOUT_FILENO)) {
		log_error("-F csv on stdout would hold the program's own output too: write the "
			  "table with -o FILE");
		cmd_opts__free(&r.opts);
		return CMON_EXIT_USAGE;
	}
	/* A host whose breakpoints open and never fire would report "0
	 * writes" as if the program had made none: refuse, before anything
	 * is launched or attached. */
	if (r.opts.n_watches && !host__have(HOST_HW_BREAKPOINT)) {
		log_error("--watch: hardware breakpoints do not work on this host (%s)",
			  host__why(HOST_HW_BREAKPOINT));
		cmd_opts__free(&r.opts);
		return CMON_EXIT_ERROR;
	}
	/* From the start: a SIGINT while probes are being attached stops the
	 * trace when they are (a job started with SIGINT ignored would lose
	 * it, and run on); the program launched gets cmon's own dispositions
	 * back (launch.h). */
	session__install_signals();
	if (kind == CMD_BREAK) {
		/* Each hit once, at entry, with its stack, as text on stderr
		 * (the program's stdout stays its own). */
		r.opts.no_return = true;
		r.opts.stack = true;
		r.opts.format = OUT_TEXT;
		r.ses.out = stderr;
		/* (The signals, from before the first probe: a signal must
		 * find the resume path, never kill cmon with the process
		 * stopped.) */
		breakpoint__init(r.opts.resume_after_s, r.opts.quiet);
	}

	/* The store has no place for the values at the return: say so, the
	 * reads still cost (trace shows them). */
	if (kind == CMD_CAPTURE && r.opts.capture_at == PLAN_AT_BOTH)
		log_warn("--capture-at both: the store keeps the values at the call; "
			 "at_return and changed are shown by trace only");

	/* capture: its store once the functions are known; break: stderr.
	 * Output in 256 KiB writes: ~2,000 records each; a larger buffer
	 * only adds resident memory. */
	/* break: the terminal's Ctrl-C is for cmon (it resumes and detaches),
	 * never the program's: the program gets its own process group */
	r.ses.launch.own_group = kind == CMD_BREAK;
	err = session__begin(&r.ses, kind != CMD_CAPTURE && kind != CMD_BREAK ? 1 << 18 : 0);
	if (err)
		goto cleanup;
	if (r.opts.n_watches && !r.opts.n_funcs && !r.opts.n_usdts && !r.opts.n_lines &&
	    !r.opts.n_lines_of) {
		err = watch_only(&r, &status, &have_status, &lost);
		goto cleanup;
	}
	/* Until the probes are in: said on a terminal when it takes a while,
	 * ended at once by Ctrl-C. */
	session__starting(&r.ses, true);
	session__step("finding the functions, reading their DWARF");
	err = prepare(&r, &usage_err);
	if (!err)
		err = attach(&r);
	session__starting(&r.ses, false);
	if (err || !r.pipe) /* failed, or interrupted while starting */
		goto cleanup;
	if (r.opts.duration_s > 0)
		deadline = clock__mono_s() + r.opts.duration_s;
	err = run(&r, deadline, &status, &have_status);
	err = finish(&r, err, &lost);
	/* The program's own end ended the trace: its status is ours. */
	if (r.ses.launched && !have_status && r.ses.launch.pid > 0 && !session_stop_signal &&
	    !deadline && !r.max_reached)
		have_status = launch__reap(&r.ses.launch, &status, 1);
cleanup:
	if (kind == CMD_BREAK)
		breakpoint__finish(break_pid(&r), break_stops(&r)); /* every path */
	/* break interrupted: the program it launched goes on (its own process
	 * group took no Ctrl-C), and cmon's status says cmon was stopped */
	left = kind == CMD_BREAK && session_stop_signal && !err && r.ses.launched &&
			       r.ses.launch.pid > 0 && !have_status
		       ? r.ses.launch.pid
		       : 0;
	cleanup_run(&r);
	if (usage_err)
		return CMON_EXIT_USAGE;
	if (left) {
		fprintf(stderr, "cmon: %s: process %d goes on untraced\n",
			strsignal(session_stop_signal), (int)left);
		return 128 + session_stop_signal;
	}
	return session__exit_status(err, lost, have_status, status);
}

int cmd_trace(int argc, char **argv) { return trace__run(CMD_TRACE, argc, argv); }
int cmd_capture(int argc, char **argv) { return trace__run(CMD_CAPTURE, argc, argv); }
