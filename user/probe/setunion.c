// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* setunion.c: merge resolved probe sets (deep copies: the union owns all). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "probe/setunion.h"

/* A copy of N elements of SIZE bytes at SRC (NULL: N is 0, or no memory). */
static void *copy_array(const void *src, size_t n, size_t size)
{
	void *p = n ? malloc(n * size) : NULL;

	if (p)
		memcpy(p, src, n * size);
	return p;
}

/* OUT (a copy of IN's fields) gets arrays of its own, each set even on
 * error (to a copy or NULL). */
static int copy_exits(const struct exit_plan *in, struct exit_plan *out)
{
	out->ret_offs = copy_array(in->ret_offs, in->n_ret, sizeof(*in->ret_offs));
	out->tail_offs = copy_array(in->tail_offs, in->n_tail, sizeof(*in->tail_offs));
	out->tail_cond = copy_array(in->tail_cond, in->n_tail, sizeof(*in->tail_cond));
	out->ind = copy_array(in->ind, in->n_ind, sizeof(*in->ind));
	return (in->n_ret && !out->ret_offs) || (in->n_ind && !out->ind) ||
	       (in->n_tail && (!out->tail_offs || !out->tail_cond)) ? -ENOMEM : 0;
}

static int copy_func(const struct probe_func *f, size_t object, struct probe_func *out)
{
	*out = *f;
	out->object = object;
	out->name = strdup(f->name);
	out->usdt_args = f->usdt_args ? strdup(f->usdt_args) : NULL;
	/* both copied whatever fails: their arrays are then out's to free */
	if ((copy_exits(&f->exits, &out->exits) | copy_exits(&f->cold_exits, &out->cold_exits)) ||
	    !out->name || (f->usdt_args && !out->usdt_args)) {
		free(out->name);
		free(out->usdt_args);
		exit_plan__clear(&out->exits);
		exit_plan__clear(&out->cold_exits);
		out->name = NULL;
		out->usdt_args = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int add_object(struct probe_set *u, const struct probe_object *o, size_t *at)
{
	struct probe_object *v;

	for (size_t i = 0; i < u->n_objects; i++) {
		if (u->objects[i].dev == o->dev && u->objects[i].ino == o->ino) {
			*at = i;
			return 0;
		}
	}
	v = realloc(u->objects, (u->n_objects + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	u->objects = v;
	v = &u->objects[u->n_objects];
	*v = *o;
	v->symtab = NULL;
	v->symbols_from = NULL; /* said at resolution */
	v->path = strdup(o->path);
	v->attach_path = strdup(o->attach_path ? o->attach_path : o->path);
	if (!v->path || !v->attach_path) {
		free(v->path);
		free(v->attach_path);
		return -ENOMEM;
	}
	/* The module name points into the path: into the copy now. */
	v->module = strrchr(v->path, '/') ? strrchr(v->path, '/') + 1 : v->path;
	*at = u->n_objects++;
	return 0;
}

static int add_target(struct probe_set *u, pid_t pid, size_t object)
{
	struct probe_target *t = NULL;

	for (size_t i = 0; i < u->n_targets && !t; i++)
		if (u->targets[i].pid == pid)
			t = &u->targets[i];
	if (!t) {
		t = realloc(u->targets, (u->n_targets + 1) * sizeof(*t));
		if (!t)
			return -ENOMEM;
		u->targets = t;
		t = &u->targets[u->n_targets++];
		*t = (struct probe_target){ .pid = pid };
	}
	for (size_t i = 0; i < t->n_objects; i++)
		if (t->objects[i] == object)
			return 0;
	if (GROW(t->objects, t->n_objects, t->cap_objects, 8))
		return -ENOMEM;
	t->objects[t->n_objects++] = object;
	return 0;
}

/* A function's key in the union: (object, address). */
struct fkey {
	size_t object;
	uint64_t addr;
	uint32_t id;
};

static int fkey_cmp(const void *a, const void *b)
{
	const struct fkey *x = a, *y = b;

	if (x->object != y->object)
		return x->object < y->object ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int probe_set__union(const struct probe_set *const *sets, size_t n, uint32_t *const *ids,
		     struct probe_set **out)
{
	struct probe_set *u = calloc(1, sizeof(*u));
	struct fkey *keys = NULL;
	size_t total = 0, n_keys = 0;
	int err = 0;

	*out = NULL;
	if (!u)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		if (sets[k]->binary_mode != sets[0]->binary_mode ||
		    sets[k]->exe_dev != sets[0]->exe_dev || sets[k]->exe_ino != sets[0]->exe_ino) {
			err = -EINVAL;
			goto fail;
		}
		total += sets[k]->n_funcs;
	}
	u->binary_mode = n ? sets[0]->binary_mode : false;
	u->exe_dev = n ? sets[0]->exe_dev : 0;
	u->exe_ino = n ? sets[0]->exe_ino : 0;
	u->funcs = calloc(total ? total : 1, sizeof(*u->funcs));
	keys = calloc(total ? total : 1, sizeof(*keys));
	if (!u->funcs || !keys) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t k = 0; k < n; k++) {
		const struct probe_set *s = sets[k];
		size_t *objmap = calloc(s->n_objects ? s->n_objects : 1, sizeof(*objmap));

		if (!objmap) {
			err = -ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < s->n_objects && !err; i++)
			err = add_object(u, &s->objects[i], &objmap[i]);
		for (size_t t = 0; t < s->n_targets && !err; t++)
			for (size_t i = 0; i < s->targets[t].n_objects && !err; i++)
				err = add_target(u, s->targets[t].pid, objmap[s->targets[t].objects[i]]);
		for (size_t i = 0; i < s->n_funcs && !err; i++) {
			struct fkey key = { objmap[s->funcs[i].object], s->funcs[i].addr, 0 }, *hit;

			/* Sorted as they come: a binary search over what is in. */
			hit = bsearch(&key, keys, n_keys, sizeof(*keys), fkey_cmp);
			if (hit) {
				ids[k][i] = hit->id;
				continue;
			}
			err = copy_func(&s->funcs[i], key.object, &u->funcs[u->n_funcs]);
			if (err)
				break;
			key.id = (uint32_t)u->n_funcs++;
			ids[k][i] = key.id;
			{
				size_t at = n_keys;

				while (at > 0 && fkey_cmp(&keys[at - 1], &key) > 0)
					at--;
				memmove(keys + at + 1, keys + at, (n_keys - at) * sizeof(*keys));
				keys[at] = key;
				n_keys++;
			}
		}
		free(objmap);
		if (err)
			goto fail;
	}
	free(keys);
	probe_set__number_ind_sites(u);
	*out = u;
	return 0;
fail:
	free(keys);
	probe_set__free(u);
	return err;
}
