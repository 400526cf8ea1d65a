// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * filters: known calls for --if and --on-change (test_filters.py).
 *   ints      pick(a, b) for a = 0..9, b = 10 * a; pick returns a * a
 *   reqs      handle(&req) for 6 requests: method "GET" / "POST" / "PUT",
 *             len 1..6; returns len
 *   change    level(v) for v = 1, 1, 2, 2, 2, 3
 *   sleep     nap(ms) for ms = 1, 30, 2, 40: calls longer than 20 ms are 2
 * Built without DWARF too (filters_nodwarf): arg0 still works.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

struct hdr {
	int kind;
	unsigned short flags;
};

struct req {
	const char *method;
	long len;
	struct hdr hdr;
	char tag[8];
};

__attribute__((noinline)) int pick(int a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a * a + (int)(b - 10 * a);
}

__attribute__((noinline)) long handle(struct req *r)
{
	__asm__ volatile("" ::: "memory");
	return r->len;
}

__attribute__((noinline)) int level(int v)
{
	__asm__ volatile("" ::: "memory");
	return v;
}

__attribute__((noinline)) int nap(int ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)ms * 1000000L };

	nanosleep(&ts, NULL);
	return ms;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ints";
	long sum = 0;

	if (!strcmp(mode, "ints")) {
		for (int a = 0; a < 10; a++)
			sum += pick(a, 10L * a);
	} else if (!strcmp(mode, "reqs")) {
		static const char *methods[] = { "GET", "POST", "GET", "PUT", "GET", "POST" };
		for (int i = 0; i < 6; i++) {
			struct req r = { .method = methods[i], .len = i + 1,
					 .hdr = { .kind = i % 3, .flags = (unsigned short)(i * 100) } };

			snprintf(r.tag, sizeof(r.tag), "t%d", i);
			sum += handle(&r);
		}
	} else if (!strcmp(mode, "change")) {
		static const int vs[] = { 1, 1, 2, 2, 2, 3 };
		for (int i = 0; i < 6; i++)
			sum += level(vs[i]);
	} else if (!strcmp(mode, "sleep")) {
		static const int ms[] = { 1, 30, 2, 40 };
		for (int i = 0; i < 4; i++)
			sum += nap(ms[i]);
	} else {
		fprintf(stderr, "filters: unknown mode %s\n", mode);
		return 2;
	}
	printf("sum %ld\n", sum);
	return 0;
}
