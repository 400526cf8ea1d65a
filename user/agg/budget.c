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

void budget_cost__add(struct budget_cost *c, double wall_ns, double cpu_ns, double calls)
{
	double det;

	if (!(wall_ns > 0) || cpu_ns < 0 || calls < 0)
		return;
	c->w = c->w * BUDGET_COST_DECAY + wall_ns;
	c->c = c->c * BUDGET_COST_DECAY + calls;
	c->y = c->y * BUDGET_COST_DECAY + cpu_ns;
	c->q = c->q * BUDGET_COST_DECAY + calls * calls / wall_ns;
	c->p = c->p * BUDGET_COST_DECAY + calls * cpu_ns / wall_ns;
	c->n++;
	/* The normal equations: W a + C b = Y, C a + Q b = P.  Their
	 * determinant over W Q is small when every stretch had the same
	 * rate of calls: a and b cannot be told apart then. */
	det = c->w * c->q - c->c * c->c;
	if (c->n < BUDGET_COST_MIN_SAMPLES || !(det > 0.05 * c->w * c->q))
		return;
	c->per_call_ns = (c->w * c->p - c->c * c->y) / det;
	c->base = (c->y - c->c * c->per_call_ns) / c->w;
	if (!(c->per_call_ns > 0))
		c->per_call_ns = 0; /* not a cost: not known */
}

double budget_cost__price(const struct budget_cost *c, double calib_ns)
{
	if (!(c->per_call_ns > 0))
		return calib_ns;
	if (!(calib_ns > 0))
		return c->per_call_ns;
	/* Too cheap to be believed: a process busy all the time pays its
	 * probes in work not done, not in more CPU, and reads as free. */
	if (c->per_call_ns < BUDGET_COST_LOW * calib_ns)
		return calib_ns;
	return fmin(c->per_call_ns, BUDGET_COST_HIGH * calib_ns);
}

static const char *const span_name[] = { "attached", "detached", "attaching", "detaching" };

/* F's stretches since the last round, into its measured cost. */
static void take_samples(const struct budget_item *it, struct budget_fn *st)
{
	struct duty_sample s[DUTY_SAMPLES];
	size_t n = duty__samples(it->duty, it->func_id, s, DUTY_SAMPLES);

	for (size_t k = 0; k < n; k++) {
		budget_cost__add(&st->measured, (double)s[k].wall_ns, (double)s[k].cpu_ns,
				 (double)s[k].calls);
		log_debug("budget: %s: %s %.3f ms, pid %u CPU %.3f ms, %llu calls; a call "
			  "%.0f ns measured", it->func, span_name[s[k].span], (double)s[k].wall_ns / 1e6,
			  s[k].tgid, (double)s[k].cpu_ns / 1e6, (unsigned long long)s[k].calls,
			  st->measured.per_call_ns);
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
	if (!l->at_ns) {
		/* the calls before the first round (a process that started
		 * calling before it): no time known to set against them */
		l->debt += spent_s;
	} else if (now_ns > l->at_ns) {
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
			/* its calls so far are billed: they were made whole
			 * (BILLED is where its owner's counting starts) */
			st->fraction = 1;
		}
		take_samples(&v[i], st);
		st->calib_ns = v[i].cost_ns;
		st->cost_ns = budget_cost__price(&st->measured, v[i].cost_ns);
		/* what its calls since the last round cost, each one trapped */
		if (v[i].seen >= st->billed)
			spent += (double)(v[i].seen - st->billed) * st->cost_ns / 1e9;
		st->billed = v[i].seen;
		duty__stats(v[i].duty, v[i].func_id, &ds);
		budget_meter__update(&st->meter, v[i].seen, ds.attached_ns);
		if (st->meter.have)
			st->cpu = st->meter.rate * st->cost_ns / 1e9;
		else if (led)
			led->metering = true;
		u[i].cpu = st->cpu;
	}
	if (led) {
		level = budget_ledger__round(led, spent, clock__mono_ns(), budget);
		log_debug("budget: a round: %.3f ms spent, %.3f ms owed: keeping to %.3f%%",
			  spent * 1e3, led->debt * 1e3, level * 100);
	}
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
