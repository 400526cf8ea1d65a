// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* funcpattern.c: parse --func specs and match them against symbols. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "core/cxxname.h"
#include "funcpattern.h"

int funcpattern__parse(const char *spec, struct funcpattern *out)
{
	const char *sep = NULL, *func = spec;

	memset(out, 0, sizeof(*out));
	if (*spec == '!') {
		out->exclude = true;
		spec++;
		func = spec;
	}
	/* The object part ends at the first lone ':'; "::" is C++ scope. */
	for (const char *s = spec; *s; s++) {
		if (*s != ':')
			continue;
		if (s[1] == ':') {
			s++;
			continue;
		}
		sep = s;
		break;
	}
	if (sep) {
		if (sep == spec)
			return -EINVAL;
		func = sep + 1;
	}
	if (!*func)
		return -EINVAL;
	if (sep) {
		out->object = strndup(spec, (size_t)(sep - spec));
		if (!out->object)
			return -ENOMEM;
	}
	out->func = strdup(func);
	if (!out->func) {
		funcpattern__clear(out);
		return -ENOMEM;
	}
	out->glob = strpbrk(out->func, "*?[") != NULL;
	return 0;
}

void funcpattern__clear(struct funcpattern *p)
{
	if (!p)
		return;
	free(p->object);
	free(p->func);
	p->object = NULL;
	p->func = NULL;
	p->glob = false;
	p->exclude = false;
}

bool funcpattern__match_object(const struct funcpattern *p, const char *path)
{
	const char *obj = p->object, *base;
	size_t n;

	if (!obj)
		return true;
	if (strchr(obj, '/')) {
		char *a = realpath(obj, NULL), *b = realpath(path, NULL);
		bool same = strcmp(a ? a : obj, b ? b : path) == 0;

		free(b);
		free(a);
		return same;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	n = strlen(obj);
	if (strncmp(base, obj, n) != 0)
		return false;
	/* "libc" takes libc.so.6 and libc-2.31.so, not libcap.so.2. */
	return base[n] == '\0' || base[n] == '-' || base[n] == '.';
}

size_t funcpattern__rust_hash_cut(const char *name)
{
	size_t n = strlen(name);
	const char *h;

	if (n < 19)
		return n;
	h = name + n - 19;
	if (h[0] != ':' || h[1] != ':' || h[2] != 'h')
		return n;
	for (int i = 3; i < 19; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return n;
	return n - 19;
}

char *funcpattern__strip_params(const char *name, char *buf, size_t len)
{
	const char *open = cxxname__params(name);
	size_t n;

	if (!open)
		return NULL;
	n = (size_t)(open - name);
	if (n >= len)
		return NULL;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return buf;
}

static bool match_one(const struct funcpattern *p, const char *s)
{
	if (p->glob)
		return fnmatch(p->func, s, 0) == 0;
	return strcmp(p->func, s) == 0;
}

/* Match P against the first N bytes of S. */
static bool match_prefix(const struct funcpattern *p, const char *s, size_t n,
			 char *buf, size_t len)
{
	char *tmp = buf;
	bool ok;

	if (!p->glob && strlen(p->func) != n)
		return false;
	if (n >= len && !(tmp = malloc(n + 1)))
		return false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	ok = match_one(p, tmp);
	if (tmp != buf)
		free(tmp);
	return ok;
}

/*
 * A function template's instance demangles with its return type first and
 * its template arguments last: "int ns::twice<int>(int)".  NAME..OPEN
 * being that ("...>" before the parameters), *FROM is where the qualified
 * name starts (past the return type, at the last blank outside brackets)
 * and *LT where its template arguments do; false when it is not one.
 */
static bool template_name(const char *name, const char *open, const char **from,
			  const char **lt)
{
	int angle = 0, paren = 0;
	const char *q;

	if (open == name || open[-1] != '>')
		return false;
	*lt = NULL;
	*from = name;
	for (q = open; q-- > name;) {
		if (*q == '>')
			angle++;
		else if (*q == '<' && --angle == 0 && !*lt && !paren)
			*lt = q;
		else if (*q == ')')
			paren++;
		else if (*q == '(')
			paren--;
		else if (*q == ' ' && !angle && !paren) {
			*from = q + 1;
			break;
		}
	}
	return *lt && *lt > *from;
}

/* Where the '>' closing the '<' at S is, or NULL. */
static const char *angle_close(const char *s)
{
	int depth = 0;

	for (; *s; s++)
		if (*s == '<')
			depth++;
		else if (*s == '>' && --depth == 0)
			return s;
	return NULL;
}

/*
 * A Rust v0 name as the legacy scheme spelled it, the way people write
 * them: an inherent method "<a::Type>::f" is "a::Type::f" (a trait's
 * "<a::Type as b::Trait>::f" stays), and a generic instance
 * "a::f::<u8>" is "a::f".  So "a::*" still takes all of crate a.
 */
static bool match_rust_v0(const struct funcpattern *p, const char *dem)
{
	size_t n = strlen(dem);
	const char *r = dem, *close;
	char *plain = malloc(n + 1), *w = plain;
	bool ok;

	if (!plain)
		return false;
	if (r[0] == '<' && (close = angle_close(r)) && !strncmp(close + 1, "::", 2)) {
		const char *as = strstr(r, " as ");

		if (!as || as > close) {
			memcpy(w, r + 1, (size_t)(close - r - 1));
			w += close - r - 1;
			r = close + 1;
		}
	}
	while (*r) {
		if (!strncmp(r, "::<", 3) && (close = angle_close(r + 2))) {
			r = close + 1;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
	ok = strcmp(plain, dem) && match_one(p, plain);
	free(plain);
	return ok;
}

bool funcpattern__match_func(const struct funcpattern *p, const struct symtab_func *f)
{
	const char *dem = f->demangled, *open, *from, *lt;
	char buf[256];
	size_t cut;

	if (match_one(p, f->name))
		return true;
	if (!dem)
		return false;
	open = cxxname__params(dem);
	/* A template's instance: "ns::twice<int>(int)", "ns::twice<int>" and
	 * "ns::twice"; its return type is no part of its name (a glob over the
	 * whole text matched "main::*" against main's lambda returned by
	 * std::forward), but the whole text itself is (as cmon list shows it). */
	if (open && template_name(dem, open, &from, &lt))
		return (!p->glob && match_one(p, dem)) || match_one(p, from) ||
		       match_prefix(p, from, (size_t)(open - from), buf, sizeof(buf)) ||
		       match_prefix(p, from, (size_t)(lt - from), buf, sizeof(buf));
	if (match_one(p, dem))
		return true;
	if (open && match_prefix(p, dem, (size_t)(open - dem), buf, sizeof(buf)))
		return true;
	cut = funcpattern__rust_hash_cut(dem);
	if (cut != strlen(dem) && match_prefix(p, dem, cut, buf, sizeof(buf)))
		return true;
	if (f->name[0] == '_' && f->name[1] == 'R' && strchr(dem, '<'))
		return match_rust_v0(p, dem);
	return false;
}
