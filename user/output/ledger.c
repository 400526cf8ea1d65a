// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ledger.c: see ledger.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "ledger.h"

int out_ledger__init(struct out_ledger *l, size_t n_funcs)
{
	memset(l, 0, sizeof(*l));
	l->n_funcs = n_funcs;
	l->written_per_func = calloc(n_funcs ? n_funcs : 1, sizeof(*l->written_per_func));
	return l->written_per_func ? 0 : -ENOMEM;
}

int out_ledger__add(struct out_ledger *l, uint32_t func, uint64_t end)
{
	size_t cap_func = l->cap; /* func beside end: the same capacity */

	if (GROW(l->func, l->n, cap_func, 1024) || GROW(l->end, l->n, l->cap, 1024)) {
		l->unwritten++;
		return -ENOMEM;
	}
	l->func[l->n] = func;
	l->end[l->n] = end;
	l->n++;
	return 0;
}

void out_ledger__settle(struct out_ledger *l, int err, uint64_t on_disk)
{
	size_t kept = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (!err || l->end[i] <= on_disk) {
			l->written++;
			if (l->func[i] < l->n_funcs)
				l->written_per_func[l->func[i]]++;
		} else if (err > 0) {
			l->func[kept] = l->func[i]; /* not durable yet */
			l->end[kept++] = l->end[i];
		} else {
			l->unwritten++;
		}
	}
	l->n = kept;
}

void out_ledger__refuse(struct out_ledger *l)
{
	l->unwritten++;
}

void out_ledger__free(struct out_ledger *l)
{
	free(l->func);
	free(l->end);
	free(l->written_per_func);
	memset(l, 0, sizeof(*l));
}
