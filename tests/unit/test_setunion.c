// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_setunion.c: merging resolved probe sets: objects by (dev, inode),
 * functions by (object, address), targets by pid, each set's ids. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "probe/setunion.h"

/* A set of one object (DEV, INO at PATH), one pid 0 target, and N
 * functions named NAMES at ADDRS. */
static struct probe_set *make_set(const char *path, uint64_t dev, uint64_t ino, size_t n,
				  const char *const *names, const uint64_t *addrs)
{
	struct probe_set *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->objects = calloc(1, sizeof(*s->objects));
	s->n_objects = 1;
	s->objects[0].path = strdup(path);
	s->objects[0].attach_path = strdup(path);
	s->objects[0].module = strrchr(s->objects[0].path, '/') + 1;
	s->objects[0].dev = dev;
	s->objects[0].ino = ino;
	s->targets = calloc(1, sizeof(*s->targets));
	s->n_targets = 1;
	s->targets[0].objects = calloc(1, sizeof(size_t));
	s->targets[0].n_objects = 1;
	s->funcs = calloc(n, sizeof(*s->funcs));
	s->n_funcs = n;
	for (size_t i = 0; i < n; i++) {
		s->funcs[i].name = strdup(names[i]);
		s->funcs[i].addr = addrs[i];
		s->funcs[i].ret_mode = RETURN_INSN;
		s->funcs[i].exits.ret_offs = calloc(1, sizeof(uint32_t));
		s->funcs[i].exits.ret_offs[0] = (uint32_t)(addrs[i] & 0xff);
		s->funcs[i].exits.n_ret = 1;
	}
	return s;
}

static void test_union_dedups(void **state)
{
	static const char *const na[] = { "b", "a" }, *const nb[] = { "a", "c" };
	static const uint64_t aa[] = { 0x2000, 0x1000 }, ab[] = { 0x1000, 0x3000 };
	struct probe_set *a = make_set("/bin/app", 8, 42, 2, na, aa);
	struct probe_set *b = make_set("/bin/app", 8, 42, 2, nb, ab);
	const struct probe_set *sets[] = { a, b };
	uint32_t ida[2], idb[2], *ids[] = { ida, idb };
	struct probe_set *u = NULL;

	assert_int_equal(probe_set__union(sets, 2, ids, &u), 0);
	assert_int_equal(u->n_objects, 1);
	assert_string_equal(u->objects[0].module, "app");
	assert_int_equal(u->n_targets, 1);
	assert_int_equal(u->targets[0].n_objects, 1);
	assert_int_equal(u->n_funcs, 3);
	/* a's functions first, in order; then b's new one. */
	assert_int_equal(ida[0], 0);
	assert_int_equal(ida[1], 1);
	assert_int_equal(idb[0], 1); /* "a" at 0x1000: the same function */
	assert_int_equal(idb[1], 2);
	assert_string_equal(u->funcs[2].name, "c");
	assert_int_equal(u->funcs[2].exits.n_ret, 1);
	assert_int_equal(u->funcs[2].exits.ret_offs[0], 0x00);
	/* Deep copies: the sources can go first. */
	probe_set__free(a);
	probe_set__free(b);
	assert_string_equal(u->funcs[0].name, "b");
	assert_string_equal(u->objects[0].path, "/bin/app");
	probe_set__free(u);
}

static void test_union_two_files(void **state)
{
	static const char *const n[] = { "f" };
	static const uint64_t addr[] = { 0x1000 };
	struct probe_set *a = make_set("/lib/liba.so", 8, 1, 1, n, addr);
	struct probe_set *b = make_set("/lib/libb.so", 8, 2, 1, n, addr);
	const struct probe_set *sets[] = { a, b };
	uint32_t ida[1], idb[1], *ids[] = { ida, idb };
	struct probe_set *u = NULL;

	assert_int_equal(probe_set__union(sets, 2, ids, &u), 0);
	assert_int_equal(u->n_objects, 2);
	assert_int_equal(u->n_funcs, 2); /* same address, other file */
	assert_int_equal(u->funcs[idb[0]].object, 1);
	assert_int_equal(u->n_targets, 1);
	assert_int_equal(u->targets[0].n_objects, 2);
	probe_set__free(u);
	probe_set__free(a);
	probe_set__free(b);
}

static void test_union_refuses_other_scope(void **state)
{
	static const char *const n[] = { "f" };
	static const uint64_t addr[] = { 0x1000 };
	struct probe_set *a = make_set("/bin/app", 8, 1, 1, n, addr);
	struct probe_set *b = make_set("/bin/app", 8, 1, 1, n, addr);
	const struct probe_set *sets[] = { a, b };
	uint32_t ida[1], idb[1], *ids[] = { ida, idb };
	struct probe_set *u = (void *)1;

	b->binary_mode = true;
	assert_int_equal(probe_set__union(sets, 2, ids, &u), -EINVAL);
	assert_null(u);
	probe_set__free(a);
	probe_set__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_union_dedups),
		cmocka_unit_test(test_union_two_files),
		cmocka_unit_test(test_union_refuses_other_scope),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
