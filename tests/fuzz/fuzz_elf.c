// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_elf: cmon's ELF readers (elf/: elfcheck, symtab with its
 * MiniDebugInfo, usdt notes, the dynamic section, data symbols) on any
 * file: what a user may name as --binary or a process may map.  Each
 * either reads the file or refuses it with an errno (elfcheck with one
 * line of words); what symtab reads holds together (sorted functions,
 * each found at its address).  `make fuzz` runs it under libFuzzer;
 * tests/unit/test_fuzz_corpus.c replays the kept corpus
 * (tests/fuzz/corpus/elf) in `make test`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/log.h"
#include "elf/dynamic.h"
#include "elf/elfcheck.h"
#include "elf/objsym.h"
#include "elf/symtab.h"
#include "elf/usdt.h"

static char fuzz_elf_dir[64];
static char fuzz_elf_path[80];

static void fuzz_elf_quiet(void *ctx, enum log_level level, const char *text)
{
	(void)ctx;
	(void)level;
	(void)text;
}

static void fuzz_elf_cleanup(void)
{
	unlink(fuzz_elf_path);
	rmdir(fuzz_elf_dir);
}

static void fuzz_elf_init(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(fuzz_elf_dir, sizeof(fuzz_elf_dir), "%s/cmon-fuzz-elf-XXXXXX",
		 tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(fuzz_elf_dir))
		abort();
	snprintf(fuzz_elf_path, sizeof(fuzz_elf_path), "%s/a.out", fuzz_elf_dir);
	atexit(fuzz_elf_cleanup);
}

static void fuzz_elf_symtab(void)
{
	struct symtab *st = symtab__open(fuzz_elf_path);
	const struct symtab_func *fs;
	unsigned char code[16];
	size_t n;

	if (!st)
		return;
	fs = symtab__funcs(st, &n);
	for (size_t i = 0; i < n; i++) {
		const struct symtab_func *f;

		if (!fs[i].name || (i && fs[i].addr < fs[i - 1].addr))
			abort();
		if (i >= 256)
			continue;
		f = symtab__find_addr(st, fs[i].addr);
		if (fs[i].size && (!f || fs[i].addr < f->addr ||
				   (f->size && fs[i].addr - f->addr >= f->size)))
			abort();
		if (symtab__read_code(st, fs[i].addr, code, sizeof(code)) > (long)sizeof(code))
			abort();
	}
	(void)symtab__find_addr(st, symtab__entry(st));
	(void)symtab__build_id(st);
	(void)symtab__runtime_flags(st);
	(void)symtab__is_dyn(st);
	symtab__free(st);
}

static void fuzz_elf_usdt(void)
{
	struct usdt_probe *p = NULL;
	size_t n = 0;

	if (usdt__read(fuzz_elf_path, &p, &n))
		return;
	for (size_t i = 0; i < n; i++)
		if (!p[i].provider || !p[i].name || p[i].n_args > USDT_MAX_ARGS)
			abort();
	usdt__free(p, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_dynamic dyn;
	uint64_t addr, sz;
	char why[256];
	bool pie;
	int fd, err;

	if (!fuzz_elf_path[0])
		fuzz_elf_init();
	log_set_sink(fuzz_elf_quiet, NULL);
	fd = open(fuzz_elf_path, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd))
		abort();
	why[0] = 0;
	err = elfcheck__file(fuzz_elf_path, why, sizeof(why));
	if (err > 0 || (err && (!why[0] || strchr(why, '\n'))))
		abort();
	/* Every reader, whatever elfcheck said: stacks and --watch read the
	 * objects a process maps, which no elfcheck has seen. */
	fuzz_elf_symtab();
	fuzz_elf_usdt();
	(void)objsym__find(fuzz_elf_path, "counter", &addr, &sz);
	memset(&dyn, 0, sizeof(dyn));
	if (!elf_dynamic__load(fuzz_elf_path, &dyn))
		elf_dynamic__clear(&dyn);
	(void)objsym__layout(fuzz_elf_path, &pie, &addr);
	log_set_sink(NULL, NULL);
	return 0;
}
