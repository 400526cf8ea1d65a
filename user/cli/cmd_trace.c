// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_trace.c: `cmon trace` and `cmon capture`: resolve, plan the typed
 * arguments, attach, stream records (typed where DWARF allows) to a writer
 * or to a capture store, report what was written and what was lost, detach.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/clock.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "core/log.h"
#include "core/privilege.h"
#include "event/decode.h"
#include "event/tracer.h"
#include "event/typer.h"
#include "dwarf/debuginfo.h"
#include "store/store_writer.h"
#include "output/ledger.h"
#include "output/writer.h"

struct trace_run {
	enum cmd_kind kind;  /* CMD_TRACE or CMD_CAPTURE */
	struct cmd_opts opts;
	struct typer *typer;
	struct store_writer *store;
	int64_t *store_funcs; /* store function id of each func_id */
	int argc;
	char **argv;
	struct session ses;  /* patterns, output, processes */
	struct probe_set *set;
	struct tracer *tracer;
	struct writer *writer;
	struct decoder decoder;
	uint64_t handed;           /* records given to the writer or the store */
	struct out_ledger ledger;  /* which of them reached the output */
	bool max_reached;
	int write_err;
};

static int on_capture(void *ctx, const struct cmon_capture_rec *rec, size_t size)
{
	struct trace_run *r = ctx;

	return typer__capture(r->typer, rec) ? -1 : 0;
}

static uint64_t or_none(bool have, uint64_t v) { return have ? v : STORE_NONE; }

/* One call into the capture store, with its typed values and buffers. */
static int store_call(struct trace_run *r, const struct call_record *cr,
		      const struct render_out *ro, uint32_t func_id)
{
	struct store_blob blobs[64];
	uint64_t shapes[64][RENDER_MAX_DIMS];
	bool has_exit = cr->status == CALL_OK || cr->status == CALL_TAILCALL;
	struct store_call sc = {
		.func_id = r->store_funcs[func_id],
		.pid = cr->pid,
		.tid = cr->tid,
		.comm = cr->comm,
		.ts_ns = cr->ts_ns,
		.latency_ns = or_none(has_exit, cr->latency_ns),
		.status = call_status__name(cr->status),
		.rss_entry = cr->rss_entry,
		.rss_exit = or_none(has_exit, cr->rss_exit),
		.vms_entry = cr->vms_entry,
		.vms_exit = or_none(has_exit, cr->vms_exit),
	};
	const struct plan_layout *l = typer__layout(r->typer, func_id);
	char raw_args[256], raw_ret[32];

	/* A function without DWARF has a typed view only for its captures: its
	 * arguments are still the registers. */
	if (cr->typed && l && l->typed) {
		sc.args_json = cr->typed->args;
		sc.ret_json = cr->status == CALL_OK ? cr->typed->retval : NULL;
	} else {
		/* Raw mode: the registers, named as in trace's columns. */
		snprintf(raw_args, sizeof(raw_args),
			 "{\"arg0\":%lld,\"arg1\":%lld,\"arg2\":%lld,\"arg3\":%lld,"
			 "\"arg4\":%lld,\"arg5\":%lld}",
			 (long long)cr->args[0], (long long)cr->args[1], (long long)cr->args[2],
			 (long long)cr->args[3], (long long)cr->args[4], (long long)cr->args[5]);
		snprintf(raw_ret, sizeof(raw_ret), "%lld", (long long)cr->ret);
		sc.args_json = raw_args;
		sc.ret_json = cr->status == CALL_OK ? raw_ret : NULL;
	}
	for (size_t i = 0; ro && i < ro->n_blobs && sc.n_blobs < 64; i++) {
		const struct render_blob *b = &ro->blobs[i];
		struct store_blob *sb = &blobs[sc.n_blobs];

		for (unsigned d = 0; d < b->ndim && d < RENDER_MAX_DIMS; d++)
			shapes[sc.n_blobs][d] = b->shape[d];
		sb->name = b->name;
		sb->dtype = b->dtype;
		sb->ndim = b->ndim;
		sb->shape = shapes[sc.n_blobs];
		sb->truncated = b->truncated;
		sb->data = b->data;
		sb->len = b->len;
		sc.n_blobs++;
	}
	sc.blobs = blobs;
	return store_writer__add_call(r->store, &sc) < 0 ? -EIO : 0;
}

static int on_record(void *ctx, const struct cmon_call_rec *rec)
{
	struct trace_run *r = ctx;
	const struct render_out *ro = NULL;
	struct cmon_call_rec copy;
	struct call_record cr;
	int err;

	if (r->max_reached)
		return -1;
	if (r->write_err) {
		out_ledger__refuse(&r->ledger); /* drained, never written: counted */
		return 0;
	}
	/* The ring buffer is shared with the kernel: work on a copy whose
	 * strings are known to end. */
	memcpy(&copy, rec, sizeof(copy));
	copy.comm[CMON_COMM_LEN - 1] = 0;
	if (decoder__decode(&r->decoder, &copy, &cr))
		return 0;
	cr.typed = typer__render(r->typer, &copy, &ro);
	err = r->store ? store_call(r, &cr, ro, copy.func_id) : writer__write(r->writer, &cr);
	if (err) {
		r->write_err = err;
		out_ledger__refuse(&r->ledger);
		return 0;
	}
	out_ledger__add(&r->ledger, copy.func_id, r->writer ? writer__bytes(r->writer) : 0);
	r->handed++;
	if (r->opts.max_events && r->handed >= r->opts.max_events) {
		r->max_reached = true;
		return -1;
	}
	return 0;
}

/* After each drain: the output gets what was written (a terminal, a pipe,
 * a file, unix-socket readers), and the ledger learns what reached it. */
static void settle_output(struct trace_run *r, bool final)
{
	uint64_t on_disk = 0;
	int err = r->write_err;

	/* A view (tree, folded, chrome) may hold records until the end. */
	if (!final && r->writer && writer__bytes(r->writer) == UINT64_MAX) {
		if (r->ses.out)
			fflush(r->ses.out);
		return;
	}
	if (r->writer) {
		err = writer__flush(r->writer, &on_disk);
		if (err && !r->write_err)
			r->write_err = err;
	}
	out_ledger__settle(&r->ledger, err, on_disk);
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

/* cmon capture: the store, its functions and what makes it trustworthy. */
static int open_store(struct trace_run *r)
{
	const char *outdir = r->opts.output ? r->opts.output : "cmon-capture";
	char host[256] = "";
	char *cmdline = join_args(r->argc + 1, r->argv - 1); /* from "cmon" */
	char *build_id, exe[32];
	const char *target = r->ses.launch_path ? r->ses.launch_path
			     : r->opts.binary ? r->opts.binary
					      : r->set->objects[r->set->targets[0].objects[0]].path;
	struct store_meta meta = {
		.cmon_version = CMON_VERSION,
		.command_line = cmdline,
		.target_path = target,
		.hostname = host,
	};
	int err;

	gethostname(host, sizeof(host) - 1);
	/* The build-id says later which build the calls came from (read from
	 * the notes: a stripped executable has one too). */
	if (r->opts.n_pids)
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)r->opts.pids[0]);
	build_id = debuginfo__build_id(r->ses.launch_path ? r->ses.launch_path
				       : r->opts.binary ? r->opts.binary
				       : r->opts.n_pids ? exe
				       : r->set->objects[r->set->targets[0].objects[0]].attach_path);
	meta.build_id = build_id;
	err = store_writer__create(outdir, &meta, &r->store);
	free(build_id);
	free(cmdline);
	if (err) {
		log_error("cannot create the capture store %s: %s", outdir, strerror(-err));
		return err;
	}
	for (size_t i = 0; i < r->set->n_objects && !err; i++) {
		bool traced = false;

		for (size_t k = 0; k < r->set->n_funcs && !traced; k++)
			traced = r->set->funcs[k].object == i;
		if (!traced)
			continue;
		build_id = debuginfo__build_id(r->set->objects[i].attach_path);
		err = store_writer__add_file(r->store, r->set->objects[i].path, build_id);
		free(build_id);
	}
	if (err) {
		log_error("capture store: %s", store_writer__errmsg(r->store));
		return -EIO;
	}
	r->store_funcs = calloc(r->set->n_funcs ? r->set->n_funcs : 1, sizeof(*r->store_funcs));
	if (!r->store_funcs)
		return -ENOMEM;
	for (size_t i = 0; i < r->set->n_funcs; i++) {
		const struct probe_func *f = &r->set->funcs[i];
		const struct plan_layout *l = typer__layout(r->typer, (uint32_t)i);
		char *sig = NULL;
		int64_t id;

		sig = typer__signature_json(r->typer, (uint32_t)i);
		id = store_writer__add_function(r->store, f->name, r->set->objects[f->object].module,
						sig, l && l->typed);
		free(sig);
		if (id < 0) {
			log_error("capture store: %s", store_writer__errmsg(r->store));
			return -EIO;
		}
		r->store_funcs[i] = id;
	}
	if (!r->opts.quiet)
		fprintf(stderr, "cmon: capturing to %s\n", store_writer__path(r->store));
	return 0;
}

/* Calls whose record was not written, and calls written without their
 * captured values (a capture record did not fit): both are losses. */
static uint64_t report(struct trace_run *r)
{
	uint64_t lost = 0, lost_captures = 0;

	for (size_t i = 0; i < r->set->n_funcs; i++) {
		struct cmon_func_stats st;

		if (!tracer__func_stats(r->tracer, (unsigned)i, &st)) {
			lost += st.lost_ringbuf + st.lost_depth + st.lost_nomem;
			lost_captures += st.lost_capture;
		}
	}
	if (r->opts.quiet)
		return lost + lost_captures;
	fprintf(stderr, "cmon: events written: %llu\n", (unsigned long long)r->ledger.written);
	if (r->ledger.unwritten)
		fprintf(stderr, "cmon: events not written: %llu (the output failed: %s)\n",
			(unsigned long long)r->ledger.unwritten, strerror(-r->write_err));
	fprintf(stderr, "cmon: events lost: %llu\n", (unsigned long long)lost);
	if (lost_captures)
		fprintf(stderr, "cmon: captures lost: %llu (calls written without their captured "
				"values)\n", (unsigned long long)lost_captures);
	if (typer__unavailable(r->typer))
		fprintf(stderr, "cmon: values unavailable: %llu (floats in SSE/x87 registers, which "
				"a uprobe cannot read)\n",
			(unsigned long long)typer__unavailable(r->typer));
	fprintf(stderr, "cmon: %-32s %12s %12s %10s\n", "function", "calls", "written", "lost");
	for (size_t i = 0; i < r->set->n_funcs; i++) {
		struct cmon_func_stats st;
		uint64_t l;

		if (tracer__func_stats(r->tracer, (unsigned)i, &st))
			continue;
		l = st.lost_ringbuf + st.lost_depth + st.lost_nomem;
		fprintf(stderr, "cmon: %-32s %12llu %12llu %10llu", r->set->funcs[i].name,
			(unsigned long long)st.calls, (unsigned long long)r->ledger.written_per_func[i],
			(unsigned long long)l);
		if (st.lost_depth)
			fprintf(stderr, "  (%llu nested deeper than %d)",
				(unsigned long long)st.lost_depth, CMON_STACK_DEPTH);
		fputc('\n', stderr);
	}
	return lost + lost_captures;
}

/* The probe's own cost per site class, subtracted from latencies (unless
 * --raw-latency, or no returns are observed).  A calibration that cannot
 * run leaves latencies raw, with a warning. */
static int calibrate(struct trace_run *r)
{
	const struct probe_calib *calib = NULL;
	int err;

	if (!r->opts.raw_latency && !r->opts.no_return)
		calib = probe_calib__host();
	err = decoder__init(&r->decoder, r->set, calib);
	if (err)
		log_error("out of memory");
	return err;
}

static void cleanup_run(struct trace_run *r)
{
	decoder__release(&r->decoder);
	tracer__free(r->tracer);
	if (r->store)
		store_writer__close(r->store, 0);
	free(r->store_funcs);
	typer__free(r->typer);
	writer__free(r->writer);
	session__cleanup(&r->ses);
	probe_set__free(r->set);
	out_ledger__free(&r->ledger);
	cmd_opts__free(&r->opts);
}

static int run(enum cmd_kind kind, int argc, char **argv)
{
	struct trace_run r = { .kind = kind, .argc = argc, .argv = argv };
	struct typer_opts ty = {};
	struct resolve_opts ro = {};
	struct tracer_opts to = {};
	bool have_status = false;
	int status = 0, err;
	uint64_t lost = 0;
	double deadline = 0;

	session__init(&r.ses, &r.opts);
	if (cmd_opts__parse(kind, argc, argv, &r.opts)) {
		cmd_opts__free(&r.opts);
		return CMON_EXIT_USAGE;
	}
	if (r.opts.help) {
		cmd_opts__usage(kind, stdout);
		cmd_opts__free(&r.opts);
		return CMON_EXIT_OK;
	}
	log_set_level(r.opts.verbose >= 2 ? LOG_DEBUG : r.opts.verbose ? LOG_INFO : LOG_WARN);

	err = privilege__check();
	if (!err)
		err = session__parse_patterns(&r.ses);
	if (!err && kind != CMD_CAPTURE) /* the store is made once the functions are known */
		err = session__open_output(&r.ses, 1 << 20);
	if (!err)
		err = session__start_program(&r.ses);
	if (err)
		goto cleanup;

	session__resolve_opts(&r.ses, &ro);
	ro.ret_choice = r.opts.no_return ? RETURN_OFF : r.opts.ret_choice;
	err = probe_set__resolve(&ro, &r.set);
	if (err)
		goto cleanup;
	session__cover_binary(&r.ses, r.set->exe_dev, r.set->exe_ino);

	ty.raw = r.opts.raw;
	ty.strlen = r.opts.strlen;
	ty.deref = r.opts.deref;
	ty.deref_set = r.opts.deref_set;
	ty.capture_max = r.opts.capture_max;
	ty.captures = r.opts.captures;
	ty.n_captures = r.opts.n_captures;
	err = typer__new(r.set, &ty, &r.typer);
	if (err)
		goto cleanup;
	malloc_trim(0); /* DWARF parsing is over: give its memory back */
	if (kind == CMD_CAPTURE) {
		err = open_store(&r);
		if (err)
			goto cleanup;
	}
	err = out_ledger__init(&r.ledger, r.set->n_funcs);
	if (kind != CMD_CAPTURE) {
		size_t n_cols;
		const char *const *cols = typer__columns(r.typer, &n_cols);

		r.writer = writer__new(r.opts.format, r.ses.out);
		if (r.writer)
			writer__set_columns(r.writer, cols, n_cols);
	}
	if (err || (kind != CMD_CAPTURE && !r.writer)) {
		err = -ENOMEM;
		log_error("out of memory");
		goto cleanup;
	}
	err = session__open_pidfds(&r.ses);
	if (err)
		goto cleanup;
	err = calibrate(&r);
	if (err)
		goto cleanup;
	to.entry_only = r.opts.no_return;
	to.ringbuf_bytes = r.opts.ringbuf_bytes;
	to.on_record = on_record;
	to.on_capture = on_capture;
	to.ctx = &r;
	to.plans = typer__plans(r.typer);
	to.sleepable = !r.opts.no_fault_in;
	r.tracer = tracer__new(r.set, &to);
	if (!r.tracer) {
		err = -errno;
		log_error("cannot load the BPF programs: %s", strerror(errno));
		goto cleanup;
	}
	err = tracer__attach(r.tracer);
	if (err)
		goto cleanup;
	session__install_signals();
	if (!r.opts.quiet)
		fprintf(stderr, "cmon: attached %zu probes in %.1f ms (%zu function%s, %zu typed "
				"from DWARF)\n",
			tracer__probe_count(r.tracer), (double)tracer__attach_ns(r.tracer) / 1e6,
			r.set->n_funcs, r.set->n_funcs == 1 ? "" : "s", typer__typed_count(r.typer));
	err = session__start_output(&r.ses);
	if (!err)
		err = session__release(&r.ses);
	if (err)
		goto cleanup;

	if (r.opts.duration_s > 0)
		deadline = clock__mono_s() + r.opts.duration_s;
	while (!session_stop_signal && !r.max_reached && !r.write_err) {
		int n = tracer__poll(r.tracer, r.opts.poll_ms);

		/* A negative count from our own callback means stop, not failure. */
		if (n < 0 && n != -EINTR && !r.max_reached && !r.write_err) {
			log_error("reading the ring buffer: %s", strerror(-n));
			err = n;
			break;
		}
		if (r.store && store_writer__maybe_commit(r.store, 0) < 0 && !r.write_err)
			r.write_err = -EIO;
		settle_output(&r, false);
		if (session__targets_gone(&r.ses, &status, &have_status))
			break;
		if (deadline && clock__mono_s() >= deadline)
			break;
	}

	/* No call starts or ends past this point; drain what is recorded,
	 * then report the calls still pending in threads that run on. */
	tracer__detach_probes(r.tracer);
	tracer__drain(r.tracer);
	for (size_t i = 0; i < r.opts.n_pids; i++)
		tracer__flush_pending(r.tracer, r.opts.pids[i]);
	if (r.ses.launched && r.ses.launch.pid > 0)
		tracer__flush_pending(r.tracer, r.ses.launch.pid);
	tracer__detach(r.tracer);
	tracer__drain(r.tracer);
	if (!r.write_err && r.writer)
		r.write_err = writer__finish(r.writer);
	settle_output(&r, true);
	if (r.store) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		if (store_writer__close(r.store, (uint64_t)now.tv_sec * 1000000000ull +
							 (uint64_t)now.tv_nsec) && !r.write_err)
			r.write_err = -EIO;
		r.store = NULL;
	}
	if (r.write_err) {
		log_error("cannot write output: %s", strerror(-r.write_err));
		err = r.write_err;
	}
	lost = report(&r);
	if (lost && !r.opts.quiet)
		log_warn("%llu events were lost (see above); a larger --ringbuf-size or a "
			 "shorter --poll-ms helps", (unsigned long long)lost);
	/* The program's own end ended the trace: its status is ours. */
	if (r.ses.launched && !have_status && r.ses.launch.pid > 0 && !session_stop_signal &&
	    !deadline && !r.max_reached)
		have_status = launch__reap(&r.ses.launch, &status, 1);
cleanup:
	cleanup_run(&r);
	return session__exit_status(err, lost, have_status, status);
}

int cmd_trace(int argc, char **argv) { return run(CMD_TRACE, argc, argv); }
int cmd_capture(int argc, char **argv) { return run(CMD_CAPTURE, argc, argv); }
