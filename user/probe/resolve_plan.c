// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* resolve_plan.c: one function's probes: its entry, its returns (uretprobe
 * or return instructions, hot and cold parts), step probes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "resolve_build.h"

#define ENTRY_DECODE_BYTES 32
#define MAX_BODY_BYTES (1u << 20) /* larger bodies: no ret-insn probes */

bool resolve_plan__runtime_unwinds(const struct probe_set *s, const struct probe_target *t,
				   unsigned which)
{
	for (size_t i = 0; t && i < t->n_objects; i++)
		if (s->objects[t->objects[i]].runtime & which)
			return true;
	return false;
}

/*
 * Can an unwinder walk through the frames of OBJ's functions in T?  Only
 * where T runs a runtime that unwinds (C++ exceptions, Rust panics, Go's
 * stack moves) and OBJ is built for it: C++ or Rust code, or C built with
 * exception tables (glibc, whose qsort may call a throwing comparator).
 * Plain C (a daemon that maps libstdc++ through a dependency, as redis
 * does through jemalloc) gives an exception no way through: throwing
 * through C frames built without -fexceptions is not supported by the
 * compilers, so its returns can be uretprobes, 10x cheaper than a
 * single-stepped ret.  Go moves whole stacks: every function of a Go
 * process is observed on its ret instructions.  So is every function of
 * a process that switches stacks (ucontext, boost.context): the kernel
 * lets a pending uretprobe go when the stack pointer moves above it, as a
 * coroutine's stack may, and the call's return would then crash.
 */
static bool unwinder_passes(const struct builder *b, const struct probe_target *t,
			    size_t obj_idx)
{
	if (resolve_plan__runtime_unwinds(b->set, t, SYMTAB_RT_STACKS))
		return true; /* the kernel drops a uretprobe the stack moves above */
	if (!resolve_plan__runtime_unwinds(b->set, t, SYMTAB_RT_UNWINDERS))
		return false;
	if (resolve_plan__runtime_unwinds(b->set, t, SYMTAB_RT_GO))
		return true;
	return b->set->objects[obj_idx].runtime &
	       (SYMTAB_RT_CXX_EH | SYMTAB_RT_RUST | SYMTAB_EH_TABLES);
}

bool probe_func__step_timed(const struct probe_func *f)
{
	return f->step.off && !f->go && !f->python && !f->usdt && !f->in_lines &&
	       !f->lines_owner && !f->body_skip && !f->never_returns &&
	       f->ret_mode != RETURN_NONE;
}

/* Shown as a person names it: demangled, without a Rust legacy hash
 * (`m::outer`, not `m::outer::h96fa8120dcff8e6b`; both forms match). */
static char *display_name(const struct symtab_func *f)
{
	if (!f->demangled)
		return strdup(f->name);
	return strndup(f->demangled, funcpattern__rust_hash_cut(f->demangled));
}

/* gcc's hot/cold split puts a function's rare paths in a symbol of their
 * own, <name>.cold (<name>.part.0.cold, ...): a part of the function, not
 * a function.  NAME ends so. */
bool resolve_plan__is_cold_part(const char *name)
{
	const char *c = strstr(name, ".cold");

	while (c && c[5] && !(c[5] == '.' && c[6] >= '0' && c[6] <= '9'))
		c = strstr(c + 1, ".cold");
	return c != NULL;
}

/* F's cold part in OBJ: the <F>.cold symbol one of F's jumps out of BODY
 * leads into (EXITS: F's exits planned without it).  NULL: none. */
static const struct symtab_func *cold_part_of(const struct probe_object *obj,
					      const struct symtab_func *f, const uint8_t *body,
					      const struct exit_plan *exits)
{
	size_t n = strlen(f->name);

	for (size_t k = 0; k < exits->n_tail; k++) {
		const struct symtab_func *c;
		uint64_t target;

		if (insn__jump_target(body, f->size, f->addr, exits->tail_offs[k], &target))
			continue;
		c = symtab__find_addr(obj->symtab, target);
		if (c && c->size && !strncmp(c->name, f->name, n) && c->name[n] == '.' &&
		    resolve_plan__is_cold_part(c->name + n))
			return c;
	}
	return NULL;
}

/* Plan the cold part C of PF (hot BODY at F): both parts' exits, each
 * with the other part inside.  0 or -errno (then no cold part). */
static int plan_cold_part(struct probe_func *pf, const struct probe_object *obj,
			  const struct symtab_func *f, const uint8_t *body,
			  const struct symtab_func *c)
{
	struct exit_plan hot = {}, cold = {};
	uint8_t *code;
	int err;

	if (c->size > MAX_BODY_BYTES)
		return -E2BIG;
	code = malloc(c->size);
	if (!code)
		return -ENOMEM;
	err = symtab__read_code(obj->symtab, c->addr, code, c->size) == (long)c->size ?
		insn__plan_exits_in(code, c->size, c->addr, f->addr, f->addr + f->size, &cold) :
		-EIO;
	free(code);
	if (!err)
		err = insn__plan_exits_in(body, f->size, f->addr, c->addr, c->addr + c->size, &hot);
	if (err || !cold.complete || !hot.complete) {
		exit_plan__clear(&hot);
		exit_plan__clear(&cold);
		return err ? err : -EINVAL;
	}
	exit_plan__clear(&pf->exits);
	pf->exits = hot;
	pf->cold_exits = cold;
	pf->cold_addr = c->addr;
	pf->cold_size = c->size;
	pf->cold_file_offset = c->file_offset;
	return 0;
}

/* gcc's returns_twice functions (the setjmp family, vfork, getcontext),
 * by the names glibc gives them. */
static bool returns_twice(const char *name)
{
	static const char *const names[] = {
		"setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp", "savectx",
		"vfork", "__vfork", "__libc_vfork", "getcontext", "__getcontext",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* Go's runtime.morestack and its variants (asm: ABI0, maybe suffixed). */
static bool go_stack_grower(const char *name)
{
	static const char *const names[] = { "runtime.morestack", "runtime.morestack_noctxt",
					     "runtime.morestackc" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		if (!strncmp(name, names[i], n) && (!name[n] || !strcmp(name + n, ".abi0")))
			return true;
	}
	return false;
}

/* Plan the probes of F in OBJ.  Returns 0, 1 when the function must be
 * skipped (reason logged at WHY_LEVEL), or -errno. */
static int plan_func(struct probe_func *pf, const struct probe_object *obj,
		     const struct symtab_func *f, enum return_mode mode, bool forced, bool list_only)
{
	/* warnings name it as the user does (demangled) */
	const char *nm = f->demangled ? f->demangled : f->name;
	uint8_t head[ENTRY_DECODE_BYTES];
	uint8_t *body = NULL;
	bool indirect, uret_else = mode == RETURN_INSN_ELSE_URETPROBE;
	long got;
	int err = 0;

	if (uret_else)
		mode = RETURN_INSN;
	got = symtab__read_code(obj->symtab, f->addr, head, sizeof(head));
	if (got <= 0 || insn__plan_entry(head, (size_t)got, f->addr, &pf->entry)) {
		log_debug("%s in %s: cannot decode its first instruction", f->name, obj->path);
		return 1;
	}
	if (pf->entry.cost == PROBE_COST_UNPROBEABLE && !list_only) {
		log_warn("%s in %s: the kernel cannot probe its first instruction (%s); skipped",
			 nm, obj->path, pf->entry.insn);
		return 1;
	}
	/* A uretprobe hijacks the return address at entry, and a function
	 * that returns twice hands it on: setjmp saves the trampoline as the
	 * place longjmp returns to (which then has no pending return: SIGILL),
	 * vfork's child returns through it first.  Their returns are seen on
	 * their own ret instructions, which change nothing. */
	if (mode == RETURN_URETPROBE && returns_twice(f->name))
		mode = RETURN_INSN;
	pf->ret_mode = mode;
	/* The body is decoded in every mode: a function that never returns
	 * normally must get no exit probe whatever the mode. */
	if (f->addr && f->addr == symtab__entry(obj->symtab)) {
		/* _start: entered without a return address, no caller: no frame
		 * (every call would nest under it, and a tree hold the whole run) */
		pf->never_returns = pf->no_frame = true;
	} else if ((obj->runtime & SYMTAB_RT_GO) && go_stack_grower(f->name)) {
		/* It has a ret (after a call to abort), but newstack restarts
		 * its caller on the grown stack. */
		pf->never_returns = pf->no_frame = true;
	} else if (f->size && f->size <= MAX_BODY_BYTES) {
		body = malloc(f->size);
		if (!body)
			return -ENOMEM;
		got = symtab__read_code(obj->symtab, f->addr, body, f->size);
		err = got == (long)f->size ?
			insn__plan_exits(body, f->size, f->addr, &pf->exits) : -EIO;
		if (!err && pf->exits.complete) {
			const struct symtab_func *c = cold_part_of(obj, f, body, &pf->exits);

			if (c && plan_cold_part(pf, obj, f, body, c))
				log_debug("%s in %s: its cold part %s could not be decoded", f->name,
					  obj->path, c->name);
		}
		if (!err && pf->entry.cost == PROBE_COST_SINGLESTEP &&
		    insn__plan_step(body, f->size, f->addr, pf->entry.skip, &pf->step))
			memset(&pf->step, 0, sizeof(pf->step));
		if (!err)
			pf->reentered = insn__branches_into(body, f->size, f->addr, 0, pf->entry.skip);
		free(body);
		/* No way out at all; an indirect jump may be a tail call
		 * (`return f(v)` through a pointer is `jmp *%rax`). */
		if (!err && pf->exits.complete && !pf->exits.n_ret && !pf->exits.n_tail &&
		    !pf->exits.n_indirect && !pf->cold_exits.n_ret && !pf->cold_exits.n_tail &&
		    !pf->cold_exits.n_indirect)
			pf->never_returns = true;
	} else {
		err = -E2BIG;
	}
	if (pf->never_returns) {
		log_debug("%s in %s never returns normally: no exit probe", f->name, obj->path);
		exit_plan__clear(&pf->exits);
		exit_plan__clear(&pf->cold_exits);
		pf->ret_mode = RETURN_NONE;
		return 0;
	}
	if (mode != RETURN_INSN) {
		exit_plan__clear(&pf->exits);
		exit_plan__clear(&pf->cold_exits);
		return 0;
	}
	/* No exit a probe can see (its indirect jumps index tables: their
	 * targets cannot be followed). */
	if (err || !pf->exits.complete ||
	    (!pf->exits.n_ret && !pf->exits.n_tail && !pf->exits.n_ind && !pf->cold_exits.n_ret &&
	     !pf->cold_exits.n_tail))
		goto no_exits;
	return 0;
no_exits:
	indirect = !err && pf->exits.complete && pf->exits.n_indirect;
	exit_plan__clear(&pf->exits);
	exit_plan__clear(&pf->cold_exits);
	if (uret_else) { /* a uretprobe is safe here: its returns seen so */
		pf->ret_mode = RETURN_URETPROBE;
		return 0;
	}
	/* Its calls are still recorded, at entry, where they were made; no
	 * frame is kept for them: one left pending after an unseen return
	 * would put the calls after it under it. */
	pf->never_returns = pf->returns_unseen = pf->no_frame = true;
	pf->ret_mode = RETURN_NONE;
	if (list_only)
		return 0;
	log_warn("%s in %s: cannot find its return instructions%s, and %s; its calls are "
		 "recorded at entry (status entry), their returns are not seen", nm, obj->path,
		 indirect ? " (it leaves through an indirect jump cmon cannot follow)" : "",
		 forced ? "--return-probe insn wants them" :
			  "a uretprobe is not safe in this program (C++/Rust/Go unwinding)");
	return 0;
}

/* Add F of object OBJ_IDX unless the same address is already traced. */
/* A new, zeroed function of object OBJ_IDX at ADDR (file offset OFF),
 * not yet counted in n_funcs; NULL when out of memory. */
struct probe_func *resolve_plan__new_func(struct builder *b, size_t obj_idx, uint64_t addr,
					  uint64_t off)
{
	struct probe_set *s = b->set;
	struct probe_func *pf;

	s->funcs = grow(s->funcs, s->n_funcs, &b->cap_funcs, sizeof(*s->funcs));
	if (!s->funcs)
		return NULL;
	pf = &s->funcs[s->n_funcs];
	memset(pf, 0, sizeof(*pf));
	pf->object = obj_idx;
	pf->addr = addr;
	pf->file_offset = off;
	return pf;
}

/* GLOB: F was found by a glob, and is named by its plainest alias (free,
 * not __libc_free or cfree); an exact pattern's name is kept. */
int resolve_plan__add_func(struct builder *b, size_t obj_idx, const struct symtab_func *f,
			   const char *as, enum return_mode mode, bool glob)
{
	struct probe_set *s = b->set;
	struct probe_func *pf;
	int err = 0;

	/* Already probed under another name at this address (a C++
	 * constructor's C1 and C2, a libc alias): covered, one probe. */
	for (size_t i = 0; i < s->n_funcs; i++) {
		if (s->funcs[i].object == obj_idx && s->funcs[i].addr == f->addr) {
			s->funcs[i].focus |= b->focus_mode;
			return 1;
		}
	}
	pf = resolve_plan__new_func(b, obj_idx, f->addr, f->file_offset);
	if (!pf)
		return -ENOMEM;
	pf->size = f->size;
	err = plan_func(pf, &s->objects[obj_idx], f, mode,
			b->o->ret_choice == RETURN_FORCE_INSN, b->o->list_only);
	if (err)
		return err < 0 ? err : 0;
	pf->name = as ? strdup(as)
		      : display_name(glob ? symtab__alias(s->objects[obj_idx].symtab, f) : f);
	if (!pf->name)
		return -ENOMEM;
	/* Named by --focus only: probed to know when the thread is inside. */
	pf->focus = pf->quiet = b->focus_mode;
	/* Go's own functions are named package.func; the C functions of a
	 * cgo program are not, and keep the C ABI. */
	pf->go = (s->objects[obj_idx].runtime & SYMTAB_RT_GO) && strchr(f->name, '.');
	s->n_funcs++;
	return 1;
}

enum return_mode resolve_plan__mode_for(const struct builder *b, const struct probe_target *t,
					size_t obj_idx)
{
	switch (b->o->ret_choice) {
	case RETURN_OFF:
		return RETURN_NONE;
	case RETURN_FORCE_URETPROBE:
		return RETURN_URETPROBE;
	case RETURN_FORCE_INSN:
		return RETURN_INSN;
	case RETURN_PREFER_INSN:
		return unwinder_passes(b, t, obj_idx) ? RETURN_INSN : RETURN_INSN_ELSE_URETPROBE;
	default:
		return unwinder_passes(b, t, obj_idx) ? RETURN_INSN : RETURN_URETPROBE;
	}
}

