// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* resolve_sites.c: probes at sites that are not function entries: USDT
 * notes (--usdt), source lines (--line, --lines). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "elf/usdt.h"
#include "dwarf/lines.h"
#include "resolve_build.h"

/* A USDT site as a probe: entry-only, its arguments from the note. */
static int add_usdt(struct builder *b, size_t obj_idx, const struct usdt_probe *u)
{
	struct probe_set *s = b->set;
	struct probe_func *pf;

	for (size_t i = 0; i < s->n_funcs; i++)
		if (s->funcs[i].object == obj_idx && s->funcs[i].usdt &&
		    s->funcs[i].file_offset == u->file_offset)
			return 0; /* named by two patterns */
	pf = resolve_plan__new_func(b, obj_idx, u->addr, u->file_offset);
	if (!pf)
		return -ENOMEM;
	pf->ret_mode = RETURN_NONE;
	pf->usdt = true;
	pf->sema_offset = u->sema_offset;
	pf->usdt_spec.n_args = (uint32_t)(u->n_args < CMON_MAX_ARGS ? u->n_args : CMON_MAX_ARGS);
	for (uint32_t k = 0; k < pf->usdt_spec.n_args; k++) {
		struct cmon_usdt_arg *a = &pf->usdt_spec.args[k];

		a->kind = u->args[k].kind == USDT_ARG_REG   ? CMON_USDT_REG
			  : u->args[k].kind == USDT_ARG_MEM ? CMON_USDT_MEM
							    : CMON_USDT_CONST;
		a->reg_off = (uint16_t)u->args[k].reg;
		a->value = u->args[k].value;
		a->size = u->args[k].size;
		a->is_signed = u->args[k].is_signed;
	}
	if (asprintf(&pf->name, "%s:%s", u->provider, u->name) < 0) {
		pf->name = NULL;
		return -ENOMEM;
	}
	pf->usdt_args = strdup(u->args_text);
	if (!pf->usdt_args)
		return -ENOMEM;
	s->n_funcs++;
	return 1;
}

/* A source line's address as a site probe: named "FILE:LINE (function)". */
static int add_line_site(struct builder *b, size_t oi, uint64_t addr, const char *base,
			 unsigned line, bool in_lines)
{
	struct probe_set *s = b->set;
	const struct probe_object *obj = &s->objects[oi];
	const struct symtab_func *f = obj->symtab ? symtab__find_addr(obj->symtab, addr) : NULL;
	struct probe_func *pf;

	if (!f) {
		log_warn("%s:%u at %#llx in %s: in no function symbol; left out", base, line,
			 (unsigned long long)addr, obj->path);
		return 0;
	}
	for (size_t i = 0; i < s->n_funcs; i++)
		if (s->funcs[i].object == oi && s->funcs[i].usdt && s->funcs[i].addr == addr)
			return 1; /* named twice */
	pf = resolve_plan__new_func(b, oi, addr, f->file_offset + (addr - f->addr));
	if (!pf)
		return -ENOMEM;
	pf->ret_mode = RETURN_NONE;
	pf->usdt = true; /* a site: the site program, no return */
	pf->usdt_spec.kind = CMON_SITE_LINE;
	pf->in_lines = in_lines;
	if (asprintf(&pf->name, "%s:%u (%s)", base, line, f->demangled ? f->demangled : f->name) < 0) {
		pf->name = NULL;
		return -ENOMEM;
	}
	s->n_funcs++;
	return 1;
}

/* --line FILE:LINE: every is_stmt address of the line (inlined copies too),
 * in every object of the targets that has DWARF for FILE. */
int resolve_sites__line(struct builder *b, const char *spec)
{
	const char *colon = strrchr(spec, ':'), *base;
	char *file, *end;
	unsigned long line;
	size_t sites = 0;
	unsigned below = 0, above = 0;
	bool file_seen = false, *had;
	int err = 0;

	line = colon ? strtoul(colon + 1, &end, 10) : 0;
	if (!colon || colon == spec || !line || *end) {
		log_error("--line '%s': expected FILE:LINE", spec);
		return -EINVAL;
	}
	file = strndup(spec, (size_t)(colon - spec));
	if (!file)
		return -ENOMEM;
	base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	/* The local debug files first; debuginfod (a download per library
	 * mapped) only for the files without DWARF, when none had FILE. */
	had = calloc(b->set->n_objects + 1, sizeof(*had));
	if (!had) {
		free(file);
		return -ENOMEM;
	}
	for (size_t i = 0; i < 2 * b->set->n_objects && !err && !(i >= b->set->n_objects &&
								   file_seen); i++) {
		size_t oi = i % b->set->n_objects;
		struct debuginfo_opts dopts = { .no_fetch = i < b->set->n_objects };
		struct debuginfo *di;
		uint64_t *addrs = NULL;
		size_t n = 0;
		unsigned lo = 0, hi = 0;
		int e;

		if (had[oi])
			continue;
		di = debuginfo__open_opts(b->set->objects[oi].attach_path, &dopts);
		had[oi] = di && debuginfo__kind(di) == DEBUGINFO_DWARF;
		e = di ? lines__addrs(di, file, (unsigned)line, &addrs, &n, &lo, &hi) : -ENODATA;

		if (e == -ENOMEM)
			err = e;
		if (e == 0 || e == -ENOENT)
			file_seen = true;
		if (e == -ENOENT) {
			if (lo > below)
				below = lo;
			if (hi && (!above || hi < above))
				above = hi;
		}
		for (size_t k = 0; k < n && !err; k++) {
			int r = add_line_site(b, oi, addrs[k], base, (unsigned)line, false);

			if (r < 0)
				err = r;
			else
				sites += (size_t)r;
		}
		free(addrs);
		debuginfo__free(di);
	}
	if (!err && !file_seen) {
		log_error("--line %s: no DWARF line table names %s", spec, file);
		err = -ENOENT;
	} else if (!err && !sites) {
		if (below && above)
			log_error("--line %s: no code at line %lu; the nearest lines with code "
				  "are %u and %u", spec, line, below, above);
		else if (below || above)
			log_error("--line %s: no code at line %lu; the nearest line with code "
				  "is %u", spec, line, below ? below : above);
		else
			log_error("--line %s: no code at line %lu", spec, line);
		err = -ENOENT;
	}
	free(had);
	free(file);
	return err;
}

/* --lines FUNC: FUNC traced (its return closes its last line) and each of
 * its lines of code a site. */
int resolve_sites__lines_of(struct builder *b, const struct funcpattern *p)
{
	size_t before = b->set->n_funcs, after;
	int err = resolve__pattern(b, p);

	/* The functions this pattern added (one named by --func too is left
	 * to its records only). */
	after = b->set->n_funcs;
	for (size_t i = before; i < after && !err; i++) {
		struct probe_func *f = &b->set->funcs[i];
		struct debuginfo *di;
		struct line_row *rows = NULL;
		const char *file = NULL, *base;
		size_t n = 0;

		if (f->usdt || f->lines_owner)
			continue;
		f->lines_owner = true;
		di = debuginfo__open(b->set->objects[f->object].attach_path);
		if (!di || lines__in_range(di, f->addr, f->addr + (f->size ? f->size : 1), &rows,
					   &n, &file)) {
			log_error("--lines %s: %s has no DWARF line table", p->func, f->name);
			debuginfo__free(di);
			return -ENOENT;
		}
		base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
		for (size_t k = 0; k < n && !err; k++) {
			uint64_t *addrs = NULL;
			size_t na = 0;
			unsigned lo, hi;
			/* Every address of the line inside this function. */
			int e = lines__addrs(di, file, rows[k].line, &addrs, &na, &lo, &hi);

			for (size_t a = 0; !e && a < na && !err; a++) {
				if (addrs[a] < f->addr || addrs[a] >= f->addr + (f->size ? f->size : 1))
					continue;
				err = add_line_site(b, f->object, addrs[a], base, rows[k].line, true);
				err = err < 0 ? err : 0;
				f = &b->set->funcs[i]; /* the array may have moved */
			}
			free(addrs);
		}
		free(rows);
		debuginfo__free(di);
	}
	return err;
}

/* --usdt [FILE:]PROVIDER:NAME: the SDT notes of every object of the
 * targets (the executable and its libraries). */
int resolve_sites__usdt(struct builder *b, const char *spec)
{
	char *copy = strdup(spec), *name, *prov, *file = NULL;
	struct funcpattern fp = {};
	size_t matched = 0, unreadable = 0;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	name = strrchr(copy, ':');
	if (name && (name == copy || !name[1])) {
		log_error("--usdt '%s': expected [FILE:]PROVIDER:NAME", spec);
		free(copy);
		return -EINVAL;
	}
	if (!name) { /* NAME alone: any provider */
		name = copy;
		prov = "*";
	} else {
		*name++ = 0;
		prov = strrchr(copy, ':');
		if (prov) {
			*prov++ = 0;
			file = copy;
		} else {
			prov = copy;
		}
	}
	fp.object = file;
	for (size_t oi = 0; oi < b->set->n_objects && !err; oi++) {
		struct usdt_probe *u = NULL;
		size_t n = 0;

		if (!funcpattern__match_object(&fp, b->set->objects[oi].path))
			continue;
		if (usdt__read(b->set->objects[oi].attach_path, &u, &n)) {
			unreadable++;
			continue;
		}
		for (size_t k = 0; k < n && !err; k++) {
			if (fnmatch(prov, u[k].provider, 0) || fnmatch(name, u[k].name, 0))
				continue;
			if (u[k].n_args < 0 || !u[k].file_offset) {
				log_warn("USDT %s:%s in %s: argument spec '%s' cannot be read; "
					 "left out", u[k].provider, u[k].name,
					 b->set->objects[oi].path, u[k].args_text);
				continue;
			}
			err = add_usdt(b, oi, &u[k]);
			if (err > 0) {
				matched++;
				err = 0;
			}
		}
		usdt__free(u, n);
	}
	if (!err && !matched) {
		log_error("no USDT probe matches '%s' in %zu object%s", spec,
			  b->set->n_objects, b->set->n_objects == 1 ? "" : "s");
		err = -ENOENT;
	}
	free(copy);
	return err;
}

