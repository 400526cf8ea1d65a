/*
 * funcpattern.h: what the user wrote after --func, and whether a symbol
 * matches it.
 *
 *   foo                  exact name
 *   'sqlite3_*'          shell glob (fnmatch: * ? [...])
 *   libc.so.6:malloc     only in the object whose file name is libc.so.6
 *   libc:malloc          ... or whose file name starts with "libc.so" / "libc-"
 *   /path/to/lib.so:fn   only in that file
 *   ns::Class::method    C++ by demangled name (parameters optional)
 *   'ns::Class::*'       glob on demangled names
 *   '!PATTERN'           any of the above, excluded from what the others match
 *
 * The object prefix ends at the first ':' that is not part of a '::'.
 */
#ifndef CMON_FUNCPATTERN_H
#define CMON_FUNCPATTERN_H

#include <stdbool.h>
#include "symtab.h"

struct funcpattern {
	char *object; /* object part, or NULL when none was given */
	char *func;   /* function part, never empty */
	bool glob;    /* func holds glob metacharacters */
	bool exclude; /* written "!PATTERN": removes what it matches */
};

/* Parse SPEC into OUT.  Returns 0, or -EINVAL for an empty object or
 * function part, -ENOMEM. */
int funcpattern__parse(const char *spec, struct funcpattern *out);
void funcpattern__clear(struct funcpattern *p); /* frees members; NULL fine */

/* Does the object part accept the file at PATH?  True when there is no
 * object part.  A part with a '/' is compared with PATH after both are made
 * canonical (realpath when possible); otherwise with PATH's basename: equal,
 * or the basename starts with the part followed by ".so" or "-" or ".". */
bool funcpattern__match_object(const struct funcpattern *p, const char *path);

/* Does the function part accept F?  It is tried against F->name, and for
 * mangled symbols against the demangled name with its parameter list, and
 * without it ("ns::A::f(int) const" is also tried as "ns::A::f"); a Rust
 * legacy hash suffix ("::h0123456789abcdef") is ignored, and a Rust v0 name
 * is also tried as the legacy scheme wrote it ("<a::T>::f::<u8>" as "a::T::f"). */
bool funcpattern__match_func(const struct funcpattern *p, const struct symtab_func *f);

/* Length of NAME without a trailing Rust legacy hash "::h<16 hex>", or
 * strlen(NAME) when it has none. */
size_t funcpattern__rust_hash_cut(const char *name);

/* The demangled name without its parameter list (and trailing qualifiers),
 * written to BUF (size LEN).  Returns BUF, or NULL when NAME has no list. */
char *funcpattern__strip_params(const char *name, char *buf, size_t len);

#endif
