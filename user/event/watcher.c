// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/grow.h"
#include "cmon_abi.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "output/schema.h"
#include "dwarf/debuginfo.h"
#include "dwarf/globals.h"
#include "elf/objsym.h"
#include "elf/symtab.h"
#include "proc/procmaps.h"
#include "event/watcher.h"
#include "watch.skel.h"

struct watch {
	const char *expr;
	uint64_t addr; /* in the process */
	uint32_t len;
	enum global_kind kind;
	char type[64];
	uint64_t writes;
};

/* What an object of the process needs to name an address. */
struct obj_info {
	bool loaded, dyn;
	uint64_t first_vaddr;
	struct symtab *st;
	struct debuginfo *di;
};

/* Where an IP is, kept: a loop writes from the same few instructions. */
#define LOC_CACHE 256
struct loc {
	uint64_t ip; /* 0: empty */
	const char *func, *file, *module;
	uint64_t func_off;
	unsigned line;
};

struct watcher {
	struct loc locs[LOC_CACHE];
	struct watcher_opts opts;
	struct watch w[CMON_MAX_WATCH];
	size_t n;
	struct watch_bpf *skel;
	struct ring_buffer *rb;
	int *fds;
	size_t n_fds, cap_fds;
	struct proc_object *objs;
	size_t n_objs;
	struct obj_info *info;
	int64_t mono_to_real_ns;
	struct strbuf line;
	int write_err;
};

static struct obj_info *info_of(struct watcher *w, size_t i)
{
	struct obj_info *in = &w->info[i];

	if (in->loaded)
		return in;
	in->loaded = true;
	if (objsym__layout(w->objs[i].open_path, &in->dyn, &in->first_vaddr))
		in->dyn = false;
	in->st = symtab__open_opts(w->objs[i].open_path,
				   &(struct symtab_opts){ .debug_symbols = w->objs[i].exe });
	in->di = debuginfo__open(w->objs[i].open_path);
	return in;
}

static int read_objects(struct watcher *w)
{
	int err;

	for (size_t i = 0; w->info && i < w->n_objs; i++) {
		symtab__free(w->info[i].st);
		debuginfo__free(w->info[i].di);
	}
	proc_objects__free(w->objs, w->n_objs);
	free(w->info);
	w->objs = NULL;
	w->info = NULL;
	w->n_objs = 0;
	memset(w->locs, 0, sizeof(w->locs));
	err = proc_objects__read(w->opts.pid, &w->objs, &w->n_objs);
	if (err)
		return err;
	w->info = calloc(w->n_objs ? w->n_objs : 1, sizeof(*w->info));
	return w->info ? 0 : -ENOMEM;
}

/* Power-of-two length the hardware takes at ADDR: at most SIZE (and 8),
 * ADDR aligned to it. */
static uint32_t hw_len(uint64_t addr, uint64_t size)
{
	uint32_t len = 8;

	while (len > 1 && (len > size || addr % len))
		len /= 2;
	return len;
}

/* EXPR to an address in the process: ADDR:LEN, SYMBOL+OFF, or NAME (a
 * DWARF global of the executable, else its symbol). */
bool watch__is_addr_len(const char *expr)
{
	/* ADDR:LEN starts with a digit (a name never does; "ns::x" is a name). */
	return expr[0] >= '0' && expr[0] <= '9' && strchr(expr, ':');
}

int watch__addr_len(const char *expr, uint64_t *addr, uint32_t *len)
{
	unsigned long long a, l;
	char *end;

	errno = 0;
	a = strtoull(expr, &end, 16);
	if (errno || end == expr || *end != ':' || (l = strtoull(end + 1, &end, 10), *end) ||
	    (l != 1 && l != 2 && l != 4 && l != 8) || a % l) {
		log_error("--watch '%s': expected ADDR:LEN (hex address, LEN 1, 2, 4 or 8, "
			  "the address a multiple of LEN)", expr);
		return -EINVAL;
	}
	*addr = a;
	*len = (uint32_t)l;
	return 0;
}

static int resolve(struct watcher *w, struct watch *wa)
{
	const char *expr = wa->expr, *exe = w->objs[0].open_path;
	char name[256], *plus, *end;
	struct obj_info *in = info_of(w, 0);
	struct dwarf_global g;
	uint64_t addr, size, off = 0;
	int err;

	if (watch__is_addr_len(expr)) {
		uint64_t a;
		uint32_t l;

		if (watch__addr_len(expr, &a, &l))
			return -EINVAL;
		wa->addr = a;
		wa->len = l;
		wa->kind = GLOBAL_RAW;
		snprintf(wa->type, sizeof(wa->type), "raw");
		return 0;
	}
	if (strlen(expr) >= sizeof(name)) {
		log_error("--watch '%s': name too long", expr);
		return -EINVAL;
	}
	strcpy(name, expr);
	plus = strchr(name, '+');
	if (plus) {
		*plus++ = 0;
		errno = 0;
		off = strtoull(plus, &end, 0);
		if (errno || end == plus || *end) {
			log_error("--watch '%s': expected SYMBOL+OFFSET", expr);
			return -EINVAL;
		}
	}
	if (!plus && in->di && !dwarf_global__find(in->di, name, &g)) {
		addr = g.addr;
		size = g.size ? g.size : 8;
		wa->kind = g.kind;
		snprintf(wa->type, sizeof(wa->type), "%s", g.type);
	} else {
		err = objsym__find(exe, name, &addr, &size);
		if (err) {
			log_error("--watch '%s': no global variable or symbol '%s' in %s", expr,
				  name, w->objs[0].path);
			return -ENOENT;
		}
		if (off >= (size ? size : 8)) {
			log_error("--watch '%s': offset %" PRIu64 " is past the end of %s "
				  "(%" PRIu64 " bytes)", expr, off, name, size);
			return -EINVAL;
		}
		addr += off;
		size = size ? size - off : 8;
		wa->kind = GLOBAL_RAW;
		snprintf(wa->type, sizeof(wa->type), "symbol");
	}
	wa->addr = in->dyn ? w->objs[0].start + addr - in->first_vaddr : addr;
	wa->len = hw_len(wa->addr, size);
	if (wa->kind != GLOBAL_RAW && wa->len != size && size <= 8)
		wa->kind = GLOBAL_RAW; /* watched in part: its bytes */
	return 0;
}

static int64_t mono_to_real(void)
{
	uint64_t m0 = clock__mono_ns(), r = clock__wall_ns(), m1 = clock__mono_ns();

	return (int64_t)(r - (m0 + (m1 - m0) / 2));
}

int watcher__new(const struct watcher_opts *opts, struct watcher **out)
{
	struct watcher *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->opts = *opts;
	w->mono_to_real_ns = mono_to_real();
	err = read_objects(w);
	if (err || !w->n_objs) {
		log_error("--watch: cannot read the mappings of process %d: %s", (int)opts->pid,
			  strerror(err ? -err : ESRCH));
		err = err ? err : -ESRCH;
		goto fail;
	}
	for (size_t i = 0; i < opts->n_exprs && i < CMON_MAX_WATCH; i++) {
		struct watch *wa = &w->w[w->n];
		bool again = false;

		wa->expr = opts->exprs[i];
		err = resolve(w, wa);
		if (err)
			goto fail;
		/* The same --watch given twice is watched once: each write
		 * would otherwise be reported twice under one name (two names
		 * of the same bytes are two watches, each reported). */
		for (size_t k = 0; k < w->n && !again; k++)
			again = w->w[k].addr == wa->addr && w->w[k].len == wa->len &&
				!strcmp(w->w[k].expr, wa->expr);
		if (again)
			log_info("--watch %s: given twice: watched once", wa->expr);
		else
			w->n++;
	}
	w->skel = watch_bpf__open();
	if (!w->skel) {
		err = -errno;
		goto load_fail;
	}
	w->skel->rodata->targ_n_watches = (__u32)w->n;
	w->skel->rodata->targ_wakeup_bytes = bpf_map__max_entries(w->skel->maps.watch_events) / 8;
	err = watch_bpf__load(w->skel);
	if (err)
		goto load_fail;
	for (__u32 i = 0; i < w->n; i++) {
		struct cmon_watch_spec spec = { .addr = w->w[i].addr, .len = w->w[i].len };

		if (bpf_map_update_elem(bpf_map__fd(w->skel->maps.watch_specs), &i, &spec, BPF_ANY)) {
			err = -errno;
			goto load_fail;
		}
	}
	*out = w;
	return 0;
load_fail:
	log_error("--watch: cannot load the BPF program: %s", strerror(-err));
fail:
	watcher__free(w);
	return err;
}

static int on_record(void *ctx, void *data, size_t size);

/* Seed each watch's value as the process has it now. */
static void seed(struct watcher *w)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)w->opts.pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (__u32 i = 0; i < w->n; i++) {
		struct cmon_watch_key key = { .pid = (__u32)w->opts.pid, .watch_id = i };
		uint64_t v = 0;

		if (pread(fd, &v, w->w[i].len, (off_t)w->w[i].addr) == (ssize_t)w->w[i].len)
			bpf_map_update_elem(bpf_map__fd(w->skel->maps.watch_old), &key, &v, BPF_ANY);
	}
	close(fd);
}

static bool have_fd_for(const pid_t *tids, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

/* Watch I's event length: the longest of the watches at its address,
 * 0 when an earlier one has the address (one event, one register). */
static uint32_t event_len(const struct watcher *w, size_t i)
{
	uint32_t len = w->w[i].len;

	for (size_t j = 0; j < w->n; j++) {
		if (w->w[j].addr != w->w[i].addr)
			continue;
		if (j < i)
			return 0;
		if (w->w[j].len > len)
			len = w->w[j].len;
	}
	return len;
}

/* Events for thread TID, one per watched address. */
static int open_thread(struct watcher *w, pid_t tid)
{
	int prog = bpf_program__fd(w->skel->progs.cmon_watch);

	for (size_t i = 0; i < w->n; i++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_BREAKPOINT,
			.size = sizeof(a),
			.bp_type = HW_BREAKPOINT_W,
			.bp_addr = w->w[i].addr,
			.bp_len = event_len(w, i),
			.sample_period = 1,
			.inherit = 1,    /* threads and children created later */
			/* an exec'd program's addresses mean something else */
			.remove_on_exec = 1,
			.disabled = 1,
			.exclude_kernel = 1,
			.exclude_hv = 1,
		};
		int fd;

		if (!a.bp_len)
			continue; /* an earlier watch of this address has the event */
		fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			int err = -errno;

			if (err == -ESRCH)
				return 0; /* the thread is gone */
			if (err == -ENOSPC || err == -EBUSY)
				log_error("--watch: no free hardware debug register (x86 has 4 per "
					  "thread; %zu watches asked)", w->n);
			else
				log_error("--watch '%s': perf_event_open: %s", w->w[i].expr,
					  strerror(-err));
			return err;
		}
		if (GROW(w->fds, w->n_fds, w->cap_fds, 8)) {
			close(fd);
			return -ENOMEM;
		}
		w->fds[w->n_fds++] = fd;
		if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
			int err = -errno;

			log_error("--watch: cannot attach the BPF program to the watchpoint: %s",
				  strerror(-err));
			return err;
		}
	}
	return 0;
}

int watcher__attach(struct watcher *w)
{
	pid_t *tids = NULL;
	size_t n_tids = 0, cap_tids = 0;
	bool added = true;
	int err = 0;

	seed(w);
	w->rb = ring_buffer__new(bpf_map__fd(w->skel->maps.watch_events), on_record, w, NULL);
	if (!w->rb) {
		err = -errno;
		log_error("--watch: ring buffer: %s", strerror(-err));
		return err;
	}
	/* Threads created while we open are covered by inheritance when
	 * their creator already had its events; enumerate again until no
	 * thread is new. */
	while (added && !err) {
		char path[64];
		struct dirent *de;
		DIR *dir;

		added = false;
		snprintf(path, sizeof(path), "/proc/%d/task", (int)w->opts.pid);
		dir = opendir(path);
		if (!dir) {
			err = -errno;
			log_error("--watch: process %d: %s", (int)w->opts.pid, strerror(-err));
			break;
		}
		while (!err && (de = readdir(dir))) {
			pid_t tid = (pid_t)atoi(de->d_name);

			if (tid <= 0 || have_fd_for(tids, n_tids, tid))
				continue;
			if (GROW(tids, n_tids, cap_tids, 16)) {
				err = -ENOMEM;
				break;
			}
			tids[n_tids++] = tid;
			added = true;
			err = open_thread(w, tid);
		}
		closedir(dir);
	}
	free(tids);
	if (err)
		watcher__detach(w);
	return err;
}

void watcher__detach(struct watcher *w)
{
	for (size_t i = 0; i < w->n_fds; i++) {
		ioctl(w->fds[i], PERF_EVENT_IOC_DISABLE, 0);
		close(w->fds[i]);
	}
	free(w->fds);
	w->fds = NULL;
	w->n_fds = w->cap_fds = 0;
}

/* The value as its type shows it. */
static void put_value(struct strbuf *sb, const struct watch *wa, uint64_t v, bool json)
{
	unsigned shift = 64 - 8 * wa->len;

	if (wa->kind == GLOBAL_SIGNED)
		strbuf__printf(sb, "%" PRId64, shift < 64 ? (int64_t)(v << shift) >> shift : 0);
	else if (wa->kind == GLOBAL_UNSIGNED)
		strbuf__printf(sb, "%" PRIu64, v);
	else
		strbuf__printf(sb, json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, v);
}

/* Where IP (after the writing instruction) is: function, file, line. */
static void locate_now(struct watcher *w, uint64_t ip, const char **func, uint64_t *func_off,
		   const char **file, unsigned *line, const char **module)
{
	size_t best = SIZE_MAX;

	*func = NULL;
	*file = NULL;
	*line = 0;
	*module = NULL;
	*func_off = 0;
	for (int pass = 0; pass < 2 && best == SIZE_MAX; pass++) {
		if (pass && read_objects(w)) /* a library loaded since */
			return;
		for (size_t i = 0; i < w->n_objs; i++)
			if (w->objs[i].start <= ip &&
			    (best == SIZE_MAX || w->objs[i].start > w->objs[best].start))
				best = i;
	}
	if (best == SIZE_MAX)
		return;
	{
		struct obj_info *in = info_of(w, best);
		uint64_t rel = in->dyn ? ip - w->objs[best].start + in->first_vaddr : ip;
		const struct symtab_func *f = in->st ? symtab__find_addr(in->st, rel - 1) : NULL;
		const char *m = strrchr(w->objs[best].path, '/');

		*module = m ? m + 1 : w->objs[best].path;
		if (f) {
			*func = f->demangled ? f->demangled : f->name;
			*func_off = rel - f->addr;
		}
		/* The writing instruction is the one before IP. */
		if (in->di)
			dwarf_global__line(in->di, rel - 1, file, line);
	}
}

static void locate(struct watcher *w, uint64_t ip, const char **func, uint64_t *func_off,
		   const char **file, unsigned *line, const char **module)
{
	struct loc *l = &w->locs[(ip ^ ip >> 8) % LOC_CACHE];

	if (l->ip != ip) {
		/* Names point into symtabs and libdw, kept while the watcher
		 * is: a reread of the mappings empties the cache. */
		locate_now(w, ip, &l->func, &l->func_off, &l->file, &l->line, &l->module);
		l->ip = ip;
	}
	*func = l->func;
	*func_off = l->func_off;
	*file = l->file;
	*line = l->line;
	*module = l->module;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct watcher *w = ctx;
	struct cmon_watch_rec rec;
	const struct watch *wa;
	const char *func, *file, *module, *base;
	struct strbuf *sb = &w->line;
	char comm[CMON_COMM_LEN + 1];
	uint64_t func_off, ts;
	unsigned line;
	bool old_known;

	if (size < sizeof(rec))
		return 0;
	memcpy(&rec, data, sizeof(rec));
	if (rec.type != CMON_REC_WATCH || rec.watch_id >= w->n)
		return 0;
	wa = &w->w[rec.watch_id];
	w->w[rec.watch_id].writes++;
	memcpy(comm, rec.comm, CMON_COMM_LEN);
	comm[CMON_COMM_LEN] = 0;
	old_known = !(rec.flags & CMON_WATCH_OLD_UNKNOWN);
	ts = rec.ts_ns + (uint64_t)w->mono_to_real_ns;
	locate(w, rec.ip, &func, &func_off, &file, &line, &module);
	base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file;
	strbuf__reset(sb);
	switch (w->opts.fmt) {
	case OUT_CSV:
		strbuf__printf(sb, CMON_SCHEMA_TEXT ",%" PRIu64 ",%u,%u,", ts, rec.pid, rec.tid);
		csv_escape(sb, comm);
		strbuf__putc(sb, ',');
		csv_escape(sb, wa->expr);
		strbuf__printf(sb, ",0x%" PRIx64 ",", wa->addr);
		if (old_known)
			put_value(sb, wa, rec.old_val, false);
		strbuf__putc(sb, ',');
		put_value(sb, wa, rec.new_val, false);
		strbuf__putc(sb, ',');
		csv_escape(sb, func ? func : "");
		strbuf__putc(sb, ',');
		csv_escape(sb, file ? file : "");
		strbuf__putc(sb, ',');
		if (line)
			strbuf__printf(sb, "%u", line);
		strbuf__printf(sb, ",0x%" PRIx64 "\n", (uint64_t)rec.ip);
		break;
	case OUT_JSON:
		strbuf__printf(sb, "{\"schema\":" CMON_SCHEMA_TEXT ",\"kind\":\"watch\",\"ts_ns\":%" PRIu64
			       ",\"pid\":%u,\"tid\":%u,"
			       "\"comm\":", ts, rec.pid, rec.tid);
		json_escape(sb, comm);
		strbuf__puts(sb, ",\"watch\":");
		json_escape(sb, wa->expr);
		strbuf__printf(sb, ",\"addr\":\"0x%" PRIx64 "\",\"len\":%u,\"old\":", wa->addr,
			       wa->len);
		if (old_known)
			put_value(sb, wa, rec.old_val, true);
		else
			strbuf__puts(sb, "null");
		strbuf__puts(sb, ",\"new\":");
		put_value(sb, wa, rec.new_val, true);
		strbuf__puts(sb, ",\"func\":");
		if (func)
			json_escape(sb, func);
		else
			strbuf__puts(sb, "null");
		strbuf__puts(sb, ",\"file\":");
		if (file)
			json_escape(sb, file);
		else
			strbuf__puts(sb, "null");
		strbuf__printf(sb, ",\"line\":%u,\"ip\":\"0x%" PRIx64 "\"}\n", line, (uint64_t)rec.ip);
		break;
	default: {
		time_t sec = (time_t)(ts / 1000000000u);
		struct tm tm;

		localtime_r(&sec, &tm);
		strbuf__printf(sb, "%02d:%02d:%02d.%06u %7u %7u %-15s WATCH %s ", tm.tm_hour,
			       tm.tm_min, tm.tm_sec, (unsigned)(ts % 1000000000u / 1000), rec.pid,
			       rec.tid, comm, wa->expr);
		if (old_known)
			put_value(sb, wa, rec.old_val, false);
		else
			strbuf__puts(sb, "?");
		strbuf__puts(sb, " -> ");
		put_value(sb, wa, rec.new_val, false);
		if (func)
			strbuf__printf(sb, " in %s+0x%" PRIx64, func, func_off);
		else
			strbuf__printf(sb, " at 0x%" PRIx64, (uint64_t)rec.ip);
		if (base)
			strbuf__printf(sb, " (%s:%u)", base, line);
		else if (module)
			strbuf__printf(sb, " (%s)", module);
		if (rec.flags & CMON_WATCH_FAULT)
			strbuf__puts(sb, " [new value unreadable]");
		strbuf__putc(sb, '\n');
		break;
	}
	}
	if (sb->buf && fwrite(sb->buf, 1, sb->len, w->opts.out) != sb->len && !w->write_err)
		w->write_err = -EIO;
	return 0;
}

int watcher__poll(struct watcher *w, int timeout_ms)
{
	int n;

	if (w->opts.csv_header && w->opts.fmt == OUT_CSV) {
		fputs("schema,time_ns,pid,tid,comm,watch,addr,old,new,func,file,line,ip\n",
		      w->opts.out);
		w->opts.csv_header = false;
	}
	n = ring_buffer__poll(w->rb, timeout_ms);
	if (n == -EINTR)
		n = 0;
	/* Records come without a wakeup: read whatever is there. */
	if (n >= 0) {
		int m = ring_buffer__consume(w->rb);

		n = m < 0 ? m : n + m;
	}
	fflush(w->opts.out);
	if (w->write_err)
		return w->write_err;
	return n;
}

int watcher__drain(struct watcher *w)
{
	int n = w->rb ? ring_buffer__consume(w->rb) : 0;

	fflush(w->opts.out);
	return n;
}

size_t watcher__count(const struct watcher *w) { return w->n; }

uint64_t watcher__report(struct watcher *w, bool quiet)
{
	uint64_t lost = w->skel->bss->watch_lost;

	if (quiet)
		return lost;
	for (size_t i = 0; i < w->n; i++)
		log_report("watch %-24s 0x%-14" PRIx64 " %u bytes (%s): %" PRIu64
			   " writes", w->w[i].expr, w->w[i].addr, w->w[i].len, w->w[i].type,
			w->w[i].writes);
	log_report("watch writes lost: %" PRIu64 " (of %" PRIu64 " seen)", lost,
		   (uint64_t)w->skel->bss->watch_hits);
	return lost;
}

void watcher__free(struct watcher *w)
{
	if (!w)
		return;
	watcher__detach(w);
	ring_buffer__free(w->rb);
	watch_bpf__destroy(w->skel);
	for (size_t i = 0; w->info && i < w->n_objs; i++) {
		symtab__free(w->info[i].st);
		debuginfo__free(w->info[i].di);
	}
	free(w->info);
	proc_objects__free(w->objs, w->n_objs);
	strbuf__release(&w->line);
	free(w);
}
