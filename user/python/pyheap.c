// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyheap.c: see pyheap.h. */
#include <errno.h>
#include "proc/procmem.h"
#include "python/pyheap.h"

/* A list of more than this is taken for a loop (a list read while it
 * changed): the walk stops there. */
#define PYHEAP_MAX_OBJECTS (64u << 20)

int pyheap__objects(pid_t pid, const struct py_layout *l, uint64_t interp, pyheap_obj_fn fn,
		    void *ctx, uint64_t *seen)
{
	uint64_t gc = interp + l->interp_gc, heads[4];
	int32_t collecting = 0;
	int err;

	*seen = 0;
	err = procmem__read(pid, gc + l->gc_collecting, &collecting, 4);
	if (err)
		return err;
	if (collecting)
		return -EAGAIN;
	/* generations[3], then a pointer (generation0), then the permanent one */
	for (int g = 0; g < 3; g++)
		heads[g] = gc + l->gc_generations + (uint64_t)g * l->gc_generation_size;
	heads[3] = gc + l->gc_generations + 3ull * l->gc_generation_size + 8;
	for (int g = 0; g < 4; g++) {
		/* PyGC_Head {_gc_next, _gc_prev} precedes each object; the low
		 * bits of a link are flags */
		uint64_t node = procmem__ptr(pid, heads[g]) & ~3ull;

		for (uint32_t k = 0; node && node != heads[g] && k < PYHEAP_MAX_OBJECTS; k++) {
			uint64_t n[4];

			if (procmem__read(pid, node, n, sizeof(n)))
				break;
			(*seen)++;
			/* n: next, prev, then the object: refcount, type */
			err = fn(ctx, node + 16, n[3]);
			if (err)
				return err;
			node = n[0] & ~3ull;
		}
	}
	return 0;
}

struct funcs {
	pid_t pid;
	const struct py_layout *l;
	uint64_t func_type;
	pyheap_fn fn;
	void *ctx;
};

static int each_func(void *ctx, uint64_t obj, uint64_t type)
{
	struct funcs *w = ctx;
	uint64_t f[2];

	if (type != w->func_type ||
	    procmem__read(w->pid, obj + w->l->bpf.func_code, &f[0], 8) ||
	    procmem__read(w->pid, obj + w->l->bpf.func_vectorcall, &f[1], 8))
		return 0;
	return w->fn(w->ctx, obj, f[0], f[1]);
}

int pyheap__functions(pid_t pid, const struct py_layout *l, uint64_t interp, uint64_t func_type,
		      pyheap_fn fn, void *ctx, uint64_t *seen)
{
	struct funcs w = { pid, l, func_type, fn, ctx };

	return pyheap__objects(pid, l, interp, each_func, &w, seen);
}
