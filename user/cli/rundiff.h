/*
 * rundiff.h: two capture stores compared function by function — calls,
 * p50/p90/p99 latency and RSS growth of run A beside run B, and whether
 * B's latencies differ beyond the noise (agg/compare's rank test).  One
 * set of figures: `cmon diff` prints them, `cmon report --diff` draws them.
 */
#ifndef CMON_RUNDIFF_H
#define CMON_RUNDIFF_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cmon_store;

/* Below this p-value the runs differ: one chance in a hundred that noise
 * alone parts them so. */
#define RUNDIFF_ALPHA 0.01

/* One function's calls in one run. */
struct rundiff_side {
	uint64_t *lat;     /* latencies of the calls that returned, sorted */
	size_t n, cap;
	uint64_t calls;    /* every call, returned or not */
	int64_t rss;       /* RSS growth over the calls (exit - entry) */
	bool present;
};

enum rundiff_verdict {
	RUNDIFF_ONLY_A,    /* a side lacks the function */
	RUNDIFF_ONLY_B,
	RUNDIFF_FEW,       /* fewer than 2 returned calls on a side */
	RUNDIFF_SLOWER,    /* beyond the noise, B's median above A's */
	RUNDIFF_FASTER,
	RUNDIFF_SPREAD,    /* beyond the noise, the same median */
	RUNDIFF_SAME,      /* no change beyond the noise */
};

struct rundiff_func {
	char *name;        /* as cmon ls names it: NAME or MODULE:NAME */
	struct rundiff_side a, b;
	enum rundiff_verdict verdict;
	double p;          /* the rank test's p-value (NAN: not run) */
};

struct rundiff {
	struct rundiff_func *funcs; /* A's functions in its order, then B's own */
	size_t n, cap;
};

/* Both runs read.  0; 1 after a store's error was said; -errno. */
int rundiff__read(struct cmon_store *a, struct cmon_store *b, struct rundiff *d);
void rundiff__release(struct rundiff *d);

/* The P-quantile of a side's latencies (0 with no returned call). */
uint64_t rundiff__quantile(const struct rundiff_side *s, double p);

/* The verdict in words, e.g. "slower in B, beyond the noise (rank test
 * over 200 calls: p = 3.1e-05)". */
void rundiff__words(const struct rundiff_func *f, char *buf, size_t cap);

#endif
