// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_pypattern: which Python functions a --py pattern selects, table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_matches) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
