// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpath.c: find a program and the libraries it will load the way execvp
 * and the x86-64 glibc loader (ld.so) do, without running it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <unistd.h>
#include <sys/stat.h>
#include "core/grow.h"
#include "core/file.h"
#include "core/strv.h"
#include "elf/dynamic.h"
#include "core/log.h"
#include "proc/libpath.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define LD_CACHE_FILE "/etc/ld.so.cache"

static const char *const default_lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

/* What $LIB may stand for: Debian's loader says lib/x86_64-linux-gnu,
 * other builds lib64 or lib. */
static const char *const lib_dst_values[] = { "lib/x86_64-linux-gnu", "lib64", "lib" };

/* ---- small helpers ---- */

/* Make P absolute against the working directory ("./x" -> "$PWD/x"). */
static int make_absolute(const char *p, char **out)
{
	char *cwd = NULL;
	int err = 0;

	*out = NULL;
	if (p[0] == '/') {
		*out = strdup(p);
		return *out ? 0 : -ENOMEM;
	}
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return -errno;
	while (p[0] == '.' && p[1] == '/') {
		p += 2;
		while (*p == '/')
			p++;
	}
	if (asprintf(out, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", p) < 0) {
		*out = NULL;
		err = -ENOMEM;
	}
	free(cwd);
	return err;
}

static int join_path(const char *dir, const char *name, char **out)
{
	size_t len = strlen(dir);
	const char *sep = len && dir[len - 1] == '/' ? "" : "/";

	if (asprintf(out, "%s%s%s", dir, sep, name) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

void libpath__free(char **paths, size_t count)
{
	strv__free(paths, count);
}

/* ---- executables ---- */

/* 0 for a regular file we may execute, else -ENOENT or -EACCES as execve
 * would fail on it. */
static int check_exe(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return errno == EACCES ? -EACCES : -ENOENT;
	if (!S_ISREG(st.st_mode) || eaccess(path, X_OK))
		return -EACCES;
	return 0;
}

int libpath__find_exe(const char *cmd, char **path)
{
	const char *dirs, *p;
	bool eacces = false;
	int err;

	if (!path)
		return -EINVAL;
	*path = NULL;
	if (!cmd || !*cmd)
		return -ENOENT;
	if (strchr(cmd, '/')) {
		err = check_exe(cmd);
		return err ? err : make_absolute(cmd, path);
	}
	dirs = getenv("PATH");
	if (!dirs)
		dirs = DEFAULT_PATH;
	for (p = dirs;; p++) {
		const char *end = strchrnul(p, ':');
		char *cand = NULL;

		/* An empty entry is the working directory, as for execvp. */
		if (end == p)
			err = asprintf(&cand, "%s", cmd);
		else
			err = asprintf(&cand, "%.*s/%s", (int)(end - p), p, cmd);
		if (err < 0)
			return -ENOMEM;
		err = check_exe(cand);
		if (!err) {
			err = make_absolute(cand, path);
			free(cand);
			return err;
		}
		eacces |= err == -EACCES;
		free(cand);
		p = end;
		if (!*p)
			break;
	}
	return eacces ? -EACCES : -ENOENT;
}

/* ---- /etc/ld.so.cache ---- */

/* Layouts from glibc's dl-cache.h.  The new format may follow an old one. */
#define CACHE_MAGIC_OLD "ld.so-1.7.0"
#define CACHE_MAGIC_NEW "glibc-ld.so.cache1.1"
#define CACHE_OLD_HDR 16   /* magic[11], pad, nlibs */
#define CACHE_OLD_ENTRY 12 /* flags, key, value */
#define CACHE_NEW_HDR 48   /* magic[20], nlibs, len_strings, flags, pad, ext, unused[3] */
#define CACHE_NEW_ENTRY 24 /* flags, key, value, osversion, hwcap */
#define CACHE_NEW_ALIGN 8
/* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64: what the x86-64 loader accepts. */
#define CACHE_FLAGS_X86_64 0x0303

struct ld_cache {
	unsigned char *data;
	size_t size;
	const unsigned char *entries;
	size_t nlibs, entry_size;
	const char *strings; /* what string offsets count from */
	size_t strings_size;
	bool new_format;
};

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void ld_cache__release(struct ld_cache *c)
{
	free(c->data);
	memset(c, 0, sizeof(*c));
}

static int ld_cache__parse(struct ld_cache *c)
{
	size_t off = 0, nlibs;

	if (c->size >= CACHE_OLD_HDR &&
	    !memcmp(c->data, CACHE_MAGIC_OLD, strlen(CACHE_MAGIC_OLD))) {
		size_t old_n = rd32(c->data + 12);

		if (old_n > (c->size - CACHE_OLD_HDR) / CACHE_OLD_ENTRY)
			return -EINVAL;
		off = CACHE_OLD_HDR + old_n * CACHE_OLD_ENTRY;
		off = (off + CACHE_NEW_ALIGN - 1) & ~(size_t)(CACHE_NEW_ALIGN - 1);
		if (off > c->size || c->size - off < CACHE_NEW_HDR ||
		    memcmp(c->data + off, CACHE_MAGIC_NEW, strlen(CACHE_MAGIC_NEW))) {
			/* Old format alone: strings follow the entries. */
			c->entries = c->data + CACHE_OLD_HDR;
			c->nlibs = old_n;
			c->entry_size = CACHE_OLD_ENTRY;
			c->strings = (const char *)c->entries + old_n * CACHE_OLD_ENTRY;
			c->strings_size = c->size - CACHE_OLD_HDR - old_n * CACHE_OLD_ENTRY;
			return 0;
		}
	} else if (c->size < CACHE_NEW_HDR ||
		   memcmp(c->data, CACHE_MAGIC_NEW, strlen(CACHE_MAGIC_NEW))) {
		return -EINVAL;
	}
	/* flags byte: 0 unknown, 2 little endian; 1 invalid, 3 big endian. */
	if (c->data[off + 28] == 1 || c->data[off + 28] == 3)
		return -EINVAL;
	nlibs = rd32(c->data + off + 20);
	if (nlibs > (c->size - off - CACHE_NEW_HDR) / CACHE_NEW_ENTRY)
		return -EINVAL;
	c->new_format = true;
	c->entries = c->data + off + CACHE_NEW_HDR;
	c->nlibs = nlibs;
	c->entry_size = CACHE_NEW_ENTRY;
	/* String offsets count from the start of the new header. */
	c->strings = (const char *)c->data + off;
	c->strings_size = c->size - off;
	return 0;
}

static int ld_cache__load(const char *file, struct ld_cache *c)
{
	int err;

	memset(c, 0, sizeof(*c));
	err = file__read_all(file, 0, (char **)&c->data, &c->size);
	if (err)
		return err;
	err = ld_cache__parse(c);
	if (err)
		ld_cache__release(c);
	return err;
}

static const char *ld_cache__string(const struct ld_cache *c, uint32_t off)
{
	if (off >= c->strings_size || !memchr(c->strings + off, '\0', c->strings_size - off))
		return NULL;
	return c->strings + off;
}

/* The path the cache gives for NAME, or NULL.  An entry for a glibc-hwcaps
 * subdirectory (hwcap != 0) is taken only when there is no baseline one:
 * which CPU levels the loader would pick is not worked out here. */
static const char *ld_cache__find(const struct ld_cache *c, const char *name)
{
	const char *fallback = NULL;

	for (size_t i = 0; i < c->nlibs; i++) {
		const unsigned char *e = c->entries + i * c->entry_size;
		const char *key, *value;

		if (rd32(e) != CACHE_FLAGS_X86_64)
			continue;
		key = ld_cache__string(c, rd32(e + 4));
		if (!key || strcmp(key, name))
			continue;
		value = ld_cache__string(c, rd32(e + 8));
		if (!value)
			continue;
		if (!c->new_format || rd64(e + 16) == 0)
			return value;
		if (!fallback)
			fallback = value;
	}
	return fallback;
}

int libpath__cache_lookup(const char *cache_file, const char *name, char **path)
{
	struct ld_cache c;
	const char *found;
	int err;

	if (!name || !path)
		return -EINVAL;
	*path = NULL;
	err = ld_cache__load(cache_file ? cache_file : LD_CACHE_FILE, &c);
	if (err)
		return err;
	found = ld_cache__find(&c, name);
	if (!found) {
		err = -ENOENT;
	} else {
		*path = strdup(found);
		if (!*path)
			err = -ENOMEM;
	}
	ld_cache__release(&c);
	return err;
}

/* ---- the loader's search ---- */

/* One object of the link map being built. */
struct lp_obj {
	char *path;   /* absolute */
	char *origin; /* what $ORIGIN stands for, NULL if unknown */
	struct elf_dynamic info;
	char **names; /* names it answers to: the ones asked for, its soname */
	size_t n_names;
	ssize_t loader; /* the object whose DT_NEEDED brought it in, -1 */
	bool listed;    /* in ORDER yet (the interpreter waits until needed) */
};

struct lp_map {
	struct lp_obj *objs; /* objs[0] is the executable when there is one */
	size_t n, cap;
	size_t *order; /* breadth-first: the result order */
	size_t n_order, cap_order;
	bool has_exe;
	struct ld_cache cache;
	int cache_state; /* 0 not read, 1 read, <0 unusable */
};

static void lp_obj__clear(struct lp_obj *o)
{
	free(o->path);
	free(o->origin);
	elf_dynamic__clear(&o->info);
	strv__free(o->names, o->n_names);
}

static void lp_map__release(struct lp_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		lp_obj__clear(&m->objs[i]);
	free(m->objs);
	free(m->order);
	if (m->cache_state > 0)
		ld_cache__release(&m->cache);
	memset(m, 0, sizeof(*m));
}

/* Expand the dynamic string tokens of one search directory; $LIB gives
 * each of lib_dst_values in turn (LIB_IDX).  -ENOENT when the entry needs
 * an $ORIGIN we do not know: the loader drops such entries too. */
static int expand_dst(const char *in, const char *origin, size_t lib_idx, char **out,
		      bool *has_lib)
{
	static const struct {
		const char *name;
		int kind;
	} tokens[] = { { "ORIGIN", 0 }, { "LIB", 1 }, { "PLATFORM", 2 } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err = 0;

	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	for (const char *p = in; *p;) {
		const char *value = NULL;
		size_t skip = 0;

		if (*p == '$') {
			bool braced = p[1] == '{';
			const char *name = p + 1 + braced;

			for (size_t t = 0; t < sizeof(tokens) / sizeof(tokens[0]); t++) {
				size_t tl = strlen(tokens[t].name);
				char next;

				/* compared first: NAME may end before TL bytes */
				if (strncmp(name, tokens[t].name, tl))
					continue;
				next = name[tl];
				if (braced ? next != '}' :
					     (next == '_' || (next >= 'A' && next <= 'Z') ||
					      (next >= 'a' && next <= 'z') ||
					      (next >= '0' && next <= '9')))
					continue;
				skip = 1 + braced + tl + braced;
				if (tokens[t].kind == 0) {
					value = origin;
					if (!value)
						err = -ENOENT;
				} else if (tokens[t].kind == 1) {
					value = lib_dst_values[lib_idx];
					*has_lib = true;
				} else {
					value = "x86_64";
				}
				break;
			}
		}
		if (err)
			break;
		if (skip) {
			fputs(value, f);
			p += skip;
		} else {
			fputc(*p++, f);
		}
	}
	if (fclose(f))
		err = err ? err : -ENOMEM;
	if (err)
		free(buf);
	else
		*out = buf;
	return err;
}

/* Accept PATH if it is an x86-64 ELF the loader would take. */
static int try_candidate(const char *path, char **found, struct elf_dynamic *info)
{
	int err = elf_dynamic__load(path, info);

	if (err) {
		if (err == -ENOEXEC)
			log_debug("%s: not an x86-64 ELF object, passed over", path);
		return err;
	}
	err = make_absolute(path, found);
	if (err)
		elf_dynamic__clear(info);
	return err;
}

/* A candidate that cannot be taken just means "not there". */
static int candidate_result(int err)
{
	return err == -ENOMEM || !err ? err : -ENOENT;
}

/* Look for NAME in each directory of the list DIRS (separated by any of
 * SEPS), $ORIGIN being ORIGIN.  0 when found, -ENOENT when not. */
static int try_dirs(const char *dirs, const char *seps, const char *origin, const char *name,
		    char **found, struct elf_dynamic *info)
{
	const char *p = dirs;

	for (;;) {
		size_t len = strcspn(p, seps);
		char *entry = strndup(p, len);
		bool has_lib = false;
		int err = 0;

		if (!entry)
			return -ENOMEM;
		for (size_t lib = 0; lib < sizeof(lib_dst_values) / sizeof(lib_dst_values[0]); lib++) {
			char *dir = NULL, *cand = NULL;

			err = expand_dst(entry, origin, lib, &dir, &has_lib);
			if (err)
				break;
			/* An empty entry is the working directory. */
			err = join_path(*dir ? dir : ".", name, &cand);
			free(dir);
			if (err)
				break;
			err = try_candidate(cand, found, info);
			free(cand);
			if (!err || err == -ENOMEM || !has_lib)
				break;
		}
		free(entry);
		if (!err || err == -ENOMEM)
			return err;
		p += len;
		if (!*p)
			return -ENOENT;
		p++;
	}
}

static int try_cache(struct lp_map *m, const char *name, char **found, struct elf_dynamic *info)
{
	const char *path;

	if (m->cache_state == 0) {
		int err = ld_cache__load(LD_CACHE_FILE, &m->cache);

		if (err)
			log_debug("%s: unusable (%s)", LD_CACHE_FILE, strerror(-err));
		m->cache_state = err ? err : 1;
	}
	if (m->cache_state < 0)
		return -ENOENT;
	path = ld_cache__find(&m->cache, name);
	if (!path)
		return -ENOENT;
	return candidate_result(try_candidate(path, found, info));
}

/* Search NAME as the loader does for object LOADER (-1: none): DT_RPATH
 * up the chain of loaders and of the executable (unless LOADER has a
 * DT_RUNPATH), LD_LIBRARY_PATH, LOADER's DT_RUNPATH, the cache, the
 * default directories. */
static int lp_search(struct lp_map *m, ssize_t loader, const char *name, char **found,
		     struct elf_dynamic *info)
{
	const struct lp_obj *lo = loader >= 0 ? &m->objs[loader] : NULL;
	const char *llp;
	int err;

	*found = NULL;
	if (strchr(name, '/')) {
		return candidate_result(try_candidate(name, found, info));
	}

	/* Every chain of loaders ends at the executable, so its DT_RPATH comes
	 * last here, as ld.so searches it. */
	if (lo && !lo->info.runpath) {
		for (ssize_t l = loader; l >= 0; l = m->objs[l].loader) {
			const struct lp_obj *o = &m->objs[l];

			if (!o->info.rpath || o->info.runpath)
				continue;
			err = try_dirs(o->info.rpath, ":", o->origin, name, found, info);
			if (err != -ENOENT)
				return err;
		}
	}
	/* Without an executable, only the cache and default directories. */
	llp = m->has_exe ? getenv("LD_LIBRARY_PATH") : NULL;
	if (llp && *llp) {
		err = try_dirs(llp, ":;", m->objs[0].origin, name, found, info);
		if (err != -ENOENT)
			return err;
	}
	if (lo && lo->info.runpath) {
		err = try_dirs(lo->info.runpath, ":", lo->origin, name, found, info);
		if (err != -ENOENT)
			return err;
	}
	if (lo && lo->info.nodeflib)
		return -ENOENT;
	err = try_cache(m, name, found, info);
	if (err != -ENOENT)
		return err;
	for (size_t i = 0; i < sizeof(default_lib_dirs) / sizeof(default_lib_dirs[0]); i++) {
		err = try_dirs(default_lib_dirs[i], ":", NULL, name, found, info);
		if (err != -ENOENT)
			return err;
	}
	return -ENOENT;
}

static char *dirname_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return NULL;
	return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* Append an object; takes PATH and INFO.  Returns its index or -ENOMEM. */
static ssize_t lp_map__add(struct lp_map *m, char *path, struct elf_dynamic *info,
			   ssize_t loader)
{
	struct lp_obj *o;

	if (GROW(m->objs, m->n, m->cap, 8)) {
		free(path);
		elf_dynamic__clear(info);
		return -ENOMEM;
	}
	o = &m->objs[m->n];
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->info = *info;
	memset(info, 0, sizeof(*info));
	o->loader = loader;
	o->origin = dirname_of(path);
	m->n++;
	if (!o->origin || (o->info.soname && strv__push(&o->names, &o->n_names, o->info.soname)))
		return -ENOMEM;
	return (ssize_t)(m->n - 1);
}

static int lp_map__list(struct lp_map *m, size_t idx)
{
	if (m->objs[idx].listed)
		return 0;
	if (GROW(m->order, m->n_order, m->cap_order, 8))
		return -ENOMEM;
	m->order[m->n_order++] = idx;
	m->objs[idx].listed = true;
	return 0;
}

static ssize_t lp_map__by_name(const struct lp_map *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct lp_obj *o = &m->objs[i];

		if (!strcmp(o->path, name))
			return (ssize_t)i;
		for (size_t j = 0; j < o->n_names; j++)
			if (!strcmp(o->names[j], name))
				return (ssize_t)i;
	}
	return -1;
}

static ssize_t lp_map__by_file(const struct lp_map *m, const struct elf_dynamic *info)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->objs[i].info.dev == info->dev && m->objs[i].info.ino == info->ino)
			return (ssize_t)i;
	return -1;
}

/* Bring in NAME, needed by object LOADER: an object already loaded under
 * that name or from that file is reused, as the loader does. */
static int lp_map__need(struct lp_map *m, size_t loader, const char *name)
{
	struct elf_dynamic info;
	char *found = NULL;
	ssize_t idx;
	int err;

	idx = lp_map__by_name(m, name);
	if (idx >= 0)
		return lp_map__list(m, (size_t)idx);
	err = lp_search(m, (ssize_t)loader, name, &found, &info);
	if (err == -ENOENT) {
		log_debug("%s: needed by %s, not found", name, m->objs[loader].path);
		return 0;
	}
	if (err)
		return err;
	idx = lp_map__by_file(m, &info);
	if (idx >= 0) {
		free(found);
		elf_dynamic__clear(&info);
		err = strv__push(&m->objs[idx].names, &m->objs[idx].n_names, name);
		return err ? err : lp_map__list(m, (size_t)idx);
	}
	idx = lp_map__add(m, found, &info, (ssize_t)loader);
	if (idx < 0)
		return (int)idx;
	err = strv__push(&m->objs[idx].names, &m->objs[idx].n_names, name);
	return err ? err : lp_map__list(m, (size_t)idx);
}

/* objs[0] := EXE.  $ORIGIN of the executable is where it really is: the
 * loader takes it from /proc/self/exe. */
static int lp_map__add_exe(struct lp_map *m, const char *exe)
{
	struct elf_dynamic info;
	char *path = NULL, *real;
	ssize_t idx;
	int err;

	err = elf_dynamic__load(exe, &info);
	if (err)
		return err;
	err = make_absolute(exe, &path);
	if (err) {
		elf_dynamic__clear(&info);
		return err;
	}
	idx = lp_map__add(m, path, &info, -1);
	if (idx < 0)
		return (int)idx;
	m->has_exe = true;
	real = realpath(exe, NULL);
	if (real) {
		free(m->objs[0].origin);
		m->objs[0].origin = dirname_of(real);
		free(real);
		if (!m->objs[0].origin)
			return -ENOMEM;
	}
	return lp_map__list(m, 0);
}

int libpath__needed_closure(const char *exe, char ***paths, size_t *count)
{
	struct lp_map m = { 0 };
	char **out = NULL;
	size_t n_out = 0;
	ssize_t interp = -1;
	int err;

	if (!exe || !paths || !count)
		return -EINVAL;
	*paths = NULL;
	*count = 0;
	err = lp_map__add_exe(&m, exe);
	if (err)
		goto cleanup;

	/* The interpreter is in the link map from the start, under its
	 * PT_INTERP name and soname; it takes its place in the order when a
	 * library needs it, else at the end. */
	if (m.objs[0].info.interp) {
		struct elf_dynamic info;
		char *path = NULL;
		const char *ip = m.objs[0].info.interp;

		err = try_candidate(ip, &path, &info);
		if (err == -ENOMEM)
			goto cleanup;
		if (err) {
			log_debug("%s: interpreter %s not usable (%s)", m.objs[0].path, ip,
				  strerror(-err));
		} else if (lp_map__by_file(&m, &info) < 0) {
			interp = lp_map__add(&m, path, &info, -1);
			if (interp < 0) {
				err = (int)interp;
				goto cleanup;
			}
		} else {
			free(path);
			elf_dynamic__clear(&info);
		}
		err = 0;
	}

	for (size_t i = 0;; i++) {
		if (i == m.n_order) {
			if (interp < 0 || m.objs[interp].listed)
				break;
			err = lp_map__list(&m, (size_t)interp);
			if (err)
				goto cleanup;
		}
		size_t cur = m.order[i];

		for (size_t j = 0; j < m.objs[cur].info.n_needed; j++) {
			err = lp_map__need(&m, cur, m.objs[cur].info.needed[j]);
			if (err)
				goto cleanup;
		}
	}

	for (size_t i = 0; i < m.n_order; i++) {
		err = strv__push(&out, &n_out, m.objs[m.order[i]].path);
		if (err)
			goto cleanup;
	}
	*paths = out;
	*count = n_out;
	out = NULL;

cleanup:
	strv__free(out, n_out);
	lp_map__release(&m);
	return err;
}

int libpath__find_library(const char *exe, const char *name, char **path)
{
	struct lp_map m = { 0 };
	struct elf_dynamic info = { 0 };
	int err;

	if (!name || !*name || !path)
		return -EINVAL;
	*path = NULL;
	if (exe) {
		err = lp_map__add_exe(&m, exe);
		if (err)
			goto cleanup;
	}
	err = lp_search(&m, exe ? 0 : -1, name, path, &info);

cleanup:
	elf_dynamic__clear(&info);
	lp_map__release(&m);
	return err;
}

/* DIR/BASE when it is a regular file. */
static int regular_in(const char *dir, const char *base, char **path)
{
	struct stat st;
	int err = join_path(dir, base, path);

	if (err)
		return err;
	if (!stat(*path, &st) && S_ISREG(st.st_mode))
		return 0;
	free(*path);
	*path = NULL;
	return -ENOENT;
}

/* The first (by name) regular file of DIR that ACCEPT takes. */
static int scan_dir(const char *dir, bool (*accept)(const char *, void *), void *ctx,
		    char **path)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort), err = -ENOENT;

	for (int i = 0; i < n; i++) {
		if (err && accept(ents[i]->d_name, ctx))
			err = regular_in(dir, ents[i]->d_name, path);
		free(ents[i]);
	}
	free(ents);
	return err == -ENOMEM ? err : (*path ? 0 : -ENOENT);
}

int libpath__find_beside(const char *exe, const char *name,
			 bool (*accept)(const char *file_name, void *ctx), void *ctx, char **path)
{
	char *dirs[2] = { NULL, NULL }, *exe_abs = NULL;
	int err = -ENOENT;

	*path = NULL;
	if (!strchr(name, '/')) {
		dirs[0] = getcwd(NULL, 0);
		if (exe && !make_absolute(exe, &exe_abs))
			dirs[1] = strdup(dirname(exe_abs));
	}
	for (int i = 0; i < 2 && err == -ENOENT; i++) {
		if (!dirs[i] || (i == 1 && dirs[0] && !strcmp(dirs[0], dirs[1])))
			continue;
		err = regular_in(dirs[i], name, path);
		if (err == -ENOENT)
			err = scan_dir(dirs[i], accept, ctx, path);
	}
	free(dirs[0]);
	free(dirs[1]);
	free(exe_abs);
	return err;
}
