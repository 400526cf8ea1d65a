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

#include <fnmatch.h>
#include <stdlib.h>
#include "python/pycode.h"

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
		bool got = pycode__matches(c->pattern, c->qualname, c->filename);

		if (got != c->match)
			fail_msg("case %zu: '%s' vs %s in %s: expected %d, got %d", i, c->pattern,
				 c->qualname, c->filename, c->match, got);
	}
}

/*
 * The rows a pattern compiles to, read by the rule cmon_abi.h gives for
 * cmon_py_pat (python.bpf.h's py_pat_row applies it in the kernel: '*'
 * and '?' globs, fnmatch here), select what pycode__matches selects, for
 * every pattern of the table (a USER row: undecided, user space decides).
 */
static bool row_matches(const struct cmon_py_pat *m, const char *qual, const char *file)
{
	size_t fl = m->file_len, flen = strlen(file), off;
	bool module = m->flags & CMON_PY_PAT_MODULE;
	char pat[CMON_PY_QUALNAME_MAX];

	memcpy(pat, m->qualname, m->qual_len);
	pat[m->qual_len] = 0;
	if (m->flags & CMON_PY_PAT_GLOB ? fnmatch(pat, qual, 0) != 0 : strcmp(pat, qual) != 0)
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

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct match_case *c = &cases[i];
		struct cmon_py_pat *rows = NULL;
		unsigned n = 0;
		bool got = false, user = false;

		assert_int_equal(pycode__rows(&c->pattern, 1, false, &rows, &n), 0);
		assert_true(n >= 1);
		for (unsigned k = 0; k < n; k++) {
			if (rows[k].flags & CMON_PY_PAT_USER)
				user = true;
			else
				got = got || row_matches(&rows[k], c->qualname, c->filename);
		}
		if (!user && got != c->match)
			fail_msg("case %zu: rows of '%s' vs %s in %s: expected %d, got %d", i,
				 c->pattern, c->qualname, c->filename, c->match, got);
		if (user && got && !c->match)
			fail_msg("case %zu: rows of '%s' select %s in %s", i, c->pattern, c->qualname,
				 c->filename);
		free(rows);
	}
}

/* Rows the kernel could not compare are refused for break (one error
 * line), left to user space otherwise. */
static void test_row_limits(void **state)
{
	const char *ok = "a.b.c", *many = "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g";
	const char *nofile = ":f", *set = "f[ab]";
	struct cmon_py_pat *rows = NULL;
	char longname[200];
	const char *lp = longname;
	unsigned n;

	(void)state;
	assert_int_equal(pycode__rows(&ok, 1, true, &rows, &n), 0);
	assert_int_equal(n, 3); /* a.b.c; b.c of module a; c of module a.b */
	assert_int_equal(rows[2].flags, CMON_PY_PAT_MODULE);
	assert_string_equal(rows[2].file, "a.b.py");
	assert_string_equal(rows[2].qualname, "c");
	free(rows);
	assert_int_equal(pycode__rows(&many, 1, true, &rows, &n), -EINVAL);
	assert_int_equal(pycode__rows(&many, 1, false, &rows, &n), 0);
	assert_int_equal(rows[n - 1].flags, CMON_PY_PAT_USER);
	free(rows);
	assert_int_equal(pycode__rows(&nofile, 1, false, &rows, &n), -EINVAL);
	assert_int_equal(pycode__rows(&set, 1, true, &rows, &n), -EINVAL);
	assert_int_equal(pycode__rows(&set, 1, false, &rows, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].flags, CMON_PY_PAT_USER);
	free(rows);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(pycode__rows(&lp, 1, true, &rows, &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_matches),
					    cmocka_unit_test(test_rows),
					    cmocka_unit_test(test_row_limits) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
