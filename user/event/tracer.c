// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/clock.h"
#include "core/grow.h"
#include "core/log.h"
#include "probe/attach.h"
#include "probe/follow.h"
#include "probe/links.h"
#include "probe/bpf_setup.h"
#include "probe/host.h"
#include "proc/procmaps.h"
#include "capture_staging.h"
#include "spool.h"
#include "staging.h"
#include "tracer.h"
#include "trace.skel.h"

#define DEFAULT_RINGBUF (4u << 20)
#define CONSUMER_NICE -10

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif


/* Records one poll hands over at most, so a producer that never pauses
 * (a storm, or a program that reacts to cmon's own output) cannot keep the
 * consumer from checking signals and --duration: ~30 ms of records. */
#define POLL_BUDGET 65536
/* Spooling starts when a poll finds the ring buffer fuller than this part
 * of it, and between ring reads the spool is worked off until the buffer
 * is that full again, or for a slice of time (signals, --duration). */
#define SPOOL_FILL_DIV 8
#define SPOOL_SLICE_NS 20000000ull
#define SPOOL_TAKE 256 /* records between looks at the ring buffer */
enum { SPOOL_CALL = 1, SPOOL_CAPTURE = 2 };

struct tracer {
	struct trace_bpf *skel;
	const struct probe_set *set;
	struct bpf_set bs;  /* what every BPF set has: links, follower, CPUs */
	struct ring_buffer *rb;
	struct ring_buffer *fork_rb; /* follow_events: forks wake the poll */
	int epoll_fd;                /* both buffers' */
	size_t rb_bytes;
	/* The ring buffer's consumer and producer pages, mapped read-only: a
	 * poll reads what was there when it swept (ring_fill), no more. */
	void *rb_pos;
	size_t page_size;
	/* The programs' view of this consumer (bpf/trace.bpf.c, consumer):
	 * asleep while a poll waits on an empty buffer. */
	struct cmon_consumer *consumer;
	uint64_t sleeps; /* polls that waited on an empty buffer */
	struct tracer_opts opts;
	int budget;       /* records a poll may hand over; < 0: no bound */
	long long read_left; /* ring bytes this poll reads yet; < 0: no bound */
	bool read_all;       /* it read them: the sweep's cutoff holds */
	int handled;         /* records this poll handed over */
	/* Call records staged per CPU in the kernel (bpf/staging.bpf.h) and put
	 * back in time order here; NULL: each record is handed on as it comes. */
	struct staging *stage;
	struct bpf_link *migrate_link; /* partial batches sent as threads move CPU */
	/* Capture records staged per CPU (bpf/capture_staging.bpf.h), with the
	 * call records only: NULL otherwise. */
	struct capture_staging *cap_stage;
	/* Records taken from the ring buffer ahead of their typing
	 * (spool.h): SPOOLING while the spool holds any, so that every
	 * record after them waits its turn there too. */
	struct spool *spool;
	bool spooling;
	uint64_t *spool_lost; /* per function: [2f] calls, [2f + 1] captures */
	/* With a spool, a thread of its own reads the ring buffer into it
	 * (read_once) while the caller's polls take the records from it: a
	 * consumer blocked in a write (a disk that stalls, a WAL checkpoint)
	 * never leaves the buffer unread.  MORE: records or a fork for the
	 * taker; ROOM: the taker made room. */
	pthread_t reader;
	bool reader_on;
	bool reader_stop;  /* atomic */
	bool reader_abandon; /* atomic: a read the spool has no room for is dropped (counted) */
	int reader_err;    /* atomic: the reader's error, for the next poll */
	bool forked;       /* atomic: a fork record came */
	int reader_poll_ms;
	pthread_mutex_t mu;
	pthread_cond_t more, room;
};

/* Staging, unless records must keep their place beside others: an
 * entry-only call's stack follows its record in the ring buffer, Python
 * records go out as they come, and break stops one call at a time.  A
 * call's capture records are staged with the call records only: each poll
 * sweeps them after the call records (capture_staging.h), so they are in
 * hand when the window lets their calls out. */
static bool staging_disabled; /* CMON_NO_STAGING, read by main */

static bool spool_wanted(const struct tracer_opts *o);

/* With --blocking-timeout and no spool, not staged either: the caller's
 * thread writes each record as it takes it from the ring buffer, so the
 * consumer position (what a waiting program watches) moves a record at a
 * time, where a staged poll would take a buffer's worth, then write it
 * all before reading again. */
static bool staging_wanted(const struct tracer_opts *o)
{
	return !o->on_stack && !o->break_count && !o->py_offsets &&
	       !staging_disabled && !(o->block_ns && !spool_wanted(o));
}

void tracer__disable_staging(void) { staging_disabled = true; }

static bool spool_disabled; /* CMON_NO_SPOOL, read by main */
static bool spool_always;   /* CMON_SPOOL=always */

void tracer__disable_spool(void) { spool_disabled = true; }
void tracer__always_spool(void) { spool_always = true; }

static unsigned slow_consumer_us; /* CMON_TEST_SLOW_CONSUMER_US, read by main */

void tracer__test_slow_consumer(unsigned us) { slow_consumer_us = us; }

static bool py_counts_unread; /* CMON_TEST_PY_COUNTS_UNREAD, read by main */

void tracer__test_py_counts_unread(void) { py_counts_unread = true; }

static unsigned py_procs_max; /* CMON_TEST_PY_PROCS_MAX, read by main */

void tracer__test_py_procs_max(unsigned n) { py_procs_max = n; }

static uint64_t spool_disk_max; /* CMON_TEST_SPOOL_DISK_MAX, read by main */

void tracer__test_spool_disk_max(uint64_t bytes) { spool_disk_max = bytes; }

/* The spool: records that stand alone (no stack record follows them, no
 * Python code object must be named while its process lives, no stop
 * waits on them) may wait their turn. */
static bool spool_wanted(const struct tracer_opts *o)
{
	return o->spool && !spool_disabled && !o->on_stack && !o->break_count && !o->py_offsets;
}

static __thread bool in_reader; /* this thread is the ring's reader (reader_main) */

static void wait_room(struct tracer *t);
static int from_spool(void *ctx, uint32_t kind, const void *rec, size_t size);

/* A record the spool could not take (its file failed): counted lost,
 * for its function.  A read can hold more than the room the reader waited
 * for (a ring's worth and a quarter: the staged batches and the spool's
 * frames add to it), and the last reads are the consumer's own: with the
 * spool full, the reader waits for the consumer to make room, and the
 * consumer takes the oldest records out first, rather than lose what was
 * read (a spool kept in memory, without its file, fills at 1 MiB). */
static int spool_in(struct tracer *t, uint32_t kind, const void *rec, size_t size,
		    uint32_t func_id)
{
	int err = spool__put(t->spool, kind, rec, size);

	while (err == -ENOSPC) {
		if (in_reader) {
			if (__atomic_load_n(&t->reader_abandon, __ATOMIC_ACQUIRE))
				break;
			wait_room(t);
		} else if (spool__empty(t->spool) ||
			   spool__take(t->spool, SPOOL_TAKE, from_spool, t) < 0) {
			break;
		}
		err = spool__put(t->spool, kind, rec, size);
	}

	if (err && func_id < t->set->n_funcs) {
		if (!t->spool_lost[2 * func_id] && !t->spool_lost[2 * func_id + 1])
			log_warn("records lost: the spool cannot take them: %s", strerror(-err));
		t->spool_lost[2 * func_id + (kind == SPOOL_CAPTURE)]++;
	}
	return 0;
}

/* A call record, cmon's own copy: to the consumer, or behind the others
 * in the spool. */
static int to_record(struct tracer *t, const struct cmon_call_rec *rec)
{
	if (t->spooling)
		return spool_in(t, SPOOL_CALL, rec, sizeof(*rec), rec->func_id);
	return t->opts.on_record(t->opts.ctx, rec);
}

static int to_capture(void *ctx, const struct cmon_capture_rec *rec, size_t size)
{
	struct tracer *t = ctx;

	if (t->spooling)
		return spool_in(t, SPOOL_CAPTURE, rec, size, rec->func_id);
	return t->opts.on_capture(t->opts.ctx, rec, size);
}

static int from_spool(void *ctx, uint32_t kind, const void *rec, size_t size)
{
	struct tracer *t = ctx;

	if (kind == SPOOL_CAPTURE)
		return t->opts.on_capture(t->opts.ctx, rec, size);
	return t->opts.on_record(t->opts.ctx, rec);
}

static int handle(struct tracer *t, void *data, size_t size);
static bool reader_start(struct tracer *t);
static void reader_stop(struct tracer *t, bool drain);

/* A call record to the callback as cmon's own copy: the ring buffer is
 * shared with the kernel (and a window's record is reused), and comm is
 * known to end. */
static int hand_on(struct tracer *t, const struct cmon_call_rec *rec)
{
	struct cmon_call_rec copy;

	memcpy(&copy, rec, sizeof(copy));
	copy.comm[CMON_COMM_LEN - 1] = 0;
	return to_record(t, &copy);
}

/* libbpf counts a record as consumed before its callback runs, so the
 * record that reaches the budget is handled, then the drain stops. */
static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	int err;

	if (slow_consumer_us) {
		const struct cmon_batch *b = data;
		unsigned n = size >= sizeof(*b) && b->type == CMON_REC_BATCH ? b->n : 1;

		usleep(slow_consumer_us * n);
	}
	err = handle(t, data, size);

	if (err < 0)
		return err;
	t->handled++;
	/* The ring's bytes for it: the 8-byte header, rounded up to 8. */
	if (t->read_left >= 0 && (t->read_left -= (long long)((size + 15) & ~(size_t)7)) <= 0) {
		t->read_all = true;
		return -EAGAIN;
	}
	/* The budget spent: stop, READ_ALL left false. */
	return t->budget < 0 || t->handled < t->budget ? 0 : -EAGAIN;
}

/* Bytes in the ring buffer now: everything reserved so far lies before the
 * producer position (the kernel ABI's first two pages of the map). */
static long long ring_fill(const struct tracer *t)
{
	const volatile unsigned long *cons = t->rb_pos;
	const volatile unsigned long *prod =
		(const volatile unsigned long *)((const char *)t->rb_pos + t->page_size);
	unsigned long c = __atomic_load_n(cons, __ATOMIC_ACQUIRE);

	return (long long)(__atomic_load_n(prod, __ATOMIC_ACQUIRE) - c);
}

static int handle(struct tracer *t, void *data, size_t size)
{
	const __u32 *type = data;

	if (size >= sizeof(struct cmon_capture_rec) && *type == CMON_REC_CAPTURE) {
		const struct cmon_capture_rec *cap = data;

		if (!t->opts.on_capture || cap->len > size - sizeof(*cap))
			return 0;
		return to_capture(t, cap, size);
	}
	if ((*type == CMON_REC_PY && size >= CMON_PY_REC_SIZE(0)) ||
	    (*type == CMON_REC_PY_CODE && size >= sizeof(struct cmon_py_code_rec)) ||
	    (*type == CMON_REC_PY_ARGS && size >= CMON_PY_ARGS_REC_SIZE(0)) ||
	    (*type == CMON_REC_PY_FUNC && size >= sizeof(struct cmon_py_func_rec)) ||
	    (*type == CMON_REC_PY_EXIT && size >= sizeof(struct cmon_py_exit_rec)) ||
	    (*type == CMON_REC_PY_EXEC && size >= sizeof(struct cmon_py_exec_rec)))
		return t->opts.on_py ? t->opts.on_py(t->opts.ctx, *type, data, size) : 0;
	if (size >= sizeof(struct cmon_stack_rec) && *type == CMON_REC_STACK)
		return t->opts.on_stack ? t->opts.on_stack(t->opts.ctx, data) : 0;
	if (*type == CMON_REC_CAPTURE_BATCH && size >= offsetof(struct cmon_capture_batch, data))
		return t->opts.on_capture ? capture_staging__batch(data, size, to_capture, t) : 0;
	if (size >= sizeof(struct cmon_batch) && *type == CMON_REC_BATCH)
		return t->stage ? staging__add_batch(t->stage, data) : 0;
	if (size < sizeof(struct cmon_call_rec) || *type != CMON_REC_CALL)
		return 0;
	if (t->stage)
		return staging__add(t->stage, data);
	return hand_on(t, data);
}

/* A followed process forked (or a thread exec'd: child == parent): the
 * poll woken, and the fork told to whoever asked (opts.on_fork). */
static int on_fork(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	const struct cmon_fork_rec *rec = data;

	__atomic_store_n(&t->forked, true, __ATOMIC_RELEASE);
	if (t->opts.on_fork && size >= sizeof(*rec) && rec->child != rec->parent)
		t->opts.on_fork(t->opts.ctx, (pid_t)rec->child, (pid_t)rec->parent);
	return 0;
}

void tracer__read_forks(struct tracer *t)
{
	if (t->fork_rb)
		ring_buffer__consume(t->fork_rb);
}

/* Copy the fetch plans into the kernel (after load: the map exists). */
static int load_plans(struct tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.fetch_plans);

	for (__u32 k = 0; k < 2 * t->set->n_funcs; k++) {
		if (!t->opts.plans[k].n)
			continue;
		if (bpf_map_update_elem(fd, &k, &t->opts.plans[k], BPF_ANY))
			return -errno;
	}
	return 0;
}

static size_t round_pow2(size_t v)
{
	size_t p = 4096;

	while (p < v)
		p <<= 1;
	return p;
}

/* Open the skeleton, configure it from T's options, load (bpf_set__load's
 * callback).  0 or -errno (the skeleton stays in T for tracer__free). */
/* The C functions' programs only when the set has some (--py alone
 * has none): theirs are long verifications too. */
static void bind_c(struct tracer *t)
{
	bool c = false, usdt = false;

	for (size_t i = 0; i < t->set->n_funcs; i++) {
		const struct probe_func *f = &t->set->funcs[i];

		usdt |= f->usdt;
		c |= !f->usdt && !f->python;
	}
	if (!c) {
		bpf_program__set_autoload(t->bs.entry, false);
		bpf_program__set_autoload(t->bs.exit, false);
		t->bs.entry = t->bs.exit = NULL;
	}
	if (!usdt) {
		bpf_program__set_autoload(t->bs.usdt, false);
		t->bs.usdt = NULL;
	}
}

/*
 * The Python programs only with --py: theirs is the longest verification
 * of the set (~0.5 s here, the pattern rows included), paid by every trace
 * otherwise.  Of them, the way in's: an uprobe session each where the
 * kernel has them (a call not selected then gets no return probe), else
 * an entry and a uretprobe.
 */
static void bind_py(struct tracer *t, const struct tracer_opts *opts)
{
	struct trace_bpf *sk = t->skel;
	struct probe_py_progs *py = &t->bs.py;
	struct bpf_program *all[] = { sk->progs.cmon_py_entry, sk->progs.cmon_py_exit,
				      sk->progs.cmon_py_eval, sk->progs.cmon_py_vc_entry,
				      sk->progs.cmon_py_vc, sk->progs.cmon_py_newfunc,
				      sk->progs.cmon_py_start, sk->progs.cmon_py_ret_insn,
				      sk->progs.cmon_py_exec };
	bool vc = opts->py_offsets && opts->py_mode == CMON_PY_MODE_VECTORCALL;
	/* 3.11's shared libpython while following: an entry and a uretprobe
	 * that children inherit (no sessions for those) */
	bool inherit = opts->py_offsets && !vc &&
		       probe_links__py_inherits(t->set, opts->follow, opts->host_wide);
	bool sess = opts->py_offsets && !inherit && uprobe_session__supported();

	memset(py, 0, sizeof(*py));
	if (opts->py_offsets) {
		py->start = sk->progs.cmon_py_start;
		py->exec = sk->progs.cmon_py_exec;
		if (vc) {
			py->newfunc = sk->progs.cmon_py_newfunc;
			if (sess)
				py->vc_sess = sk->progs.cmon_py_vc;
			else
				py->vc_entry = sk->progs.cmon_py_vc_entry;
		} else if (sess) {
			py->eval_sess = sk->progs.cmon_py_eval;
		} else {
			py->eval_entry = sk->progs.cmon_py_entry;
		}
		if (!sess)
			py->exit = sk->progs.cmon_py_exit;
		py->inherit = inherit;
		py->ret_insn = inherit ? sk->progs.cmon_py_ret_insn : NULL;
		if (inherit)
			log_info("--py: the evaluator's probes are inherited by the children "
				 "(tracefs uprobe events)");
	}
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct bpf_program *p = all[i];

		if (p != py->start && p != py->newfunc && p != py->vc_sess && p != py->vc_entry &&
		    p != py->eval_sess && p != py->eval_entry && p != py->exit && p != py->ret_insn &&
		    p != py->exec)
			bpf_program__set_autoload(p, false);
	}
}

static int open_and_load(void *ctx, bool mem_cast)
{
	struct tracer *t = ctx;
	const struct tracer_opts *opts = &t->opts;
	const struct probe_set *set = t->set;
	struct bpf_set *bs = &t->bs;
	struct bpf_targ targ;
	/* Sleepable needs the kernel to allow it, and the user dynptr copies
	 * (the chunked reads of older kernels share a per-CPU buffer). */
	bool sleepable = opts->plans && opts->sleepable && host__have(HOST_SLEEPABLE) &&
			 host__have(HOST_READ_DYNPTR);

	if (opts->plans && opts->sleepable && !sleepable)
		host__note(host__have(HOST_SLEEPABLE) ? HOST_READ_DYNPTR : HOST_SLEEPABLE,
			   LOG_INFO, NULL);
	t->skel = trace_bpf__open();
	if (!t->skel)
		return -errno;
	bs->entry = t->skel->progs.cmon_entry;
	bs->exit = t->skel->progs.cmon_exit;
	bs->usdt = t->skel->progs.cmon_usdt;
	bind_py(t, opts);
	bind_c(t);
	bs->thread_exit = t->skel->progs.cmon_thread_exit;
	bs->migrate = t->skel->progs.cmon_migrate;
	BPF_SET_SHARED(bs, t->skel);
	bpf_set__targ(bs, mem_cast, &targ);
	BPF_SET_RODATA(t->skel->rodata, &targ);
	t->skel->rodata->targ_entry_only = opts->entry_only;
	for (size_t i = 0; i < set->n_funcs; i++)
		if (set->funcs[i].never_returns)
			t->skel->rodata->targ_never_returns = true;
	t->skel->rodata->targ_staging = staging_wanted(opts);
	if (!staging_wanted(opts))
		bpf_program__set_autoload(t->skel->progs.cmon_migrate, false);
	bpf_map__set_max_entries(t->skel->maps.staging,
				 staging_wanted(opts) ? (__u32)bs->ncpus : 1);
	t->skel->rodata->targ_focus = opts->focus;
	t->skel->rodata->targ_stack = opts->on_stack != NULL;
	t->skel->rodata->targ_line_regs = opts->line_regs;
	t->skel->rodata->targ_max_depth = opts->max_depth;
	t->skel->rodata->targ_break_count = opts->break_count;
	if (opts->py_offsets)
		memcpy((void *)&t->skel->rodata->targ_py, opts->py_offsets, sizeof(*opts->py_offsets));
	t->skel->rodata->targ_py_test_counts_unread = py_counts_unread;
	if (py_procs_max)
		bpf_map__set_max_entries(t->skel->maps.py_procs, py_procs_max);
	if (opts->n_py_pats && opts->n_py_pats <= CMON_PY_PAT_MAX) {
		memcpy((void *)t->skel->rodata->targ_py_pats, opts->py_pats,
		       opts->n_py_pats * sizeof(*opts->py_pats));
		t->skel->rodata->targ_py_pats_n = opts->n_py_pats;
	}
	/* Wake the consumer only past an eighth full: it polls on a timer
	 * anyway, and on a busy machine it needs the lead time to be
	 * scheduled before the buffer fills (two threads calling flat out
	 * fill 4 MiB in ~15 ms). */
	t->skel->rodata->targ_wakeup_bytes = t->rb_bytes / 8;
	t->skel->rodata->targ_block_ns = opts->block_ns;
	bpf_map__set_max_entries(t->skel->maps.events, (__u32)t->rb_bytes);
	bpf_map__set_max_entries(t->skel->maps.func_stats,
				 set->n_funcs ? (__u32)set->n_funcs : 1);
	t->skel->rodata->targ_capture = opts->plans != NULL;
	t->skel->rodata->targ_read_dynptr = host__have(HOST_READ_DYNPTR);
	t->skel->rodata->targ_copy_str = host__have(HOST_COPY_STR);
	t->skel->rodata->targ_sleepable = sleepable;
	t->skel->rodata->targ_capture_staging = opts->plans && staging_wanted(opts);
	bpf_map__set_max_entries(t->skel->maps.capture_staging,
				 opts->plans && staging_wanted(opts) ? (__u32)bs->ncpus : 1);
	bpf_map__set_max_entries(t->skel->maps.fetch_plans,
				 set->n_funcs ? 2 * (__u32)set->n_funcs : 1);
	bpf_map__set_max_entries(t->skel->maps.usdt_specs, set->n_funcs ? (__u32)set->n_funcs : 1);
	if (sleepable) {
		/* Sleepable programs may fault in argument pages that are not
		 * resident, where a plain read would come back empty. */
		bpf_program__set_flags(t->skel->progs.cmon_entry, BPF_F_SLEEPABLE);
		bpf_program__set_flags(t->skel->progs.cmon_exit, BPF_F_SLEEPABLE);
		bpf_program__set_flags(t->skel->progs.cmon_usdt, BPF_F_SLEEPABLE);
	}
	bpf_set__prepare(bs);
	return trace_bpf__load(t->skel);
}

static void destroy_skel(void *ctx)
{
	struct tracer *t = ctx;

	trace_bpf__destroy(t->skel);
	t->skel = NULL;
}


/* The entry program with all three of a function that never returns (its
 * frame path), arguments read from memory (a fetch plan) and --if or
 * --on-change programs is past the verifier's million instructions
 * (measured, either: E2BIG after 5 minutes here; any two of them load).  Said at
 * once, in one line, instead.  -E2BIG, or 0. */
static int check_fits(const struct probe_set *set, const struct tracer_opts *o)
{
	const char *never = NULL, *typed = NULL, *cond = NULL;

	for (size_t i = 0; i < set->n_funcs; i++) {
		if (set->funcs[i].never_returns && !never)
			never = set->funcs[i].name;
		if (o->plans && (o->plans[2 * i].n || o->plans[2 * i + 1].n) && !typed)
			typed = set->funcs[i].name;
		if (o->exprs && (o->exprs[2 * i].n || o->exprs[2 * i + 1].n) && !cond)
			cond = set->funcs[i].name;
	}
	if (!never || !typed || !cond || o->entry_only)
		return 0;
	log_error("too large for the kernel's verifier together: %s never returns, %s's "
		  "arguments are read from memory and %s has --if/--on-change (--exclude '%s', "
		  "or trace them in two runs)", never, typed, cond, never);
	return -E2BIG;
}

struct tracer *tracer__new(const struct probe_set *set, const struct tracer_opts *opts)
{
	struct bpf_set_opts bo = {
		.follow = opts->follow,
		.host_wide = opts->host_wide,
		.fork_records = opts->on_fork != NULL,
		.entry_only = opts->entry_only,
		.mem = true,
		.filter_pid = opts->filter_pid,
		.filter_cgroup = opts->filter_cgroup,
		.filter_cgroup_level = opts->filter_cgroup_level,
		.exprs = opts->exprs,
		.duty = opts->duty,
	};
	struct tracer *t;
	int err;

	err = check_fits(set, opts);
	if (err) {
		errno = -err;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->epoll_fd = -1;
	t->set = set;
	t->opts = *opts;
	t->budget = -1;
	bo.filter_comm = t->opts.filter_comm; /* T's copy: it outlives the set */
	err = bpf_set__init(&t->bs, set, &bo);
	if (err)
		goto fail;
	/* Captures make records larger and burstier: give them more room,
	 * unless a spool takes a burst out of the buffer as it comes (the
	 * buffer is mapped twice: its size counts twice in cmon's memory). */
	t->rb_bytes = round_pow2(opts->ringbuf_bytes		? opts->ringbuf_bytes
				 : opts->plans && !spool_wanted(opts) ? 4 * DEFAULT_RINGBUF
								: DEFAULT_RINGBUF);
	err = bpf_set__load(&t->bs, open_and_load, destroy_skel, t);
	if (err)
		goto fail_quiet;
	/* Loading parsed the kernel's BTF (megabytes, now freed): give the
	 * heap back before the ring buffer is mapped. */
	malloc_trim(0);
	err = bpf_set__load_exprs(&t->bs);
	if (!err && opts->plans)
		err = load_plans(t);
	if (!err)
		err = bpf_set__load_usdt_specs(&t->bs, t->skel->maps.usdt_specs);
	if (err)
		goto fail;
	if (staging_wanted(opts)) {
		t->stage = staging__new(bpf_map__fd(t->skel->maps.staging), t->bs.ncpus);
		if (!t->stage) {
			err = -errno;
			goto fail;
		}
		if (opts->plans) {
			t->cap_stage = capture_staging__new(
				bpf_map__fd(t->skel->maps.capture_staging), t->bs.ncpus);
			if (!t->cap_stage) {
				err = -errno;
				goto fail;
			}
		}
	}
	if (spool_wanted(opts)) {
		struct spool_opts so = { .dir = opts->spool_dir, .shared = true,
					 .max_bytes = spool_disk_max };

		t->spool = spool__new(&so);
		t->spool_lost = calloc(2 * (set->n_funcs ? set->n_funcs : 1), sizeof(uint64_t));
		t->spooling = spool_always;
		if (!t->spool || !t->spool_lost) {
			err = -ENOMEM;
			goto fail;
		}
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_ringbuf, t, NULL);
	if (!t->rb) {
		err = -errno;
		goto fail;
	}
	t->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (t->epoll_fd < 0 ||
	    epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(t->rb),
		      &(struct epoll_event){ .events = EPOLLIN })) {
		err = -errno;
		goto fail;
	}
	t->page_size = (size_t)sysconf(_SC_PAGESIZE);
	t->rb_pos = mmap(NULL, 2 * t->page_size, PROT_READ, MAP_SHARED,
			 bpf_map__fd(t->skel->maps.events), 0);
	if (t->rb_pos == MAP_FAILED) {
		t->rb_pos = NULL;
		err = -errno;
		goto fail;
	}
	/* A page: the mapping's unit (the value is one cache line). */
	t->consumer = mmap(NULL, t->page_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			   bpf_map__fd(t->skel->maps.consumer), 0);
	if (t->consumer == MAP_FAILED) {
		t->consumer = NULL;
		err = -errno;
		goto fail;
	}
	t->read_left = -1;
	return t;
fail:
	bpf_setup__failed(false, err);
fail_quiet:
	tracer__free(t);
	errno = -err;
	return NULL;
}

static bool add_fork_buffer(struct tracer *t)
{
	struct epoll_event ev = { .events = EPOLLIN };

	t->fork_rb = ring_buffer__new(bpf_map__fd(t->skel->maps.follow_events), on_fork, t, NULL);
	if (!t->fork_rb)
		return false;
	if (epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(t->fork_rb), &ev)) {
		ring_buffer__free(t->fork_rb);
		t->fork_rb = NULL;
		return false;
	}
	return true;
}

int tracer__attach(struct tracer *t)
{
	int err = bpf_set__attach_lifecycle(&t->bs);

	/* break: stops at entry; a return probe would only cost each call */
	if (t->opts.break_count)
		t->bs.lo.py.exit = NULL;
	/* A fork wakes the poll: the scan after it attaches the child's links.
	 * Its own buffer: a poll stops reading call records part way. */
	if (!err && t->opts.follow && !t->fork_rb && !add_fork_buffer(t))
		log_info("forks will not wake cmon: children's library links wait for the "
			 "next poll");
	if (!err && t->stage && !t->migrate_link) {
		t->migrate_link = bpf_program__attach(t->skel->progs.cmon_migrate);
		if (!t->migrate_link) {
			err = -errno;
			log_error("cannot attach the migration tracepoint: %s", strerror(-err));
		}
	}
	if (!err)
		err = bpf_set__attach_probes(&t->bs);
	if (err)
		return err;
	/* The consumer competes for the CPUs with the threads it drains: at
	 * the same priority, four threads calling flat out on two CPUs fill
	 * the buffer faster than it is read (40 % of the records lost here).
	 * Ahead of them, it reads as fast as they write.  This thread only:
	 * a program launched by cmon was forked before, at its own priority. */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), CONSUMER_NICE))
		log_info("cannot raise the consumer's priority: %s", strerror(errno));
	if (t->spool)
		reader_start(t);
	return 0;
}

size_t tracer__probe_count(const struct tracer *t) { return probe_links__probe_count(t->bs.links); }
unsigned long long tracer__attach_ns(const struct tracer *t) { return probe_links__attach_ns(t->bs.links); }

/* A record of the window: cmon's own already, its comm ended. */
static int on_staged(void *ctx, const struct cmon_call_rec *rec)
{
	return to_record(ctx, rec);
}

/* The spool's oldest records to the consumer, until the ring buffer needs
 * reading again (while the spool has room for it), the slice is over or
 * the spool is empty (FINAL: until it is empty).  0 or the consumer's
 * value (< 0: stop). */
static int work_spool(struct tracer *t, bool final)
{
	uint64_t end = clock__mono_ns() + SPOOL_SLICE_NS;
	long long behind = (long long)(t->rb_bytes / SPOOL_FILL_DIV);
	int err = 0;

	while (!err && !spool__empty(t->spool)) {
		err = spool__take(t->spool, final ? 0 : SPOOL_TAKE, from_spool, t);
		if (final)
			continue;
		if ((!t->reader_on && ring_fill(t) > behind &&
		     spool__has_room(t->spool, t->rb_bytes)) ||
		    clock__mono_ns() >= end)
			break;
		if (t->reader_on) { /* room made: the reader may wait for it */
			pthread_mutex_lock(&t->mu);
			pthread_cond_signal(&t->room);
			pthread_mutex_unlock(&t->mu);
		}
	}
	if (spool__empty(t->spool) && !spool_always && !t->reader_on)
		t->spooling = false;
	return err;
}

/* Is the poll to read the ring buffer?  Behind, the records go to the
 * spool while it has room for a buffer's worth; with none, they are left
 * in the ring buffer, where the programs count what does not fit. */
static bool poll_reads(struct tracer *t)
{
	if (!t->spool)
		return true;
	if (!t->spooling && ring_fill(t) > (long long)(t->rb_bytes / SPOOL_FILL_DIV))
		t->spooling = true;
	return !t->spooling || spool__has_room(t->spool, t->rb_bytes + 2 * t->rb_bytes / 8);
}

/* A poll's reading: wait while the buffer is empty, sweep, read the ring
 * buffer, hand the window on (to the consumer, or into the spool).
 * Records read, or -errno. */
static int read_once(struct tracer *t, int timeout_ms, bool empty)
{
	struct epoll_event ev[4];
	uint64_t cutoff = 0;
	bool caps_all = true;
	int n, err;

	/* Records are submitted without a wakeup.  Only a poll on an empty
	 * buffer waits (for a record, a fork, or the timeout), and only then
	 * may the programs force a wakeup.  The store is sequentially
	 * consistent (a full barrier on x86-64): the kernel's own look at the
	 * buffer comes after it, so a record written meanwhile either is seen
	 * there or sees ASLEEP.  A buffer that holds records is read without
	 * waiting, or asking epoll (both buffers are read below whatever it
	 * says): epoll reports it only after a wakeup, and one filled before
	 * the first poll, read by a consumer that never catches up, would
	 * never send one (each poll waited out its timer, the buffer full). */
	if (empty) {
		__atomic_store_n(&t->consumer->asleep, 1, __ATOMIC_SEQ_CST);
		t->sleeps++;
		n = epoll_wait(t->epoll_fd, ev, 4, timeout_ms);
		__atomic_store_n(&t->consumer->asleep, 0, __ATOMIC_RELAXED);
		if (n < 0 && errno != EINTR)
			return -errno;
	}
	/* Staged records: every CPU's partial batch is taken, then the ring
	 * buffer is read as far as it was filled when the sweep ended (what
	 * was sent before it; what comes after waits a poll, so a poll holds
	 * a buffer's worth at most), then what was written before the sweep
	 * goes out, in order. */
	if (t->stage)
		cutoff = staging__sweep(t->stage, false);
	/* Captures after the call records, before the fill is read: every
	 * capture of a call that goes out is then in hand (capture_staging.h).
	 * A batch held past the wait keeps the window shut this poll. */
	if (t->cap_stage) {
		err = capture_staging__sweep(t->cap_stage, false, to_capture, t,
					     &caps_all);
		if (err)
			return err;
	}
	t->read_left = ring_fill(t);
	t->read_all = t->read_left <= 0;
	t->budget = POLL_BUDGET;
	t->handled = 0;
	n = t->read_all ? 0 : ring_buffer__consume(t->rb);
	t->read_left = -1;
	t->budget = -1;
	if (n < 0 && n != -EAGAIN)
		return n;
	if (t->fork_rb && (n = ring_buffer__consume(t->fork_rb)) < 0)
		return n;
	/* (a failure was said: the process goes on untraced in the new program) */
	bpf_set__reattach(&t->bs);
	/* Cut short by the budget, or stopped at a record still being written
	 * (a sleepable capture faulting a page in): older records may be
	 * behind it, so nothing is let out of the window this time but by its
	 * bound. */
	if (t->stage) {
		err = staging__deliver(t->stage, t->read_all && caps_all ? cutoff : 0, on_staged, t);
		if (err)
			return err;
	}
	return t->handled;
}

/* The reader thread: the ring buffer into the spool until told to stop,
 * waiting for room when the spool has none (the programs then count what
 * does not fit in the ring buffer). */
static void *reader_main(void *arg)
{
	struct tracer *t = arg;

	/* As the consumer always was: ahead of the threads it drains. */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), CONSUMER_NICE))
		log_info("cannot raise the reader's priority: %s", strerror(errno));
	in_reader = true;
	while (!__atomic_load_n(&t->reader_stop, __ATOMIC_ACQUIRE)) {
		uint64_t before;
		int n;

		while (!spool__has_room(t->spool, t->rb_bytes + t->rb_bytes / 4) &&
		       !__atomic_load_n(&t->reader_stop, __ATOMIC_ACQUIRE))
			wait_room(t);
		if (__atomic_load_n(&t->reader_stop, __ATOMIC_ACQUIRE))
			break;
		before = spool__empty(t->spool);
		n = read_once(t, __atomic_load_n(&t->reader_poll_ms, __ATOMIC_RELAXED),
			      ring_fill(t) <= 0);
		if (n < 0 && n != -EAGAIN && n != -EINTR) {
			__atomic_store_n(&t->reader_err, n, __ATOMIC_RELEASE);
			n = 1;
		}
		if (n > 0 || !before || __atomic_load_n(&t->forked, __ATOMIC_ACQUIRE)) {
			pthread_mutex_lock(&t->mu);
			pthread_cond_signal(&t->more);
			pthread_mutex_unlock(&t->mu);
		}
		if (__atomic_load_n(&t->reader_err, __ATOMIC_ACQUIRE))
			break;
	}
	return NULL;
}

/* The reader: up to 10 ms for the consumer to take records from the
 * spool (it signals room). */
static void wait_room(struct tracer *t)
{
	struct timespec ts = clock__wall_in_ms(10);

	pthread_mutex_lock(&t->mu);
	pthread_cond_timedwait(&t->room, &t->mu, &ts);
	pthread_mutex_unlock(&t->mu);
}

/* The reader started, with every signal blocked (they are the main
 * thread's).  False: none (polls read themselves). */
static bool reader_start(struct tracer *t)
{
	sigset_t all, old;
	int err;

	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->more, NULL);
	pthread_cond_init(&t->room, NULL);
	t->spooling = true;
	t->reader_poll_ms = 10; /* until the first poll says */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t->reader, NULL, reader_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		log_info("no reader thread: %s", strerror(err));
		t->spooling = spool_always;
		return false;
	}
	t->reader_on = true;
	return true;
}

/* The reader stopped (before a drain, a flush or the end): the caller's
 * thread reads again.  DRAIN (the consumer still takes records): a read
 * the reader holds that the spool has no room for is given room, the
 * consumer taking the oldest records meanwhile; else (the consumer gone,
 * or failing) what does not fit is dropped, counted. */
static void reader_stop(struct tracer *t, bool drain)
{
	struct timespec ms = { 0, 1000000 };

	if (!t->reader_on)
		return;
	__atomic_store_n(&t->reader_stop, true, __ATOMIC_RELEASE);
	if (!drain)
		__atomic_store_n(&t->reader_abandon, true, __ATOMIC_RELEASE);
	for (;;) {
		pthread_mutex_lock(&t->mu);
		pthread_cond_signal(&t->room);
		pthread_mutex_unlock(&t->mu);
		if (pthread_tryjoin_np(t->reader, NULL) != EBUSY)
			break;
		if (!__atomic_load_n(&t->reader_abandon, __ATOMIC_ACQUIRE) &&
		    spool__take(t->spool, SPOOL_TAKE, from_spool, t) < 0)
			__atomic_store_n(&t->reader_abandon, true, __ATOMIC_RELEASE);
		nanosleep(&ms, NULL);
	}
	t->reader_on = false;
}

/* With the reader: wait up to TIMEOUT_MS for records (or a fork), then
 * take a slice of them. */
static int take_polled(struct tracer *t, int timeout_ms)
{
	int err;

	pthread_mutex_lock(&t->mu);
	if (spool__empty(t->spool) && !__atomic_load_n(&t->reader_err, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&t->forked, __ATOMIC_ACQUIRE)) {
		struct timespec ts = clock__wall_in_ms(timeout_ms);

		pthread_cond_timedwait(&t->more, &t->mu, &ts);
	}
	pthread_mutex_unlock(&t->mu);
	__atomic_store_n(&t->forked, false, __ATOMIC_RELEASE);
	err = __atomic_load_n(&t->reader_err, __ATOMIC_ACQUIRE);
	if (err)
		return err;
	err = work_spool(t, false);
	pthread_mutex_lock(&t->mu);
	pthread_cond_signal(&t->room);
	pthread_mutex_unlock(&t->mu);
	return err;
}

int tracer__poll(struct tracer *t, int timeout_ms)
{
	int n, err;

	if (t->reader_on) {
		/* the reader waits on an empty buffer as this poll would */
		__atomic_store_n(&t->reader_poll_ms, timeout_ms, __ATOMIC_RELAXED);
		return take_polled(t, timeout_ms);
	}
	if (!poll_reads(t))
		return work_spool(t, false);
	n = read_once(t, timeout_ms, ring_fill(t) <= 0 && !t->spooling);
	if (n < 0 || !t->spooling)
		return n;
	err = work_spool(t, false);
	return err ? err : n;
}

int tracer__drain(struct tracer *t)
{
	uint64_t cutoff = UINT64_MAX;
	int n, err;

	reader_stop(t, true);
	t->budget = -1; /* after detaching: what is there is finite */
	/* As a poll does: after the probes are gone nothing is written past
	 * the sweep's start, so everything goes out; the agent also drains
	 * while attached, and then the cutoff keeps a thread's order. */
	if (t->stage)
		cutoff = staging__sweep(t->stage, true) ?: UINT64_MAX;
	if (t->cap_stage) {
		bool all;

		err = capture_staging__sweep(t->cap_stage, true, to_capture, t,
					     &all);
		if (err)
			return err;
	}
	n = ring_buffer__consume(t->rb);
	if (t->stage && n >= 0) {
		err = staging__deliver(t->stage, cutoff, on_staged, t);
		if (err)
			return err;
	}
	if (t->spooling && n >= 0) { /* all of it: nothing is written after */
		err = work_spool(t, true);
		if (err)
			return err;
	}
	return n;
}

/* SV's pending calls, as never-returned records of process PID: those
 * of thread TID, or (TID 0: a coroutine's or goroutine's stack) of the
 * thread each was made on. */
static void flush_stack(struct tracer *t, pid_t pid, pid_t tid, const char *comm,
			const struct cmon_shadow_stack *sv)
{
	for (uint32_t d = sv->depth < CMON_STACK_DEPTH ? sv->depth : CMON_STACK_DEPTH; d > 0; d--) {
		const struct cmon_frame *fr = &sv->frames[d - 1];
		struct cmon_call_rec rec;

		if (fr->flags & CMON_FRAME_QUIET)
			continue; /* no record: --focus only, --max-depth, --if */
		rec = (struct cmon_call_rec){
			.type = CMON_REC_CALL,
			.flags = CMON_CALL_NORETURN,
			.ts_entry_ns = fr->ts,
			.rss_entry = fr->rss,
			.vms_entry = fr->vms,
			.pid = (uint32_t)pid,
			.tid = tid ? (uint32_t)tid : fr->tid,
			.func_id = fr->func_id,
			.depth = d - 1,
		};

		memcpy(rec.args, fr->args, sizeof(rec.args));
		memcpy(rec.comm, comm, sizeof(rec.comm));
		to_record(t, &rec);
	}
}

static int flush_thread(struct tracer *t, pid_t pid, pid_t tid, struct cmon_shadow_stack *sv)
{
	int map_fd = bpf_map__fd(t->skel->maps.stacks);
	char comm[CMON_COMM_LEN];
	int pidfd, err;

	pidfd = (int)syscall(SYS_pidfd_open, tid, tid == pid ? 0 : PIDFD_THREAD);
	if (pidfd < 0)
		return 0; /* gone already: its exit flushed it */
	err = bpf_map_lookup_elem(map_fd, &pidfd, sv);
	close(pidfd);
	if (err || !sv->depth)
		return 0; /* no pending call */
	proc__comm(pid, comm, sizeof(comm));
	flush_stack(t, pid, tid, comm, sv);
	return 0;
}

/* The calls pending on PID's coroutine stacks and goroutines (keyed
 * stacks, not a thread's), let go from the map as they are reported. */
static void flush_keyed(struct tracer *t, pid_t pid, struct cmon_shadow_stack *sv)
{
	int map_fd = bpf_map__fd(t->skel->maps.coro_stacks);
	struct cmon_stack_key key, next, *mine = NULL;
	size_t n = 0, cap = 0;
	char comm[CMON_COMM_LEN];
	void *prev = NULL;

	/* Keys first: deleting while walking would restart the walk. */
	while (!bpf_map_get_next_key(map_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.tgid != (uint32_t)pid)
			continue;
		if (GROW(mine, n, cap, 16))
			break; /* no memory: the rest stay unreported */
		mine[n++] = key;
	}
	proc__comm(pid, comm, sizeof(comm));
	for (size_t i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(map_fd, &mine[i], sv))
			continue;
		flush_stack(t, pid, 0, comm, sv);
		bpf_map_delete_elem(map_fd, &mine[i]);
	}
	free(mine);
}

/* --py: the thread's pending Python calls, as never-returned records. */
static void flush_py_thread(struct tracer *t, pid_t pid, pid_t tid, struct cmon_py_stack *sv)
{
	int map_fd = bpf_map__fd(t->skel->maps.py_stacks);
	struct cmon_py_rec rec;
	char comm[CMON_COMM_LEN];
	int pidfd, err;

	pidfd = (int)syscall(SYS_pidfd_open, tid, tid == pid ? 0 : PIDFD_THREAD);
	if (pidfd < 0)
		return;
	err = bpf_map_lookup_elem(map_fd, &pidfd, sv);
	close(pidfd);
	if (err || !sv->depth)
		return; /* no pending call */
	proc__comm(pid, comm, sizeof(comm));
	for (uint32_t d = sv->depth < CMON_PY_STACK_DEPTH ? sv->depth : CMON_PY_STACK_DEPTH; d > 0;
	     d--) {
		const struct cmon_py_frame *fr = &sv->frames[d - 1];

		memset(&rec, 0, sizeof(rec));
		rec.type = CMON_REC_PY;
		rec.flags = CMON_PY_NORETURN | (fr->flags & CMON_PY_FR_MORE ? CMON_PY_MORE : 0) |
			    (fr->flags & CMON_PY_FR_GENERATOR ? CMON_PY_RESUMED : 0);
		rec.n_params = fr->n_params;
		rec.task = fr->task;
		rec.ts_entry_ns = fr->ts;
		rec.code = fr->code;
		rec.rss_entry = fr->rss;
		rec.vms_entry = fr->vms;
		rec.pid = (uint32_t)pid;
		rec.tid = (uint32_t)tid;
		rec.depth = d - 1;
		rec.n_args = fr->n_args;
		memcpy(rec.args, fr->args, sizeof(rec.args));
		memcpy(rec.comm, comm, sizeof(rec.comm));
		t->opts.on_py(t->opts.ctx, CMON_REC_PY, &rec, sizeof(rec));
	}
}

int tracer__flush_pending(struct tracer *t, pid_t pid)
{
	reader_stop(t, true);
	struct cmon_shadow_stack *sv;
	char path[64];
	struct dirent *de;
	DIR *dir;

	if (t->opts.entry_only || pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	sv = malloc(sizeof(*sv));
	if (!sv) {
		closedir(dir);
		return -ENOMEM;
	}
	while ((de = readdir(dir))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid > 0)
			flush_thread(t, pid, tid, sv);
		if (tid > 0 && t->opts.on_py) {
			struct cmon_py_stack *pv = malloc(sizeof(*pv));

			if (pv)
				flush_py_thread(t, pid, tid, pv);
			free(pv);
		}
	}
	flush_keyed(t, pid, sv);
	free(sv);
	closedir(dir);
	return 0;
}

uint64_t tracer__py_procs_full(const struct tracer *t, unsigned *max)
{
	*max = bpf_map__max_entries(t->skel->maps.py_procs);
	return __atomic_load_n(&t->skel->bss->py_procs_full, __ATOMIC_RELAXED);
}

int tracer__py_maps(const struct tracer *t, int *procs_fd, int *code_fd, int *lost_fd)
{
	*procs_fd = bpf_map__fd(t->skel->maps.py_procs);
	*code_fd = bpf_map__fd(t->skel->maps.py_code);
	*lost_fd = bpf_map__fd(t->skel->maps.py_lost);
	return *procs_fd < 0 || *code_fd < 0 || *lost_fd < 0 ? -EBADF : 0;
}

int tracer__func_stats(const struct tracer *t, unsigned func_id, struct cmon_func_stats *out)
{
	struct cmon_func_stats *per_cpu;
	int err;

	memset(out, 0, sizeof(*out));
	per_cpu = calloc((size_t)t->bs.ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.func_stats), &func_id, per_cpu);
	if (err) {
		err = -errno;
		goto cleanup;
	}
	if (t->spool_lost && func_id < t->set->n_funcs) {
		out->lost_ringbuf += t->spool_lost[2 * func_id];
		out->lost_capture += t->spool_lost[2 * func_id + 1];
	}
	for (int c = 0; c < t->bs.ncpus; c++) {
		out->calls += per_cpu[c].calls;
		out->lost_ringbuf += per_cpu[c].lost_ringbuf;
		out->lost_depth += per_cpu[c].lost_depth;
		out->lost_nomem += per_cpu[c].lost_nomem;
		out->lost_uret += per_cpu[c].lost_uret;
		out->lost_capture += per_cpu[c].lost_capture;
		out->outside_focus += per_cpu[c].outside_focus;
		out->filtered += per_cpu[c].filtered;
		out->unchanged += per_cpu[c].unchanged;
		out->cut += per_cpu[c].cut;
	}
cleanup:
	free(per_cpu);
	return err;
}

bool tracer__spool_stats(const struct tracer *t, struct spool_stats *out)
{
	if (!t->spool)
		return false;
	spool__stats(t->spool, out);
	return true;
}

void tracer__wakeups(const struct tracer *t, uint64_t *wakeups, uint64_t *sleeps)
{
	__u64 *per_cpu = calloc((size_t)t->bs.ncpus, sizeof(*per_cpu));
	__u32 zero = 0;

	*wakeups = 0;
	*sleeps = t->sleeps;
	if (per_cpu && !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.rb_wakeups), &zero, per_cpu))
		for (int c = 0; c < t->bs.ncpus; c++)
			*wakeups += per_cpu[c];
	free(per_cpu);
}

void tracer__room_waits(const struct tracer *t, struct cmon_room_waits *out)
{
	struct cmon_room_waits *per_cpu = calloc((size_t)t->bs.ncpus, sizeof(*per_cpu));
	__u32 zero = 0;

	memset(out, 0, sizeof(*out));
	if (per_cpu && !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.room_waits), &zero, per_cpu))
		for (int c = 0; c < t->bs.ncpus; c++) {
			out->times += per_cpu[c].times;
			out->ns += per_cpu[c].ns;
			out->given_up += per_cpu[c].given_up;
			out->skipped += per_cpu[c].skipped;
		}
	free(per_cpu);
}

void tracer__break_hits(const struct tracer *t, uint64_t *hits, uint64_t *lost)
{
	*hits = __atomic_load_n(&t->skel->bss->break_hits, __ATOMIC_RELAXED);
	*lost = __atomic_load_n(&t->skel->bss->break_lost, __ATOMIC_RELAXED);
}

void tracer__detach_probes(struct tracer *t) { bpf_set__detach_probes(&t->bs); }

struct duty *tracer__duty(struct tracer *t) { return bpf_set__duty(&t->bs); }

int tracer__prog_stats(const struct tracer *t, uint64_t *run_ns, uint64_t *run_cnt)
{
	return bpf_set__prog_stats(&t->bs, run_ns, run_cnt);
}

int tracer__host_prog_stats(const struct tracer *t, struct bpf_prog_run *runs)
{
	return bpf_set__host_prog_stats(&t->bs, runs);
}

struct follow *tracer__follow(const struct tracer *t) { return t->bs.follow; }

void tracer__detach(struct tracer *t)
{
	bpf_link__destroy(t->migrate_link);
	t->migrate_link = NULL;
	bpf_set__detach(&t->bs);
}

void tracer__free(struct tracer *t)
{
	if (!t)
		return;
	reader_stop(t, false);
	bpf_link__destroy(t->migrate_link);
	bpf_set__free(&t->bs);
	ring_buffer__free(t->rb);
	ring_buffer__free(t->fork_rb);
	if (t->epoll_fd >= 0)
		close(t->epoll_fd);
	if (t->rb_pos)
		munmap(t->rb_pos, 2 * t->page_size);
	if (t->consumer)
		munmap(t->consumer, t->page_size);
	staging__free(t->stage);
	capture_staging__free(t->cap_stage);
	spool__free(t->spool);
	free(t->spool_lost);
	trace_bpf__destroy(t->skel);
	free(t);
}
