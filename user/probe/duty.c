// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* duty.c: see duty.h. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/clock.h"
#include "core/log.h"
#include "probe/bpf_setup.h"
#include "probe/resolve.h"
#include "duty.h"

/* A function's entries and its process's CPU time, read at once. */
struct reading {
	uint64_t t, calls, cpu;
	uint32_t tgid;
	bool cpu_ok;
};

struct duty_func {
	bool set;            /* accounting started */
	bool cycling;        /* fraction < 1 */
	bool attached;
	bool windowed;       /* attached by the cycle: a window, not whole */
	bool failed;
	double fraction;
	uint64_t period_ns, window_ns;
	uint64_t t0;         /* accounting start */
	uint64_t closed_ns;  /* attached time of the windows closed */
	uint64_t since;      /* attached: its window's start (its attach ended) */
	uint64_t begun;      /* attached: its attach began */
	uint64_t calls0;     /* attached: its entries as its attach began, */
	uint64_t calls1;     /* and as it ended */
	uint64_t next_edge;  /* cycling: the next attach or detach */
	uint64_t windows;
	double scale;        /* cycling: the last closed window's; 0: none yet */
	struct reading last; /* at the last edge (or when set) */
	struct duty_sample ring[DUTY_SAMPLES];
	size_t head, count;  /* samples not taken yet: from HEAD on */
};

struct duty {
	struct bpf_set *s;
	size_t n;
	struct duty_func *f;
	uint64_t started;    /* functions that began cycling: their phases */
	uint64_t frozen_ns;  /* stopped: the end of every function's time */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool running, stop;
};

struct duty *duty__new(struct bpf_set *s)
{
	struct duty *d = calloc(1, sizeof(*d));
	pthread_condattr_t ca;

	if (!d)
		return NULL;
	d->s = s;
	d->n = s->set->n_funcs;
	d->f = calloc(d->n ? d->n : 1, sizeof(*d->f));
	if (!d->f) {
		free(d);
		return NULL;
	}
	for (size_t i = 0; i < d->n; i++)
		d->f[i].attached = true;
	pthread_mutex_init(&d->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cv, &ca);
	pthread_condattr_destroy(&ca);
	return d;
}

/* Function ID's entries so far (the BPF programs count them: duty_calls),
 * the time, and the CPU time of the process that made the last one. */
static struct reading read_now(struct duty *d, uint32_t id)
{
	struct cmon_duty_calls v = { 0 };
	struct reading r = { 0 };
	struct timespec ts;
	clockid_t clk;

	if (d->s->duty_calls)
		bpf_map_lookup_elem(bpf_map__fd(d->s->duty_calls), &id, &v);
	r.calls = v.calls;
	r.tgid = v.tgid;
	r.t = clock__mono_ns();
	if (r.tgid && !clock_getcpuclockid((pid_t)r.tgid, &clk) && !clock_gettime(clk, &ts)) {
		r.cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		r.cpu_ok = true;
	}
	return r;
}

/* The stretch from F's last reading to R, when both read one process. */
static void sample(struct duty_func *f, const struct reading *r, enum duty_span span)
{
	const struct reading *a = &f->last;
	struct duty_sample *s;

	if (a->cpu_ok && r->cpu_ok && a->tgid == r->tgid && r->t > a->t && r->cpu >= a->cpu &&
	    r->calls >= a->calls) {
		if (f->count == DUTY_SAMPLES) { /* not taken: the oldest goes */
			f->head = (f->head + 1) % DUTY_SAMPLES;
			f->count--;
		}
		s = &f->ring[(f->head + f->count++) % DUTY_SAMPLES];
		*s = (struct duty_sample){ .wall_ns = r->t - a->t, .cpu_ns = r->cpu - a->cpu,
					   .calls = r->calls - a->calls, .tgid = r->tgid,
					   .span = span };
	}
	f->last = *r;
}

size_t duty__samples(struct duty *d, uint32_t id, struct duty_sample *out, size_t max)
{
	struct duty_func *f;
	size_t n = 0;

	if (!d || id >= d->n)
		return 0;
	pthread_mutex_lock(&d->mu);
	f = &d->f[id];
	while (f->count && n < max) {
		out[n++] = f->ring[f->head];
		f->head = (f->head + 1) % DUTY_SAMPLES;
		f->count--;
	}
	pthread_mutex_unlock(&d->mu);
	return n;
}

/* Fewer calls than this between the edges: the edges' times are taken. */
#define CLEAN_MIN_CALLS 8

/*
 * The attached time of F's window closing now, its detach from T1 to T2
 * with C1 and C2 entries counted at those times.  Its probes appeared
 * somewhere inside its attach and went somewhere inside its detach, and
 * the calls made meanwhile were counted: its calls are priced at the rate
 * of the clean interval between the two system calls, where both the time
 * and the calls are known.  Within what the edges allow.
 */
uint64_t duty__window_ns(uint64_t begun, uint64_t since, uint64_t calls0, uint64_t calls1,
			 uint64_t t1, uint64_t t2, uint64_t c1, uint64_t c2)
{
	uint64_t lo = t1 > since ? t1 - since : 0, hi = t2 > begun ? t2 - begun : lo;
	uint64_t clean = c1 >= calls1 ? c1 - calls1 : 0, all = c2 >= calls0 ? c2 - calls0 : 0;
	double ns;

	if (clean < CLEAN_MIN_CALLS || !lo)
		return lo;
	ns = (double)all * (double)lo / (double)clean;
	if (ns < (double)lo)
		return lo;
	return ns > (double)hi ? hi : (uint64_t)ns;
}

/* An edge: F's probes attached or detached now, at the time *AT.  0 or -errno (the attach failed: F stays detached). */
static int edge(struct duty *d, uint32_t id, bool attach, uint64_t *at)
{
	struct duty_func *f = &d->f[id];
	struct reading r1 = read_now(d, id), r2;
	uint64_t c1 = r1.calls, t1 = r1.t, t2, c2;
	int err = 0;

	sample(f, &r1, f->attached ? DUTY_SPAN_ATTACHED : DUTY_SPAN_DETACHED);
	if (attach)
		err = bpf_set__func_attach(d->s, id);
	else
		bpf_set__func_detach(d->s, id);
	r2 = read_now(d, id);
	sample(f, &r2, attach ? DUTY_SPAN_ATTACHING : DUTY_SPAN_DETACHING);
	t2 = r2.t;
	c2 = r2.calls;
	/* A window begins as its attach ends; it ends as its detach begins
	 * (the probes go first, then a grace period of tens of ms). */
	*at = attach ? t2 : t1;
	if (err) {
		f->failed = true;
		return err;
	}
	if (attach) {
		f->attached = true;
		f->begun = t1;
		f->since = t2;
		f->calls0 = c1;
		f->calls1 = c2;
		f->windows++;
		f->windowed = f->cycling;
	} else {
		uint64_t w = duty__window_ns(f->begun, f->since, f->calls0, f->calls1, t1, t2, c1, c2);

		f->attached = false;
		f->closed_ns += w;
		/* a window of the cycle (not the whole stretch before it) */
		if (f->windowed && w)
			f->scale = (double)f->period_ns / (double)w;
		f->windowed = false;
	}
	return 0;
}

static void *cycle(void *arg)
{
	struct duty *d = arg;

	pthread_mutex_lock(&d->mu);
	while (!d->stop) {
		uint64_t now = clock__mono_ns(), next = UINT64_MAX, at;

		for (uint32_t i = 0; i < d->n; i++) {
			struct duty_func *f = &d->f[i];

			if (!f->cycling || f->failed)
				continue;
			if (f->next_edge <= now) {
				bool attach = !f->attached;
				uint64_t start = f->since;

				if (edge(d, i, attach, &at)) {
					log_warn("probes of %s could not be attached again: left "
						 "detached", d->s->set->funcs[i].name);
					continue;
				}
				/* a steady cadence: each window a period after the last */
				f->next_edge = attach ? at + f->window_ns : start + f->period_ns;
				if (f->next_edge <= at)
					f->next_edge = at + (attach ? f->window_ns : 1);
				now = clock__mono_ns();
			}
			if (f->next_edge < next)
				next = f->next_edge;
		}
		if (next == UINT64_MAX) {
			pthread_cond_wait(&d->cv, &d->mu);
		} else if (next > now) {
			struct timespec ts = { .tv_sec = (time_t)(next / 1000000000ull),
					       .tv_nsec = (long)(next % 1000000000ull) };

			pthread_cond_timedwait(&d->cv, &d->mu, &ts);
		}
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

int duty__set(struct duty *d, uint32_t id, double fraction, uint64_t period_ns)
{
	struct duty_func *f;
	uint64_t now = clock__mono_ns(), at;
	int err = 0;

	if (id >= d->n || !(fraction > 0) || !period_ns)
		return -EINVAL;
	pthread_mutex_lock(&d->mu);
	f = &d->f[id];
	if (d->frozen_ns) {
		pthread_mutex_unlock(&d->mu);
		return -ESHUTDOWN;
	}
	if (!f->set) {
		f->set = true;
		f->t0 = now;
		f->since = f->begun = now; /* whole until now: attached */
		f->last = read_now(d, id);
		f->calls0 = f->calls1 = f->last.calls;
		f->fraction = 1;
	}
	if (fraction >= 1) {
		f->cycling = false;
		f->windowed = false;
		f->fraction = 1;
		f->period_ns = 0;
		if (!f->attached && !f->failed)
			err = edge(d, id, true, &at);
		pthread_mutex_unlock(&d->mu);
		return err;
	}
	f->window_ns = (uint64_t)(fraction * (double)period_ns);
	if (f->window_ns < DUTY_MIN_WINDOW_NS)
		f->window_ns = DUTY_MIN_WINDOW_NS;
	f->period_ns = (uint64_t)((double)f->window_ns / fraction);
	f->fraction = fraction;
	if (!f->cycling) {
		/* Begin detached, the first window at a phase of its own
		 * (golden-ratio steps): windows of several functions spread. */
		double u = fmod(0.6180339887 * (double)++d->started, 1.0);

		f->cycling = true;
		f->failed = false;
		f->scale = 0;
		if (f->attached)
			err = edge(d, id, false, &at);
		f->next_edge = now + (uint64_t)(u * (double)(f->period_ns - f->window_ns));
	} else if (f->attached && f->next_edge > f->since + f->window_ns) {
		f->next_edge = f->since + f->window_ns; /* a shorter window now */
	}
	if (!err && !d->running) {
		err = -pthread_create(&d->thread, NULL, cycle, d);
		d->running = !err;
	}
	pthread_mutex_unlock(&d->mu);
	pthread_cond_signal(&d->cv);
	return err;
}

void duty__stats(struct duty *d, uint32_t id, struct duty_stats *st)
{
	const struct duty_func *f;
	uint64_t now;

	memset(st, 0, sizeof(*st));
	st->fraction = 1;
	st->scale = 1;
	if (!d || id >= d->n)
		return;
	pthread_mutex_lock(&d->mu);
	f = &d->f[id];
	now = d->frozen_ns ? d->frozen_ns : clock__mono_ns();
	st->stopped = d->frozen_ns != 0;
	if (f->set) {
		st->elapsed_ns = now - f->t0;
		st->attached_ns = f->closed_ns + (f->attached ? now - f->since : 0);
		st->fraction = f->fraction;
		st->period_ns = f->cycling ? f->period_ns : 0;
		st->windows = f->windows;
		st->failed = f->failed;
		if (f->cycling)
			st->scale = f->scale > 0 ? f->scale : 1 / f->fraction;
	}
	pthread_mutex_unlock(&d->mu);
}

void duty__hold(struct duty *d)
{
	if (d)
		pthread_mutex_lock(&d->mu);
}

void duty__release(struct duty *d)
{
	if (d)
		pthread_mutex_unlock(&d->mu);
}

void duty__stop(struct duty *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	d->stop = true;
	if (!d->frozen_ns)
		d->frozen_ns = clock__mono_ns();
	pthread_mutex_unlock(&d->mu);
	pthread_cond_signal(&d->cv);
	if (d->running)
		pthread_join(d->thread, NULL);
	d->running = false;
}

void duty__free(struct duty *d)
{
	if (!d)
		return;
	duty__stop(d);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d->f);
	free(d);
}
