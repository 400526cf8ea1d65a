// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * symtab.c: function symbols of one ELF file, read with libelf.
 *
 * Everything is copied out of libelf at open time (names into an arena), so
 * the Elf handle is released before symtab__open returns; only the file
 * descriptor stays open, for symtab__read_code.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <limits.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/debugfile.h"
#include "core/grow.h"
#include "core/log.h"
#include "elfcheck.h"
#include "funcpattern.h"
#include "symtab.h"

/*
 * binutils' libiberty demangles C++, Rust's legacy scheme (a "::h<16 hex>"
 * hash last, "$LT$"-style escapes, a ".llvm.NNNN" suffix from LTO) and
 * Rust's v0 scheme ("_R..."), which rustc's std uses; libstdc++'s
 * __cxa_demangle knows only the first two and leaves the escapes.
 */
static char *demangle(const char *name)
{
	char *out;

	if (name[0] != '_')
		return NULL;
	/* v0 without crate disambiguators ("std::io", not "std[3c1c0]::io") */
	if (name[1] == 'R')
		return rust_demangle(name, 0);
	if (name[1] != 'Z')
		return NULL;
	/* A legacy Rust name keeps its hash: shown without, matched with or without */
	out = rust_demangle(name, DMGL_VERBOSE);
	return out ? out : cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI);
}

#define ARENA_CHUNK (64 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	char data[];
};

struct symtab_seg {
	uint64_t vaddr, memsz, offset, filesz;
	bool exec;
};

struct symtab {
	char *path;
	int fd;
	bool is_dyn;
	uint64_t entry; /* e_entry: where the loader jumps, no return address */
	unsigned rt_flags;
	char *build_id;
	bool debug_symbols;   /* symtab_opts */
	char *symbols_from; /* the debug file the symbols came from, NULL: the file */
	struct symtab_func *funcs;
	size_t nfuncs;
	struct symtab_seg *segs;
	size_t nsegs;
	struct arena_chunk *arena;
};

/* One symbol as collected, before sorting and merging. */
struct raw_sym {
	struct symtab_func f;
	bool default_version; /* "@@" or unhidden versym: preferred on merge */
	size_t shndx;         /* its section in the file; 0: unknown */
};

struct sym_vec {
	struct raw_sym *v;
	size_t n, cap;
};

static char *arena_alloc(struct symtab *st, size_t n)
{
	struct arena_chunk *c = st->arena;
	char *p;

	if (!c || c->cap - c->used < n) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = st->arena;
		st->arena = c;
	}
	p = c->data + c->used;
	c->used += n;
	return p;
}

static char *arena_strndup(struct symtab *st, const char *s, size_t n)
{
	char *p = arena_alloc(st, n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static int vec_push(struct sym_vec *vec, const struct raw_sym *rs)
{
	if (GROW(vec->v, vec->n, vec->cap, 1024))
		return -ENOMEM;
	vec->v[vec->n++] = *rs;
	return 0;
}

/* Compare NAME (possibly "name@VER") with WANT, ignoring the version. */
static bool name_is(const char *name, const char *want)
{
	size_t n = strlen(want);

	return strncmp(name, want, n) == 0 && (name[n] == '\0' || name[n] == '@');
}

static unsigned runtime_flags_of(const char *name)
{
	if (name[0] != '_' && name[0] != 'r')
		return 0;
	if (name_is(name, "__cxa_throw") || name_is(name, "__gxx_personality_v0") ||
	    name_is(name, "_Unwind_RaiseException") || name_is(name, "__cxa_begin_catch"))
		return SYMTAB_RT_CXX_EH;
	if (name_is(name, "rust_eh_personality") || name_is(name, "rust_panic") ||
	    name_is(name, "__rust_start_panic") ||
	    strncmp(name, "_ZN3std9panicking", 17) == 0)
		return SYMTAB_RT_RUST;
	return 0;
}

/* A program that switches stacks: it calls swapcontext/setcontext (libc
 * defines them: only an import counts) or boost.context's jump_fcontext. */
static bool switches_stacks(const char *name, bool undefined)
{
	if (name[0] != 's' && name[0] != 'j' && name[0] != 'o')
		return false;
	if (undefined && (name_is(name, "swapcontext") || name_is(name, "setcontext")))
		return true;
	return name_is(name, "jump_fcontext") || name_is(name, "ontop_fcontext");
}

/*
 * Version names by versym index, from .gnu.version_d (defined symbols) and
 * .gnu.version_r (imports; only read so an odd file cannot leave a defined
 * symbol's index dangling).  Index 0/1 (local/global) have no name.
 */
struct versions {
	const char **names; /* arena strings, NULL where unknown */
	size_t n;
};

static int versions_set(struct symtab *st, struct versions *vs, size_t idx,
			const char *name)
{
	if (idx >= vs->n) {
		size_t n = idx + 16;
		const char **v = realloc(vs->names, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + vs->n, 0, (n - vs->n) * sizeof(*v));
		vs->names = v;
		vs->n = n;
	}
	if (!vs->names[idx]) {
		vs->names[idx] = arena_strndup(st, name, strlen(name));
		if (!vs->names[idx])
			return -ENOMEM;
	}
	return 0;
}

static int read_verdef(struct symtab *st, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh,
		       struct versions *vs)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0;
	int err;

	if (!data)
		return 0;
	for (GElf_Word i = 0; i < sh->sh_info; i++) {
		GElf_Verdef vd;
		GElf_Verdaux vda;
		const char *name;

		if (!gelf_getverdef(data, off, &vd))
			break;
		if (!(vd.vd_flags & VER_FLG_BASE) && vd.vd_cnt > 0 &&
		    gelf_getverdaux(data, off + vd.vd_aux, &vda)) {
			name = elf_strptr(elf, sh->sh_link, vda.vda_name);
			if (name && (err = versions_set(st, vs, vd.vd_ndx, name)) < 0)
				return err;
		}
		if (!vd.vd_next)
			break;
		off += vd.vd_next;
	}
	return 0;
}

static int read_verneed(struct symtab *st, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh,
			struct versions *vs)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0;
	int err;

	if (!data)
		return 0;
	for (GElf_Word i = 0; i < sh->sh_info; i++) {
		GElf_Verneed vn;
		size_t aoff;

		if (!gelf_getverneed(data, off, &vn))
			break;
		aoff = off + vn.vn_aux;
		for (GElf_Half j = 0; j < vn.vn_cnt; j++) {
			GElf_Vernaux vna;
			const char *name;

			if (!gelf_getvernaux(data, aoff, &vna))
				break;
			name = elf_strptr(elf, sh->sh_link, vna.vna_name);
			if (name && (err = versions_set(st, vs, vna.vna_other & 0x7fff, name)) < 0)
				return err;
			if (!vna.vna_next)
				break;
			aoff += vna.vna_next;
		}
		if (!vn.vn_next)
			break;
		off += vn.vn_next;
	}
	return 0;
}

/* Collect the defined functions of one symbol table into VEC. */
static int read_symbols(struct symtab *st, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh,
			Elf_Data *versym, const struct versions *vs, struct sym_vec *vec,
			bool own_sections)
{
	bool dynamic = sh->sh_type == SHT_DYNSYM;
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count;
	int err;

	if (!data || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < count; i++) {
		struct raw_sym rs = { .default_version = true };
		GElf_Sym sym;
		const char *name, *at;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		st->rt_flags |= runtime_flags_of(name);
		if (switches_stacks(name, sym.st_shndx == SHN_UNDEF))
			st->rt_flags |= SYMTAB_RT_STACKS;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;

		at = strchr(name, '@');
		rs.f.name = arena_strndup(st, name, at ? (size_t)(at - name) : strlen(name));
		if (!rs.f.name)
			return -ENOMEM;
		if (at) {
			/* "name@@VER" is the default version, "name@VER" a hidden one. */
			rs.default_version = at[1] == '@';
			at += rs.default_version ? 2 : 1;
			if (*at) {
				rs.f.version = arena_strndup(st, at, strlen(at));
				if (!rs.f.version)
					return -ENOMEM;
			}
		} else if (versym) {
			GElf_Versym ver;

			if (gelf_getversym(versym, (int)i, &ver)) {
				size_t idx = ver & 0x7fff;

				rs.default_version = !(ver & 0x8000);
				if (idx > 1 && idx < vs->n)
					rs.f.version = vs->names[idx];
			}
		}
		rs.f.addr = sym.st_value;
		rs.f.size = sym.st_size;
		rs.f.ifunc = type == STT_GNU_IFUNC;
		rs.f.dynamic = dynamic;
		rs.shndx = own_sections && sym.st_shndx < SHN_LORESERVE ? sym.st_shndx : 0;
		if ((err = vec_push(vec, &rs)) < 0)
			return err;
	}
	return 0;
}

static int raw_cmp(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;
	int c;

	if (x->f.addr != y->f.addr)
		return x->f.addr < y->f.addr ? -1 : 1;
	if ((c = strcmp(x->f.name, y->f.name)) != 0)
		return c;
	/* qsort is not stable: settle duplicates' order, .symtab's first. */
	return (int)x->f.dynamic - (int)y->f.dynamic;
}

/* Fold entry B (same name and addr) into A. */
static void raw_merge(struct raw_sym *a, const struct raw_sym *b)
{
	bool take_version = !a->f.version ||
			    (b->f.version && b->default_version && !a->default_version) ||
			    (b->f.version && b->f.dynamic && !a->f.dynamic);

	if (take_version && b->f.version) {
		a->f.version = b->f.version;
		a->default_version = b->default_version;
	}
	if (!a->f.size)
		a->f.size = b->f.size;
	if (!a->shndx)
		a->shndx = b->shndx;
	a->f.dynamic |= b->f.dynamic;
	a->f.ifunc |= b->f.ifunc;
}

/*
 * A function symbol of size 0 (crt's _init, frame_dummy, register_tm_clones;
 * hand-written assembly) spans to the next function or its section's end,
 * so its return instructions can be found; an alias takes its sized twin's
 * size.  One at its section's very end (Go's runtime.etext) marks the end
 * of the code, and one inside a sized function is a label: neither is a
 * function.  VEC is sorted by address; SEC_END by section index (N).
 */
static void infer_sizes(struct sym_vec *vec, const uint64_t *sec_end, size_t n_sec)
{
	uint64_t covered = 0; /* the end of the sized functions so far */

	for (size_t i = 0, j; i < vec->n; i = j) {
		uint64_t addr = vec->v[i].f.addr, twin = 0, next = UINT64_MAX, end;

		for (j = i; j < vec->n && vec->v[j].f.addr == addr; j++)
			if (vec->v[j].f.size > twin)
				twin = vec->v[j].f.size;
		if (j < vec->n)
			next = vec->v[j].f.addr;
		for (size_t k = i; k < j; k++) {
			struct raw_sym *r = &vec->v[k];

			if (r->f.size || !r->shndx || r->shndx >= n_sec || !sec_end[r->shndx])
				continue;
			end = next < sec_end[r->shndx] ? next : sec_end[r->shndx];
			if (addr >= sec_end[r->shndx]) {
				r->f.name = NULL; /* a marker: dropped */
			} else if (twin) {
				r->f.size = twin;
				r->f.size_inferred = true;
			} else if (addr >= covered) {
				r->f.size = end - addr;
				r->f.size_inferred = true;
			}
		}
		if (addr + twin > covered)
			covered = addr + twin;
	}
}

static const struct symtab_seg *seg_of(const struct symtab *st, uint64_t addr)
{
	for (size_t i = 0; i < st->nsegs; i++) {
		const struct symtab_seg *s = &st->segs[i];

		if (addr >= s->vaddr && addr - s->vaddr < s->memsz)
			return s;
	}
	return NULL;
}

static int read_segments(struct symtab *st, Elf *elf)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0 || phnum == 0)
		return 0;
	st->segs = calloc(phnum, sizeof(*st->segs));
	if (!st->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		st->segs[st->nsegs++] = (struct symtab_seg){
			.vaddr = ph.p_vaddr,
			.memsz = ph.p_memsz,
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.exec = ph.p_flags & PF_X,
		};
	}
	return 0;
}

/* Hex of the NT_GNU_BUILD_ID note in DATA, if there is one. */
static int build_id_from(struct symtab *st, Elf_Data *data)
{
	static const char hex[] = "0123456789abcdef";
	size_t off = 0, next;
	GElf_Nhdr nh;
	size_t name_off, desc_off;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0) {
			st->build_id = malloc(2 * nh.n_descsz + 1);
			if (!st->build_id)
				return -ENOMEM;
			for (size_t i = 0; i < nh.n_descsz; i++) {
				st->build_id[2 * i] = hex[desc[i] >> 4];
				st->build_id[2 * i + 1] = hex[desc[i] & 15];
			}
			st->build_id[2 * nh.n_descsz] = '\0';
			return 0;
		}
		off = next;
	}
	return 0;
}

static int read_build_id(struct symtab *st, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t phnum;
	int err;

	while ((scn = elf_nextscn(elf, scn)) && !st->build_id) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if ((data = elf_getdata(scn, NULL)) && (err = build_id_from(st, data)) < 0)
			return err;
	}
	/* Section headers can be gone (sstrip); the program headers remain. */
	if (st->build_id || elf_getphdrnum(elf, &phnum) != 0)
		return 0;
	for (size_t i = 0; i < phnum && !st->build_id; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (data && (err = build_id_from(st, data)) < 0)
			return err;
	}
	return 0;
}

/* Demangle the merged functions' "_Z" and "_R" names. */
static int demangle_all(struct symtab *st)
{
	for (size_t i = 0; i < st->nfuncs; i++) {
		struct symtab_func *f = &st->funcs[i];
		char *out = demangle(f->name);

		if (!out)
			continue;
		f->demangled = arena_strndup(st, out, strlen(out));
		free(out);
		if (!f->demangled)
			return -ENOMEM;
	}
	return 0;
}

/* MiniDebugInfo (Fedora, RHEL): a stripped program keeps its local
 * function symbols in .gnu_debugdata, an xz-compressed ELF file whose
 * .symtab .dynsym does not repeat.  Read when the file has no .symtab. */
#define DEBUGDATA_MAX (256u << 20)

static int read_debugdata(struct symtab *st, Elf_Data *xz, const struct versions *vs,
			  struct sym_vec *vec)
{
	lzma_stream z = LZMA_STREAM_INIT;
	size_t cap = xz->d_size * 8 + 4096, len = 0;
	unsigned char *buf = NULL;
	Elf *mini = NULL;
	Elf_Scn *scn = NULL;
	lzma_ret r;
	int err = 0;

	if (lzma_stream_decoder(&z, UINT64_MAX, 0) != LZMA_OK)
		return 0;
	z.next_in = xz->d_buf;
	z.avail_in = xz->d_size;
	do {
		if (len == cap || !buf) {
			unsigned char *nb;

			if (buf)
				cap *= 2;
			if (cap > DEBUGDATA_MAX || !(nb = realloc(buf, cap))) {
				err = cap > DEBUGDATA_MAX ? 0 : -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		z.next_out = buf + len;
		z.avail_out = cap - len;
		r = lzma_code(&z, LZMA_FINISH);
		len = cap - z.avail_out;
	} while (r == LZMA_OK);
	if (r != LZMA_STREAM_END) {
		log_debug("%s: .gnu_debugdata does not decompress (xz error %d)", st->path, r);
		goto out;
	}
	mini = elf_memory((char *)buf, len);
	if (!mini || elf_kind(mini) != ELF_K_ELF)
		goto out;
	while ((scn = elf_nextscn(mini, scn)) && !err) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			err = read_symbols(st, mini, scn, &sh, NULL, vs, vec, false);
	}
out:
	if (mini)
		elf_end(mini);
	lzma_end(&z);
	free(buf); /* read_symbols copied the names */
	return err;
}

/* A program (ET_EXEC, or a PIE: it names an interpreter), not a library:
 * a library's .dynsym has what it exports, and its internal functions
 * would turn every glob over it into many more probes. */
static bool is_program(Elf *elf)
{
	GElf_Ehdr eh;
	size_t n;

	if (!gelf_getehdr(elf, &eh))
		return false;
	if (eh.e_type == ET_EXEC)
		return true;
	if (eh.e_type != ET_DYN || elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return true;
	}
	return false;
}

/* The .symtab of ELF's separate debug file (elf/debugfile.h): *FOUND
 * when it had one. */
static int read_debug_symbols(struct symtab *st, Elf *elf, const struct versions *vs,
			 struct sym_vec *vec, bool *found)
{
	struct debugfile_opts o = {};
	struct debugfile f;
	Elf_Scn *scn = NULL;
	int err = debugfile__find(elf, st->path, &o, &f);

	if (err == -ENOMEM)
		return err;
	if (err)
		return 0;
	while (!err && (scn = elf_nextscn(f.elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			err = read_symbols(st, f.elf, scn, &sh, NULL, vs, vec, false);
			*found = true;
		}
	}
	if (*found && !err &&
	    asprintf(&st->symbols_from, "%s (%s)", f.path, debugfile_source__name(f.source)) < 0)
		err = -ENOMEM;
	debugfile__close(&f);
	return err;
}

static int collect(struct symtab *st, Elf *elf)
{
	struct versions vs = { 0 };
	struct sym_vec vec = { 0 };
	uint64_t *sec_end = NULL;
	size_t n_sec = 0;
	Elf_Data *versym = NULL;
	Elf_Scn *scn = NULL, *debugdata = NULL;
	bool have_symtab = false;
	size_t shstrndx, n;
	int err = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		shstrndx = 0;
	if (elf_getshdrnum(elf, &n_sec) != 0)
		n_sec = 0;
	sec_end = calloc(n_sec ? n_sec : 1, sizeof(*sec_end));
	if (!sec_end)
		return -ENOMEM;

	/* First pass: versions, versym, and section-name runtime markers. */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sname = shstrndx ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (sname && (!strcmp(sname, ".gopclntab") || !strcmp(sname, ".go.buildinfo")))
			st->rt_flags |= SYMTAB_RT_GO;
		if (sname && !strcmp(sname, ".gcc_except_table"))
			st->rt_flags |= SYMTAB_EH_TABLES;
		if ((sh.sh_flags & SHF_EXECINSTR) && elf_ndxscn(scn) < n_sec)
			sec_end[elf_ndxscn(scn)] = sh.sh_addr + sh.sh_size;
		if (sh.sh_type == SHT_GNU_verdef)
			err = read_verdef(st, elf, scn, &sh, &vs);
		else if (sh.sh_type == SHT_GNU_verneed)
			err = read_verneed(st, elf, scn, &sh, &vs);
		else if (sh.sh_type == SHT_GNU_versym)
			versym = elf_getdata(scn, NULL);
		if (err < 0)
			goto cleanup;
	}

	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sname = shstrndx ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (sh.sh_type == SHT_SYMTAB) {
			err = read_symbols(st, elf, scn, &sh, NULL, &vs, &vec, true);
			have_symtab = true;
		} else if (sh.sh_type == SHT_DYNSYM) {
			err = read_symbols(st, elf, scn, &sh, versym, &vs, &vec, true);
		} else if (sname && !strcmp(sname, ".gnu_debugdata") && sh.sh_type == SHT_PROGBITS) {
			debugdata = scn;
		}
		if (err < 0)
			goto cleanup;
	}
	/* Stripped: the separate debug file's .symtab (every function, as
	 * the unstripped file had them), else MiniDebugInfo. */
	if (!have_symtab && st->debug_symbols && is_program(elf)) {
		err = read_debug_symbols(st, elf, &vs, &vec, &have_symtab);
		if (err < 0)
			goto cleanup;
	}
	if (!have_symtab && debugdata && elf_getdata(debugdata, NULL) &&
	    (err = read_debugdata(st, elf_getdata(debugdata, NULL), &vs, &vec)) < 0)
		goto cleanup;

	if (vec.n)
		qsort(vec.v, vec.n, sizeof(*vec.v), raw_cmp);
	n = 0;
	for (size_t i = 0; i < vec.n; i++) {
		if (n && vec.v[n - 1].f.addr == vec.v[i].f.addr &&
		    !strcmp(vec.v[n - 1].f.name, vec.v[i].f.name))
			raw_merge(&vec.v[n - 1], &vec.v[i]);
		else
			vec.v[n++] = vec.v[i];
	}
	vec.n = n;
	infer_sizes(&vec, sec_end, n_sec);

	/* Drop what no segment maps: nothing can be probed there. */
	st->funcs = malloc((n ? n : 1) * sizeof(*st->funcs));
	if (!st->funcs) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		const struct symtab_seg *seg = seg_of(st, vec.v[i].f.addr);

		if (!seg || !vec.v[i].f.name)
			continue;
		st->funcs[st->nfuncs] = vec.v[i].f;
		st->funcs[st->nfuncs].file_offset = vec.v[i].f.addr - seg->vaddr + seg->offset;
		st->nfuncs++;
	}
	err = demangle_all(st);

cleanup:
	free(sec_end);
	free(vec.v);
	free(vs.names);
	return err;
}

struct symtab *symtab__open(const char *path)
{
	return symtab__open_opts(path, NULL);
}

struct symtab *symtab__open_opts(const char *path, const struct symtab_opts *opts)
{
	struct symtab *st = NULL;
	Elf *elf = NULL;
	struct stat sb;
	int err = 0;

	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->fd = -1;
	st->debug_symbols = opts && opts->debug_symbols;
	st->path = strdup(path);
	if (!st->path) {
		err = -ENOMEM;
		goto cleanup;
	}
	st->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (st->fd < 0) {
		err = -errno;
		goto cleanup;
	}
	if (fstat(st->fd, &sb) < 0) {
		err = -errno;
		goto cleanup;
	}
	if (S_ISDIR(sb.st_mode)) {
		err = -EISDIR;
		goto cleanup;
	}
	if (!S_ISREG(sb.st_mode)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	{
		char why[160];

		/* Another machine's code decoded as x86 would be probed wrong;
		 * a truncated file is corrupt, not stripped. */
		err = elfcheck__file(path, why, sizeof(why));
		if (err) {
			log_debug("%s: %s", path, why);
			goto cleanup;
		}
	}

	elf_version(EV_CURRENT);
	elf = elf_begin(st->fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64) {
		log_debug("%s: not a 64-bit ELF file", path);
		err = -ENOEXEC;
		goto cleanup;
	}
	{
		GElf_Ehdr eh;

		if (!gelf_getehdr(elf, &eh)) {
			err = -ENOEXEC;
			goto cleanup;
		}
		st->is_dyn = eh.e_type == ET_DYN;
		st->entry = eh.e_entry;
	}

	if ((err = read_segments(st, elf)) < 0 || (err = collect(st, elf)) < 0 ||
	    (err = read_build_id(st, elf)) < 0)
		goto cleanup;
	if (!st->nfuncs) {
		log_debug("%s: no function symbols", path);
		err = -ENODATA;
		goto cleanup;
	}
	log_debug("%s: %zu functions", path, st->nfuncs);

cleanup:
	if (elf)
		elf_end(elf);
	if (err < 0) {
		symtab__free(st);
		errno = -err;
		return NULL;
	}
	return st;
}

void symtab__free(struct symtab *st)
{
	if (!st)
		return;
	while (st->arena) {
		struct arena_chunk *next = st->arena->next;

		free(st->arena);
		st->arena = next;
	}
	free(st->segs);
	free(st->funcs);
	free(st->build_id);
	free(st->symbols_from);
	if (st->fd >= 0)
		close(st->fd);
	free(st->path);
	free(st);
}

const char *symtab__path(const struct symtab *st)
{
	return st->path;
}

const struct symtab_func *symtab__funcs(const struct symtab *st, size_t *count)
{
	*count = st->nfuncs;
	return st->funcs;
}

/* Among aliases, the name a person would recognise: exported, fewest
 * leading underscores, shortest. */
static bool alias_better(const struct symtab_func *a, const struct symtab_func *b)
{
	size_t ua = strspn(a->name, "_"), ub = strspn(b->name, "_");

	if (a->size_inferred != b->size_inferred)
		return b->size_inferred; /* a marker (Go's runtime.text) names nothing */
	if (a->dynamic != b->dynamic)
		return a->dynamic;
	if (ua != ub)
		return ua < ub;
	return strlen(a->name) < strlen(b->name);
}

const struct symtab_func *symtab__alias(const struct symtab *st, const struct symtab_func *f)
{
	const struct symtab_func *best = f;
	size_t i = (size_t)(f - st->funcs);

	if (f < st->funcs || i >= st->nfuncs)
		return f;
	/* sorted by address: the aliases are F's neighbours */
	while (i > 0 && st->funcs[i - 1].addr == f->addr)
		i--;
	for (; i < st->nfuncs && st->funcs[i].addr == f->addr; i++)
		if (!st->funcs[i].ifunc && alias_better(&st->funcs[i], best))
			best = &st->funcs[i];
	return best;
}

const struct symtab_func *symtab__find_addr(const struct symtab *st, uint64_t addr)
{
	const struct symtab_func *best = NULL;
	size_t lo = 0, hi = st->nfuncs;

	/* lo = first entry whose addr is above ADDR. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back over aliases and sizeless labels to the enclosing function;
	 * the bound keeps a miss cheap. */
	for (size_t i = lo, steps = 0; i-- > 0 && steps < 64; steps++) {
		const struct symtab_func *f = &st->funcs[i];

		if (best && f->addr != best->addr)
			break;
		if (addr - f->addr < f->size && (!best || alias_better(f, best)))
			best = f;
	}
	return best;
}

bool symtab__offset_at_addr(const struct symtab *st, uint64_t addr, uint64_t *off)
{
	for (size_t i = 0; i < st->nsegs; i++) {
		const struct symtab_seg *s = &st->segs[i];

		if (addr >= s->vaddr && addr - s->vaddr < s->filesz) {
			*off = s->offset + (addr - s->vaddr);
			return true;
		}
	}
	return false;
}

bool symtab__addr_at_offset(const struct symtab *st, uint64_t off, uint64_t *addr)
{
	for (size_t i = 0; i < st->nsegs; i++) {
		const struct symtab_seg *s = &st->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*addr = s->vaddr + (off - s->offset);
			return true;
		}
	}
	return false;
}

long symtab__read_code(const struct symtab *st, uint64_t addr, void *buf, size_t len)
{
	const struct symtab_seg *seg = NULL;
	size_t done = 0, avail;
	uint64_t off;

	for (size_t i = 0; i < st->nsegs; i++) {
		const struct symtab_seg *s = &st->segs[i];

		if (s->exec && addr >= s->vaddr && addr - s->vaddr < s->filesz) {
			seg = s;
			break;
		}
	}
	if (!seg)
		return -EFAULT;
	avail = seg->vaddr + seg->filesz - addr;
	if (len > avail)
		len = avail;
	if (len > (size_t)LONG_MAX)
		len = LONG_MAX;
	off = addr - seg->vaddr + seg->offset;
	while (done < len) {
		ssize_t n = pread(st->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break; /* file shorter than its headers claim */
		done += (size_t)n;
	}
	return (long)done;
}

const char *symtab__symbols_from(const struct symtab *st)
{
	return st->symbols_from;
}

const char *symtab__build_id(const struct symtab *st)
{
	return st->build_id;
}

unsigned symtab__runtime_flags(const struct symtab *st)
{
	return st->rt_flags;
}

bool symtab__is_dyn(const struct symtab *st)
{
	return st->is_dyn;
}

uint64_t symtab__entry(const struct symtab *st)
{
	return st->entry;
}
