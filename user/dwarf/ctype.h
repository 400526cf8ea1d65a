/*
 * ctype.h: the C type model typed arguments are planned and rendered from,
 * built from DWARF by debuginfo.c (or by hand, in tests).
 *
 * Every node has a resolved KIND and a display NAME.  Typedefs and
 * qualifiers are nodes of their own whose fields are copies of the type
 * they stand for (kind, size, members, ...) with their own name and
 * alias_of set: `size_t` is {kind CTYPE_UINT, size 8, name "size_t"},
 * `const rec_t *` a pointer whose target is named "const rec_t".  Users
 * switch on kind and never need to strip typedefs.
 *
 * Nodes live in a reference-counted arena: a struct func_sig and a plan
 * layout each hold a reference, so they outlive the debuginfo that built
 * them.  Recursive types (struct node { struct node *next; }) are graphs,
 * not trees: walk them with a depth bound.
 */
#ifndef CMON_CTYPE_H
#define CMON_CTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ctype_kind {
	CTYPE_VOID = 0,
	CTYPE_INT,     /* signed integer: size 1, 2, 4, 8, 16 (also signed char) */
	CTYPE_UINT,    /* unsigned integer: size 1, 2, 4, 8, 16 (also unsigned char, char16_t) */
	CTYPE_CHAR,    /* plain `char` only (is_signed per ABI: true on x86-64) */
	CTYPE_BOOL,
	CTYPE_ENUM,    /* enumerators; size and is_signed of the underlying type */
	CTYPE_FLOAT,   /* size 4, 8, 16 (x87 long double: is_x87); is_complex: 2 parts */
	CTYPE_POINTER, /* target: pointee (CTYPE_VOID for void *); C++ references too */
	CTYPE_STRUCT,  /* members; C++ classes too */
	CTYPE_UNION,
	CTYPE_ARRAY,   /* target: element; count (0: unknown, flexible); a[2][3] nests */
	CTYPE_FUNC,    /* a function type: only as a pointee; target: return type */
	CTYPE_UNKNOWN, /* not modelled (decimal float, pointer to member): raw bytes */
};

struct ctype;

struct ctype_member {
	const char *name;        /* NULL: anonymous struct/union member, or unnamed bitfield */
	uint32_t offset;         /* bytes from the start of the aggregate */
	uint32_t bit_offset;     /* bitfields: bits from the start of the aggregate, LSB first */
	uint16_t bit_size;       /* 0: not a bitfield */
	const struct ctype *type;
};

/* One variant of a Rust enum (a DWARF variant part): its fields are the
 * members of TYPE, a struct laid over the whole enum. */
struct ctype_variant {
	const char *name;         /* "Some", "Err" */
	const struct ctype *type;
	uint64_t discr_value;     /* the discriminant that selects it */
	bool is_default;          /* no value of its own: any other discriminant */
};

struct ctype_enumerator {
	const char *name;
	int64_t value;           /* an unsigned 64-bit enumerator is stored bit-for-bit */
};

struct ctype {
	enum ctype_kind kind;
	const char *name;        /* display name: "int", "size_t", "struct point *", "char [16]" */
	uint32_t size;           /* bytes; 0 for void, functions and incomplete types */
	uint32_t align;          /* bytes, >= 1 */
	bool is_signed;          /* INT, CHAR, ENUM */
	bool is_complex;         /* FLOAT */
	bool is_x87;             /* FLOAT: 80-bit extended precision in 16 bytes */
	bool incomplete;         /* STRUCT/UNION declared only, ARRAY of unknown count */
	bool by_reference;       /* STRUCT/UNION: C++ non-trivial class, passed by invisible reference */
	const struct ctype *target;  /* POINTER: pointee; ARRAY: element; FUNC: return type */
	uint32_t count;          /* ARRAY: elements */
	const struct ctype_member *members;    /* STRUCT/UNION, in declaration order */
	size_t n_members;
	const struct ctype_enumerator *enumerators; /* ENUM */
	size_t n_enumerators;
	const struct ctype *alias_of; /* typedef/qualifier: the type named; NULL otherwise */
	/* STRUCT: a Rust enum, one of VARIANTS as the discriminant of
	 * DISCR_SIZE bytes at DISCR_OFFSET says (n_variants 0: a plain struct) */
	const struct ctype_variant *variants;
	size_t n_variants;
	uint32_t discr_offset, discr_size;
};

/* "void" "int" "uint" "char" "bool" "enum" "float" "pointer" "struct"
 * "union" "array" "func" "unknown" */
const char *ctype_kind__name(enum ctype_kind k);

/* The type with every typedef and qualifier stripped (same fields, the
 * underlying name): "size_t" -> "unsigned long". */
const struct ctype *ctype__concrete(const struct ctype *t);

/* A C string: pointer to plain char (any qualifiers). */
bool ctype__is_string(const struct ctype *t);

/* A string with its length beside it: Go's string header (DWARF: struct
 * string { *uint8 str; int len }), Rust's &str, &Path and &OsStr ({
 * data_ptr, length }): shown as the text it points to, that many bytes. */
bool ctype__is_sized_string(const struct ctype *t);

/* Go's slice header (struct []T { *T array; int len; int cap }): shown as
 * its elements, up to GO_SLICE_MAX of them. */
bool ctype__is_go_slice(const struct ctype *t);
#define GO_SLICE_MAX 32

/* Pointer to a complete struct or union: what --deref follows. */
bool ctype__is_struct_ptr(const struct ctype *t);

/* A scalar whose value numpy can hold (int, uint, char, bool, enum, float
 * that is not x87 or complex). */
bool ctype__is_numeric(const struct ctype *t);

/* numpy dtype string of a scalar: "<i4", "<u8", "<f8", "|u1", "|b1", "|S1"
 * (char); for anything else "|V<size>" (raw bytes).  Writes at most LEN
 * bytes with the NUL; returns BUF. */
const char *ctype__dtype(const struct ctype *t, char *buf, size_t len);

/* A declaration in C syntax: NAME put where the abstract declarator TYPE
 * (a display name as DWARF types get them) leaves room for it:
 * ("const double (*)[2]", "mat") -> "const double (*mat)[2]",
 * ("int [4]", "v") -> "int v[4]", ("char *", "s") -> "char *s",
 * ("void (*)(int)", "cb") -> "void (*cb)(int)", ("int", "n") -> "int n".
 * Template arguments (<...>) are skipped.  malloc'd; NULL on ENOMEM. */
char *ctype__declare(const char *type, const char *name);

/* Enumerator name of VALUE, or NULL. */
const char *ctype__enum_name(const struct ctype *t, int64_t value);

/* ---- arena ---- */

struct ctype_arena;

struct ctype_arena *ctype_arena__new(void); /* refcount 1; NULL + errno */
struct ctype_arena *ctype_arena__get(struct ctype_arena *a); /* +1, returns a */
void ctype_arena__put(struct ctype_arena *a); /* -1, frees at 0; NULL fine */

/* Zeroed memory / a copy of S (N bytes, NUL added), owned by the arena.
 * NULL + errno ENOMEM. */
void *ctype_arena__alloc(struct ctype_arena *a, size_t size);
char *ctype_arena__strdup(struct ctype_arena *a, const char *s);
char *ctype_arena__strndup(struct ctype_arena *a, const char *s, size_t n);

/* ---- constructors (debuginfo.c, tests) ----
 * A new node of KIND named NAME (copied), with size and align; fill the
 * rest of its fields directly.  NULL + errno. */
struct ctype *ctype__new(struct ctype_arena *a, enum ctype_kind kind, const char *name,
			 uint32_t size, uint32_t align);

/* Scalars and derived types with their conventional display names: an
 * integer (INT/UINT/CHAR/BOOL) of SIZE bytes; a pointer to T named
 * "<T> *" (or "<T>*" when T's name ends in '*'); an array of COUNT T named
 * "<T> [COUNT]". */
struct ctype *ctype__new_int(struct ctype_arena *a, enum ctype_kind kind, const char *name,
			     uint32_t size);
struct ctype *ctype__new_pointer(struct ctype_arena *a, const struct ctype *target);
struct ctype *ctype__new_array(struct ctype_arena *a, const struct ctype *elem, uint32_t count);

/* A typedef/qualified name for T: a copy of T's fields with NAME and
 * alias_of = T.  T must be complete (all fields final). */
struct ctype *ctype__new_alias(struct ctype_arena *a, const struct ctype *t, const char *name);

#endif
