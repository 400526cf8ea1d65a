// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* budget.c: see budget.h. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/clock.h"
#include "core/log.h"
#include "probe/duty.h"
#include "budget.h"

int budget__parse(const char *s, double *out, const char **why)
{
	char *end;
	double v;

	*why = "a budget is a percentage of one CPU: 0.5%, 1%, 100%";
	/* digits and one point only: strtod would take 0x1, 1e3, inf */
	if (!s || !isdigit((unsigned char)*s) || s[strspn(s, "0123456789.")] != '%' ||
	    strchr(s, '.') != strrchr(s, '.'))
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || strcmp(end, "%") || !isfinite(v))
		return -EINVAL;
	if (!(v > 0)) {
		*why = "a budget of 0 % leaves no probe: more than 0 %";
		return -EINVAL;
	}
	if (v > 100) {
		*why = "a budget is at most 100 % (one CPU)";
		return -EINVAL;
	}
	*out = v / 100;
	return 0;
}

#define METER_MIN_NS (50 * 1000000ull)

void budget_meter__update(struct budget_meter *m, uint64_t seen, uint64_t attached_ns)
{
	double rate;

	if (!m->primed || attached_ns < m->attached_ns || seen < m->seen) {
		/* the first reading, or a new profiler: start over */
		m->primed = true;
		m->seen = seen;
		m->attached_ns = attached_ns;
		return;
	}
	if (attached_ns - m->attached_ns < METER_MIN_NS)
		return;
	rate = (double)(seen - m->seen) * 1e9 / (double)(attached_ns - m->attached_ns);
	/* A function turning hot is taken at its word at once (the budget
	 * is a bound); otherwise the noise (a window the process spent off
	 * CPU) smoothed out, a quarter of the new reading a time. */
	m->rate = m->have && rate < 2 * m->rate ? 0.75 * m->rate + 0.25 * rate : rate;
	m->have = true;
	m->seen = seen;
	m->attached_ns = attached_ns;
}

void budget_scale__update(struct budget_scale *s, const uint64_t seen[BUDGET_SCALE_N], double scale)
{
	for (int i = 0; i < BUDGET_SCALE_N; i++) {
		if (seen[i] < s->seen[i])
			s->seen[i] = seen[i]; /* counters restarted: from here */
		s->est[i] += (double)(seen[i] - s->seen[i]) * scale;
		s->seen[i] = seen[i];
	}
}

static int by_cpu(const void *a, const void *b)
{
	double x = (*(const struct budget_unit *const *)a)->cpu;
	double y = (*(const struct budget_unit *const *)b)->cpu;

	return x < y ? -1 : x > y;
}

double budget__share(struct budget_unit *u, size_t n, double budget)
{
	struct budget_unit **v;
	double total = 0, left = budget, level = 0, cost = 0;
	size_t k;

	for (size_t i = 0; i < n; i++) {
		u[i].fraction = 1;
		total += u[i].cpu;
	}
	if (total <= budget || !n)
		return total;
	v = malloc(n * sizeof(*v));
	if (!v) { /* cut everything alike */
		for (size_t i = 0; i < n; i++)
			u[i].fraction = fmax(budget / total, BUDGET_MIN_FRACTION);
		return budget;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = &u[i];
	qsort(v, n, sizeof(*v), by_cpu);
	/* The cheapest whole while the rest, cut to their equal share of
	 * what is left, would cost more each. */
	for (k = 0; k < n; k++) {
		level = left / (double)(n - k);
		if (v[k]->cpu > level)
			break;
		left -= v[k]->cpu;
	}
	for (size_t i = 0; i < n; i++) {
		if (i >= k && v[i]->cpu > 0)
			v[i]->fraction = fmax(level / v[i]->cpu, BUDGET_MIN_FRACTION);
		cost += v[i]->cpu * v[i]->fraction;
	}
	free(v);
	return cost;
}

bool budget__changed(double old, double now)
{
	if ((old >= 1) != (now >= 1))
		return true;
	if (old >= 1)
		return false;
	return fabs(now - old) > 0.05 * old;
}

/* "probe NAME: " before a function's name, when it has a probe */
#define PROBE(it) (it).probe ? "probe " : "", (it).probe ? (it).probe : "", (it).probe ? ": " : ""

double budget_ledger__round(struct budget_ledger *l, double spent_s, uint64_t now_ns,
			    double budget)
{
	if (l->at_ns && now_ns > l->at_ns) {
		l->debt += spent_s - budget * (double)(now_ns - l->at_ns) / 1e9;
		if (l->debt < 0)
			l->debt = 0; /* time unspent is not saved up for a burst */
	}
	l->at_ns = now_ns;
	return fmax(budget - l->debt * 1e9 / (double)BUDGET_PAYBACK_NS,
		    budget * BUDGET_PAYBACK_FLOOR);
}

double budget__keep(struct budget_item *v, size_t n, double budget, struct budget_ledger *led)
{
	struct budget_unit *u = calloc(n ? n : 1, sizeof(*u));
	double cost = 0, spent = 0, level = budget;

	if (!u)
		return -1;
	if (led)
		led->metering = false;
	for (size_t i = 0; i < n; i++) {
		struct budget_fn *st = v[i].st;
		struct duty_stats ds;

		if (!st->fraction) {
			/* its attached time counted from now: whole */
			if (duty__set(v[i].duty, v[i].func_id, 1, BUDGET_PERIOD_NS))
				continue;
			st->fraction = 1;
			st->billed = v[i].seen;
		}
		/* what its calls since the last round cost, each one trapped */
		if (v[i].seen >= st->billed)
			spent += (double)(v[i].seen - st->billed) * v[i].cost_ns / 1e9;
		st->billed = v[i].seen;
		duty__stats(v[i].duty, v[i].func_id, &ds);
		budget_meter__update(&st->meter, v[i].seen, ds.attached_ns);
		if (st->meter.have)
			st->cpu = st->meter.rate * v[i].cost_ns / 1e9;
		else if (led)
			led->metering = true;
		u[i].cpu = st->cpu;
	}
	if (led)
		level = budget_ledger__round(led, spent, clock__mono_ns(), budget);
	budget__share(u, n, level);
	for (size_t i = 0; i < n; i++) {
		struct budget_fn *st = v[i].st;

		/* Whole again only well under its share: not back and forth
		 * round after round around it (cut, it costs less still). */
		if (st->fraction > 0 && st->fraction < 1 && u[i].fraction >= 1 &&
		    2 * st->cpu > level / (double)n)
			u[i].fraction = st->fraction;

		bool worth = budget__changed(st->fraction, u[i].fraction);

		/* Less time attached at once, always (the budget is a bound);
		 * more only past the rates' noise.  Logged when worth it. */
		if (st->fraction && (worth || u[i].fraction < st->fraction)) {
			int err = duty__set(v[i].duty, v[i].func_id, u[i].fraction, BUDGET_PERIOD_NS);

			if (err) {
				log_warn("%s%s%s%s: duty cycle not set: %s", PROBE(v[i]), v[i].func,
					 strerror(-err));
			} else {
				if (worth && u[i].fraction < 1 && st->fraction >= 1)
					log_info("%s%s%s%s costs %.2f%% of a CPU whole, over the "
						 "budget of %g%%: attached %.2f%% of the time",
						 PROBE(v[i]), v[i].func, st->cpu * 100, budget * 100,
						 u[i].fraction * 100);
				else if (worth && u[i].fraction >= 1)
					log_info("%s%s%s%s within the budget of %g%% again: "
						 "attached all the time", PROBE(v[i]), v[i].func,
						 budget * 100);
				st->fraction = u[i].fraction;
			}
		}
		cost += st->cpu * (st->fraction ? st->fraction : 1);
	}
	free(u);
	return cost;
}
