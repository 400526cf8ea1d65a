// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>
#include "core/log.h"
#include "probe/attach.h"
#include "calib.skel.h"
#include "probe/calib.h"
#include "core/clock.h"

/*
 * The calibration functions: empty, each starting with an instruction of
 * one class, in pairs (one observed by a uretprobe, one by a uprobe on its
 * ret).  Written in assembly so that the first instruction is exactly the
 * one wanted whatever the compiler flags (no endbr64, no frame choices).
 */
/* nopl 0x0(%rax,%rax,1), spelled out: an assembler may drop the zero
 * displacement and make it a 4-byte nop, which is single-stepped. */
#define NOP5 " .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"

__asm__(".pushsection .text\n"
	".p2align 4\n"
#define CALIB_FN(n, body)                                                  \
	"cmon_calib_fn" #n ":\n" body "cmon_calib_ret" #n ":\n ret\n"      \
	".type cmon_calib_fn" #n ", @function\n"                           \
	".size cmon_calib_fn" #n ", . - cmon_calib_fn" #n "\n"             \
	".p2align 4\n"
	/* optimized: the 5-byte nop of -pg -mfentry -mnop-mcount */
	CALIB_FN(0, NOP5) CALIB_FN(1, NOP5)
	/* emulated: push %rbp */
	CALIB_FN(2, " push %rbp\n pop %rbp\n") CALIB_FN(3, " push %rbp\n pop %rbp\n")
	/* single-stepped: an ordinary instruction */
	CALIB_FN(4, " lea (%rdi,%rsi,1), %rax\n") CALIB_FN(5, " lea (%rdi,%rsi,1), %rax\n")
	/* one of each class with an entry probe only: the cost of a hit */
	CALIB_FN(6, NOP5) CALIB_FN(7, " push %rbp\n pop %rbp\n")
	CALIB_FN(8, " lea (%rdi,%rsi,1), %rax\n")
#undef CALIB_FN
	".popsection\n");

#define DECL(n) extern char cmon_calib_fn##n[], cmon_calib_ret##n[];
DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5) DECL(6) DECL(7) DECL(8)
#undef DECL

/* Slots (calib_slots.h), then the entry-only functions of each class. */
#define CALIB_FNS (CMON_CALIB_SLOTS + CMON_CALIB_CLASSES)

static char *const calib_fn[CALIB_FNS] = {
	cmon_calib_fn0, cmon_calib_fn1, cmon_calib_fn2, cmon_calib_fn3, cmon_calib_fn4,
	cmon_calib_fn5, cmon_calib_fn6, cmon_calib_fn7, cmon_calib_fn8,
};
static char *const calib_ret[CALIB_FNS] = {
	cmon_calib_ret0, cmon_calib_ret1, cmon_calib_ret2, cmon_calib_ret3, cmon_calib_ret4,
	cmon_calib_ret5, cmon_calib_ret6, cmon_calib_ret7, cmon_calib_ret8,
};

#define CALIB_WARMUP 32 /* calls not counted: the first hits set up the probe */
#define CALIB_ROUNDS 7  /* rounds of calls, a pause apart */
#define CALIB_CALLS 64  /* calls to each function per round */
#define CALIB_PAUSE_NS 2000000

_Static_assert(CALIB_CALLS <= CMON_CALIB_SAMPLES, "a round's samples fit the BPF array");

/* File offset of ADDR in cmon's own executable, from /proc/self/maps. */
static int self_offset(const void *addr, uint64_t *off)
{
	unsigned long a = (unsigned long)addr, lo, hi, pgoff;
	char line[512], perms[8];
	int err = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx", &lo, &hi, perms, &pgoff) != 4)
			continue;
		if (a >= lo && a < hi) {
			*off = a - lo + pgoff;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

typedef long (*calib_fn_t)(long, long);

/* Call every slot's function N times, round-robin, so that a passing
 * slowdown of the host weighs on all alike (the BPF side times them); then
 * each entry-only function N times in a row, timed as a caller sees it
 * (back to back, as a program calling it in a loop would), into PER_CALL. */
static void call_all(int n, uint64_t per_call[CALIB_FNS])
{
	for (int i = 0; i < n; i++) {
		for (int s = 0; s < CMON_CALIB_SLOTS; s++) {
			calib_fn_t volatile fn = (calib_fn_t)(void *)calib_fn[s];

			fn(i, 1);
		}
	}
	for (int s = CMON_CALIB_SLOTS; s < CALIB_FNS; s++) {
		calib_fn_t volatile fn = (calib_fn_t)(void *)calib_fn[s];
		uint64_t t0 = clock__mono_ns();

		for (int i = 0; i < n; i++)
			fn(i, 1);
		per_call[s] = (clock__mono_ns() - t0) / (uint64_t)n;
	}
	/* The emulated class with each return mechanism, timed the same way:
	 * less the entry-only figure, what a return costs (`cmon list`). */
	for (int m = 0; m < 2; m++) {
		int s = PROBE_COST_EMULATED * 2 + m;
		calib_fn_t volatile fn = (calib_fn_t)(void *)calib_fn[s];
		uint64_t t0 = clock__mono_ns();

		for (int i = 0; i < n; i++)
			fn(i, 1);
		per_call[s] = (clock__mono_ns() - t0) / (uint64_t)n;
	}
}

/* Perf-event uprobes, where the kernel has no uprobe_multi: one a site. */
#define CALIB_PERF_MAX (CALIB_FNS + 2 * CMON_CALIB_CLASSES)

struct calib_links {
	struct calib_bpf *skel;
	int fds[3];
	struct bpf_link *perf[CALIB_PERF_MAX];
	int n_perf;
};

/*
 * Releases still closing links, waited for before the process exits.  The
 * kernel takes a uprobe out of this process's text while the link's fd is
 * closed; a thread that exit_group kills in the middle of that gets an
 * interrupted page lookup, and the kernel then leaks the uprobe ("failed to
 * unregister, leaking uprobe": its memory and cmon's inode stay pinned until
 * reboot).  `cmon list` and short traces end within the ~0.2 s a release
 * takes.  A forked child that exits is not the owner and does not wait.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t done;
	unsigned in_flight;
	pid_t owner;
	bool hooked; /* the exit handler is registered */
} releases = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, false };

static void wait_releases(void)
{
	if (getpid() != releases.owner)
		return;
	pthread_mutex_lock(&releases.lock);
	while (releases.in_flight)
		pthread_cond_wait(&releases.done, &releases.lock);
	pthread_mutex_unlock(&releases.lock);
}

/* Detach and unload what L holds (not L itself). */
static void close_links_here(struct calib_links *l)
{
	for (int i = 0; i < 3; i++)
		if (l->fds[i] >= 0)
			close(l->fds[i]);
	for (int i = 0; i < l->n_perf; i++)
		bpf_link__destroy(l->perf[i]);
	calib_bpf__destroy(l->skel);
}

static void close_links(struct calib_links *l)
{
	close_links_here(l);
	free(l);
}

static void *release_links(void *arg)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[2] = {};

	/* Closing fds needs no privilege: this thread holds none while it
	 * waits on the kernel (capabilities are per thread; the agent drops
	 * its own later, when this one may still be running). */
	syscall(SYS_capset, &h, none);
	close_links(arg);
	pthread_mutex_lock(&releases.lock);
	releases.in_flight--;
	pthread_cond_broadcast(&releases.done);
	pthread_mutex_unlock(&releases.lock);
	return NULL;
}

/* Detach and unload.  Closing a uprobe link waits for the kernel (~50-90 ms
 * each here), so it is done on a thread of its own when one can be made:
 * the trace does not wait for it, the process's exit does. */
static void release(struct calib_links *att)
{
	struct calib_links *l = malloc(sizeof(*l));
	pthread_attr_t attr;
	pthread_t th;
	int err = -1;

	if (!l) {
		close_links_here(att);
		return;
	}
	*l = *att;
	pthread_mutex_lock(&releases.lock);
	if (!releases.hooked)
		releases.hooked = !atexit(wait_releases);
	if (releases.hooked && !pthread_attr_init(&attr)) {
		releases.owner = getpid();
		releases.in_flight++;
		err = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) ||
		      pthread_create(&th, &attr, release_links, l);
		if (err)
			releases.in_flight--;
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&releases.lock);
	if (err)
		close_links(l);
}

/* CNT probes of PROG at OFFSETS of cmon's own text with COOKIES: one
 * uprobe_multi link (into ATT's fds[SLOT]), else one perf-event uprobe each
 * (a bpf cookie each too). */
static int attach(struct calib_links *att, struct bpf_program *prog, const uint64_t *offsets,
		  const uint64_t *cookies, size_t cnt, bool retprobe, int slot)
{
	if (uprobe_multi__supported()) {
		att->fds[slot] = uprobe_multi__attach(bpf_program__fd(prog), "/proc/self/exe",
						      offsets, cookies, cnt, getpid(), retprobe);
		return att->fds[slot] < 0 ? att->fds[slot] : 0;
	}
	for (size_t i = 0; i < cnt && att->n_perf < CALIB_PERF_MAX; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookies[i], .retprobe = retprobe);
		struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, getpid(),
									"/proc/self/exe",
									offsets[i], &uo);

		if (!link)
			return -errno;
		att->perf[att->n_perf++] = link;
	}
	return 0;
}

int probe_calib__measure(struct probe_calib *out)
{
	uint64_t entry_off[CALIB_FNS], uret_off[CMON_CALIB_CLASSES],
		insn_off[CMON_CALIB_CLASSES];
	uint64_t entry_ck[CALIB_FNS], uret_ck[CMON_CALIB_CLASSES],
		insn_ck[CMON_CALIB_CLASSES];
	__u64 ns[CMON_CALIB_SLOTS][CALIB_ROUNDS], call_ns[CMON_CALIB_CLASSES][CALIB_ROUNDS],
		ret_ns[2][CALIB_ROUNDS], spread[CMON_CALIB_SLOTS][CALIB_ROUNDS];
	uint64_t per_call[CALIB_FNS];
	struct calib_links att = { .fds = { -1, -1, -1 } };
	struct calib_bpf *skel = NULL;
	bool multi = uprobe_multi__supported();
	__u64 *v = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	for (int s = 0; s < CALIB_FNS; s++) {
		uint64_t ret_off;

		err = self_offset(calib_fn[s], &entry_off[s]);
		if (!err)
			err = self_offset(calib_ret[s], &ret_off);
		if (err)
			return err;
		entry_ck[s] = (uint64_t)s;
		if (s >= CMON_CALIB_SLOTS) {
			continue; /* entry only */
		} else if (s % 2 == 0) {
			uret_off[s / 2] = entry_off[s];
			uret_ck[s / 2] = (uint64_t)s;
		} else {
			insn_off[s / 2] = ret_off;
			insn_ck[s / 2] = (uint64_t)s;
		}
	}
	skel = att.skel = calib_bpf__open();
	if (!skel)
		return -errno;
	if (multi) {
		bpf_program__set_expected_attach_type(skel->progs.cmon_calib_entry,
						      CMON_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.cmon_calib_exit,
						      CMON_BPF_TRACE_UPROBE_MULTI);
	}
	err = calib_bpf__load(skel);
	if (!err)
		err = attach(&att, skel->progs.cmon_calib_entry, entry_off, entry_ck, CALIB_FNS,
			     false, 0);
	if (!err)
		err = attach(&att, skel->progs.cmon_calib_exit, uret_off, uret_ck,
			     CMON_CALIB_CLASSES, true, 1);
	if (!err)
		err = attach(&att, skel->progs.cmon_calib_exit, insn_off, insn_ck,
			     CMON_CALIB_CLASSES, false, 2);
	if (err)
		goto cleanup;
	call_all(CALIB_WARMUP, per_call);
	for (int round = 0; round < CALIB_ROUNDS; round++) {
		if (round)
			nanosleep(&(struct timespec){ .tv_nsec = CALIB_PAUSE_NS }, NULL);
		memset(skel->bss->n_samples, 0, sizeof(skel->bss->n_samples));
		call_all(CALIB_CALLS, per_call);
		for (int k = 0; k < CMON_CALIB_CLASSES; k++)
			call_ns[k][round] = per_call[CMON_CALIB_SLOTS + k];
		for (int m = 0; m < 2; m++) {
			uint64_t both = per_call[PROBE_COST_EMULATED * 2 + m],
				 entry = per_call[CMON_CALIB_SLOTS + PROBE_COST_EMULATED];

			ret_ns[m][round] = both > entry ? both - entry : 0;
		}
		for (int s = 0; s < CMON_CALIB_SLOTS; s++) {
			uint32_t n = skel->bss->n_samples[s];

			if (n < CALIB_CALLS / 2) {
				err = -EIO; /* the probes did not fire */
				goto cleanup;
			}
			v = skel->bss->samples[s];
			qsort(v, n, sizeof(*v), cmp_u64);
			ns[s][round] = v[n / 2];
			spread[s][round] = (v[n * 9 / 10] - v[n / 10]) / 2;
		}
	}
	/* The median of the rounds' medians: a burst of slowness of the host
	 * (single-stepping here sometimes costs 25 % more for a few ms) weighs
	 * on one round, not on the figure. */
	for (int s = 0; s < CMON_CALIB_SLOTS; s++) {
		qsort(ns[s], CALIB_ROUNDS, sizeof(ns[s][0]), cmp_u64);
		out->ns[s / 2][s % 2] = ns[s][CALIB_ROUNDS / 2];
		qsort(spread[s], CALIB_ROUNDS, sizeof(spread[s][0]), cmp_u64);
		out->spread_ns[s / 2][s % 2] = spread[s][CALIB_ROUNDS / 2];
	}
	for (int k = 0; k < CMON_CALIB_CLASSES; k++) {
		qsort(call_ns[k], CALIB_ROUNDS, sizeof(call_ns[k][0]), cmp_u64);
		out->call_ns[k] = call_ns[k][CALIB_ROUNDS / 2];
	}
	for (int m = 0; m < 2; m++) {
		qsort(ret_ns[m], CALIB_ROUNDS, sizeof(ret_ns[m][0]), cmp_u64);
		out->ret_ns[m] = ret_ns[m][CALIB_ROUNDS / 2];
	}
	out->valid = true;
cleanup:
	release(&att);
	return err;
}

uint64_t probe_calib__bias(const struct probe_calib *c, const struct probe_func *f)
{
	/* A step-timed latency starts at the step probe: its class's cost. */
	enum probe_cost cost = probe_func__step_timed(f) ? f->step.cost : f->entry.cost;

	if (!c || !c->valid || cost >= CMON_CALIB_CLASSES)
		return 0;
	switch (f->ret_mode) {
	case RETURN_URETPROBE:
		return c->ns[cost][0];
	case RETURN_INSN:
		return c->ns[cost][1];
	default:
		return 0;
	}
}

uint64_t probe_calib__spread(const struct probe_calib *c, const struct probe_func *f)
{
	enum probe_cost cost = probe_func__step_timed(f) ? f->step.cost : f->entry.cost;

	if (!c || !c->valid || cost >= CMON_CALIB_CLASSES || f->ret_mode == RETURN_NONE)
		return 0;
	return c->spread_ns[cost][f->ret_mode == RETURN_INSN];
}

uint64_t probe_calib__caller_cost(const struct probe_calib *c, const struct probe_func *f)
{
	uint64_t ns;

	if (!c || !c->valid || f->entry.cost >= CMON_CALIB_CLASSES)
		return 0;
	ns = c->call_ns[f->entry.cost];
	if (probe_func__step_timed(f) && f->step.cost < CMON_CALIB_CLASSES)
		ns += c->call_ns[f->step.cost];
	if (f->ret_mode == RETURN_URETPROBE)
		ns += c->ret_ns[0];
	else if (f->ret_mode == RETURN_INSN)
		ns += c->ret_ns[1];
	return ns;
}

uint32_t probe_calib__step_lead(const struct probe_calib *c)
{
	uint64_t ss, emu;

	if (!c || !c->valid)
		return 0;
	ss = c->ns[PROBE_COST_SINGLESTEP][0];
	emu = c->ns[PROBE_COST_EMULATED][0];
	return ss > emu && ss - emu < UINT32_MAX ? (uint32_t)(ss - emu) : 0;
}

void probe_calib__log(const struct probe_calib *c)
{
	static const char *const cls[CMON_CALIB_CLASSES] = { "optimized", "emulated", "single-step" };

	for (int k = 0; k < CMON_CALIB_CLASSES; k++)
		log_info("probe cost in a latency, %s entry: %llu +- %llu ns (uretprobe), %llu "
			 "+- %llu ns (ret-insn); a call pays %llu ns", cls[k],
			 (unsigned long long)c->ns[k][0], (unsigned long long)c->spread_ns[k][0],
			 (unsigned long long)c->ns[k][1], (unsigned long long)c->spread_ns[k][1],
			 (unsigned long long)c->call_ns[k]);
}

static struct probe_calib host_calib;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static bool host_measured;

static void measure_host(void)
{
	int err = probe_calib__measure(&host_calib);

	__atomic_store_n(&host_measured, true, __ATOMIC_RELEASE);

	if (err)
		log_warn("cannot measure the probes' own cost (%s): latencies include it",
			 strerror(-err));
	else
		probe_calib__log(&host_calib);
}

const struct probe_calib *probe_calib__host(void)
{
	pthread_once(&host_once, measure_host);
	return &host_calib;
}

const struct probe_calib *probe_calib__measured(void)
{
	return __atomic_load_n(&host_measured, __ATOMIC_ACQUIRE) ? &host_calib : NULL;
}
