// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_symtab: symtab against fixtures from tests/unit/fixtures.mk (found
 * through $CMON_FIXTURES, default build/tests/fixtures) and the system's
 * libc / libstdc++.  Expected offsets and build-ids are worked out here from
 * the raw ELF headers (<elf.h>), independently of the module's libelf code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elf/elfcheck.h"
#include "elf/symtab.h"

#define LIBC_PATH "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX_PATH "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

static char fixture_buf[PATH_MAX];

static const char *fixture(const char *name)
{
	const char *dir = getenv("CMON_FIXTURES");

	if (!dir || !*dir)
		dir = "build/tests/fixtures";
	snprintf(fixture_buf, sizeof(fixture_buf), "%s/%s", dir, name);
	if (access(fixture_buf, R_OK) != 0)
		fail_msg("fixture %s missing: run `make unit-fixtures`", fixture_buf);
	return fixture_buf;
}

static struct symtab *open_ok(const char *path)
{
	struct symtab *st = symtab__open(path);

	if (!st)
		fail_msg("symtab__open(%s): %s", path, strerror(errno));
	return st;
}

/* The only entry named NAME (fails when there are several). */
static const struct symtab_func *find_one(const struct symtab *st, const char *name)
{
	const struct symtab_func *funcs, *hit = NULL;
	size_t n;

	funcs = symtab__funcs(st, &n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(funcs[i].name, name) != 0)
			continue;
		if (hit)
			fail_msg("%s listed twice", name);
		hit = &funcs[i];
	}
	if (!hit)
		fail_msg("%s not found in %s", name, symtab__path(st));
	return hit;
}

static size_t count_named(const struct symtab *st, const char *name)
{
	const struct symtab_func *funcs;
	size_t n, hits = 0;

	funcs = symtab__funcs(st, &n);
	for (size_t i = 0; i < n; i++)
		hits += !strcmp(funcs[i].name, name);
	return hits;
}

/* assert_string_equal crashes on NULL; say what was missing instead. */
#define assert_version(f, want)                                              \
	do {                                                                 \
		if (!(f)->version)                                           \
			fail_msg("%s: no version, expected %s", (f)->name, want); \
		assert_string_equal((f)->version, want);                     \
	} while (0)

static const struct symtab_func *find_at(const struct symtab *st, const char *name,
					 uint64_t addr)
{
	const struct symtab_func *funcs;
	size_t n;

	funcs = symtab__funcs(st, &n);
	for (size_t i = 0; i < n; i++)
		if (funcs[i].addr == addr && !strcmp(funcs[i].name, name))
			return &funcs[i];
	return NULL;
}

static const struct symtab_func *find_demangled(const struct symtab *st, const char *dem)
{
	const struct symtab_func *funcs;
	size_t n;

	funcs = symtab__funcs(st, &n);
	for (size_t i = 0; i < n; i++)
		if (funcs[i].demangled && !strcmp(funcs[i].demangled, dem))
			return &funcs[i];
	return NULL;
}

/* --- raw ELF reading, for expected values -------------------------------- */

struct raw_elf {
	unsigned char *data;
	size_t size;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
};

static void raw_load(const char *path, struct raw_elf *re)
{
	FILE *f = fopen(path, "rb");
	long size;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size > (long)sizeof(Elf64_Ehdr));
	rewind(f);
	re->size = (size_t)size;
	re->data = malloc(re->size);
	assert_non_null(re->data);
	assert_int_equal(fread(re->data, 1, re->size, f), re->size);
	fclose(f);
	re->eh = (Elf64_Ehdr *)re->data;
	assert_memory_equal(re->eh->e_ident, ELFMAG, SELFMAG);
	assert_int_equal(re->eh->e_ident[EI_CLASS], ELFCLASS64);
	re->ph = (Elf64_Phdr *)(re->data + re->eh->e_phoff);
}

static const Elf64_Phdr *raw_load_seg(const struct raw_elf *re, uint64_t addr)
{
	for (int i = 0; i < re->eh->e_phnum; i++) {
		const Elf64_Phdr *p = &re->ph[i];

		if (p->p_type == PT_LOAD && addr >= p->p_vaddr && addr < p->p_vaddr + p->p_memsz)
			return p;
	}
	return NULL;
}

/* Hex build-id from the PT_NOTE segments, or "" when none. */
static void raw_build_id(const struct raw_elf *re, char *out, size_t len)
{
	out[0] = '\0';
	for (int i = 0; i < re->eh->e_phnum; i++) {
		const Elf64_Phdr *p = &re->ph[i];
		size_t off = 0, align = p->p_align == 8 ? 8 : 4;

		if (p->p_type != PT_NOTE)
			continue;
		while (off + sizeof(Elf64_Nhdr) <= p->p_filesz) {
			const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(re->data + p->p_offset + off);
			const unsigned char *name = (const unsigned char *)(nh + 1);
			size_t namesz = (nh->n_namesz + align - 1) & ~(align - 1);
			const unsigned char *desc = name + namesz;

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4)) {
				assert_true(2 * nh->n_descsz < len);
				for (size_t j = 0; j < nh->n_descsz; j++)
					snprintf(out + 2 * j, 3, "%02x", desc[j]);
				return;
			}
			off += sizeof(*nh) + namesz + ((nh->n_descsz + align - 1) & ~(align - 1));
		}
	}
}

/* --- C fixtures: PIE and non-PIE ----------------------------------------- */

struct c_case {
	const char *fixture;
	bool is_dyn;
};

static const struct c_case c_cases[] = {
	{ "symtab_c_pie", true },
	{ "symtab_c_nopie", false },
};

static void check_sorted_unique(const struct symtab *st)
{
	const struct symtab_func *funcs;
	size_t n;

	funcs = symtab__funcs(st, &n);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		assert_null(strchr(funcs[i].name, '@'));
		assert_true(funcs[i].addr != 0);
		if (i == 0)
			continue;
		assert_true(funcs[i - 1].addr <= funcs[i].addr);
		if (funcs[i - 1].addr == funcs[i].addr)
			assert_string_not_equal(funcs[i - 1].name, funcs[i].name);
	}
}

static void check_func_code(const struct symtab *st, const struct raw_elf *re,
			    const struct symtab_func *f)
{
	const Elf64_Phdr *seg = raw_load_seg(re, f->addr);
	unsigned char code[64], raw[64];
	long got;

	assert_non_null(seg);
	assert_true(seg->p_flags & PF_X);
	assert_int_equal(f->file_offset, f->addr - seg->p_vaddr + seg->p_offset);
	assert_true(f->size > 0 && f->size <= sizeof(code));

	got = symtab__read_code(st, f->addr, code, f->size);
	assert_int_equal(got, (long)f->size);
	memcpy(raw, re->data + f->file_offset, f->size);
	assert_memory_equal(code, raw, f->size);
	/* "return a op b" ends in ret. */
	assert_int_equal(code[f->size - 1], 0xc3);
}

static void test_c_fixture(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(c_cases) / sizeof(c_cases[0]); c++) {
		const struct c_case *tc = &c_cases[c];
		const char *path = fixture(tc->fixture);
		char want_id[128];
		struct raw_elf re;
		struct symtab *st = open_ok(path);
		const struct symtab_func *add, *mul, *mainf;

		raw_load(path, &re);
		assert_string_equal(symtab__path(st), path);
		assert_int_equal(symtab__is_dyn(st), tc->is_dyn);
		assert_int_equal(re.eh->e_type, tc->is_dyn ? ET_DYN : ET_EXEC);
		assert_int_equal(symtab__runtime_flags(st), 0);
		check_sorted_unique(st);

		add = find_one(st, "cmon_fixture_add");
		mul = find_one(st, "cmon_fixture_mul");
		mainf = find_one(st, "main");
		assert_null(add->demangled);
		assert_null(add->version);
		assert_false(add->ifunc);
		assert_false(add->dynamic);
		assert_true(mainf->size > 0);
		if (!tc->is_dyn)
			assert_true(add->addr >= 0x400000);
		/* Imports are not functions of the file, even puts' PLT slot
		 * (st_value != 0) in the non-PIE build. */
		assert_int_equal(count_named(st, "puts"), 0);
		assert_int_equal(count_named(st, "printf"), 0);
		check_func_code(st, &re, add);
		check_func_code(st, &re, mul);

		/* find_addr: inside, first byte, one past the end, nowhere. */
		assert_ptr_equal(symtab__find_addr(st, add->addr), add);
		assert_ptr_equal(symtab__find_addr(st, add->addr + add->size - 1), add);
		assert_ptr_not_equal(symtab__find_addr(st, add->addr + add->size), add);
		assert_ptr_equal(symtab__find_addr(st, mul->addr + 1), mul);
		assert_ptr_equal(symtab__find_addr(st, mainf->addr + 1), mainf);
		assert_null(symtab__find_addr(st, 1));
		assert_null(symtab__find_addr(st, UINT64_MAX));

		/* Built with --build-id: 40 lower-case hex digits, as in the note. */
		raw_build_id(&re, want_id, sizeof(want_id));
		assert_int_equal(strlen(want_id), 40);
		assert_non_null(symtab__build_id(st));
		assert_string_equal(symtab__build_id(st), want_id);
		assert_int_equal(strspn(symtab__build_id(st), "0123456789abcdef"), 40);

		symtab__free(st);
		free(re.data);
	}
}

static void test_read_code_bounds(void **state)
{
	const char *path = fixture("symtab_c_nopie");
	struct symtab *st = open_ok(path);
	const Elf64_Phdr *text = NULL;
	unsigned char buf[100], raw[4];
	struct raw_elf re;
	uint64_t end;

	(void)state;
	raw_load(path, &re);
	for (int i = 0; i < re.eh->e_phnum; i++)
		if (re.ph[i].p_type == PT_LOAD && (re.ph[i].p_flags & PF_X))
			text = &re.ph[i];
	assert_non_null(text);
	end = text->p_vaddr + text->p_filesz;

	/* Short at the segment end, exact bytes. */
	assert_int_equal(symtab__read_code(st, end - 4, buf, sizeof(buf)), 4);
	memcpy(raw, re.data + text->p_offset + text->p_filesz - 4, 4);
	assert_memory_equal(buf, raw, 4);
	/* Outside any executable segment. */
	assert_true(symtab__read_code(st, end, buf, sizeof(buf)) < 0);
	assert_true(symtab__read_code(st, 0, buf, sizeof(buf)) < 0);
	/* Data segment: not code. */
	for (int i = 0; i < re.eh->e_phnum; i++)
		if (re.ph[i].p_type == PT_LOAD && !(re.ph[i].p_flags & PF_X) &&
		    re.ph[i].p_filesz > 0)
			assert_true(symtab__read_code(st, re.ph[i].p_vaddr, buf, 4) < 0);
	assert_int_equal(symtab__read_code(st, text->p_vaddr, buf, 0), 0);

	symtab__free(st);
	free(re.data);
}

/* --- C++ ---------------------------------------------------------------- */

static void test_cxx_fixture(void **state)
{
	struct symtab *st = open_ok(fixture("symtab_cxx"));
	const struct symtab_func *poke;

	(void)state;
	poke = find_demangled(st, "ns::Widget::poke(int)");
	assert_non_null(poke);
	assert_string_equal(poke->name, "_ZN2ns6Widget4pokeEi");
	assert_ptr_equal(find_one(st, "_ZN2ns6Widget4pokeEi"), poke);
	assert_true(poke->size > 0);
	assert_null(find_one(st, "main")->demangled);
	/* It throws: imports __cxa_throw; and it has exception tables. */
	assert_int_equal(symtab__runtime_flags(st), SYMTAB_RT_CXX_EH | SYMTAB_EH_TABLES);
	check_sorted_unique(st);
	symtab__free(st);
}

/* --- versioned shared library -------------------------------------------- */

static void test_versions(void **state)
{
	struct symtab *st = open_ok(fixture("libsymtab_ver.so"));
	const struct symtab_func *plain, *old, *new_, *get_old, *get_new;

	(void)state;
	assert_true(symtab__is_dyn(st));
	check_sorted_unique(st);

	/* In .symtab as "cmon_ver_plain" and in .dynsym: one entry. */
	plain = find_one(st, "cmon_ver_plain");
	assert_version(plain, "CMON_1");
	assert_true(plain->dynamic);
	assert_true(plain->size > 0);

	/* cmon_ver_get@CMON_1 and cmon_ver_get@@CMON_2, in both tables. */
	old = find_one(st, "cmon_ver_get_old");
	new_ = find_one(st, "cmon_ver_get_new");
	assert_null(old->version);
	assert_false(old->dynamic);
	get_old = find_at(st, "cmon_ver_get", old->addr);
	get_new = find_at(st, "cmon_ver_get", new_->addr);
	assert_non_null(get_old);
	assert_non_null(get_new);
	assert_version(get_old, "CMON_1");
	assert_version(get_new, "CMON_2");
	assert_true(get_old->dynamic && get_new->dynamic);

	/* Aliases: the exported name wins. */
	assert_ptr_equal(symtab__find_addr(st, old->addr + 1), get_old);
	assert_ptr_equal(symtab__find_addr(st, new_->addr), get_new);
	symtab__free(st);
}

/* --- runtime markers ------------------------------------------------------ */

static void test_runtime_markers(void **state)
{
	struct symtab *st = open_ok(fixture("symtab_markers"));

	(void)state;
	assert_int_equal(symtab__runtime_flags(st), SYMTAB_RT_RUST | SYMTAB_RT_GO);
	assert_true(find_one(st, "rust_panic")->size > 0);
	symtab__free(st);
}

/* Sizeless function symbols: crt's stubs span to the next function (their
 * returns can be found), a label inside a function stays a label, and a
 * marker at its section's end (Go's runtime.etext) is no function. */
static void test_sizeless(void **state)
{
	struct symtab *st = open_ok(fixture("symtab_markers"));
	const struct symtab_func *f, *fn = find_one(st, "cmon_code_fn");
	size_t n;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		f = find_one(st, i ? "frame_dummy" : "_init");
		assert_true(f->size_inferred);
		assert_true(f->size > 0 && f->size < 4096);
		assert_ptr_equal(symtab__find_addr(st, f->addr + f->size - 1), f);
	}
	assert_int_equal(fn->size, 2);
	assert_false(fn->size_inferred);
	f = find_one(st, "cmon_code_mid");
	assert_int_equal(f->size, 0);
	assert_ptr_equal(symtab__find_addr(st, f->addr), fn);
	f = symtab__funcs(st, &n);
	for (size_t i = 0; i < n; i++)
		assert_string_not_equal(f[i].name, "cmon_code_end");
	symtab__free(st);
}

/* --- system libraries ------------------------------------------------------ */

static double open_ms(const char *path)
{
	double best = 1e9;

	for (int i = 0; i < 3; i++) {
		struct timespec a, b;
		struct symtab *st;
		double ms;

		clock_gettime(CLOCK_MONOTONIC, &a);
		st = open_ok(path);
		clock_gettime(CLOCK_MONOTONIC, &b);
		symtab__free(st);
		ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		if (ms < best)
			best = ms;
	}
	return best;
}

static void test_libc(void **state)
{
	struct symtab *st = open_ok(LIBC_PATH);
	const struct symtab_func *malloc_f, *funcs;
	size_t n, ifuncs = 0;
	double ms;

	(void)state;
	assert_true(symtab__is_dyn(st));
	check_sorted_unique(st);
	malloc_f = find_one(st, "malloc");
	assert_version(malloc_f, "GLIBC_2.2.5");
	assert_true(malloc_f->dynamic);
	assert_true(malloc_f->size > 0);
	assert_null(malloc_f->demangled);
	assert_ptr_equal(symtab__find_addr(st, malloc_f->addr + 1), malloc_f);
	/* memcpy and friends are IFUNC resolvers in libc. */
	funcs = symtab__funcs(st, &n);
	for (size_t i = 0; i < n; i++)
		ifuncs += funcs[i].ifunc;
	assert_true(ifuncs > 0);
	assert_non_null(symtab__build_id(st));
	assert_int_equal(strlen(symtab__build_id(st)), 40);
	symtab__free(st);

	ms = open_ms(LIBC_PATH);
	print_message("libc.so.6 opens in %.2f ms\n", ms);
	/* printed, not bounded: a speed is make bench's (its attach section) */
}

static void test_libstdcxx(void **state)
{
	struct symtab *st;
	double ms;

	(void)state;
	if (access(LIBSTDCXX_PATH, R_OK) != 0)
		skip();
	st = open_ok(LIBSTDCXX_PATH);
	/* Defines __cxa_throw itself. */
	assert_true(symtab__runtime_flags(st) & SYMTAB_RT_CXX_EH);
	assert_non_null(find_demangled(st, "std::terminate()"));
	assert_string_equal(find_demangled(st, "std::terminate()")->name, "_ZSt9terminatev");
	symtab__free(st);

	ms = open_ms(LIBSTDCXX_PATH);
	print_message("libstdc++.so.6 opens in %.2f ms\n", ms);
	/* printed, not bounded: a speed is make bench's (its attach section) */
}

/* --- errors ---------------------------------------------------------------- */

static char tmpdir[] = "/tmp/cmon-test-symtab-XXXXXX";

static const char *write_tmp(const char *name, const void *data, size_t len)
{
	static char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	return path;
}

static void expect_errno(const char *path, int want)
{
	struct symtab *st;

	errno = 0;
	st = symtab__open(path);
	if (st)
		fail_msg("%s opened, expected %s", path, strerror(want));
	if (errno != want)
		fail_msg("%s: errno %s, expected %s", path, strerror(errno), strerror(want));
}

static void test_errors(void **state)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";
	Elf32_Ehdr eh32;

	(void)state;
	assert_non_null(mkdtemp(tmpdir));

	expect_errno(write_tmp("text", text, sizeof(text) - 1), ENOEXEC);
	expect_errno(write_tmp("empty", "", 0), ENOEXEC);

	memset(&eh32, 0, sizeof(eh32));
	memcpy(eh32.e_ident, ELFMAG, SELFMAG);
	eh32.e_ident[EI_CLASS] = ELFCLASS32;
	eh32.e_ident[EI_DATA] = ELFDATA2LSB;
	eh32.e_ident[EI_VERSION] = EV_CURRENT;
	eh32.e_type = ET_EXEC;
	eh32.e_machine = EM_386;
	eh32.e_version = EV_CURRENT;
	eh32.e_ehsize = sizeof(eh32);
	/* Another class or machine is named, never decoded as x86-64. */
	expect_errno(write_tmp("elf32", &eh32, sizeof(eh32)), ENOTSUP);
	{
		char why[160];

		assert_int_equal(elfcheck__file(write_tmp("elf32", &eh32, sizeof(eh32)), why,
						sizeof(why)), -ENOTSUP);
		assert_string_equal(why, "32-bit i386 ELF file: cmon traces x86-64 programs");
	}
	/* A cut file is corrupt, not stripped. */
	{
		FILE *f = fopen(fixture("symtab_c_nopie"), "rb");
		static char buf[1 << 20];
		size_t n;
		char why[160];

		assert_non_null(f);
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		assert_true(n > 200);
		expect_errno(write_tmp("cut", buf, n - 100), EBADMSG);
		assert_int_equal(elfcheck__file(write_tmp("cut", buf, n - 100), why, sizeof(why)),
				 -EBADMSG);
		assert_non_null(strstr(why, "corrupt ELF file (truncated"));
		unlink(write_tmp("cut", "", 0));
	}

	expect_errno(fixture("symtab_c_stripped"), ENODATA);
	expect_errno("/nonexistent/cmon/no-such-file", ENOENT);
	expect_errno(tmpdir, EISDIR);

	symtab__free(NULL);

	unlink(write_tmp("text", "", 0));
	unlink(write_tmp("empty", "", 0));
	unlink(write_tmp("elf32", "", 0));
	rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_c_fixture),
		cmocka_unit_test(test_read_code_bounds),
		cmocka_unit_test(test_cxx_fixture),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_runtime_markers),
		cmocka_unit_test(test_sizeless),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_libstdcxx),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
