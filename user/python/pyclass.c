// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyclass.c: see pyclass.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "core/hmap.h"
#include "core/log.h"
#include "proc/procmem.h"
#include "python/pyclass.h"
#include "python/pyheap.h"
#include "python/pyvalue.h"

#define TPFLAGS_HEAPTYPE (1ull << 9)
#define TPFLAGS_TYPE_SUBCLASS (1ull << 31)
/* CPython stops giving a class tags at 1000 used: past any it reaches */
#define USED_MAX 0xffffu
#define USED_CPYTHON_MAX 1000u
/* tags: the static types' below, the heap classes' from here */
#define HEAP_TAG_MIN 0x10000u

/* (pid, class) -> users of this cmon holding it << 16 | its budget before */
static struct hmap holds;
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;

struct walk {
	pid_t pid;
	const struct py_layout *l;
	pyclass_select_fn select;
	void *ctx;
	struct hmap metas; /* a type -> 2 when its instances are classes, else 1 */
	struct hmap seen;  /* the classes below the one kept */
	uint64_t *stack;
	size_t n_stack, cap_stack;
	struct pyclass_held **held;
	size_t *n, *cap;
	size_t n_classes, n_untagged;
	size_t n_entries; /* of the tp_subclasses read */
	int err;
};

/* Are the objects of type TYPE classes (a metaclass: type, ABCMeta...)? */
static bool makes_classes(struct walk *w, uint64_t type)
{
	uint64_t *slot, flags = 0;
	bool added;

	slot = hmap__get(&w->metas, &type, sizeof(type), &added);
	if (!slot)
		return false;
	if (added)
		*slot = !procmem__read(w->pid, type + w->l->bpf.type_flags, &flags, 8) &&
				(flags & TPFLAGS_TYPE_SUBCLASS) ? 2 : 1;
	return *slot == 2;
}

/* CLS's tag and budget, which must look like a heap class's. */
static int read_tag(struct walk *w, uint64_t cls, uint32_t *tag, uint16_t *used)
{
	if (procmem__read(w->pid, cls + w->l->type_version, tag, 4) ||
	    procmem__read(w->pid, cls + w->l->type_versions_used, used, 2))
		return -EFAULT;
	if ((*tag && *tag < HEAP_TAG_MIN) || (*used > USED_CPYTHON_MAX && *used != USED_MAX))
		return -EINVAL;
	return 0;
}

/* A subclass of one kept (a weak reference in its tp_subclasses). */
static bool sub_entry(void *ctx, uint64_t key, uint64_t ref)
{
	struct walk *w = ctx;
	uint64_t cls = procmem__ptr(w->pid, ref + 16); /* wr_object */
	bool added;

	(void)key;
	w->n_entries++;
	if (!cls || !makes_classes(w, procmem__ptr(w->pid, cls + w->l->bpf.obj_type)))
		return false; /* a dead reference (None) */
	if (!hmap__get(&w->seen, &cls, sizeof(cls), &added) ||
	    GROW(w->stack, w->n_stack, w->cap_stack, 64)) {
		w->err = -ENOMEM;
		return true;
	}
	if (added)
		w->stack[w->n_stack++] = cls;
	return false;
}

/*
 * Class CLS kept: every class below it found and checked first (nothing
 * is written unless all look right), then their tags cleared (a subclass
 * without a tag under a base with one is CPython's own state after a
 * change), then CLS's budget spent, its tag cleared last: a write that
 * fails midway leaves the invariant whole.
 */
static int keep(struct walk *w, uint64_t cls)
{
	uint64_t key[2] = { (uint64_t)w->pid, cls }, *slot;
	uint16_t used = 0, max = USED_MAX;
	uint32_t tag = 0, zero = 0;
	size_t top = 0;
	bool added;
	int err = read_tag(w, cls, &tag, &used);

	if (err)
		return err;
	hmap__release(&w->seen);
	w->n_stack = 0;
	w->err = 0;
	if (GROW(w->stack, w->n_stack, w->cap_stack, 64))
		return -ENOMEM;
	w->stack[w->n_stack++] = cls;
	/* the stack keeps every class found: TOP walks it */
	while (top < w->n_stack && !w->err) {
		uint64_t c = w->stack[top++], subs, live = 0;
		uint32_t t;
		uint16_t u;

		if (c != cls && (err = read_tag(w, c, &t, &u)))
			return err;
		subs = procmem__ptr(w->pid, c + w->l->type_subclasses);
		if (!subs)
			continue;
		w->n_entries = 0;
		pyvalue__dict_each(w->pid, &w->l->bpf, subs, sub_entry, w);
		/* every entry read, or the walk is not whole */
		if (!w->err && (procmem__read(w->pid, subs + w->l->bpf.dict_used, &live, 8) ||
				live != w->n_entries))
			w->err = -E2BIG;
	}
	if (w->err)
		return w->err;
	for (size_t i = 1; i < w->n_stack; i++) {
		uint32_t t = 0;

		if (procmem__read(w->pid, w->stack[i] + w->l->type_version, &t, 4) || !t)
			continue;
		err = procmem__write(w->pid, w->stack[i] + w->l->type_version, &zero, 4);
		if (err)
			return err;
		w->n_untagged++;
	}
	if (GROW(*w->held, *w->n, *w->cap, 16))
		return -ENOMEM;
	pthread_mutex_lock(&hold_lock);
	slot = hmap__get(&holds, key, sizeof(key), &added);
	if (!slot) {
		err = -ENOMEM;
	} else if (!(*slot >> 16)) {
		err = procmem__write(w->pid, cls + w->l->type_versions_used, &max, 2);
		if (!err)
			*slot = used; /* another cmon's USED_MAX stays: it restores */
	}
	if (!err)
		*slot += 1ull << 16;
	pthread_mutex_unlock(&hold_lock);
	if (err)
		return err;
	(*w->held)[(*w->n)++] = (struct pyclass_held){ cls, used };
	w->n_classes++;
	if (tag) {
		err = procmem__write(w->pid, cls + w->l->type_version, &zero, 4);
		w->n_untagged += !err;
	}
	return err;
}

/* ERR of keeping class CLS: one it cannot keep (nothing written) said,
 * and 0. */
static int left(struct walk *w, uint64_t cls, int err)
{
	char name[64] = "";

	if (err != -EINVAL && err != -E2BIG)
		return err;
	uint64_t at = procmem__ptr(w->pid, cls + w->l->bpf.type_name);

	/* its tp_name (a string that may end short of a page's end) */
	for (size_t len = sizeof(name) - 1; at && len >= 8; len /= 2)
		if (!procmem__read(w->pid, at, name, len)) {
			name[len] = 0;
			break;
		}
	log_warn("--py: process %d: class %s %s: left as it is (the calls of its __init__ "
		 "through a specialized `%s(...)` site are not seen)", (int)w->pid,
		 name[0] ? name : "?",
		 err == -EINVAL ? "does not look as CPython's do" : "has subclasses cmon could not "
		 "read all of", name[0] ? name : "Class");
	return 0;
}

struct find_init {
	struct walk *w;
	bool found;
};

/* Is this entry of a class's dict "__init__": a function cmon traces? */
static bool init_entry(void *ctx, uint64_t key, uint64_t value)
{
	struct find_init *f = ctx;
	char *name;

	if (!f->w->select(f->w->ctx, value))
		return false;
	name = pyvalue__str(f->w->pid, key, f->w->l);
	f->found = name && !strcmp(name, "__init__");
	free(name);
	return f->found;
}

static int each_object(void *ctx, uint64_t obj, uint64_t type)
{
	struct walk *w = ctx;
	struct find_init f = { .w = w };
	uint64_t flags = 0, dict;
	int err;

	if (!makes_classes(w, type) ||
	    procmem__read(w->pid, obj + w->l->bpf.type_flags, &flags, 8) ||
	    !(flags & TPFLAGS_HEAPTYPE))
		return 0;
	dict = procmem__ptr(w->pid, obj + w->l->type_dict);
	if (dict)
		pyvalue__dict_each(w->pid, &w->l->bpf, dict, init_entry, &f);
	if (!f.found)
		return 0;
	err = keep(w, obj);
	return left(w, obj, err);
}

int pyclass__walk(pid_t pid, const struct py_layout *l, uint64_t interp, uint64_t func_type,
		  pyclass_select_fn select, void *ctx, struct pyclass_held **held, size_t *n,
		  size_t *cap)
{
	struct walk w = { .pid = pid, .l = l, .select = select, .ctx = ctx, .held = held,
			  .n = n, .cap = cap };
	uint32_t tag = 0;
	uint16_t used = 0;
	uint64_t seen = 0;
	int err;

	if (!l->type_versions_used)
		return 0;
	/* the function type, a static one: a small tag, no budget spent */
	if (procmem__read(pid, func_type + l->type_version, &tag, 4) ||
	    procmem__read(pid, func_type + l->type_versions_used, &used, 2) || !tag ||
	    tag >= HEAP_TAG_MIN || used > USED_CPYTHON_MAX) {
		log_warn("--py: process %d: its types' version tags are not where CPython %u.%u "
			 "keeps them: classes left as they are (their __init__'s calls through a "
			 "specialized site are not seen)", (int)pid, l->major, l->minor);
		return -EINVAL;
	}
	err = pyheap__objects(pid, l, interp, each_object, &w, &seen);
	if (!err || err == -EAGAIN)
		log_debug("--py: process %d: %zu classes with a traced __init__ held, %zu "
			  "classes without a version tag", (int)pid, w.n_classes, w.n_untagged);
	hmap__release(&w.metas);
	hmap__release(&w.seen);
	free(w.stack);
	return err;
}

struct own_init {
	struct walk *w;
	uint64_t value;
	bool found;
};

static bool own_init(void *ctx, uint64_t key, uint64_t value)
{
	struct own_init *f = ctx;
	char *name = pyvalue__str(f->w->pid, key, f->w->l);

	f->found = name && !strcmp(name, "__init__");
	free(name);
	if (f->found)
		f->value = value;
	return f->found;
}

int pyclass__hold_init(pid_t pid, const struct py_layout *l, uint64_t cls, uint64_t func,
		       struct pyclass_held **held, size_t *n, size_t *cap)
{
	struct walk w = { .pid = pid, .l = l, .held = held, .n = n, .cap = cap };
	uint64_t mro = procmem__ptr(pid, cls + l->type_mro), len = 0;
	int err = 0;

	if (!l->type_versions_used || !mro ||
	    procmem__read(pid, mro + l->bpf.var_size, &len, 8))
		return 0;
	/* the first class in the method order with an __init__ of its own:
	 * the one CPython's lookup finds */
	for (uint64_t i = 0; i < len && i < 64; i++) {
		uint64_t t = procmem__ptr(pid, mro + l->bpf.tuple_items + 8 * i), dict;
		struct own_init f = { .w = &w };

		dict = t ? procmem__ptr(pid, t + l->type_dict) : 0;
		if (dict)
			pyvalue__dict_each(pid, &l->bpf, dict, own_init, &f);
		if (!f.found)
			continue;
		if (f.value == func)
			err = keep(&w, t);
		break;
	}
	err = left(&w, cls, err);
	log_debug("--py: process %d: class %#llx: %zu held, %zu without a version tag", (int)pid,
		  (unsigned long long)cls, w.n_classes, w.n_untagged);
	hmap__release(&w.metas);
	hmap__release(&w.seen);
	free(w.stack);
	return err;
}

void pyclass__release(pid_t pid, const struct py_layout *l, const struct pyclass_held *held,
		      size_t n)
{
	pthread_mutex_lock(&hold_lock);
	for (size_t i = 0; i < n; i++) {
		uint64_t key[2] = { (uint64_t)pid, held[i].type }, *slot;
		uint16_t used = 0, before;
		uint32_t tag = 1;
		bool added;

		slot = hmap__get(&holds, key, sizeof(key), &added);
		if (!slot || added || !(*slot >> 16))
			continue;
		*slot -= 1ull << 16;
		if (*slot >> 16)
			continue; /* another user still holds it */
		before = (uint16_t)*slot;
		/* as cmon left it (a freed class's memory is someone else's) */
		if (!procmem__read(pid, held[i].type + l->type_version, &tag, 4) && !tag &&
		    !procmem__read(pid, held[i].type + l->type_versions_used, &used, 2) &&
		    used == USED_MAX && before != USED_MAX)
			procmem__write(pid, held[i].type + l->type_versions_used, &before, 2);
	}
	pthread_mutex_unlock(&hold_lock);
}
