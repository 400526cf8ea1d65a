// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stacks.c: see stacks.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "core/grow.h"
#include "elf/symtab.h"
#include "event/stacks.h"
#include "proc/procmaps.h"

#define SLOTS 16384 /* pending stacks, direct-mapped by (tid, ts) */

struct proc_cache {
	pid_t pid;
	struct proc_object *objs; /* NULL: could not be read */
	size_t n;
};

/* By file identity (DEV, INO), else by path: one copy of a file's
 * symbols for every process mapping it. */
struct sym_cache {
	char *path;
	uint64_t dev, ino;
	struct symtab *st; /* NULL: no symbols */
};

struct stack_book {
	struct cmon_stack_rec *slots; /* ts_entry_ns 0: empty */
	uint64_t dropped;
	struct proc_cache *procs;
	size_t n_procs, cap_procs;
	struct sym_cache *syms;
	size_t n_syms, cap_syms;
	struct proc_object *fixed; /* the traced objects (start 0, any process) */
	size_t n_fixed, cap_fixed;
};

static struct symtab *symtab_of(struct stack_book *b, const struct proc_object *o);

void stack_book__fixed_object(struct stack_book *b, const char *path, const char *module)
{
	struct proc_object *v;

	if (GROW(b->fixed, b->n_fixed, b->cap_fixed, 4))
		return;
	v = b->fixed;
	memset(&v[b->n_fixed], 0, sizeof(*v));
	v[b->n_fixed].open_path = strdup(path);
	v[b->n_fixed].path = strdup(module);
	if (v[b->n_fixed].open_path && v[b->n_fixed].path) {
		struct stat st;

		/* its identity, for frames the kernel placed in a file */
		if (!stat(path, &st)) {
			v[b->n_fixed].dev = (uint64_t)st.st_dev;
			v[b->n_fixed].inode = (uint64_t)st.st_ino;
		}
		b->n_fixed++;
		symtab_of(b, &v[b->n_fixed - 1]); /* now: PATH may be a process's */
	} else {
		free(v[b->n_fixed].open_path);
		free(v[b->n_fixed].path);
	}
}

struct stack_book *stack_book__new(void)
{
	struct stack_book *b = calloc(1, sizeof(*b));

	if (b && !(b->slots = calloc(SLOTS, sizeof(*b->slots)))) {
		free(b);
		b = NULL;
	}
	return b;
}

static struct proc_cache *proc_of(struct stack_book *b, pid_t pid);

static size_t slot_of(uint32_t tid, uint64_t ts)
{
	uint64_t h = (ts ^ ((uint64_t)tid << 32) ^ tid) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 50) & (SLOTS - 1);
}

void stack_book__add(struct stack_book *b, const struct cmon_stack_rec *rec)
{
	struct cmon_stack_rec *s = &b->slots[slot_of(rec->tid, rec->ts_entry_ns)];

	if (s->ts_entry_ns)
		b->dropped++;
	/* The mappings while the process surely runs (it made this call). */
	if (rec->pid)
		proc_of(b, (pid_t)rec->pid);
	*s = *rec;
	if (s->n > CMON_STACK_MAX)
		s->n = CMON_STACK_MAX;
}

void stack_book__forget(struct stack_book *b, uint32_t tid, uint64_t ts)
{
	struct cmon_stack_rec *s = &b->slots[slot_of(tid, ts)];

	if (s->tid == tid && s->ts_entry_ns == ts)
		s->ts_entry_ns = 0;
}

static struct proc_cache *proc_of(struct stack_book *b, pid_t pid)
{
	struct proc_cache *v;

	for (size_t i = 0; i < b->n_procs; i++)
		if (b->procs[i].pid == pid)
			return &b->procs[i];
	if (GROW(b->procs, b->n_procs, b->cap_procs, 8))
		return NULL;
	v = &b->procs[b->n_procs++];
	v->pid = pid;
	if (proc_objects__read(pid, &v->objs, &v->n)) {
		v->objs = NULL;
		v->n = 0;
	}
	/* Their symbols while the files can be opened through the process
	 * (/proc/PID/root, map_files): it may be gone when its frames are
	 * named. */
	for (size_t i = 0; i < v->n; i++)
		symtab_of(b, &v->objs[i]);
	return v;
}

void stack_book__note_process(struct stack_book *b, pid_t pid)
{
	proc_of(b, pid);
}

static struct symtab *symtab_of(struct stack_book *b, const struct proc_object *o)
{
	bool by_id = o->dev || o->inode;
	struct sym_cache *v;
	struct symtab *st;

	if (!o->open_path)
		return NULL;
	for (size_t i = 0; i < b->n_syms; i++)
		if (by_id ? b->syms[i].dev == o->dev && b->syms[i].ino == o->inode
			  : !strcmp(b->syms[i].path, o->open_path))
			return b->syms[i].st;
	/* a stripped program's frames named from its debug file's symbols */
	st = symtab__open_opts(o->open_path, &(struct symtab_opts){ .debug_symbols = o->exe });
	/* Not there (the process is gone): not known to have no symbols. */
	if (!st && access(o->open_path, R_OK))
		return NULL;
	if (GROW(b->syms, b->n_syms, b->cap_syms, 8)) {
		symtab__free(st);
		return NULL;
	}
	v = &b->syms[b->n_syms];
	v->path = strdup(o->open_path);
	if (!v->path) {
		symtab__free(st);
		return NULL;
	}
	v->dev = o->dev;
	v->ino = o->inode;
	v->st = st;
	b->n_syms++;
	return st;
}

/* The object with identity (DEV, INO): in the process's mappings, the
 * traced objects, or another process's mappings (the same file). */
static const struct proc_object *object_of(const struct stack_book *b, const struct proc_cache *pc,
					   uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; pc && i < pc->n; i++)
		if (pc->objs[i].dev == dev && pc->objs[i].inode == ino)
			return &pc->objs[i];
	for (size_t i = 0; i < b->n_fixed; i++)
		if (b->fixed[i].dev == dev && b->fixed[i].inode == ino)
			return &b->fixed[i];
	for (size_t k = 0; k < b->n_procs; k++)
		for (size_t i = 0; i < b->procs[k].n; i++)
			if (b->procs[k].objs[i].dev == dev && b->procs[k].objs[i].inode == ino)
				return &b->procs[k].objs[i];
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A frame in the file the kernel found at the call (FO), whether or not
 * the process and its mappings are still there.  0: not named this way. */
static int frame_in_file(struct stack_book *b, struct proc_cache *pc, uint64_t ip,
			 const struct cmon_frame_obj *fo, char *buf, size_t len)
{
	const struct proc_object *o;
	const struct symtab_func *f;
	struct symtab *st;
	uint64_t addr;

	if (!fo || fo->where != CMON_FRAME_MAPPED || !fo->ino)
		return 0;
	o = object_of(b, pc, makedev(fo->dev >> 20, fo->dev & 0xfffff), fo->ino);
	if (!o)
		return 0;
	st = symtab_of(b, o);
	if (!st || !symtab__addr_at_offset(st, ip - fo->base, &addr) ||
	    !(f = symtab__find_addr(st, addr)))
		return snprintf(buf, len, "0x%" PRIx64 " (%s)", ip, base_name(o->path));
	return snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", f->demangled ? f->demangled : f->name,
			addr - f->addr, base_name(o->path));
}

/* One frame: "func+0x1f (module)", "0x... (module)" or "0x...".  FO: the
 * file the kernel found there; BIAS of ANCHOR's object when the mappings
 * are gone (HAVE_BIAS). */
static int frame_text(struct stack_book *b, struct proc_cache *pc, uint64_t ip,
		      const struct cmon_frame_obj *fo, const struct stack_anchor *anchor,
		      bool have_bias, uint64_t bias, char *buf, size_t len)
{
	const struct proc_object *best = NULL;
	const struct symtab_func *f = NULL;
	const char *mod;
	struct symtab *st;
	uint64_t addr;
	int n = frame_in_file(b, pc, ip, fo, buf, len);

	if (n)
		return n;

	for (size_t i = 0; pc && i < pc->n; i++)
		if (pc->objs[i].start <= ip && (!best || pc->objs[i].start > best->start))
			best = &pc->objs[i];
	/* The mappings are gone: the traced function's own object, placed
	 * by the first frame (stack_anchor). */
	if (!best && have_bias) {
		struct proc_object o = { .open_path = (char *)anchor->path,
					 .path = (char *)anchor->module };

		st = symtab_of(b, &o);
		if (st && (f = symtab__find_addr(st, ip - bias)))
			return snprintf(buf, len, "%s+0x%" PRIx64 " (%s)",
					f->demangled ? f->demangled : f->name, ip - bias - f->addr,
					anchor->module);
		f = NULL;
	}
	/* The mappings are gone: a non-PIE executable's symbols still say. */
	for (size_t i = 0; !best && (!pc || !pc->n) && i < b->n_fixed; i++) {
		st = symtab_of(b, &b->fixed[i]);
		if (st && !symtab__is_dyn(st) && (f = symtab__find_addr(st, ip)))
			return snprintf(buf, len, "%s+0x%" PRIx64 " (%s)",
					f->demangled ? f->demangled : f->name, ip - f->addr,
					b->fixed[i].path);
	}
	if (!best)
		return snprintf(buf, len, "0x%" PRIx64, ip);
	mod = strrchr(best->path, '/');
	mod = mod ? mod + 1 : best->path;
	st = symtab_of(b, best);
	/* A PIE or library is mapped at its lowest address; an executable
	 * at its link addresses. */
	addr = st && symtab__is_dyn(st) ? ip - best->start : ip;
	if (st)
		f = symtab__find_addr(st, addr);
	if (!f)
		return snprintf(buf, len, "0x%" PRIx64 " (%s)", ip, mod);
	return snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", f->demangled ? f->demangled : f->name,
			addr - f->addr, mod);
}

int stack_book__take(struct stack_book *b, pid_t pid, uint32_t tid, uint64_t ts,
		     const struct stack_anchor *anchor, struct strbuf *out)
{
	bool have_bias;
	uint64_t bias;
	struct cmon_stack_rec *s = &b->slots[slot_of(tid, ts)];
	struct proc_cache *pc;
	int err;

	if (!s->ts_entry_ns || s->ts_entry_ns != ts || s->tid != tid)
		return -ENOENT;
	uint32_t printed = 0;

	pc = proc_of(b, pid);
	have_bias = anchor && anchor->path && (!pc || !pc->n) && s->n && s->ips[0] >= anchor->link;
	bias = have_bias ? s->ips[0] - anchor->link : 0;
	err = 0;
	for (uint32_t i = 0; i < s->n && !err; i++, printed++) {
		char frame[512];

		if (!s->ips[i])
			break; /* the end of the chain (or an unreadable return address) */
		if (i >= 2 && s->objs[i].where == CMON_FRAME_UNMAPPED)
			break; /* a frame pointer that was none: the walk went astray */
		frame_text(b, pc, s->ips[i], &s->objs[i], anchor, have_bias, bias, frame,
			   sizeof(frame));
		err = strbuf__puts(out, frame);
		if (!err)
			err = strbuf__putc(out, '\n');
	}
	/* The walk found no frame pointer past the caller: say so. */
	if (!err && printed <= 2)
		err = strbuf__puts(out, "(callers above unknown: no frame pointers)\n");
	if (!err)
		err = strbuf__putc(out, 0);
	s->ts_entry_ns = 0;
	return err;
}

uint64_t stack_book__dropped(const struct stack_book *b)
{
	return b->dropped;
}

void stack_book__free(struct stack_book *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n_procs; i++)
		proc_objects__free(b->procs[i].objs, b->procs[i].n);
	for (size_t i = 0; i < b->n_syms; i++) {
		free(b->syms[i].path);
		symtab__free(b->syms[i].st);
	}
	proc_objects__free(b->fixed, b->n_fixed);
	free(b->procs);
	free(b->syms);
	free(b->slots);
	free(b);
}
