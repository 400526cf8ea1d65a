/*
 * render.h: typed values of one call, from its call record and capture
 * items, by a plan layout (plan.h): JSON for -F json, a JSON value per
 * parameter for CSV columns and the text table, blobs for the capture
 * store.
 *
 * JSON conventions (every value is valid JSON whatever bytes it holds):
 *   integers      decimal numbers, signed or unsigned per type and width
 *                 (int -7 is -7; __int128 too); bitfields extracted and
 *                 sign-extended per their type
 *   char          a one-character string; the byte as a code point: 'a' is
 *                 "a", 0 is "\u0000", 0xff is "\u00ff" (signed char and
 *                 unsigned char, int8_t/uint8_t, are numbers)
 *   bool          true / false (any nonzero byte is true)
 *   enum          the enumerator's name as a string, "GREEN"; the number
 *                 when no enumerator has the value (flag combinations)
 *   float/double  numbers (shortest form that reads back exactly);
 *                 "NaN", "Infinity", "-Infinity" as strings; complex:
 *                 [re, im]; long double (x87) from memory too
 *   pointers      "0x7ffd1234" (lowercase hex), "0x0" for NULL
 *   char *        the string, escaped (bytes that are not UTF-8 as \u00XX);
 *                 null when the pointer is NULL; cut at --strlen: the path
 *                 is listed in "truncated"
 *   struct/union pointers read through (--deref): the pointee, as an object;
 *                 null when NULL; past the depth: the address
 *   struct/union  an object of the members in declaration order; members of
 *                 anonymous structs/unions appear in the enclosing object;
 *                 unnamed bitfields are left out; a union shows every member
 *   char [N]      a string up to the first NUL (all N bytes without one)
 *   other arrays  arrays; numeric arrays are also blobs
 *   unavailable   an explicit marker string, never a made-up number:
 *                   "<unavailable: float in xmm0>"   (SSE register)
 *                   "<unavailable: in xmm1>"         (non-float bytes in one)
 *                   "<unavailable: long double in st0>"
 *                   "<unavailable: optimized out>"
 *                   "<unavailable: not captured>"    (no capture record came)
 *                   "<unavailable: truncated>"       (past the bytes read)
 *                   "<not captured: too many items>" (did not fit the plan)
 *   faults        memory the kernel could not read (CMON_ITEM_FAULT on a
 *                 non-NULL pointer): null, and the path is listed in "faults"
 * Paths name where a value sits: "s", "p->name", "cfg.inner.x", "v[2]",
 * "return", "return->next"; capture names for --capture items.  The
 * record writer puts out->truncated and out->faults next to "args"
 * (e.g. "truncated": ["p->name"]), or leaves them out when empty.
 *
 * --capture values (out->captures, an object by capture name):
 *   NAME=buf:len   the bytes as a lowercase hex string, "68690a"
 *   NAME=v[n]      an array of the element type's JSON values
 *   NAME=p:str     a string
 * each also a blob.  A cut capture is listed in "truncated".
 *
 * Blobs (for the capture store): a --capture, or a numeric array inside a
 * value (all of its bytes available): NAME (capture name or path), a
 * numpy dtype ("<i4", "|u1", "<f8", "|S1" for char, "|V24" for structs),
 * a shape (elements per dimension), the raw bytes (little-endian as read),
 * and truncated.
 */
#ifndef CMON_RENDER_H
#define CMON_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dwarf/plan.h"
#include "core/escape.h"

/* One fetch item's result, as decoded from a struct cmon_capture_rec. */
struct render_item {
	uint32_t flags;     /* enum cmon_item_flags */
	uint32_t len;       /* bytes at data */
	const void *data;
};

/*
 * The value form for tables: a function's values as leaves, one column
 * each (render__columns, from its layout: a scalar, a string, an array,
 * a Rust enum; a struct's members and what a followed struct pointer
 * points to are their own leaves), and per call the JSON text of each
 * leaf that is there (render_out.leaves: a span of that call's JSON, so
 * JSON keeps its nested text and CSV writes each leaf as a native cell).
 * Columns are named as CSV heads them: "args.o.in.x" (a parameter o
 * pointing to a struct with a struct member in), "ret" / "ret.x" (the
 * return value), "captures.NAME" (a --capture).
 */
enum render_kind {
	RK_NULL = 0,  /* null: a NULL pointer, a fault, no value */
	RK_NUMBER,    /* an integer or a finite float, as JSON writes it */
	RK_FLOAT_STR, /* "NaN", "Infinity", "-Infinity" */
	RK_BOOL,      /* true / false */
	RK_STRING,    /* a JSON string: text, a char, an enumerator's name */
	RK_ADDRESS,   /* "0x7ffd1234": a pointer not followed */
	RK_MARKER,    /* "<unavailable: ...>": no value, and why */
	RK_JSON,      /* an array or object (arrays, Rust enums, captures) */
};

struct render_cols {
	size_t n;
	char **names;    /* [n] the column names, "args.o.in.x" */
	char **paths;    /* [n] the same leaves as render paths, "o->in.x" */
	uint32_t *slots; /* path hash table: column + 1, 0 empty */
	size_t n_slots;  /* a power of two */
	size_t first_capture; /* columns [first_capture, n): the --captures */
	bool typed;      /* from DWARF; false: the registers are the values */
};

/* The leaves of layout L as columns.  0, -ENOMEM. */
int render__columns(const struct plan_layout *l, struct render_cols **out);
void render_cols__free(struct render_cols *c); /* NULL fine */

struct render_leaf {
	uint32_t col;        /* in the function's render_cols */
	uint8_t kind;        /* enum render_kind */
	uint32_t len;
	const char *text;    /* JSON text, len bytes (not NUL-terminated) */
};

struct render_call {
	const int64_t *args;  /* [6]: the call record's raw argument registers */
	int64_t ret;          /* rax at the return */
	bool has_ret;         /* ret and return items are valid (status ok) */
	const struct render_item *entry; /* the entry capture record's items; */
	size_t n_entry;                  /* NULL, 0 when none came */
	const struct render_item *exit;  /* the return capture record's items */
	size_t n_exit;
	const struct render_cols *cols;  /* the layout's columns: leaves are
					  * noted; NULL: not wanted */
};

#define RENDER_MAX_DIMS 4

struct render_blob {
	const char *name;          /* capture name or value path */
	char dtype[16];
	uint32_t shape[RENDER_MAX_DIMS];
	uint8_t ndim;
	const void *data;          /* owned by the render_out */
	size_t len;
	bool truncated;
};

/* Reused from call to call (zero-initialise once, release at the end). */
struct render_out {
	struct strbuf args;        /* {"name":value,...}; {} without parameters */
	struct strbuf ret;         /* a JSON value; null when the call did not
				    * return, the function is void, or raw mode */
	struct strbuf captures;    /* {"name":value,...}; {} without --capture */
	struct strbuf truncated;   /* a JSON array of paths, [] when none */
	struct strbuf faults;      /* a JSON array of paths, [] when none */
	/* --capture-at both, a call that returned: the pointer parameters'
	 * values read again at the return, {"name":value,...}, and the
	 * leaves that differ, {"a->balance":[100,110],...}; empty otherwise */
	struct strbuf at_return, changed;
	size_t n_changed;
	size_t n_truncated, n_faults;
	/* --capture-at both: the bytes [from, to) of truncated / faults (and
	 * how many paths) that the values read again at the return added: a
	 * store keeps only the entry's values, and notes only theirs */
	size_t again_truncated[2], again_faults[2], again_n_truncated, again_n_faults;
	size_t n_unavailable;      /* values in SSE or x87 registers (unreadable) */
	const char **cells;        /* [n_cells]: each parameter's JSON value text */
	size_t n_cells;
	struct render_blob *blobs;
	size_t n_blobs;
	struct render_leaf *leaves; /* render_call.cols: the leaves there, in */
	size_t n_leaves;            /* the order met (column order as a rule) */
	/* the values not there (markers), "path: why; ...", "" when none */
	struct strbuf unavailable;
	/* private */
	struct strbuf cellbuf, blobbuf, path, one;
	size_t *cell_offs, cap_cells, cap_blobs;
	size_t *blob_offs;
	size_t cap_leaves;
	uint8_t *leaf_where;        /* [n_leaves] 0: cellbuf, 1: ret, 2: captures */
};

/* Render call C by layout L into OUT (cleared first).  0 or -ENOMEM. */
int render__call(const struct plan_layout *l, const struct render_call *c, struct render_out *out);

/* A double / float as JSON: the shortest text that reads back exactly;
 * NaN and infinities as the strings "NaN", "Infinity", "-Infinity". */
#define RENDER_NUM_LEN 40
void render__double_json(double d, char buf[RENDER_NUM_LEN]);
void render__float_json(float f, char buf[RENDER_NUM_LEN]);
void render_out__release(struct render_out *out); /* NULL fine */

#endif
