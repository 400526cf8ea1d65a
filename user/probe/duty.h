/*
 * duty.h: duty cycling.  A probe's trap is paid on every call whatever its
 * BPF program does; only a probe that is not there costs nothing.  So a
 * function that costs more than the budget allows (agg/budget.h) has its
 * probes attached for a FRACTION of each period and detached for the rest
 * (bpf_set's per-function links), from a thread of its own; the windows of
 * different functions are spread over the period.
 *
 * What a caller needs to scale what was counted: each function's attached
 * time and elapsed time, cumulative and read together (a whole function's
 * are equal).  A probe appears inside its attach's system calls and goes
 * inside its detach's, and calls are counted meanwhile: a closed window's
 * attached time is its calls (the BPF programs count entries: duty_calls)
 * at the rate seen between the two, where time and calls are both known.
 * A window stands for its period: a call seen in it for period / attached.
 *
 * A window that cannot be attached again (the file gone) leaves the
 * function detached, said once; duty__stats shows it.
 */
#ifndef CMON_PROBE_DUTY_H
#define CMON_PROBE_DUTY_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_set;
struct duty;

/* Shortest attached window: shorter ones stretch the period instead. */
#define DUTY_MIN_WINDOW_NS (5 * 1000000ull)

struct duty_stats {
	uint64_t attached_ns; /* since the function was first set */
	uint64_t elapsed_ns;
	double fraction;      /* as set now; 1: whole */
	double scale;         /* what a call seen now stands for: 1 whole; cycling,
			       * the last window's period over its attached time
			       * (before one closed: 1 / fraction) */
	uint64_t period_ns;   /* of its cycle now (0: whole) */
	uint64_t windows;     /* attached windows so far */
	bool failed;          /* could not be attached again */
	bool stopped;         /* duty__stop: the times are final */
};

/*
 * What a function's calls really cost the process that makes them (the
 * calibration is a hot loop's; a paced program pays more: cold caches):
 * at each edge, before and after its system call, its entries, the
 * process of the last one and that process's CPU time are read.  Each
 * stretch between two readings is a sample the budget regresses
 * (agg/budget.h: cpu = a * wall + b * calls, b the cost of a call).
 */
enum duty_span {
	DUTY_SPAN_ATTACHED,  /* between an attach and the next detach */
	DUTY_SPAN_DETACHED,
	DUTY_SPAN_ATTACHING, /* inside an attach's system call */
	DUTY_SPAN_DETACHING,
};
struct duty_sample {
	uint64_t wall_ns, cpu_ns, calls;
	uint32_t tgid;       /* the process (both readings the same one) */
	enum duty_span span;
};
#define DUTY_SAMPLES 64 /* kept per function until taken; the oldest go first */

/* For S (a loaded set attached with o.duty), nothing cycling yet: every
 * function whole.  NULL and errno. */
struct duty *duty__new(struct bpf_set *s);

/* Function FUNC_ID attached FRACTION of every PERIOD_NS (>= 1: whole, and
 * attached now if it was not).  0 or -errno (-EINVAL: FRACTION <= 0). */
int duty__set(struct duty *d, uint32_t func_id, double fraction, uint64_t period_ns);

/* FUNC_ID's times so far (all zero and fraction 1 when never set). */
void duty__stats(struct duty *d, uint32_t func_id, struct duty_stats *st);

/* Up to MAX of FUNC_ID's samples since the last call, oldest first:
 * how many. */
size_t duty__samples(struct duty *d, uint32_t func_id, struct duty_sample *out, size_t max);

/* The attached time of a window whose attach began at BEGUN and ended at
 * SINCE (CALLS0 and CALLS1 entries counted then), whose detach runs from
 * T1 to T2 (C1, C2): its calls at the rate of the interval between the
 * edges, within [T1 - SINCE, T2 - BEGUN]. */
uint64_t duty__window_ns(uint64_t begun, uint64_t since, uint64_t calls0, uint64_t calls1,
			 uint64_t t1, uint64_t t2, uint64_t c1, uint64_t c2);

/* Hold D's functions as they are (no edge meanwhile): its links changed
 * by someone else (bpf_set__reattach).  NULL fine. */
void duty__hold(struct duty *d);
void duty__release(struct duty *d);

/* Stop cycling before the set's probes are detached: the functions stay
 * as they are, their times end now (duty__stats goes on answering). */
void duty__stop(struct duty *d);
void duty__free(struct duty *d); /* stopped first; NULL fine */

#endif
