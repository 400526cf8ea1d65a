// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <fcntl.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/log.h"
#include "probe/attach.h"
#include "tracer.h"
#include "trace.skel.h"

#define DEFAULT_RINGBUF (16u << 20)

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* Mirrors struct shadow_stack in trace.bpf.c (read back at the end). */
struct frame_view {
	uint64_t slot, ts, args[CMON_MAX_ARGS], rss, vms;
	uint32_t func_id, pad;
};
struct stack_view {
	uint32_t depth, pad;
	struct frame_view frames[CMON_STACK_DEPTH];
};

struct tracer {
	struct trace_bpf *skel;
	const struct probe_set *set;
	struct ring_buffer *rb;
	struct bpf_link *exit_link; /* thread-exit tracepoint */
	int *links;
	size_t n_links, cap_links;
	size_t n_probes;
	unsigned long long attach_ns;
	int ncpus;
	struct tracer_opts opts;
};

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;

	if (size < sizeof(struct cmon_call_rec))
		return 0;
	return t->opts.on_record(t->opts.ctx, data);
}

static size_t round_pow2(size_t v)
{
	size_t p = 4096;

	while (p < v)
		p <<= 1;
	return p;
}

struct tracer *tracer__new(const struct probe_set *set, const struct tracer_opts *opts)
{
	struct tracer *t;
	size_t rb_bytes;
	int err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->set = set;
	t->opts = *opts;
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0 || t->ncpus > CMON_MAX_CPUS) {
		err = t->ncpus <= 0 ? t->ncpus : -E2BIG;
		goto fail;
	}
	t->skel = trace_bpf__open();
	if (!t->skel) {
		err = -errno;
		goto fail;
	}
	rb_bytes = round_pow2(opts->ringbuf_bytes ? opts->ringbuf_bytes : DEFAULT_RINGBUF);
	t->skel->rodata->targ_nr_cpus = (__u32)t->ncpus;
	t->skel->rodata->targ_page_size = (__u64)sysconf(_SC_PAGESIZE);
	t->skel->rodata->targ_entry_only = opts->entry_only;
	/* Wake the consumer only when half full: it polls on a timer anyway. */
	t->skel->rodata->targ_wakeup_bytes = rb_bytes / 2;
	/* The kernel's dev_t is MAJOR << 20 | MINOR, not glibc's encoding. */
	t->skel->rodata->targ_exe_dev =
		set->binary_mode ? ((__u64)major(set->exe_dev) << 20 | minor(set->exe_dev)) : 0;
	t->skel->rodata->targ_exe_ino = set->binary_mode ? set->exe_ino : 0;
	bpf_map__set_max_entries(t->skel->maps.events, (__u32)rb_bytes);
	bpf_map__set_max_entries(t->skel->maps.func_stats,
				 set->n_funcs ? (__u32)set->n_funcs : 1);
	bpf_program__set_expected_attach_type(t->skel->progs.cmon_entry,
					      CMON_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(t->skel->progs.cmon_exit,
					      CMON_BPF_TRACE_UPROBE_MULTI);
	err = trace_bpf__load(t->skel);
	if (err)
		goto fail;
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_ringbuf, t, NULL);
	if (!t->rb) {
		err = -errno;
		goto fail;
	}
	return t;
fail:
	tracer__free(t);
	errno = -err;
	return NULL;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int keep_link(struct tracer *t, int fd)
{
	if (t->n_links == t->cap_links) {
		size_t cap = t->cap_links ? t->cap_links * 2 : 16;
		int *p = realloc(t->links, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->links = p;
		t->cap_links = cap;
	}
	t->links[t->n_links++] = fd;
	return 0;
}

/* Growable parallel arrays of offsets and cookies for one link. */
struct probe_list {
	uint64_t *offsets, *cookies;
	size_t n, cap;
};

static int probe_list__add(struct probe_list *l, uint64_t offset, uint64_t cookie)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		uint64_t *o = realloc(l->offsets, cap * sizeof(*o));
		uint64_t *c;

		if (!o)
			return -ENOMEM;
		l->offsets = o;
		c = realloc(l->cookies, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		l->cookies = c;
		l->cap = cap;
	}
	l->offsets[l->n] = offset;
	l->cookies[l->n] = cookie;
	l->n++;
	return 0;
}

static void probe_list__free(struct probe_list *l)
{
	free(l->offsets);
	free(l->cookies);
}

static uint64_t cookie_of(size_t func_id, enum cmon_exit_kind kind)
{
	return (uint64_t)func_id | ((uint64_t)kind << CMON_COOKIE_KIND_SHIFT);
}

/* The three links of one object in one process: entries, uretprobes, and
 * uprobes on return instructions. */
static int attach_object(struct tracer *t, pid_t pid, size_t obj_idx)
{
	const struct probe_set *s = t->set;
	const struct probe_object *obj = &s->objects[obj_idx];
	struct probe_list entry = {}, uret = {}, insn = {};
	int entry_fd = bpf_program__fd(t->skel->progs.cmon_entry);
	int exit_fd = bpf_program__fd(t->skel->progs.cmon_exit);
	int err = 0, fd;

	for (size_t i = 0; i < s->n_funcs && !err; i++) {
		const struct probe_func *f = &s->funcs[i];
		uint64_t at = f->file_offset + f->entry.skip;

		if (f->object != obj_idx)
			continue;
		err = probe_list__add(&entry, at, cookie_of(i, 0));
		if (err || t->opts.entry_only)
			continue;
		if (f->ret_mode == RETURN_URETPROBE)
			err = probe_list__add(&uret, at, cookie_of(i, CMON_EXIT_URETPROBE));
		for (size_t k = 0; f->ret_mode == RETURN_INSN && k < f->exits.n_ret && !err; k++)
			err = probe_list__add(&insn, f->file_offset + f->exits.ret_offs[k],
					      cookie_of(i, CMON_EXIT_RET_INSN));
		for (size_t k = 0; f->ret_mode == RETURN_INSN && k < f->exits.n_tail && !err; k++)
			err = probe_list__add(&insn, f->file_offset + f->exits.tail_offs[k],
					      cookie_of(i, CMON_EXIT_TAIL_JMP));
	}
	if (err || !entry.n)
		goto cleanup;

	/* Entries first: where an entry and an exit share an address (a
	 * function that is a lone ret), the entry must run first. */
	struct {
		struct probe_list *l;
		int prog_fd;
		bool ret;
	} links[] = { { &entry, entry_fd, false }, { &uret, exit_fd, true }, { &insn, exit_fd, false } };
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		if (!links[i].l->n)
			continue;
		fd = uprobe_multi__attach(links[i].prog_fd, obj->attach_path, links[i].l->offsets,
					  links[i].l->cookies, links[i].l->n, pid, links[i].ret);
		if (fd < 0) {
			err = fd;
			if (err == -ESRCH)
				log_error("process %d exited while cmon was attaching", pid);
			else if (err == -EOPNOTSUPP)
				log_error("this kernel has no uprobe_multi links (Linux 6.6 or "
					  "later is needed)");
			else if (err == -EPERM || err == -EACCES)
				log_error("permission denied attaching to %s: tracing needs root "
					  "or CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN", obj->path);
			else
				log_error("cannot attach %zu probe%s to %s: %s", links[i].l->n,
					  links[i].l->n == 1 ? "" : "s", obj->path, strerror(-err));
			goto cleanup;
		}
		err = keep_link(t, fd);
		if (err) {
			close(fd);
			goto cleanup;
		}
		t->n_probes += links[i].l->n;
	}
cleanup:
	probe_list__free(&entry);
	probe_list__free(&uret);
	probe_list__free(&insn);
	return err;
}

int tracer__attach(struct tracer *t)
{
	unsigned long long start = now_ns();
	int err = 0;

	t->exit_link = bpf_program__attach(t->skel->progs.cmon_thread_exit);
	if (!t->exit_link) {
		err = -errno;
		log_error("cannot attach the thread-exit tracepoint: %s", strerror(-err));
		return err;
	}
	for (size_t ti = 0; ti < t->set->n_targets && !err; ti++) {
		const struct probe_target *tg = &t->set->targets[ti];

		for (size_t k = 0; k < tg->n_objects && !err; k++)
			err = attach_object(t, tg->pid, tg->objects[k]);
	}
	if (err) {
		tracer__detach(t);
		return err;
	}
	t->attach_ns = now_ns() - start;
	return 0;
}

size_t tracer__probe_count(const struct tracer *t) { return t->n_probes; }
unsigned long long tracer__attach_ns(const struct tracer *t) { return t->attach_ns; }

int tracer__poll(struct tracer *t, int timeout_ms)
{
	int n = ring_buffer__poll(t->rb, timeout_ms);

	/* Records are submitted without a wakeup: read whatever is there. */
	if (n >= 0 || n == -EINTR) {
		int m = ring_buffer__consume(t->rb);

		if (m < 0)
			return m;
		return (n > 0 ? n : 0) + m;
	}
	return n;
}

int tracer__drain(struct tracer *t) { return ring_buffer__consume(t->rb); }

static int flush_thread(struct tracer *t, pid_t pid, pid_t tid, struct stack_view *sv)
{
	int map_fd = bpf_map__fd(t->skel->maps.stacks);
	int pidfd, err;

	pidfd = (int)syscall(SYS_pidfd_open, tid, tid == pid ? 0 : PIDFD_THREAD);
	if (pidfd < 0)
		return 0; /* gone already: its exit flushed it */
	err = bpf_map_lookup_elem(map_fd, &pidfd, sv);
	close(pidfd);
	if (err)
		return 0;
	for (uint32_t d = sv->depth < CMON_STACK_DEPTH ? sv->depth : CMON_STACK_DEPTH; d > 0; d--) {
		const struct frame_view *fr = &sv->frames[d - 1];
		struct cmon_call_rec rec = {
			.type = CMON_REC_CALL,
			.flags = CMON_CALL_NORETURN,
			.ts_entry_ns = fr->ts,
			.rss_entry = fr->rss,
			.vms_entry = fr->vms,
			.pid = (uint32_t)pid,
			.tid = (uint32_t)tid,
			.func_id = fr->func_id,
			.depth = d - 1,
		};
		char path[64];
		FILE *f;

		memcpy(rec.args, fr->args, sizeof(rec.args));
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(rec.comm, sizeof(rec.comm), f))
				rec.comm[strcspn(rec.comm, "\n")] = 0;
			fclose(f);
		}
		t->opts.on_record(t->opts.ctx, &rec);
	}
	return 0;
}

int tracer__flush_pending(struct tracer *t, pid_t pid)
{
	struct stack_view *sv;
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
	}
	free(sv);
	closedir(dir);
	return 0;
}

int tracer__func_stats(const struct tracer *t, unsigned func_id, struct cmon_func_stats *out)
{
	struct cmon_func_stats *per_cpu;
	int err;

	memset(out, 0, sizeof(*out));
	per_cpu = calloc((size_t)t->ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.func_stats), &func_id, per_cpu);
	if (err) {
		err = -errno;
		goto cleanup;
	}
	for (int c = 0; c < t->ncpus; c++) {
		out->calls += per_cpu[c].calls;
		out->lost_ringbuf += per_cpu[c].lost_ringbuf;
		out->lost_depth += per_cpu[c].lost_depth;
		out->lost_nomem += per_cpu[c].lost_nomem;
	}
cleanup:
	free(per_cpu);
	return err;
}

void tracer__detach(struct tracer *t)
{
	for (size_t i = 0; i < t->n_links; i++)
		close(t->links[i]);
	t->n_links = 0;
	bpf_link__destroy(t->exit_link);
	t->exit_link = NULL;
}

void tracer__free(struct tracer *t)
{
	if (!t)
		return;
	tracer__detach(t);
	free(t->links);
	ring_buffer__free(t->rb);
	trace_bpf__destroy(t->skel);
	free(t);
}
