// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * debuginfo.c: finding a file's DWARF (in the file, through .gnu_debuglink,
 * or by build-id under the debug root) and the lookups that need only the
 * file; the rest of dwarf/ builds types, locations and signatures on it
 * (debuginfo_impl.h).
 */
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>
#include "core/grow.h"
#include "core/log.h"
#include "core/escape.h"
#include "elf/debugfile.h"
#include "elf/debuginfod.h"
#include "dwarf/debuginfo_impl.h"

/* A warning about a file's debug info: said once a run, however many
 * times the file is opened (each command opens it for lines, types...). */
static bool first_warning(const char *what, const char *path)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static char *seen[64];
	static size_t n;
	char *key = NULL;
	bool first = true;

	if (asprintf(&key, "%s:%s", what, path) < 0)
		return true;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < n && first; i++)
		first = strcmp(seen[i], key) != 0;
	if (first && n < sizeof(seen) / sizeof(seen[0])) {
		seen[n++] = key;
		key = NULL;
	}
	pthread_mutex_unlock(&mu);
	free(key);
	return first;
}

/* DWARF that dwz moved partly into a shared file (.gnu_debugaltlink, as
 * in Debian's -dbgsym packages): libdw finds it by its path, beside the
 * DWARF file or by build-id under /usr/lib/debug.  Without it every type
 * and name there is unknown: say so rather than print nulls. */
static void check_alt(struct debuginfo *di)
{
	const char *name;
	const void *bid;

	if (dwelf_dwarf_gnu_debugaltlink(di->dwarf, &name, &bid) > 0 && !dwarf_getalt(di->dwarf) &&
	    first_warning("alt", di->path))
		log_warn("%s: its DWARF (dwz) refers to %s (.gnu_debugaltlink), which was not "
			 "found: the types and names kept there are missing", di->path, name);
}

static int find_dwarf(struct debuginfo *di, const struct debuginfo_opts *o)
{
	struct debugfile_opts fo = {};
	struct debugfile f;
	bool info, debugdata;
	int err;

	debugfile__scan(di->elf, &info, &debugdata);
	if (info) {
		di->dwarf = dwarf_begin_elf(di->elf, DWARF_C_READ, NULL);
		if (di->dwarf) {
			di->dwarf_path = strdup(di->path);
			if (asprintf(&di->desc, "DWARF in %s", di->path) < 0)
				di->desc = NULL;
			goto found;
		}
		log_debug("%s: %s", di->path, dwarf_errmsg(-1));
	}
	if (o) {
		fo.debug_root = o->debug_root;
		fo.link_dir = o->link_dir;
		fo.no_fetch = o->no_fetch;
	}
	err = debugfile__find(di->elf, di->path, &fo, &f);
	if (err == -ENOMEM)
		return err;
	if (!err) {
		di->dwarf = dwarf_begin_elf(f.elf, DWARF_C_READ, NULL);
		if (!di->dwarf) {
			log_warn("%s: the DWARF of %s cannot be read: %s: untyped", di->path, f.path,
				 dwarf_errmsg(-1));
			debugfile__close(&f);
		} else {
			di->delf = f.elf;
			di->dfd = f.fd;
			di->dwarf_path = f.path;
			if (f.source == DEBUGFILE_DEBUGINFOD
				    ? asprintf(&di->desc, "DWARF from %s (debuginfod %s)", f.path,
					       debuginfod__urls()) < 0
				    : asprintf(&di->desc, "DWARF from %s (%s)", f.path,
					       debugfile_source__name(f.source)) < 0)
				di->desc = NULL;
			goto found;
		}
	}
	di->fetching = err == -EAGAIN;
	if (debugdata) {
		di->kind = DEBUGINFO_SYMBOLS_ONLY;
		di->desc = strdup(di->fetching ? "symbols only (.gnu_debugdata), DWARF being fetched "
						 "(debuginfod)"
					       : "symbols only (.gnu_debugdata), no DWARF");
	} else {
		di->kind = DEBUGINFO_NONE;
		di->desc = strdup(di->fetching ? "no DWARF yet (being fetched from debuginfod)"
					       : "no DWARF");
	}
	return di->desc ? 0 : -ENOMEM;
found:
	di->kind = DEBUGINFO_DWARF;
	check_alt(di);
	return di->desc && di->dwarf_path ? 0 : -ENOMEM;
}

struct debuginfo *debuginfo__open(const char *path)
{
	return debuginfo__open_opts(path, NULL);
}

struct debuginfo *debuginfo__open_opts(const char *path, const struct debuginfo_opts *opts)
{
	struct debuginfo *di = calloc(1, sizeof(*di));
	int err = 0;

	if (!di) {
		errno = ENOMEM;
		return NULL;
	}
	di->fd = di->dfd = -1;
	elf_version(EV_CURRENT);
	di->path = strdup(path);
	di->arena = ctype_arena__new();
	if (!di->path || !di->arena) {
		err = -ENOMEM;
		goto cleanup;
	}
	di->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (di->fd < 0) {
		err = -errno;
		goto cleanup;
	}
	di->elf = elf_begin(di->fd, ELF_C_READ_MMAP, NULL);
	if (!di->elf || elf_kind(di->elf) != ELF_K_ELF || gelf_getclass(di->elf) != ELFCLASS64) {
		err = -ENOEXEC;
		goto cleanup;
	}
	di->void_type = ctype__new(di->arena, CTYPE_VOID, "void", 0, 1);
	if (!di->void_type) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = find_dwarf(di, opts);
	if (err)
		goto cleanup;
	log_debug("%s: %s", path, di->desc);
	return di;
cleanup:
	debuginfo__free(di);
	errno = -err;
	return NULL;
}

void debuginfo__free(struct debuginfo *di)
{
	if (!di)
		return;
	free(di->fresh.v);
	free(di->aliases.v);
	free(di->cu_ranges);
	dtype__free_defs(di);
	free(di->slots);
	if (di->cfi_eh)
		dwarf_cfi_end(di->cfi_eh);
	if (di->dwarf)
		dwarf_end(di->dwarf);
	if (di->delf)
		elf_end(di->delf);
	if (di->dfd >= 0)
		close(di->dfd);
	if (di->elf)
		elf_end(di->elf);
	if (di->fd >= 0)
		close(di->fd);
	ctype_arena__put(di->arena);
	free(di->desc);
	free(di->dwarf_path);
	free(di->path);
	free(di);
}

bool debuginfo__unit_die(struct debuginfo *di, Dwarf_Die *cu)
{
	Dwarf_Die sub;
	Dwarf_Attribute a;
	uint8_t type;

	if (dwarf_cu_info(cu->cu, NULL, &type, NULL, &sub, NULL, NULL, NULL) != 0 ||
	    type != DW_UT_skeleton)
		return true;
	if (dwarf_tag(&sub) == DW_TAG_compile_unit) {
		*cu = sub;
		return true;
	}
	/* The .dwo was not found (libdw looks beside the DWARF file, then
	 * under DW_AT_comp_dir; 0.188 reads no .dwp): say so once, not a
	 * silently untyped trace. */
	if (di && !di->dwo_missing_said && first_warning("dwo", di->path)) {
		const char *dwo = dwarf_formstring(dwarf_attr(cu, DW_AT_dwo_name, &a) ?:
						   dwarf_attr(cu, DW_AT_GNU_dwo_name, &a));

		di->dwo_missing_said = true;
		log_warn("%s: split DWARF (-gsplit-dwarf) whose %s was not found: "
			 "its functions untyped, its lines without locals",
			 di->path, dwo ? dwo : ".dwo file");
	}
	return false;
}

struct cu_range {
	uint64_t lo, hi;   /* [lo, hi) */
	Dwarf_Off die_off; /* the CU's DIE */
};

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int debuginfo__each_cu(struct debuginfo *di, bool split, int (*fn)(Dwarf_Die *cu, void *arg),
		       void *arg)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int r = 0;

	while (!r && di->dwarf && dwarf_nextcu(di->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(di->dwarf, off + hsize, &cu) &&
		    (!split || debuginfo__unit_die(di, &cu)))
			r = fn(&cu, arg);
		off = next;
	}
	return r;
}

struct ranges_build {
	struct debuginfo *di;
	size_t cap;
};

/* CU's ranges into the index (a CU without code has none); out of memory,
 * the walk stops and lookups past the index fail, as with no index. */
static int cu_ranges_add(Dwarf_Die *cu, void *arg)
{
	struct ranges_build *b = arg;
	struct debuginfo *di = b->di;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t at = 0;

	while ((at = dwarf_ranges(cu, at, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (GROW(di->cu_ranges, di->n_cu_ranges, b->cap, 64))
			return -ENOMEM;
		di->cu_ranges[di->n_cu_ranges++] =
			(struct cu_range){ .lo = lo, .hi = hi, .die_off = dwarf_dieoffset(cu) };
	}
	return 0;
}

static void cu_ranges_build(struct debuginfo *di)
{
	struct ranges_build b = { .di = di };

	di->cu_ranges_built = true;
	debuginfo__each_cu(di, false, cu_ranges_add, &b);
	if (di->n_cu_ranges)
		qsort(di->cu_ranges, di->n_cu_ranges, sizeof(*di->cu_ranges), cu_range_cmp);
}

bool debuginfo__cu_at(struct debuginfo *di, uint64_t addr, Dwarf_Die *cu)
{
	size_t lo = 0, hi;

	if (!di || !di->dwarf)
		return false;
	/* .debug_aranges may be incomplete (assembler objects): its answer
	 * is checked against the CU's own ranges. */
	if (dwarf_addrdie(di->dwarf, addr, cu) && dwarf_haspc(cu, addr) > 0)
		return debuginfo__unit_die(di, cu);
	if (!di->cu_ranges_built)
		cu_ranges_build(di);
	/* The first range starting above ADDR; the one holding it is before. */
	hi = di->n_cu_ranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (di->cu_ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* CUs do not overlap, but a few ranges back cost nothing to check. */
	for (size_t k = lo, seen = 0; k-- > 0 && seen < 8; seen++)
		if (addr < di->cu_ranges[k].hi)
			return dwarf_offdie(di->dwarf, di->cu_ranges[k].die_off, cu) &&
			       debuginfo__unit_die(di, cu);
	return false;
}

struct Dwarf *debuginfo__dwarf(struct debuginfo *di)
{
	return di ? di->dwarf : NULL;
}

enum debuginfo_kind debuginfo__kind(const struct debuginfo *di)
{
	return di->kind;
}

bool debuginfo__fetching(const struct debuginfo *di)
{
	return di->fetching;
}

const char *debuginfo__dwarf_path(const struct debuginfo *di)
{
	return di->dwarf_path;
}

const char *debuginfo__describe(const struct debuginfo *di)
{
	return di->desc ? di->desc : "no DWARF";
}

struct find_name_arg {
	const char *name;
	uint64_t addr;
	bool found;
};

static int find_name_cb(Dwarf_Die *die, void *arg)
{
	struct find_name_arg *f = arg;
	const char *name = dwarf_diename(die);
	Dwarf_Addr a;

	if (name && !strcmp(name, f->name) && dwarf_lowpc(die, &a) == 0) {
		f->addr = a;
		f->found = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

static int find_name_in_cu(Dwarf_Die *cu, void *arg)
{
	struct find_name_arg *f = arg;

	dwarf_getfuncs(cu, find_name_cb, f, 0);
	return f->found;
}

int debuginfo__func_addr(struct debuginfo *di, const char *name, uint64_t *addr)
{
	struct find_name_arg f = { .name = name };

	if (di->kind != DEBUGINFO_DWARF)
		return -ENODATA;
	debuginfo__each_cu(di, true, find_name_in_cu, &f);
	if (!f.found)
		return -ENOENT;
	*addr = f.addr;
	return 0;
}

char *debuginfo__build_id(const char *path)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *id;
	char *out = NULL;
	Elf *elf = NULL;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = elf && elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, (const void **)&id) : -1;
	if (n > 0 && (out = malloc(2 * (size_t)n + 1))) {
		for (ssize_t i = 0; i < n; i++) {
			out[2 * i] = hex[id[i] >> 4];
			out[2 * i + 1] = hex[id[i] & 15];
		}
		out[2 * n] = '\0';
	}
	elf_end(elf);
	close(fd);
	return out;
}

int debuginfo__body_start(struct debuginfo *di, uint64_t func_addr, uint64_t *pc,
			  uint8_t *slot_reg, int64_t *slot_off)
{
	Dwarf_Addr lo, hi, best = UINT64_MAX;
	Dwarf_Die func, cu;
	Dwarf_Lines *lines;
	size_t n;
	uint8_t reg;
	int64_t off;

	if (di->kind != DEBUGINFO_DWARF || sig__find_subprogram(di, func_addr, &func) ||
	    dwarf_lowpc(&func, &lo) || dwarf_highpc(&func, &hi) ||
	    !dwarf_diecu(&func, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &n))
		return -ENOENT;
	/* The function's second line-table row: where its body begins, the
	 * prologue having stored the parameters in their frame slots. */
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr a;

		if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a) == 0 && a > lo && a < hi &&
		    a < best)
			best = a;
	}
	if (best == UINT64_MAX || loc__cfa_at(di, best, &reg, &off) ||
	    (reg != DREG_RSP && reg != DREG_RBP) || off < 8 || off - 8 > UINT16_MAX)
		return -ENOENT;
	*pc = best;
	*slot_reg = reg;
	*slot_off = off - 8; /* the return address sits just below the CFA */
	return 0;
}

