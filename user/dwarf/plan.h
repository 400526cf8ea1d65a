/*
 * plan.h: from a function signature (and --capture specs) to the two
 * fetch programs the BPF side runs (bpf/cmon_abi.h: struct cmon_fetch_plan, at
 * the entry and at the return) and the layout the renderer reads their
 * results with.
 *
 * Where each value comes from:
 *   - rdi, rsi, rdx, rcx, r8, r9 at the entry are the call record's
 *     args[0..5], and rax at the return its ret: they take no fetch item
 *     (PSRC_ARG / PSRC_RET), so a function whose parameters all sit in
 *     those registers needs no capture record at all;
 *   - any other register (-O2 past the prologue: rbx, r12..; rdx of a
 *     rax:rdx return) is a CMON_FETCH_REG item;
 *   - memory (stack arguments, 7th and later, and structs passed in
 *     memory: CMON_BASE_SP + offset; a struct returned in memory: the
 *     buffer at rax) is a CMON_FETCH_MEM item of the value's size;
 *   - a float/double in an xmm register, a long double in st0: nothing
 *     (PSRC_NONE, PU_XMM / PU_X87): a uprobe cannot read them.
 * Then, breadth first, what pointers reach (planned only when the pointer
 * itself is readable: a register, or bytes of an item):
 *   - char * (any qualifiers): CMON_FETCH_STR of --strlen bytes, wherever
 *     the pointer was read (a parameter, a member of a fetched struct):
 *     strings are leaves and do not count against --deref;
 *   - a pointer to a complete struct/union: CMON_FETCH_MEM of its size,
 *     up to --deref hops from the parameter (default 1: *p, not p->next->*);
 *     pointer members inside it are found in its bytes (CMON_BASE_ITEM +
 *     member offset, deref 1).  Pointers inside unions are not followed.
 *   - other pointers (void *, int *, char **, functions) are shown as
 *     addresses.
 * --capture specs are planned after the parameters' own items and before
 * any deref (with --capture-at return|both, in both plans: at the return
 * from the pointer and count the call was given).  A plan holds CMON_MAX_FETCH items and CMON_CAPTURE_MAX bytes:
 * what does not fit (the deepest derefs first, since they come last) is
 * recorded as dropped (PD_DROPPED / PU_TOO_MANY_ITEMS) and rendered as
 * "<not captured: too many items>".
 */
#ifndef CMON_PLAN_H
#define CMON_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cmon_abi.h"
#include "dwarf/ctype.h"
#include "dwarf/debuginfo.h"

/* ---- --capture NAME=EXPR ---- */

enum capture_kind {
	CAPTURE_BUF = 0, /* data=buf:len   bytes at buf, len of them (elem size 1) */
	CAPTURE_ARRAY,   /* v=values[n]    n elements of *values's type */
	CAPTURE_STR,     /* s=arg1:str     a C string at arg1 (up to --capture-max) */
};

struct capture_spec {
	char *text;          /* the spec as given, for messages */
	char *name;          /* NAME: [A-Za-z_][A-Za-z0-9_]* */
	enum capture_kind kind;
	char *ptr;           /* a parameter name, or arg0..arg5 (raw register) */
	char *len;           /* BUF/ARRAY: a parameter name or argN; NULL with len_const */
	uint64_t len_const;  /* BUF/ARRAY: a decimal count given instead of a name */
};

/* Parse "NAME=PTR:LEN", "NAME=PTR[LEN]" or "NAME=PTR:str" (LEN: a name or
 * a decimal number).  0, or -EINVAL after logging an error that quotes S;
 * -ENOMEM.  Names are checked against the function by plan__build. */
int capture_spec__parse(const char *s, struct capture_spec *out);
void capture_spec__clear(struct capture_spec *c); /* frees the strings; NULL fine */

/* ---- options ---- */

#define PLAN_DEFAULT_STRLEN 256u
/* A string reads one byte past its length to tell a cut one: the largest. */
#define PLAN_MAX_STRLEN (CMON_ITEM_MAX - 1)
#define PLAN_DEFAULT_DEREF 1u
#define PLAN_DEFAULT_CAPTURE_MAX (64u << 10)
#define PLAN_MAX_DEREF 8u

struct plan_opts {
	uint32_t strlen;       /* --strlen: bytes of a char * string, 1..CMON_ITEM_MAX */
	unsigned deref;        /* --deref: struct pointer hops, 0..PLAN_MAX_DEREF */
	uint32_t capture_max;  /* --capture-max: bytes of one --capture, 1..CMON_ITEM_MAX */
	const struct capture_spec *captures;
	size_t n_captures;
	uint8_t capture_at;    /* --capture-at: enum plan_at */
};

/* --capture-at: when what a pointer parameter points to is read. */
enum plan_at {
	PLAN_AT_ENTRY = 0, /* at the call (the default) */
	PLAN_AT_RETURN,    /* again at the return: its final value is shown */
	PLAN_AT_BOTH,      /* both: the values at entry, those at return, what changed */
};

void plan_opts__init(struct plan_opts *o); /* the defaults above, no captures */

/* ---- layout ---- */

enum plan_src_kind {
	PSRC_NONE = 0, /* unavailable: reason */
	PSRC_ARG,      /* the call record's args[index] (+ addend) */
	PSRC_RET,      /* the call record's ret (+ addend) */
	PSRC_ITEM,     /* item index of the entry plan (at_return: the return plan) */
	PSRC_CONST,    /* value */
};

enum plan_unavail {
	PU_NONE = 0,
	PU_OPTIMIZED_OUT,  /* no location */
	PU_XMM,            /* reg: xmm (DWARF number) */
	PU_X87,            /* reg: st(i) (DWARF number) */
	PU_TOO_MANY_ITEMS, /* did not fit in the plan */
};

struct plan_src {
	uint8_t kind;      /* enum plan_src_kind */
	uint8_t index;     /* PSRC_ARG: 0..5; PSRC_ITEM: item */
	uint8_t reason;    /* PSRC_NONE: enum plan_unavail */
	uint8_t reg;       /* PU_XMM/PU_X87; PSRC_ITEM of a CMON_FETCH_REG item: its register */
	uint8_t item_kind; /* PSRC_ITEM: CMON_FETCH_REG (8 bytes of a register) or _MEM */
	bool at_return;    /* PSRC_ITEM: of the return plan; PSRC_ARG: read again at the return */
	uint32_t size;     /* bytes of the value this source holds, in order */
	int64_t addend;    /* PSRC_ARG/RET/REG item: register value + addend */
	uint64_t value;    /* PSRC_CONST */
	uint8_t shift;     /* PSRC_ARG/RET/REG item: then >> shift, & mask (0: none) */
	uint64_t mask;
};

/* A parameter or the return value: its bytes are the sources in order. */
struct plan_value {
	const char *name;  /* parameter name, or "return" */
	const struct ctype *type;
	struct plan_src src[DLOC_MAX_PIECES];
	uint8_t n_src;
	bool at_return;
};

enum plan_deref_status {
	PD_OK = 0,
	PD_DROPPED,        /* did not fit: "<not captured: too many items>" */
};

/* What a pointer points to, read by one item. */
struct plan_deref {
	int16_t value;     /* the value the chain starts at */
	int16_t parent;    /* -1: the pointer is in the value's bytes; else in derefs[parent]'s */
	uint32_t off;      /* byte offset of the pointer in those bytes */
	const struct ctype *ptr_type; /* the pointer (string, or struct/union pointer) */
	int16_t item;      /* item index (at_return: in the return plan); -1 dropped */
	uint8_t status;    /* enum plan_deref_status */
	uint8_t level;     /* hops from the value: 1.. */
	bool at_return;
};

struct plan_capture {
	const char *name;
	enum capture_kind kind;
	const struct ctype *elem;  /* CAPTURE_ARRAY: element type; else NULL (bytes) */
	uint32_t elem_size;
	uint32_t size;             /* the item's size limit */
	int16_t item;              /* entry item; -1: dropped */
	/* --capture-at return|both: the return plan's item reading it again
	 * (from the entry's pointer and count, kept in the call's frame), or
	 * -1: read at the call only (a pointer or count that is not an
	 * argument register, or it did not fit) */
	int16_t ret_item;
	/* The count, to cut the bytes to exactly count * elem_size when the
	 * register held more than the argument (an int's upper half): */
	struct plan_src len;       /* PSRC_ARG, PSRC_CONST, or PSRC_NONE (unknown) */
	bool len_signed;
};

struct plan_layout {
	struct ctype_arena *arena;   /* one reference */
	bool typed;                  /* from DWARF; false: raw mode (captures only) */
	struct plan_value *values;   /* the parameters, then the return value */
	size_t n_values;
	size_t n_params;             /* values[0 .. n_params) are the parameters */
	int ret_value;               /* index of the return value, -1: void or raw */
	bool returns_void;           /* DWARF says void: no return value at all */
	struct plan_deref *derefs;
	size_t n_derefs;
	struct plan_capture *captures;
	size_t n_captures;
	unsigned n_dropped;          /* items left out (derefs and values) */
	/* --capture-at return|both: [n_params], the index in values of the
	 * parameter's copy read at the return (its pointees then), or -1. */
	int *again;
	uint8_t capture_at;          /* enum plan_at */
};

/*
 * Plan SIG (NULL: raw mode, for --capture with arg0..arg5 only) with
 * OPTS.  Fills ENTRY and RET (n = 0 when nothing is needed) and *OUT (free
 * with plan_layout__free).  Returns 0; -ENOENT when a --capture names no
 * parameter of SIG (logged, naming it); -EINVAL for a capture that cannot
 * work (a count that is not an integer, an array capture without a typed
 * pointer, options out of range: logged); -ENOTSUP for a count or pointer
 * that is not readable at the entry (logged); -ENOMEM.
 */
int plan__build(const struct func_sig *sig, const struct plan_opts *opts,
		struct cmon_fetch_plan *entry, struct cmon_fetch_plan *ret,
		struct plan_layout **out);
void plan_layout__free(struct plan_layout *l); /* NULL fine */

#endif
