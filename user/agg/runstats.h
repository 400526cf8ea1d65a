/*
 * runstats.h: one value's statistics over runs (`cmon stats`): mean,
 * sample standard deviation, min, max, and the decimal significant digits
 * the runs agree on,
 *
 *     s = -log10(sigma / |mu|)
 *
 * capped at the precision of the value's type (runstats__type_digits) and
 * at 0 from below; "all" (RUNSTATS_ALL) when every run has the identical
 * value.  Worked example in README.md (cmon stats).
 */
#ifndef CMON_RUNSTATS_H
#define CMON_RUNSTATS_H

#include <stdbool.h>
#include <stddef.h>

#define RUNSTATS_ALL (-1.0) /* every run identical */
#define RUNSTATS_NA (-2.0)  /* one run only: nothing to compare */

/* In long double (64-bit mantissa, exponents to 1e±4932): every 64-bit
 * integer is exact, and the squares of doubles near 1e-300 or 1e300 do not
 * underflow or overflow. */
struct runstats {
	size_t n;
	long double mean, sd, min, max;
	double digits; /* RUNSTATS_ALL, RUNSTATS_NA, or 0..cap */
};

/* V[0..N) (N >= 1); IDENTICAL: the runs' values are exactly the same (the
 * caller compares them in their own type).  CAP: runstats__type_digits. */
void runstats__compute(const long double *v, size_t n, bool identical, double cap,
		       struct runstats *out);

/* Decimal digits a type holds: log10(2^mantissa bits) for floating types
 * (float 7.22, double 15.95, long double 19.27), log10(2^bits) for
 * integers.  C is a C type name ("const double", "uint16_t", "long int") or
 * a numpy dtype ("<f4", "|u1"); NULL or unknown: INTEGER ? 19.27 : 15.95. */
double runstats__type_digits(const char *c, bool integer);

#endif
