// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_funcpattern: --func spec parsing and matching, table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/funcpattern.h"

/* --- parse ---------------------------------------------------------------- */

struct parse_case {
	const char *spec;
	int ret;
	const char *object; /* NULL: none */
	const char *func;
	bool glob;
};

static const struct parse_case parse_cases[] = {
	{ "malloc", 0, NULL, "malloc", false },
	{ "sqlite3_*", 0, NULL, "sqlite3_*", true },
	{ "f?o", 0, NULL, "f?o", true },
	{ "f[ab]", 0, NULL, "f[ab]", true },
	{ "a.b", 0, NULL, "a.b", false },
	{ "libc.so.6:malloc", 0, "libc.so.6", "malloc", false },
	{ "libc:malloc", 0, "libc", "malloc", false },
	{ "/x/y.so:f", 0, "/x/y.so", "f", false },
	{ "libfoo.so:ns::A::f", 0, "libfoo.so", "ns::A::f", false },
	{ "libfoo.so:ns::A::*", 0, "libfoo.so", "ns::A::*", true },
	{ "ns::A::f", 0, NULL, "ns::A::f", false },
	{ "ns::Class::*", 0, NULL, "ns::Class::*", true },
	{ "::f", 0, NULL, "::f", false },
	{ "a:b:c", 0, "a", "b:c", false },
	{ "lib*.so:f", 0, "lib*.so", "f", false },
	{ ":foo", -EINVAL, NULL, NULL, false },
	{ "lib.so:", -EINVAL, NULL, NULL, false },
	{ "", -EINVAL, NULL, NULL, false },
	{ ":", -EINVAL, NULL, NULL, false },
	{ "ns::f:", -EINVAL, NULL, NULL, false },
};

static void test_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *tc = &parse_cases[i];
		struct funcpattern p;
		int ret = funcpattern__parse(tc->spec, &p);

		if (ret != tc->ret)
			fail_msg("parse \"%s\": %d, expected %d", tc->spec, ret, tc->ret);
		if (ret < 0) {
			assert_null(p.object);
			assert_null(p.func);
			continue;
		}
		if (tc->object)
			assert_string_equal(p.object, tc->object);
		else
			assert_null(p.object);
		assert_string_equal(p.func, tc->func);
		assert_int_equal(p.glob, tc->glob);
		funcpattern__clear(&p);
		assert_null(p.object);
		assert_null(p.func);
	}
	funcpattern__clear(NULL);
}

/* --- object --------------------------------------------------------------- */

struct object_case {
	const char *spec;
	const char *path;
	bool match;
};

static const struct object_case object_cases[] = {
	{ "malloc", "/lib/x86_64-linux-gnu/libc.so.6", true }, /* no object part */
	{ "libc:malloc", "/lib/x86_64-linux-gnu/libc.so.6", true },
	{ "libc:malloc", "/usr/lib/libc-2.31.so", true },
	{ "libc:malloc", "/lib/x86_64-linux-gnu/libcap.so.2", false },
	{ "libc:malloc", "libc", true },
	{ "libc:malloc", "/usr/lib/libc", true },
	{ "libc:malloc", "/usr/lib/libc/other.so", false },
	{ "libc.so.6:malloc", "/lib/x86_64-linux-gnu/libc.so.6", true },
	{ "libc.so.6:malloc", "/lib/x86_64-linux-gnu/libc.so.60", false },
	{ "libc.so:malloc", "/lib/x86_64-linux-gnu/libc.so.6", true },
	{ "c:malloc", "/lib/x86_64-linux-gnu/libc.so.6", false },
	{ "libpthread:f", "/lib/x86_64-linux-gnu/libpthread.so.0", true },
	{ "libssl:f", "/usr/lib/libssl3.so", false },
	{ "myprog:main", "/opt/bin/myprog", true },
	{ "myprog:main", "/opt/bin/myprog2", false },
	{ "/x/y.so:f", "/x/y.so", true },      /* missing files: compared as given */
	{ "/x/y.so:f", "/x/z/y.so", false },
	{ "/x/y.so:f", "y.so", false },
};

/* "!PATTERN" is PATTERN, marked as an exclusion. */
static void test_parse_exclude(void **state)
{
	struct funcpattern p;

	(void)state;
	assert_int_equal(funcpattern__parse("!libc:str*", &p), 0);
	assert_true(p.exclude);
	assert_string_equal(p.object, "libc");
	assert_string_equal(p.func, "str*");
	assert_true(p.glob);
	funcpattern__clear(&p);
	assert_int_equal(funcpattern__parse("!_start", &p), 0);
	assert_true(p.exclude);
	assert_null(p.object);
	assert_string_equal(p.func, "_start");
	funcpattern__clear(&p);
	assert_int_equal(funcpattern__parse("main", &p), 0);
	assert_false(p.exclude);
	funcpattern__clear(&p);
	assert_int_equal(funcpattern__parse("!", &p), -EINVAL);
}

static void test_match_object(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(object_cases) / sizeof(object_cases[0]); i++) {
		const struct object_case *tc = &object_cases[i];
		struct funcpattern p;

		assert_int_equal(funcpattern__parse(tc->spec, &p), 0);
		if (funcpattern__match_object(&p, tc->path) != tc->match)
			fail_msg("object \"%s\" vs %s: expected %s", tc->spec, tc->path,
				 tc->match ? "match" : "no match");
		funcpattern__clear(&p);
	}
}

/* A '/' in the object part: both sides go through realpath. */
static void test_match_object_realpath(void **state)
{
	char dir[] = "/tmp/cmon-test-funcpattern-XXXXXX";
	char real[PATH_MAX], link[PATH_MAX], spec[PATH_MAX + 8], other[PATH_MAX];
	struct funcpattern p;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(real, sizeof(real), "%s/real.so", dir);
	snprintf(link, sizeof(link), "%s/link.so", dir);
	snprintf(other, sizeof(other), "%s/other.so", dir);
	f = fopen(real, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(symlink("real.so", link), 0);

	snprintf(spec, sizeof(spec), "%s:f", link);
	assert_int_equal(funcpattern__parse(spec, &p), 0);
	assert_true(funcpattern__match_object(&p, real));
	assert_true(funcpattern__match_object(&p, link));
	assert_false(funcpattern__match_object(&p, other));
	funcpattern__clear(&p);

	snprintf(spec, sizeof(spec), "%s/./real.so:f", dir);
	assert_int_equal(funcpattern__parse(spec, &p), 0);
	assert_true(funcpattern__match_object(&p, real));
	assert_true(funcpattern__match_object(&p, link));
	funcpattern__clear(&p);

	/* A bare name is a basename rule, not a path. */
	assert_int_equal(funcpattern__parse("real.so:f", &p), 0);
	assert_true(funcpattern__match_object(&p, real));
	assert_false(funcpattern__match_object(&p, link));
	funcpattern__clear(&p);

	unlink(link);
	unlink(real);
	rmdir(dir);
}

/* --- functions ------------------------------------------------------------ */

enum {
	F_MALLOC,
	F_CXX,
	F_CXX_CONST,
	F_RUST,
	F_ANON,
	F_OPCALL,
	F_UNDEMANGLED,
	F_UPPER_HASH,
	F_TEMPLATE,
	F_TEMPLATE_METHOD,
	F_FORWARD,
	F_COUNT,
};

static const struct symtab_func funcs[F_COUNT] = {
	[F_MALLOC] = { .name = "malloc", .version = "GLIBC_2.2.5", .addr = 0x1000 },
	[F_CXX] = { .name = "_ZN2ns5Class6methodEi", .demangled = "ns::Class::method(int)" },
	[F_CXX_CONST] = { .name = "_ZNK2ns5Class3getEv", .demangled = "ns::Class::get() const" },
	[F_RUST] = { .name = "_ZN4core3fmt5write17h0123456789abcdefE",
		     .demangled = "core::fmt::write::h0123456789abcdef" },
	[F_ANON] = { .name = "_ZN12_GLOBAL__N_11gEi", .demangled = "(anonymous namespace)::g(int)" },
	[F_OPCALL] = { .name = "_ZN1AclEi", .demangled = "A::operator()(int)" },
	[F_UNDEMANGLED] = { .name = "_Zbogus" },
	[F_UPPER_HASH] = { .name = "_Zx", .demangled = "foo::h0123456789ABCDEF" },
	/* Template instances demangle with their return type first. */
	[F_TEMPLATE] = { .name = "_ZN2ns5twiceIiEET_S1_", .demangled = "int ns::twice<int>(int)" },
	[F_TEMPLATE_METHOD] = { .name = "_ZNK2ns3Box3getIlEET_S2_",
				.demangled = "long ns::Box::get<long>(long) const" },
	[F_FORWARD] = { .name = "_ZSt7forwardIRZ4mainEUliE_EOT_RNSt16remove_referenceIS2_E4typeE",
			.demangled = "main::{lambda(int)#1}& std::forward<main::{lambda(int)#1}&>("
				     "std::remove_reference<main::{lambda(int)#1}&>::type&)" },
};

struct func_case {
	const char *spec;
	int func;
	bool match;
};

static const struct func_case func_cases[] = {
	{ "malloc", F_MALLOC, true },
	{ "libc:malloc", F_MALLOC, true },
	{ "mallo", F_MALLOC, false },
	{ "malloc@GLIBC_2.2.5", F_MALLOC, false },
	{ "calloc", F_MALLOC, false },
	{ "malloc*", F_MALLOC, true },
	{ "*alloc", F_MALLOC, true },
	{ "m?lloc", F_MALLOC, true },
	{ "[lm]alloc", F_MALLOC, true },
	{ "[!m]alloc", F_MALLOC, false },
	{ "malloc", F_CXX, false },

	{ "ns::Class::method", F_CXX, true },
	{ "ns::Class::method(int)", F_CXX, true },
	{ "_ZN2ns5Class6methodEi", F_CXX, true },
	{ "_ZN2ns5Class6method*", F_CXX, true },
	{ "ns::Class::*", F_CXX, true },
	{ "*::method", F_CXX, true },
	{ "*method(int)", F_CXX, true },
	{ "ns::Class::meth", F_CXX, false },
	{ "Class::method", F_CXX, false },
	{ "ns::Class::method(long)", F_CXX, false },
	{ "ns::Class::method(", F_CXX, false },
	{ "ns::Other::*", F_CXX, false },

	{ "ns::Class::get", F_CXX_CONST, true },
	{ "ns::Class::get() const", F_CXX_CONST, true },
	{ "ns::Class::get()", F_CXX_CONST, false },
	{ "ns::Class::g*", F_CXX_CONST, true },

	{ "core::fmt::write", F_RUST, true },
	{ "core::fmt::write::h0123456789abcdef", F_RUST, true },
	{ "core::fmt::*", F_RUST, true },
	{ "core::fmt::write::h*", F_RUST, true },
	{ "core::fmt::writ", F_RUST, false },
	{ "core::fmt::write::h0123456789abcde", F_RUST, false },
	{ "*write", F_RUST, true },

	{ "(anonymous namespace)::g", F_ANON, true },
	{ "(anonymous namespace)::g(int)", F_ANON, true },
	{ "*::g", F_ANON, true },
	{ "g", F_ANON, false },

	{ "A::operator()", F_OPCALL, true },
	{ "A::operator()(int)", F_OPCALL, true },
	{ "A::operator", F_OPCALL, false },
	{ "A::operator[(]*", F_OPCALL, true },

	{ "_Zbogus", F_UNDEMANGLED, true },
	{ "bogus", F_UNDEMANGLED, false },

	/* Upper-case hex is not a Rust hash. */
	{ "foo", F_UPPER_HASH, false },
	{ "foo::h0123456789ABCDEF", F_UPPER_HASH, true },

	{ "ns::twice", F_TEMPLATE, true },
	{ "ns::twice<int>", F_TEMPLATE, true },
	{ "ns::twice<int>(int)", F_TEMPLATE, true },
	{ "int ns::twice<int>(int)", F_TEMPLATE, true },
	{ "ns::*", F_TEMPLATE, true },
	{ "*twice*", F_TEMPLATE, true },
	{ "ns::twice<long>", F_TEMPLATE, false },
	{ "int*", F_TEMPLATE, false },
	{ "ns::Box::get", F_TEMPLATE_METHOD, true },
	{ "ns::Box::*", F_TEMPLATE_METHOD, true },
	{ "ns::Box::get<long>", F_TEMPLATE_METHOD, true },
	{ "std::forward", F_FORWARD, true },
	{ "std::*", F_FORWARD, true },
	{ "main::*", F_FORWARD, false },
	{ "main", F_FORWARD, false },
};

static void test_match_func(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(func_cases) / sizeof(func_cases[0]); i++) {
		const struct func_case *tc = &func_cases[i];
		const struct symtab_func *f = &funcs[tc->func];
		struct funcpattern p;

		assert_int_equal(funcpattern__parse(tc->spec, &p), 0);
		if (funcpattern__match_func(&p, f) != tc->match)
			fail_msg("func \"%s\" vs %s: expected %s", tc->spec,
				 f->demangled ? f->demangled : f->name, tc->match ? "match" : "no match");
		funcpattern__clear(&p);
	}
}

/* Demangled names longer than any stack buffer still match. */
static void test_match_func_long(void **state)
{
	char dem[720], spec[700];
	struct symtab_func f = { .name = "_Zlong", .demangled = dem };
	struct funcpattern p;

	(void)state;
	memset(spec, 'a', sizeof(spec));
	memcpy(spec, "ns::", 4);
	spec[600] = '\0';
	snprintf(dem, sizeof(dem), "%s(int)", spec);

	assert_int_equal(funcpattern__parse(spec, &p), 0);
	assert_true(funcpattern__match_func(&p, &f));
	funcpattern__clear(&p);

	spec[599] = '*';
	assert_int_equal(funcpattern__parse(spec, &p), 0);
	assert_true(funcpattern__match_func(&p, &f));
	funcpattern__clear(&p);

	spec[599] = 'b';
	assert_int_equal(funcpattern__parse(spec, &p), 0);
	assert_false(funcpattern__match_func(&p, &f));
	funcpattern__clear(&p);
}

/* --- strip_params ----------------------------------------------------------- */

struct strip_case {
	const char *in;
	const char *out; /* NULL: no parameter list */
};

static const struct strip_case strip_cases[] = {
	{ "ns::A::f(int) const", "ns::A::f" },
	{ "std::vector<int, std::allocator<int> >::push_back(int const&)",
	  "std::vector<int, std::allocator<int> >::push_back" },
	{ "(anonymous namespace)::g(int)", "(anonymous namespace)::g" },
	{ "A::operator()(int)", "A::operator()" },
	{ "A::operator()() const", "A::operator()" },
	{ "A::operator<(A const&)", "A::operator<" },
	{ "A::operator>>(int)", "A::operator>>" },
	{ "f()", "f" },
	{ "f(void (*)(int), char)", "f" },
	{ "ns::f(int) [clone .cold]", "ns::f" },
	{ "ns::f(int) [clone .constprop.0]", "ns::f" },
	{ "ns::A::f(int) &&", "ns::A::f" },
	{ "ns::A::f(int) const volatile &", "ns::A::f" },
	{ "main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()" },
	{ "foo[abi:cxx11](int)", "foo[abi:cxx11]" },
	{ "malloc", NULL },
	{ "(anonymous namespace)::x", NULL },
	{ "ns::(anonymous namespace)::x", NULL },
	{ "A::operator()", NULL },
	{ "core::fmt::write::h0123456789abcdef", NULL },
	{ "", NULL },
	{ "(int)", NULL },
	{ "f(int", NULL },
};

static void test_strip_params(void **state)
{
	char buf[256];

	(void)state;
	for (size_t i = 0; i < sizeof(strip_cases) / sizeof(strip_cases[0]); i++) {
		const struct strip_case *tc = &strip_cases[i];
		char *out;

		memset(buf, 'x', sizeof(buf));
		out = funcpattern__strip_params(tc->in, buf, sizeof(buf));
		if (!tc->out && !out)
			continue;
		if (!tc->out || !out || out != buf || strcmp(out, tc->out) != 0)
			fail_msg("strip \"%s\": \"%s\", expected \"%s\"", tc->in,
				 out ? out : "(null)", tc->out ? tc->out : "(null)");
	}

	/* "ns::A::f" needs 9 bytes with its NUL. */
	assert_null(funcpattern__strip_params("ns::A::f(int)", buf, 8));
	assert_ptr_equal(funcpattern__strip_params("ns::A::f(int)", buf, 9), buf);
	assert_string_equal(buf, "ns::A::f");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_exclude),
		cmocka_unit_test(test_match_object),
		cmocka_unit_test(test_match_object_realpath),
		cmocka_unit_test(test_match_func),
		cmocka_unit_test(test_match_func_long),
		cmocka_unit_test(test_strip_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
