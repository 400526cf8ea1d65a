/*
 * metrics.h: the Prometheus text exposition format (version 0.0.4) and the
 * cap on label cardinality.
 *
 * An exposition is built family by family, in any order: samples are
 * grouped under their family's HELP and TYPE lines when rendered, so probes
 * that share a metric name produce one family.  Label values are escaped
 * (\\, \", \n) and made valid UTF-8 (an invalid byte becomes U+FFFD); HELP
 * text is escaped (\\, \n).  Values are printed in the shortest form that
 * reads back as the same double (integers up to 2^64 exactly).
 */
#ifndef CMON_AGENT_METRICS_H
#define CMON_AGENT_METRICS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growable text buffer with a sticky error: append freely, check err once. */
struct mbuf {
	char *buf; /* NUL-terminated when len > 0 */
	size_t len, cap;
	int err;   /* 0 or -ENOMEM: the first failure */
};

void mbuf__append(struct mbuf *b, const char *s, size_t n);
void mbuf__puts(struct mbuf *b, const char *s);
void mbuf__printf(struct mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mbuf__reset(struct mbuf *b);   /* len = 0, err = 0, memory kept */
void mbuf__release(struct mbuf *b); /* frees, back to {0} */
/* Takes the text (NUL-terminated, "" when empty; caller frees); B is reset. */
char *mbuf__take(struct mbuf *b, size_t *len);

/* Escapers (append to B). */
void metrics__escape_label_value(struct mbuf *b, const char *s);
void metrics__escape_help(struct mbuf *b, const char *s);
/* Shortest decimal that reads back as V; "+Inf", "-Inf", "NaN". */
void metrics__format_double(struct mbuf *b, double v);

enum metric_type { METRIC_COUNTER = 0, METRIC_GAUGE, METRIC_HISTOGRAM };

const char *metric_type__name(enum metric_type t); /* "counter" "gauge" "histogram" */

struct metric_label {
	const char *name, *value;
};

struct expo;

struct expo *expo__new(void); /* NULL and errno */
void expo__free(struct expo *e);

/*
 * Declare family NAME (for a counter, NAME is what samples are named: it
 * should end in _total; for a histogram, the base of _bucket/_sum/_count).
 * Declaring it again with the same type is fine (the first HELP stays);
 * another type returns -EEXIST.  0, -EEXIST or -ENOMEM.
 */
int expo__family(struct expo *e, const char *name, enum metric_type type, const char *help);

/* One counter or gauge sample of a declared family.  Integral values print
 * exactly: use expo__add_u64 for counts. 0, -ENOENT (undeclared), -ENOMEM. */
int expo__add(struct expo *e, const char *family, const struct metric_label *labels,
	      size_t n_labels, double value);
int expo__add_u64(struct expo *e, const char *family, const struct metric_label *labels,
		  size_t n_labels, uint64_t value);

/*
 * One histogram: N_BOUNDS buckets with upper bounds LE (as they are to be
 * printed, increasing, without "+Inf") and cumulative counts CUM (each <=
 * the next, <= COUNT); then le="+Inf" (COUNT), _sum (SUM, omitted when
 * HAVE_SUM is false) and _count (COUNT).
 */
int expo__add_hist(struct expo *e, const char *family, const struct metric_label *labels,
		   size_t n_labels, const char *const *le, const uint64_t *cum, size_t n_bounds,
		   bool have_sum, double sum, uint64_t count);

/* Series (sample lines) added so far. */
size_t expo__series(const struct expo *e);

/* Append the exposition (families in declaration order) to OUT; a family
 * without samples is left out.  0 or -ENOMEM. */
int expo__render(const struct expo *e, struct mbuf *out);

/*
 * The cap on per-process labels.  The first MAX processes seen get a label
 * of their own; later ones are summed into pid="other".  A process keeps
 * the label it was given for as long as its counts are reported (a series
 * must never jump between its own label and "other": a counter would go
 * backwards).  When a labelled process has exited (pid_cap__sweep), its
 * slot is given back and its counts move into "other" for good; the caller
 * folds its carried-over values into "other" too.  pid_cap__forget_routed
 * is for when the source of the counts starts afresh (nothing reported
 * under the routed pids any more).  Memory: MAX admitted pids plus the
 * routed ones, which are bounded by what the source reports.
 */
struct pid_cap;

struct pid_cap *pid_cap__new(uint32_t max); /* NULL and errno */
void pid_cap__free(struct pid_cap *c);      /* NULL fine */

/* Does PID get a label of its own?  Decided at its first sight. */
bool pid_cap__admit(struct pid_cap *c, uint32_t pid);

/* Give back the slots of labelled processes for which ALIVE is false (at
 * most MAX_FREED of them, written to FREED); from now on they are routed
 * to "other".  Returns how many. */
typedef bool (*pid_alive_fn)(void *ctx, uint32_t pid);
size_t pid_cap__sweep(struct pid_cap *c, pid_alive_fn alive, void *ctx, uint32_t *freed,
		      size_t max_freed);

void pid_cap__forget_routed(struct pid_cap *c);
size_t pid_cap__used(const struct pid_cap *c); /* labelled processes */

/*
 * The cap on function labels: the first MAX functions seen get a label of
 * their own, later ones are summed into function="other" for good (a
 * function never goes away, so a slot is never given back).
 */
struct name_cap;

struct name_cap *name_cap__new(uint32_t max); /* NULL and errno */
void name_cap__free(struct name_cap *c);      /* NULL fine */
/* Does NAME get a label of its own?  Decided at its first sight while
 * there is room; -ENOMEM counts as no. */
bool name_cap__admit(struct name_cap *c, const char *name);
bool name_cap__has(const struct name_cap *c, const char *name); /* labelled already */
size_t name_cap__used(const struct name_cap *c);
size_t name_cap__max(const struct name_cap *c);

#endif
