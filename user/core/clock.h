/*
 * clock.h: the clocks cmon reads, in the units its callers use.  Monotonic
 * for intervals and deadlines, realtime (wall) for what is shown or stored.
 * Header-only: libcmon.a uses it without the rest of core.
 */
#ifndef CMON_CORE_CLOCK_H
#define CMON_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock__ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock__mono_ns(void) { return clock__ns(CLOCK_MONOTONIC); }
static inline uint64_t clock__wall_ns(void) { return clock__ns(CLOCK_REALTIME); }
static inline uint64_t clock__mono_ms(void) { return clock__mono_ns() / 1000000; }
static inline double clock__mono_s(void) { return (double)clock__mono_ns() / 1e9; }
static inline double clock__wall_s(void) { return (double)clock__wall_ns() / 1e9; }

/* The wall time MS milliseconds from now: a pthread_cond_timedwait deadline
 * (its condition variables keep CLOCK_REALTIME). */
static inline struct timespec clock__wall_in_ms(long ms)
{
	uint64_t ns = clock__wall_ns() + (uint64_t)(ms > 0 ? ms : 0) * 1000000ull;

	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ull),
				  .tv_nsec = (long)(ns % 1000000000ull) };
}

#endif
