/*
 * budget.h: an overhead budget, the share of one CPU that all probes
 * together may cost the traced processes (`budget: 1%` in the agent's
 * spec, `cmon profile --budget 1%`), and how it is kept.
 *
 * A function's probes cost each call what this host measured (a trap at
 * the entry as the caller times it, and the return's: probe/calib.h, the
 * figures `cmon list` shows per site class) plus the BPF programs' own
 * run time per call (the kernel's bpf_stats).  Its calls per second are
 * counted in the kernel while its probes are attached.  Over budget, the
 * costliest functions are duty-cycled (probe/duty.h): all are cut to one
 * level L, chosen so that the costs add up to the budget (water filling):
 * a function that costs less than L stays whole, one that costs more is
 * attached L / cost of the time.  Under budget again, all are whole.
 */
#ifndef CMON_AGG_BUDGET_H
#define CMON_AGG_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A function's fraction is never cut below this (a 5 ms window every 5 s):
 * its counts stay estimates of something.  Past it the budget is not
 * kept, and budget__share says so. */
#define BUDGET_MIN_FRACTION 0.001

/* "1%", "0.5%", "100%" -> 0.01, 0.005, 1.  0, or -EINVAL (not a
 * percentage, 0, over 100 %) with *WHY a static reason. */
int budget__parse(const char *s, double *out, const char **why);

/* The calls per second of one function, while attached. */
struct budget_meter {
	uint64_t seen, attached_ns; /* at the last update */
	double rate;                /* calls per attached second */
	bool have;                  /* RATE read */
	bool primed;                /* SEEN and ATTACHED_NS read */
};

/* SEEN (entries counted) and ATTACHED_NS (its probes' attached time),
 * both cumulative: the rate over what came since the last update, once
 * at least 50 ms of attached time came (else it waits); one more than
 * twice the last taken at once, any other a quarter of the new one. */
void budget_meter__update(struct budget_meter *m, uint64_t seen, uint64_t attached_ns);

struct budget_unit {
	double cpu;      /* share of one CPU the function costs whole (rate x cost) */
	double fraction; /* out: of each period attached; 1: whole */
};

/* Fractions for the N UNITS within BUDGET.  Returns the share of one CPU
 * they cost with them: at most BUDGET, unless even BUDGET_MIN_FRACTION
 * of the costliest ones costs more. */
double budget__share(struct budget_unit *u, size_t n, double budget);

/* Worth changing a function from fraction OLD to NEW?  A whole one that is
 * cut, a cut one made whole, or a change of more than 5 % (the rates'
 * noise would otherwise move every function every period). */
bool budget__changed(double old, double now);

/*
 * A duty-cycled row's estimate: what was seen, scaled up.  Each update
 * adds what was seen since the last one times the function's scale now
 * (probe/duty.h: a window stands for its period, its calls priced by its
 * attached time; 1 while whole), so the estimate only grows (a counter)
 * and follows the fraction as it changes.
 */
#define BUDGET_SCALE_N 2 /* counters scaled together: calls, filtered */
struct budget_scale {
	uint64_t seen[BUDGET_SCALE_N]; /* at the last update */
	double est[BUDGET_SCALE_N];
};

/* SEEN (cumulative), scaled by SCALE (duty_stats.scale). */
void budget_scale__update(struct budget_scale *s, const uint64_t seen[BUDGET_SCALE_N], double scale);

/*
 * What a call really costs the process that makes it.  The calibration
 * (probe/calib.h) is a hot loop's; a program that calls now and then pays
 * more (cold caches, the trap's path not in them).  Under a budget the
 * probes come and go, and the process's CPU time shows what they cost:
 * over the stretches between edges (probe/duty.h's samples), cpu = a *
 * wall + b * calls, a the process's own work, b the cost of a call, fitted
 * by least squares weighted by 1 / wall (a stretch's noise grows with its
 * length), older samples fading by BUDGET_COST_DECAY each.  Known after
 * BUDGET_COST_MIN_SAMPLES, when the rates differ enough between stretches
 * to tell a from b.  At most 4 times the calibration; under half of it
 * it is not believed and the calibration is used: a process busy all
 * the time pays its probes in work not done, not in more CPU, and another
 * process's calls counted with this one's make a call look cheaper.
 */
#define BUDGET_COST_DECAY 0.99
#define BUDGET_COST_MIN_SAMPLES 8
#define BUDGET_COST_LOW 0.5
#define BUDGET_COST_HIGH 4.0
struct budget_cost {
	double w, c, y, q, p; /* sums: wall, calls, cpu, calls^2 / wall, calls * cpu / wall */
	unsigned n;           /* samples taken */
	double base;          /* out: a (CPU share of the process's own work) */
	double per_call_ns;   /* out: b unbounded (0: not known yet) */
};

/* One stretch: WALL_NS long, the process spent CPU_NS, CALLS entries. */
void budget_cost__add(struct budget_cost *c, double wall_ns, double cpu_ns, double calls);

/* What a call costs, to price it with: the measured cost (at most
 * BUDGET_COST_HIGH x CALIB_NS, the calibrated one), or CALIB_NS until it
 * is known or when it is under BUDGET_COST_LOW x CALIB_NS. */
double budget_cost__price(const struct budget_cost *c, double calib_ns);

/* Functions are cycled over a period of this (longer when a window would
 * be shorter than DUTY_MIN_WINDOW_NS). */
#define BUDGET_PERIOD_NS 250000000ull

struct duty;

/* One function's state under a budget, kept by its owner (zeroed: new). */
struct budget_fn {
	struct budget_meter meter;
	double fraction; /* attached share of each period now; 0: not set yet */
	double cpu;      /* share of one CPU it would cost whole (0: not known yet) */
	uint64_t billed; /* its calls counted in the ledger (set by the owner when
			  * counting began before the budget: not billed) */
	struct budget_cost measured; /* what a call costs its process */
	double calib_ns; /* the calibrated cost of a call (traps and BPF) */
	double cost_ns;  /* what a call is priced at: the measured one when known */
};

/*
 * The budget is kept over time, not only round by round: what the probes
 * spent over it (a function's first fraction of a second whole, before
 * its rate is known; a rate that rose between rounds) is a debt, paid
 * back over the next BUDGET_PAYBACK_NS by keeping to less than the budget
 * (never less than BUDGET_PAYBACK_FLOOR of it).  Time left unspent is not
 * saved up: a burst over the budget is never allowed in advance.
 */
#define BUDGET_PAYBACK_NS (3 * 1000000000ull)
#define BUDGET_PAYBACK_FLOOR 0.5
struct budget_ledger {
	uint64_t at_ns; /* the last round (0: none yet) */
	double debt;    /* CPU seconds spent over the budget, not paid back */
	bool metering;  /* out: a function's rate is not known yet: a round soon */
};

/* A round at NOW_NS: SPENT_S CPU seconds spent since the last one (the
 * first round: since the probes began, all of it owed).  Returns the
 * share of one CPU to keep to until the next round. */
double budget_ledger__round(struct budget_ledger *l, double spent_s, uint64_t now_ns,
			    double budget);

/* One function, for one round of budget__keep. */
struct budget_item {
	struct duty *duty;
	uint32_t func_id;        /* in DUTY's set */
	struct budget_fn *st;
	uint64_t seen;           /* entries counted so far (cumulative) */
	double cost_ns;          /* what one call costs it as calibrated: traps and BPF
				  * (the measured cost replaces it when known) */
	const char *probe, *func; /* named in the log (PROBE NULL: none) */
};

/* One round over the N items (all the host's functions under BUDGET):
 * each one's rate read, the fractions chosen (within what LED, when not
 * NULL, leaves of the budget), those that changed set and logged once.
 * Returns the share of one CPU the items cost now, at their fractions. */
double budget__keep(struct budget_item *v, size_t n, double budget, struct budget_ledger *led);

#endif
