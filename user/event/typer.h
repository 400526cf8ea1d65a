/*
 * typer.h: the typed stage between the ring buffer and the writers.  From
 * each traced function's DWARF signature (and --capture) it builds the
 * fetch plans the kernel runs; then it joins each call record with the
 * capture records of the same call and renders the call's arguments, return
 * value and captures by name and type.  Functions without DWARF stay raw.
 */
#ifndef CMON_TYPER_H
#define CMON_TYPER_H

#include <stdbool.h>
#include <stddef.h>
#include "cmon_abi.h"
#include "dwarf/plan.h"
#include "output/render.h"
#include "output/record.h"
#include "probe/resolve.h"

struct typer_opts {
	bool raw;              /* --raw: ignore DWARF */
	uint32_t strlen;       /* --strlen; 0: default */
	unsigned deref;        /* --deref */
	bool deref_set;
	uint32_t capture_max;  /* --capture-max; 0: default */
	const char *const *captures; /* --capture specs as given */
	size_t n_captures;
	bool locals;           /* --locals: --line sites read their variables in scope */
	uint8_t capture_at;    /* --capture-at: enum plan_at */
	bool leaves;           /* note each value's leaves (a CSV is written) */
};

struct typer;

/* Plan every function of SET.  A function whose float parameters gcc -O0
 * stores in the prologue gets its entry probe moved past it (SET's
 * body_skip, slot_reg, slot_off).  Returns 0, or a negative errno after one
 * error line (a malformed --capture, one no function can take). */
int typer__new(struct probe_set *set, const struct typer_opts *opts, struct typer **out);
void typer__free(struct typer *t); /* NULL fine */

/* The fetch plans, 2 per function (tracer_opts.plans), or NULL when no
 * function needs anything read in the kernel. */
const struct cmon_fetch_plan *typer__plans(const struct typer *t);

/* Functions typed from DWARF, of all. */
size_t typer__typed_count(const struct typer *t);

/* The names of the typed parameters of all functions, in order of first
 * appearance: the extra CSV columns. */
const char *const *typer__columns(const struct typer *t, size_t *n);

/* The columns of function FUNC_ID's values (render.h), or NULL for a raw
 * one without --capture. */
const struct render_cols *typer__cols(const struct typer *t, uint32_t func_id);
/* The layout (signature) of a function, or NULL for a raw one. */
const struct plan_layout *typer__layout(const struct typer *t, uint32_t func_id);

/* The signature of a typed function as JSON for the capture store:
 * {"params":[{"name","type","kind"}...],"ret":"type"}; malloc'd, NULL
 * without memory.  A raw function (no DWARF) has arg0..arg5 of type "long",
 * kind "raw", returning "long". */
char *typer__signature_json(const struct typer *t, uint32_t func_id);

/* Keep a capture record until its call record comes. */
int typer__capture(struct typer *t, const struct cmon_capture_rec *rec);

/* Captures let go without their call record (it was lost: pending.h). */
uint64_t typer__orphans(const struct typer *t);

/* The typed view of call REC, or NULL for a raw function; valid until the
 * next call.  RENDER, when not NULL, receives the full rendering (blobs for
 * the capture store). */
const struct call_typed *typer__render(struct typer *t, const struct cmon_call_rec *rec,
				       const struct render_out **render);

/* Values rendered so far as "<unavailable: ...>" because they were in an
 * SSE or x87 register, which a uprobe cannot read (floats at -O2). */
uint64_t typer__unavailable(const struct typer *t);

#endif
