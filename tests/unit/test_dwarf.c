// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_dwarf: debuginfo (finding DWARF, types, locations at the probe
 * address), plan (fetch items) and render (JSON) against
 * tests/unit/fixtures/dwarf_fixture.c built at -O0 and -O2 (fixtures.mk;
 * found through $CMON_FIXTURES, default build/tests/fixtures).
 *
 * Expected locations are the SysV ABI's, worked out by hand from the
 * fixture's prototypes; expected offsets come from the same struct
 * definitions compiled here (offsetof), so they are independent of libdw.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf/ctype.h"
#include "dwarf/debuginfo.h"
#include "dwarf/globals.h"
#include "elf/objsym.h"
#include "dwarf/plan.h"
#include "output/render.h"

/* The fixture's types, for offsets and item bytes. */
enum color { RED = 0, GREEN = 5, BLUE = -1 };
struct small { int a; long b; };
struct large { long v[4]; char tag; };
struct big_ret { long a, b, c; };
struct inner { short x, y; };
struct rec {
	int id;
	struct inner pos;
	const char *name;
	char label[6];
	unsigned char bytes[4];
	unsigned flag : 1, kind : 3;
	signed lvl : 4;
	enum color col;
	int grid[2][3];
	union { int i; float f; } u;
	struct { short ax, ay; };
	struct rec *next;
};

static char fixture_buf[PATH_MAX];

static const char *fixture_dir(void)
{
	const char *dir = getenv("CMON_FIXTURES");

	return dir && *dir ? dir : "build/tests/fixtures";
}

static const char *fixture(const char *name)
{
	snprintf(fixture_buf, sizeof(fixture_buf), "%s/%s", fixture_dir(), name);
	if (access(fixture_buf, R_OK) != 0)
		fail_msg("fixture %s missing: run `make unit-fixtures`", fixture_buf);
	return fixture_buf;
}

/* The two builds, opened once. */
static const char *const variants[] = { "dwarf_fixture_O0", "dwarf_fixture_O2" };
static struct debuginfo *dis[2];

static int group_setup(void **state)
{
	for (int i = 0; i < 2; i++) {
		dis[i] = debuginfo__open(fixture(variants[i]));
		if (!dis[i])
			return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	for (int i = 0; i < 2; i++)
		debuginfo__free(dis[i]);
	return 0;
}

static uint64_t func_addr(struct debuginfo *di, const char *name)
{
	uint64_t a = 0;
	int err = debuginfo__func_addr(di, name, &a);

	if (err)
		fail_msg("debuginfo__func_addr(%s): %d", name, err);
	return a;
}

/* The signature at the probe address cmon uses: past the endbr64 every
 * fixture function starts with (-fcf-protection). */
static struct func_sig *sig_at(struct debuginfo *di, const char *name, uint64_t skip)
{
	uint64_t a = func_addr(di, name);
	struct func_sig *s = NULL;
	int err = debuginfo__signature(di, a, a + skip, true, &s);

	if (err)
		fail_msg("debuginfo__signature(%s): %d", name, err);
	return s;
}

/* ------------------------------------------------------------------ */
/* finding DWARF                                                       */

static void test_open_kinds(void **state)
{
	static const struct {
		const char *file;
		bool with_root;
		enum debuginfo_kind kind;
		const char *desc_has;
		const char *dwarf_file; /* basename of the DWARF file, or NULL */
	} cases[] = {
		{ "dwarf_fixture_O0", false, DEBUGINFO_DWARF, "DWARF in ", "dwarf_fixture_O0" },
		{ "dwarf_fixture_debuglink", false, DEBUGINFO_DWARF, "(.gnu_debuglink)",
		  "dwarf_fixture_debuglink.debug" },
		{ "dwarf_fixture_buildid", true, DEBUGINFO_DWARF, "(build-id)", NULL },
		{ "dwarf_fixture_buildid", false, DEBUGINFO_NONE, "no DWARF", NULL },
		{ "dwarf_fixture_mismatch", false, DEBUGINFO_NONE, "no DWARF", NULL },
		{ "dwarf_fixture_minidebug", false, DEBUGINFO_SYMBOLS_ONLY,
		  "symbols only (.gnu_debugdata), no DWARF", NULL },
	};
	char root[PATH_MAX];

	snprintf(root, sizeof(root), "%s/dwarf_debugroot", fixture_dir());
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct debuginfo_opts o = { .debug_root = cases[i].with_root ? root : "/nonexistent" };
		struct debuginfo *di = debuginfo__open_opts(fixture(cases[i].file), &o);
		struct func_sig *sig = NULL;
		uint64_t a = 0;
		int err;

		assert_non_null(di);
		if (debuginfo__kind(di) != cases[i].kind)
			fail_msg("%s: kind %d, expected %d (%s)", cases[i].file, debuginfo__kind(di),
				 cases[i].kind, debuginfo__describe(di));
		assert_non_null(strstr(debuginfo__describe(di), cases[i].desc_has));
		if (cases[i].kind == DEBUGINFO_DWARF) {
			const char *p = debuginfo__dwarf_path(di);

			assert_non_null(p);
			if (cases[i].dwarf_file)
				assert_string_equal(strrchr(p, '/') + 1, cases[i].dwarf_file);
			else
				assert_non_null(strstr(p, "/dwarf_debugroot/.build-id/"));
			/* and the signatures are there */
			assert_int_equal(debuginfo__func_addr(di, "f_eight", &a), 0);
			assert_int_equal(debuginfo__signature(di, a, a + 4, true, &sig), 0);
			assert_int_equal(sig->n_params, 8);
			func_sig__free(sig);
		} else {
			assert_null(debuginfo__dwarf_path(di));
			err = debuginfo__signature(di, 0x1000, 0x1000, true, &sig);
			assert_int_equal(err, -ENODATA);
			assert_null(sig);
		}
		debuginfo__free(di);
	}
}

static void test_open_errors(void **state)
{
	char path[PATH_MAX];
	struct debuginfo *di;
	FILE *f;

	errno = 0;
	di = debuginfo__open("/nonexistent/cmon-test");
	assert_null(di);
	assert_int_equal(errno, ENOENT);

	snprintf(path, sizeof(path), "/tmp/cmon-test-dwarf-%d", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	errno = 0;
	di = debuginfo__open(path);
	assert_null(di);
	assert_int_equal(errno, ENOEXEC);
	unlink(path);
	debuginfo__free(NULL);
	func_sig__free(NULL);
}

static void test_no_function(void **state)
{
	for (int v = 0; v < 2; v++) {
		uint64_t a = func_addr(dis[v], "f_eight");
		struct func_sig *sig = (void *)1;

		/* inside a function, not at its start; and no code at all */
		assert_int_equal(debuginfo__signature(dis[v], a + 1, a + 1, true, &sig), -ENOENT);
		assert_null(sig);
		assert_int_equal(debuginfo__signature(dis[v], 8, 8, true, &sig), -ENOENT);
		assert_int_equal(debuginfo__func_addr(dis[v], "no_such_function", &a), -ENOENT);
	}
}

/* ------------------------------------------------------------------ */
/* signatures                                                          */

struct xp {
	uint8_t kind, reg;
	uint32_t size;
	int64_t off;
};

struct xparam {
	const char *name, *type;
	enum ctype_kind kind;
	uint32_t size;
	uint8_t n;
	struct xp p[2];
};

#define R(r, sz) { DLOC_REG, r, sz, 0 }
#define M(r, o, sz) { DLOC_MEM, r, sz, o }
#define X(r, sz) { DLOC_XMM, r, sz, 0 }

static const struct xfunc {
	const char *name;
	const char *ret_type;
	enum ctype_kind ret_kind;
	uint8_t ret_n;
	struct xp ret[2];
	size_t n;
	struct xparam params[8];
} sigs[] = {
	{ "f_ints", "long int", CTYPE_INT, 1, { R(DREG_RAX, 8) }, 6, {
		{ "a", "signed char", CTYPE_INT, 1, 1, { R(DREG_RDI, 1) } },
		{ "b", "unsigned char", CTYPE_UINT, 1, 1, { R(DREG_RSI, 1) } },
		{ "c", "short int", CTYPE_INT, 2, 1, { R(DREG_RDX, 2) } },
		{ "d", "short unsigned int", CTYPE_UINT, 2, 1, { R(DREG_RCX, 2) } },
		{ "e", "int", CTYPE_INT, 4, 1, { R(DREG_R8, 4) } },
		{ "f", "unsigned int", CTYPE_UINT, 4, 1, { R(DREG_R9, 4) } } } },
	{ "f_ints64", "long int", CTYPE_INT, 1, { R(DREG_RAX, 8) }, 6, {
		{ "a", "long int", CTYPE_INT, 8, 1, { R(DREG_RDI, 8) } },
		{ "b", "long unsigned int", CTYPE_UINT, 8, 1, { R(DREG_RSI, 8) } },
		{ "c", "long long int", CTYPE_INT, 8, 1, { R(DREG_RDX, 8) } },
		{ "d", "long long unsigned int", CTYPE_UINT, 8, 1, { R(DREG_RCX, 8) } },
		{ "e", "int64_t", CTYPE_INT, 8, 1, { R(DREG_R8, 8) } },
		{ "g", "uint8_t", CTYPE_UINT, 1, 1, { R(DREG_R9, 1) } } } },
	{ "f_misc", "int", CTYPE_INT, 1, { R(DREG_RAX, 4) }, 5, {
		{ "c", "char", CTYPE_CHAR, 1, 1, { R(DREG_RDI, 1) } },
		{ "b", "_Bool", CTYPE_BOOL, 1, 1, { R(DREG_RSI, 1) } },
		{ "col", "enum color", CTYPE_ENUM, 4, 1, { R(DREG_RDX, 4) } },
		{ "p", "void *", CTYPE_POINTER, 8, 1, { R(DREG_RCX, 8) } },
		{ "s", "const char *", CTYPE_POINTER, 8, 1, { R(DREG_R8, 8) } } } },
	{ "f_small", "long int", CTYPE_INT, 1, { R(DREG_RAX, 8) }, 2, {
		{ "s", "struct small", CTYPE_STRUCT, 16, 2, { R(DREG_RDI, 8), R(DREG_RSI, 8) } },
		{ "after", "int", CTYPE_INT, 4, 1, { R(DREG_RDX, 4) } } } },
	{ "f_large", "long int", CTYPE_INT, 1, { R(DREG_RAX, 8) }, 2, {
		{ "l", "struct large", CTYPE_STRUCT, 40, 1, { M(DREG_RSP, 8, 40) } },
		{ "after", "int", CTYPE_INT, 4, 1, { R(DREG_RDI, 4) } } } },
	{ "f_ptr", "long int", CTYPE_INT, 1, { R(DREG_RAX, 8) }, 2, {
		{ "r", "const rec_t *", CTYPE_POINTER, 8, 1, { R(DREG_RDI, 8) } },
		{ "r2", "struct rec *", CTYPE_POINTER, 8, 1, { R(DREG_RSI, 8) } } } },
	{ "f_eight", "long int", CTYPE_INT, 1, { R(DREG_RAX, 8) }, 8, {
		{ "a1", "int", CTYPE_INT, 4, 1, { R(DREG_RDI, 4) } },
		{ "a2", "int", CTYPE_INT, 4, 1, { R(DREG_RSI, 4) } },
		{ "a3", "int", CTYPE_INT, 4, 1, { R(DREG_RDX, 4) } },
		{ "a4", "int", CTYPE_INT, 4, 1, { R(DREG_RCX, 4) } },
		{ "a5", "int", CTYPE_INT, 4, 1, { R(DREG_R8, 4) } },
		{ "a6", "int", CTYPE_INT, 4, 1, { R(DREG_R9, 4) } },
		{ "a7", "int", CTYPE_INT, 4, 1, { M(DREG_RSP, 8, 4) } },
		{ "a8", "int", CTYPE_INT, 4, 1, { M(DREG_RSP, 16, 4) } } } },
	{ "f_stack_ptr", "long int", CTYPE_INT, 1, { R(DREG_RAX, 8) }, 8, {
		{ "a", "long int", CTYPE_INT, 8, 1, { R(DREG_RDI, 8) } },
		{ "b", "long int", CTYPE_INT, 8, 1, { R(DREG_RSI, 8) } },
		{ "c", "long int", CTYPE_INT, 8, 1, { R(DREG_RDX, 8) } },
		{ "d", "long int", CTYPE_INT, 8, 1, { R(DREG_RCX, 8) } },
		{ "e", "long int", CTYPE_INT, 8, 1, { R(DREG_R8, 8) } },
		{ "f", "long int", CTYPE_INT, 8, 1, { R(DREG_R9, 8) } },
		{ "r", "struct rec *", CTYPE_POINTER, 8, 1, { M(DREG_RSP, 8, 8) } },
		{ "s", "const char *", CTYPE_POINTER, 8, 1, { M(DREG_RSP, 16, 8) } } } },
	{ "f_double", "double", CTYPE_FLOAT, 1, { X(DREG_XMM0, 8) }, 3, {
		{ "i", "int", CTYPE_INT, 4, 1, { R(DREG_RDI, 4) } },
		{ "d", "double", CTYPE_FLOAT, 8, 1, { X(DREG_XMM0, 8) } },
		{ "j", "long int", CTYPE_INT, 8, 1, { R(DREG_RSI, 8) } } } },
	{ "f_mixed", "long int", CTYPE_INT, 1, { R(DREG_RAX, 8) }, 2, {
		{ "m", "struct mixed", CTYPE_STRUCT, 16, 2, { R(DREG_RDI, 8), X(DREG_XMM0, 8) } },
		{ "k", "long int", CTYPE_INT, 8, 1, { R(DREG_RSI, 8) } } } },
	{ "f_ret_pair", "struct pair", CTYPE_STRUCT, 1, { R(DREG_RAX, 8) }, 2, {
		{ "x", "int", CTYPE_INT, 4, 1, { R(DREG_RDI, 4) } },
		{ "y", "int", CTYPE_INT, 4, 1, { R(DREG_RSI, 4) } } } },
	{ "f_ret_small", "struct small", CTYPE_STRUCT, 2, { R(DREG_RAX, 8), R(DREG_RDX, 8) }, 2, {
		{ "a", "int", CTYPE_INT, 4, 1, { R(DREG_RDI, 4) } },
		{ "b", "long int", CTYPE_INT, 8, 1, { R(DREG_RSI, 8) } } } },
	/* returned in memory: the buffer's address is a hidden rdi */
	{ "f_ret_big", "struct big_ret", CTYPE_STRUCT, 1, { M(DREG_RAX, 0, 24) }, 2, {
		{ "x", "long int", CTYPE_INT, 8, 1, { R(DREG_RSI, 8) } },
		{ "y", "long int", CTYPE_INT, 8, 1, { R(DREG_RDX, 8) } } } },
	{ "f_ret_double", "double", CTYPE_FLOAT, 1, { X(DREG_XMM0, 8) }, 1, {
		{ "x", "int", CTYPE_INT, 4, 1, { R(DREG_RDI, 4) } } } },
	{ "f_typedefs", "size_t", CTYPE_UINT, 1, { R(DREG_RAX, 8) }, 3, {
		{ "n", "size_t", CTYPE_UINT, 8, 1, { R(DREG_RDI, 8) } },
		{ "u", "u32_t", CTYPE_UINT, 4, 1, { R(DREG_RSI, 4) } },
		{ "r", "rec_t *", CTYPE_POINTER, 8, 1, { R(DREG_RDX, 8) } } } },
	{ "f_ret_str", "const char *", CTYPE_POINTER, 1, { R(DREG_RAX, 8) }, 1, {
		{ "i", "int", CTYPE_INT, 4, 1, { R(DREG_RDI, 4) } } } },
	/* s needs two registers, one is left: s goes to the stack, g takes r9 */
	{ "f_stack_struct", "long int", CTYPE_INT, 1, { R(DREG_RAX, 8) }, 7, {
		{ "a", "long int", CTYPE_INT, 8, 1, { R(DREG_RDI, 8) } },
		{ "b", "long int", CTYPE_INT, 8, 1, { R(DREG_RSI, 8) } },
		{ "c", "long int", CTYPE_INT, 8, 1, { R(DREG_RDX, 8) } },
		{ "d", "long int", CTYPE_INT, 8, 1, { R(DREG_RCX, 8) } },
		{ "e", "long int", CTYPE_INT, 8, 1, { R(DREG_R8, 8) } },
		{ "s", "struct small", CTYPE_STRUCT, 16, 1, { M(DREG_RSP, 8, 16) } },
		{ "g", "long int", CTYPE_INT, 8, 1, { R(DREG_R9, 8) } } } },
	{ "f_ldouble", "long int", CTYPE_INT, 1, { R(DREG_RAX, 8) }, 2, {
		{ "x", "long double", CTYPE_FLOAT, 16, 1, { M(DREG_RSP, 8, 16) } },
		{ "y", "int", CTYPE_INT, 4, 1, { R(DREG_RDI, 4) } } } },
	{ "f_buf", "double", CTYPE_FLOAT, 1, { X(DREG_XMM0, 8) }, 4, {
		{ "buf", "const unsigned char *", CTYPE_POINTER, 8, 1, { R(DREG_RDI, 8) } },
		{ "len", "size_t", CTYPE_UINT, 8, 1, { R(DREG_RSI, 8) } },
		{ "values", "const double *", CTYPE_POINTER, 8, 1, { R(DREG_RDX, 8) } },
		{ "n", "int", CTYPE_INT, 4, 1, { R(DREG_RCX, 4) } } } },
};

static void check_loc(const char *what, const struct dloc *l, uint8_t n, const struct xp *x)
{
	if (l->n != n)
		fail_msg("%s: %u pieces, expected %u", what, l->n, n);
	for (uint8_t i = 0; i < n; i++) {
		const struct dloc_piece *p = &l->p[i];

		if (p->kind != x[i].kind || p->reg != x[i].reg || p->size != x[i].size ||
		    (p->kind == DLOC_MEM && p->off != x[i].off))
			fail_msg("%s piece %u: kind %u reg %u size %u off %lld, expected "
				 "kind %u reg %u size %u off %lld", what, i, p->kind, p->reg, p->size,
				 (long long)p->off, x[i].kind, x[i].reg, x[i].size, (long long)x[i].off);
	}
}

static void check_sigs(uint64_t skip)
{
	char what[128];

	for (int v = 0; v < 2; v++) {
		for (size_t f = 0; f < sizeof(sigs) / sizeof(sigs[0]); f++) {
			const struct xfunc *x = &sigs[f];
			struct func_sig *s = sig_at(dis[v], x->name, skip);

			assert_string_equal(s->name, x->name);
			assert_int_equal(s->probe_addr, s->addr + skip);
			assert_false(s->variadic);
			snprintf(what, sizeof(what), "%s %s return", variants[v], x->name);
			assert_string_equal(s->ret_type->name, x->ret_type);
			assert_int_equal(s->ret_type->kind, x->ret_kind);
			check_loc(what, &s->ret_loc, x->ret_n, x->ret);
			assert_int_equal(s->n_params, x->n);
			for (size_t i = 0; i < x->n; i++) {
				const struct func_param *p = &s->params[i];
				const struct xparam *xp = &x->params[i];

				snprintf(what, sizeof(what), "%s %s(%s)", variants[v], x->name, xp->name);
				assert_string_equal(p->name, xp->name);
				if (strcmp(p->type->name, xp->type) != 0)
					fail_msg("%s: type '%s', expected '%s'", what, p->type->name, xp->type);
				assert_int_equal(p->type->kind, xp->kind);
				assert_int_equal(p->type->size, xp->size);
				check_loc(what, &p->loc, xp->n, xp->p);
				/* -O0: frame slots the prologue has not filled: the ABI */
				if (v == 0)
					assert_int_equal(p->loc.source, DLOC_SRC_ABI);
			}
			func_sig__free(s);
		}
	}
}

static void test_signatures_past_endbr(void **state)
{
	check_sigs(4);
}

static void test_signatures_at_entry(void **state)
{
	check_sigs(0);
}

/* -O2 lists say the argument registers at the entry: read from DWARF. */
static void test_o2_sources(void **state)
{
	struct func_sig *s = sig_at(dis[1], "f_eight", 4);

	assert_int_equal(s->params[0].loc.source, DLOC_SRC_DWARF);
	assert_int_equal(s->params[5].loc.source, DLOC_SRC_DWARF);
	func_sig__free(s);
}

/* The second line row of FUNC in the -O0 build: where gdb puts a
 * breakpoint past the prologue.  Found here with libdw directly. */
static uint64_t prologue_end_o0(const char *func)
{
	int fd = open(fixture(variants[0]), O_RDONLY);
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	uint64_t lo = 0, best = UINT64_MAX;
	Dwarf_Die cu;
	Dwarf_Off off = 0, next;
	size_t hs;

	assert_non_null(dw);
	lo = func_addr(dis[0], func);
	while (dwarf_nextcu(dw, off, &next, &hs, NULL, NULL, NULL) == 0) {
		Dwarf_Lines *lines;
		size_t n;

		if (dwarf_offdie(dw, off + hs, &cu) && dwarf_getsrclines(&cu, &lines, &n) == 0) {
			for (size_t i = 0; i < n; i++) {
				Dwarf_Addr a;

				if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a) == 0 && a > lo &&
				    a < best)
					best = a;
			}
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	return best;
}

/* A probe past the -O0 prologue: the arguments are in their frame slots
 * now, and DWARF's fbreg (CFA = rbp + 16 after push rbp; mov rsp,rbp) says
 * where. */
static void test_past_prologue(void **state)
{
	uint64_t a = func_addr(dis[0], "f_eight"), pc = prologue_end_o0("f_eight");
	struct func_sig *s = NULL;
	const struct xp a1 = M(DREG_RBP, -4, 4), a7 = M(DREG_RBP, 16, 4), a8 = M(DREG_RBP, 24, 4);

	assert_true(pc > a + 4 && pc < a + 64);
	assert_int_equal(debuginfo__signature(dis[0], a, pc, false, &s), 0);
	check_loc("a1", &s->params[0].loc, 1, &a1);
	check_loc("a7", &s->params[6].loc, 1, &a7);
	check_loc("a8", &s->params[7].loc, 1, &a8);
	assert_int_equal(s->params[0].loc.source, DLOC_SRC_DWARF);
	func_sig__free(s);
}

/* ------------------------------------------------------------------ */
/* types                                                               */

static const struct ctype_member *member(const struct ctype *t, const char *name)
{
	for (size_t i = 0; i < t->n_members; i++)
		if (t->members[i].name && !strcmp(t->members[i].name, name))
			return &t->members[i];
	fail_msg("%s has no member %s", t->name, name);
	return NULL;
}

static void test_types(void **state)
{
	for (int v = 0; v < 2; v++) {
		struct func_sig *s = sig_at(dis[v], "f_ptr", 4), *s2 = sig_at(dis[v], "f_typedefs", 4);
		const struct ctype *r = s->params[0].type, *rec = r->target, *t;
		const struct ctype_member *m;

		/* const rec_t -> rec_t -> struct rec, names kept, kinds resolved */
		assert_string_equal(rec->name, "const rec_t");
		assert_int_equal(rec->kind, CTYPE_STRUCT);
		assert_string_equal(rec->alias_of->name, "rec_t");
		assert_string_equal(ctype__concrete(rec)->name, "struct rec");
		assert_null(ctype__concrete(rec)->alias_of);
		assert_int_equal(rec->size, sizeof(struct rec));
		assert_int_equal(rec->align, _Alignof(struct rec));
		assert_true(ctype__is_struct_ptr(r));
		assert_false(ctype__is_string(r));

		static const struct {
			const char *name, *type;
			size_t off;
			enum ctype_kind kind;
		} mem[] = {
			{ "id", "int", offsetof(struct rec, id), CTYPE_INT },
			{ "pos", "struct inner", offsetof(struct rec, pos), CTYPE_STRUCT },
			{ "name", "const char *", offsetof(struct rec, name), CTYPE_POINTER },
			{ "label", "char [6]", offsetof(struct rec, label), CTYPE_ARRAY },
			{ "bytes", "unsigned char [4]", offsetof(struct rec, bytes), CTYPE_ARRAY },
			{ "col", "enum color", offsetof(struct rec, col), CTYPE_ENUM },
			{ "grid", "int [2][3]", offsetof(struct rec, grid), CTYPE_ARRAY },
			{ "u", "union {...}", offsetof(struct rec, u), CTYPE_UNION },
			{ "next", "struct rec *", offsetof(struct rec, next), CTYPE_POINTER },
		};
		for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++) {
			m = member(rec, mem[i].name);
			assert_string_equal(m->type->name, mem[i].type);
			assert_int_equal(m->offset, mem[i].off);
			assert_int_equal(m->type->kind, mem[i].kind);
			assert_int_equal(m->bit_size, 0);
		}
		assert_true(ctype__is_string(member(rec, "name")->type));
		/* bitfields: bit offsets from the start of the struct, LSB first */
		m = member(rec, "flag");
		assert_int_equal(m->bit_size, 1);
		assert_int_equal(m->bit_offset, 8 * offsetof(struct rec, bytes) + 32);
		m = member(rec, "kind");
		assert_int_equal(m->bit_size, 3);
		assert_int_equal(m->bit_offset, 8 * offsetof(struct rec, bytes) + 33);
		m = member(rec, "lvl");
		assert_int_equal(m->bit_size, 4);
		assert_int_equal(m->bit_offset, 8 * offsetof(struct rec, bytes) + 36);
		assert_int_equal(m->type->kind, CTYPE_INT);
		/* int [2][3] nests */
		t = member(rec, "grid")->type;
		assert_int_equal(t->count, 2);
		assert_int_equal(t->size, 24);
		assert_string_equal(t->target->name, "int [3]");
		assert_int_equal(t->target->count, 3);
		assert_int_equal(t->target->size, 12);
		assert_int_equal(t->target->target->kind, CTYPE_INT);
		t = member(rec, "label")->type;
		assert_int_equal(t->count, 6);
		assert_int_equal(t->target->kind, CTYPE_CHAR);
		/* the anonymous struct is an unnamed member */
		for (size_t i = 0; i < rec->n_members; i++)
			if (!rec->members[i].name) {
				assert_int_equal(rec->members[i].type->kind, CTYPE_STRUCT);
				assert_int_equal(rec->members[i].offset, offsetof(struct rec, ax));
			}
		/* recursion: next points back at struct rec */
		assert_ptr_equal(ctype__concrete(member(rec, "next")->type->target), ctype__concrete(rec));
		/* enum */
		t = member(rec, "col")->type;
		assert_true(t->is_signed);
		assert_int_equal(t->n_enumerators, 3);
		assert_string_equal(ctype__enum_name(t, 5), "GREEN");
		assert_string_equal(ctype__enum_name(t, -1), "BLUE");
		assert_null(ctype__enum_name(t, 7));
		/* typedefs */
		assert_string_equal(s2->params[0].type->name, "size_t");
		assert_string_equal(ctype__concrete(s2->params[0].type)->name, "long unsigned int");
		assert_string_equal(s2->params[2].type->target->name, "rec_t");
		assert_int_equal(s2->params[2].type->target->kind, CTYPE_STRUCT);
		assert_int_equal(s2->params[2].type->target->n_members, rec->n_members);
		func_sig__free(s);
		/* the types outlive the debuginfo's other users */
		func_sig__free(s2);
	}
}

static void test_dtype(void **state)
{
	struct ctype_arena *a = ctype_arena__new();
	char buf[16];
	static const struct {
		enum ctype_kind kind;
		uint32_t size;
		const char *dtype;
	} cases[] = {
		{ CTYPE_INT, 4, "<i4" }, { CTYPE_UINT, 8, "<u8" }, { CTYPE_UINT, 1, "|u1" },
		{ CTYPE_INT, 1, "|i1" }, { CTYPE_BOOL, 1, "|b1" }, { CTYPE_CHAR, 1, "|S1" },
		{ CTYPE_FLOAT, 8, "<f8" }, { CTYPE_FLOAT, 4, "<f4" }, { CTYPE_STRUCT, 24, "|V24" },
		{ CTYPE_INT, 16, "|V16" },
	};

	assert_non_null(a);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctype *t = ctype__new_int(a, cases[i].kind, "x", cases[i].size);

		assert_string_equal(ctype__dtype(t, buf, sizeof(buf)), cases[i].dtype);
	}
	assert_string_equal(ctype__new_pointer(a, ctype__new_int(a, CTYPE_CHAR, "char", 1))->name,
			    "char *");
	assert_string_equal(ctype__new_array(a, ctype__new_int(a, CTYPE_INT, "int", 4), 3)->name,
			    "int [3]");
	ctype_arena__put(a);
	ctype_arena__put(NULL);
}

static void test_declare(void **state)
{
	static const char *const cases[][3] = {
		{ "int", "n", "int n" },
		{ "char *", "s", "char *s" },
		{ "const char *", "buf", "const char *buf" },
		{ "char *const", "p", "char *const p" },
		{ "int [4]", "v", "int v[4]" },
		{ "int [2][3]", "m", "int m[2][3]" },
		{ "const double (*)[2]", "mat", "const double (*mat)[2]" },
		{ "void (*)(int, char *)", "cb", "void (*cb)(int, char *)" },
		{ "int (*(*)[3])(void)", "t", "int (*(*t)[3])(void)" },
		{ "char *(*)[4]", "pa", "char *(*pa)[4]" },
		{ "int &", "r", "int &r" },
		{ "std::function<void (int)>", "f", "std::function<void (int)> f" },
		{ "struct pt", "p", "struct pt p" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = ctype__declare(cases[i][0], cases[i][1]);

		assert_non_null(d);
		assert_string_equal(d, cases[i][2]);
		free(d);
	}
}

/* ------------------------------------------------------------------ */
/* plans                                                               */

struct xitem {
	uint8_t kind, base, reg, base_item, deref;
	int64_t off;
	uint32_t size;
	int8_t len_reg;
	uint32_t elem_size;
};

static void check_plan(const char *what, const struct cmon_fetch_plan *p, size_t n, const struct xitem *x)
{
	if (p->n != n)
		fail_msg("%s: %u items, expected %zu", what, p->n, n);
	for (size_t i = 0; i < n; i++) {
		const struct cmon_fetch *f = &p->items[i];

		if (f->kind != x[i].kind || f->base != x[i].base || f->size != x[i].size ||
		    f->deref != x[i].deref || f->off != x[i].off ||
		    (f->base == CMON_BASE_REG && f->reg != x[i].reg) ||
		    (f->kind == CMON_FETCH_REG && f->reg != x[i].reg) ||
		    (f->base == CMON_BASE_ITEM && f->base_item != x[i].base_item) ||
		    f->len_reg != x[i].len_reg || f->elem_size != (x[i].elem_size ? x[i].elem_size : 1) ||
		    f->deref_off != 0)
			fail_msg("%s item %zu: kind %u base %u reg %u item %u deref %u off %lld size %u "
				 "len_reg %d elem %u", what, i, f->kind, f->base, f->reg, f->base_item,
				 f->deref, (long long)f->off, f->size, f->len_reg, f->elem_size);
	}
}

static struct plan_layout *plan_of(int v, const char *func, const struct plan_opts *o,
				   struct cmon_fetch_plan *e, struct cmon_fetch_plan *r,
				   struct func_sig **sigp)
{
	struct func_sig *s = sig_at(dis[v], func, 4);
	struct plan_layout *l = NULL;
	int err = plan__build(s, o, e, r, &l);

	if (err)
		fail_msg("plan__build(%s): %d", func, err);
	*sigp = s;
	return l;
}

#define I_REG(r) { CMON_FETCH_REG, CMON_BASE_REG, r, 0, 0, 0, 8, -1, 0 }
#define I_MEM_SP(o, sz) { CMON_FETCH_MEM, CMON_BASE_SP, 0, 0, 0, o, sz, -1, 0 }
#define I_MEM_REG(r, sz) { CMON_FETCH_MEM, CMON_BASE_REG, r, 0, 0, 0, sz, -1, 0 }
#define I_STR_REG(r, sz) { CMON_FETCH_STR, CMON_BASE_REG, r, 0, 0, 0, sz, -1, 0 }
#define I_MEM_ITEM(it, o, sz) { CMON_FETCH_MEM, CMON_BASE_ITEM, 0, it, 1, o, sz, -1, 0 }
#define I_STR_ITEM(it, o, sz) { CMON_FETCH_STR, CMON_BASE_ITEM, 0, it, 1, o, sz, -1, 0 }

static void test_plan_registers_and_stack(void **state)
{
	for (int v = 0; v < 2; v++) {
		struct cmon_fetch_plan e, r;
		struct func_sig *s;
		struct plan_layout *l = plan_of(v, "f_eight", NULL, &e, &r, &s);
		const struct xitem xe[] = { I_MEM_SP(8, 4), I_MEM_SP(16, 4) };

		/* a1..a6 are the record's args[0..5]: no items; a3 is rdx = args[2] */
		for (int i = 0; i < 6; i++) {
			assert_int_equal(l->values[i].n_src, 1);
			assert_int_equal(l->values[i].src[0].kind, PSRC_ARG);
			assert_int_equal(l->values[i].src[0].index, i);
			assert_int_equal(l->values[i].src[0].size, 4);
		}
		assert_string_equal(l->values[2].name, "a3");
		assert_int_equal(l->values[6].src[0].kind, PSRC_ITEM);
		assert_int_equal(l->values[6].src[0].index, 0);
		assert_int_equal(l->values[7].src[0].index, 1);
		check_plan("f_eight entry", &e, 2, xe);
		check_plan("f_eight return", &r, 0, NULL);
		assert_int_equal(l->n_params, 8);
		assert_int_equal(l->ret_value, 8);
		assert_string_equal(l->values[8].name, "return");
		assert_int_equal(l->values[8].src[0].kind, PSRC_RET);
		assert_true(l->typed);
		plan_layout__free(l);
		func_sig__free(s);

		/* a struct by value on the stack; one in two registers */
		l = plan_of(v, "f_large", NULL, &e, &r, &s);
		const struct xitem xl[] = { I_MEM_SP(8, 40) };
		check_plan("f_large entry", &e, 1, xl);
		plan_layout__free(l);
		func_sig__free(s);
		l = plan_of(v, "f_small", NULL, &e, &r, &s);
		check_plan("f_small entry", &e, 0, NULL);
		assert_int_equal(l->values[0].n_src, 2);
		assert_int_equal(l->values[0].src[0].index, 0);
		assert_int_equal(l->values[0].src[1].index, 1);
		plan_layout__free(l);
		func_sig__free(s);

		/* xmm: nothing to fetch, marked */
		l = plan_of(v, "f_double", NULL, &e, &r, &s);
		check_plan("f_double entry", &e, 0, NULL);
		assert_int_equal(l->values[1].src[0].kind, PSRC_NONE);
		assert_int_equal(l->values[1].src[0].reason, PU_XMM);
		assert_int_equal(l->values[1].src[0].reg, DREG_XMM0);
		assert_int_equal(l->values[3].src[0].reason, PU_XMM);
		plan_layout__free(l);
		func_sig__free(s);
	}
}

static void test_plan_returns(void **state)
{
	for (int v = 0; v < 2; v++) {
		struct cmon_fetch_plan e, r;
		struct func_sig *s;
		struct plan_layout *l = plan_of(v, "f_ret_small", NULL, &e, &r, &s);
		const struct xitem rdx[] = { I_REG(DREG_RDX) };
		const struct xitem big[] = { I_MEM_REG(DREG_RAX, 24) };
		const struct xitem str[] = { I_STR_REG(DREG_RAX, 256) };

		check_plan("f_ret_small return", &r, 1, rdx);
		check_plan("f_ret_small entry", &e, 0, NULL);
		assert_int_equal(l->values[2].src[0].kind, PSRC_RET);
		assert_int_equal(l->values[2].src[1].kind, PSRC_ITEM);
		assert_true(l->values[2].src[1].at_return);
		plan_layout__free(l);
		func_sig__free(s);

		l = plan_of(v, "f_ret_big", NULL, &e, &r, &s);
		check_plan("f_ret_big return", &r, 1, big);
		assert_int_equal(l->values[0].src[0].index, 1); /* x: rsi */
		plan_layout__free(l);
		func_sig__free(s);

		l = plan_of(v, "f_ret_str", NULL, &e, &r, &s);
		check_plan("f_ret_str return", &r, 1, str);
		assert_int_equal(l->n_derefs, 1);
		assert_true(l->derefs[0].at_return);
		plan_layout__free(l);
		func_sig__free(s);
	}
}

static void test_plan_pointers(void **state)
{
	for (int v = 0; v < 2; v++) {
		struct cmon_fetch_plan e, r;
		struct func_sig *s;
		struct plan_opts o;
		struct plan_layout *l;
		const size_t rs = sizeof(struct rec), no = offsetof(struct rec, name);
		const size_t nx = offsetof(struct rec, next);

		/* char *: a string at r8 */
		l = plan_of(v, "f_misc", NULL, &e, &r, &s);
		const struct xitem xm[] = { I_STR_REG(DREG_R8, 256) };
		check_plan("f_misc", &e, 1, xm);
		assert_int_equal(l->n_derefs, 1);
		assert_int_equal(l->derefs[0].value, 4);
		plan_layout__free(l);
		func_sig__free(s);

		/* struct pointers (depth 1): *r, *r2, then their names */
		l = plan_of(v, "f_ptr", NULL, &e, &r, &s);
		const struct xitem xp[] = { I_MEM_REG(DREG_RDI, rs), I_MEM_REG(DREG_RSI, rs),
					    I_STR_ITEM(0, no, 256), I_STR_ITEM(1, no, 256) };
		check_plan("f_ptr", &e, 4, xp);
		assert_int_equal(l->n_dropped, 0);
		plan_layout__free(l);
		func_sig__free(s);

		/* --deref 2 --strlen 32: r->next too, and its name */
		plan_opts__init(&o);
		o.deref = 2;
		o.strlen = 32;
		l = plan_of(v, "f_ptr", &o, &e, &r, &s);
		const struct xitem xp2[] = { I_MEM_REG(DREG_RDI, rs), I_MEM_REG(DREG_RSI, rs),
					     I_STR_ITEM(0, no, 32), I_MEM_ITEM(0, nx, rs),
					     I_STR_ITEM(1, no, 32), I_MEM_ITEM(1, nx, rs),
					     I_STR_ITEM(3, no, 32), I_STR_ITEM(5, no, 32) };
		check_plan("f_ptr deref 2", &e, 8, xp2);
		plan_layout__free(l);
		func_sig__free(s);

		/* pointers on the stack: loaded from their slots */
		l = plan_of(v, "f_stack_ptr", NULL, &e, &r, &s);
		const struct xitem xs[] = { I_MEM_SP(8, 8), I_MEM_SP(16, 8), I_MEM_ITEM(0, 0, rs),
					    I_STR_ITEM(1, 0, 256), I_STR_ITEM(2, no, 256) };
		check_plan("f_stack_ptr", &e, 5, xs);
		plan_layout__free(l);
		func_sig__free(s);

		/* --deref 0: no struct, strings still */
		plan_opts__init(&o);
		o.deref = 0;
		l = plan_of(v, "f_ptr", &o, &e, &r, &s);
		check_plan("f_ptr deref 0", &e, 0, NULL);
		plan_layout__free(l);
		func_sig__free(s);
	}
}

/* More than CMON_MAX_FETCH items: the deepest go. */
static void test_plan_too_many(void **state)
{
	for (int v = 0; v < 2; v++) {
		struct cmon_fetch_plan e, r;
		struct func_sig *s;
		struct plan_opts o;
		struct plan_layout *l;
		unsigned max_ok = 0, min_dropped = 99;
		size_t dropped = 0;

		plan_opts__init(&o);
		o.deref = 8;
		l = plan_of(v, "f_ptr", &o, &e, &r, &s);
		assert_int_equal(e.n, CMON_MAX_FETCH);
		assert_true(l->n_dropped > 0);
		for (size_t i = 0; i < l->n_derefs; i++) {
			const struct plan_deref *d = &l->derefs[i];

			if (d->status == PD_DROPPED) {
				dropped++;
				assert_int_equal(d->item, -1);
				if (d->level < min_dropped)
					min_dropped = d->level;
			} else {
				assert_true(d->item >= 0 && d->item < CMON_MAX_FETCH);
				if (d->level > max_ok)
					max_ok = d->level;
				/* every base item is an earlier item */
				if (e.items[d->item].base == CMON_BASE_ITEM)
					assert_true(e.items[d->item].base_item < d->item);
			}
		}
		assert_true(dropped > 0);
		assert_true(min_dropped >= max_ok);
		plan_layout__free(l);
		func_sig__free(s);
	}
}

static void test_capture_parse(void **state)
{
	static const struct {
		const char *s;
		int err;
		const char *name, *ptr, *len;
		enum capture_kind kind;
		uint64_t len_const;
	} cases[] = {
		{ "data=buf:len", 0, "data", "buf", "len", CAPTURE_BUF, 0 },
		{ "v=values[n]", 0, "v", "values", "n", CAPTURE_ARRAY, 0 },
		{ "s=arg1:str", 0, "s", "arg1", NULL, CAPTURE_STR, 0 },
		{ "d=buf:64", 0, "d", "buf", NULL, CAPTURE_BUF, 64 },
		{ "_x9=p_1[12]", 0, "_x9", "p_1", NULL, CAPTURE_ARRAY, 12 },
		{ "data", -EINVAL }, { "=buf:len", -EINVAL }, { "9d=buf:len", -EINVAL },
		{ "d=:len", -EINVAL }, { "d=buf", -EINVAL }, { "d=buf:", -EINVAL },
		{ "d=buf[n", -EINVAL }, { "d=buf[n]x", -EINVAL }, { "d=buf:len x", -EINVAL },
		{ "d=buf:12a", -EINVAL }, { "d=buf:str:x", -EINVAL }, { "d-x=buf:len", -EINVAL },
		{ "d=buf[]", -EINVAL }, { "d=buf:99999999999999999999999", -EINVAL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct capture_spec c;
		int err = capture_spec__parse(cases[i].s, &c);

		if (err != cases[i].err)
			fail_msg("'%s': %d, expected %d", cases[i].s, err, cases[i].err);
		if (err) {
			assert_null(c.name);
			continue;
		}
		assert_string_equal(c.name, cases[i].name);
		assert_string_equal(c.ptr, cases[i].ptr);
		if (cases[i].len)
			assert_string_equal(c.len, cases[i].len);
		else
			assert_null(c.len);
		assert_int_equal(c.kind, cases[i].kind);
		assert_int_equal(c.len_const, cases[i].len_const);
		capture_spec__clear(&c);
	}
	capture_spec__clear(NULL);
}

static int plan_with(int v, const char *func, const char *const *specs, size_t n,
		     struct cmon_fetch_plan *e, struct plan_layout **lp)
{
	struct capture_spec cs[4];
	struct cmon_fetch_plan r;
	struct func_sig *s = v >= 0 ? sig_at(dis[v], func, 4) : NULL;
	struct plan_opts o;
	int err;

	assert_true(n <= 4);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(capture_spec__parse(specs[i], &cs[i]), 0);
	plan_opts__init(&o);
	o.captures = cs;
	o.n_captures = n;
	*lp = NULL;
	err = plan__build(s, &o, e, &r, lp);
	for (size_t i = 0; i < n; i++)
		capture_spec__clear(&cs[i]);
	func_sig__free(s);
	return err;
}

static void test_plan_captures(void **state)
{
	for (int v = 0; v < 2; v++) {
		struct cmon_fetch_plan e;
		struct plan_layout *l;
		const char *ok[] = { "data=buf:len", "v=values[n]", "s=arg0:str", "k=buf:4" };
		const struct xitem x[] = {
			{ CMON_FETCH_MEM, CMON_BASE_REG, DREG_RDI, 0, 0, 0, 65536, DREG_RSI, 1 },
			{ CMON_FETCH_MEM, CMON_BASE_REG, DREG_RDX, 0, 0, 0, 65536, DREG_RCX, 8 },
			{ CMON_FETCH_STR, CMON_BASE_REG, DREG_RDI, 0, 0, 0, 65536, -1, 1 },
			{ CMON_FETCH_MEM, CMON_BASE_REG, DREG_RDI, 0, 0, 0, 4, -1, 1 },
		};

		assert_int_equal(plan_with(v, "f_buf", ok, 4, &e, &l), 0);
		check_plan("f_buf captures", &e, 4, x);
		assert_int_equal(l->n_captures, 4);
		assert_string_equal(l->captures[1].elem->name, "const double");
		assert_int_equal(l->captures[1].elem_size, 8);
		assert_int_equal(l->captures[1].len.kind, PSRC_ARG);
		assert_int_equal(l->captures[1].len.index, 3);
		assert_true(l->captures[1].len_signed);
		plan_layout__free(l);

		/* a capture on the stack: loaded from the slot */
		const char *st[] = { "q=s:str" };
		const struct xitem xs[] = { I_MEM_SP(8, 8), I_MEM_SP(16, 8),
					    { CMON_FETCH_STR, CMON_BASE_SP, 0, 0, 1, 16, 65536, -1, 1 } };
		assert_int_equal(plan_with(v, "f_stack_ptr", st, 1, &e, &l), 0);
		assert_true(e.n >= 3);
		e.n = 3; /* the derefs after it are checked elsewhere */
		check_plan("f_stack_ptr capture", &e, 3, xs);
		plan_layout__free(l);

		static const struct {
			const char *spec;
			int err;
		} bad[] = {
			{ "d=nosuch:len", -ENOENT },   /* unknown pointer */
			{ "d=buf:nosuch", -ENOENT },   /* unknown count */
			{ "d=len[n]", -EINVAL },       /* not a pointer */
			{ "d=buf:values", -EINVAL },   /* count is not an integer */
			{ "buf=buf:len", -EINVAL },    /* name taken by a parameter */
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			const char *one[] = { bad[i].spec };
			int err = plan_with(v, "f_buf", one, 1, &e, &l);

			if (err != bad[i].err)
				fail_msg("%s: %d, expected %d", bad[i].spec, err, bad[i].err);
			assert_null(l);
			assert_int_equal(e.n, 0);
		}
		/* a stack count cannot be a len register */
		const char *stk[] = { "d=arg0:a8" };
		assert_int_equal(plan_with(v, "f_eight", stk, 1, &e, &l), -ENOTSUP);
	}
	/* raw mode: arg0..arg5 only */
	{
		struct cmon_fetch_plan e;
		struct plan_layout *l;
		const char *ok[] = { "d=arg0:arg1" };
		const char *arr[] = { "d=arg0[arg1]" };
		const char *named[] = { "d=buf:len" };
		const struct xitem x[] = {
			{ CMON_FETCH_MEM, CMON_BASE_REG, DREG_RDI, 0, 0, 0, 65536, DREG_RSI, 1 } };

		assert_int_equal(plan_with(-1, NULL, ok, 1, &e, &l), 0);
		check_plan("raw", &e, 1, x);
		assert_false(l->typed);
		assert_int_equal(l->n_values, 0);
		plan_layout__free(l);
		assert_int_equal(plan_with(-1, NULL, arr, 1, &e, &l), -EINVAL);
		assert_int_equal(plan_with(-1, NULL, named, 1, &e, &l), -ENOENT);
	}
}

static void test_plan_opts(void **state)
{
	struct cmon_fetch_plan e, r;
	struct plan_layout *l = (void *)1;
	struct plan_opts o;

	plan_opts__init(&o);
	assert_int_equal(o.strlen, 256);
	assert_int_equal(o.deref, 1);
	assert_int_equal(o.capture_max, 65536);
	o.strlen = 0;
	assert_int_equal(plan__build(NULL, &o, &e, &r, &l), -EINVAL);
	assert_null(l);
	plan_opts__init(&o);
	o.capture_max = CMON_ITEM_MAX + 1;
	assert_int_equal(plan__build(NULL, &o, &e, &r, &l), -EINVAL);
	plan_opts__init(&o);
	o.deref = PLAN_MAX_DEREF + 1;
	assert_int_equal(plan__build(NULL, &o, &e, &r, &l), -EINVAL);
	plan_layout__free(NULL);
}

/* Signatures and layouts hold their types: the debuginfo can go first. */
static void test_lifetime(void **state)
{
	struct debuginfo *di = debuginfo__open(fixture(variants[0]));
	struct cmon_fetch_plan e, r;
	struct plan_layout *l = NULL;
	struct render_out out = { 0 };
	struct func_sig *s;
	int64_t args[6] = { 'z', 0, GREEN, 0x10, 0, 0 };
	struct render_call c = { .args = args, .has_ret = true, .ret = 1 };

	assert_non_null(di);
	s = sig_at(di, "f_misc", 4);
	debuginfo__free(di);
	assert_int_equal(plan__build(s, NULL, &e, &r, &l), 0);
	func_sig__free(s);
	assert_int_equal(render__call(l, &c, &out), 0);
	assert_string_equal(out.args.buf, "{\"c\":\"z\",\"b\":false,\"col\":\"GREEN\",\"p\":\"0x10\","
					  "\"s\":null}");
	assert_string_equal(out.ret.buf, "1");
	assert_string_equal(out.captures.buf, "{}");
	plan_layout__free(l);
	render_out__release(&out);
}

/* ------------------------------------------------------------------ */
/* rendering                                                           */

/* A strict JSON syntax check: the output must parse whatever bytes went
 * in (strings: no raw control characters, valid UTF-8 only). */
static const char *js_value(const char *p, int depth);

static const char *js_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *js_string(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	if (*u++ != '"')
		return NULL;
	while (*u != '"') {
		if (*u < 0x20)
			return NULL;
		if (*u == '\\') {
			u++;
			if (*u == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", u[i]) || !u[i])
						return NULL;
				u += 5;
			} else if (*u && strchr("\"\\/bfnrt", *u)) {
				u++;
			} else {
				return NULL;
			}
		} else if (*u >= 0x80) {
			int n = *u >= 0xf0 ? 4 : *u >= 0xe0 ? 3 : *u >= 0xc2 ? 2 : 0;

			if (!n || *u > 0xf4)
				return NULL;
			for (int i = 1; i < n; i++)
				if ((u[i] & 0xc0) != 0x80)
					return NULL;
			u += n;
		} else {
			u++;
		}
	}
	return (const char *)u + 1;
}

static const char *js_value(const char *p, int depth)
{
	p = js_ws(p);
	if (depth > 64)
		return NULL;
	if (*p == '"')
		return js_string(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';

		p = js_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = js_string(js_ws(p));
				if (!p)
					return NULL;
				p = js_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = js_value(p, depth + 1);
			if (!p)
				return NULL;
			p = js_ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			return *p == close ? p + 1 : NULL;
		}
	}
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	{
		const char *s = p;

		if (*p == '-')
			p++;
		if (*p == '0')
			p++;
		else if (*p >= '1' && *p <= '9')
			while (*p >= '0' && *p <= '9')
				p++;
		else
			return NULL;
		if (*p == '.') {
			p++;
			if (!(*p >= '0' && *p <= '9'))
				return NULL;
			while (*p >= '0' && *p <= '9')
				p++;
		}
		if (*p == 'e' || *p == 'E') {
			p++;
			if (*p == '+' || *p == '-')
				p++;
			if (!(*p >= '0' && *p <= '9'))
				return NULL;
			while (*p >= '0' && *p <= '9')
				p++;
		}
		return p > s ? p : NULL;
	}
}

static void assert_json(const char *what, const char *s)
{
	const char *end = js_value(s, 0);

	if (!end || *js_ws(end))
		fail_msg("%s: not valid JSON: %s", what, s);
}

struct rcase {
	const char *func;
	unsigned deref;
	int64_t args[6];
	int64_t ret;
	bool has_ret;
	struct render_item entry[8];
	size_t n_entry;
	struct render_item exit[2];
	size_t n_exit;
	const char *args_json, *ret_json, *truncated, *faults;
};

static void render_case(int v, const struct rcase *c, struct render_out *out)
{
	struct cmon_fetch_plan e, r;
	struct func_sig *s;
	struct plan_opts o;
	struct plan_layout *l;
	struct render_call call = {
		.args = c->args, .ret = c->ret, .has_ret = c->has_ret,
		.entry = c->n_entry ? c->entry : NULL, .n_entry = c->n_entry,
		.exit = c->n_exit ? c->exit : NULL, .n_exit = c->n_exit,
	};

	plan_opts__init(&o);
	o.deref = c->deref;
	l = plan_of(v, c->func, &o, &e, &r, &s);
	assert_int_equal(render__call(l, &call, out), 0);
	assert_json(c->func, out->args.buf);
	assert_json(c->func, out->ret.buf);
	assert_json(c->func, out->truncated.buf);
	assert_json(c->func, out->faults.buf);
	if (strcmp(out->args.buf, c->args_json))
		fail_msg("%s %s args:\n  got      %s\n  expected %s", variants[v], c->func,
			 out->args.buf, c->args_json);
	if (strcmp(out->ret.buf, c->ret_json))
		fail_msg("%s %s ret: got %s expected %s", variants[v], c->func, out->ret.buf,
			 c->ret_json);
	assert_string_equal(out->truncated.buf, c->truncated ? c->truncated : "[]");
	assert_string_equal(out->faults.buf, c->faults ? c->faults : "[]");
	/* cells are the parameters' values, in order */
	assert_int_equal(out->n_cells, l->n_params);
	for (size_t i = 0; i < out->n_cells; i++) {
		assert_json("cell", out->cells[i]);
		assert_non_null(strstr(out->args.buf, out->cells[i]));
	}
	plan_layout__free(l);
	func_sig__free(s);
}

#define GARBAGE 0x5a5a5a5a00000000LL /* upper halves a callee must ignore */

static void test_render_scalars(void **state)
{
	static const char hostile[] = "a\"b\\c\n\x01\x7f\xff\xc3\xa9\0z";
	const struct rcase cases[] = {
		{ "f_ints", 1, { GARBAGE | 0xff, GARBAGE | 2, GARBAGE | 0xfffd, GARBAGE | 4,
				 GARBAGE | 0xfffffffb, GARBAGE | 6 }, 3, true, { { 0 } }, 0, { { 0 } }, 0,
		  "{\"a\":-1,\"b\":2,\"c\":-3,\"d\":4,\"e\":-5,\"f\":6}", "3" },
		{ "f_ints64", 1, { -1, -1, INT64_MIN, 0, -5, GARBAGE | 200 }, -9, true, { { 0 } }, 0,
		  { { 0 } }, 0,
		  "{\"a\":-1,\"b\":18446744073709551615,\"c\":-9223372036854775808,\"d\":0,"
		  "\"e\":-5,\"g\":200}", "-9" },
		/* 128-bit: the digits above 64 bits are the slow path */
		{ "f_i128", 1, { (int64_t)0xfffffffffffffffbULL, (int64_t)0xffffffefffffffffULL,
				 0x3039, INT64_MIN, 0, 0 }, 7, true, { { 0 } }, 0, { { 0 } }, 0,
		  "{\"a\":-1267650600228229401496703205381,"
		  "\"b\":170141183460469231731687303715884118073}", "7" },
		/* char, bool, enum by name, pointer, string with every kind of byte */
		{ "f_misc", 1, { GARBAGE | 'a', GARBAGE | 1, GARBAGE | 5, 0x7ffd1234, 0x4000, 0 }, 0,
		  true, { { 0, sizeof(hostile) - 1, hostile } }, 1, { { 0 } }, 0,
		  "{\"c\":\"a\",\"b\":true,\"col\":\"GREEN\",\"p\":\"0x7ffd1234\","
		  "\"s\":\"a\\\"b\\\\c\\n\\u0001\\u007f\\u00ff\xc3\xa9\\u0000z\"}", "0" },
		/* enum without a name, NUL char, false, NULL pointers, truncated string */
		{ "f_misc", 1, { 0, 0, 7, 0, 0x4000, 0 }, 0, false,
		  { { CMON_ITEM_TRUNCATED, 3, "abc" } }, 1, { { 0 } }, 0,
		  "{\"c\":\"\\u0000\",\"b\":false,\"col\":7,\"p\":\"0x0\",\"s\":\"abc\"}", "null",
		  "[\"s\"]" },
		/* BLUE = -1 from the low half; a NULL string; unreadable string */
		{ "f_misc", 1, { 0, 0, GARBAGE | 0xffffffff, 0, 0, 0 }, 0, true,
		  { { CMON_ITEM_FAULT, 0, NULL } }, 1, { { 0 } }, 0,
		  "{\"c\":\"\\u0000\",\"b\":false,\"col\":\"BLUE\",\"p\":\"0x0\",\"s\":null}", "0" },
		{ "f_misc", 1, { 0, 0, 0, 0, 0x10, 0 }, 0, true, { { CMON_ITEM_FAULT, 0, NULL } }, 1,
		  { { 0 } }, 0,
		  "{\"c\":\"\\u0000\",\"b\":false,\"col\":\"RED\",\"p\":\"0x0\",\"s\":null}", "0",
		  NULL, "[\"s\"]" },
		/* no capture record came at all */
		{ "f_misc", 1, { 'x', 1, 0, 0, 0x10, 0 }, 0, true, { { 0 } }, 0, { { 0 } }, 0,
		  "{\"c\":\"x\",\"b\":true,\"col\":\"RED\",\"p\":\"0x0\","
		  "\"s\":\"<unavailable: not captured>\"}", "0" },
		/* xmm: explicit markers, never numbers */
		{ "f_double", 1, { 1, 3, 0, 0, 0, 0 }, 0, true, { { 0 } }, 0, { { 0 } }, 0,
		  "{\"i\":1,\"d\":\"<unavailable: float in xmm0>\",\"j\":3}",
		  "\"<unavailable: float in xmm0>\"" },
		{ "f_mixed", 1, { 3, 0, 0, 0, 0, 0 }, 0, true, { { 0 } }, 0, { { 0 } }, 0,
		  "{\"m\":{\"i\":3,\"d\":\"<unavailable: float in xmm0>\"},\"k\":0}", "0" },
		{ "f_small", 1, { GARBAGE | 1, -2, 3, 0, 0, 0 }, 0, true, { { 0 } }, 0, { { 0 } }, 0,
		  "{\"s\":{\"a\":1,\"b\":-2},\"after\":3}", "0" },
		{ "f_typedefs", 0, { 10, GARBAGE | 11, 0x1000, 0, 0, 0 }, 21, true, { { 0 } }, 0,
		  { { 0 } }, 0, "{\"n\":10,\"u\":11,\"r\":\"0x1000\"}", "21" },
	};
	struct render_out out = { 0 };

	for (int v = 0; v < 2; v++)
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			render_case(v, &cases[i], &out);
	render_out__release(&out);
	render_out__release(NULL);
}

static void test_render_memory(void **state)
{
	struct large lg = { { 1, -2, 3, 4 }, 'x' };
	int32_t a7 = -7, a8 = 8;
	long double ld = 1.5L;
	struct small sm = { 5, -6 };
	struct big_ret big = { 1, -2, 3 };
	uint64_t rdx = 0xfffffffffffffff6ULL;
	unsigned char ldb[16] = { 0 };

	memcpy(ldb, &ld, 10);
	const struct rcase cases[] = {
		{ "f_large", 1, { 8, 0, 0, 0, 0, 0 }, 0, true, { { 0, sizeof(lg), &lg } }, 1, { { 0 } },
		  0, "{\"l\":{\"v\":[1,-2,3,4],\"tag\":\"x\"},\"after\":8}", "0" },
		{ "f_eight", 1, { 1, 2, GARBAGE | 3, 4, 5, 6 }, 36, true,
		  { { 0, 4, &a7 }, { 0, 4, &a8 } }, 2, { { 0 } }, 0,
		  "{\"a1\":1,\"a2\":2,\"a3\":3,\"a4\":4,\"a5\":5,\"a6\":6,\"a7\":-7,\"a8\":8}", "36" },
		/* a short item; a missing one */
		{ "f_eight", 1, { 1, 2, 3, 4, 5, 6 }, 0, true, { { 0, 2, &a7 } }, 1, { { 0 } }, 0,
		  "{\"a1\":1,\"a2\":2,\"a3\":3,\"a4\":4,\"a5\":5,\"a6\":6,"
		  "\"a7\":\"<unavailable: truncated>\",\"a8\":\"<unavailable: not captured>\"}", "0" },
		{ "f_ldouble", 1, { 2, 0, 0, 0, 0, 0 }, 0, true, { { 0, 16, ldb } }, 1, { { 0 } }, 0,
		  "{\"x\":1.5,\"y\":2}", "0" },
		{ "f_stack_struct", 1, { 1, 2, 3, 4, 5, 7 }, 0, true, { { 0, 16, &sm } }, 1,
		  { { 0 } }, 0,
		  "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"s\":{\"a\":5,\"b\":-6},\"g\":7}", "0" },
		/* returns: rax:rdx, memory at rax, not returned */
		{ "f_ret_small", 1, { 0 }, GARBAGE | 9, true, { { 0 } }, 0, { { 0, 8, &rdx } }, 1,
		  "{\"a\":0,\"b\":0}", "{\"a\":9,\"b\":-10}" },
		{ "f_ret_big", 1, { 0x1000, 1, 2, 0, 0, 0 }, 0x1000, true, { { 0 } }, 0,
		  { { 0, sizeof(big), &big } }, 1, "{\"x\":1,\"y\":2}", "{\"a\":1,\"b\":-2,\"c\":3}" },
		{ "f_ret_big", 1, { 0x1000, 1, 2, 0, 0, 0 }, 0, false, { { 0 } }, 0, { { 0 } }, 0,
		  "{\"x\":1,\"y\":2}", "null" },
		{ "f_ret_pair", 1, { 1, 2, 0, 0, 0, 0 }, (int64_t)0xfffffffe00000001LL, true,
		  { { 0 } }, 0, { { 0 } }, 0, "{\"x\":1,\"y\":2}", "{\"x\":1,\"y\":-2}" },
		{ "f_ret_str", 1, { 1 }, 0x4000, true, { { 0 } }, 0, { { 0, 3, "one" } }, 1,
		  "{\"i\":1}", "\"one\"" },
		{ "f_ret_str", 1, { 1 }, 0, true, { { 0 } }, 0, { { CMON_ITEM_FAULT, 0, NULL } }, 1,
		  "{\"i\":1}", "null" },
	};
	struct render_out out = { 0 };

	for (int v = 0; v < 2; v++)
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			render_case(v, &cases[i], &out);
	render_out__release(&out);
}

static struct rec make_rec(void)
{
	struct rec r;

	memset(&r, 0, sizeof(r));
	r.id = 7;
	r.pos.x = 1;
	r.pos.y = -2;
	r.name = (const char *)0x5000;
	memcpy(r.label, "ab\0zz", 6);
	r.bytes[0] = 1;
	r.bytes[1] = 2;
	r.bytes[2] = 3;
	r.bytes[3] = 255;
	r.flag = 1;
	r.kind = 5;
	r.lvl = -3;
	r.col = BLUE;
	for (int i = 0; i < 6; i++)
		r.grid[i / 3][i % 3] = i + 1;
	r.u.f = 1.0f;
	r.ax = 10;
	r.ay = -11;
	r.next = (struct rec *)0x6000;
	return r;
}

#define REC_JSON(next) \
	"{\"id\":7,\"pos\":{\"x\":1,\"y\":-2},\"name\":\"alice\",\"label\":\"ab\"," \
	"\"bytes\":[1,2,3,255],\"flag\":1,\"kind\":5,\"lvl\":-3,\"col\":\"BLUE\"," \
	"\"grid\":[[1,2,3],[4,5,6]],\"u\":{\"i\":1065353216,\"f\":1},\"ax\":10,\"ay\":-11," \
	"\"next\":" next "}"

static void test_render_structs(void **state)
{
	struct rec r = make_rec(), r2 = make_rec();
	struct render_out out = { 0 };

	r2.next = NULL;
	r2.name = NULL;
	r2.label[0] = 'q';
	const struct rcase cases[] = {
		/* items: *r, *r2, r->name, r2->name */
		{ "f_ptr", 1, { 0x1000, 0, 0, 0, 0, 0 }, 0, true,
		  { { 0, sizeof(r), &r }, { CMON_ITEM_FAULT, 0, NULL }, { 0, 5, "alice" },
		    { CMON_ITEM_FAULT, 0, NULL } }, 4, { { 0 } }, 0,
		  "{\"r\":" REC_JSON("\"0x6000\"") ",\"r2\":null}", "0" },
		/* an unreadable struct, a truncated member string */
		{ "f_ptr", 1, { 0x1000, 0x2000, 0, 0, 0, 0 }, 0, true,
		  { { CMON_ITEM_FAULT, 0, NULL }, { 0, sizeof(r), &r },
		    { CMON_ITEM_FAULT, 0, NULL }, { CMON_ITEM_TRUNCATED, 5, "alice" } }, 4,
		  { { 0 } }, 0, "{\"r\":null,\"r2\":" REC_JSON("\"0x6000\"") "}", "0",
		  "[\"r2->name\"]", "[\"r\"]" },
		/* --deref 2: r->next read too; r2's NULL name and next are null */
		{ "f_ptr", 2, { 0x1000, 0x2000, 0, 0, 0, 0 }, 0, true,
		  { { 0, sizeof(r), &r }, { 0, sizeof(r2), &r2 }, { 0, 5, "alice" },
		    { 0, sizeof(r2), &r2 }, { CMON_ITEM_FAULT, 0, NULL }, { CMON_ITEM_FAULT, 0, NULL },
		    { CMON_ITEM_FAULT, 0, NULL }, { CMON_ITEM_FAULT, 0, NULL } }, 8, { { 0 } }, 0,
		  "{\"r\":{\"id\":7,\"pos\":{\"x\":1,\"y\":-2},\"name\":\"alice\",\"label\":\"ab\","
		  "\"bytes\":[1,2,3,255],\"flag\":1,\"kind\":5,\"lvl\":-3,\"col\":\"BLUE\","
		  "\"grid\":[[1,2,3],[4,5,6]],\"u\":{\"i\":1065353216,\"f\":1},\"ax\":10,\"ay\":-11,"
		  "\"next\":{\"id\":7,\"pos\":{\"x\":1,\"y\":-2},\"name\":null,\"label\":\"qb\","
		  "\"bytes\":[1,2,3,255],\"flag\":1,\"kind\":5,\"lvl\":-3,\"col\":\"BLUE\","
		  "\"grid\":[[1,2,3],[4,5,6]],\"u\":{\"i\":1065353216,\"f\":1},\"ax\":10,\"ay\":-11,"
		  "\"next\":\"0x0\"}},"
		  "\"r2\":{\"id\":7,\"pos\":{\"x\":1,\"y\":-2},\"name\":null,\"label\":\"qb\","
		  "\"bytes\":[1,2,3,255],\"flag\":1,\"kind\":5,\"lvl\":-3,\"col\":\"BLUE\","
		  "\"grid\":[[1,2,3],[4,5,6]],\"u\":{\"i\":1065353216,\"f\":1},\"ax\":10,\"ay\":-11,"
		  "\"next\":null}}", "0" },
	};

	for (int v = 0; v < 2; v++)
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			render_case(v, &cases[i], &out);

	/* the first case again, for its blobs: the numeric arrays */
	render_case(0, &cases[0], &out);
	assert_int_equal(out.n_blobs, 2);
	assert_string_equal(out.blobs[0].name, "r->bytes");
	assert_string_equal(out.blobs[0].dtype, "|u1");
	assert_int_equal(out.blobs[0].ndim, 1);
	assert_int_equal(out.blobs[0].shape[0], 4);
	assert_int_equal(out.blobs[0].len, 4);
	assert_memory_equal(out.blobs[0].data, r.bytes, 4);
	assert_string_equal(out.blobs[1].name, "r->grid");
	assert_string_equal(out.blobs[1].dtype, "<i4");
	assert_int_equal(out.blobs[1].ndim, 2);
	assert_int_equal(out.blobs[1].shape[0], 2);
	assert_int_equal(out.blobs[1].shape[1], 3);
	assert_memory_equal(out.blobs[1].data, r.grid, sizeof(r.grid));
	assert_false(out.blobs[1].truncated);
	render_out__release(&out);
}

/* Items that did not fit render as such, and the JSON stays valid. */
static void test_render_dropped(void **state)
{
	struct cmon_fetch_plan e, r;
	struct func_sig *s;
	struct plan_opts o;
	struct plan_layout *l;
	struct render_item items[CMON_MAX_FETCH];
	struct rec rr = make_rec();
	struct render_out out = { 0 };
	int64_t args[6] = { 0x1000, 0x2000 };
	struct render_call c = { .args = args, .has_ret = true, .entry = items };

	plan_opts__init(&o);
	o.deref = 8;
	l = plan_of(0, "f_ptr", &o, &e, &r, &s);
	for (unsigned i = 0; i < e.n; i++) {
		bool str = e.items[i].kind == CMON_FETCH_STR;

		items[i] = (struct render_item){ 0, str ? 2 : sizeof(rr), str ? (void *)"nm" : &rr };
	}
	c.n_entry = e.n;
	assert_int_equal(render__call(l, &c, &out), 0);
	assert_json("dropped", out.args.buf);
	assert_non_null(strstr(out.args.buf, "\"<not captured: too many items>\""));
	assert_null(strstr(out.args.buf, "<unavailable"));
	plan_layout__free(l);
	func_sig__free(s);
	render_out__release(&out);
}

static void test_render_captures(void **state)
{
	const char *specs[] = { "data=buf:len", "v=values[n]", "s=arg0:str", "k=buf:4" };
	double vals[4] = { 1.5, -2, NAN, INFINITY };
	struct cmon_fetch_plan e;
	struct plan_layout *l;
	struct render_out out = { 0 };
	struct render_item items[4] = {
		{ 0, 3, "hi\n" },
		{ 0, sizeof(vals), vals },
		{ CMON_ITEM_TRUNCATED, 2, "hi" },
		{ 0, 4, "hi\n\0" },
	};
	/* n: an int with garbage above it: 4; len: 3 */
	int64_t args[6] = { 0x4000, 3, 0x5000, GARBAGE | 4, 0, 0 };
	struct render_call c = { .args = args, .has_ret = false, .entry = items, .n_entry = 4 };

	assert_int_equal(plan_with(0, "f_buf", specs, 4, &e, &l), 0);
	assert_int_equal(render__call(l, &c, &out), 0);
	assert_json("captures", out.captures.buf);
	assert_string_equal(out.captures.buf,
			    "{\"data\":\"68690a\",\"v\":[1.5,-2,\"NaN\",\"Infinity\"],\"s\":\"hi\","
			    "\"k\":\"68690a00\"}");
	assert_string_equal(out.truncated.buf, "[\"s\"]");
	assert_string_equal(out.args.buf,
			    "{\"buf\":\"0x4000\",\"len\":3,\"values\":\"0x5000\",\"n\":4}");
	assert_string_equal(out.ret.buf, "null");
	assert_int_equal(out.n_blobs, 4);
	assert_string_equal(out.blobs[0].name, "data");
	assert_string_equal(out.blobs[0].dtype, "|u1");
	assert_int_equal(out.blobs[0].shape[0], 3);
	assert_memory_equal(out.blobs[0].data, "hi\n", 3);
	assert_string_equal(out.blobs[1].name, "v");
	assert_string_equal(out.blobs[1].dtype, "<f8");
	assert_int_equal(out.blobs[1].shape[0], 4);
	assert_int_equal(out.blobs[1].len, 32);
	assert_false(out.blobs[1].truncated);
	assert_true(out.blobs[2].truncated);

	/* fewer bytes than the count asks: truncated; more: cut to the count */
	args[3] = 6;
	args[1] = 2;
	assert_int_equal(render__call(l, &c, &out), 0);
	assert_string_equal(out.captures.buf,
			    "{\"data\":\"6869\",\"v\":[1.5,-2,\"NaN\",\"Infinity\"],\"s\":\"hi\","
			    "\"k\":\"68690a00\"}");
	assert_string_equal(out.truncated.buf, "[\"v\",\"s\"]");
	assert_int_equal(out.blobs[0].shape[0], 2);
	/* a negative count reads nothing */
	args[3] = -1;
	items[1].flags = CMON_ITEM_FAULT;
	assert_int_equal(render__call(l, &c, &out), 0);
	assert_string_equal(out.captures.buf,
			    "{\"data\":\"6869\",\"v\":null,\"s\":\"hi\",\"k\":\"68690a00\"}");
	assert_string_equal(out.faults.buf, "[\"v\"]");
	plan_layout__free(l);
	render_out__release(&out);
}

/* Every byte value, in every position, through a string and a char:
 * always valid JSON. */
static void test_render_any_bytes(void **state)
{
	struct render_out out = { 0 };
	unsigned char buf[64];
	unsigned seed = 12345;
	struct rcase c = { "f_misc", 1, { 0, 0, 0, 0, 0x4000, 0 }, 0, true, { { 0 } }, 1, { { 0 } },
			   0, NULL, "0" };
	struct cmon_fetch_plan e, r;
	struct func_sig *s;
	struct plan_layout *l = plan_of(0, "f_misc", NULL, &e, &r, &s);

	for (int round = 0; round < 2000; round++) {
		size_t n = (size_t)(round % 64);
		struct render_call call = { .args = c.args, .has_ret = true, .entry = c.entry,
					    .n_entry = 1 };

		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = (unsigned char)(round < 256 ? (unsigned)round : seed >> 16);
		}
		c.args[0] = round & 0xff;
		c.entry[0] = (struct render_item){ (unsigned)round & CMON_ITEM_TRUNCATED, (uint32_t)n,
						   buf };
		assert_int_equal(render__call(l, &call, &out), 0);
		assert_json("any bytes", out.args.buf);
		assert_json("any bytes", out.truncated.buf);
	}
	plan_layout__free(l);
	func_sig__free(s);
	render_out__release(&out);
}

/* --watch: globals by name (their type says how wide and how shown),
 * agreeing with the ELF symbol; the line of an address. */
static void test_globals(void **state)
{
	for (int i = 0; i < 2; i++) {
		struct dwarf_global g;
		uint64_t addr = 0, size = 0, fa;
		const char *file = NULL;
		unsigned line = 0;
		bool dyn = false;

		assert_int_equal(dwarf_global__find(dis[i], "sink", &g), 0);
		assert_int_equal(g.size, 8);
		assert_int_equal(g.kind, GLOBAL_SIGNED); /* volatile long */
		assert_string_equal(g.type, "long int");
		assert_int_equal(objsym__find(fixture(variants[i]), "sink", &addr, &size), 0);
		assert_int_equal(g.addr, addr);
		assert_int_equal(size, 8);
		assert_int_equal(dwarf_global__find(dis[i], "dsink", &g), 0);
		assert_int_equal(g.kind, GLOBAL_RAW); /* double: its bytes */
		assert_int_equal(g.size, 8);
		assert_int_equal(dwarf_global__find(dis[i], "nosuch", &g), -ENOENT);
		assert_int_equal(objsym__find(fixture(variants[i]), "nosuch", &addr, &size),
				 -ENOENT);
		assert_int_equal(objsym__find(fixture(variants[i]), "main", &addr, &size),
				 -ENOENT); /* a function is not a data symbol */
		assert_int_equal(objsym__layout(fixture(variants[i]), &dyn, &addr), 0);
		fa = func_addr(dis[i], "main");
		assert_int_equal(dwarf_global__line(dis[i], fa, &file, &line), 0);
		assert_non_null(strstr(file, "dwarf_fixture.c"));
		assert_in_range(line, 173, 174); /* main's first row: its name or its { */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_globals),
		cmocka_unit_test(test_open_kinds),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_no_function),
		cmocka_unit_test(test_signatures_past_endbr),
		cmocka_unit_test(test_signatures_at_entry),
		cmocka_unit_test(test_o2_sources),
		cmocka_unit_test(test_past_prologue),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_dtype),
		cmocka_unit_test(test_declare),
		cmocka_unit_test(test_plan_registers_and_stack),
		cmocka_unit_test(test_plan_returns),
		cmocka_unit_test(test_plan_pointers),
		cmocka_unit_test(test_plan_too_many),
		cmocka_unit_test(test_capture_parse),
		cmocka_unit_test(test_plan_captures),
		cmocka_unit_test(test_plan_opts),
		cmocka_unit_test(test_lifetime),
		cmocka_unit_test(test_render_scalars),
		cmocka_unit_test(test_render_memory),
		cmocka_unit_test(test_render_structs),
		cmocka_unit_test(test_render_dropped),
		cmocka_unit_test(test_render_captures),
		cmocka_unit_test(test_render_any_bytes),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
