// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* inlined.c: see inlined.h. */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "dwarf/debuginfo_impl.h"
#include "dwarf/inlined.h"

struct walk {
	const char *name;
	char *buf;
	size_t len, used;
	int n;
};

/* The inlined copy's origin (through DW_AT_abstract_origin, and a
 * specification for C++ members) is named NAME. */
static bool origin_is(Dwarf_Die *inl, const char *name)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	const char *n;

	if (!dwarf_attr_integrate(inl, DW_AT_abstract_origin, &attr) ||
	    !dwarf_formref_die(&attr, &origin))
		return false;
	n = dwarf_diename(&origin);
	if (!n && dwarf_attr_integrate(&origin, DW_AT_name, &attr))
		n = dwarf_formstring(&attr);
	return n && !strcmp(n, name);
}

static void add_caller(struct walk *w, const char *caller)
{
	size_t cl = strlen(caller);
	char *p = w->buf;

	/* Distinct names only: the list is short, a linear scan will do. */
	for (const char *s = p; s < p + w->used;) {
		const char *e = strstr(s, ", ");
		size_t l = e ? (size_t)(e - s) : strlen(s);

		if (l == cl && !strncmp(s, caller, cl))
			return;
		if (!e)
			break;
		s = e + 2;
	}
	w->n++;
	if (w->used + cl + 6 >= w->len) {
		if (w->used + 4 < w->len && !strstr(w->buf, "..."))
			w->used += (size_t)snprintf(w->buf + w->used, w->len - w->used, ", ...");
		return;
	}
	w->used += (size_t)snprintf(w->buf + w->used, w->len - w->used, "%s%s",
				    w->used ? ", " : "", caller);
}

static void walk_children(struct walk *w, Dwarf_Die *parent, const char *caller)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		const char *here = caller;

		if (tag == DW_TAG_subprogram) {
			here = dwarf_diename(&child);
			if (!here) { /* an out-of-line copy of an abstract one */
				Dwarf_Attribute attr;
				Dwarf_Die origin;

				if (dwarf_attr_integrate(&child, DW_AT_abstract_origin, &attr) &&
				    dwarf_formref_die(&attr, &origin))
					here = dwarf_diename(&origin);
			}
		} else if (tag == DW_TAG_inlined_subroutine && caller &&
			   origin_is(&child, w->name)) {
			add_caller(w, caller);
		}
		if (dwarf_haschildren(&child))
			walk_children(w, &child, here);
	} while (dwarf_siblingof(&child, &child) == 0);
}

int inlined__callers(const char *path, const char *name, char *buf, size_t len)
{
	struct debuginfo *di = debuginfo__open(path);
	struct walk w = { .name = name, .buf = buf, .len = len };
	const char *dpath = di ? debuginfo__dwarf_path(di) : NULL;
	Dwarf *dw = NULL;
	Dwarf_Off off = 0, next;
	size_t hsize;
	int fd = -1;

	if (len)
		buf[0] = '\0';
	if (!dpath)
		goto cleanup;
	fd = open(dpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto cleanup;
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw)
		goto cleanup;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu) && debuginfo__unit_die(NULL, &cu))
			walk_children(&w, &cu, NULL);
		off = next;
	}
cleanup:
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
	debuginfo__free(di);
	return w.n;
}
