// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pycode.c: see pycode.h. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "proc/procmem.h"
#include "python/pycode.h"
#include "python/pyvalue.h"

#define CO_VARARGS 0x4
#define CO_VARKEYWORDS 0x8
#define CO_GENERATOR 0x20
#define CO_COROUTINE 0x80
#define CO_ITERABLE_COROUTINE 0x100
#define CO_ASYNC_GENERATOR 0x200

static bool has_glob(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\')
			return true;
	return false;
}

/* Is MODULE (N bytes, dotted) a dotted tail of FILENAME's path without
 * ".py" (a '/' or a '.' of the path before it)? */
static bool module_of(const char *module, size_t n, const char *filename)
{
	size_t flen = strlen(filename), plen;

	if (flen < 4 || strcmp(filename + flen - 3, ".py"))
		return false;
	plen = flen - 3;
	if (n > plen)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = filename[plen - n + i], w = module[i];

		if (c != w && !(w == '.' && c == '/'))
			return false;
	}
	return n == plen || filename[plen - n - 1] == '/' || filename[plen - n - 1] == '.';
}

bool pycode__matches(const char *pattern, const char *qualname, const char *filename)
{
	const char *colon = strchr(pattern, ':');
	size_t len = strlen(pattern);

	if (colon) {
		size_t flen = (size_t)(colon - pattern), plen = strlen(filename);
		bool file_ok = (plen == flen && !strncmp(filename, pattern, flen)) ||
			       (plen > flen && !strncmp(filename + plen - flen, pattern, flen) &&
				filename[plen - flen - 1] == '/');

		return file_ok && !fnmatch(colon + 1, qualname, 0);
	}
	if (!fnmatch(pattern, qualname, 0))
		return true;
	/* MODULE.GLOB, MODULE a literal dotted tail of the file */
	for (size_t k = 1; k + 1 < len; k++)
		if (pattern[k] == '.' && !has_glob(pattern, k) && module_of(pattern, k, filename) &&
		    !fnmatch(pattern + k + 1, qualname, 0))
			return true;
	return false;
}

bool pycode__is_generator(const struct py_code *c)
{
	return c->flags & (CO_GENERATOR | CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR);
}

void pycode__free(struct py_code *c)
{
	if (!c)
		return;
	free(c->qualname);
	free(c->filename);
	for (int k = 0; k < CMON_PY_ALL_ARGS; k++)
		free(c->names[k]);
	free(c);
}

/* A name the kernel read (REC_TEXT, N bytes at most), else from memory. */
static char *name_of(pid_t pid, const char *rec_text, size_t n, uint64_t obj_at,
		     const struct py_layout *l)
{
	if (rec_text && rec_text[0])
		return strndup(rec_text, n);
	return obj_at ? pyvalue__str(pid, procmem__ptr(pid, obj_at), l) : NULL;
}

struct py_code *pycode__new(pid_t pid, uint64_t code, const struct cmon_py_code_rec *rec,
			    const struct py_layout *l)
{
	const struct cmon_py_offsets *o = &l->bpf;
	struct py_code *c = calloc(1, sizeof(*c));
	uint64_t names;
	int n;

	if (!c)
		return NULL;
	c->qualname = name_of(pid, rec ? rec->qualname : NULL, CMON_PY_QUALNAME_MAX,
			      code + o->code_qualname, l);
	c->filename = name_of(pid, rec ? rec->filename : NULL, CMON_PY_FILENAME_MAX,
			      code + o->code_filename, l);
	if (rec) {
		c->firstlineno = rec->firstlineno;
		c->argcount = rec->argcount;
		c->posonly = rec->posonlyargcount;
		c->kwonly = rec->kwonlyargcount;
		c->flags = rec->flags;
	} else {
		procmem__read(pid, code + o->code_firstlineno, &c->firstlineno, 4);
		procmem__read(pid, code + o->code_argcount, &c->argcount, 4);
		procmem__read(pid, code + o->code_posonlyargcount, &c->posonly, 4);
		procmem__read(pid, code + o->code_kwonlyargcount, &c->kwonly, 4);
		procmem__read(pid, code + o->code_flags, &c->flags, 4);
	}
	n = c->argcount + c->kwonly + !!(c->flags & CO_VARARGS) + !!(c->flags & CO_VARKEYWORDS);
	c->n_names = n < 0 ? 0 : n > CMON_PY_ALL_ARGS ? CMON_PY_ALL_ARGS : (unsigned)n;
	names = procmem__ptr(pid, code + o->code_localsplusnames);
	for (unsigned i = 0; i < c->n_names; i++) {
		unsigned k = (unsigned)(c->argcount + c->kwonly);
		const char *stars = (c->flags & CO_VARARGS) && i == k ? "*"
				    : (c->flags & CO_VARKEYWORDS) &&
						      i == k + !!(c->flags & CO_VARARGS) ? "**" : "";
		char *name = name_of(pid, rec ? rec->names[i] : NULL, CMON_PY_ARGNAME_MAX,
				     names ? names + o->tuple_items + 8 * (uint64_t)i : 0, l);

		if (name && stars[0]) {
			char *starred = NULL;

			if (asprintf(&starred, "%s%s", stars, name) >= 0) {
				free(name);
				name = starred;
			}
		}
		c->names[i] = name;
	}
	if (!c->qualname && asprintf(&c->qualname, "<code %#llx>", (unsigned long long)code) < 0)
		c->qualname = NULL;
	if (!c->filename)
		c->filename = strdup("?");
	if (!c->qualname || !c->filename) {
		pycode__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

/* ---- the kernel's rows ---- */

struct rows {
	struct cmon_py_pat *v;
	unsigned n, n_real; /* rows, rows other than the USER one */
	bool strict, user;  /* a USER row is there */
};

static int add_row(struct rows *r, const char *pattern, const char *qual, size_t qlen,
		   const char *file, size_t flen, uint32_t flags)
{
	struct cmon_py_pat *row;
	const char *why = NULL;

	if (!qlen)
		why = "no function name";
	else if (qlen > CMON_PY_QUALNAME_MAX - 2 || flen > CMON_PY_FILENAME_MAX - 2)
		why = "too long (names up to 126 bytes, files up to 254)";
	else if (has_glob(file, flen) || memchr(qual, '[', qlen) || memchr(qual, '\\', qlen))
		why = "a [set] or an escape (the kernel matches '*' and '?')";
	else if (r->n_real == CMON_PY_PAT_MAX - (r->strict ? 0 : 1)) /* the USER row's room kept */
		why = "too many forms (a dotted name counts once per dot and once whole)";
	if (why && r->strict) {
		log_error("--py '%s': %s for break", pattern, why);
		return -EINVAL;
	}
	if (why) {
		/* user space decides what no other row selects */
		if (!r->user) {
			row = &r->v[r->n++];
			memset(row, 0, sizeof(*row));
			row->flags = CMON_PY_PAT_USER;
			r->user = true;
		}
		return 0;
	}
	row = &r->v[r->n++];
	r->n_real++;
	memset(row, 0, sizeof(*row));
	memcpy(row->qualname, qual, qlen);
	row->qual_len = (uint32_t)qlen;
	memcpy(row->file, file, flen);
	row->file_len = (uint32_t)flen;
	row->flags = flags | (has_glob(qual, qlen) ? CMON_PY_PAT_GLOB : 0);
	return 0;
}

int pycode__rows(const char *const *patterns, size_t n, bool strict, struct cmon_py_pat **rows,
		 unsigned *n_rows)
{
	struct rows r = { .strict = strict };
	int err = 0;

	r.v = calloc(CMON_PY_PAT_MAX, sizeof(*r.v));
	if (!r.v) {
		log_error("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !err; i++) {
		const char *p = patterns[i], *colon = strchr(p, ':');
		size_t len = strlen(p);

		if (colon) {
			/* FILE:qualname: FILE, or a path ending in "/FILE" */
			if (colon == p) {
				log_error("--py '%s': no file before ':'", p);
				err = -EINVAL;
				break;
			}
			err = add_row(&r, p, colon + 1, strlen(colon + 1), p, (size_t)(colon - p), 0);
			continue;
		}
		err = add_row(&r, p, p, len, "", 0, 0);
		/* module.qualname: the module a dotted tail of the file's path */
		for (size_t k = 1; !err && k + 1 < len; k++) {
			char file[CMON_PY_FILENAME_MAX];

			if (p[k] != '.' || has_glob(p, k))
				continue;
			if (k + 3 >= sizeof(file)) {
				err = add_row(&r, p, p + k + 1, len - k - 1, p, sizeof(file),
					      CMON_PY_PAT_MODULE);
				continue;
			}
			memcpy(file, p, k);
			memcpy(file + k, ".py", 3);
			err = add_row(&r, p, p + k + 1, len - k - 1, file, k + 3, CMON_PY_PAT_MODULE);
		}
	}
	if (err) {
		free(r.v);
		return err;
	}
	*rows = r.v;
	*n_rows = r.n;
	return 0;
}
