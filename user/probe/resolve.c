// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* resolve.c: a probe set from the user's targets and patterns: the
 * functions each pattern names (symbols, debug symbols, IFUNCs, '!'
 * exclusions), and the steps of resolve_targets.c, resolve_plan.c and
 * resolve_sites.c run in order (resolve_build.h). */
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core/log.h"
#include "core/similar.h"
#include "dwarf/inlined.h"
#include "dwarf/debuginfo.h"
#include "resolve_build.h"


const char *return_mode__name(enum return_mode m)
{
	switch (m) {
	case RETURN_URETPROBE:
		return "uretprobe";
	case RETURN_INSN:
		return "ret-insn";
	default:
		return "none";
	}
}

enum return_choice return_choice__duty_cycled(enum return_choice c)
{
	return c == RETURN_AUTO ? RETURN_PREFER_INSN : c;
}

int return_choice__parse(const char *s, enum return_choice *out)
{
	static const struct {
		const char *name;
		enum return_choice choice;
	} table[] = {
		{ "auto", RETURN_AUTO },
		{ "uretprobe", RETURN_FORCE_URETPROBE },
		{ "insn", RETURN_FORCE_INSN },
		{ "ret-insn", RETURN_FORCE_INSN },
		{ "none", RETURN_OFF },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (!strcmp(s, table[i].name)) {
			*out = table[i].choice;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *target_desc(const struct resolve_opts *o, char *buf, size_t len)
{
	if (o->binary)
		snprintf(buf, len, "%s", o->binary);
	else if (o->cgroup_desc)
		snprintf(buf, len, "%s", o->cgroup_desc);
	else if (o->launch_exe)
		snprintf(buf, len, "%s and its libraries", o->launch_exe);
	else if (o->n_pids == 1)
		snprintf(buf, len, "process %d", o->pids[0]);
	else
		snprintf(buf, len, "%zu processes", o->n_pids);
	return buf;
}

struct match {
	size_t obj;
	const struct symtab_func *f; /* NULL: OWN */
	struct symtab_func own;      /* from a debug file, placed in the object */
	const char *as; /* the name to show (an IFUNC's); NULL: F's */
};

struct loaded_copy {
	uint64_t dev, ino;
	const char *name;
	uint64_t base;
	bool found;
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded_copy *c = data;
	struct stat st;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0] && !stat(info->dlpi_name, &st) &&
	    (uint64_t)st.st_dev == c->dev && (uint64_t)st.st_ino == c->ino) {
		c->name = info->dlpi_name;
		c->base = (uint64_t)info->dlpi_addr;
		c->found = true;
		return 1;
	}
	return 0;
}

/* The function at ADDR of OBJ in its debug file's symbols (which name
 * the local ones, an IFUNC's implementations among them), into *OUT,
 * placed in OBJ.  0 or -errno. */
static int debug_symbol(struct builder *b, const struct probe_object *obj, uint64_t addr,
			struct symtab_func *out)
{
	struct debuginfo *di = debuginfo__open(obj->attach_path);
	const char *path = di ? debuginfo__dwarf_path(di) : NULL;
	const struct symtab_func *f;
	struct symtab *st = NULL;

	if (path && strcmp(path, obj->attach_path))
		st = symtab__open(path);
	debuginfo__free(di);
	if (!st)
		return -ENOENT;
	if (GROW(b->aux, b->n_aux, b->cap_aux, 4)) {
		symtab__free(st);
		return -ENOMEM;
	}
	b->aux[b->n_aux++] = st;
	f = symtab__find_addr(st, addr);
	if (!f || f->addr != addr || !symtab__offset_at_addr(obj->symtab, addr, &out->file_offset))
		return -ENOENT;
	out->name = f->name;
	out->demangled = NULL;
	out->version = NULL;
	out->addr = f->addr;
	out->size = f->size;
	out->ifunc = out->dynamic = false;
	return 0;
}

/*
 * The implementation IFUNC F of OBJ resolves to on this host: a function
 * of OBJ's symbols (*IMPL), or one from its debug file (into *OWN); false
 * when not known.  cmon's own copy of that very file (same inode: libc,
 * mostly) is asked through the dynamic linker, which runs F's resolver:
 * the target's runs the same code on the same CPU (GLIBC_TUNABLES set
 * differently in the target could choose otherwise).
 */
static bool ifunc_target(struct builder *b, const struct probe_object *obj,
			 const struct symtab_func *f, const struct symtab_func **impl,
			 struct symtab_func *own)
{
	struct loaded_copy c = { .dev = obj->dev, .ino = obj->ino };
	uint64_t addr;
	void *h, *p;

	*impl = NULL;
	if (!dl_iterate_phdr(find_loaded, &c) || !c.found)
		return false;
	h = dlopen(c.name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return false;
	p = dlsym(h, f->name);
	dlclose(h);
	if (!p || (uint64_t)p < c.base)
		return false;
	addr = (uint64_t)p - c.base;
	*impl = symtab__find_addr(obj->symtab, addr);
	if (*impl && (*impl)->addr == addr && !(*impl)->ifunc)
		return true;
	*impl = NULL;
	return !debug_symbol(b, obj, addr, own);
}

/* Does a '!PATTERN' of the user's remove F of the object at PATH? */
static bool excluded(const struct resolve_opts *o, const char *path, const struct symtab_func *f)
{
	for (size_t i = 0; i < o->n_patterns; i++) {
		const struct funcpattern *x = &o->patterns[i];

		if (x->exclude && funcpattern__match_object(x, path) && funcpattern__match_func(x, f))
			return true;
	}
	return false;
}

/* For an exact name that matches nothing: the function of the searched
 * objects nearest to it in spelling (similar.h), or NULL. */
static const char *nearest_name(const struct probe_set *s, const struct funcpattern *p)
{
	size_t len = strlen(p->func), best = similar__slack(len) + 1;
	const char *name = NULL;

	if (p->glob || best == 1)
		return NULL;
	for (size_t oi = 0; oi < s->n_objects && best > 1; oi++) {
		const struct symtab_func *funcs;
		size_t nf;

		if (!s->objects[oi].symtab || !funcpattern__match_object(p, s->objects[oi].path))
			continue;
		funcs = symtab__funcs(s->objects[oi].symtab, &nf);
		for (size_t i = 0; i < nf; i++) {
			size_t d;

			if (funcs[i].ifunc || resolve_plan__is_cold_part(funcs[i].name))
				continue;
			d = similar__distance(p->func, funcs[i].name, best - 1);
			if (d < best) {
				best = d;
				name = funcs[i].name;
			}
		}
	}
	return name;
}

/* F of OBJ is an IFUNC (its symbol the resolver that picks an
 * implementation at load): the error names the implementations the object
 * has, by glibc's naming (__F_avx2, __F_sse2, ...). */
static void ifunc_error(const struct probe_object *obj, const struct symtab_func *f)
{
	char list[400];
	size_t nf, len = 0, n = 0, more = 0;
	const struct symtab_func *funcs = symtab__funcs(obj->symtab, &nf);
	size_t fl = strlen(f->name);

	list[0] = 0;
	for (size_t i = 0; i < nf; i++) {
		const char *m = funcs[i].name;
		bool dup = false;

		if (funcs[i].ifunc || strncmp(m, "__", 2) || strncmp(m + 2, f->name, fl) ||
		    m[2 + fl] != '_' || resolve_plan__is_cold_part(m))
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = funcs[j].addr == funcs[i].addr && !strcmp(funcs[j].name, m);
		if (dup)
			continue;
		if (n < 8 && len + strlen(m) + 3 < sizeof(list)) {
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", n ? ", " : "",
						m);
			n++;
		} else {
			more++;
		}
	}
	if (!n)
		log_error("'%s' in %s is an IFUNC: its symbol is the resolver that picks an "
			  "implementation at load, not the function, and the implementations have "
			  "no symbols in it to trace", f->name, obj->path);
	else
		log_error("'%s' in %s is an IFUNC: its symbol is the resolver, not the function; "
			  "trace its implementations: %s%s (or '__%s_*')", f->name, obj->path, list,
			  more ? ", ..." : "", f->name);
}

/* What a pattern's search found, and what it passed over (for the error
 * when nothing matches). */
struct pattern_scan {
	struct match *m;
	size_t n_m, cap_m, searched, n_excluded;
	const char *stripped;                /* an object searched with no symbols */
	const struct symtab_func *ifunc;     /* an IFUNC whose pick is not known */
	size_t ifunc_obj;
};

/* The functions of object oi that match p, each address once. */
static int scan_object(struct builder *b, const struct funcpattern *p, size_t oi,
		       struct pattern_scan *sc)
{
	struct probe_object *obj = &b->set->objects[oi];
	const struct symtab_func *funcs;
	size_t nf;

	funcs = symtab__funcs(obj->symtab, &nf);
	for (size_t i = 0; i < nf; i++) {
		bool dup = false;

		if (!funcpattern__match_func(p, &funcs[i]))
			continue;
		/* a part of a function, probed with it (resolve.h) */
		if (resolve_plan__is_cold_part(funcs[i].name))
			continue;
		if (excluded(b->o, obj->path, &funcs[i])) {
			sc->n_excluded++;
			continue;
		}
		const struct symtab_func *f = &funcs[i];
		struct symtab_func own = {};
		const char *as = NULL;

		/* An IFUNC: the implementation it picks here, shown
		 * under the name the program calls. */
		if (f->ifunc) {
			if (p->glob || !ifunc_target(b, obj, f, &f, &own)) {
				/* the pick is not known: said with the
				 * error (its implementations) if nothing
				 * else matches, else warned after */
				if (!p->glob && !sc->ifunc) {
					sc->ifunc = &funcs[i];
					sc->ifunc_obj = oi;
				}
				continue;
			}
			as = funcs[i].name;
		}
		for (size_t j = 0; j < sc->n_m && !dup; j++)
			dup = sc->m[j].obj == oi &&
			      (sc->m[j].f ? sc->m[j].f : &sc->m[j].own)->addr ==
				      (f ? f : &own)->addr;
		if (dup)
			continue;
		sc->m = grow(sc->m, sc->n_m, &sc->cap_m, sizeof(*sc->m));
		if (!sc->m)
			return -ENOMEM;
		sc->m[sc->n_m].obj = oi;
		sc->m[sc->n_m].f = f;
		sc->m[sc->n_m].own = own;
		sc->m[sc->n_m].as = as;
		sc->n_m++;
	}
	return 0;
}

/* Every object of every target that p names, searched. */
static int scan_targets(struct builder *b, const struct funcpattern *p, struct pattern_scan *sc)
{
	struct probe_set *s = b->set;
	int err;

	for (size_t ti = 0; ti < s->n_targets; ti++) {
		struct probe_target *t = &s->targets[ti];

		for (size_t k = 0; k < t->n_objects; k++) {
			size_t oi = t->objects[k];
			struct probe_object *obj = &s->objects[oi];

			if (!funcpattern__match_object(p, obj->path))
				continue;
			sc->searched++;
			if (!obj->symtab) {
				if (p->object) {
					err = resolve_targets__check_named_file(obj);
					if (err)
						return err;
				}
				if (!sc->stripped)
					sc->stripped = obj->path;
				continue;
			}
			err = scan_object(b, p, oi, sc);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Why nothing matches p, the likeliest reason first. */
static void say_no_match(struct builder *b, const struct funcpattern *p,
			 const struct pattern_scan *sc)
{
	struct probe_set *s = b->set;
	char callers[512], desc[256];
	const char *inl_path = NULL, *near;

	/* An exact name with no symbol may have been inlined everywhere:
	 * say so, and where it went. */
	for (size_t oi = 0; !p->glob && oi < s->n_objects && !inl_path; oi++)
		if (s->objects[oi].symtab && funcpattern__match_object(p, s->objects[oi].path) &&
		    inlined__callers(s->objects[oi].attach_path, p->func, callers,
				     sizeof(callers)) > 0)
			inl_path = s->objects[oi].path;
	target_desc(b->o, desc, sizeof(desc));
	if (sc->ifunc)
		ifunc_error(&s->objects[sc->ifunc_obj], sc->ifunc);
	else if (inl_path)
		log_error("'%s' is inlined everywhere in %s (DW_AT_inline): no copy of "
			  "its own to probe; trace its callers: %s", p->func, inl_path, callers);
	else if (!sc->searched && p->object)
		log_error("no object '%s' in %s", p->object, desc);
	else if (sc->n_excluded)
		log_error("every function matching '%s' in %s is excluded (%zu)", p->func, desc,
			  sc->n_excluded);
	else if (sc->stripped && sc->searched == 1)
		log_error("no function matches '%s' in %s: %s has no symbol table "
			  "(stripped)", p->func, desc, sc->stripped);
	else if (sc->stripped)
		/* a launched program fully stripped: its libraries were
		 * searched, not it */
		log_error("no function matches '%s' in %s (searched %zu objects): %s has "
			  "no symbol table (stripped)", p->func, desc, sc->searched, sc->stripped);
	else if ((near = nearest_name(s, p)))
		log_error("no function matches '%s' in %s (searched %zu object%s); did "
			  "you mean %s?", p->func, desc, sc->searched, sc->searched == 1 ? "" : "s",
			  near);
	else
		log_error("no function matches '%s' in %s (searched %zu object%s)", p->func, desc,
			  sc->searched, sc->searched == 1 ? "" : "s");
}

/* Each match into the plan, in the mode of the target it is in: how
 * many were added, or -errno. */
static int add_matches(struct builder *b, const struct funcpattern *p,
		       const struct pattern_scan *sc)
{
	struct probe_set *s = b->set;
	const struct match *m = sc->m;
	size_t added = 0;
	int err;

	for (size_t i = 0; i < sc->n_m; i++) {
		const struct probe_target *t = NULL;

		for (size_t ti = 0; ti < s->n_targets && !t; ti++)
			for (size_t k = 0; k < s->targets[ti].n_objects; k++)
				if (s->targets[ti].objects[k] == m[i].obj)
					t = &s->targets[ti];
		err = resolve_plan__add_func(b, m[i].obj, m[i].f ? m[i].f : &m[i].own, m[i].as,
					     resolve_plan__mode_for(b, t, m[i].obj), p->glob);
		if (err < 0)
			return err;
		added += (size_t)err;
	}
	return (int)added;
}

int resolve__pattern(struct builder *b, const struct funcpattern *p)
{
	struct probe_set *s = b->set;
	struct pattern_scan sc = {};
	const struct match *m;
	int err;

	err = scan_targets(b, p, &sc);
	if (err)
		goto cleanup;
	m = sc.m;
	if (!sc.n_m) {
		say_no_match(b, p, &sc);
		err = -ENOENT;
		goto cleanup;
	}
	if (sc.ifunc)
		log_warn("%s in %s is an IFUNC resolver, not the function; the other matches "
			 "are traced", sc.ifunc->name, s->objects[sc.ifunc_obj].path);
	/* An exact name in two files is a question only the user can answer. */
	if (!p->glob && !p->object) {
		for (size_t i = 1; i < sc.n_m; i++) {
			if (m[i].obj == m[0].obj)
				continue;
			log_error("'%s' is in %s and %s: name one as OBJECT:%s (e.g. %s:%s)",
				  p->func, s->objects[m[0].obj].path, s->objects[m[i].obj].path,
				  p->func, s->objects[m[0].obj].module, p->func);
			err = -EEXIST;
			goto cleanup;
		}
	}
	err = add_matches(b, p, &sc);
	if (err < 0)
		goto cleanup;
	if (!err && !p->glob) {
		log_error("'%s' cannot be probed safely (see the warning above)", p->func);
		err = -EINVAL;
	} else {
		err = 0;
	}
cleanup:
	free(sc.m);
	return err;
}

int probe_set__resolve(const struct resolve_opts *o, struct probe_set **out)
{
	struct builder b = { .o = o };
	int err = 0;

	*out = NULL;
	{
		size_t positive = 0;

		for (size_t i = 0; i < o->n_patterns; i++)
			positive += !o->patterns[i].exclude;
		if (o->n_patterns && !positive && !o->n_usdts && !o->n_lines && !o->n_lines_of) {
			log_error("only exclusions given: name what to trace too (--func PATTERN)");
			return -EINVAL;
		}
	}
	b.set = calloc(1, sizeof(*b.set));
	if (!b.set)
		return -ENOMEM;
	for (size_t i = 0; i < o->n_pids && !err; i++)
		err = resolve_targets__add_pid(&b, o->pids[i]);
	if (!err && o->launch_exe)
		err = resolve_targets__add_launch(&b);
	if (!err && o->binary)
		err = resolve_targets__add_binary(&b);
	if (!err && o->cgroup_desc)
		err = resolve_targets__add_cgroup(&b);
	/* A stripped --binary is usable (resolve_targets__add_binary checked it
	 * is an ELF file of this machine): the functions named may be in its
	 * libraries, and a pattern naming its own says it has no symbols. */
	for (size_t i = 0; i < o->n_patterns && !err; i++)
		if (!o->patterns[i].exclude)
			err = resolve__pattern(&b, &o->patterns[i]);
	for (size_t i = 0; i < o->n_usdts && !err; i++)
		err = resolve_sites__usdt(&b, o->usdts[i]);
	for (size_t i = 0; i < o->n_lines && !err; i++)
		err = resolve_sites__line(&b, o->lines[i]);
	for (size_t i = 0; i < o->n_lines_of && !err; i++)
		err = resolve_sites__lines_of(&b, &o->lines_of[i]);
	b.focus_mode = true;
	for (size_t i = 0; i < o->n_focus && !err; i++)
		err = resolve__pattern(&b, &o->focus[i]);
	b.focus_mode = false;
	/* Planning is over: what the run needs was copied out.  Symbol tables
	 * and the disassembler would only weigh on a long trace's memory. */
	insn__release();
	for (size_t i = 0; i < b.set->n_objects; i++) {
		symtab__free(b.set->objects[i].symtab);
		b.set->objects[i].symtab = NULL;
	}
	for (size_t i = 0; i < b.n_aux; i++)
		symtab__free(b.aux[i]);
	free(b.aux);
	malloc_trim(0);
	if (err == -ENOMEM)
		log_error("out of memory");
	if (err) {
		probe_set__free(b.set);
		return err;
	}
	for (size_t i = 0; i < b.set->n_targets; i++)
		if (resolve_plan__runtime_unwinds(b.set, &b.set->targets[i], SYMTAB_RT_STACKS))
			b.set->stack_switch = true;
	for (size_t i = 0; i < b.set->n_funcs; i++)
		b.set->go |= b.set->funcs[i].go;
	probe_set__number_ind_sites(b.set);
	*out = b.set;
	return 0;
}

void probe_set__number_ind_sites(struct probe_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n_funcs; i++) {
		struct probe_func *f = &set->funcs[i];

		f->ind_base = UINT32_MAX;
		if (f->ret_mode != RETURN_INSN || !f->exits.n_ind ||
		    n + f->exits.n_ind > CMON_COOKIE_IND_MASK + 1)
			continue;
		f->ind_base = (uint32_t)n;
		n += f->exits.n_ind;
	}
	set->n_ind_sites = n;
}

struct probe_func *probe_set__add_func(struct probe_set *set, size_t obj, const char *name,
				       uint64_t addr, uint64_t file_offset)
{
	struct probe_func *v = realloc(set->funcs, (set->n_funcs + 1) * sizeof(*v)), *f;

	if (!v)
		return NULL;
	set->funcs = v;
	f = &v[set->n_funcs];
	memset(f, 0, sizeof(*f));
	f->object = obj;
	f->addr = addr;
	f->file_offset = file_offset;
	f->name = strdup(name);
	if (!f->name)
		return NULL;
	set->n_funcs++;
	return f;
}

size_t probe_set__probe_count(const struct probe_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n_funcs; i++) {
		const struct probe_func *f = &set->funcs[i];

		n += 1;
		if (f->ret_mode == RETURN_URETPROBE)
			n += 1;
		else if (f->ret_mode == RETURN_INSN)
			n += f->exits.n_ret + f->exits.n_tail;
	}
	return n;
}

void probe_set__free(struct probe_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n_funcs; i++) {
		free(set->funcs[i].name);
		free(set->funcs[i].usdt_args);
		exit_plan__clear(&set->funcs[i].exits);
		exit_plan__clear(&set->funcs[i].cold_exits);
	}
	for (size_t i = 0; i < set->n_objects; i++) {
		free(set->objects[i].path);
		free(set->objects[i].attach_path);
		free(set->objects[i].symbols_from);
		symtab__free(set->objects[i].symtab);
	}
	for (size_t i = 0; i < set->n_targets; i++)
		free(set->targets[i].objects);
	free(set->funcs);
	free(set->objects);
	free(set->targets);
	free(set);
}

