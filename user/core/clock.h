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

#endif
