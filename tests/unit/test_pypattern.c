// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_pypattern: which Python functions a --py pattern selects, table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "python/cpython.h"

struct match_case {
	const char *pattern, *qualname, *filename;
	bool match;
};

static const struct match_case cases[] = {
	{ "fib", "fib", "/srv/app.py", true },
	{ "fib", "fibo", "/srv/app.py", false },
	{ "Shape.area", "Shape.area", "/srv/geo.py", true },
	{ "Shape.*", "Shape.area", "/srv/geo.py", true },
	{ "Shape.*", "Shapes.area", "/srv/geo.py", false },
	{ "area", "Shape.area", "/srv/geo.py", false }, /* the qualified name, whole */
	{ "*.area", "Shape.area", "/srv/geo.py", true },
	{ "geo.Shape.area", "Shape.area", "/srv/geo.py", true },
	{ "handlers.f", "f", "/srv/app/handlers.py", true },
	{ "app.handlers.f", "f", "/srv/app/handlers.py", true },
	{ "app.handlers.*", "C.m", "/srv/app/handlers.py", true },
	{ "pp.handlers.f", "f", "/srv/app/handlers.py", false }, /* whole components */
	{ "app.handlers.*", "f", "/srv/app/views.py", false },
	{ "handlers.f", "f", "<frozen handlers>", false },
	{ "geo.py:Shape.area", "Shape.area", "/srv/geo.py", true },
	{ "srv/geo.py:Shape.*", "Shape.area", "/srv/geo.py", true },
	{ "/srv/geo.py:Shape.area", "Shape.area", "/srv/geo.py", true },
	{ "eo.py:Shape.area", "Shape.area", "/srv/geo.py", false },
	{ "geo.py:area", "Shape.area", "/srv/geo.py", false },
	{ "<module>", "<module>", "/srv/geo.py", true },
	{ "outer.<locals>.*", "outer.<locals>.inner", "/srv/geo.py", true },
	{ "a.b.f", "f", "/x/a.b.py", true }, /* a '.' of the file's name is a boundary */
	{ "b.f", "f", "/x/a.b.py", true },
	{ "x.a.b.f", "f", "/x/a/b.py", true },
	{ "a.f", "f", "/x/a.b.py", false },
	{ "f", "f", "<stdin>", true },
	{ "x.py:f", "f", "/y.x.py", false }, /* FILE: after a '/' only */
	{ "x.py:f", "f", "x.py", true },
	{ "outer.<locals>.inner", "outer.<locals>.inner", "/srv/geo.py", true },
	{ "geo.outer.<locals>.inner", "outer.<locals>.inner", "/srv/geo.py", true },
};

static void test_matches(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct match_case *c = &cases[i];
		bool got = pytrace__pattern_matches(c->pattern, c->qualname, c->filename);

		if (got != c->match)
			fail_msg("case %zu: '%s' vs %s in %s: expected %d, got %d", i, c->pattern,
				 c->qualname, c->filename, c->match, got);
	}
}

/*
 * cmon break --py: the rows a pattern compiles to, read by the rule
 * cmon_abi.h gives for cmon_py_break_pat (python.bpf.h's py_break_match
 * applies it in the kernel), select what pytrace__pattern_matches selects,
 * for every pattern of the table without a glob.
 */
static bool row_matches(const struct cmon_py_break_pat *m, const char *qual, const char *file)
{
	size_t fl = m->file_len, flen = strlen(file), off;
	bool module = m->flags & CMON_PY_BREAK_MODULE;

	if (strlen(qual) != m->qual_len || memcmp(qual, m->qualname, m->qual_len))
		return false;
	if (!fl)
		return true;
	if (fl > flen)
		return false;
	off = flen - fl;
	if (off && file[off - 1] != '/' && !(module && file[off - 1] == '.'))
		return false;
	for (size_t i = 0; i < fl; i++) {
		char c = file[off + i], w = m->file[i];

		if (c != w && !(module && w == '.' && c == '/' && i + 3 < fl))
			return false;
	}
	return true;
}

static void test_break_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct match_case *c = &cases[i];
		const struct cmon_py_break_pat *rows;
		struct pytrace *pt;
		unsigned n = 0;
		bool got = false;

		if (strpbrk(c->pattern, "*?[\\"))
			continue; /* break refuses globs */
		pt = pytrace__new(&c->pattern, 1, 0);
		assert_non_null(pt);
		assert_int_equal(pytrace__break_pats(pt, &rows, &n), 0);
		assert_true(n >= 1);
		for (unsigned k = 0; k < n; k++)
			got = got || row_matches(&rows[k], c->qualname, c->filename);
		if (got != c->match)
			fail_msg("case %zu: break '%s' vs %s in %s: expected %d, got %d", i,
				 c->pattern, c->qualname, c->filename, c->match, got);
		pytrace__free(pt);
	}
}

/* Rows the kernel could not compare are refused (one error line). */
static void test_break_limits(void **state)
{
	const char *ok = "a.b.c", *many = "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q", *nofile = ":f";
	const struct cmon_py_break_pat *rows;
	struct pytrace *pt;
	char longname[200];
	const char *lp = longname;
	unsigned n;

	(void)state;
	pt = pytrace__new(&ok, 1, 0);
	assert_int_equal(pytrace__break_pats(pt, &rows, &n), 0);
	assert_int_equal(n, 3); /* a.b.c; b.c of module a; c of module a.b */
	assert_int_equal(rows[2].flags, CMON_PY_BREAK_MODULE);
	assert_string_equal(rows[2].file, "a.b.py");
	assert_string_equal(rows[2].qualname, "c");
	pytrace__free(pt);
	pt = pytrace__new(&many, 1, 0);
	assert_int_equal(pytrace__break_pats(pt, &rows, &n), -EINVAL);
	pytrace__free(pt);
	pt = pytrace__new(&nofile, 1, 0);
	assert_int_equal(pytrace__break_pats(pt, &rows, &n), -EINVAL);
	pytrace__free(pt);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	pt = pytrace__new(&lp, 1, 0);
	assert_int_equal(pytrace__break_pats(pt, &rows, &n), -EINVAL);
	pytrace__free(pt);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_matches),
					    cmocka_unit_test(test_break_rows),
					    cmocka_unit_test(test_break_limits) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
