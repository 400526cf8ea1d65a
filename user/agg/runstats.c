// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include <string.h>
#include "runstats.h"

void runstats__compute(const long double *v, size_t n, bool identical, double cap,
		       struct runstats *out)
{
	long double sum = 0, ss = 0, d;

	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	out->min = out->max = v[0];
	/* Sums of the differences from the first value: exact for integers
	 * near 2^64, whose own sum would not be. */
	for (size_t i = 0; i < n; i++) {
		sum += v[i] - v[0];
		if (v[i] < out->min)
			out->min = v[i];
		if (v[i] > out->max)
			out->max = v[i];
	}
	d = sum / (long double)n;
	out->mean = v[0] + d;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - v[0] - d) * (v[i] - v[0] - d);
	out->sd = n > 1 ? sqrtl(ss / (long double)(n - 1)) : 0;
	if (n < 2) {
		out->digits = RUNSTATS_NA;
	} else if (identical) {
		out->digits = RUNSTATS_ALL;
	} else if (out->mean == 0 || out->sd == 0) {
		/* Spread around zero: no digit agrees.  sd 0 with different
		 * values: differences below the resolution of the mean. */
		out->digits = out->mean == 0 ? 0 : cap;
	} else {
		double s = (double)-log10l(out->sd / fabsl(out->mean));

		out->digits = s <= 0 ? 0 : s > cap ? cap : s; /* 0, not -0 */
	}
}

static double bits_digits(int bits) { return bits * log10(2.0); }

double runstats__type_digits(const char *c, bool integer)
{
	static const struct { const char *name; int bits; } dtypes[] = {
		{ "f2", 11 }, { "f4", 24 }, { "f8", 53 }, { "f16", 64 }, { "i1", 7 }, { "u1", 8 },
		{ "i2", 15 }, { "u2", 16 }, { "i4", 31 }, { "u4", 32 }, { "i8", 63 }, { "u8", 64 },
		{ "b1", 1 },
	};

	if (!c || !*c)
		return bits_digits(integer ? 64 : 53);
	if (strchr("<>|=", c[0])) {
		for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
			if (!strcmp(c + 1, dtypes[i].name))
				return bits_digits(dtypes[i].bits);
		return bits_digits(integer ? 64 : 53);
	}
	if (strstr(c, "*"))
		return bits_digits(64);
	if (strstr(c, "long double"))
		return bits_digits(64);
	if (strstr(c, "double"))
		return bits_digits(53);
	if (strstr(c, "float"))
		return bits_digits(24);
	if (strstr(c, "int8") || strstr(c, "char") || strstr(c, "_Bool") || strstr(c, "bool"))
		return bits_digits(strstr(c, "_Bool") || strstr(c, "bool") ? 1 : 8);
	if (strstr(c, "int16") || strstr(c, "short"))
		return bits_digits(16);
	if (strstr(c, "int32"))
		return bits_digits(32);
	if (strstr(c, "long") || strstr(c, "int64") || strstr(c, "size_t"))
		return bits_digits(64);
	if (strstr(c, "int") || strstr(c, "unsigned") || strstr(c, "enum"))
		return bits_digits(32);
	return bits_digits(integer ? 64 : 53);
}
