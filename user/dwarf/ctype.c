// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ctype.c: the type model's arena, constructors and queries. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dwarf/ctype.h"

/* Chunks of bump-allocated memory; one type graph is a few KiB. */
struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

struct ctype_arena {
	unsigned refs;
	struct arena_chunk *chunks;
};

#define ARENA_CHUNK (16u << 10)

static const char *const kind_names[] = {
	[CTYPE_VOID] = "void",       [CTYPE_INT] = "int",         [CTYPE_UINT] = "uint",
	[CTYPE_CHAR] = "char",       [CTYPE_BOOL] = "bool",       [CTYPE_ENUM] = "enum",
	[CTYPE_FLOAT] = "float",     [CTYPE_POINTER] = "pointer", [CTYPE_STRUCT] = "struct",
	[CTYPE_UNION] = "union",     [CTYPE_ARRAY] = "array",     [CTYPE_FUNC] = "func",
	[CTYPE_UNKNOWN] = "unknown",
};

const char *ctype_kind__name(enum ctype_kind k)
{
	if ((unsigned)k >= sizeof(kind_names) / sizeof(kind_names[0]))
		return "unknown";
	return kind_names[k];
}

const struct ctype *ctype__concrete(const struct ctype *t)
{
	int guard = 64;

	while (t && t->alias_of && guard-- > 0)
		t = t->alias_of;
	return t;
}

bool ctype__is_string(const struct ctype *t)
{
	return t && t->kind == CTYPE_POINTER && t->target && t->target->kind == CTYPE_CHAR;
}

/* Rust's references to text: &str, &mut str, &Path, &OsStr (a fat pointer
 * { data_ptr, length }). */
static bool is_rust_text_name(const char *n)
{
	static const char *const names[] = { "str", "std::path::Path", "std::ffi::os_str::OsStr" };

	if (!strncmp(n, "struct ", 7))
		n += 7;
	if (*n++ != '&')
		return false;
	if (!strncmp(n, "mut ", 4))
		n += 4;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(n, names[i]))
			return true;
	return false;
}

bool ctype__is_sized_string(const struct ctype *t)
{
	const char *ptr, *len;

	t = ctype__concrete(t);
	if (!t || t->kind != CTYPE_STRUCT || !t->name || t->n_members != 2)
		return false;
	if (!strcmp(t->name, "string") || !strcmp(t->name, "struct string")) {
		ptr = "str"; /* Go */
		len = "len";
	} else if (is_rust_text_name(t->name)) {
		ptr = "data_ptr";
		len = "length";
	} else {
		return false;
	}
	return t->members[0].name && !strcmp(t->members[0].name, ptr) &&
	       t->members[0].offset == 0 && ctype__concrete(t->members[0].type)->kind == CTYPE_POINTER &&
	       t->members[1].name && !strcmp(t->members[1].name, len) && t->members[1].offset == 8;
}

bool ctype__is_go_slice(const struct ctype *t)
{
	const struct ctype *p;

	t = ctype__concrete(t);
	if (!t || t->kind != CTYPE_STRUCT || !t->name || t->n_members != 3)
		return false;
	if (strncmp(t->name, "[]", 2) && strncmp(t->name, "struct []", 9))
		return false;
	p = ctype__concrete(t->members[0].type);
	return t->members[0].name && !strcmp(t->members[0].name, "array") &&
	       t->members[0].offset == 0 && p->kind == CTYPE_POINTER && p->target &&
	       ctype__concrete(p->target)->size > 0 && t->members[1].offset == 8 &&
	       t->members[2].offset == 16;
}

bool ctype__is_struct_ptr(const struct ctype *t)
{
	const struct ctype *p;

	if (!t || t->kind != CTYPE_POINTER || !t->target)
		return false;
	p = t->target;
	return (p->kind == CTYPE_STRUCT || p->kind == CTYPE_UNION) && !p->incomplete && p->size > 0;
}

bool ctype__is_numeric(const struct ctype *t)
{
	if (!t)
		return false;
	switch (t->kind) {
	case CTYPE_INT:
	case CTYPE_UINT:
		return t->size == 1 || t->size == 2 || t->size == 4 || t->size == 8;
	case CTYPE_CHAR:
	case CTYPE_BOOL:
		return t->size == 1;
	case CTYPE_ENUM:
		return t->size == 1 || t->size == 2 || t->size == 4 || t->size == 8;
	case CTYPE_FLOAT:
		return !t->is_x87 && !t->is_complex && (t->size == 4 || t->size == 8);
	default:
		return false;
	}
}

const char *ctype__dtype(const struct ctype *t, char *buf, size_t len)
{
	char kind = 0;
	bool one = false;

	if (!len)
		return buf;
	if (ctype__is_numeric(t)) {
		switch (t->kind) {
		case CTYPE_INT:
			kind = 'i';
			break;
		case CTYPE_ENUM:
			kind = t->is_signed ? 'i' : 'u';
			break;
		case CTYPE_UINT:
			kind = 'u';
			break;
		case CTYPE_CHAR:
			kind = 'S';
			break;
		case CTYPE_BOOL:
			kind = 'b';
			break;
		case CTYPE_FLOAT:
			kind = 'f';
			break;
		default:
			break;
		}
		/* numpy writes byte order '|' for one-byte types. */
		one = t->size == 1;
		snprintf(buf, len, "%c%c%u", one ? '|' : '<', kind, t->size);
		return buf;
	}
	snprintf(buf, len, "|V%u", t ? t->size : 0);
	return buf;
}

/* Where the identifier goes in abstract declarator TYPE: before the first
 * ')' that closes a declarator group "(*", before the first '[' or
 * parameter list '(' after the base type, or at the end. */
static size_t declarator_hole(const char *type)
{
	int angle = 0;

	for (size_t i = 0; type[i]; i++) {
		char c = type[i];

		if (c == '<')
			angle++;
		else if (c == '>' && angle)
			angle--;
		if (angle || c == '<' || c == '>')
			continue;
		if (c == '(') {
			size_t j = i + 1;

			while (type[j] == ' ')
				j++;
			if (type[j] == '*' || type[j] == '&' || type[j] == '^')
				continue; /* a group: the hole is inside */
			return i;
		}
		if (c == ')' || c == '[')
			return i;
	}
	return strlen(type);
}

char *ctype__declare(const char *type, const char *name)
{
	size_t hole = declarator_hole(type), tl = strlen(type), nl = strlen(name);
	char before = hole ? type[hole - 1] : ' ';
	/* "int n", "char *s", "int v[4]" (the space before '[' is there) */
	bool space = hole && before != ' ' && before != '*' && before != '&' && before != '(' &&
		     before != '^';
	size_t cut = hole;
	char *out = malloc(tl + nl + 2);

	if (!out)
		return NULL;
	memcpy(out, type, cut);
	if (space)
		out[cut++] = ' ';
	memcpy(out + cut, name, nl);
	memcpy(out + cut + nl, type + hole, tl - hole + 1);
	return out;
}

const char *ctype__enum_name(const struct ctype *t, int64_t value)
{
	if (!t || t->kind != CTYPE_ENUM)
		return NULL;
	for (size_t i = 0; i < t->n_enumerators; i++)
		if (t->enumerators[i].value == value)
			return t->enumerators[i].name;
	return NULL;
}

/* ---- arena ---- */

struct ctype_arena *ctype_arena__new(void)
{
	struct ctype_arena *a = calloc(1, sizeof(*a));

	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	a->refs = 1;
	return a;
}

struct ctype_arena *ctype_arena__get(struct ctype_arena *a)
{
	if (a)
		a->refs++;
	return a;
}

void ctype_arena__put(struct ctype_arena *a)
{
	struct arena_chunk *c, *next;

	if (!a || --a->refs > 0)
		return;
	for (c = a->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

void *ctype_arena__alloc(struct ctype_arena *a, size_t size)
{
	const size_t al = sizeof(max_align_t);
	struct arena_chunk *c = a->chunks;
	size_t need = (size + al - 1) / al * al, cap;
	void *p;

	if (size > SIZE_MAX / 2) {
		errno = ENOMEM;
		return NULL;
	}
	if (!need)
		need = al;
	if (!c || c->cap - c->used < need) {
		cap = need > ARENA_CHUNK ? need : ARENA_CHUNK;
		c = malloc(sizeof(*c) + cap);
		if (!c) {
			errno = ENOMEM;
			return NULL;
		}
		c->used = 0;
		c->cap = cap;
		/* A big allocation goes behind the current chunk so the
		 * current chunk's free room is not wasted. */
		if (a->chunks && cap > ARENA_CHUNK) {
			c->next = a->chunks->next;
			a->chunks->next = c;
		} else {
			c->next = a->chunks;
			a->chunks = c;
		}
	}
	p = (char *)c->data + c->used;
	c->used += need;
	memset(p, 0, need);
	return p;
}

char *ctype_arena__strndup(struct ctype_arena *a, const char *s, size_t n)
{
	char *p = ctype_arena__alloc(a, n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *ctype_arena__strdup(struct ctype_arena *a, const char *s)
{
	return ctype_arena__strndup(a, s, strlen(s));
}

/* ---- constructors ---- */

struct ctype *ctype__new(struct ctype_arena *a, enum ctype_kind kind, const char *name,
			 uint32_t size, uint32_t align)
{
	struct ctype *t = ctype_arena__alloc(a, sizeof(*t));

	if (!t)
		return NULL;
	t->kind = kind;
	t->name = ctype_arena__strdup(a, name ? name : "?");
	if (!t->name)
		return NULL;
	t->size = size;
	t->align = align ? align : 1;
	return t;
}

struct ctype *ctype__new_int(struct ctype_arena *a, enum ctype_kind kind, const char *name,
			     uint32_t size)
{
	struct ctype *t = ctype__new(a, kind, name, size, size > 16 ? 16 : size);

	if (t)
		t->is_signed = kind == CTYPE_INT || kind == CTYPE_CHAR;
	return t;
}

struct ctype *ctype__new_pointer(struct ctype_arena *a, const struct ctype *target)
{
	const char *tn = target ? target->name : "void";
	size_t n = strlen(tn);
	char *name = malloc(n + 3);
	struct ctype *t;

	if (!name) {
		errno = ENOMEM;
		return NULL;
	}
	if (n && tn[n - 1] == '*')
		snprintf(name, n + 3, "%s*", tn);
	else
		snprintf(name, n + 3, "%s *", tn);
	t = ctype__new(a, CTYPE_POINTER, name, 8, 8);
	free(name);
	if (t)
		t->target = target;
	return t;
}

struct ctype *ctype__new_array(struct ctype_arena *a, const struct ctype *elem, uint32_t count)
{
	size_t n = strlen(elem->name) + 16;
	char *name = malloc(n);
	uint64_t size = (uint64_t)elem->size * count;
	struct ctype *t;

	if (!name) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(name, n, "%s [%u]", elem->name, count);
	t = ctype__new(a, CTYPE_ARRAY, name, size > UINT32_MAX ? 0 : (uint32_t)size, elem->align);
	free(name);
	if (!t)
		return NULL;
	t->target = elem;
	t->count = count;
	t->incomplete = count == 0;
	return t;
}

struct ctype *ctype__new_alias(struct ctype_arena *a, const struct ctype *t, const char *name)
{
	struct ctype *n = ctype_arena__alloc(a, sizeof(*n));

	if (!n)
		return NULL;
	*n = *t;
	n->name = ctype_arena__strdup(a, name);
	if (!n->name)
		return NULL;
	n->alias_of = t;
	return n;
}
