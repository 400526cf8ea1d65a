/*
 * calib.h: the probe's own cost inside every latency, measured on this host.
 *
 * A latency is the exit program's time minus the entry program's, so it
 * includes what the kernel does between them besides running the function:
 * single-stepping or emulating the displaced first instruction, returning
 * to user space, and the return trap.  That cost depends on the entry
 * site's class (single-stepped ~2.5-10 us, emulated ~0.2 us, optimized
 * 5-byte nop ~0.1 us) and on how the return is observed (uretprobe, or a
 * uprobe on the ret instruction).  probe_calib__measure times empty
 * calibration functions of each class in cmon's own binary under probes
 * that take their times where trace and profile take theirs (median of a
 * few hundred calls each), once at start; latencies are reported with it
 * subtracted: the function's own.
 */
#ifndef CMON_CALIB_H_USER
#define CMON_CALIB_H_USER

#include <stdbool.h>
#include <stdint.h>
#include "calib_slots.h"
#include "probe/insn.h"
#include "probe/resolve.h"

struct probe_calib {
	bool valid; /* measured; false: nothing is subtracted */
	/* ns, by [enum probe_cost][return mode: 0 uretprobe, 1 ret-insn] */
	uint64_t ns[CMON_CALIB_CLASSES][2];
	/* How much that cost varies from call to call, by the same index:
	 * half the range between its 10th and 90th percentiles.  A latency
	 * less the cost is the function's own only to within this. */
	uint64_t spread_ns[CMON_CALIB_CLASSES][2];
	/* ns a call pays for an entry probe (a near-empty program), as its
	 * caller sees it, by [enum probe_cost]: `cmon list`. */
	uint64_t call_ns[CMON_CALIB_CLASSES];
	/* ns a call pays for its return probe, by [0 uretprobe, 1 ret
	 * instruction (single-stepped: the kernel cannot emulate a ret)]. */
	uint64_t ret_ns[2];
};

/* Measure (about 2 ms, and 2 x 256 single-steps).  Returns 0, or a negative
 * errno (OUT then stays invalid: latencies are reported raw). */
int probe_calib__measure(struct probe_calib *out);

/* The probe's share of the latency of a call to F (0 when unknown). */
uint64_t probe_calib__bias(const struct probe_calib *c, const struct probe_func *f);

/* How much that share varies (probe_calib.spread_ns; 0 when unknown). */
uint64_t probe_calib__spread(const struct probe_calib *c, const struct probe_func *f);


/* What F's probes cost a caller of F: its entry probe (and step probe)
 * and its return probe, as a caller times them (0 when unknown).  A
 * caller's own latency is its measured one less this for each traced call
 * it made. */
uint64_t probe_calib__caller_cost(const struct probe_calib *c, const struct probe_func *f);

/* This host's figures, measured on the first call (once per process,
 * thread-safe): logged at -v, or a warning when they cannot be measured
 * (then not valid: nothing is subtracted). */
const struct probe_calib *probe_calib__host(void);

/* The host's figures when they have been measured already (by
 * probe_calib__host; valid or not), else NULL: nothing is measured. */
const struct probe_calib *probe_calib__measured(void);

/* What a step-timed entry's latency start is estimated to lag its entry
 * by until its step probe fires (bpf/shadow_stack.bpf.h): the single-step
 * less an emulated probe, as calibrated; 0 when C is NULL or not valid. */
uint32_t probe_calib__step_lead(const struct probe_calib *c);

/* The figures, at -v. */
void probe_calib__log(const struct probe_calib *c);

/* A measured latency RAW less the probe's share BIAS: the function's own
 * (0 when the probe's cost varied more than the function took). */
static inline uint64_t probe_calib__own(uint64_t raw, uint64_t bias)
{
	return raw > bias ? raw - bias : 0;
}

/* An own latency OWN (probe_calib__own) is not a measurement when it is
 * within the probe cost's SPREAD of nothing: the function took less than
 * the returned bound, OWN + SPREAD, which is all that can be said.  0: OWN
 * stands (or nothing was subtracted). */
static inline uint64_t probe_calib__bound(uint64_t own, uint64_t spread)
{
	return spread && own < spread ? own + spread : 0;
}

#endif
