/*
 * decimal.h: integers in decimal, written through a plain cursor (the
 * caller has made room for DECIMAL_MAX bytes): the writers' columns and the
 * typed values' numbers, two digits a table lookup.
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

/* Exactly 8 digits of V (< 10^8) at P, leading zeros included: 32-bit
 * divisions by constants, two independent halves (no 64-bit chain). */
static inline char *decimal__8(char *p, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;

	memcpy(p, decimal__digits2 + 2 * (hi / 100), 2);
	memcpy(p + 2, decimal__digits2 + 2 * (hi % 100), 2);
	memcpy(p + 4, decimal__digits2 + 2 * (lo / 100), 2);
	memcpy(p + 6, decimal__digits2 + 2 * (lo % 100), 2);
	return p + 8;
}

/* V (< 10^8) without leading zeros. */
static inline char *decimal__u32_small(char *p, uint32_t v)
{
	unsigned n = v < 10000 ? (v < 100 ? (v < 10 ? 1 : 2) : (v < 1000 ? 3 : 4))
			       : (v < 1000000 ? (v < 100000 ? 5 : 6) : (v < 10000000 ? 7 : 8));
	char *end = p + n, *q = end;

	while (v >= 100) {
		q -= 2;
		memcpy(q, decimal__digits2 + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(q - 2, decimal__digits2 + 2 * v, 2);
	else
		q[-1] = (char)('0' + v);
	return end;
}

/* Write V at P (at most 20 bytes, no NUL); returns the end.  In chunks of
 * 8 digits: a 19-digit timestamp is two 64-bit divisions, not ten. */
static inline char *decimal__u64(char *p, uint64_t v)
{
	uint64_t hi;

	if (v < 100000000)
		return decimal__u32_small(p, (uint32_t)v);
	hi = v / 100000000;
	if (hi < 100000000) {
		p = decimal__u32_small(p, (uint32_t)hi);
	} else {
		p = decimal__u32_small(p, (uint32_t)(hi / 100000000));
		p = decimal__8(p, (uint32_t)(hi % 100000000));
	}
	return decimal__8(p, (uint32_t)(v % 100000000));
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
