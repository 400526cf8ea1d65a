// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probe.c: one running probe of the agent: resolve its target and
 * patterns, attach a profiler (or a tracer for `log`), read and render its
 * series, carry counts over re-attachments, expire.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "agent/logsink.h"
#include "agent/probe.h"
#include "filter/expr.h"
#include "agg/hist_arg.h"
#include "agg/profiler.h"
#include "core/log.h"
#include "python/cpython.h"
#include "python/pyprof.h"
#include "elf/funcpattern.h"
#include "event/decode.h"
#include "event/tracer.h"
#include "probe/calib.h"
#include "probe/resolve.h"
#include "probe/setunion.h"
#include "core/clock.h"


/* Kernel per-pid slots per function, as a multiple of the labelled ones:
 * room for processes that exited but whose counts the map still holds. */
#define KERNEL_PID_FACTOR 2

/* Longest a log probe's drain runs before the main loop gets a turn. */
#define DRAIN_BUDGET_NS (20 * 1000000ull)

const char *probe_state__name(enum probe_state s)
{
	switch (s) {
	case PROBE_APPLIED:
		return "applied";
	case PROBE_ERROR:
		return "error";
	case PROBE_EXPIRED:
		return "expired";
	}
	return "?";
}

/* ---------------------------------------------------------------- errors */

/*
 * The resolver and the loaders report a problem through log_* and return
 * an errno.  The agent needs the message itself (the probe's state carries
 * it): around an attach, this thread's messages go to a sink that keeps
 * the last error and passes the rest on, named with the probe.
 */
struct errcap {
	const char *probe;
	char *last; /* the last error, malloc'd */
};

static void errcap_line(void *ctx, enum log_level level, const char *text)
{
	struct errcap *c = ctx;

	if (level == LOG_ERROR) {
		/* The one before is passed on: only the last is the probe's. */
		if (c->last)
			fprintf(stderr, "cmon: probe %s: %s\n", c->probe, c->last);
		free(c->last);
		c->last = strdup(text);
		return;
	}
	if (!strncmp(text, "libbpf: ", 8))
		fprintf(stderr, "%s\n", text);
	else
		fprintf(stderr, "cmon: probe %s: %s%s\n", c->probe,
			level == LOG_WARN ? "warning: " : "", text);
}

static void errcap_begin(struct errcap *c, const char *probe)
{
	c->probe = probe;
	c->last = NULL;
	log_set_sink(errcap_line, c);
}

/* Messages to stderr again; the last error (malloc'd), or NULL. */
static char *errcap_end(struct errcap *c)
{
	log_set_sink(NULL, NULL);
	return c->last;
}


static void lock(pthread_mutex_t *m)
{
	if (m)
		pthread_mutex_lock(m);
}

static void unlock(pthread_mutex_t *m)
{
	if (m)
		pthread_mutex_unlock(m);
}

/* ---------------------------------------------------------------- generation */

struct ident {
	bool exists;
	uint64_t dev, ino, size, mtime_ns;
};

static struct ident ident_of(const char *path)
{
	struct ident id = {};
	struct stat st;

	if (stat(path, &st))
		return id;
	id.exists = true;
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	id.size = (uint64_t)st.st_size;
	id.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	return id;
}

struct probe_share;

struct probe_gen {
	struct agent_probe *owner;
	struct funcpattern *patterns;
	size_t n_patterns;
	struct probe_set *set;
	char **names; /* per function: as labelled */
	/* Profiling: the share joined, and where this probe's functions are in
	 * the share's profiler (valid when attached). */
	struct probe_share *share;
	char *share_key;
	struct profiler_opts po;
	uint32_t *ids;
	bool attached;
	bool starting; /* applied when the share is attached */
	bool replacing; /* an earlier generation's counts carried over */
	struct tracer *tracer;
	struct cmon_expr_prog *exprs; /* instrument log: if:, 2 per function */
	struct decoder decoder;
	/* py: Python functions, their records summed here */
	struct pytrace *py;
	struct pyprof *pp;
	uint32_t py_func;
	struct ident ident;
	size_t n_probes;
	double attach_ms;
	uint32_t kernel_max_pids;
	/* Instrument log: the current drain. */
	uint64_t drained, drain_deadline_ns;
	bool drain_cut;
};

/* A share's last read of its profiler, one row per (function, pid). */
struct share_row {
	uint32_t func_id, pid;
	struct series_val v;
};

/* One profiler for the probes of one kind on one file (see probe.h). */
struct probe_share {
	struct probe_pool *pool;
	struct probe_share *next;
	char *key;
	struct profiler_opts opts;
	struct agent_probe **members; /* with a resolved generation */
	size_t n_members, cap_members;
	bool dirty;                   /* members changed: attach again */
	bool rotate;                  /* per_pid map nearly full: start a new one */
	/* Attached now. */
	struct probe_set *set;
	struct profiler *prof;
	size_t n_probes;
	double attach_ms;
	/* The last read, in round EPOCH of the pool, sorted by (func_id, pid). */
	uint64_t epoch;
	struct share_row *rows;
	size_t n_rows, cap_rows;
	uint64_t hits, run_ns, run_cnt;
	bool have_run;
	size_t live_keys;   /* per_pid: (function, pid) entries in the kernel map */
	uint64_t unslotted; /* per_pid: entries the map could not take */
};

struct probe_pool {
	struct probe_share *shares;
	uint64_t epoch;
};

static void gen_free(struct probe_gen *g)
{
	if (!g)
		return;
	free(g->ids);
	free(g->share_key);
	pytrace__free(g->py); /* its hook restored first */
	tracer__free(g->tracer);
	free(g->exprs);
	pyprof__free(g->pp);
	decoder__release(&g->decoder);
	for (size_t i = 0; g->set && g->names && i < g->set->n_funcs; i++)
		free(g->names[i]);
	free(g->names);
	probe_set__free(g->set);
	for (size_t i = 0; g->patterns && i < g->n_patterns; i++)
		funcpattern__clear(&g->patterns[i]);
	free(g->patterns);
	free(g);
}

/* Function labels: the name; "module:name" where two objects have it;
 * "name+0xADDR" where one object has two (static functions). */
static int make_names(struct probe_gen *g)
{
	const struct probe_set *s = g->set;

	g->names = calloc(s->n_funcs ? s->n_funcs : 1, sizeof(*g->names));
	if (!g->names)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_funcs; i++) {
		const struct probe_func *f = &s->funcs[i];
		bool other_obj = false, same_obj = false;
		int n;

		for (size_t j = 0; j < s->n_funcs; j++) {
			if (j == i || strcmp(s->funcs[j].name, f->name))
				continue;
			if (s->funcs[j].object == f->object)
				same_obj = true;
			else
				other_obj = true;
		}
		if (same_obj)
			n = asprintf(&g->names[i], "%s%s%s+0x%llx", other_obj ? s->objects[f->object].module : "",
				     other_obj ? ":" : "", f->name, (unsigned long long)f->addr);
		else if (other_obj)
			n = asprintf(&g->names[i], "%s:%s", s->objects[f->object].module, f->name);
		else
			n = (g->names[i] = strdup(f->name)) ? 0 : -1;
		if (n < 0) {
			g->names[i] = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * A shared library rather than a program: every process mapping it counts,
 * not only those running it.  A program is ET_EXEC, or ET_DYN marked PIE
 * (DF_1_PIE) or, from linkers older than that flag, with an interpreter
 * and no soname.  libc.so.6 has an interpreter (it runs) but a soname.
 */
static bool is_library(const char *path)
{
	bool interp = false, soname = false, pie = false, lib = false;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_type != ET_DYN || eh.e_phentsize != sizeof(ph))
		goto out;
	for (unsigned i = 0; i < eh.e_phnum && i < 256; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			goto out;
		if (ph.p_type == PT_INTERP)
			interp = true;
		if (ph.p_type != PT_DYNAMIC)
			continue;
		for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= ph.p_filesz && off < (1u << 20);
		     off += sizeof(Elf64_Dyn)) {
			Elf64_Dyn d;

			if (pread(fd, &d, sizeof(d), (off_t)(ph.p_offset + off)) != (ssize_t)sizeof(d) ||
			    d.d_tag == DT_NULL)
				break;
			if (d.d_tag == DT_SONAME)
				soname = true;
			if (d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_PIE))
				pie = true;
		}
	}
	lib = !pie && (soname || !interp);
out:
	close(fd);
	return lib;
}

static int cgroup_id(const char *path, uint64_t *id)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*id = st.st_ino; /* cgroup v2: the id is the directory's inode */
	return 0;
}

static int on_record(void *ctx, const struct cmon_call_rec *rec)
{
	struct probe_gen *g = ctx;
	struct agent_probe *p = g->owner;
	struct cmon_call_rec copy;
	struct call_record cr = {}; /* fields the decoder does not set stay empty */

	/* The ring buffer is shared with the kernel: work on a copy. */
	memcpy(&copy, rec, sizeof(copy));
	copy.comm[CMON_COMM_LEN - 1] = 0;
	if (decoder__decode(&g->decoder, &copy, &cr))
		return 0;
	if (!p->log || logsink__write(p->log, &cr))
		__atomic_fetch_add(&p->log_errors, 1, __ATOMIC_RELAXED);
	/* A drain has a time budget: a busy function must not keep the main
	 * loop from signals, reloads and lifespans. */
	if (++g->drained % 64 == 0 && clock__mono_ns() >= g->drain_deadline_ns) {
		g->drain_cut = true;
		return -1;
	}
	return 0;
}

/* py: a Python call summed, or a code object named (the drain's budget as
 * for log records). */
static int on_py(void *ctx, __u32 type, const void *data, size_t size)
{
	struct probe_gen *g = ctx;
	struct cmon_py_rec copy;
	struct call_record cr;

	if (type == CMON_REC_PY_CODE) {
		pytrace__on_code(g->py, data);
		return 0;
	}
	if (pytrace__copy_rec(data, size, &copy))
		return 0;
	if (pytrace__decode(g->py, &copy, 0, &cr) > 0 && pyprof__add(g->pp, &cr))
		__atomic_fetch_add(&g->owner->log_errors, 1, __ATOMIC_RELAXED);
	if (++g->drained % 64 == 0 && clock__mono_ns() >= g->drain_deadline_ns) {
		g->drain_cut = true;
		return -1;
	}
	return 0;
}

/* Resolve P's spec and attach a new generation.  Slow: no lock held.
 * *MSG gets the reason of a failure (malloc'd). */
static int gen_build(struct agent_probe *p, struct probe_gen **out, char **msg)
{
	const struct probe_spec *s = p->spec;
	struct resolve_opts ro = {};
	struct profiler_opts po = {};
	struct tracer_opts to = {};
	struct probe_gen *g;
	struct errcap cap;
	uint64_t cg = 0;
	int err = 0;

	*out = NULL;
	*msg = NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->owner = p;
	g->patterns = calloc(s->n_funcs + 1, sizeof(*g->patterns));
	if (!g->patterns) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < s->n_funcs; i++, g->n_patterns++) {
		err = funcpattern__parse(s->funcs[i], &g->patterns[i]);
		if (err) {
			if (asprintf(msg, "invalid function pattern '%s'", s->funcs[i]) < 0)
				*msg = NULL;
			goto cleanup;
		}
	}
	if (s->cgroup) {
		err = cgroup_id(s->cgroup, &cg);
		if (err) {
			if (asprintf(msg, "cgroup %s: %s", s->cgroup, strerror(-err)) < 0)
				*msg = NULL;
			goto cleanup;
		}
	}
	g->ident = ident_of(s->target);

	errcap_begin(&cap, s->id);
	ro.binary = s->target;
	if (s->n_py) {
		/* The interpreter's process: its evaluator, with the Python programs. */
		err = funcpattern__parse(PY_EVAL_FUNC, &g->patterns[g->n_patterns]);
		if (!err)
			g->n_patterns++;
		g->py = err ? NULL : pytrace__new((const char *const *)s->py, s->n_py, 0);
		if (!err && !g->py)
			err = -ENOMEM;
		if (!err)
			err = pytrace__add_process(g->py, s->pid, NULL, false);
		ro.binary = NULL;
		ro.pids = &s->pid;
		ro.n_pids = 1;
		if (err) {
			*msg = errcap_end(&cap);
			goto cleanup;
		}
	}
	ro.patterns = g->patterns;
	ro.n_patterns = g->n_patterns;
	ro.usdts = (const char *const *)s->usdts;
	ro.n_usdts = s->n_usdts;
	/* Counting and argument histograms need entries only: a return probe
	 * would cost every call a uretprobe for nothing. */
	ro.ret_choice = s->instrument == INSTR_LATENCY || s->instrument == INSTR_LOG ||
				(s->arg_name && !strcmp(s->arg_name, "ret"))
				? RETURN_AUTO
				: RETURN_OFF;
	err = probe_set__resolve(&ro, &g->set);
	if (!err) {
		err = make_names(g);
		if (is_library(s->target))
			g->set->exe_dev = g->set->exe_ino = 0; /* any process mapping it */
	}
	/* if: its names checked against every function now (the share
	 * compiles it again for its union of functions). */
	if (!err && s->if_expr)
		err = expr__compile_run(s->if_expr, NULL, g->set, false, &g->exprs);
	if (!err && s->if_expr)
		expr__set_latency_bias(g->exprs, g->set, probe_calib__host());
	if (!err && s->instrument == INSTR_LOG) /* latencies are the function's own */
		err = decoder__init(&g->decoder, g->set, probe_calib__host());
	if (!err && g->py) {
		g->py_func = pytrace__mark(g->set);
		g->pp = pyprof__new((uint32_t)g->set->n_funcs, s->per_pid);
		if (!g->pp)
			err = -ENOMEM;
		to.py_offsets = pytrace__bpf_offsets();
		to.on_py = on_py;
	}
	if (!err && (s->instrument == INSTR_LOG || g->py)) {
		to.on_record = on_record;
		to.ctx = g;
		/* pid, process and cgroup decided in the kernel, as for metrics. */
		to.filter_pid = s->pid;
		if (s->process)
			snprintf(to.filter_comm, sizeof(to.filter_comm), "%s", s->process);
		to.filter_cgroup = cg;
		to.ringbuf_bytes = 0; /* the default (16 MiB): drained every 100 ms */
		to.exprs = g->exprs;
		g->tracer = tracer__new(g->set, &to);
		if (!g->tracer)
			err = -errno;
		if (!err)
			err = tracer__attach(g->tracer);
		if (!err && g->py) {
			int procs_fd, code_fd;

			err = tracer__py_maps(g->tracer, &procs_fd, &code_fd);
			if (!err)
				err = pytrace__start(g->py, procs_fd, code_fd);
		}
		if (!err) {
			g->n_probes = tracer__probe_count(g->tracer);
			g->attach_ms = (double)tracer__attach_ns(g->tracer) / 1e6;
		}
	} else if (!err) {
		/* Attached by the share of probes with these options on this
		 * file (probe_pool__commit). */
		po.per_pid = s->per_pid;
		po.hist_arg = -1;
		if (s->instrument == INSTR_ARG) {
			/* at the width and sign of its C type, as profile --hist */
			struct hist_arg ha;
			char num[8];

			snprintf(num, sizeof(num), "%d", s->arg);
			err = hist_arg__resolve(g->set, s->arg_name ? s->arg_name : num, "arg", &ha);
			po.hist_arg = ha.reg;
			po.hist_bytes = ha.bytes;
			po.hist_signed = ha.is_signed;
		}
		po.mem = false;
		g->kernel_max_pids = s->per_pid ? s->max_pids * KERNEL_PID_FACTOR : 0;
		po.max_pids = g->kernel_max_pids;
		po.filter_pid = s->pid;
		if (s->process)
			snprintf(po.filter_comm, sizeof(po.filter_comm), "%s", s->process);
		po.filter_cgroup = cg;
		g->po = po;
		g->ids = calloc(g->set->n_funcs ? g->set->n_funcs : 1, sizeof(*g->ids));
		/* the argument's register, width and sign are the profiler's own */
		/* ... and so is the condition, last: it may hold any byte */
		if (asprintf(&g->share_key, "%s\n%d %d %d %u %d %u %d %llu %s\n%llu:%llu\nif %s",
			     s->target, ro.ret_choice, po.per_pid, po.hist_arg, po.hist_bytes,
			     po.hist_signed, po.max_pids, (int)po.filter_pid,
			     (unsigned long long)po.filter_cgroup, po.filter_comm,
			     (unsigned long long)g->ident.dev, (unsigned long long)g->ident.ino,
			     s->if_expr ? s->if_expr : "") < 0)
			g->share_key = NULL;
		if (!err && (!g->ids || !g->share_key))
			err = -ENOMEM;
	}
	*msg = errcap_end(&cap);
	if (!err) {
		free(*msg);
		*msg = NULL;
	}
cleanup:
	if (err && !*msg)
		*msg = strdup(strerror(-err));
	if (err) {
		gen_free(g);
		return err;
	}
	*out = g;
	return 0;
}

/* ---------------------------------------------------------------- probe */

struct agent_probe *agent_probe__new(const struct probe_spec *spec, struct probe_pool *pool)
{
	struct agent_probe *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pool = pool;
	p->spec = probe_spec__dup(spec);
	if (!p->spec)
		goto fail;
	if (spec->per_pid) {
		p->cap = pid_cap__new(spec->max_pids);
		if (!p->cap)
			goto fail;
	}
	if (spec->instrument != INSTR_LOG) {
		p->fcap = name_cap__new(spec->max_functions ? spec->max_functions
							    : SPEC_DEFAULT_MAX_FUNCTIONS);
		if (!p->fcap)
			goto fail;
	}
	p->state = PROBE_ERROR;
	p->error = strdup(spec->error ? spec->error : "not attached yet");
	if (!p->error)
		goto fail;
	return p;
fail:
	agent_probe__free(p);
	errno = ENOMEM;
	return NULL;
}

static void set_error(struct agent_probe *p, const char *msg)
{
	char *e = strdup(msg ? msg : "unknown error");

	if (e) {
		free(p->error);
		p->error = e;
	}
	p->state = PROBE_ERROR;
}

static void record_ident(struct agent_probe *p, const struct ident *id)
{
	p->have_ident = true;
	p->dev = id->dev;
	p->ino = id->ino;
	p->size = id->size;
	p->mtime_ns = id->mtime_ns;
	p->change_seen = false;
}

/* Read G (detached or not) through P's label rules into T. */
static int gen_read(struct agent_probe *p, struct probe_gen *g, struct series_table *t,
		    struct probe_totals *tot);

/* Add what G counted (when READABLE) to P's carried-over values; the
 * source starts afresh after this.  Under the lock. */
static void fold_read(struct agent_probe *p, struct probe_gen *g, bool readable)
{
	struct probe_totals tot = {};

	if (readable && gen_read(p, g, &p->base, &tot) == 0) {
		p->base_hits += tot.hits;
		p->base_lost += tot.lost;
		p->base_filtered += tot.filtered;
		p->base_run_ns += tot.run_ns;
		p->base_run_cnt += tot.run_cnt;
	}
	series_table__normalize(&p->base);
	if (p->cap)
		pid_cap__forget_routed(p->cap); /* the next map starts empty */
}

/* Fold a log probe's generation's counts into P's carried-over values (G
 * detached first, so they are final).  Under the lock. */
static void fold_gen(struct agent_probe *p, struct probe_gen *g)
{
	if (g->tracer) {
		pytrace__restore(g->py);
		tracer__detach(g->tracer);
		tracer__drain(g->tracer);
		if (p->log)
			logsink__flush(p->log);
	}
	fold_read(p, g, true);
}

/* ---------------------------------------------------------------- shares */

/* Join the share of G's kind (made when there is none).  0 or -ENOMEM. */
static int share_join(struct agent_probe *p, struct probe_gen *g)
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
		sh->next = pool->shares;
		pool->shares = sh;
	}
	if (sh->n_members == sh->cap_members) {
		size_t c = sh->cap_members ? sh->cap_members * 2 : 4;
		struct agent_probe **v = realloc(sh->members, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sh->members = v;
		sh->cap_members = c;
	}
	sh->members[sh->n_members++] = p;
	sh->dirty = true;
	g->share = sh;
	g->attached = false;
	return 0;
}

/* P leaves its share (attached again without it at the next commit). */
static void share_drop(struct probe_share *sh, struct agent_probe *p)
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

	if (sh->n_rows == sh->cap_rows) {
		size_t c = sh->cap_rows ? sh->cap_rows * 2 : 64;
		struct share_row *v = realloc(sh->rows, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sh->rows = v;
		sh->cap_rows = c;
	}
	r = &sh->rows[sh->n_rows++];
	r->func_id = fp->func_id;
	r->pid = fp->pid;
	/* Latencies are the function's own: less the probe's own cost. */
	series_val__from_profile(&r->v, fp, fp->func_id < sh->set->n_funcs ?
				 probe_calib__bias(probe_calib__host(), &sh->set->funcs[fp->func_id]) : 0);
	sh->hits += r->v.calls;
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
static int share_refresh(struct probe_share *sh, bool force)
{
	int err;

	if (!sh->prof)
		return -ENODEV;
	if (!force && sh->epoch == sh->pool->epoch && sh->epoch)
		return 0;
	sh->n_rows = 0;
	sh->hits = sh->live_keys = sh->unslotted = 0;
	err = profiler__read(sh->prof, on_share_profile, sh);
	if (err) {
		sh->n_rows = 0;
		sh->epoch = 0;
		return err;
	}
	qsort(sh->rows, sh->n_rows, sizeof(*sh->rows), row_cmp);
	sh->have_run = !profiler__prog_stats(sh->prof, &sh->run_ns, &sh->run_cnt);
	sh->epoch = sh->pool->epoch;
	return 0;
}

/* Fold P's counts in its share's profiler into its carried-over values (a
 * detached profiler's are final), read now unless the caller just did
 * (REFRESH false).  Under the lock. */
static void share_fold(struct agent_probe *p, struct probe_gen *g, bool refresh)
{
	if (!g->attached || !g->share->prof)
		return;
	fold_read(p, g, !share_refresh(g->share, refresh));
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
	free(sh->key);
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
		       struct profiler **prof, char **msg)
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
	errcap_begin(&cap, sh->members[0]->spec->id);
	{
		/* One condition per share (it is in the key): for the union. */
		struct profiler_opts po = sh->opts;
		struct cmon_expr_prog *exprs = NULL;

		err = expr__compile_run(sh->members[0]->spec->if_expr, NULL, *set, false, &exprs);
		expr__set_latency_bias(exprs, *set, probe_calib__host()); /* as its series */
		po.exprs = exprs;
		if (!err) {
			*prof = profiler__new(*set, &po);
			if (!*prof)
				err = -errno;
		}
		free(exprs);
	}
	if (!err)
		err = profiler__attach(*prof);
	*msg = errcap_end(&cap);
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

		set_error(p, msg);
		p->gen = NULL;
		gen_free(g);
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
		uint32_t **ids = NULL;
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
				err = share_build(sh, ids, &set, &prof, &msg);
		}
		lock(m);
		/* The old profiler's counts, final, go to each member's base. */
		if (sh->prof) {
			profiler__detach(sh->prof);
			share_refresh(sh, true); /* once for all */
			for (size_t k = 0; k < n; k++)
				share_fold(sh->members[k], sh->members[k]->gen, false);
		}
		old_prof = sh->prof;
		old_set = sh->set;
		sh->prof = prof;
		sh->set = set;
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
		unlock(m);
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

int agent_probe__start(struct agent_probe *p, pthread_mutex_t *m)
{
	const struct probe_spec *s = p->spec;
	struct probe_gen *g = NULL;
	struct ident id;
	char *msg = NULL;
	int err;

	if (s->error) {
		lock(m);
		set_error(p, s->error);
		unlock(m);
		log_warn("probe %s: %s", s->id, s->error);
		return -EINVAL;
	}
	if (s->instrument == INSTR_LOG && !p->log) {
		char *why = NULL;
		struct logsink *ls = logsink__open(s->log_path, s->log_max_bytes, s->log_keep, &why);

		err = ls ? 0 : -errno;
		lock(m);
		p->log = ls;
		unlock(m);
		if (err) {
			if (asprintf(&msg, "log %s: %s", s->log_path, why ? why : strerror(-err)) < 0)
				msg = NULL;
			free(why);
			lock(m);
			set_error(p, msg);
			unlock(m);
			log_warn("probe %s: %s", s->id, p->error);
			free(msg);
			return err;
		}
	}
	id = ident_of(s->target);
	err = gen_build(p, &g, &msg);
	lock(m);
	record_ident(p, g ? &g->ident : &id);
	if (!err && g->share_key) {
		/* Applied when its share is attached (probe_pool__commit). */
		g->starting = true;
		p->gen = g;
		err = share_join(p, g);
		if (err) {
			p->gen = NULL;
			gen_free(g);
			g = NULL;
			set_error(p, strerror(-err));
		}
		unlock(m);
		free(msg);
		return err;
	}
	if (err) {
		set_error(p, msg);
	} else {
		p->gen = g;
		p->state = PROBE_APPLIED;
		free(p->error);
		p->error = NULL;
		p->applied_at = clock__wall_s();
		p->expires_ms = s->lifespan_ms ? clock__mono_ms() + s->lifespan_ms : 0;
	}
	unlock(m);
	if (err)
		log_warn("probe %s: not applied: %s", s->id, msg ? msg : strerror(-err));
	else
		log_info("probe %s: applied: %zu function%s, %zu probe%s attached in %.1f ms%s",
			 s->id, g->set->n_funcs, g->set->n_funcs == 1 ? "" : "s", g->n_probes,
			 g->n_probes == 1 ? "" : "s", g->attach_ms,
			 s->lifespan_ms ? " (with a lifespan)" : "");
	free(msg);
	return err;
}

/* Re-resolve and re-attach an applied probe (a replaced binary, a full
 * per-pid map), carrying its counts over. */
static void reattach(struct agent_probe *p, pthread_mutex_t *m, const char *why)
{
	struct probe_gen *g = NULL, *old;
	char *msg = NULL;
	int err;

	log_info("probe %s: %s: attaching again", p->spec->id, why);
	err = gen_build(p, &g, &msg);
	lock(m);
	old = p->gen;
	if (old && old->share) {
		share_fold(p, old, true);
		share_drop(old->share, p);
	} else if (old) {
		fold_gen(p, old);
	}
	p->gen = g;
	/* Counted when attached: a shared generation at the next commit. */
	if (g && g->share_key)
		g->replacing = true;
	else
		p->reattached++;
	if (g && g->share_key && share_join(p, g)) {
		p->gen = NULL;
		gen_free(g);
		g = NULL;
		err = -ENOMEM;
	}
	if (g)
		record_ident(p, &g->ident);
	else
		set_error(p, msg ? msg : strerror(-err));
	unlock(m);
	gen_free(old);
	if (err)
		log_warn("probe %s: after %s: %s", p->spec->id, why, msg ? msg : strerror(-err));
	free(msg);
}

bool agent_probe__check_target(struct agent_probe *p, pthread_mutex_t *m)
{
	struct ident id;

	if (p->state == PROBE_EXPIRED || p->spec->error)
		return false;
	id = ident_of(p->spec->target);
	/* Missing (mid-upgrade, or uninstalled): keep what is attached. */
	if (!id.exists)
		return false;
	if (p->have_ident && id.dev == p->dev && id.ino == p->ino && id.size == p->size &&
	    id.mtime_ns == p->mtime_ns) {
		p->change_seen = false;
		return false;
	}
	/* Act on a change once it is stable: a file being written in place
	 * changes size and mtime from one check to the next. */
	if (!p->change_seen || id.dev != p->seen_dev || id.ino != p->seen_ino ||
	    id.size != p->seen_size || id.mtime_ns != p->seen_mtime_ns) {
		p->change_seen = true;
		p->seen_dev = id.dev;
		p->seen_ino = id.ino;
		p->seen_size = id.size;
		p->seen_mtime_ns = id.mtime_ns;
		return false;
	}
	p->change_seen = false;
	if (p->state == PROBE_ERROR) {
		log_info("probe %s: %s changed: trying again", p->spec->id, p->spec->target);
		agent_probe__start(p, m);
	} else {
		reattach(p, m, "the target was replaced");
	}
	return true;
}

void agent_probe__expire(struct agent_probe *p)
{
	struct probe_gen *g = p->gen;

	if (g && g->share) {
		share_fold(p, g, true);
		share_drop(g->share, p);
	} else if (g) {
		fold_gen(p, g);
	}
	p->gen = NULL;
	p->state = PROBE_EXPIRED;
	p->expired_at = clock__wall_s();
	p->expires_ms = 0;
	if (p->log)
		logsink__flush(p->log);
	/* The BPF objects are freed here, under the caller's lock: detaching
	 * uprobe_multi links is quick. */
	gen_free(g);
}

static bool proc_alive(void *ctx, uint32_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	return !stat(path, &st);
}

void agent_probe__tick(struct agent_probe *p, uint64_t now_ms, pthread_mutex_t *m)
{
	if (p->state == PROBE_APPLIED && p->expires_ms && now_ms >= p->expires_ms) {
		lock(m);
		agent_probe__expire(p);
		unlock(m);
		log_info("probe %s: lifespan over: detached (its metrics stay)", p->spec->id);
		return;
	}
	if (!p->cap)
		return;
	lock(m);
	{
		uint32_t freed[64];
		size_t n = pid_cap__sweep(p->cap, proc_alive, NULL, freed, 64);

		/* An exited process's label goes; its counts join "other". */
		for (size_t i = 0; i < n; i++)
			series_table__relabel(&p->base, freed[i], SERIES_PID_OTHER);
		if (n)
			series_table__normalize(&p->base);
		if (p->gen && p->gen->share && p->gen->attached) {
			struct probe_share *sh = p->gen->share;
			uint64_t cap = (uint64_t)sh->opts.max_pids * sh->set->n_funcs;

			/* The kernel map never forgets a process: start a new
			 * one before it is full (the next commit). */
			if (!share_refresh(sh, false) &&
			    (sh->unslotted || sh->live_keys * 4 >= cap * 3)) {
				if (!sh->rotate)
					log_info("probe %s: the per-process map is nearly full: "
						 "attaching again", p->spec->id);
				sh->rotate = true;
			}
		}
	}
	unlock(m);
}

int agent_probe__drain(struct agent_probe *p, bool *more)
{
	struct probe_gen *g = p->gen;
	int n;

	*more = false;
	if (!g || !g->tracer)
		return 0;
	if (g->py)
		pytrace__tick(g->py);
	g->drained = 0;
	g->drain_cut = false;
	g->drain_deadline_ns = clock__mono_ns() + DRAIN_BUDGET_NS;
	n = tracer__drain(g->tracer);
	if (p->log)
		logsink__flush(p->log);
	if (g->drain_cut) {
		*more = true;
		return (int)g->drained;
	}
	return n;
}

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
	rc->tot->hits += v->calls;
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

	series_val__from_profile(&v, fp, 0);
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

static int gen_read(struct agent_probe *p, struct probe_gen *g, struct series_table *t,
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
				tot->lost += st.lost_ringbuf + st.lost_depth + st.lost_nomem;
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
			tot->lost += st.lost_ringbuf + st.lost_depth + st.lost_nomem;
			tot->filtered += st.filtered;
		}
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
	err = share_refresh(g->share, false);
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
	}
	return 0;
}

int agent_probe__read(struct agent_probe *p, struct series_table *out, struct probe_totals *tot)
{
	int err = 0;

	memset(tot, 0, sizeof(*tot));
	err = series_table__merge(out, &p->base);
	if (!err && p->gen) {
		err = gen_read(p, p->gen, out, tot);
		tot->probes = p->gen->n_probes;
	}
	series_table__normalize(out);
	tot->hits += p->base_hits;
	tot->lost += p->base_lost;
	tot->filtered += p->base_filtered;
	tot->run_ns += p->base_run_ns;
	tot->run_cnt += p->base_run_cnt;
	if (p->log)
		tot->records = logsink__records(p->log);
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
	labels = calloc(3 + s->n_labels, sizeof(*labels));
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

void agent_probe__free(struct agent_probe *p)
{
	if (!p)
		return;
	if (p->gen && p->gen->share)
		share_drop(p->gen->share, p);
	gen_free(p->gen);
	logsink__close(p->log);
	pid_cap__free(p->cap);
	name_cap__free(p->fcap);
	series_table__clear(&p->base);
	probe_spec__free(p->spec);
	free(p->error);
	free(p);
}
