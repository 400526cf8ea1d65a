// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_expr: --if / --on-change parsing (errors with their column) and
 * compiling to the BPF side's postfix programs, table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "dwarf/ctype.h"
#include "filter/expr.h"
#include "probe/resolve.h"

static char last_msg[512];

static void sink(void *ctx, enum log_level level, const char *text)
{
	(void)ctx;
	(void)level;
	snprintf(last_msg, sizeof(last_msg), "%s", text);
}

/* --- parse ---------------------------------------------------------------- */

struct parse_case {
	const char *text;
	const char *err; /* NULL: parses */
};

static const struct parse_case parse_cases[] = {
	{ "a >= 7", NULL },
	{ "a", NULL },
	{ "!a", NULL },
	{ "!(a == 1 || b != 2) && c < -3", NULL },
	{ "req->len > 5 && req->hdr.kind == 0x10", NULL },
	{ "method == \"GET\"", NULL },
	{ "\"a\\\"b\" != s", NULL },
	{ "  ( ( a ) )  ", NULL },
	{ "a > (b", "--if: expected ')' at column 7: a > (b" },
	{ "a >", "--if: expected a value, found the end at column 4: a >" },
	{ "", "--if: expected a value, found the end at column 1: " },
	{ "a = 1", "--if: '=' is not a comparison (use '==') at column 3: a = 1" },
	{ "a == 1)", "--if: unbalanced ')' at column 7: a == 1)" },
	{ "a b", "--if: expected an operator at column 3: a b" },
	{ "a & b", "--if: unexpected '&' at column 3: a & b" },
	{ "a == \"x", "--if: expected '\"' at column 8: a == \"x" },
	{ "a == 12x", "--if: invalid number at column 6: a == 12x" },
	/* a multi-line YAML string (a spec's if:): the error stays one line */
	{ "a ==\n\t12x\x01", "--if: invalid number at column 7: a ==\\n\\t12x\\x01" },
	{ "a->", "--if: expected a member name at column 4: a->" },
	{ "a == \"0123456789012345678901234567890123\"",
	  "--if: string longer than 32 bytes at column 6: a == \"0123456789012345678901234567890123\"" },
	{ "a == \"\\q\"", "--if: unknown escape at column 7: a == \"\\q\"" },
	{ "a > > 1", "--if: expected a value at column 5: a > > 1" },
};

static void test_parse(void **state)
{
	(void)state;
	log_set_sink(sink, NULL);
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *tc = &parse_cases[i];
		struct expr *e = NULL;
		int ret;

		last_msg[0] = 0;
		ret = expr__parse(tc->text, "--if", &e);
		if (!tc->err && ret)
			fail_msg("\"%s\": %d (%s)", tc->text, ret, last_msg);
		if (tc->err && (ret != -EINVAL || strcmp(last_msg, tc->err)))
			fail_msg("\"%s\": %d \"%s\", expected \"%s\"", tc->text, ret, last_msg,
				 tc->err);
		if (!ret)
			assert_non_null(e);
		expr__free(e);
	}
	log_set_sink(NULL, NULL);
}

static void test_at_exit(void **state)
{
	static const struct { const char *text; bool at_exit; } cases[] = {
		{ "a > 1", false }, { "ret == 0", true }, { "a && latency_ns > 5", true },
		{ "!(x->ret == 1)", false }, { "arg0 > 1", false },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct expr *e = NULL;

		assert_int_equal(expr__parse(cases[i].text, "--if", &e), 0);
		if (expr__at_exit(e) != cases[i].at_exit)
			fail_msg("\"%s\": at_exit %d", cases[i].text, !cases[i].at_exit);
		expr__free(e);
	}
}

/* --- compile -------------------------------------------------------------- */

struct insn { uint8_t op; int64_t imm; uint8_t size; uint8_t is_signed; };

#define MAXI 12
struct compile_case {
	const char *text;
	bool dwarf;
	int ret;
	const char *err;
	struct insn want[MAXI];
	size_t n;
	const char *str0;
};

/* int handle(struct req *r, int n, unsigned long u) */
static struct func_sig *make_sig(void)
{
	static struct func_param params[3];
	static struct func_sig sig;
	struct ctype_arena *a = ctype_arena__new();
	struct ctype *ch = ctype__new_int(a, CTYPE_CHAR, "char", 1);
	struct ctype *in = ctype__new_int(a, CTYPE_INT, "int", 4);
	struct ctype *lg = ctype__new_int(a, CTYPE_INT, "long", 8);
	struct ctype *us = ctype__new_int(a, CTYPE_UINT, "unsigned short", 2);
	struct ctype *ul = ctype__new_int(a, CTYPE_UINT, "unsigned long", 8);
	struct ctype *hdr = ctype__new(a, CTYPE_STRUCT, "struct hdr", 8, 4);
	struct ctype *req = ctype__new(a, CTYPE_STRUCT, "struct req", 32, 8);
	struct ctype_member *hm = ctype_arena__alloc(a, 2 * sizeof(*hm));
	struct ctype_member *rm = ctype_arena__alloc(a, 4 * sizeof(*rm));

	ch->is_signed = true;
	hm[0] = (struct ctype_member){ .name = "kind", .offset = 0, .type = in };
	hm[1] = (struct ctype_member){ .name = "flags", .offset = 4, .type = us };
	hdr->members = hm;
	hdr->n_members = 2;
	rm[0] = (struct ctype_member){ .name = "method", .offset = 0,
				       .type = ctype__new_pointer(a, ch) };
	rm[1] = (struct ctype_member){ .name = "len", .offset = 8, .type = lg };
	rm[2] = (struct ctype_member){ .name = "hdr", .offset = 16, .type = hdr };
	rm[3] = (struct ctype_member){ .name = "tag", .offset = 24,
				       .type = ctype__new_array(a, ch, 8) };
	req->members = rm;
	req->n_members = 4;
	params[0] = (struct func_param){ .name = "r", .type = ctype__new_pointer(a, req),
					 .loc = { .n = 1, .p = { { .kind = DLOC_REG, .reg = DREG_RDI,
								   .size = 8 } } } };
	params[1] = (struct func_param){ .name = "n", .type = in,
					 .loc = { .n = 1, .p = { { .kind = DLOC_REG, .reg = DREG_RSI,
								   .size = 4 } } } };
	params[2] = (struct func_param){ .name = "u", .type = ul,
					 .loc = { .n = 1, .p = { { .kind = DLOC_REG, .reg = DREG_RDX,
								   .size = 8 } } } };
	sig.name = "handle";
	sig.params = params;
	sig.n_params = 3;
	sig.ret_type = in;
	sig.ret_loc = (struct dloc){ .n = 1, .p = { { .kind = DLOC_REG, .reg = DREG_RAX, .size = 4 } } };
	sig.arena = a;
	return &sig;
}

#define I(o, i, s, g) { CMON_OP_##o, i, s, g }
static const struct compile_case compile_cases[] = {
	{ "arg0 >= 7", false, 0, NULL, { I(ARG, 0, 8, 1), I(CONST, 7, 8, 1), I(GE, 0, 0, 1) }, 3 },
	{ "n >= -7", true, 0, NULL, { I(ARG, 1, 4, 1), I(CONST, -7, 8, 1), I(GE, 0, 0, 1) }, 3 },
	{ "arg1 == 1", true, 0, NULL, { I(ARG, 1, 4, 1), I(CONST, 1, 8, 1), I(EQ, 0, 0, 1) }, 3 },
	/* u64 compares unsigned */
	{ "u < 5", true, 0, NULL, { I(ARG, 2, 8, 0), I(CONST, 5, 8, 1), I(LT, 0, 0, 0) }, 3 },
	{ "ret > 0 || latency_ns > 10", true, 0, NULL,
	  { I(RET, 0, 4, 1), I(CONST, 0, 8, 1), I(GT, 0, 0, 1), I(LAT, 0, 8, 0),
	    I(CONST, 10, 8, 1), I(GT, 0, 0, 0), I(OR, 0, 0, 0) }, 7 },
	{ "r->len > 5", true, 0, NULL,
	  { I(ARG, 0, 8, 0), I(LOAD, 8, 8, 1), I(CONST, 5, 8, 1), I(GT, 0, 0, 1) }, 4 },
	{ "!(r->hdr.flags != 3)", true, 0, NULL,
	  { I(ARG, 0, 8, 0), I(LOAD, 20, 2, 0), I(CONST, 3, 8, 1), I(NE, 0, 0, 1),
	    I(NOT, 0, 0, 0) }, 5 },
	{ "r->method == \"GET\"", true, 0, NULL,
	  { I(ARG, 0, 8, 0), I(LOAD, 0, 8, 0), I(STR_EQ, 0, 0, 0) }, 3, "GET" },
	{ "\"t1\" != r->tag", true, 0, NULL,
	  { I(ARG, 0, 8, 0), I(LOAD, 24, 0, 0), I(STR_EQ, 0, 0, 0), I(NOT, 0, 0, 0) }, 4, "t1" },
	{ "x > 1", true, -EINVAL, "--if: handle has no parameter 'x' at column 1: x > 1" },
	{ "n > 1", false, -EINVAL,
	  "--if: 'n': handle has no DWARF (name arguments arg0..arg5) at column 1: n > 1" },
	{ "r->nope", true, -EINVAL, "--if: struct req has no member 'nope' at column 4: r->nope" },
	{ "r->hdr", true, -EINVAL, "--if: 'r' is a struct: name one of its members at column 1: r->hdr" },
	{ "n->x", true, -EINVAL, "--if: '->x': not a pointer to a struct at column 4: n->x" },
	{ "n == \"a\"", true, -EINVAL,
	  "--if: not a string (a char * or a char array) at column 1: n == \"a\"" },
	{ "r->method < \"a\"", true, -EINVAL,
	  "--if: a string compares with == and != only at column 11: r->method < \"a\"" },
	{ "\"a\"", true, -EINVAL,
	  "--if: a string compares with == or != against a char * or char array at column 1: \"a\"" },
	{ "r.len", true, -EINVAL,
	  "--if: '.len': not a struct (use '->' through a pointer) at column 3: r.len" },
};

static void test_compile(void **state)
{
	struct func_sig *sig = make_sig();

	(void)state;
	log_set_sink(sink, NULL);
	for (size_t i = 0; i < sizeof(compile_cases) / sizeof(compile_cases[0]); i++) {
		const struct compile_case *tc = &compile_cases[i];
		struct cmon_expr_prog prog;
		struct expr *e = NULL;
		int ret;

		assert_int_equal(expr__parse(tc->text, "--if", &e), 0);
		last_msg[0] = 0;
		ret = expr__compile(e, tc->dwarf ? sig : NULL, "handle", &prog);
		expr__free(e);
		if (ret != tc->ret || (tc->err && strcmp(last_msg, tc->err)))
			fail_msg("\"%s\": %d \"%s\", expected %d \"%s\"", tc->text, ret, last_msg,
				 tc->ret, tc->err ? tc->err : "");
		if (ret)
			continue;
		if (prog.n != tc->n)
			fail_msg("\"%s\": %u instructions, expected %zu", tc->text, prog.n, tc->n);
		for (size_t k = 0; k < tc->n; k++) {
			const struct cmon_expr_insn *in = &prog.insns[k];
			const struct insn *w = &tc->want[k];

			if (in->op != w->op || in->imm != w->imm || in->size != w->size ||
			    in->is_signed != w->is_signed)
				fail_msg("\"%s\" insn %zu: op %u imm %lld size %u signed %u, expected "
					 "op %u imm %lld size %u signed %u", tc->text, k, in->op,
					 (long long)in->imm, in->size, in->is_signed, w->op,
					 (long long)w->imm, w->size, w->is_signed);
		}
		if (tc->str0 && strcmp(prog.strs[0], tc->str0))
			fail_msg("\"%s\": string 0 \"%s\"", tc->text, prog.strs[0]);
	}
	log_set_sink(NULL, NULL);
	ctype_arena__put(sig->arena);
}

/* A program longer than the BPF side runs, or deeper than its stack. */
static void test_limits(void **state)
{
	char text[1024] = "arg0";
	struct cmon_expr_prog prog;
	struct expr *e = NULL;

	(void)state;
	for (int i = 0; i < 20; i++)
		strcat(text, " && arg1");
	log_set_sink(sink, NULL);
	assert_int_equal(expr__parse(text, "--if", &e), 0);
	assert_int_equal(expr__compile(e, NULL, "f", &prog), -EINVAL);
	assert_non_null(strstr(last_msg, "too long for f (at most 32 steps)"));
	expr__free(e);
	assert_int_equal(expr__parse("arg0 == (arg1 == (arg2 == (arg3 == (arg4 == (arg5 == "
				     "(arg0 == (arg1 == (arg2 == 1))))))))", "--if", &e), 0);
	assert_int_equal(expr__compile(e, NULL, "f", &prog), -EINVAL);
	assert_non_null(strstr(last_msg, "nested too deeply"));
	expr__free(e);
	log_set_sink(NULL, NULL);
}

/* A run's programs: 2 per function, both decided at the return when
 * either needs it; a glob's name missing in one function names it; a
 * USDT site is refused; no text: no programs. */
static void test_compile_run(void **state)
{
	struct probe_object obj = { .path = "/nonexistent", .attach_path = "/nonexistent" };
	struct probe_func funcs[3] = { { .name = "f" }, { .name = "g" }, { .name = "site" } };
	struct probe_set set = { .objects = &obj, .n_objects = 1, .funcs = funcs, .n_funcs = 2 };
	struct cmon_expr_prog *p = NULL;

	(void)state;
	log_set_sink(sink, NULL);
	assert_int_equal(expr__compile_run(NULL, NULL, &set, false, &p), 0);
	assert_null(p);
	assert_int_equal(expr__compile_run("arg0 > 1", "ret", &set, false, &p), 0);
	assert_non_null(p);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(p[2 * i].n, 3);
		assert_int_equal(p[2 * i + 1].n, 1);
		assert_int_equal(p[2 * i].flags, CMON_EXPR_AT_EXIT);     /* for --on-change's ret */
		assert_int_equal(p[2 * i + 1].flags, CMON_EXPR_AT_EXIT);
	}
	free(p);
	assert_int_equal(expr__compile_run("arg0 > 1", NULL, &set, false, &p), 0);
	assert_int_equal(p[0].flags, 0);
	assert_int_equal(p[1].n, 0);
	free(p);
	p = NULL;
	assert_int_equal(expr__compile_run("arg0 > 1", "latency_ns", &set, true, &p), -EINVAL);
	assert_string_equal(last_msg, "--on-change: ret and latency_ns need the return (not with "
				      "--no-return): latency_ns");
	assert_null(p);
	assert_int_equal(expr__compile_run("len > 1", NULL, &set, false, &p), -EINVAL);
	assert_string_equal(last_msg, "--if: 'len': f has no DWARF (name arguments arg0..arg5) at "
				      "column 1: len > 1");
	funcs[2].usdt = true;
	set.n_funcs = 3;
	assert_int_equal(expr__compile_run(NULL, "arg1", &set, false, &p), -EINVAL);
	assert_string_equal(last_msg, "--on-change: site is a USDT probe or a source line: "
				      "--on-change applies to functions (--func) only");
	assert_null(p);
	log_set_sink(NULL, NULL);
}

/* A hostile depth (30,000 '(' or 100,000 '!' overflowed the recursive
 * parser's stack; a 100,000-term chain the free's): one line naming the
 * bound, at the column where it was passed; 64 levels still parse. */
static char *repeat(const char *head, size_t n, const char *mid, const char *tail, size_t m)
{
	size_t lh = strlen(head), lt = strlen(tail), lm = strlen(mid);
	char *s = malloc(lh * n + lm + lt * m + 1), *p = s;

	assert_non_null(s);
	for (size_t i = 0; i < n; i++, p += lh)
		memcpy(p, head, lh);
	memcpy(p, mid, lm);
	p += lm;
	for (size_t i = 0; i < m; i++, p += lt)
		memcpy(p, tail, lt);
	*p = 0;
	return s;
}

static void test_depth(void **state)
{
	static const struct {
		const char *head; size_t n; const char *mid; const char *tail; size_t m;
		int col; /* 0: parses */
	} cases[] = {
		{ "(", 30000, "a", ")", 30000, 65 },
		{ "!", 100000, "a", "", 0, 65 },
		{ "!(", 50000, "a", ")", 50000, 65 },
		{ "a||", 100000, "a", "", 0, 194 },
		{ "a&&", 100000, "a", "", 0, 194 },
		{ "(", 64, "a", ")", 64, 0 },
		{ "!", 64, "a", "", 0, 0 },
		{ "a||", 64, "a", "", 0, 0 },
		{ "!(a||", 32, "a", ")", 32, 0 },
	};
	char want[512];

	(void)state;
	log_set_sink(sink, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = repeat(cases[i].head, cases[i].n, cases[i].mid, cases[i].tail,
				    cases[i].m);
		struct expr *e = NULL;
		int ret = expr__parse(text, "--if", &e);

		if (!cases[i].col) {
			if (ret)
				fail_msg("case %zu: %d %s", i, ret, last_msg);
			expr__free(e);
			free(text);
			continue;
		}
		assert_int_equal(ret, -EINVAL);
		assert_null(e);
		snprintf(want, sizeof(want), "--if: nested deeper than 64 levels at column %d: %.200s...",
			 cases[i].col, text);
		assert_string_equal(last_msg, want);
		assert_int_equal(expr__check(text, want, sizeof(want)), -EINVAL);
		assert_non_null(strstr(want, "nested deeper than 64 levels at column "));
		free(text);
	}
	log_set_sink(NULL, NULL);
}

/* 20,000 expressions made of the grammar's pieces at random (fixed seed),
 * and byte flips of valid ones: each parses or is refused with one message,
 * and what parses compiles or is refused, with and without DWARF names
 * (the sanitized build of this test is what checks the memory). */
static uint64_t fuzz_state = 0x2545f4914f6cdd1dull;

static uint64_t fuzz_next(void)
{
	fuzz_state ^= fuzz_state << 13;
	fuzz_state ^= fuzz_state >> 7;
	fuzz_state ^= fuzz_state << 17;
	return fuzz_state;
}

static void test_fuzz(void **state)
{
	static const char *const pieces[] = {
		"r", "n", "u", "arg0", "arg5", "ret", "latency_ns", "x", "->", ".", "->hdr",
		"->method", "->len", ".kind", ".flags", "==", "!=", "<", "<=", ">", ">=",
		"&&", "||", "!", "(", ")", " ", "0", "-1", "0x10", "0x", "99999999999999999999",
		"\"GET\"", "\"", "\"a\\\"b\"", "\\", "=", "&", "|", "\x01", "\xff", "12x",
		"-", "--", "@", "[", "]", "->tag",
	};
	struct func_sig *sig = make_sig();
	int parsed = 0;

	(void)state;
	log_set_sink(sink, NULL);
	for (int iter = 0; iter < 20000; iter++) {
		char text[256] = "";
		struct cmon_expr_prog prog;
		struct expr *e = NULL;
		size_t len = 0;
		int n = 1 + (int)(fuzz_next() % 12), ret;

		if (iter % 4 == 3) { /* a valid one, damaged */
			snprintf(text, sizeof(text), "%s", compile_cases[fuzz_next() %
				 (sizeof(compile_cases) / sizeof(compile_cases[0]))].text);
			len = strlen(text);
			for (int k = 0; len && k < 1 + (int)(fuzz_next() % 3); k++)
				text[fuzz_next() % len] = (char)(1 + fuzz_next() % 255);
		} else {
			for (int k = 0; k < n; k++) {
				const char *p = pieces[fuzz_next() % (sizeof(pieces) / sizeof(pieces[0]))];

				if (len + strlen(p) + 1 >= sizeof(text))
					break;
				memcpy(text + len, p, strlen(p) + 1);
				len += strlen(p);
			}
		}
		last_msg[0] = 0;
		ret = expr__parse(text, "--if", &e);
		if (ret) {
			assert_int_equal(ret, -EINVAL);
			assert_null(e);
			assert_non_null(strstr(last_msg, "--if: "));
			assert_null(strchr(last_msg, '\n'));
			continue;
		}
		parsed++;
		ret = expr__compile(e, sig, "handle", &prog);
		assert_true(ret == 0 || ret == -EINVAL);
		ret = expr__compile(e, NULL, "handle", &prog);
		assert_true(ret == 0 || ret == -EINVAL);
		expr__free(e);
	}
	assert_true(parsed > 1000); /* both outcomes happen */
	log_set_sink(NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_at_exit),
		cmocka_unit_test(test_compile),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_compile_run),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_depth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
