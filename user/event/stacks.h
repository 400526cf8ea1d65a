/*
 * stacks.h: --stack.  Each call's user stack arrives (CMON_REC_STACK) before
 * its record; the book keeps it until the record comes, then renders it
 * symbolized: "func+0x1f (module)" from the file the kernel found each
 * frame in at the call (cmon_frame_obj: the process may be gone when its
 * records are read), else the process's mappings (read at its first
 * stack), and each object's ELF symbols, opened while the files could be
 * (the traced objects when registered, a process's when its mappings are
 * read).  A frame no mapping holds ends the stack: the frame-pointer walk
 * went astray.
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

/* A traced object at PATH (its symbols opened now) named MODULE: its
 * frames symbolize even when the process is gone before its mappings were
 * read (an executable linked at fixed addresses even without the kernel's
 * word on the frame's file). */
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
