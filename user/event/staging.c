// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "core/clock.h"
#include "core/grow.h"
#include "staging.h"

/* Records the window holds before it goes out whole, order or not: a
 * consumer that never catches up must not grow without bound (~40 MB). */
#define WINDOW_MAX (1u << 18)
/* How long a sweep waits for a program holding a batch (it holds it for a
 * record's time, ~100 ns, unless its task was preempted). */
#define HOLD_WAIT_NS 50000ull

struct staging {
	struct cmon_batch *slots; /* the map, mmapped */
	size_t map_bytes;
	int ncpus;
	struct cmon_call_rec *win; /* the window, in arrival order: win[head .. n) */
	size_t head, n, cap;
	struct order { uint64_t ns; size_t i; } *ord; /* delivery order, scratch */
	size_t ord_cap;
	struct cmon_call_rec *keep; /* the records that wait, scratch */
	size_t keep_cap;
	/* The last sweep's records: they join the window after what the ring
	 * buffer brought, being the newest of their CPUs (so the window of a
	 * thread that keeps to its CPU stays in order: no sort). */
	struct cmon_call_rec *swept;
	size_t n_swept;
};

struct staging *staging__new(int map_fd, int ncpus)
{
	struct staging *s = calloc(1, sizeof(*s));
	long page = sysconf(_SC_PAGESIZE);

	if (!s)
		return NULL;
	if (map_fd < 0)
		return s; /* a window alone (tests): nothing to sweep */
	s->ncpus = ncpus;
	s->swept = calloc((size_t)ncpus * CMON_BATCH, sizeof(*s->swept));
	if (!s->swept) {
		free(s);
		return NULL;
	}
	s->map_bytes = ((size_t)ncpus * sizeof(struct cmon_batch) + (size_t)page - 1) &
		       ~((size_t)page - 1);
	s->slots = mmap(NULL, s->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (s->slots == MAP_FAILED) {
		int err = errno;

		free(s->swept);
		free(s);
		errno = err;
		return NULL;
	}
	return s;
}

void staging__free(struct staging *s)
{
	if (!s)
		return;
	if (s->slots)
		munmap(s->slots, s->map_bytes);
	free(s->win);
	free(s->ord);
	free(s->keep);
	free(s->swept);
	free(s);
}

static int room(struct staging *s, size_t more)
{
	/* What went out is at the front: reuse it before growing. */
	if (s->head && s->n + more > s->cap) {
		memmove(s->win, s->win + s->head, (s->n - s->head) * sizeof(s->win[0]));
		s->n -= s->head;
		s->head = 0;
	}
	/* GROW makes room when its count reaches the capacity: doubling. */
	while (s->n + more > s->cap)
		if (GROW(s->win, s->cap, s->cap, 4096))
			return -ENOMEM;
	return 0;
}

/* Records in the window are cmon's own: their comm is made to end here,
 * once, so that they can be handed on as they are. */
static void terminate(struct cmon_call_rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		r[i].comm[CMON_COMM_LEN - 1] = 0;
}

int staging__add(struct staging *s, const struct cmon_call_rec *rec)
{
	if (room(s, 1))
		return -ENOMEM;
	s->win[s->n] = *rec;
	terminate(&s->win[s->n++], 1);
	return 0;
}

int staging__add_batch(struct staging *s, const struct cmon_batch *b)
{
	/* Full, or a thread's partial batch sent as it left its CPU. */
	uint32_t n = b->n <= CMON_BATCH ? b->n : 0;

	if (room(s, n))
		return -ENOMEM;
	memcpy(s->win + s->n, b->r, n * sizeof(b->r[0]));
	terminate(s->win + s->n, n);
	s->n += n;
	return 0;
}

/* The last sweep's records into the window. */
static int join_swept(struct staging *s)
{
	if (!s->n_swept)
		return 0;
	if (room(s, s->n_swept))
		return -ENOMEM;
	memcpy(s->win + s->n, s->swept, s->n_swept * sizeof(s->swept[0]));
	s->n += s->n_swept;
	s->n_swept = 0;
	return 0;
}

bool staging__hold(__u64 *busy, bool final)
{
	uint64_t give_up = 0;

	for (;;) {
		__u64 free_ = 0;

		if (__atomic_compare_exchange_n(busy, &free_, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
		if (!give_up)
			give_up = clock__mono_ns() + (final ? 100 * HOLD_WAIT_NS : HOLD_WAIT_NS);
		else if (clock__mono_ns() > give_up)
			return false;
		__builtin_ia32_pause();
	}
}

uint64_t staging__sweep(struct staging *s, bool final)
{
	uint64_t cutoff;

	/* A sweep not delivered yet (an error between): its records first. */
	if (join_swept(s))
		return 0;
	cutoff = clock__mono_ns();
	for (int c = 0; c < s->ncpus; c++) {
		struct cmon_batch *b = &s->slots[c];
		uint32_t n;

		if (!__atomic_load_n(&b->n, __ATOMIC_RELAXED))
			continue; /* staged after this look: the next sweep's */
		if (!staging__hold(&b->busy, final))
			continue; /* its holder was preempted: the next sweep */
		n = b->n;
		if (n > CMON_BATCH)
			n = 0; /* cannot be: the programs send a full batch at once */
		memcpy(s->swept + s->n_swept, b->r, n * sizeof(b->r[0]));
		terminate(s->swept + s->n_swept, n);
		s->n_swept += n;
		b->n = 0;
		__atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
	}
	return cutoff;
}

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i; /* arrival order: stable */
}

int staging__deliver(struct staging *s, uint64_t cutoff, staging_fn fn, void *ctx)
{
	struct cmon_call_rec *w;
	size_t n, kept = 0, i;
	bool sorted = true;
	int err = join_swept(s);

	if (err)
		return err;
	w = s->win + s->head;
	n = s->n - s->head;
	if (!n)
		return 0;
	if (n > WINDOW_MAX)
		cutoff = UINT64_MAX;
	for (i = 1; i < n && sorted; i++)
		sorted = w[i - 1].order_ns <= w[i].order_ns;
	if (sorted) {
		/* The usual case (one thread, or threads that stay on their
		 * CPUs between polls): a prefix goes out. */
		for (i = 0; i < n && w[i].order_ns < cutoff; i++) {
			err = fn(ctx, &w[i]);
			if (err) {
				i++;
				break;
			}
		}
		s->head += i;
		if (s->head == s->n)
			s->head = s->n = 0;
		return err;
	}
	if (n > s->ord_cap) {
		struct order *o = realloc(s->ord, n * sizeof(*o));

		if (!o)
			return -ENOMEM;
		s->ord = o;
		s->ord_cap = n;
	}
	for (i = 0; i < n; i++)
		s->ord[i] = (struct order){ w[i].order_ns, i };
	if (n > 1)
		qsort(s->ord, n, sizeof(s->ord[0]), cmp_order);
	for (i = 0; i < n && !err && w[s->ord[i].i].order_ns < cutoff; i++)
		err = fn(ctx, &w[s->ord[i].i]);
	/* What waits (the records after the cutoff, a poll's last moments),
	 * in time order, to the front of the window. */
	kept = n - i;
	if (kept > s->keep_cap) {
		struct cmon_call_rec *k = realloc(s->keep, kept * sizeof(*k));

		if (!k) /* out of memory: they go out now, in order */
			kept = 0;
		else
			s->keep = k, s->keep_cap = kept;
	}
	for (size_t j = 0; j < kept; j++)
		s->keep[j] = w[s->ord[i + j].i];
	for (; !kept && i < n && !err; i++)
		err = fn(ctx, &w[s->ord[i].i]);
	if (kept) /* keep is NULL until a drain first keeps records */
		memcpy(s->win, s->keep, kept * sizeof(s->win[0]));
	s->head = 0;
	s->n = kept;
	return err;
}

size_t staging__waiting(const struct staging *s) { return s->n - s->head + s->n_swept; }
