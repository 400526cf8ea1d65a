/*
 * stacks.h: --stack.  Each call's user stack arrives (CMON_REC_STACK) before
 * its record; the book keeps it until the record comes, then renders it
 * symbolized: "func+0x1f (module)" from the process's mappings (read once
 * per process, early for -p and launched programs, so they symbolize after
 * the process is gone) and each object's ELF symbols.
 */
#ifndef CMON_EVENT_STACKS_H
#define CMON_EVENT_STACKS_H

#include <stdint.h>
#include <sys/types.h>
#include "cmon_abi.h"
#include "core/strbuf.h"

struct stack_book;

struct stack_book *stack_book__new(void); /* NULL: out of memory */
void stack_book__free(struct stack_book *b);

/* Keep REC until its call's record comes (an older stack in the same slot
 * is dropped and counted). */
void stack_book__add(struct stack_book *b, const struct cmon_stack_rec *rec);

/* An executable linked at fixed addresses (not PIE) among the traced
 * objects, at PATH (opened there) named MODULE: its frames symbolize even
 * when the process is gone before its mappings were read. */
void stack_book__fixed_object(struct stack_book *b, const char *path, const char *module);

/* Read PID's mappings now (it may be gone when its records are drained). */
void stack_book__note_process(struct stack_book *b, pid_t pid);

/* Where the stack's first frame is in its file: the traced function's
 * probe, at link address LINK of the object at PATH, named MODULE.  When
 * the process is gone before its mappings were read (a short-lived PIE
 * program), the frames in that object still symbolize: its load bias is
 * the first frame's address less LINK. */
struct stack_anchor {
	const char *path, *module;
	uint64_t link;
};

/* The stack of the call (PID, TID, TS), innermost first, one frame a line
 * ("func+0x1f (module)\n"), NUL-terminated, appended to OUT, and
 * forgotten; ANCHOR (or NULL) as above.  0, -ENOENT (none kept),
 * -ENOMEM. */
int stack_book__take(struct stack_book *b, pid_t pid, uint32_t tid, uint64_t ts,
		     const struct stack_anchor *anchor, struct strbuf *out);

/* The call (TID, TS) will have no record (--if left it out): its stack,
 * if kept, is forgotten (not counted as dropped). */
void stack_book__forget(struct stack_book *b, uint32_t tid, uint64_t ts);

/* Stacks dropped before their call's record came. */
uint64_t stack_book__dropped(const struct stack_book *b);

#endif
