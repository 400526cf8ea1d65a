// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * debugfile.c: a stripped file's separate debug file, by build ID,
 * .gnu_debuglink or debuginfod (debugfile.h has the order), each
 * candidate checked before it is used.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "core/log.h"
#include "elf/debugfile.h"
#include "elf/debuginfod.h"

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"

const char *debugfile_source__name(enum debugfile_source s)
{
	switch (s) {
	case DEBUGFILE_BUILD_ID: return "build-id";
	case DEBUGFILE_DEBUGLINK: return ".gnu_debuglink";
	case DEBUGFILE_DEBUGINFOD: return "debuginfod";
	}
	return "?";
}

void debugfile__scan(Elf *elf, bool *debug_info, bool *gnu_debugdata)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	*debug_info = *gnu_debugdata = false;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			*debug_info = true;
		else if (name && !strcmp(name, ".gnu_debugdata"))
			*gnu_debugdata = true;
	}
}

/* A problem with a debug file: said once a run, however many times the
 * file is opened (each command opens it for lines, types...). */
static bool warn_once(const char *cand)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static char *seen[64];
	static size_t n;
	bool first = true;

	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < n && first; i++)
		first = strcmp(seen[i], cand) != 0;
	if (first && n < sizeof(seen) / sizeof(seen[0]))
		seen[n++] = strdup(cand);
	pthread_mutex_unlock(&mu);
	return first;
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

struct want {
	const char *path;       /* the stripped file, for messages */
	const unsigned char *bid;
	ssize_t bid_len;
	bool have_crc;          /* .gnu_debuglink's: when the file has no build ID */
	uint32_t crc;
};

/* Open CAND and check it.  0 and *OUT, -ENOENT (not there), or -EBADMSG
 * with *WHY (static text): not one to use. */
static int check(const char *cand, const struct want *w, enum debugfile_source src,
		 struct debugfile *out, const char **why)
{
	int fd = open(cand, O_RDONLY | O_CLOEXEC);
	const void *dbid;
	ssize_t dbid_len;
	bool info, dd;
	Elf *elf;

	if (fd < 0)
		return -ENOENT;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	*why = NULL;
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		*why = "not an ELF file";
		goto reject;
	}
	debugfile__scan(elf, &info, &dd);
	if (!info) {
		*why = "it has no .debug_info";
		goto reject;
	}
	dbid_len = dwelf_elf_gnu_build_id(elf, &dbid);
	if (w->bid_len > 0 && dbid_len > 0) {
		if (w->bid_len != dbid_len || memcmp(w->bid, dbid, (size_t)dbid_len)) {
			*why = "its build ID is another file's";
			goto reject;
		}
	} else if (src == DEBUGFILE_DEBUGLINK && w->have_crc) {
		uint32_t c = 0;

		if (crc_file(fd, &c) != 0 || c != w->crc) {
			*why = "its CRC is not the one .gnu_debuglink names";
			goto reject;
		}
	} else {
		*why = "it has no build ID to check";
		goto reject;
	}
	out->fd = fd;
	out->elf = elf;
	out->source = src;
	out->path = strdup(cand);
	if (!out->path) {
		debugfile__close(out);
		return -ENOMEM;
	}
	return 0;
reject:
	if (elf)
		elf_end(elf);
	close(fd);
	return -EBADMSG;
}

/* A local candidate: a wrong one is said once and skipped. */
static int try_local(const char *cand, const struct want *w, enum debugfile_source src,
		     struct debugfile *out)
{
	const char *why;
	int err = check(cand, w, src, out, &why);

	if (err == -EBADMSG && warn_once(cand))
		log_warn("%s: %s is not its debug file (%s): not used", w->path, cand, why);
	return err == -ENOMEM ? err : err ? -ENOENT : 0;
}

static int by_build_id(const char *root, const struct want *w, struct debugfile *out)
{
	char *cand = malloc(strlen(root) + 2 * (size_t)w->bid_len + 32);
	char *p;
	int err;

	if (w->bid_len < 2)
		return -ENOENT;
	if (!cand)
		return -ENOMEM;
	p = cand + sprintf(cand, "%s/.build-id/%02x/", root, w->bid[0]);
	for (ssize_t i = 1; i < w->bid_len; i++)
		p += sprintf(p, "%02x", w->bid[i]);
	strcpy(p, ".debug");
	err = try_local(cand, w, DEBUGFILE_BUILD_ID, out);
	free(cand);
	return err;
}

static int by_debuglink(Elf *elf, const char *root, const char *link_dir, struct want *w,
			struct debugfile *out)
{
	GElf_Word crc;
	const char *name = dwelf_elf_gnu_debuglink(elf, &crc);
	char *copy = NULL, *cand = NULL;
	const char *dir;
	int err = -ENOENT;

	if (!name || !*name)
		return -ENOENT;
	w->have_crc = true;
	w->crc = crc;
	if (!link_dir) {
		copy = strdup(w->path);
		if (!copy)
			return -ENOMEM;
	}
	dir = link_dir ? link_dir : dirname(copy);
	const char *fmts[] = { "%s/%s", "%s/.debug/%s", NULL };
	for (int i = 0; err == -ENOENT && fmts[i]; i++) {
		if (asprintf(&cand, fmts[i], dir, name) < 0) {
			err = -ENOMEM;
			break;
		}
		err = try_local(cand, w, DEBUGFILE_DEBUGLINK, out);
		free(cand);
	}
	if (err == -ENOENT && dir[0] == '/') {
		if (asprintf(&cand, "%s%s/%s", root, dir, name) < 0) {
			err = -ENOMEM;
		} else {
			err = try_local(cand, w, DEBUGFILE_DEBUGLINK, out);
			free(cand);
		}
	}
	free(copy);
	return err;
}

static int by_debuginfod(const struct want *w, struct debugfile *out)
{
	char *cand = NULL;
	const char *why;
	int err;

	if (w->bid_len <= 0)
		return -ENOENT;
	err = debuginfod__find(w->bid, (size_t)w->bid_len, w->path, &cand);
	if (err == -EAGAIN || err == -ENOMEM) {
		return err;
	} else if (err) {
		return -ENOENT;
	}
	err = check(cand, w, DEBUGFILE_DEBUGINFOD, out, &why);
	if (err == -EBADMSG) {
		debuginfod__reject(w->bid, (size_t)w->bid_len, w->path, cand, why);
		err = -ENOENT;
	}
	free(cand);
	return err;
}

int debugfile__find(Elf *elf, const char *path, const struct debugfile_opts *o,
		    struct debugfile *out)
{
	struct want w = { .path = path };
	char root_buf[64];
	const char *root = o && o->debug_root ? o->debug_root : NULL;
	int pid, at = 0, err;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	/* /proc/PID/root/...: the debug files live in that mount namespace. */
	if (!root && sscanf(path, "/proc/%d/%n", &pid, &at) == 1 && at &&
	    (!strncmp(path + at, "root/", 5) || !strncmp(path + at, "map_files/", 10))) {
		snprintf(root_buf, sizeof(root_buf), "/proc/%d/root" DEFAULT_DEBUG_ROOT, pid);
		root = root_buf;
	}
	if (!root)
		root = DEFAULT_DEBUG_ROOT;
	w.bid_len = dwelf_elf_gnu_build_id(elf, (const void **)&w.bid);
	err = by_build_id(root, &w, out);
	if (err == -ENOENT)
		err = by_debuglink(elf, root, o ? o->link_dir : NULL, &w, out);
	if (err == -ENOENT && !(o && o->no_fetch))
		err = by_debuginfod(&w, out);
	return err;
}

void debugfile__close(struct debugfile *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	f->elf = NULL;
	f->fd = -1;
	f->path = NULL;
}
