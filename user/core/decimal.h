/*
 * decimal.h: integers in decimal, written through a plain cursor (the
 * caller has made room for DECIMAL_MAX bytes): the writers' columns and the
 * typed values' numbers.  Two digits per division halves the divisions.
 */
#ifndef CMON_DECIMAL_H
#define CMON_DECIMAL_H

#include <stdint.h>
#include <string.h>

/* Room for any 64-bit integer in decimal, sign included. */
#define DECIMAL_MAX 20

/* "00" "01" .. "99" */
extern const char decimal__digits2[200];

static inline unsigned decimal__ndigits(uint64_t v)
{
	unsigned n = 1;

	for (;;) {
		if (v < 10)
			return n;
		if (v < 100)
			return n + 1;
		if (v < 1000)
			return n + 2;
		if (v < 10000)
			return n + 3;
		v /= 10000;
		n += 4;
	}
}

/* Write V at P (at most 20 bytes, no NUL); returns the end. */
static inline char *decimal__u64(char *p, uint64_t v)
{
	char *end = p + decimal__ndigits(v), *q = end;

	while (v >= 100) {
		unsigned i = (unsigned)(v % 100) * 2;

		v /= 100;
		q -= 2;
		memcpy(q, decimal__digits2 + i, 2);
	}
	if (v >= 10)
		memcpy(q - 2, decimal__digits2 + v * 2, 2);
	else
		q[-1] = (char)('0' + v);
	return end;
}

/* Signed: INT64_MIN works because the negation is done unsigned. */
static inline char *decimal__i64(char *p, int64_t v)
{
	uint64_t u = (uint64_t)v;

	if (v < 0) {
		*p++ = '-';
		u = 0 - u;
	}
	return decimal__u64(p, u);
}

#endif
