/* test_views.c: the whole-run views (tree, folded, chrome) on records given
 * in completion order, as the tracer hands them over, and the hash map. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/hmap.h"
#include "output/writer.h"
#include "output/callgroup.h"

struct fake {
	struct call_record rec;
	struct call_typed typed;
	const char *names[1], *cells[1];
	size_t cols[1];
};

static void fake(struct fake *f, uint32_t tid, const char *func, int depth, uint64_t ts,
		 uint64_t lat, const char *x, const char *ret, enum call_status st)
{
	memset(f, 0, sizeof(*f));
	f->names[0] = "x";
	f->cells[0] = x;
	f->typed = (struct call_typed){ .args = "{}", .retval = ret, .names = f->names,
					.cells = f->cells, .columns = f->cols, .n_cells = 1 };
	f->rec = (struct call_record){ .ts_ns = ts, .pid = 7, .tid = tid, .comm = "app",
				       .func = func, .module = "app", .depth = depth,
				       .latency_ns = lat, .status = st, .rss_entry = 4096,
				       .rss_exit = 8192, .vms_entry = 65536, .vms_exit = 65536,
				       .typed = &f->typed };
}

/* outer(1) > middle(2) > leaf(3) on thread 10, finishing in that reverse
 * order, with thread 11's solo(9) ending in between. */
static char *run_view(enum out_format fmt)
{
	struct fake f[4];
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct writer *w = writer__new(fmt, out);

	assert_non_null(w);
	fake(&f[0], 10, "leaf", 2, 1300, 100, "3", "4", CALL_OK);
	fake(&f[1], 11, "solo", 0, 1350, 50, "9", "null", CALL_OK);
	fake(&f[2], 10, "middle", 1, 1200, 300, "2", "8", CALL_OK);
	fake(&f[3], 10, "outer", 0, 1100, 2500000, "1", "11", CALL_OK);
	for (int i = 0; i < 4; i++)
		assert_int_equal(writer__write(w, &f[i].rec), 0);
	assert_int_equal(writer__finish(w), 0);
	writer__free(w);
	fclose(out);
	return buf;
}

static void test_tree(void **state)
{
	char *s = run_view(OUT_TREE);

	(void)state;
	assert_string_equal(s, "# DURATION     TID     FUNCTION\n"
			       "  0.050 us [    11] | solo(x=9);\n"
			       "           [    10] | outer(x=1) {\n"
			       "           [    10] |   middle(x=2) {\n"
			       "  0.100 us [    10] |     leaf(x=3) = 4;\n"
			       "  0.300 us [    10] |   } = 8; // middle\n"
			       "  2.500 ms [    10] | } = 11; // outer\n");
	free(s);
}

static void test_folded(void **state)
{
	char *s = run_view(OUT_FOLDED);

	(void)state;
	/* self: outer 2500000 - 300, middle 300 - 100, leaf 100, solo 50 */
	assert_string_equal(s, "app;outer 2499700\n"
			       "app;outer;middle 200\n"
			       "app;outer;middle;leaf 100\n"
			       "app;solo 50\n");
	free(s);
}

static void test_chrome(void **state)
{
	char *s = run_view(OUT_CHROME);

	(void)state;
	assert_true(!strncmp(s, "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"tid\":7,"
			       "\"args\":{\"name\":\"app\"}},\n", 70));
	assert_non_null(strstr(s, "{\"name\":\"leaf\",\"cat\":\"ok\",\"ph\":\"X\",\"pid\":7,"
				  "\"tid\":10,\"ts\":1.300,\"dur\":0.100,\"args\":{\"args\":{\"x\":3},"
				  "\"return\":4}}"));
	/* void return: no "return" key; parameters nested, as in -F json */
	assert_non_null(strstr(s, "\"ts\":1.350,\"dur\":0.050,\"args\":{\"args\":{\"x\":9}}}"));
	assert_non_null(strstr(s, "\"ts\":1.100,\"dur\":2500.000,"));
	/* one memory counter per change: 4096 at the first entry, 8192 after */
	assert_non_null(strstr(s, "{\"name\":\"memory\",\"ph\":\"C\",\"pid\":7,\"ts\":1.300,"
				  "\"args\":{\"rss\":4096,\"vms\":65536}}"));
	assert_string_equal(s + strlen(s) - 4, "}\n]\n");
	free(s);
}

static void test_hold_bound_cuts(void **state)
{
	struct fake f[3];
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	struct writer *w;

	(void)state;
	callgroups__set_default_max_held(2);
	out = open_memstream(&buf, &len);
	w = writer__new(OUT_TREE, out);
	callgroups__set_default_max_held(CALLGROUP_MAX_HELD_DEFAULT);
	fake(&f[0], 10, "c", 2, 300, 10, "3", "3", CALL_OK);
	fake(&f[1], 10, "b", 1, 200, 100, "2", "2", CALL_OK);
	fake(&f[2], 10, "a", 0, 100, 1000, "1", "1", CALL_NORETURN);
	for (int i = 0; i < 3; i++)
		assert_int_equal(writer__write(w, &f[i].rec), 0);
	assert_int_equal(writer__finish(w), 0);
	writer__free(w);
	fclose(out);
	assert_string_equal(buf, "# DURATION     TID     FUNCTION\n"
				 "# note: thread 10 held 2 calls under a caller still running "
				 "(the bound): printed now, its caller comes later\n"
				 "           [    10] | b(x=2) {\n"
				 "  0.010 us [    10] |   c(x=3) = 3;\n"
				 "  0.100 us [    10] | } = 2; // b\n"
				 "  noreturn [    10] | a(x=1); // noreturn\n");
	free(buf);
}

static void test_hmap(void **state)
{
	struct hmap m = {};
	char key[32];

	(void)state;
	for (int i = 0; i < 1000; i++) {
		bool added;
		uint64_t *v;

		snprintf(key, sizeof(key), "k%d", i);
		v = hmap__get(&m, key, strlen(key), &added);
		assert_non_null(v);
		assert_true(added);
		*v = (uint64_t)i * 3;
	}
	assert_int_equal(m.n, 1000);
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(*hmap__find(&m, key, strlen(key)), (uint64_t)i * 3);
	}
	assert_null(hmap__find(&m, "k1000", 5));
	assert_null(hmap__find(&m, "k1", 1)); /* a prefix is another key */
	hmap__release(&m);
	assert_null(hmap__find(&m, "k1", 2));
}

/* Keys added and removed by turns (a child's entry dropped when it exits):
 * the map stays as large as what it holds, and every key left is found. */
static void test_hmap_del(void **state)
{
	struct hmap m = {};
	char key[32];

	(void)state;
	for (int i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "%d", i);
		assert_non_null(hmap__get(&m, key, strlen(key), NULL));
		*hmap__get(&m, key, strlen(key), NULL) = (uint64_t)i;
		if (i >= 40) { /* 40 alive at a time */
			snprintf(key, sizeof(key), "%d", i - 40);
			assert_true(hmap__del(&m, key, strlen(key)));
			assert_false(hmap__del(&m, key, strlen(key)));
		}
	}
	assert_int_equal(m.n, 40);
	assert_int_equal(m.cap, 64);
	for (int i = 0; i < 100000; i++) {
		uint64_t *v;

		snprintf(key, sizeof(key), "%d", i);
		v = hmap__find(&m, key, strlen(key));
		if (i < 100000 - 40) {
			assert_null(v);
		} else {
			assert_non_null(v);
			assert_int_equal(*v, (uint64_t)i);
		}
	}
	hmap__release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_chrome),
		cmocka_unit_test(test_hold_bound_cuts),
		cmocka_unit_test(test_hmap),
		cmocka_unit_test(test_hmap_del),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
