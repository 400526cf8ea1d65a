// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cxxname.c: the parts of a demangled name ("ns::A::f(int) const"), for
 * the patterns that match it and the views that print it.
 */
#include <string.h>
#include "cxxname.h"

const char *cxxname__params(const char *name)
{
	const char *end = strrchr(name, ')'), *open = NULL;
	int depth = 0;

	if (!end)
		return NULL;
	/* What follows the list is qualifiers (" const", " &&", " [clone .cold]");
	 * a "::" means the parens were a scope: "(anonymous namespace)::x". */
	if (strstr(end, "::"))
		return NULL;
	for (size_t i = (size_t)(end - name) + 1; i-- > 0;) {
		if (name[i] == ')')
			depth++;
		else if (name[i] == '(' && --depth == 0) {
			open = name + i;
			break;
		}
	}
	if (!open || open == name)
		return NULL;
	/* "A::operator()" on its own: those parens are the operator's name. */
	if (open[1] == ')' && open - name >= 8 && strncmp(open - 8, "operator", 8) == 0)
		return NULL;
	return open;
}
