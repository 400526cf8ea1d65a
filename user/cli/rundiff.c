// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rundiff.c: see rundiff.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agg/compare.h"
#include "cli/rundiff.h"
#include "cli/store_cli.h"
#include "core/grow.h"
#include "core/log.h"

static int read_side(struct cmon_store *s, const char *name, struct rundiff_side *d)
{
	struct cmon_iter *it = NULL;
	struct cmon_call *c = NULL;
	int r;

	if (cmon_store_calls(s, name, 1, &it))
		return 1;
	d->present = true;
	while ((r = cmon_iter_next(it, &c)) == 1) {
		d->calls++;
		if (c->rss_entry != CMON_NONE && c->rss_exit != CMON_NONE)
			d->rss += (int64_t)(c->rss_exit - c->rss_entry);
		if (c->latency_ns != CMON_NONE) {
			if (GROW(d->lat, d->n, d->cap, 64)) {
				cmon_call_free(c);
				cmon_iter_free(it);
				return -ENOMEM;
			}
			d->lat[d->n++] = c->latency_ns;
		}
		cmon_call_free(c);
	}
	cmon_iter_free(it);
	if (r < 0)
		return 1;
	compare__sort(d->lat, d->n);
	return 0;
}

/* Whether store S has a function named NAME: 1, 0, -errno. */
static int has_function(struct cmon_store *s, const char *name)
{
	const struct cmon_function *fs;
	size_t nf;
	int has = 0;

	if (cmon_store_functions(s, &fs, &nf)) {
		log_error("%s", cmon_store_error(s));
		return -EIO;
	}
	for (size_t k = 0; k < nf && !has; k++) {
		char *n = store_cli__lookup_name(fs, nf, k);

		if (!n)
			return -ENOMEM;
		has = !strcmp(n, name);
		free(n);
	}
	return has;
}

static void judge(struct rundiff_func *f)
{
	uint64_t ma, mb;

	f->p = NAN;
	if (!f->a.present || !f->b.present) {
		f->verdict = f->a.present ? RUNDIFF_ONLY_A : RUNDIFF_ONLY_B;
		return;
	}
	if (f->a.n < 2 || f->b.n < 2) {
		f->verdict = RUNDIFF_FEW;
		return;
	}
	f->p = compare__rank_test(f->a.lat, f->a.n, f->b.lat, f->b.n);
	ma = compare__quantile(f->a.lat, f->a.n, 0.5);
	mb = compare__quantile(f->b.lat, f->b.n, 0.5);
	if (f->p < RUNDIFF_ALPHA && ma != mb)
		f->verdict = mb > ma ? RUNDIFF_SLOWER : RUNDIFF_FASTER;
	else if (f->p < RUNDIFF_ALPHA)
		f->verdict = RUNDIFF_SPREAD;
	else
		f->verdict = RUNDIFF_SAME;
}

/* NAME's two sides read and judged, appended to D. */
static int add_function(struct cmon_store **st, char *name, struct rundiff *d)
{
	struct rundiff_func *f;
	int err = 0;

	if (GROW(d->funcs, d->n, d->cap, 16))
		return -ENOMEM;
	f = &d->funcs[d->n++];
	memset(f, 0, sizeof(*f));
	f->name = name;
	for (int i = 0; i < 2 && !err; i++) {
		struct rundiff_side *side = i ? &f->b : &f->a;

		int has = has_function(st[i], name);

		if (has < 0) {
			err = has == -EIO ? 1 : has; /* -EIO: said */
			break;
		}
		if (has && (err = read_side(st[i], name, side)) == 1)
			log_error("%s", cmon_store_error(st[i]));
	}
	judge(f);
	return err;
}

int rundiff__read(struct cmon_store *a, struct cmon_store *b, struct rundiff *d)
{
	struct cmon_store *st[2] = { a, b };
	int err = 0;

	memset(d, 0, sizeof(*d));
	/* A's functions in its order, then those only B has */
	for (int i = 0; i < 2 && !err; i++) {
		const struct cmon_function *fs;
		size_t nf;

		if (cmon_store_functions(st[i], &fs, &nf)) {
			log_error("%s", cmon_store_error(st[i]));
			return 1;
		}
		for (size_t k = 0; k < nf && !err; k++) {
			char *name = store_cli__lookup_name(fs, nf, k);
			int in_a = 0;

			if (!name)
				return -ENOMEM;
			if (i)
				in_a = has_function(st[0], name);
			if (in_a < 0)
				err = in_a == -EIO ? 1 : in_a;
			if (!err && !in_a) {
				err = add_function(st, name, d);
				name = NULL; /* D's now */
			}
			free(name);
		}
	}
	return err;
}

void rundiff__release(struct rundiff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->funcs[i].name);
		free(d->funcs[i].a.lat);
		free(d->funcs[i].b.lat);
	}
	free(d->funcs);
	memset(d, 0, sizeof(*d));
}

uint64_t rundiff__quantile(const struct rundiff_side *s, double p)
{
	return s->n ? compare__quantile(s->lat, s->n, p) : 0;
}

void rundiff__words(const struct rundiff_func *f, char *buf, size_t cap)
{
	size_t n = f->a.n + f->b.n;

	switch (f->verdict) {
	case RUNDIFF_ONLY_A:
	case RUNDIFF_ONLY_B: {
		uint64_t c = f->a.present ? f->a.calls : f->b.calls;

		snprintf(buf, cap, "only in %s (%llu call%s)", f->a.present ? "A" : "B",
			 (unsigned long long)c, c == 1 ? "" : "s");
		break;
	}
	case RUNDIFF_FEW:
		snprintf(buf, cap, "too few calls returned to tell (%zu in A, %zu in B)", f->a.n,
			 f->b.n);
		break;
	case RUNDIFF_SLOWER:
	case RUNDIFF_FASTER:
		snprintf(buf, cap, "%s in B, beyond the noise (rank test over %zu calls: p = %.2g)",
			 f->verdict == RUNDIFF_SLOWER ? "slower" : "faster", n, f->p);
		break;
	case RUNDIFF_SPREAD:
		snprintf(buf, cap, "the same median, another spread in B (rank test over %zu calls: "
			 "p = %.2g)", n, f->p);
		break;
	case RUNDIFF_SAME:
		snprintf(buf, cap, "no change beyond the noise (rank test over %zu calls: p = %.2g)",
			 n, f->p);
		break;
	}
}
