// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bpf_setup.c: see bpf_setup.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cmon_abi.h"
#include "core/log.h"
#include "elf/usdt.h"
#include "probe/calib.h"
#include "probe/duty.h"
#include "probe/detach.h"
#include "probe/follow.h"
#include "probe/host.h"
#include "probe/resolve.h"
#include "bpf_setup.h"

#define CHANGE_ENTRIES 16384 /* --on-change: (process, function) pairs remembered */

int bpf_setup__ncpus(void)
{
	int n = libbpf_num_possible_cpus();

	if (n <= 0)
		return n ? n : -EINVAL;
	return n > CMON_MAX_CPUS ? -E2BIG : n;
}

void bpf_setup__failed(bool loading, int err)
{
	if (loading)
		log_error("cannot load the BPF programs: %s", strerror(-err));
	else if (err == -E2BIG)
		log_error("more than %d CPUs: not supported", CMON_MAX_CPUS);
	else
		log_error("cannot set the BPF programs up: %s", strerror(-err));
}

int bpf_set__init(struct bpf_set *s, const struct probe_set *set, const struct bpf_set_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->set = set;
	s->o = *o;
	s->ncpus = bpf_setup__ncpus();
	return s->ncpus < 0 ? s->ncpus : 0;
}

/* Latencies are taken net of traced callees' probes (call_cost): with
 * valid figures to price them, and returns to time. */
static bool child_costs(const struct bpf_set *s)
{
	return s->o.callee_costs && s->o.callee_costs->valid && !s->o.entry_only;
}

void bpf_set__targ(const struct bpf_set *s, bool mem_cast, struct bpf_targ *t)
{
	const struct probe_set *set = s->set;

	memset(t, 0, sizeof(*t));
	t->nr_cpus = (uint32_t)s->ncpus;
	t->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	t->mem_cast = mem_cast;
	t->launch_pid = (uint32_t)set->launch_pid;
	t->follow = s->o.follow;
	t->follow_wake = s->o.follow && (s->o.fork_records ||
					  probe_links__child_has_own(set, s->o.host_wide));
	t->filter_pid = s->o.filter_pid > 0 ? (uint32_t)s->o.filter_pid : 0;
	t->self_tgid = (uint32_t)getpid(); /* never traced by itself */
	t->filter_comm = probe_filter__comm(s->o.filter_comm, &t->comm_lo, &t->comm_hi);
	t->filter_cgroup = s->o.filter_cgroup;
	t->filter_cgroup_level = s->o.filter_cgroup_level;
	/* The kernel's dev_t is MAJOR << 20 | MINOR, not glibc's encoding. */
	if (set->binary_mode) {
		t->exe_dev = (uint64_t)major(set->exe_dev) << 20 | minor(set->exe_dev);
		t->exe_ino = set->exe_ino;
	}
	t->stack_switch = set->stack_switch;
	t->keyed_stacks = set->stack_switch || set->go; /* coro_stacks is in use */
	t->expr = s->o.exprs != NULL;
	t->step_lead_ns = probe_calib__step_lead(probe_calib__measured());
	t->child_cost = child_costs(s);
	t->duty = s->o.duty;
}

/* Some function has an --on-change program. */
static bool on_change(const struct bpf_set *s)
{
	for (size_t i = 0; s->o.exprs && i < s->set->n_funcs; i++)
		if (s->o.exprs[2 * i + 1].n)
			return true;
	return false;
}

/* The exec hook (lifecycle.bpf.h): the tracepoint, else fentry at the
 * same point, else the end of the exec; the others not loaded. */
static void choose_exec_hook(struct bpf_set *s)
{
	struct bpf_program *hooks[3] = { s->exec_begin, s->exec_begin_fentry, s->exec_end };
	int pick = host__have(HOST_PREPARE_EXEC) ? 0 : host__have(HOST_EXEC_FENTRY) ? 1 : 2;

	if (pick == 2)
		host__note(HOST_EXEC_FENTRY, LOG_INFO, NULL);
	for (int i = 0; i < 3; i++)
		if (i != pick)
			bpf_program__set_autoload(hooks[i], false);
	s->exec_begin = hooks[pick];
}

void bpf_set__prepare(struct bpf_set *s)
{
	uint32_t n_funcs = s->set->n_funcs ? (uint32_t)s->set->n_funcs : 1;
	struct bpf_program *progs[] = { s->step, s->entry, s->exit, s->usdt, s->py.eval_entry,
					s->py.vc_entry, s->py.exit, s->py.newfunc, s->py.start };
	bool stepped = false;

	for (size_t i = 0; !s->o.entry_only && i < s->set->n_funcs && !stepped; i++)
		stepped = probe_func__step_timed(&s->set->funcs[i]);
	if (s->step && !stepped) { /* nothing to load it for */
		bpf_program__set_autoload(s->step, false);
		progs[0] = s->step = NULL;
	}

	choose_exec_hook(s);
	if (!s->o.follow) /* the map is preallocated: not for nothing (the agent loads many) */
		bpf_map__set_max_entries(s->followed, 1);
	/* The programs' maps take memory only when there are programs: the
	 * LRU map of --on-change is preallocated. */
	bpf_map__set_max_entries(s->expr_progs, s->o.exprs ? 2 * n_funcs : 1);
	bpf_map__set_max_entries(s->change_last, on_change(s) ? CHANGE_ENTRIES : 1);
	bpf_map__set_max_entries(s->ind_sites,
				 s->set->n_ind_sites ? (uint32_t)s->set->n_ind_sites : 1);
	bpf_map__set_max_entries(s->call_cost, child_costs(s) ? n_funcs : 1);
	bpf_map__set_max_entries(s->duty_gen, s->o.duty ? n_funcs : 1);
	bpf_map__set_max_entries(s->duty_calls, s->o.duty ? n_funcs : 1);
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		if (progs[i] && !(s->py.inherit && (progs[i] == s->py.eval_entry ||
						    progs[i] == s->py.exit)))
			probe_links__prepare(progs[i]);
	if (s->py.eval_sess)
		probe_links__prepare_session(s->py.eval_sess);
	if (s->py.vc_sess)
		probe_links__prepare_session(s->py.vc_sess);
	probe_links__prepare_stacks(s->stack_regions, s->coro_stacks, s->stack_made, s->set);
}

int bpf_set__load(struct bpf_set *s, int (*open_load)(void *ctx, bool mem_cast),
		  void (*destroy)(void *ctx), void *ctx)
{
	/* Per-CPU RSS deltas read with bpf_rdonly_cast loads: measured here
	 * (bpf_stats), entry 180 -> 130 ns and exit 230 -> 175 ns per run
	 * against bpf_probe_read_kernel.  A verifier that refuses the cast
	 * gets the helper reads. */
	bool cast = host__have(HOST_RDONLY_CAST);
	int err = open_load(ctx, cast);

	if (err && cast && s->o.mem) {
		log_debug("loading with bpf_probe_read_kernel for RSS (%s)", strerror(-err));
		destroy(ctx);
		err = open_load(ctx, false);
	}
	if (err)
		bpf_setup__failed(true, err);
	return err;
}

/* The offset in struct pt_regs of x86 register encoding REG (0 rax .. 7
 * rdi, 8 r8 .. 15 r15), as USDT arguments name theirs: the programs read
 * both with regs_at (bpf/regs.bpf.h). */
static __u16 pt_regs_off(uint8_t reg)
{
	static const char *const x86[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi",
					     "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
					     "r14", "r15" };
	const char *r = x86[reg & 15];

	return (__u16)usdt__reg_offset(r, strlen(r));
}

int bpf_set__load_exprs(struct bpf_set *s)
{
	int fd = bpf_map__fd(s->expr_progs);

	for (__u32 k = 0; s->o.exprs && k < 2 * s->set->n_funcs; k++) {
		if (!s->o.exprs[k].n)
			continue;
		if (bpf_map_update_elem(fd, &k, &s->o.exprs[k], BPF_ANY))
			return -errno;
	}
	/* Each indirect jump's site: where its target is, the function's
	 * extent (probe_set__number_ind_sites numbered them). */
	fd = bpf_map__fd(s->ind_sites);
	for (size_t i = 0; i < s->set->n_funcs; i++) {
		const struct probe_func *f = &s->set->funcs[i];

		for (size_t k = 0; f->ind_base != UINT32_MAX && k < f->exits.n_ind; k++) {
			const struct ind_jump *j = &f->exits.ind[k];
			struct cmon_ind_site v = { .off = j->off, .size = (__u32)f->size,
						   .disp = j->disp, .mem = j->mem,
						   .reg_off = pt_regs_off(j->reg) };
			__u32 key = f->ind_base + (__u32)k;

			if (f->ret_mode == RETURN_INSN &&
			    bpf_map_update_elem(fd, &key, &v, BPF_ANY))
				return -errno;
		}
	}
	return 0;
}

int bpf_set__load_usdt_specs(struct bpf_set *s, struct bpf_map *specs)
{
	int fd = bpf_map__fd(specs);

	for (size_t i = 0; i < s->set->n_funcs; i++) {
		__u32 key = (__u32)i;

		if (s->set->funcs[i].usdt &&
		    bpf_map_update_elem(fd, &key, &s->set->funcs[i].usdt_spec, BPF_ANY))
			return -errno;
	}
	return 0;
}

int bpf_set__load_call_costs(struct bpf_set *s)
{
	int fd = bpf_map__fd(s->call_cost);

	for (size_t i = 0; child_costs(s) && i < s->set->n_funcs; i++) {
		uint64_t ns = probe_calib__caller_cost(s->o.callee_costs, &s->set->funcs[i]);
		__u32 key = (__u32)i, v = ns > UINT32_MAX ? UINT32_MAX : (__u32)ns;

		if (v && bpf_map_update_elem(fd, &key, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

int bpf_set__attach_lifecycle(struct bpf_set *s)
{
	struct probe_links_opts *lo = &s->lo;
	int err;

	lo->entry_prog = s->entry;
	lo->exit_prog = s->exit;
	lo->usdt_prog = s->usdt;
	lo->stack_made_prog = s->stack_made;
	lo->step_prog = s->step;
	lo->py = s->py;
	lo->entry_only = s->o.entry_only;
	lo->follow = s->o.follow;
	lo->host_wide = s->o.follow && s->o.host_wide;
	lo->per_func = s->o.duty;

	s->exit_link = bpf_program__attach(s->thread_exit);
	if (!s->exit_link) {
		err = -errno;
		log_error("cannot attach the thread-exit tracepoint: %s", strerror(-err));
		return err;
	}
	err = lifecycle__attach(s->exec_begin, s->thread_exec, s->launch_exec, s->set->launch_pid,
				s->exec_links);
	if (!err && s->py.exec) {
		s->py_exec_link = bpf_program__attach(s->py.exec);
		if (!s->py_exec_link) {
			err = -errno;
			log_error("cannot attach the --py exec tracepoint: %s", strerror(-err));
		}
	}
	if (!err && s->o.follow)
		err = follow__start(s->follow_fork, bpf_map__fd(s->followed),
				    bpf_map__fd(s->follow_stats), s->set, lo, &s->fork_link,
				    &s->follow);
	if (err)
		bpf_set__detach(s);
	return err;
}

int bpf_set__attach_probes(struct bpf_set *s)
{
	int err = probe_links__attach(s->set, &s->lo, &s->links);

	if (err)
		bpf_set__detach(s);
	return err;
}

int bpf_set__func_attach(struct bpf_set *s, uint32_t func_id)
{
	__u32 key = func_id;

	if (!s->o.duty || !s->links || func_id >= s->set->n_funcs)
		return -EINVAL;
	if (probe_links__func_attached(s->links, func_id))
		return 0;
	if (!s->gens) {
		s->gens = calloc(s->set->n_funcs, sizeof(*s->gens));
		if (!s->gens)
			return -ENOMEM;
	}
	/* A new window: frames entered in an earlier one are let go. */
	s->gens[func_id]++;
	if (bpf_map_update_elem(bpf_map__fd(s->duty_gen), &key, &s->gens[func_id], BPF_ANY))
		return -errno;
	return probe_links__func_attach(s->links, func_id);
}

void bpf_set__func_detach(struct bpf_set *s, uint32_t func_id)
{
	if (s->links)
		probe_links__func_detach(s->links, func_id);
}

int bpf_set__prog_stats(const struct bpf_set *s, uint64_t *run_ns, uint64_t *run_cnt)
{
	struct bpf_program *progs[] = { s->entry, s->exit, s->step, s->usdt, s->thread_exit };

	*run_ns = *run_cnt = 0;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = progs[i] ? bpf_program__fd(progs[i]) : -1;

		if (fd < 0)
			continue; /* not loaded */
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		*run_ns += info.run_time_ns;
		*run_cnt += info.run_cnt;
	}
	return 0;
}

int bpf_set__host_prog_stats(const struct bpf_set *s, struct bpf_prog_run *runs)
{
	struct bpf_program *progs[] = { s->exec_begin, s->exec_begin_fentry, s->exec_end,
					s->launch_exec, s->thread_exec, s->follow_fork,
					s->migrate };
	int n = 0;

	_Static_assert(sizeof(progs) / sizeof(progs[0]) <= BPF_SET_MAX_HOST_PROGS,
		       "room for every host program");
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = progs[i] ? bpf_program__fd(progs[i]) : -1;
		bool twice = false;

		for (size_t j = 0; j < i; j++)
			twice |= progs[j] == progs[i]; /* exec_begin: one of the three */
		if (fd < 0 || twice)
			continue; /* not loaded */
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		snprintf(runs[n].name, sizeof(runs[n].name), "%s", bpf_program__name(progs[i]));
		runs[n].run_ns = info.run_time_ns;
		runs[n++].run_cnt = info.run_cnt;
	}
	return n;
}

struct duty *bpf_set__duty(struct bpf_set *s)
{
	if (!s->o.duty || !s->links) {
		errno = EINVAL;
		return NULL;
	}
	if (!s->duty)
		s->duty = duty__new(s);
	return s->duty;
}

int bpf_set__reattach(struct bpf_set *s)
{
	int fd = bpf_map__fd(s->thread_execs), err = 0;
	struct cmon_follow_stats st = {};
	__u32 tgid, tid, zero = 0;

	if (!s->links)
		return 0; /* detached: nothing to make again */
	/* Asked after every poll: the map is walked only when the programs
	 * added to it (read before the walk, so an exec during it is seen
	 * at the next call).  Few entries, each deleted once handled. */
	if (!bpf_map_lookup_elem(bpf_map__fd(s->follow_stats), &zero, &st) &&
	    st.thread_execs == s->thread_execs_seen)
		return 0;
	s->thread_execs_seen = st.thread_execs;
	while (!err && !bpf_map_get_next_key(fd, NULL, &tgid)) {
		if (bpf_map_lookup_elem(fd, &tgid, &tid))
			tid = 0;
		bpf_map_delete_elem(fd, &tgid);
		err = follow__reattach(s->follow, (pid_t)tgid); /* 1: a child's, done */
		/* the duty cycler attaches and detaches the same links */
		duty__hold(s->duty);
		err = err ?: probe_links__reattach(s->links, s->set, &s->lo, (pid_t)tgid);
		duty__release(s->duty);
		err = err < 0 ? err : 0;
		log_warn("process %u ran a new program from thread %u (not its main one): its "
			 "probes are attached again; calls the new program made before that "
			 "are not recorded", tgid, tid);
	}
	return err;
}

void bpf_set__detach_probes(struct bpf_set *s)
{
	struct link_closer returns = {};

	duty__stop(s->duty); /* its thread attaches and detaches these links */
	/* No call opens a frame from now on; then every return probe, the
	 * children's too, all together (a close while one of them still
	 * fires can wait for a traced outer function to return:
	 * probe/detach.h); the calls in flight until then are seen
	 * returning, as before. */
	if (s->links && s->entries_closed)
		*s->entries_closed = 1;
	probe_links__take_returns(s->links, &returns);
	follow__take_returns(s->follow, &returns);
	link_closer__close_together(&returns);
	probe_links__free(s->links);
	s->links = NULL;
	follow__detach(s->follow);
}

void bpf_set__detach(struct bpf_set *s)
{
	bpf_set__detach_probes(s);
	bpf_link__destroy(s->exit_link);
	s->exit_link = NULL;
	bpf_link__destroy(s->py_exec_link);
	s->py_exec_link = NULL;
	bpf_link__destroy(s->fork_link);
	s->fork_link = NULL;
	lifecycle__detach(s->exec_links);
}

void bpf_set__free(struct bpf_set *s)
{
	bpf_set__detach(s);
	follow__free(s->follow);
	s->follow = NULL;
	free(s->gens);
	s->gens = NULL;
	duty__free(s->duty);
	s->duty = NULL;
}
