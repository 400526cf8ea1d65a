/* Unit tests for proc/libpath: execvp-style program lookup, the loader's
 * library search (on ELF files the tests write themselves), the ld.so.cache
 * parser, and the closure of system programs against the real loader. */
#include <dlfcn.h>
#include <gnu/libc-version.h> /* a libc function no sanitizer intercepts: dladdr names libc */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "proc/libpath.h"

/* ---- helpers ---- */

static bool has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	return s;
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void mkdirf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mkdirf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	assert_true(vasprintf(&s, fmt, ap) >= 0);
	va_end(ap);
	assert_int_equal(mkdir(s, 0755), 0);
	free(s);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_rf(const char *dir)
{
	assert_int_equal(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* A fresh temporary directory, its real path (the loader's $ORIGIN of an
 * executable is a real path). */
static char *make_tmpdir(void)
{
	char tmpl[] = "/tmp/cmon-libpath-XXXXXX";
	char *real;

	assert_non_null(mkdtemp(tmpl));
	real = realpath(tmpl, NULL);
	assert_non_null(real);
	return real;
}

/* Environment changes undone after each test. */
static char *saved_path, *saved_llp, *saved_cwd;

static int save_env(void **state)
{
	const char *p = getenv("PATH"), *l = getenv("LD_LIBRARY_PATH");

	saved_path = p ? strdup(p) : NULL;
	saved_llp = l ? strdup(l) : NULL;
	saved_cwd = getcwd(NULL, 0);
	return saved_cwd ? 0 : -1;
}

static int restore_env(void **state)
{
	if (saved_path)
		setenv("PATH", saved_path, 1);
	else
		unsetenv("PATH");
	if (saved_llp)
		setenv("LD_LIBRARY_PATH", saved_llp, 1);
	else
		unsetenv("LD_LIBRARY_PATH");
	if (chdir(saved_cwd))
		return -1;
	free(saved_path);
	free(saved_llp);
	free(saved_cwd);
	saved_path = saved_llp = saved_cwd = NULL;
	return 0;
}

/* ---- libpath__find_exe ---- */

static void test_find_exe_system(void **state)
{
	char *path = NULL;

	setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
	assert_int_equal(libpath__find_exe("true", &path), 0);
	assert_non_null(path);
	if (strcmp(path, "/usr/bin/true") && strcmp(path, "/bin/true") &&
	    strcmp(path, "/usr/local/bin/true"))
		fail_msg("find_exe(true) = %s", path);
	assert_int_equal(path[0], '/');
	assert_int_equal(access(path, X_OK), 0);
	free(path);

	/* no PATH: execvp's default list */
	unsetenv("PATH");
	assert_int_equal(libpath__find_exe("true", &path), 0);
	if (access("/usr/local/bin/true", X_OK))
		assert_string_equal(path, "/usr/bin/true");
	free(path);

	/* with a '/': as is */
	assert_int_equal(libpath__find_exe("/bin/true", &path), 0);
	assert_string_equal(path, "/bin/true");
	free(path);

	path = (char *)1;
	assert_int_equal(libpath__find_exe("./nonexistent", &path), -ENOENT);
	assert_null(path);
	assert_int_equal(libpath__find_exe("", &path), -ENOENT);
	assert_int_equal(libpath__find_exe("/nonexistent/true", &path), -ENOENT);
	assert_int_equal(libpath__find_exe("cmon-no-such-command-here", &path), -ENOENT);
}

static void test_find_exe_path_rules(void **state)
{
	static const char script[] = "#!/bin/sh\nexit 0\n";
	char *root = make_tmpdir(), *path = NULL, *p;
	struct {
		const char *path_env; /* %1$s: root */
		const char *cmd;
		int ret;
		const char *want; /* relative to root */
	} cases[] = {
		/* not executable, then a directory, then the real one */
		{ "%1$s/a:%1$s/b:%1$s/c", "tool", 0, "c/tool" },
		{ "%1$s/c:%1$s/a", "tool", 0, "c/tool" },
		/* only unusable ones: EACCES, as execvp */
		{ "%1$s/a:%1$s/b", "tool", -EACCES, NULL },
		{ "%1$s/none:%1$s/a", "tool", -EACCES, NULL },
		{ "%1$s/none", "tool", -ENOENT, NULL },
		/* an empty entry is the working directory (root/c below) */
		{ "%1$s/none::%1$s/a", "tool", 0, "c/tool" },
		{ "%1$s/a:", "tool", 0, "c/tool" },
		/* relative names: made absolute against the working directory */
		{ "/nonexistent", "./tool", 0, "c/tool" },
		{ "/nonexistent", "../c/tool", 0, "c/../c/tool" },
		{ "/nonexistent", "./plain", -EACCES, NULL },
		{ "/nonexistent", "./nonexistent", -ENOENT, NULL },
	};

	mkdirf("%s/a", root);
	mkdirf("%s/b", root);
	mkdirf("%s/b/tool", root);
	mkdirf("%s/c", root);
	p = xasprintf("%s/a/tool", root);
	write_file(p, script, strlen(script), 0644);
	free(p);
	p = xasprintf("%s/c/tool", root);
	write_file(p, script, strlen(script), 0755);
	free(p);
	p = xasprintf("%s/c/plain", root);
	write_file(p, script, strlen(script), 0644);
	free(p);
	p = xasprintf("%s/c", root);
	assert_int_equal(chdir(p), 0);
	free(p);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *env = xasprintf(cases[i].path_env, root);
		int ret;

		setenv("PATH", env, 1);
		ret = libpath__find_exe(cases[i].cmd, &path);
		if (ret != cases[i].ret)
			fail_msg("case %zu (PATH=%s %s): %d, want %d", i, env, cases[i].cmd, ret,
				 cases[i].ret);
		if (cases[i].want) {
			char *want = xasprintf("%s/%s", root, cases[i].want);

			assert_string_equal(path, want);
			free(want);
		} else {
			assert_null(path);
		}
		free(path);
		path = NULL;
		free(env);
	}
	rm_rf(root);
	free(root);
}

/* ---- ELF files written by the tests ---- */

struct fake_elf {
	uint16_t machine;      /* 0: EM_X86_64 */
	const char *interp;
	const char *soname;
	const char *rpath;
	const char *runpath;
	const char *needed[6];
};

#define FAKE_BASE 0x10000 /* load address: vaddr != file offset */
#define FAKE_STR_OFF 512
#define FAKE_INTERP_OFF 2048
#define FAKE_DYN_OFF 3072
#define FAKE_SIZE 4096

static uint32_t add_str(unsigned char *img, size_t *len, const char *s)
{
	uint32_t off = (uint32_t)*len;

	assert_true(FAKE_STR_OFF + *len + strlen(s) + 1 < FAKE_INTERP_OFF);
	memcpy(img + FAKE_STR_OFF + *len, s, strlen(s) + 1);
	*len += strlen(s) + 1;
	return off;
}

/* An ELF64 file with program headers only (no sections), as the loader
 * sees it: PT_LOAD, PT_INTERP, PT_DYNAMIC with the given entries. */
static void write_fake_elf(const char *path, const struct fake_elf *fe)
{
	static unsigned char img[FAKE_SIZE];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	Elf64_Dyn *dyn = (Elf64_Dyn *)(img + FAKE_DYN_OFF);
	size_t strlen_ = 1, nph = 0, nd = 0;

	memset(img, 0, sizeof(img));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = fe->machine ? fe->machine : EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);

	ph[nph++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
				  .p_vaddr = FAKE_BASE, .p_paddr = FAKE_BASE,
				  .p_filesz = FAKE_SIZE, .p_memsz = FAKE_SIZE, .p_align = 4096 };
	if (fe->interp) {
		size_t l = strlen(fe->interp) + 1;

		memcpy(img + FAKE_INTERP_OFF, fe->interp, l);
		ph[nph++] = (Elf64_Phdr){ .p_type = PT_INTERP, .p_flags = PF_R,
					  .p_offset = FAKE_INTERP_OFF,
					  .p_vaddr = FAKE_BASE + FAKE_INTERP_OFF,
					  .p_filesz = l, .p_memsz = l, .p_align = 1 };
	}
	/* names after the table, to check the two passes over it */
	for (size_t i = 0; i < 6 && fe->needed[i]; i++)
		dyn[nd++] = (Elf64_Dyn){ DT_NEEDED, { add_str(img, &strlen_, fe->needed[i]) } };
	if (fe->soname)
		dyn[nd++] = (Elf64_Dyn){ DT_SONAME, { add_str(img, &strlen_, fe->soname) } };
	if (fe->rpath)
		dyn[nd++] = (Elf64_Dyn){ DT_RPATH, { add_str(img, &strlen_, fe->rpath) } };
	if (fe->runpath)
		dyn[nd++] = (Elf64_Dyn){ DT_RUNPATH, { add_str(img, &strlen_, fe->runpath) } };
	dyn[nd++] = (Elf64_Dyn){ DT_STRTAB, { FAKE_BASE + FAKE_STR_OFF } };
	dyn[nd++] = (Elf64_Dyn){ DT_STRSZ, { strlen_ } };
	dyn[nd++] = (Elf64_Dyn){ DT_NULL, { 0 } };
	ph[nph++] = (Elf64_Phdr){ .p_type = PT_DYNAMIC, .p_flags = PF_R | PF_W,
				  .p_offset = FAKE_DYN_OFF, .p_vaddr = FAKE_BASE + FAKE_DYN_OFF,
				  .p_filesz = nd * sizeof(*dyn), .p_memsz = nd * sizeof(*dyn),
				  .p_align = 8 };
	eh->e_phnum = (uint16_t)nph;
	write_file(path, img, sizeof(img), 0755);
}

static void fake_lib(const char *root, const char *rel, const struct fake_elf *fe)
{
	char *p = xasprintf("%s/%s", root, rel);

	write_fake_elf(p, fe);
	free(p);
}

/* ---- libpath__find_library: the search order ---- */

struct search_case {
	const char *what;
	const char *rpath, *runpath;   /* of bin/prog */
	const char *llp;               /* %1$s: root; NULL: unset */
	const char *const have[4];     /* dirs (under root) holding libx.so.1 */
	const char *arm;               /* a dir with an aarch64 libx.so.1 */
	bool no_exe;                   /* find_library(NULL, ...) */
	int ret;
	const char *want;              /* %1$s: root */
};

static const struct search_case search_cases[] = {
	{ "RPATH before LD_LIBRARY_PATH", "$ORIGIN/../rp", NULL, "%1$s/llp",
	  { "rp", "llp", "run" }, NULL, false, 0, "%1$s/bin/../rp/libx.so.1" },
	{ "RPATH ignored beside RUNPATH; LD_LIBRARY_PATH first", "$ORIGIN/../rp", "$ORIGIN/../run",
	  "%1$s/llp", { "rp", "llp", "run" }, NULL, false, 0, "%1$s/llp/libx.so.1" },
	{ "RUNPATH", "$ORIGIN/../rp", "$ORIGIN/../run", NULL,
	  { "rp", "llp", "run" }, NULL, false, 0, "%1$s/bin/../run/libx.so.1" },
	{ "several entries, braces", NULL, "/nonexistent:${ORIGIN}/../none:${ORIGIN}/../run", NULL,
	  { "run" }, NULL, false, 0, "%1$s/bin/../run/libx.so.1" },
	{ "LD_LIBRARY_PATH split on ';' too", NULL, NULL, "%1$s/none;%1$s/llp",
	  { "llp" }, NULL, false, 0, "%1$s/llp/libx.so.1" },
	{ "another machine is passed over", "$ORIGIN/../rp", NULL, "%1$s/llp",
	  { "llp" }, "rp", false, 0, "%1$s/llp/libx.so.1" },
	{ "$LIB: Debian's multiarch dir first", NULL, "$ORIGIN/../$LIB", NULL,
	  { "lib/x86_64-linux-gnu", "lib64", "lib" }, NULL, false, 0,
	  "%1$s/bin/../lib/x86_64-linux-gnu/libx.so.1" },
	{ "$LIB: then lib64", NULL, "$ORIGIN/../$LIB", NULL,
	  { "lib64", "lib" }, NULL, false, 0, "%1$s/bin/../lib64/libx.so.1" },
	{ "$LIB: then lib", NULL, "$ORIGIN/../${LIB}", NULL,
	  { "lib" }, NULL, false, 0, "%1$s/bin/../lib/libx.so.1" },
	{ "$PLATFORM", NULL, "$ORIGIN/../$PLATFORM", NULL,
	  { "x86_64" }, NULL, false, 0, "%1$s/bin/../x86_64/libx.so.1" },
	{ "$ORIGINAL is no $ORIGIN", NULL, "$ORIGINAL", NULL,
	  { "run" }, NULL, false, -ENOENT, NULL },
	{ "nowhere", "$ORIGIN/../rp", "$ORIGIN/../run", "%1$s/llp",
	  { NULL }, NULL, false, -ENOENT, NULL },
	{ "no EXE: cache and default dirs only", NULL, NULL, "%1$s/llp",
	  { "llp" }, NULL, true, -ENOENT, NULL },
};

static void test_find_library_search_order(void **state)
{
	for (size_t i = 0; i < sizeof(search_cases) / sizeof(search_cases[0]); i++) {
		const struct search_case *c = &search_cases[i];
		char *root = make_tmpdir(), *exe, *path = (char *)1;
		static const char *const dirs[] = { "bin", "rp", "llp", "run", "lib", "lib64",
						    "x86_64", "none" };
		int ret;

		for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++)
			mkdirf("%s/%s", root, dirs[d]);
		mkdirf("%s/lib/x86_64-linux-gnu", root);
		exe = xasprintf("%s/bin/prog", root);
		write_fake_elf(exe, &(struct fake_elf){ .rpath = c->rpath, .runpath = c->runpath,
							.needed = { "libx.so.1" } });
		for (size_t h = 0; h < 4 && c->have[h]; h++) {
			char *rel = xasprintf("%s/libx.so.1", c->have[h]);

			fake_lib(root, rel, &(struct fake_elf){ .soname = "libx.so.1" });
			free(rel);
		}
		if (c->arm) {
			char *rel = xasprintf("%s/libx.so.1", c->arm);

			fake_lib(root, rel, &(struct fake_elf){ .machine = EM_AARCH64 });
			free(rel);
		}
		if (c->llp) {
			char *llp = xasprintf(c->llp, root);

			setenv("LD_LIBRARY_PATH", llp, 1);
			free(llp);
		} else {
			unsetenv("LD_LIBRARY_PATH");
		}

		ret = libpath__find_library(c->no_exe ? NULL : exe, "libx.so.1", &path);
		if (ret != c->ret)
			fail_msg("case %zu (%s): %d, want %d", i, c->what, ret, c->ret);
		if (c->want) {
			char *want = xasprintf(c->want, root);

			if (strcmp(path, want))
				fail_msg("case %zu (%s): %s, want %s", i, c->what, path, want);
			free(want);
			free(path);
		} else {
			assert_null(path);
		}
		free(exe);
		rm_rf(root);
		free(root);
	}
}

static void test_find_library_system(void **state)
{
	char *path = NULL, *dir, *rel;
	struct stat st;
	Dl_info dli;

	unsetenv("LD_LIBRARY_PATH");
	assert_int_equal(libpath__find_library(NULL, "libc.so.6", &path), 0);
	assert_int_equal(path[0], '/');
	assert_true(has_suffix(path, "/libc.so.6"));
	assert_int_equal(stat(path, &st), 0);
	/* the very file our own process runs with */
	{
		struct stat ours;

		assert_true(dladdr((void *)gnu_get_libc_version, &dli));
		assert_int_equal(stat(dli.dli_fname, &ours), 0);
		assert_int_equal(st.st_ino, ours.st_ino);
		assert_int_equal(st.st_dev, ours.st_dev);
	}
	free(path);

	/* an executable without RPATH/RUNPATH gets the same */
	assert_int_equal(libpath__find_library("/bin/ls", "libc.so.6", &path), 0);
	assert_true(has_suffix(path, "/libc.so.6"));
	free(path);

	path = (char *)1;
	assert_int_equal(libpath__find_library(NULL, "libcmon-nonexistent.so.42", &path), -ENOENT);
	assert_null(path);
	assert_int_equal(libpath__find_library("/bin/ls", "libcmon-nonexistent.so.42", &path),
			 -ENOENT);

	/* a name with '/' is used as is, made absolute */
	dir = make_tmpdir();
	fake_lib(dir, "libq.so", &(struct fake_elf){ 0 });
	fake_lib(dir, "libarm.so", &(struct fake_elf){ .machine = EM_AARCH64 });
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(libpath__find_library(NULL, "./libq.so", &path), 0);
	rel = xasprintf("%s/libq.so", dir);
	assert_string_equal(path, rel);
	free(path);
	assert_int_equal(libpath__find_library(NULL, rel, &path), 0);
	assert_string_equal(path, rel);
	free(path);
	free(rel);
	assert_int_equal(libpath__find_library(NULL, "./libarm.so", &path), -ENOENT);
	assert_int_equal(libpath__find_library(NULL, "./libnone.so", &path), -ENOENT);
	rm_rf(dir);
	free(dir);
}

/* ---- libpath__needed_closure ---- */

static void test_closure_fake_tree(void **state)
{
	char *root = make_tmpdir(), *exe, *libc = NULL, *link;
	char **paths = NULL;
	size_t n = 0;

	unsetenv("LD_LIBRARY_PATH");
	assert_int_equal(libpath__find_library(NULL, "libc.so.6", &libc), 0);
	mkdirf("%s/bin", root);
	mkdirf("%s/a", root);
	mkdirf("%s/b", root);
	mkdirf("%s/c", root);
	mkdirf("%s/d", root);
	exe = xasprintf("%s/bin/prog", root);
	write_fake_elf(exe, &(struct fake_elf){
		.interp = "/lib64/ld-linux-x86-64.so.2", .rpath = "$ORIGIN/../a",
		.needed = { "libx.so.1", "liby.so.1" } });
	/* libx: its own RPATH (c) is searched before the executable's */
	fake_lib(root, "a/libx.so.1", &(struct fake_elf){
		.soname = "libx.so.1", .rpath = "$ORIGIN/../c",
		.needed = { "libz.so.1", "libq.so.1", "libc.so.6" } });
	/* liby: libx by name again, and by another name of the same file */
	fake_lib(root, "a/liby.so.1", &(struct fake_elf){
		.soname = "liby.so.1", .needed = { "libx.so.1", "libv.so.1", "libr.so.1" } });
	/* libr has both: its RPATH counts for nobody, not even for the needs
	 * of libt, which it loads; libu2 (only in c) stays unfound */
	fake_lib(root, "a/libr.so.1", &(struct fake_elf){
		.soname = "libr.so.1", .rpath = "$ORIGIN/../c", .runpath = "$ORIGIN/../d",
		.needed = { "libt.so.1" } });
	fake_lib(root, "d/libt.so.1", &(struct fake_elf){
		.soname = "libt.so.1", .needed = { "libu2.so.1" } });
	fake_lib(root, "c/libu2.so.1", &(struct fake_elf){ .soname = "libu2.so.1" });
	link = xasprintf("%s/a/libv.so.1", root);
	assert_int_equal(symlink("libx.so.1", link), 0);
	free(link);
	/* libz has a RUNPATH: no RPATH (neither its loaders' nor the
	 * executable's) for its needs, so libw comes from b, not a */
	fake_lib(root, "a/libz.so.1", &(struct fake_elf){
		.soname = "libz.so.1", .runpath = "$ORIGIN/../b", .needed = { "libw.so.1" } });
	fake_lib(root, "a/libw.so.1", &(struct fake_elf){ .soname = "libw.so.1" });
	fake_lib(root, "b/libw.so.1", &(struct fake_elf){
		.soname = "libw.so.1", .needed = { "libmissing.so.9" } });
	/* libq has no paths: libu is found through its loader libx's RPATH;
	 * libw is the one already loaded under that name (b), though a search
	 * from here would give a's */
	fake_lib(root, "a/libq.so.1", &(struct fake_elf){
		.soname = "libq.so.1", .needed = { "libu.so.1", "libw.so.1" } });
	fake_lib(root, "c/libu.so.1", &(struct fake_elf){ .soname = "libu.so.1" });

	assert_int_equal(libpath__needed_closure(exe, &paths, &n), 0);
	{
		char *want[] = {
			xasprintf("%s", exe),
			xasprintf("%s/bin/../a/libx.so.1", root),
			xasprintf("%s/bin/../a/liby.so.1", root),
			xasprintf("%s/bin/../a/libz.so.1", root),
			xasprintf("%s/bin/../a/libq.so.1", root),
			xasprintf("%s", libc),
			xasprintf("%s/bin/../a/libr.so.1", root),
			xasprintf("%s/bin/../a/../b/libw.so.1", root),
			xasprintf("%s/bin/../a/../c/libu.so.1", root),
			/* libc needs it: in its breadth-first place, by PT_INTERP */
			xasprintf("/lib64/ld-linux-x86-64.so.2"),
			xasprintf("%s/bin/../a/../d/libt.so.1", root),
		};
		size_t nwant = sizeof(want) / sizeof(want[0]);

		for (size_t i = 0; i < n && i < nwant; i++)
			if (strcmp(paths[i], want[i]))
				fail_msg("closure[%zu] = %s, want %s", i, paths[i], want[i]);
		assert_int_equal(n, nwant);
		for (size_t i = 0; i < nwant; i++)
			free(want[i]);
	}
	libpath__free(paths, n);

	/* relative executable and LD_LIBRARY_PATH: made absolute; without
	 * PT_INTERP the loader still comes in, as libc's need */
	assert_int_equal(chdir(root), 0);
	fake_lib(root, "bin/plain", &(struct fake_elf){ .needed = { "libx.so.1" } });
	setenv("LD_LIBRARY_PATH", "a", 1); /* relative too */
	assert_int_equal(libpath__needed_closure("./bin/plain", &paths, &n), 0);
	assert_int_equal(n, 8);
	{
		char *p0 = xasprintf("%s/bin/plain", root);
		char *p1 = xasprintf("%s/a/libx.so.1", root);
		char *p2 = xasprintf("%s/a/libz.so.1", root);

		assert_string_equal(paths[0], p0);
		assert_string_equal(paths[1], p1);
		assert_string_equal(paths[2], p2);
		assert_string_equal(paths[4], libc);
		assert_true(has_suffix(paths[7], "/ld-linux-x86-64.so.2"));
		free(p2);
		free(p0);
		free(p1);
	}
	for (size_t i = 0; i < n; i++)
		assert_int_equal(paths[i][0], '/');
	libpath__free(paths, n);

	free(libc);
	free(exe);
	rm_rf(root);
	free(root);
}

static void test_closure_not_elf(void **state)
{
	static const char text[] = "#!/bin/sh\necho not an ELF\n";
	char *root = make_tmpdir(), *p, *path = (char *)1;
	char **paths = (char **)1;
	size_t n = 5;
	struct {
		const char *name;
		int ret;
	} cases[] = { { "script", -ENOEXEC }, { "empty", -ENOEXEC }, { "arm", -ENOEXEC },
		      { "elf32", -ENOEXEC }, { "dir", -ENOEXEC }, { "nonexistent", -ENOENT } };

	p = xasprintf("%s/script", root);
	write_file(p, text, strlen(text), 0755);
	free(p);
	p = xasprintf("%s/empty", root);
	write_file(p, "", 0, 0755);
	free(p);
	fake_lib(root, "arm", &(struct fake_elf){ .machine = EM_AARCH64 });
	{
		Elf32_Ehdr eh = { 0 };

		memcpy(eh.e_ident, ELFMAG, SELFMAG);
		eh.e_ident[EI_CLASS] = ELFCLASS32;
		eh.e_ident[EI_DATA] = ELFDATA2LSB;
		eh.e_ident[EI_VERSION] = EV_CURRENT;
		eh.e_type = ET_EXEC;
		eh.e_machine = EM_386;
		eh.e_version = EV_CURRENT;
		eh.e_ehsize = sizeof(eh);
		p = xasprintf("%s/elf32", root);
		write_file(p, &eh, sizeof(eh), 0755);
		free(p);
	}
	mkdirf("%s/dir", root);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret;

		p = xasprintf("%s/%s", root, cases[i].name);
		ret = libpath__needed_closure(p, &paths, &n);
		if (ret != cases[i].ret)
			fail_msg("closure(%s) = %d, want %d", cases[i].name, ret, cases[i].ret);
		assert_null(paths);
		assert_int_equal(n, 0);
		ret = libpath__find_library(p, "libc.so.6", &path);
		if (ret != cases[i].ret)
			fail_msg("find_library(%s) = %d, want %d", cases[i].name, ret, cases[i].ret);
		assert_null(path);
		free(p);
	}
	rm_rf(root);
	free(root);
}

/* What the real loader maps for PROG: run it with LD_TRACE_LOADED_OBJECTS
 * (ldd's way) and keep the paths, in its order, without the vDSO. */
static size_t loader_trace(const char *prog, char ***out)
{
	char buf[65536], *line, *save = NULL;
	size_t len = 0, n = 0;
	char **v = NULL;
	int fds[2], status;
	ssize_t r;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((r = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)r;
	close(fds[0]);
	buf[len] = '\0';
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* "\tname => /path (0x...)" or "\t/path (0x...)" */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *arrow = strstr(line, " => "), *p, *end;

		p = arrow ? arrow + 4 : line + strspn(line, " \t");
		if (*p != '/')
			continue; /* linux-vdso.so.1 */
		end = strstr(p, " (0x");
		assert_non_null(end);
		v = realloc(v, (n + 1) * sizeof(*v));
		assert_non_null(v);
		v[n++] = strndup(p, (size_t)(end - p));
	}
	*out = v;
	return n;
}

static void test_closure_matches_loader(void **state)
{
	static const char *const progs[] = { "/bin/ls", "/bin/true", "/usr/bin/python3",
					     "/usr/bin/clang", "/usr/bin/gcc" };
	size_t tried = 0;

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char **paths = NULL, **trace = NULL;
		size_t n = 0, nt;

		if (access(progs[i], X_OK))
			continue;
		tried++;
		assert_int_equal(libpath__needed_closure(progs[i], &paths, &n), 0);
		assert_string_equal(paths[0], progs[i]);
		nt = loader_trace(progs[i], &trace);
		assert_true(nt >= 1);
		for (size_t j = 0; j < nt && j + 1 < n; j++)
			if (strcmp(paths[j + 1], trace[j]))
				fail_msg("%s: closure[%zu] = %s, loader has %s", progs[i], j + 1,
					 paths[j + 1], trace[j]);
		if (n != nt + 1)
			fail_msg("%s: %zu objects, loader has %zu", progs[i], n - 1, nt);
		libpath__free(paths, n);
		libpath__free(trace, nt);
	}
	assert_true(tried >= 2);
}

static void test_closure_ls(void **state)
{
	char **paths = NULL;
	size_t n = 0;
	bool libc = false, interp = false;

	unsetenv("LD_LIBRARY_PATH");
	assert_int_equal(libpath__needed_closure("/bin/ls", &paths, &n), 0);
	assert_true(n >= 3);
	assert_string_equal(paths[0], "/bin/ls");
	for (size_t i = 0; i < n; i++) {
		struct stat a, b;

		assert_int_equal(paths[i][0], '/');
		libc |= has_suffix(paths[i], "/libc.so.6");
		interp |= has_suffix(paths[i], "/ld-linux-x86-64.so.2");
		/* each file once */
		assert_int_equal(stat(paths[i], &a), 0);
		for (size_t j = 0; j < i; j++) {
			assert_int_equal(stat(paths[j], &b), 0);
			assert_false(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
		}
	}
	assert_true(libc);
	assert_true(interp);
	libpath__free(paths, n);
	libpath__free(NULL, 0);
}

/* ---- ld.so.cache ---- */

static void test_cache_system(void **state)
{
	char *path = NULL;
	struct stat st, ours;
	Dl_info dli;

	assert_int_equal(libpath__cache_lookup(NULL, "libc.so.6", &path), 0);
	assert_true(has_suffix(path, "/libc.so.6"));
	assert_int_equal(stat(path, &st), 0);
	assert_true(dladdr((void *)gnu_get_libc_version, &dli));
	assert_int_equal(stat(dli.dli_fname, &ours), 0);
	assert_int_equal(st.st_ino, ours.st_ino);
	free(path);
	assert_int_equal(libpath__cache_lookup("/etc/ld.so.cache", "libm.so.6", &path), 0);
	assert_true(has_suffix(path, "/libm.so.6"));
	free(path);
	path = (char *)1;
	assert_int_equal(libpath__cache_lookup(NULL, "libcmon-nonexistent.so.42", &path), -ENOENT);
	assert_null(path);
	assert_int_equal(libpath__cache_lookup("/nonexistent/ld.so.cache", "libc.so.6", &path),
			 -ENOENT);
}

struct cache_ent {
	int32_t flags;
	const char *key, *value;
	uint64_t hwcap;
};

static const struct cache_ent cache_ents[] = {
	/* a glibc-hwcaps entry before the baseline one: the baseline wins */
	{ 0x0303, "libfoo.so.1", "/opt/hw/libfoo.so.1", 1ULL << 62 },
	{ 0x0303, "libfoo.so.1", "/opt/base/libfoo.so.1", 0 },
	/* i386 and x32 libraries are not for us */
	{ 0x0003, "libbar.so.1", "/lib32/libbar.so.1", 0 },
	{ 0x0803, "libbar.so.1", "/libx32/libbar.so.1", 0 },
	/* only a hwcaps entry: taken */
	{ 0x0303, "libhw.so.1", "/opt/hw/libhw.so.1", 1ULL << 62 },
	{ 0x0303, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", 0 },
};
#define N_CACHE_ENTS (sizeof(cache_ents) / sizeof(cache_ents[0]))

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

enum cache_layout { CACHE_NEW, CACHE_OLD_NEW, CACHE_OLD };

/* A cache as ldconfig writes it (glibc dl-cache.h).  The old part, when
 * there is one, names other files ("/old..."), so which part was read
 * shows. */
static size_t build_cache(enum cache_layout layout, unsigned char *buf, size_t cap)
{
	size_t old_n = layout == CACHE_NEW ? 0 : N_CACHE_ENTS;
	size_t pos = 0, new_hdr, strings, old_strings = 0;

	memset(buf, 0, cap);
	if (layout != CACHE_NEW) {
		memcpy(buf, "ld.so-1.7.0", 11);
		put32(buf + 12, (uint32_t)old_n);
		pos = 16 + old_n * 12;
		old_strings = pos;
		if (layout == CACHE_OLD_NEW)
			pos = (pos + 7) & ~(size_t)7;
	}
	new_hdr = pos;
	if (layout != CACHE_OLD) {
		memcpy(buf + new_hdr, "glibc-ld.so.cache1.1", 20);
		put32(buf + new_hdr + 20, (uint32_t)N_CACHE_ENTS);
		buf[new_hdr + 28] = 2; /* little endian */
		pos = new_hdr + 48 + N_CACHE_ENTS * 24;
	}
	strings = pos;
	for (size_t i = 0; i < N_CACHE_ENTS; i++) {
		const struct cache_ent *e = &cache_ents[i];
		size_t key = pos, val, oval;

		strcpy((char *)buf + pos, e->key);
		pos += strlen(e->key) + 1;
		val = pos;
		strcpy((char *)buf + pos, e->value);
		pos += strlen(e->value) + 1;
		oval = pos;
		pos += (size_t)sprintf((char *)buf + pos, "/old%s", e->value) + 1;
		assert_true(pos < cap);
		if (layout != CACHE_OLD) {
			unsigned char *ne = buf + new_hdr + 48 + i * 24;

			put32(ne, (uint32_t)e->flags);
			put32(ne + 4, (uint32_t)(key - new_hdr));
			put32(ne + 8, (uint32_t)(val - new_hdr));
			put64(ne + 16, e->hwcap);
		}
		if (layout != CACHE_NEW) {
			/* old entries count from the end of the old table */
			unsigned char *oe = buf + 16 + i * 12;

			put32(oe, (uint32_t)e->flags);
			put32(oe + 4, (uint32_t)(key - old_strings));
			put32(oe + 8, (uint32_t)((layout == CACHE_OLD ? val : oval) - old_strings));
		}
	}
	(void)strings;
	return pos;
}

static void test_cache_layouts(void **state)
{
	static unsigned char buf[8192];
	char *root = make_tmpdir();
	char *file = xasprintf("%s/ld.so.cache", root);
	const struct {
		const char *name, *want; /* NULL: -ENOENT */
	} lookups[] = {
		{ "libfoo.so.1", "/opt/base/libfoo.so.1" },
		{ "libbar.so.1", NULL },
		{ "libhw.so.1", "/opt/hw/libhw.so.1" },
		{ "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6" },
		{ "libnone.so.1", NULL },
		{ "libfoo.so", NULL },
	};

	for (int layout = CACHE_NEW; layout <= CACHE_OLD; layout++) {
		size_t len = build_cache(layout, buf, sizeof(buf));

		write_file(file, buf, len, 0644);
		for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
			const char *want = lookups[i].want;
			char *path = NULL;
			int ret = libpath__cache_lookup(file, lookups[i].name, &path);

			/* the old format has no hwcap: its first libfoo entry */
			if (layout == CACHE_OLD && !strcmp(lookups[i].name, "libfoo.so.1"))
				want = "/opt/hw/libfoo.so.1";
			if (ret != (want ? 0 : -ENOENT))
				fail_msg("layout %d %s: %d", layout, lookups[i].name, ret);
			if (want)
				assert_string_equal(path, want);
			free(path);
		}
	}
	free(file);
	rm_rf(root);
	free(root);
}

static void test_cache_malformed(void **state)
{
	static unsigned char buf[8192];
	char *root = make_tmpdir();
	char *file = xasprintf("%s/ld.so.cache", root);
	char *path = (char *)1;
	size_t len;

	/* not a cache */
	write_file(file, "hello, world\n", 13, 0644);
	assert_int_equal(libpath__cache_lookup(file, "libc.so.6", &path), -EINVAL);
	assert_null(path);
	write_file(file, "", 0, 0644);
	assert_int_equal(libpath__cache_lookup(file, "libc.so.6", &path), -EINVAL);

	/* more entries than the file holds */
	len = build_cache(CACHE_NEW, buf, sizeof(buf));
	put32(buf + 20, 100000);
	write_file(file, buf, len, 0644);
	assert_int_equal(libpath__cache_lookup(file, "libc.so.6", &path), -EINVAL);
	len = build_cache(CACHE_OLD, buf, sizeof(buf));
	put32(buf + 12, 100000);
	write_file(file, buf, len, 0644);
	assert_int_equal(libpath__cache_lookup(file, "libc.so.6", &path), -EINVAL);

	/* big-endian cache */
	len = build_cache(CACHE_NEW, buf, sizeof(buf));
	buf[28] = 3;
	write_file(file, buf, len, 0644);
	assert_int_equal(libpath__cache_lookup(file, "libc.so.6", &path), -EINVAL);

	/* truncated in the strings: entries pointing past the end are skipped */
	len = build_cache(CACHE_NEW, buf, sizeof(buf));
	write_file(file, buf, 48 + N_CACHE_ENTS * 24 + 5, 0644);
	assert_int_equal(libpath__cache_lookup(file, "libc.so.6", &path), -ENOENT);
	assert_null(path);

	free(file);
	rm_rf(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_find_exe_system, save_env, restore_env),
		cmocka_unit_test_setup_teardown(test_find_exe_path_rules, save_env, restore_env),
		cmocka_unit_test_setup_teardown(test_find_library_search_order, save_env,
						restore_env),
		cmocka_unit_test_setup_teardown(test_find_library_system, save_env, restore_env),
		cmocka_unit_test_setup_teardown(test_closure_fake_tree, save_env, restore_env),
		cmocka_unit_test_setup_teardown(test_closure_not_elf, save_env, restore_env),
		cmocka_unit_test_setup_teardown(test_closure_matches_loader, save_env, restore_env),
		cmocka_unit_test_setup_teardown(test_closure_ls, save_env, restore_env),
		cmocka_unit_test(test_cache_system),
		cmocka_unit_test(test_cache_layouts),
		cmocka_unit_test(test_cache_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
