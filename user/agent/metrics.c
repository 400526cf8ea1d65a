// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * metrics.c: the Prometheus text exposition (format 0.0.4): escaping,
 * values, families, and the cap on per-process labels.
 */
#include <errno.h>
#include <math.h> /* isnan, isinf: macros, no libm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "agent/metrics.h"

/* ---------------------------------------------------------------- mbuf */

static int mbuf__reserve(struct mbuf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->err)
		return b->err;
	if (extra > SIZE_MAX / 2 - b->len) {
		b->err = -ENOMEM;
		return b->err;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->buf, cap);
	if (!p) {
		b->err = -ENOMEM;
		return b->err;
	}
	b->buf = p;
	b->cap = cap;
	return 0;
}

void mbuf__append(struct mbuf *b, const char *s, size_t n)
{
	if (mbuf__reserve(b, n))
		return;
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = 0;
}

void mbuf__puts(struct mbuf *b, const char *s) { mbuf__append(b, s, strlen(s)); }

void mbuf__printf(struct mbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = -EINVAL;
		return;
	}
	if (mbuf__reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void mbuf__reset(struct mbuf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->buf)
		b->buf[0] = 0;
}

void mbuf__release(struct mbuf *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

char *mbuf__take(struct mbuf *b, size_t *len)
{
	char *s = b->buf;

	if (!s)
		s = strdup("");
	if (len)
		*len = b->len;
	memset(b, 0, sizeof(*b));
	return s;
}

/* ---------------------------------------------------------------- escaping */

/* Length of the valid UTF-8 sequence at S (1..4), or 0 when S does not
 * start one (overlong forms, surrogates and values past U+10FFFF are not
 * valid). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/* Escape S: backslash and newline always, double quote when QUOTE; invalid
 * UTF-8 bytes become U+FFFD (the format is UTF-8: a scraper rejects the
 * whole exposition otherwise). */
static void escape(struct mbuf *b, const char *s, bool quote)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t run = 0, n;

		/* Copy runs of plain bytes at once. */
		while (p[run] && p[run] != '\\' && p[run] != '\n' && !(quote && p[run] == '"') &&
		       p[run] < 0x80)
			run++;
		if (run) {
			mbuf__append(b, (const char *)p, run);
			p += run;
			continue;
		}
		if (*p == '\\') {
			mbuf__puts(b, "\\\\");
			p++;
		} else if (*p == '\n') {
			mbuf__puts(b, "\\n");
			p++;
		} else if (*p == '"') {
			mbuf__puts(b, "\\\"");
			p++;
		} else if ((n = utf8_len(p)) != 0) {
			mbuf__append(b, (const char *)p, n);
			p += n;
		} else {
			mbuf__puts(b, "\xef\xbf\xbd");
			p++;
		}
	}
}

void metrics__escape_label_value(struct mbuf *b, const char *s) { escape(b, s, true); }
void metrics__escape_help(struct mbuf *b, const char *s) { escape(b, s, false); }

void metrics__format_double(struct mbuf *b, double v)
{
	char tmp[40];

	if (isnan(v)) {
		mbuf__puts(b, "NaN");
		return;
	}
	if (isinf(v)) {
		mbuf__puts(b, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	/* Integral values within 2^53 print as integers. */
	if (v > -9007199254740992.0 && v < 9007199254740992.0 && v == (double)(int64_t)v) {
		mbuf__printf(b, "%lld", (long long)v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	mbuf__puts(b, tmp);
}

/* ---------------------------------------------------------------- families */

const char *metric_type__name(enum metric_type t)
{
	switch (t) {
	case METRIC_COUNTER:
		return "counter";
	case METRIC_GAUGE:
		return "gauge";
	case METRIC_HISTOGRAM:
		return "histogram";
	}
	return "untyped";
}

struct family {
	char *name;
	char *help;
	enum metric_type type;
	struct mbuf samples; /* rendered sample lines */
	size_t n_series;
};

struct expo {
	struct family *fams;
	size_t n_fams, cap_fams;
	size_t n_series;
};

struct expo *expo__new(void) { return calloc(1, sizeof(struct expo)); }

void expo__free(struct expo *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_fams; i++) {
		free(e->fams[i].name);
		free(e->fams[i].help);
		mbuf__release(&e->fams[i].samples);
	}
	free(e->fams);
	free(e);
}

static struct family *find_family(const struct expo *e, const char *name)
{
	for (size_t i = 0; i < e->n_fams; i++)
		if (!strcmp(e->fams[i].name, name))
			return &e->fams[i];
	return NULL;
}

int expo__family(struct expo *e, const char *name, enum metric_type type, const char *help)
{
	struct family *f = find_family(e, name);

	if (f)
		return f->type == type ? 0 : -EEXIST;
	if (GROW(e->fams, e->n_fams, e->cap_fams, 16))
		return -ENOMEM;
	f = &e->fams[e->n_fams];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	f->help = strdup(help ? help : "");
	f->type = type;
	if (!f->name || !f->help) {
		free(f->name);
		free(f->help);
		return -ENOMEM;
	}
	e->n_fams++;
	return 0;
}

/* NAME{l1="v1",...,EXTRA_NAME="EXTRA_VALUE"} (no braces when no label). */
static void put_series(struct mbuf *b, const char *name, const char *suffix,
		       const struct metric_label *labels, size_t n, const char *extra_name,
		       const char *extra_value)
{
	bool any = n || extra_name;

	mbuf__puts(b, name);
	mbuf__puts(b, suffix);
	if (!any)
		return;
	mbuf__append(b, "{", 1);
	for (size_t i = 0; i < n; i++) {
		if (i)
			mbuf__append(b, ",", 1);
		mbuf__puts(b, labels[i].name);
		mbuf__append(b, "=\"", 2);
		metrics__escape_label_value(b, labels[i].value ? labels[i].value : "");
		mbuf__append(b, "\"", 1);
	}
	if (extra_name) {
		if (n)
			mbuf__append(b, ",", 1);
		mbuf__puts(b, extra_name);
		mbuf__append(b, "=\"", 2);
		metrics__escape_label_value(b, extra_value);
		mbuf__append(b, "\"", 1);
	}
	mbuf__append(b, "}", 1);
}

static int finish_line(struct expo *e, struct family *f, size_t lines)
{
	mbuf__append(&f->samples, "\n", 1);
	if (f->samples.err)
		return f->samples.err;
	f->n_series += lines;
	e->n_series += lines;
	return 0;
}

int expo__add(struct expo *e, const char *family, const struct metric_label *labels,
	      size_t n_labels, double value)
{
	struct family *f = find_family(e, family);

	if (!f)
		return -ENOENT;
	put_series(&f->samples, f->name, "", labels, n_labels, NULL, NULL);
	mbuf__append(&f->samples, " ", 1);
	metrics__format_double(&f->samples, value);
	return finish_line(e, f, 1);
}

int expo__add_u64(struct expo *e, const char *family, const struct metric_label *labels,
		  size_t n_labels, uint64_t value)
{
	struct family *f = find_family(e, family);

	if (!f)
		return -ENOENT;
	put_series(&f->samples, f->name, "", labels, n_labels, NULL, NULL);
	mbuf__printf(&f->samples, " %llu", (unsigned long long)value);
	return finish_line(e, f, 1);
}

int expo__add_hist(struct expo *e, const char *family, const struct metric_label *labels,
		   size_t n_labels, const char *const *le, const uint64_t *cum, size_t n_bounds,
		   bool have_sum, double sum, uint64_t count)
{
	struct family *f = find_family(e, family);
	struct mbuf *b;

	if (!f)
		return -ENOENT;
	if (f->type != METRIC_HISTOGRAM)
		return -EINVAL;
	b = &f->samples;
	for (size_t i = 0; i < n_bounds; i++) {
		put_series(b, f->name, "_bucket", labels, n_labels, "le", le[i]);
		mbuf__printf(b, " %llu\n", (unsigned long long)cum[i]);
	}
	put_series(b, f->name, "_bucket", labels, n_labels, "le", "+Inf");
	mbuf__printf(b, " %llu\n", (unsigned long long)count);
	if (have_sum) {
		put_series(b, f->name, "_sum", labels, n_labels, NULL, NULL);
		mbuf__append(b, " ", 1);
		metrics__format_double(b, sum);
		mbuf__append(b, "\n", 1);
	}
	put_series(b, f->name, "_count", labels, n_labels, NULL, NULL);
	mbuf__printf(b, " %llu", (unsigned long long)count);
	return finish_line(e, f, n_bounds + 2 + (have_sum ? 1 : 0));
}

size_t expo__series(const struct expo *e) { return e->n_series; }

int expo__render(const struct expo *e, struct mbuf *out)
{
	for (size_t i = 0; i < e->n_fams; i++) {
		const struct family *f = &e->fams[i];

		if (!f->n_series)
			continue;
		mbuf__printf(out, "# HELP %s ", f->name);
		metrics__escape_help(out, f->help);
		mbuf__printf(out, "\n# TYPE %s %s\n", f->name, metric_type__name(f->type));
		mbuf__append(out, f->samples.buf, f->samples.len);
	}
	return out->err;
}

/* ---------------------------------------------------------------- pid cap */

/* A sorted set of pids. */
struct pidset {
	uint32_t *v;
	size_t n, cap;
};

static size_t pidset_pos(const struct pidset *s, uint32_t pid, bool *found)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->n && s->v[lo] == pid;
	return lo;
}

static bool pidset_has(const struct pidset *s, uint32_t pid)
{
	bool found;

	pidset_pos(s, pid, &found);
	return found;
}

static int pidset_add(struct pidset *s, uint32_t pid)
{
	bool found;
	size_t at = pidset_pos(s, pid, &found);

	if (found)
		return 0;
	if (GROW(s->v, s->n, s->cap, 16))
		return -ENOMEM;
	memmove(s->v + at + 1, s->v + at, (s->n - at) * sizeof(*s->v));
	s->v[at] = pid;
	s->n++;
	return 0;
}

struct pid_cap {
	uint32_t max;
	struct pidset admitted; /* labelled by their own pid */
	struct pidset routed;   /* summed into "other" until forgotten */
};

struct pid_cap *pid_cap__new(uint32_t max)
{
	struct pid_cap *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->max = max;
	return c;
}

void pid_cap__free(struct pid_cap *c)
{
	if (!c)
		return;
	free(c->admitted.v);
	free(c->routed.v);
	free(c);
}

bool pid_cap__admit(struct pid_cap *c, uint32_t pid)
{
	if (pidset_has(&c->admitted, pid))
		return true;
	if (pidset_has(&c->routed, pid))
		return false;
	if (c->admitted.n < c->max && !pidset_add(&c->admitted, pid))
		return true;
	/* Out of memory for the routed set only costs a label flip later. */
	pidset_add(&c->routed, pid);
	return false;
}

size_t pid_cap__sweep(struct pid_cap *c, pid_alive_fn alive, void *ctx, uint32_t *freed,
		      size_t max_freed)
{
	size_t n = 0, keep = 0;

	for (size_t i = 0; i < c->admitted.n; i++) {
		uint32_t pid = c->admitted.v[i];

		if (n < max_freed && !alive(ctx, pid) && !pidset_add(&c->routed, pid)) {
			freed[n++] = pid;
			continue;
		}
		c->admitted.v[keep++] = pid;
	}
	c->admitted.n = keep;
	return n;
}

void pid_cap__forget_routed(struct pid_cap *c) { c->routed.n = 0; }

size_t pid_cap__used(const struct pid_cap *c) { return c->admitted.n; }

struct name_cap {
	uint32_t max;
	char **v; /* sorted, n <= max */
	size_t n, cap;
};

struct name_cap *name_cap__new(uint32_t max)
{
	struct name_cap *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->max = max;
	return c;
}

void name_cap__free(struct name_cap *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->v);
	free(c);
}

/* Where NAME is or goes in C's sorted names. */
static size_t name_pos(const struct name_cap *c, const char *name, bool *found)
{
	size_t lo = 0, hi = c->n;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(c->v[mid], name);

		if (!d) {
			*found = true;
			return mid;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool name_cap__has(const struct name_cap *c, const char *name)
{
	bool found;

	name_pos(c, name, &found);
	return found;
}

bool name_cap__admit(struct name_cap *c, const char *name)
{
	bool found;
	size_t lo = name_pos(c, name, &found);
	char *copy;

	if (found)
		return true;
	if (c->n >= c->max)
		return false;
	if (GROW(c->v, c->n, c->cap, 16))
		return false;
	copy = strdup(name);
	if (!copy)
		return false;
	memmove(c->v + lo + 1, c->v + lo, (c->n - lo) * sizeof(*c->v));
	c->v[lo] = copy;
	c->n++;
	return true;
}

size_t name_cap__used(const struct name_cap *c) { return c->n; }
size_t name_cap__max(const struct name_cap *c) { return c->max; }
