// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probe_gen.c: a probe's generation: its target and patterns resolved and
 * a profiler (a tracer for `log`, Python's hook for `py:`) attached.
 */
#include "agent/probe_impl.h"
#include "elf/debuginfod.h"
#include "proc/cgroup.h"

/* ---------------------------------------------------------------- generation */

struct ident probe_gen__ident(const char *path)
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

void probe_gen__free(struct probe_gen *g)
{
	if (!g)
		return;
	free(g->ids);
	free(g->share_key);
	free(g->cgroup_rel);
	pytrace__free(g->py); /* its hook restored first */
	pipeline__free(g->pipe);
	free(g->exprs);
	free(g->bfn);
	pyprof__free(g->pp);
	for (size_t i = 0; g->names && i < g->n_names; i++)
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
	g->n_names = s->n_funcs;
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

static int on_call(void *ctx, const struct cmon_call_rec *rec, struct call_record *crp)
{
	struct probe_gen *g = ctx;
	struct agent_probe *p = g->owner;
	struct call_record cr = {}; /* fields the decoder does not set stay empty */

	if (!crp)
		return 0;
	cr = *crp;
	if (p->cgroup_label) {
		cr.cgroup = p->cg_names ? cgroup_names__of(p->cg_names, (pid_t)cr.pid) : NULL;
		if (!cr.cgroup)
			cr.cgroup = p->cgroup_label;
	}
	if (g->bfn && rec->func_id < g->set->n_funcs && g->bfn[rec->func_id].fraction > 0 &&
	    g->bfn[rec->func_id].fraction < 1)
		cr.sampled = g->bfn[rec->func_id].fraction;
	if (p->ch) {
		/* < 0: not taken (memory); > 0: dropped, the sink counts it */
		if (p->ch->ops->write(p->ch, &cr, 0) < 0)
			__atomic_fetch_add(&p->log_errors, 1, __ATOMIC_RELAXED);
	} else if (!p->log || logsink__write(p->log, &cr)) {
		__atomic_fetch_add(&p->log_errors, 1, __ATOMIC_RELAXED);
	}
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
static int on_py_call(void *ctx, const struct cmon_py_rec *rec, struct call_record *cr, int n)
{
	struct probe_gen *g = ctx;

	if (n > 0 && pyprof__add(g->pp, cr))
		__atomic_fetch_add(&g->owner->log_errors, 1, __ATOMIC_RELAXED);
	if (++g->drained % 64 == 0 && clock__mono_ns() >= g->drain_deadline_ns) {
		g->drain_cut = true;
		return -1;
	}
	return 0;
}

/* log and py: the event path attached, its records to the log or
 * Python's sums (the pid, process and cgroup decided in the kernel). */
static int attach_pipeline(struct probe_gen *g, const struct probe_spec *s,
			   const struct cgroup_sel *cg, struct pipeline_opts *pl)
{
	struct tracer_opts *to = &pl->tracer;
	int err = 0;

	pl->ops.call = on_call;
	pl->ops.ctx = g;
	to->filter_pid = s->pid;
	if (s->process)
		snprintf(to->filter_comm, sizeof(to->filter_comm), "%s", s->process);
	to->filter_cgroup = cg->id;
	to->filter_cgroup_level = cg->level;
	to->ringbuf_bytes = 0; /* the default: drained every 100 ms */
	to->exprs = g->exprs;
	/* Under a budget: each function's links apart, to be duty-cycled. */
	to->duty = !s->n_py && g->owner->pool && g->owner->pool->budget > 0;
	if (to->duty) {
		g->bfn = calloc(g->set->n_funcs + 1, sizeof(*g->bfn));
		if (!g->bfn)
			return -ENOMEM;
	}
	g->pipe = pipeline__new(g->set, pl);
	if (!g->pipe)
		err = -errno;
	g->tracer = pipeline__tracer(g->pipe);
	if (!err)
		err = pipeline__attach(g->pipe);
	if (!err) {
		g->n_probes = tracer__probe_count(g->tracer);
		g->attach_ms = (double)tracer__attach_ns(g->tracer) / 1e6;
	}
	return err;
}

/* The spec's function patterns, parsed (one slot spare for the
 * evaluator's); *msg says which one is not a pattern. */
static int parse_patterns(struct probe_gen *g, const struct probe_spec *s, char **msg)
{
	g->patterns = calloc(s->n_funcs + 1, sizeof(*g->patterns));
	if (!g->patterns)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_funcs; i++, g->n_patterns++) {
		int err = funcpattern__parse(s->funcs[i], &g->patterns[i]);

		if (err) {
			if (asprintf(msg, "invalid function pattern '%s'", s->funcs[i]) < 0)
				*msg = NULL;
			return err;
		}
	}
	return 0;
}

/* The interpreter's process: its evaluator, with the Python programs. */
static int add_python(struct probe_gen *g, const struct probe_spec *s, struct resolve_opts *ro)
{
	int err = funcpattern__parse(PY_EVAL_FUNC, &g->patterns[g->n_patterns]);

	if (!err)
		g->n_patterns++;
	g->py = err ? NULL : pytrace__new((const char *const *)s->py, s->n_py, 0, false);
	if (!err && !g->py)
		err = -ENOMEM;
	if (!err)
		err = pytrace__add_process(g->py, s->pid, NULL, false);
	ro->binary = NULL;
	ro->pids = &s->pid;
	ro->n_pids = 1;
	return err;
}

/* The evaluator's function marked in the set, and the Python profile its
 * calls go to. */
static int mark_python(struct probe_gen *g, const struct probe_spec *s, struct pipeline_opts *pl)
{
	long id = pytrace__mark(g->py, g->set, false); /* (no children followed) */
	int err = id < 0 ? (int)id : 0;

	g->py_func = id < 0 ? 0 : (uint32_t)id;
	g->pp = err ? NULL : pyprof__new((uint32_t)g->set->n_funcs, s->per_pid);
	if (!err && !g->pp)
		err = -ENOMEM;
	pl->py = g->py;
	pl->ops.py_call = on_py_call;
	return err;
}

/* Attached by the share of probes with these options on this file
 * (probe_pool__commit): the profiler's options and the key that names
 * the share. */
static int set_share(struct probe_gen *g, const struct probe_spec *s,
		     const struct resolve_opts *ro, const struct cgroup_sel *cgs, uint64_t cg)
{
	struct profiler_opts po = {};
	int err = 0;

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
	po.filter_cgroup_level = cgs->level;
	g->po = po;
	g->ids = calloc(g->set->n_funcs ? g->set->n_funcs : 1, sizeof(*g->ids));
	/* the argument's register, width and sign are the profiler's own */
	/* ... and so is the condition, last: it may hold any byte */
	if (asprintf(&g->share_key, "%s\n%d %d %d %u %d %u %d %llu %s\n%llu:%llu\nif %s",
		     s->target, ro->ret_choice, po.per_pid, po.hist_arg, po.hist_bytes,
		     po.hist_signed, po.max_pids, (int)po.filter_pid,
		     (unsigned long long)po.filter_cgroup, po.filter_comm,
		     (unsigned long long)g->ident.dev, (unsigned long long)g->ident.ino,
		     s->if_expr ? s->if_expr : "") < 0)
		g->share_key = NULL;
	if (!err && (!g->ids || !g->share_key))
		err = -ENOMEM;
	return err;
}

static int build_gen(struct agent_probe *p, struct probe_gen **out, char **msg)
{
	const struct probe_spec *s = p->spec;
	struct resolve_opts ro = {};
	struct pipeline_opts pl = {};
	struct probe_gen *g;
	struct errcap cap;
	struct cgroup_sel cgs = {};
	uint64_t cg = 0;
	int err = 0;

	*out = NULL;
	*msg = NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->owner = p;
	err = parse_patterns(g, s, msg);
	if (err)
		goto cleanup;
	g->ident = probe_gen__ident(s->target);

	probe__errcap_begin(&cap, s->id);
	/* Its processes and those of every cgroup below it (filter.bpf.h). */
	if (s->cgroup) {
		err = cgroup__resolve(s->cgroup, &cgs);
		if (err) {
			*msg = probe__errcap_end(&cap);
			goto cleanup;
		}
		cg = cgs.id;
		g->cgroup_rel = strdup(cgs.rel);
		if (!g->cgroup_rel) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	ro.binary = s->target;
	if (s->n_py) {
		err = add_python(g, s, &ro);
		if (err) {
			*msg = probe__errcap_end(&cap);
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
	if (g->owner->pool && g->owner->pool->budget > 0)
		ro.ret_choice = return_choice__duty_cycled(ro.ret_choice);
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
	if (!err && s->instrument == INSTR_LOG) { /* latencies are the function's own */
		pl.decode = true;
		pl.calib = probe_calib__host();
	}
	if (!err && g->py)
		err = mark_python(g, s, &pl);
	if (!err && (s->instrument == INSTR_LOG || g->py))
		err = attach_pipeline(g, s, &cgs, &pl);
	else if (!err)
		err = set_share(g, s, &ro, &cgs, cg);
	*msg = probe__errcap_end(&cap);
	if (!err) {
		free(*msg);
		*msg = NULL;
	}
cleanup:
	cgroup_sel__clear(&cgs);
	if (err && !*msg)
		*msg = strdup(strerror(-err));
	if (err) {
		probe_gen__free(g);
		return err;
	}
	*out = g;
	return 0;
}

/* Resolve P's spec and attach a new generation.  Slow: no lock held.
 * *MSG gets the reason of a failure (malloc'd).  A stripped file whose
 * DWARF debuginfod is still fetching is resolved untyped (or fails, when
 * the spec needs its types): P is built again when the fetch ends. */
int probe_gen__build(struct agent_probe *p, struct probe_gen **out, char **msg)
{
	unsigned deferred = debuginfod__deferred();
	unsigned gen = debuginfod__generation();
	int err = build_gen(p, out, msg);

	if (!err && (*out)->cgroup_rel && !p->cg_names)
		p->cg_names = cgroup_names__new();
	if (!err && (*out)->cgroup_rel) {
		free(p->cgroup_label);
		p->cgroup_label = strdup((*out)->cgroup_rel);
	}

	p->dwarf_waiting = debuginfod__deferred() != deferred;
	p->dwarf_gen = gen;
	if (err && p->dwarf_waiting && *msg) {
		char *m = NULL;

		if (asprintf(&m, "%s (its debug info is being fetched from debuginfod: tried "
			     "again when it arrives)", *msg) >= 0) {
			free(*msg);
			*msg = m;
		}
	}
	return err;
}
