// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * debuginfo.c: finding a file's DWARF, building ctype graphs from it, and
 * function signatures with each value's location at the probe address
 * (the rule is in debuginfo.h).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "core/log.h"
#include "dwarf/debuginfo.h"
#include "dwarf/dsb.h"

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define MAX_TYPE_DEPTH 48

/* DIE (by its address in the mapped section: unique across sections and
 * type units) -> type node. */
struct type_slot {
	const void *key;
	struct ctype *type;
};

struct ptr_vec {
	struct ctype **v;
	size_t n, cap;
};

struct debuginfo {
	char *path;
	int fd, dfd;
	Elf *elf;   /* PATH */
	Elf *delf;  /* the separate debug file, or NULL */
	Dwarf *dwarf;
	Dwarf_CFI *cfi_eh;     /* .eh_frame of PATH, owned */
	bool cfi_eh_tried;
	enum debuginfo_kind kind;
	char *dwarf_path;
	char *desc;
	struct ctype_arena *arena;
	struct type_slot *slots;
	size_t n_slots, cap_slots; /* cap: power of 2 */
	struct ctype *void_type;
	struct ptr_vec fresh;   /* concrete nodes built since the last finalize */
	struct ptr_vec aliases; /* alias nodes waiting for their fields */
};

/* ------------------------------------------------------------------ */
/* Finding the DWARF                                                   */

struct elf_scan {
	bool debug_info;    /* .debug_info (or .zdebug_info) with contents */
	bool gnu_debugdata;
};

static void scan_sections(Elf *elf, struct elf_scan *s)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	memset(s, 0, sizeof(*s));
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if ((!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")) &&
		    sh.sh_type != SHT_NOBITS && sh.sh_size > 0)
			s->debug_info = true;
		else if (!strcmp(name, ".gnu_debugdata") && sh.sh_type != SHT_NOBITS &&
			 sh.sh_size > 0)
			s->gnu_debugdata = true;
	}
}

static int crc_file(int fd, uint32_t *out)
{
	struct stat st;
	void *map;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (st.st_size == 0) {
		*out = 0;
		return 0;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	/* .gnu_debuglink's CRC is the usual CRC-32 (zlib's), seed 0; crc32()
	 * takes a uInt length: feed it in chunks. */
	uLong crc = crc32(0L, Z_NULL, 0);
	const unsigned char *p = map;
	size_t left = (size_t)st.st_size;

	while (left) {
		uInt n = left > (1u << 30) ? (1u << 30) : (uInt)left;

		crc = crc32(crc, p, n);
		p += n;
		left -= n;
	}
	munmap(map, (size_t)st.st_size);
	*out = (uint32_t)crc;
	return 0;
}

/* Use CAND as the debug file when it has DWARF and matches: same build-id
 * when both have one, else the debuglink CRC (when CHECK_CRC). */
static bool try_debug_file(struct debuginfo *di, const char *cand, const void *bid,
			   ssize_t bid_len, bool check_crc, uint32_t crc, const char *how)
{
	int fd = open(cand, O_RDONLY | O_CLOEXEC);
	Elf *elf = NULL;
	struct elf_scan sc;
	const void *dbid;
	ssize_t dbid_len;
	Dwarf *dw;

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto reject;
	scan_sections(elf, &sc);
	if (!sc.debug_info) {
		log_debug("%s: no .debug_info, not used", cand);
		goto reject;
	}
	dbid_len = dwelf_elf_gnu_build_id(elf, &dbid);
	if (bid_len > 0 && dbid_len > 0) {
		if (bid_len != dbid_len || memcmp(bid, dbid, (size_t)bid_len) != 0) {
			log_debug("%s: build-id differs from %s, not used", cand, di->path);
			goto reject;
		}
	} else if (check_crc) {
		uint32_t c = 0;

		if (crc_file(fd, &c) != 0 || c != crc) {
			log_debug("%s: .gnu_debuglink CRC differs, not used", cand);
			goto reject;
		}
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		log_debug("%s: %s", cand, dwarf_errmsg(-1));
		goto reject;
	}
	di->dwarf = dw;
	di->delf = elf;
	di->dfd = fd;
	di->dwarf_path = strdup(cand);
	if (asprintf(&di->desc, "DWARF from %s (%s)", cand, how) < 0)
		di->desc = NULL;
	return true;
reject:
	if (elf)
		elf_end(elf);
	close(fd);
	return false;
}

static bool find_by_build_id(struct debuginfo *di, const char *root)
{
	const unsigned char *bid;
	ssize_t n = dwelf_elf_gnu_build_id(di->elf, (const void **)&bid);
	struct strbuf p = { 0 };
	bool ok = false;

	if (n <= 1)
		return false;
	if (strbuf__printf(&p, "%s/.build-id/%02x/", root, bid[0]))
		goto out;
	for (ssize_t i = 1; i < n; i++)
		if (strbuf__printf(&p, "%02x", bid[i]))
			goto out;
	if (strbuf__puts(&p, ".debug"))
		goto out;
	ok = try_debug_file(di, p.buf, bid, n, false, 0, "build-id");
out:
	free(p.buf);
	return ok;
}

static bool find_by_debuglink(struct debuginfo *di, const char *root, const char *link_dir)
{
	GElf_Word crc;
	const char *name = dwelf_elf_gnu_debuglink(di->elf, &crc);
	const void *bid;
	ssize_t bid_len = dwelf_elf_gnu_build_id(di->elf, &bid);
	char *copy = NULL, *cand = NULL;
	const char *dir;
	bool ok = false;

	if (!name || !*name)
		return false;
	if (link_dir) {
		dir = link_dir;
	} else {
		copy = strdup(di->path);
		if (!copy)
			return false;
		dir = dirname(copy);
	}
	const char *fmts[] = { "%s/%s", "%s/.debug/%s", NULL };
	for (int i = 0; !ok && fmts[i]; i++) {
		if (asprintf(&cand, fmts[i], dir, name) < 0)
			goto out;
		ok = try_debug_file(di, cand, bid, bid_len, true, crc, ".gnu_debuglink");
		free(cand);
		cand = NULL;
	}
	if (!ok && dir[0] == '/') {
		if (asprintf(&cand, "%s%s/%s", root, dir, name) < 0)
			goto out;
		ok = try_debug_file(di, cand, bid, bid_len, true, crc, ".gnu_debuglink");
		free(cand);
	}
out:
	free(copy);
	return ok;
}

static int find_dwarf(struct debuginfo *di, const struct debuginfo_opts *o)
{
	const char *root = o && o->debug_root ? o->debug_root : DEFAULT_DEBUG_ROOT;
	struct elf_scan sc;

	scan_sections(di->elf, &sc);
	if (sc.debug_info) {
		di->dwarf = dwarf_begin_elf(di->elf, DWARF_C_READ, NULL);
		if (di->dwarf) {
			di->dwarf_path = strdup(di->path);
			if (asprintf(&di->desc, "DWARF in %s", di->path) < 0)
				di->desc = NULL;
			goto found;
		}
		log_debug("%s: %s", di->path, dwarf_errmsg(-1));
	}
	if (find_by_build_id(di, root) || find_by_debuglink(di, root, o ? o->link_dir : NULL))
		goto found;
	if (sc.gnu_debugdata) {
		di->kind = DEBUGINFO_SYMBOLS_ONLY;
		di->desc = strdup("symbols only (.gnu_debugdata), no DWARF");
	} else {
		di->kind = DEBUGINFO_NONE;
		di->desc = strdup("no DWARF");
	}
	return di->desc ? 0 : -ENOMEM;
found:
	di->kind = DEBUGINFO_DWARF;
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

struct Dwarf *debuginfo__dwarf(struct debuginfo *di)
{
	return di ? di->dwarf : NULL;
}

enum debuginfo_kind debuginfo__kind(const struct debuginfo *di)
{
	return di->kind;
}

const char *debuginfo__dwarf_path(const struct debuginfo *di)
{
	return di->dwarf_path;
}

const char *debuginfo__describe(const struct debuginfo *di)
{
	return di->desc ? di->desc : "no DWARF";
}

/* ------------------------------------------------------------------ */
/* Types                                                               */

static int vec_push(struct ptr_vec *v, struct ctype *t)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 32;
		struct ctype **p = realloc(v->v, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = t;
	return 0;
}

static size_t slot_hash(const void *key, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 20) & (cap - 1);
}

static struct ctype *cache_get(struct debuginfo *di, const void *key)
{
	if (!di->cap_slots)
		return NULL;
	for (size_t i = slot_hash(key, di->cap_slots);; i = (i + 1) & (di->cap_slots - 1)) {
		if (!di->slots[i].key)
			return NULL;
		if (di->slots[i].key == key)
			return di->slots[i].type;
	}
}

static int cache_put(struct debuginfo *di, const void *key, struct ctype *t)
{
	if ((di->n_slots + 1) * 2 > di->cap_slots) {
		size_t cap = di->cap_slots ? di->cap_slots * 2 : 256;
		struct type_slot *s = calloc(cap, sizeof(*s));

		if (!s)
			return -ENOMEM;
		for (size_t i = 0; i < di->cap_slots; i++) {
			size_t j;

			if (!di->slots[i].key)
				continue;
			for (j = slot_hash(di->slots[i].key, cap); s[j].key; j = (j + 1) & (cap - 1))
				;
			s[j] = di->slots[i];
		}
		free(di->slots);
		di->slots = s;
		di->cap_slots = cap;
	}
	size_t i = slot_hash(key, di->cap_slots);

	while (di->slots[i].key)
		i = (i + 1) & (di->cap_slots - 1);
	di->slots[i].key = key;
	di->slots[i].type = t;
	di->n_slots++;
	return 0;
}

static bool die_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

static bool is_cxx(Dwarf_Die *die)
{
	Dwarf_Die cu;
	int lang;

	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return false;
	lang = dwarf_srclang(&cu);
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

static bool is_qualifier(int tag)
{
	return tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
	       tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type;
}

/* The tag under any qualifiers (not typedefs: a typedef is a name, which
 * is what C declarator syntax cares about). */
static int tag_under_quals(Dwarf_Die *die)
{
	Dwarf_Die cur = *die, next;

	for (int i = 0; i < 8; i++) {
		int tag = dwarf_tag(&cur);

		if (!is_qualifier(tag))
			return tag;
		if (!die_type(&cur, &next))
			return DW_TAG_base_type; /* const void */
		cur = next;
	}
	return DW_TAG_base_type;
}

static int dname(Dwarf_Die *die, const char *inner, struct strbuf *out, bool cxx, int depth);
static int dname_ptr_paren(Dwarf_Die *die, const char *sym, const char *inner,
			   struct strbuf *out, bool cxx, int depth);

static int dname_inner(Dwarf_Die *die, const char *pre, const char *inner, const char *post,
		       struct strbuf *out, bool cxx, int depth)
{
	struct strbuf s = { 0 };
	Dwarf_Die t;
	int err;

	err = strbuf__puts(&s, pre);
	if (!err)
		err = strbuf__puts(&s, inner);
	if (!err)
		err = strbuf__puts(&s, post);
	if (!err)
		err = dname(die_type(die, &t) ? &t : NULL, s.buf, out, cxx, depth + 1);
	free(s.buf);
	return err;
}

/* C declarator syntax: the name of type DIE wrapped around INNER ("" for
 * an abstract declarator): "char *", "int (*)[3]", "char *const". */
static int dname(Dwarf_Die *die, const char *inner, struct strbuf *out, bool cxx, int depth)
{
	const char *name, *base = NULL, *prefix = "";
	struct strbuf tmp = { 0 };
	Dwarf_Die t, child;
	int tag, err = 0;

	if (depth > 32)
		return strbuf__puts(out, "?");
	if (!die) {
		base = "void";
		goto simple;
	}
	tag = dwarf_tag(die);
	name = dwarf_diename(die);
	switch (tag) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		const char *sym = tag == DW_TAG_pointer_type ? "*" :
				  tag == DW_TAG_reference_type ? "&" : "&&";
		int ttag = die_type(die, &t) ? tag_under_quals(&t) : DW_TAG_base_type;

		if (ttag == DW_TAG_array_type || ttag == DW_TAG_subroutine_type)
			return dname_ptr_paren(die, sym, inner, out, cxx, depth);
		return dname_inner(die, sym, inner, "", out, cxx, depth);
	}
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type: {
		const char *q = tag == DW_TAG_const_type ? "const" :
				tag == DW_TAG_volatile_type ? "volatile" :
				tag == DW_TAG_restrict_type ? "restrict" : "_Atomic";
		int ttag = die_type(die, &t) ? tag_under_quals(&t) : DW_TAG_base_type;

		if (ttag == DW_TAG_pointer_type || ttag == DW_TAG_reference_type ||
		    ttag == DW_TAG_rvalue_reference_type)
			return dname_inner(die, q, *inner ? " " : "", inner, out, cxx, depth);
		err = strbuf__puts(out, q);
		if (!err)
			err = strbuf__putc(out, ' ');
		if (!err)
			err = dname(die_type(die, &t) ? &t : NULL, inner, out, cxx, depth + 1);
		return err;
	}
	case DW_TAG_array_type:
		err = strbuf__puts(&tmp, inner);
		if (dwarf_child(die, &child) == 0) {
			do {
				Dwarf_Word n = 0;
				Dwarf_Attribute a;

				if (dwarf_tag(&child) != DW_TAG_subrange_type)
					continue;
				if (dwarf_attr(&child, DW_AT_count, &a) && dwarf_formudata(&a, &n) == 0)
					err = err ?: strbuf__printf(&tmp, "[%llu]", (unsigned long long)n);
				else if (dwarf_attr(&child, DW_AT_upper_bound, &a) &&
					 dwarf_formudata(&a, &n) == 0)
					err = err ?: strbuf__printf(&tmp, "[%llu]", (unsigned long long)n + 1);
				else
					err = err ?: strbuf__puts(&tmp, "[]");
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		if (!err)
			err = dname(die_type(die, &t) ? &t : NULL, tmp.buf ? tmp.buf : "", out, cxx,
				    depth + 1);
		free(tmp.buf);
		return err;
	case DW_TAG_subroutine_type: {
		bool first = true, proto;
		Dwarf_Attribute a;

		err = strbuf__puts(&tmp, inner);
		err = err ?: strbuf__putc(&tmp, '(');
		proto = dwarf_attr(die, DW_AT_prototyped, &a) != NULL;
		if (dwarf_child(die, &child) == 0) {
			do {
				int ctag = dwarf_tag(&child);

				if (ctag == DW_TAG_formal_parameter) {
					err = err ?: strbuf__puts(&tmp, first ? "" : ", ");
					err = err ?: dname(die_type(&child, &t) ? &t : NULL, "", &tmp, cxx,
							   depth + 1);
					first = false;
				} else if (ctag == DW_TAG_unspecified_parameters) {
					err = err ?: strbuf__puts(&tmp, first ? "..." : ", ...");
					first = false;
				}
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		if (first && proto && !cxx)
			err = err ?: strbuf__puts(&tmp, "void");
		err = err ?: strbuf__putc(&tmp, ')');
		if (!err)
			err = dname(die_type(die, &t) ? &t : NULL, tmp.buf, out, cxx, depth + 1);
		free(tmp.buf);
		return err;
	}
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
		if (!cxx)
			prefix = tag == DW_TAG_union_type ? "union " :
				 tag == DW_TAG_enumeration_type ? "enum " :
				 tag == DW_TAG_class_type ? "class " : "struct ";
		base = name ? name : "{...}";
		if (cxx && !name)
			prefix = tag == DW_TAG_union_type ? "union " :
				 tag == DW_TAG_enumeration_type ? "enum " : "struct ";
		break;
	default:
		base = name ? name : "?";
		break;
	}
simple:
	err = strbuf__puts(out, prefix);
	err = err ?: strbuf__puts(out, base);
	if (!err && *inner) {
		/* "char *", "int [3]", "void (*)(int)"; no space before "&" in C++
		 * style is not worth a special case. */
		err = strbuf__putc(out, ' ');
		err = err ?: strbuf__puts(out, inner);
	}
	return err;
}

/* Pointer to array or function: "(" sym inner ")" around the inner
 * declarator.  Split out of dname() to keep the recursion readable. */
static int dname_ptr_paren(Dwarf_Die *die, const char *sym, const char *inner,
			   struct strbuf *out, bool cxx, int depth)
{
	struct strbuf s = { 0 };
	Dwarf_Die t;
	int err;

	err = strbuf__putc(&s, '(');
	err = err ?: strbuf__puts(&s, sym);
	err = err ?: strbuf__puts(&s, inner);
	err = err ?: strbuf__putc(&s, ')');
	if (!err)
		err = dname(die_type(die, &t) ? &t : NULL, s.buf, out, cxx, depth + 1);
	free(s.buf);
	return err;
}

static char *type_name(struct debuginfo *di, Dwarf_Die *die)
{
	struct strbuf s = { 0 };
	char *r;

	if (dname(die, "", &s, is_cxx(die), 0) || !s.buf) {
		free(s.buf);
		return NULL;
	}
	r = ctype_arena__strdup(di->arena, s.buf);
	free(s.buf);
	return r;
}

static uint32_t die_size(Dwarf_Die *die, uint32_t dflt)
{
	Dwarf_Word sz;

	if (dwarf_aggregate_size(die, &sz) == 0 && sz <= UINT32_MAX)
		return (uint32_t)sz;
	return dflt;
}

static bool attr_udata(Dwarf_Die *die, unsigned name, Dwarf_Word *v)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, name, &a) && dwarf_formudata(&a, v) == 0;
}

static const struct ctype *type_of(struct debuginfo *di, Dwarf_Die *die, int depth);

static struct ctype *new_node(struct debuginfo *di, Dwarf_Die *die, enum ctype_kind kind,
			      uint32_t size, uint32_t align)
{
	struct ctype *t = ctype_arena__alloc(di->arena, sizeof(*t));

	if (!t)
		return NULL;
	t->kind = kind;
	t->name = type_name(di, die);
	t->size = size;
	t->align = align ? align : 1;
	if (!t->name || cache_put(di, die->addr, t) || vec_push(&di->fresh, t))
		return NULL;
	return t;
}

static int member_offset(Dwarf_Die *m, Dwarf_Word *off)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	*off = 0;
	if (!dwarf_attr(m, DW_AT_data_member_location, &a))
		return 0; /* union members */
	if (dwarf_formudata(&a, off) == 0)
		return 0;
	/* DWARF 2: an expression, DW_OP_plus_uconst N */
	if (dwarf_getlocation(&a, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst) {
		*off = ops[0].number;
		return 0;
	}
	return -ENOTSUP;
}

static int build_members(struct debuginfo *di, Dwarf_Die *die, struct ctype *t, int depth)
{
	Dwarf_Die child;
	size_t n = 0, i = 0;
	struct ctype_member *m;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Attribute a;

		if ((tag == DW_TAG_member && !dwarf_attr(&child, DW_AT_declaration, &a) &&
		     !dwarf_attr(&child, DW_AT_external, &a)) ||
		    tag == DW_TAG_inheritance)
			n++;
	} while (dwarf_siblingof(&child, &child) == 0);
	if (!n)
		return 0;
	m = ctype_arena__alloc(di->arena, n * sizeof(*m));
	if (!m)
		return -ENOMEM;
	dwarf_child(die, &child);
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Attribute a;
		Dwarf_Die mt;
		Dwarf_Word off, bits, v;
		const char *name;

		if (!((tag == DW_TAG_member && !dwarf_attr(&child, DW_AT_declaration, &a) &&
		       !dwarf_attr(&child, DW_AT_external, &a)) ||
		      tag == DW_TAG_inheritance))
			continue;
		if (i >= n)
			break;
		name = dwarf_diename(&child);
		m[i].type = type_of(di, die_type(&child, &mt) ? &mt : NULL, depth + 1);
		if (!m[i].type)
			return -ENOMEM;
		if (tag == DW_TAG_inheritance)
			name = m[i].type->name; /* a base class: named after it */
		if (name) {
			m[i].name = ctype_arena__strdup(di->arena, name);
			if (!m[i].name)
				return -ENOMEM;
		}
		if (member_offset(&child, &off) != 0)
			off = 0;
		m[i].offset = (uint32_t)off;
		if (attr_udata(&child, DW_AT_bit_size, &bits) && bits > 0) {
			m[i].bit_size = (uint16_t)bits;
			if (attr_udata(&child, DW_AT_data_bit_offset, &v)) {
				m[i].bit_offset = (uint32_t)v;
			} else if (attr_udata(&child, DW_AT_bit_offset, &v)) {
				/* DWARF 2/3: counted from the most significant bit
				 * of a storage unit of DW_AT_byte_size bytes. */
				Dwarf_Word unit;

				if (!attr_udata(&child, DW_AT_byte_size, &unit))
					unit = die_size(&mt, 4);
				m[i].bit_offset = (uint32_t)(off * 8 + unit * 8 - v - bits);
			} else {
				m[i].bit_offset = (uint32_t)(off * 8);
			}
			m[i].offset = m[i].bit_offset / 8;
		}
		i++;
	} while (dwarf_siblingof(&child, &child) == 0);
	t->members = m;
	t->n_members = i;
	return 0;
}

static int build_enumerators(struct debuginfo *di, Dwarf_Die *die, struct ctype *t)
{
	Dwarf_Die child;
	size_t n = 0, i = 0;
	struct ctype_enumerator *e;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do
		n += dwarf_tag(&child) == DW_TAG_enumerator;
	while (dwarf_siblingof(&child, &child) == 0);
	if (!n)
		return 0;
	e = ctype_arena__alloc(di->arena, n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	dwarf_child(die, &child);
	do {
		Dwarf_Attribute a;
		Dwarf_Sword sv = 0;
		Dwarf_Word uv = 0;
		int64_t v;
		const char *name;

		if (dwarf_tag(&child) != DW_TAG_enumerator || i >= n)
			continue;
		if (!dwarf_attr(&child, DW_AT_const_value, &a))
			continue;
		if (t->is_signed) {
			if (dwarf_formsdata(&a, &sv) != 0)
				continue;
			v = sv;
			/* some producers store -1 of an int enum as data4
			 * 0xffffffff: sign-extend from the enum's width */
			if (t->size && t->size < 8) {
				unsigned sh = 64 - t->size * 8;

				v = (int64_t)((uint64_t)v << sh) >> sh;
			}
		} else {
			if (dwarf_formudata(&a, &uv) != 0)
				continue;
			v = (int64_t)uv;
		}
		name = dwarf_diename(&child);
		e[i].name = ctype_arena__strdup(di->arena, name ? name : "?");
		if (!e[i].name)
			return -ENOMEM;
		e[i].value = v;
		i++;
	} while (dwarf_siblingof(&child, &child) == 0);
	t->enumerators = e;
	t->n_enumerators = i;
	return 0;
}

/* A C++ class that is not trivially copyable by its own declarations
 * (members and bases are checked in finalize): a user-declared destructor,
 * copy or move constructor, a virtual function or a virtual base.  What
 * gdb checks when DW_AT_calling_convention is absent (gcc 12 omits it). */
static bool cxx_own_nontrivial(Dwarf_Die *cls)
{
	const char *cname = dwarf_diename(cls);
	Dwarf_Die child;

	if (dwarf_child(cls, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Attribute a;
		Dwarf_Word w;
		const char *name;

		if (tag == DW_TAG_inheritance) {
			if (attr_udata(&child, DW_AT_virtuality, &w) && w)
				return true;
			continue;
		}
		if (tag != DW_TAG_subprogram)
			continue;
		if (attr_udata(&child, DW_AT_virtuality, &w) && w)
			return true;
		if (dwarf_attr(&child, DW_AT_artificial, &a) ||
		    (attr_udata(&child, DW_AT_defaulted, &w) && w == DW_DEFAULTED_in_class))
			continue;
		name = dwarf_diename(&child);
		if (!name)
			continue;
		if (name[0] == '~')
			return true;
		if (cname && !strcmp(name, cname)) {
			/* a constructor whose first parameter is a reference
			 * to the class: copy or move */
			Dwarf_Die p, t;

			if (dwarf_child(&child, &p) != 0)
				continue;
			do {
				if (dwarf_tag(&p) != DW_TAG_formal_parameter ||
				    dwarf_attr(&p, DW_AT_artificial, &a))
					continue;
				if (die_type(&p, &t) && (dwarf_tag(&t) == DW_TAG_reference_type ||
							 dwarf_tag(&t) == DW_TAG_rvalue_reference_type)) {
					Dwarf_Die c = t;

					for (int i = 0; i < 8 && die_type(&c, &c); i++) {
						const char *n = dwarf_diename(&c);

						if ((dwarf_tag(&c) == DW_TAG_structure_type ||
						     dwarf_tag(&c) == DW_TAG_class_type) &&
						    n && !strcmp(n, cname))
							return true;
					}
				}
				break;
			} while (dwarf_siblingof(&p, &p) == 0);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static bool enum_signed(Dwarf_Die *die)
{
	Dwarf_Die ut, child;
	Dwarf_Word enc;

	/* The underlying type when given (DWARF 3+ producers do). */
	if (die_type(die, &ut)) {
		for (int i = 0; i < 8 && dwarf_tag(&ut) != DW_TAG_base_type; i++)
			if (!die_type(&ut, &ut))
				break;
		if (attr_udata(&ut, DW_AT_encoding, &enc))
			return enc == DW_ATE_signed || enc == DW_ATE_signed_char;
	}
	/* Else: signed when an enumerator is stored as a negative sdata. */
	if (dwarf_child(die, &child) == 0) {
		do {
			Dwarf_Attribute a;

			if (dwarf_tag(&child) == DW_TAG_enumerator &&
			    dwarf_attr(&child, DW_AT_const_value, &a) &&
			    dwarf_whatform(&a) == DW_FORM_sdata) {
				Dwarf_Sword v;

				if (dwarf_formsdata(&a, &v) == 0 && v < 0)
					return true;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	return false;
}

static const struct ctype *build_array(struct debuginfo *di, Dwarf_Die *die, int depth)
{
	uint32_t counts[16];
	int ndim = 0;
	Dwarf_Die child, et;
	struct ctype *outer;
	const struct ctype *elem, *t;

	if (dwarf_child(die, &child) == 0) {
		do {
			Dwarf_Word n = 0, lo = 0;
			Dwarf_Attribute a;

			if (dwarf_tag(&child) != DW_TAG_subrange_type || ndim >= 16)
				continue;
			if (dwarf_attr(&child, DW_AT_count, &a) && dwarf_formudata(&a, &n) == 0) {
				/* n */
			} else if (dwarf_attr(&child, DW_AT_upper_bound, &a) &&
				   dwarf_formudata(&a, &n) == 0) {
				if (attr_udata(&child, DW_AT_lower_bound, &lo) && lo <= n)
					n -= lo;
				n += 1;
			} else {
				n = 0; /* flexible or variable length */
			}
			counts[ndim++] = n > UINT32_MAX ? 0 : (uint32_t)n;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	if (!ndim)
		counts[ndim++] = 0;
	/* The outer node first, so a recursive reference finds it. */
	outer = new_node(di, die, CTYPE_ARRAY, 0, 1);
	if (!outer)
		return NULL;
	elem = type_of(di, die_type(die, &et) ? &et : NULL, depth + 1);
	if (!elem)
		return NULL;
	t = elem;
	for (int k = ndim - 1; k >= 1; k--) {
		struct ctype *a = ctype__new_array(di->arena, t, counts[k]);

		if (!a || vec_push(&di->fresh, a))
			return NULL;
		t = a;
	}
	outer->target = t;
	outer->count = counts[0];
	outer->incomplete = counts[0] == 0;
	return outer;
}

static const struct ctype *type_of(struct debuginfo *di, Dwarf_Die *die, int depth)
{
	struct ctype *t;
	Dwarf_Die target;
	Dwarf_Word enc = 0, cc;
	Dwarf_Attribute a;
	const char *name;
	uint32_t size;
	int tag;

	if (!die)
		return di->void_type;
	t = cache_get(di, die->addr);
	if (t)
		return t;
	if (depth > MAX_TYPE_DEPTH)
		return di->void_type;
	tag = dwarf_tag(die);
	name = dwarf_diename(die);
	switch (tag) {
	case DW_TAG_base_type: {
		enum ctype_kind kind = CTYPE_UNKNOWN;
		bool sgn = false, x87 = false, cplx = false;

		size = die_size(die, 0);
		attr_udata(die, DW_AT_encoding, &enc);
		switch (enc) {
		case DW_ATE_boolean:
			kind = CTYPE_BOOL;
			break;
		case DW_ATE_signed:
			kind = CTYPE_INT;
			sgn = true;
			break;
		case DW_ATE_unsigned:
		case DW_ATE_UTF:
			kind = CTYPE_UINT;
			break;
		case DW_ATE_signed_char:
		case DW_ATE_unsigned_char:
			sgn = enc == DW_ATE_signed_char;
			kind = name && !strcmp(name, "char") ? CTYPE_CHAR : sgn ? CTYPE_INT : CTYPE_UINT;
			break;
		case DW_ATE_float:
			kind = CTYPE_FLOAT;
			x87 = size == 16 && name && strstr(name, "long double");
			break;
		case DW_ATE_complex_float:
			kind = CTYPE_FLOAT;
			cplx = true;
			x87 = name && strstr(name, "long double");
			break;
		default:
			break;
		}
		t = new_node(di, die, kind, size, size > 16 ? 16 : size);
		if (!t)
			return NULL;
		t->is_signed = sgn;
		t->is_x87 = x87;
		t->is_complex = cplx;
		if (cplx)
			t->align = size / 2 > 16 ? 16 : size / 2;
		return t;
	}
	case DW_TAG_typedef:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		/* Filled from the type it names once that is complete
		 * (finalize): it may be under construction right now. */
		t = ctype_arena__alloc(di->arena, sizeof(*t));
		if (!t)
			return NULL;
		t->name = type_name(di, die);
		if (!t->name || cache_put(di, die->addr, t) || vec_push(&di->aliases, t))
			return NULL;
		t->alias_of = type_of(di, die_type(die, &target) ? &target : NULL, depth + 1);
		return t->alias_of ? t : NULL;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		t = new_node(di, die, CTYPE_POINTER, die_size(die, 8), 8);
		if (!t)
			return NULL;
		t->target = type_of(di, die_type(die, &target) ? &target : NULL, depth + 1);
		return t->target ? t : NULL;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		t = new_node(di, die, tag == DW_TAG_union_type ? CTYPE_UNION : CTYPE_STRUCT,
			     die_size(die, 0), 0);
		if (!t)
			return NULL;
		t->incomplete = dwarf_attr(die, DW_AT_declaration, &a) != NULL;
		if (attr_udata(die, DW_AT_calling_convention, &cc))
			t->by_reference = cc == DW_CC_pass_by_reference;
		else if (is_cxx(die))
			t->by_reference = cxx_own_nontrivial(die);
		if (attr_udata(die, DW_AT_alignment, &cc) && cc && cc <= 4096)
			t->align = (uint32_t)cc; /* kept by finalize */
		return build_members(di, die, t, depth) ? NULL : t;
	case DW_TAG_enumeration_type:
		size = die_size(die, 4);
		t = new_node(di, die, CTYPE_ENUM, size, size);
		if (!t)
			return NULL;
		t->is_signed = enum_signed(die);
		return build_enumerators(di, die, t) ? NULL : t;
	case DW_TAG_array_type:
		return build_array(di, die, depth);
	case DW_TAG_subroutine_type:
		t = new_node(di, die, CTYPE_FUNC, 0, 1);
		if (!t)
			return NULL;
		t->target = type_of(di, die_type(die, &target) ? &target : NULL, depth + 1);
		return t->target ? t : NULL;
	default:
		/* nullptr_t, pointers to members, ...: bytes */
		size = die_size(die, 0);
		return new_node(di, die, CTYPE_UNKNOWN, size, size >= 8 ? 8 : 1);
	}
}

static uint32_t calc_align(const struct ctype *t, int depth)
{
	uint32_t al = 1;

	t = ctype__concrete(t);
	if (!t || depth > MAX_TYPE_DEPTH)
		return 1;
	switch (t->kind) {
	case CTYPE_ARRAY:
		return calc_align(t->target, depth + 1);
	case CTYPE_STRUCT:
	case CTYPE_UNION:
		if (t->align > 1)
			return t->align; /* DW_AT_alignment, or computed before */
		for (size_t i = 0; i < t->n_members; i++) {
			uint32_t m = calc_align(t->members[i].type, depth + 1);

			if (m > al)
				al = m;
		}
		/* A packed struct: its size is no multiple of the members'
		 * alignment. */
		if (t->size && t->size % al)
			al = 1;
		return al;
	default:
		return t->align ? t->align : 1;
	}
}

/* Not trivially copyable: itself, or a member or base by value. */
static bool calc_by_reference(const struct ctype *t, int depth)
{
	t = ctype__concrete(t);
	if (!t || depth > MAX_TYPE_DEPTH)
		return false;
	if (t->kind == CTYPE_ARRAY)
		return calc_by_reference(t->target, depth + 1);
	if (t->kind != CTYPE_STRUCT && t->kind != CTYPE_UNION)
		return false;
	if (t->by_reference)
		return true;
	for (size_t i = 0; i < t->n_members; i++)
		if (calc_by_reference(t->members[i].type, depth + 1))
			return true;
	return false;
}

static uint32_t calc_array_size(struct ctype *t, int depth)
{
	const struct ctype *e = ctype__concrete(t->target);
	uint64_t sz;

	if (!e || depth > MAX_TYPE_DEPTH)
		return 0;
	if (e->kind == CTYPE_ARRAY && e->size == 0 && e->count)
		calc_array_size((struct ctype *)e, depth + 1); /* a node of this batch */
	sz = (uint64_t)e->size * t->count;
	t->size = sz > UINT32_MAX ? 0 : (uint32_t)sz;
	return t->size;
}

/* Complete the nodes built since the last call: array sizes, aggregate
 * alignments, then alias copies. */
static void finalize(struct debuginfo *di)
{
	for (size_t i = 0; i < di->fresh.n; i++) {
		struct ctype *t = di->fresh.v[i];

		if (t->kind == CTYPE_ARRAY)
			calc_array_size(t, 0);
	}
	for (size_t i = 0; i < di->fresh.n; i++) {
		struct ctype *t = di->fresh.v[i];

		if (t->kind == CTYPE_ARRAY || t->kind == CTYPE_STRUCT || t->kind == CTYPE_UNION)
			t->align = calc_align(t, 0);
		if (t->kind == CTYPE_STRUCT || t->kind == CTYPE_UNION)
			t->by_reference = calc_by_reference(t, 0);
	}
	for (size_t i = 0; i < di->aliases.n; i++) {
		struct ctype *a = di->aliases.v[i];
		const struct ctype *c = ctype__concrete(a->alias_of);
		const char *name = a->name;
		const struct ctype *of = a->alias_of;

		if (!c) {
			c = di->void_type;
			of = c;
		}
		*a = *c;
		a->name = name;
		a->alias_of = of;
	}
	di->fresh.n = 0;
	di->aliases.n = 0;
}

/* ------------------------------------------------------------------ */
/* SysV x86-64 classification                                          */

enum abi_cls { AC_NONE = 0, AC_INT, AC_SSE, AC_SSEUP, AC_X87, AC_X87UP, AC_MEM };

static enum abi_cls cls_merge(enum abi_cls a, enum abi_cls b)
{
	if (a == b)
		return a;
	if (a == AC_NONE)
		return b;
	if (b == AC_NONE)
		return a;
	if (a == AC_MEM || b == AC_MEM)
		return AC_MEM;
	if (a == AC_INT || b == AC_INT)
		return AC_INT;
	if (a == AC_X87 || a == AC_X87UP || b == AC_X87 || b == AC_X87UP)
		return AC_MEM;
	return AC_SSE;
}

static void cls_put(enum abi_cls cls[2], uint32_t off, enum abi_cls c)
{
	uint32_t i = off / 8;

	if (i < 2)
		cls[i] = cls_merge(cls[i], c);
	else
		cls[0] = AC_MEM;
}

static void classify_at(const struct ctype *t, uint32_t off, enum abi_cls cls[2], int depth)
{
	t = ctype__concrete(t);
	if (!t || depth > MAX_TYPE_DEPTH) {
		cls[0] = AC_MEM;
		return;
	}
	switch (t->kind) {
	case CTYPE_INT:
	case CTYPE_UINT:
	case CTYPE_CHAR:
	case CTYPE_BOOL:
	case CTYPE_ENUM:
	case CTYPE_POINTER:
		for (uint32_t b = 0; b < t->size; b += 8)
			cls_put(cls, off + b, AC_INT);
		break;
	case CTYPE_FLOAT:
		if (t->is_x87 && !t->is_complex) {
			cls_put(cls, off, AC_X87);
			cls_put(cls, off + 8, AC_X87UP);
		} else if (t->is_complex && t->is_x87) {
			cls[0] = AC_MEM;
		} else if (t->is_complex) {
			/* two parts of size/2 each: float pair in one eightbyte */
			cls_put(cls, off, AC_SSE);
			cls_put(cls, off + t->size / 2, AC_SSE);
		} else if (t->size == 16) {
			cls_put(cls, off, AC_SSE); /* __float128 */
			cls_put(cls, off + 8, AC_SSEUP);
		} else {
			cls_put(cls, off, AC_SSE);
		}
		break;
	case CTYPE_STRUCT:
	case CTYPE_UNION:
		for (size_t i = 0; i < t->n_members; i++) {
			const struct ctype_member *m = &t->members[i];

			if (m->bit_size) {
				cls_put(cls, m->bit_offset / 8, AC_INT);
				continue;
			}
			/* unaligned fields (packed) make the whole thing MEMORY */
			if (m->offset % calc_align(m->type, 0)) {
				cls[0] = AC_MEM;
				return;
			}
			classify_at(m->type, off + m->offset, cls, depth + 1);
		}
		break;
	case CTYPE_ARRAY: {
		const struct ctype *e = ctype__concrete(t->target);

		if (!e || !e->size)
			break;
		for (uint32_t i = 0; i < t->count && i * e->size < 16; i++)
			classify_at(e, off + i * e->size, cls, depth + 1);
		break;
	}
	default:
		cls[0] = AC_MEM;
		break;
	}
}

/* Eightbyte classes of a value of type T; returns the count of eightbytes
 * (0: an empty type, passed as nothing), cls[0] == AC_MEM: in memory. */
static int classify(const struct ctype *t, enum abi_cls cls[2])
{
	cls[0] = cls[1] = AC_NONE;
	t = ctype__concrete(t);
	if (!t || t->size == 0)
		return 0;
	if (t->size > 16 || ((t->kind == CTYPE_STRUCT || t->kind == CTYPE_UNION) && t->by_reference)) {
		cls[0] = AC_MEM;
		return 1;
	}
	classify_at(t, 0, cls, 0);
	if (cls[0] == AC_MEM || cls[1] == AC_MEM) {
		cls[0] = AC_MEM;
		return 1;
	}
	if (cls[1] == AC_X87UP && cls[0] != AC_X87) {
		cls[0] = AC_MEM;
		return 1;
	}
	if (cls[1] == AC_SSEUP && cls[0] != AC_SSE && cls[0] != AC_SSEUP)
		cls[1] = AC_SSE;
	if (cls[0] == AC_NONE)
		cls[0] = AC_SSE; /* padding-only eightbyte: nothing to read */
	return t->size > 8 ? 2 : 1;
}

static const uint8_t abi_int_regs[6] = { DREG_RDI, DREG_RSI, DREG_RDX, DREG_RCX, DREG_R8, DREG_R9 };

int dloc__arg_register(const struct dloc *l)
{
	if (l->n != 1 || l->p[0].kind != DLOC_REG || l->p[0].off)
		return -1;
	for (int i = 0; i < 6; i++)
		if (l->p[0].reg == abi_int_regs[i])
			return i;
	return -1;
}

static void piece_add(struct dloc *l, enum dloc_kind kind, uint8_t reg, uint32_t size, int64_t off)
{
	if (l->n >= DLOC_MAX_PIECES)
		return;
	l->p[l->n].kind = (uint8_t)kind;
	l->p[l->n].reg = reg;
	l->p[l->n].size = size;
	l->p[l->n].off = off;
	l->p[l->n].value = 0;
	l->p[l->n].deref = 0;
	l->n++;
}

/* The return value's location at the return; sets *HIDDEN when the caller
 * passes the buffer address in rdi. */
static void abi_return(const struct ctype *rt, struct dloc *l, bool *hidden)
{
	const struct ctype *t = ctype__concrete(rt);
	enum abi_cls cls[2];
	int n = classify(t, cls), ni = 0, ns = 0;
	static const uint8_t ret_int[2] = { DREG_RAX, DREG_RDX };

	memset(l, 0, sizeof(*l));
	l->source = DLOC_SRC_ABI;
	*hidden = false;
	if (!n)
		return;
	if (t->kind == CTYPE_FLOAT && t->is_complex && t->is_x87) {
		piece_add(l, DLOC_X87, DREG_ST0, 16, 0);
		piece_add(l, DLOC_X87, DREG_ST0 + 1, 16, 0);
		return;
	}
	if (cls[0] == AC_MEM) {
		piece_add(l, DLOC_MEM, DREG_RAX, t->size, 0);
		*hidden = true;
		return;
	}
	for (int i = 0; i < n; i++) {
		uint32_t sz = t->size - 8u * (uint32_t)i;

		if (sz > 8)
			sz = 8;
		switch (cls[i]) {
		case AC_INT:
			piece_add(l, DLOC_REG, ret_int[ni++], sz, 0);
			break;
		case AC_SSE:
			piece_add(l, DLOC_XMM, (uint8_t)(DREG_XMM0 + ns++), sz, 0);
			break;
		case AC_SSEUP:
			if (l->n)
				l->p[l->n - 1].size += sz;
			break;
		case AC_X87:
			piece_add(l, DLOC_X87, DREG_ST0, t->size, 0);
			return;
		default:
			break;
		}
	}
}

/* ABI locations of every parameter at the entry (TYPES[i]) into LOCS. */
static void abi_params(const struct ctype *const *types, size_t n, bool hidden, struct dloc *locs)
{
	int ni = hidden ? 1 : 0, ns = 0;
	uint32_t stack = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ctype *t = ctype__concrete(types[i]);
		struct dloc *l = &locs[i];
		enum abi_cls cls[2];
		int neb = classify(t, cls), need_i = 0, need_s = 0;

		memset(l, 0, sizeof(*l));
		l->source = DLOC_SRC_ABI;
		if (!neb)
			continue;
		if ((t->kind == CTYPE_STRUCT || t->kind == CTYPE_UNION) && t->by_reference) {
			/* C++: the caller's copy, by invisible reference */
			if (ni < 6)
				piece_add(l, DLOC_MEM, abi_int_regs[ni++], t->size, 0);
			continue;
		}
		if (cls[0] != AC_MEM && cls[0] != AC_X87) {
			for (int k = 0; k < neb; k++) {
				need_i += cls[k] == AC_INT;
				need_s += cls[k] == AC_SSE;
			}
			if (ni + need_i <= 6 && ns + need_s <= 8) {
				for (int k = 0; k < neb; k++) {
					uint32_t sz = t->size - 8u * (uint32_t)k;

					if (sz > 8)
						sz = 8;
					if (cls[k] == AC_INT)
						piece_add(l, DLOC_REG, abi_int_regs[ni++], sz, 0);
					else if (cls[k] == AC_SSE)
						piece_add(l, DLOC_XMM, (uint8_t)(DREG_XMM0 + ns++), sz, 0);
					else if (cls[k] == AC_SSEUP && l->n)
						l->p[l->n - 1].size += sz;
				}
				continue;
			}
		}
		/* In memory, in the caller's argument area: [sp] at the entry
		 * is the return address, the area starts at sp + 8. */
		uint32_t al = calc_align(t, 0);

		al = al > 8 ? 16 : 8;
		stack = (stack + al - 1) / al * al;
		piece_add(l, DLOC_MEM, DREG_RSP, t->size, 8 + (int64_t)stack);
		stack += (t->size + 7) / 8 * 8;
	}
}

/* ------------------------------------------------------------------ */
/* DWARF locations                                                     */

struct loc_ctx {
	struct debuginfo *di;
	Dwarf_Die *func;
	uint64_t pc;
	bool frame_based;
};

static bool reg_ok(Dwarf_Word r)
{
	return r <= DREG_R15 || (r >= DREG_XMM0 && r <= DREG_ST0 + 7);
}

static void reg_piece(struct dloc_piece *p, Dwarf_Word r)
{
	memset(p, 0, sizeof(*p));
	p->reg = (uint8_t)r;
	if (r >= DREG_ST0)
		p->kind = DLOC_X87;
	else if (r >= DREG_XMM0)
		p->kind = DLOC_XMM;
	else
		p->kind = DLOC_REG;
}

static Dwarf_CFI *get_cfi(struct debuginfo *di)
{
	if (!di->cfi_eh_tried) {
		di->cfi_eh_tried = true;
		di->cfi_eh = dwarf_getcfi_elf(di->elf);
	}
	return di->cfi_eh ? di->cfi_eh : dwarf_getcfi(di->dwarf);
}

/* The CFA at PC as register + offset. */
static int cfa_at(struct debuginfo *di, uint64_t pc, uint8_t *reg, int64_t *off)
{
	Dwarf_CFI *cfi = get_cfi(di);
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t n;
	int err = -ENOTSUP;

	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
		return -ENOTSUP;
	if (dwarf_frame_cfa(frame, &ops, &n) == 0 && n == 1) {
		if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
			*reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
			*off = (int64_t)ops[0].number;
			err = 0;
		} else if (ops[0].atom == DW_OP_bregx && ops[0].number <= DREG_R15) {
			*reg = (uint8_t)ops[0].number;
			*off = (int64_t)ops[0].number2;
			err = 0;
		}
	}
	free(frame);
	return err;
}

/* The frame base at PC as register + offset (memory addresses base on it). */
static int frame_base(struct loc_ctx *c, uint8_t *reg, int64_t *off)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr_integrate(c->func, DW_AT_frame_base, &a) ||
	    dwarf_getlocation_addr(&a, c->pc, &ops, &n, 1) != 1 || n != 1)
		return -ENOTSUP;
	switch (ops[0].atom) {
	case DW_OP_call_frame_cfa:
		return cfa_at(c->di, c->pc, reg, off);
	case DW_OP_breg0 ... DW_OP_breg15:
		*reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
		*off = (int64_t)ops[0].number;
		return 0;
	case DW_OP_reg0 ... DW_OP_reg15:
		/* the frame base is the register's value */
		*reg = (uint8_t)(ops[0].atom - DW_OP_reg0);
		*off = 0;
		return 0;
	default:
		return -ENOTSUP;
	}
}

static bool is_const_op(const Dwarf_Op *op, uint64_t *v)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
		*v = op->atom - DW_OP_lit0;
		return true;
	}
	switch (op->atom) {
	case DW_OP_const1u:
	case DW_OP_const2u:
	case DW_OP_const4u:
	case DW_OP_const8u:
	case DW_OP_constu:
	case DW_OP_const1s:
	case DW_OP_const2s:
	case DW_OP_const4s:
	case DW_OP_const8s:
	case DW_OP_consts:
		*v = op->number;
		return true;
	default:
		return false;
	}
}

/* Evaluate OPS (a location description of a SIZE-byte value) into L.
 * 0, or -ENOTSUP for anything outside the supported subset. */
static int eval_ops(struct loc_ctx *c, const Dwarf_Op *ops, size_t n, uint32_t size, struct dloc *l)
{
	struct dloc_piece cur;
	bool have = false;
	uint32_t used = 0;
	size_t i = 0;

	memset(l, 0, sizeof(*l));
	if (!n)
		return -ENOTSUP; /* empty: optimized out here */
	while (i < n) {
		const Dwarf_Op *op = &ops[i];
		bool stack_value = i + 1 < n && ops[i + 1].atom == DW_OP_stack_value;
		uint64_t v;

		if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31) {
			if (have || !reg_ok(op->atom - DW_OP_reg0))
				return -ENOTSUP;
			reg_piece(&cur, op->atom - DW_OP_reg0);
			have = true;
			i++;
		} else if (op->atom == DW_OP_regx) {
			if (have || !reg_ok(op->number))
				return -ENOTSUP;
			reg_piece(&cur, op->number);
			have = true;
			i++;
		} else if ((op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) ||
			   op->atom == DW_OP_bregx) {
			Dwarf_Word r = op->atom == DW_OP_bregx ? op->number : (Dwarf_Word)(op->atom - DW_OP_breg0);
			int64_t off = (int64_t)(op->atom == DW_OP_bregx ? op->number2 : op->number);

			if (have || r > DREG_R15)
				return -ENOTSUP;
			memset(&cur, 0, sizeof(cur));
			cur.kind = stack_value ? DLOC_REG : DLOC_MEM;
			cur.reg = (uint8_t)r;
			cur.off = off;
			have = true;
			i += stack_value ? 2 : 1;
		} else if (op->atom == DW_OP_fbreg) {
			uint8_t r;
			int64_t off;

			if (have || stack_value || frame_base(c, &r, &off) != 0)
				return -ENOTSUP;
			memset(&cur, 0, sizeof(cur));
			cur.kind = DLOC_MEM;
			cur.reg = r;
			cur.off = off + (int64_t)op->number;
			c->frame_based = true;
			have = true;
			i++;
		} else if (is_const_op(op, &v)) {
			if (have || !stack_value)
				return -ENOTSUP;
			memset(&cur, 0, sizeof(cur));
			cur.kind = DLOC_CONST;
			cur.value = v;
			have = true;
			i += 2;
		} else if (op->atom == DW_OP_implicit_value) {
			if (have || op->number > 8)
				return -ENOTSUP;
			memset(&cur, 0, sizeof(cur));
			cur.kind = DLOC_CONST;
			memcpy(&cur.value, (const void *)(uintptr_t)op->number2, op->number);
			have = true;
			i++;
		} else if (op->atom == DW_OP_piece) {
			if (l->n >= DLOC_MAX_PIECES || op->number > UINT32_MAX)
				return -ENOTSUP;
			if (!have) {
				memset(&cur, 0, sizeof(cur));
				cur.kind = DLOC_NONE; /* this part is optimized out */
			}
			cur.size = (uint32_t)op->number;
			l->p[l->n++] = cur;
			used += cur.size;
			have = false;
			i++;
		} else if (op->atom == DW_OP_deref && have && cur.kind == DLOC_MEM && !cur.deref) {
			/* the value is at the address stored in that slot (a
			 * C++ object passed by invisible reference at -O0) */
			cur.deref = 1;
			i++;
		} else if (op->atom == DW_OP_GNU_uninit) {
			i++;
		} else {
			return -ENOTSUP; /* entry_value, deref, arithmetic, ... */
		}
	}
	if (have) {
		if (l->n >= DLOC_MAX_PIECES)
			return -ENOTSUP;
		cur.size = size > used ? size - used : 0;
		if (cur.kind == DLOC_REG && cur.size > 8)
			cur.size = 8;
		l->p[l->n++] = cur;
	}
	/* a location made only of optimized-out pieces tells nothing */
	for (uint8_t k = 0; k < l->n; k++)
		if (l->p[k].kind != DLOC_NONE)
			return 0;
	return -ENOTSUP;
}

/* The end of the prologue: the first line row flagged prologue_end, else
 * the second address among the function's rows. */
static int prologue_end(Dwarf_Die *func, uint64_t low, uint64_t *out)
{
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t n;
	Dwarf_Addr high;
	uint64_t second = UINT64_MAX, pe = UINT64_MAX;

	if (!dwarf_diecu(func, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &n) != 0)
		return -ENOENT;
	if (dwarf_highpc(func, &high) != 0)
		high = low + 1;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *line = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		bool flag = false, end = false;

		if (!line || dwarf_lineaddr(line, &a) != 0 || a < low || a >= high)
			continue;
		if (dwarf_lineendsequence(line, &end) == 0 && end)
			continue;
		if (dwarf_lineprologueend(line, &flag) == 0 && flag && a < pe)
			pe = a;
		if (a > low && a < second)
			second = a;
	}
	if (pe != UINT64_MAX)
		*out = pe;
	else if (second != UINT64_MAX)
		*out = second;
	else
		return -ENOENT;
	return 0;
}

static bool before_prologue(Dwarf_Die *func, uint64_t low, uint64_t pc)
{
	uint64_t pe;

	if (prologue_end(func, low, &pe) == 0)
		return pc < pe;
	return pc <= low + 4;
}

static int const_value_loc(Dwarf_Attribute *a, uint32_t size, struct dloc *l)
{
	Dwarf_Word u;
	Dwarf_Block b;

	memset(l, 0, sizeof(*l));
	l->n = 1;
	l->p[0].kind = DLOC_CONST;
	l->p[0].size = size > 8 ? 8 : size;
	if (dwarf_formudata(a, &u) == 0) {
		l->p[0].value = u;
		return 0;
	}
	if (dwarf_formblock(a, &b) == 0 && b.length <= 8) {
		memcpy(&l->p[0].value, b.data, b.length);
		l->p[0].size = (uint32_t)b.length;
		return 0;
	}
	return -ENOTSUP;
}

static void param_loc(struct loc_ctx *c, Dwarf_Die *param, const struct ctype *t,
		      uint64_t low, const struct dloc *abi, struct dloc *out)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;
	uint32_t size = ctype__concrete(t)->size;

	if (dwarf_attr_integrate(param, DW_AT_const_value, &a) && const_value_loc(&a, size, out) == 0) {
		out->source = DLOC_SRC_DWARF;
		return;
	}
	c->frame_based = false;
	if (dwarf_attr(param, DW_AT_location, &a) &&
	    dwarf_getlocation_addr(&a, c->pc, &ops, &n, 1) == 1 &&
	    eval_ops(c, ops, n, size, out) == 0) {
		if (!c->frame_based || !before_prologue(c->func, low, c->pc)) {
			out->source = DLOC_SRC_DWARF;
			return;
		}
		*out = *abi; /* rule a: the slot is not filled yet */
		out->source = DLOC_SRC_ABI;
		return;
	}
	*out = *abi; /* rule b */
	out->source = DLOC_SRC_ABI_FALLBACK;
}

/* ------------------------------------------------------------------ */
/* Signatures                                                          */

static bool subprogram_at(Dwarf_Die *die, uint64_t addr)
{
	Dwarf_Addr a;

	if (dwarf_tag(die) != DW_TAG_subprogram)
		return false;
	return (dwarf_entrypc(die, &a) == 0 && a == addr) || (dwarf_lowpc(die, &a) == 0 && a == addr);
}

struct find_addr_arg {
	uint64_t addr;
	Dwarf_Die die;
	bool found;
};

static int find_addr_cb(Dwarf_Die *die, void *arg)
{
	struct find_addr_arg *f = arg;

	if (!subprogram_at(die, f->addr))
		return DWARF_CB_OK;
	f->die = *die;
	f->found = true;
	return DWARF_CB_ABORT;
}

/* The subprogram of CU whose code starts at ADDR.  Not dwarf_getscopes():
 * when code inlined from another function sits at ADDR, its scopes lead
 * to that function's abstract definition, not to the function at ADDR. */
static int find_in_cu(Dwarf_Die *cu, uint64_t addr, Dwarf_Die *out)
{
	struct find_addr_arg f = { .addr = addr };

	dwarf_getfuncs(cu, find_addr_cb, &f, 0);
	if (!f.found)
		return -ENOENT;
	*out = f.die;
	return 0;
}

static int find_subprogram(struct debuginfo *di, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_Die cu;
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (dwarf_addrdie(di->dwarf, addr, &cu) && find_in_cu(&cu, addr, out) == 0)
		return 0;
	/* No (or incomplete) .debug_aranges: every CU. */
	while (dwarf_nextcu(di->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(di->dwarf, off + hsize, &cu) && dwarf_haspc(&cu, addr) > 0 &&
		    find_in_cu(&cu, addr, out) == 0)
			return 0;
		off = next;
	}
	return -ENOENT;
}

void func_sig__free(struct func_sig *sig)
{
	if (!sig)
		return;
	free(sig->params);
	ctype_arena__put(sig->arena);
	free(sig);
}

/* The parameter DIEs of FUNC (or of its abstract origin when the concrete
 * instance lists none). */
static size_t collect_params(Dwarf_Die *func, Dwarf_Die *params, size_t max, bool *variadic)
{
	Dwarf_Die child, origin;
	Dwarf_Attribute a;
	size_t n = 0;

	*variadic = false;
	if (dwarf_child(func, &child) == 0) {
		do {
			int tag = dwarf_tag(&child);

			if (tag == DW_TAG_formal_parameter && n < max)
				params[n++] = child;
			else if (tag == DW_TAG_unspecified_parameters)
				*variadic = true;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	if (!n && dwarf_attr(func, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &origin))
		return collect_params(&origin, params, max, variadic);
	return n;
}

#define MAX_PARAMS 64

int debuginfo__signature(struct debuginfo *di, uint64_t func_addr, uint64_t probe_addr,
			 struct func_sig **out)
{
	Dwarf_Die func, t, *pdies = NULL;
	const struct ctype **types = NULL;
	struct dloc *abi = NULL;
	struct func_sig *sig = NULL;
	struct loc_ctx lc;
	const char *name;
	size_t n;
	bool hidden;
	int err = 0;

	*out = NULL;
	if (di->kind != DEBUGINFO_DWARF)
		return -ENODATA;
	err = find_subprogram(di, func_addr, &func);
	if (err)
		return err;
	pdies = calloc(MAX_PARAMS, sizeof(*pdies));
	sig = calloc(1, sizeof(*sig));
	if (!pdies || !sig) {
		err = -ENOMEM;
		goto cleanup;
	}
	sig->arena = ctype_arena__get(di->arena);
	sig->addr = func_addr;
	sig->probe_addr = probe_addr;
	name = dwarf_diename(&func);
	sig->name = ctype_arena__strdup(di->arena, name ? name : "?");
	n = collect_params(&func, pdies, MAX_PARAMS, &sig->variadic);
	sig->params = calloc(n ? n : 1, sizeof(*sig->params));
	types = calloc(n ? n : 1, sizeof(*types));
	abi = calloc(n ? n : 1, sizeof(*abi));
	if (!sig->name || !sig->params || !types || !abi) {
		err = -ENOMEM;
		goto cleanup;
	}
	sig->n_params = n;
	for (size_t i = 0; i < n; i++) {
		const char *pn = dwarf_diename(&pdies[i]);
		char buf[32];

		types[i] = type_of(di, die_type(&pdies[i], &t) ? &t : NULL, 0);
		if (!pn) {
			snprintf(buf, sizeof(buf), "param%zu", i);
			pn = buf;
		}
		sig->params[i].name = ctype_arena__strdup(di->arena, pn);
		if (!types[i] || !sig->params[i].name) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	sig->ret_type = type_of(di, die_type(&func, &t) ? &t : NULL, 0);
	if (!sig->ret_type) {
		err = -ENOMEM;
		goto cleanup;
	}
	finalize(di);
	for (size_t i = 0; i < n; i++)
		sig->params[i].type = types[i];

	abi_return(sig->ret_type, &sig->ret_loc, &hidden);
	abi_params(types, n, hidden, abi);
	lc.di = di;
	lc.func = &func;
	lc.pc = probe_addr;
	for (size_t i = 0; i < n; i++)
		param_loc(&lc, &pdies[i], types[i], func_addr, &abi[i], &sig->params[i].loc);
	*out = sig;
	sig = NULL;
cleanup:
	if (err)
		finalize(di); /* leave no half-built batch behind */
	func_sig__free(sig);
	free(abi);
	free(types);
	free(pdies);
	return err;
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

int debuginfo__func_addr(struct debuginfo *di, const char *name, uint64_t *addr)
{
	struct find_name_arg f = { .name = name };
	Dwarf_Off off = 0, next;
	size_t hsize;
	Dwarf_Die cu;

	if (di->kind != DEBUGINFO_DWARF)
		return -ENODATA;
	while (!f.found && dwarf_nextcu(di->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(di->dwarf, off + hsize, &cu))
			dwarf_getfuncs(&cu, find_name_cb, &f, 0);
		off = next;
	}
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

	if (di->kind != DEBUGINFO_DWARF || find_subprogram(di, func_addr, &func) ||
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
	if (best == UINT64_MAX || cfa_at(di, best, &reg, &off) ||
	    (reg != DREG_RSP && reg != DREG_RBP) || off < 8 || off - 8 > UINT16_MAX)
		return -ENOENT;
	*pc = best;
	*slot_reg = reg;
	*slot_off = off - 8; /* the return address sits just below the CFA */
	return 0;
}
