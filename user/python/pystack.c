// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pystack.c: see pystack.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include "proc/procmem.h"
#include "python/pystack.h"

#define FRAME_OWNED_BY_CSTACK 3 /* 3.12+: a shim frame of C, no line */

static int varint(const uint8_t *t, size_t n, size_t *i, uint32_t *out)
{
	uint32_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*i >= n || shift > 28)
			return -1;
		b = t[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = v;
	return 0;
}

/* The location table (3.11+: Objects/locations.md), entry by entry. */
int pystack__line(pid_t pid, const struct py_layout *l, uint64_t code, uint64_t instr, int first)
{
	uint64_t table = procmem__ptr(pid, code + l->code_linetable), size = 0;
	uint64_t start = code + l->code_code, at, pos = 0;
	uint8_t *t;
	int line = first, found = first;
	size_t i = 0;

	if (!table || instr < start || procmem__read(pid, table + l->bpf.var_size, &size, 8) ||
	    !size || size > (1u << 20))
		return first;
	t = malloc(size);
	if (!t)
		return first;
	if (procmem__read(pid, table + l->bpf.bytes_data, t, size)) {
		free(t);
		return first;
	}
	at = (instr - start) / 2; /* code units */
	while (i < size) {
		uint8_t b = t[i++];
		unsigned kind = (b >> 3) & 15, len = (b & 7) + 1;
		uint32_t u = 0, skip;
		int delta = 0;
		bool known = true;

		if (!(b & 0x80))
			break; /* not an entry's first byte: lost */
		if (kind == 15) {
			known = false; /* no location */
		} else if (kind == 14 || kind == 13) {
			if (varint(t, size, &i, &u))
				break;
			delta = u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
			for (int k = 0; kind == 14 && k < 3; k++)
				if (varint(t, size, &i, &skip))
					break;
		} else if (kind >= 10) {
			delta = (int)kind - 10;
			i += 2;
		} else {
			i += 1;
		}
		line += delta;
		if (at < pos + len) {
			found = known ? line : found;
			break;
		}
		if (known)
			found = line;
		pos += len;
	}
	free(t);
	return found;
}

int pystack__callers(pid_t pid, const struct py_layout *l, uint64_t tstate, pystack_name_fn name,
		     void *ctx, struct strbuf *out)
{
	const struct cmon_py_offsets *o = &l->bpf;
	uint64_t frame = l->tstate_cframe
				 ? procmem__ptr(pid, procmem__ptr(pid, tstate + l->tstate_cframe) +
							     l->cframe_current)
				 : procmem__ptr(pid, tstate + l->cframe_current);
	int err = 0;

	for (int d = 0; frame && d < 256 && !err; d++) {
		uint64_t fcode = procmem__ptr(pid, frame + o->frame_code);
		uint64_t instr = procmem__ptr(pid, frame + l->frame_instr);
		int32_t first_traceable = 0;
		int firstlineno = 0;
		uint8_t owner = 0;

		if (!fcode)
			break;
		procmem__read(pid, frame + o->frame_owner, &owner, 1);
		procmem__read(pid, fcode + l->code_firsttraceable, &first_traceable, 4);
		/* a frame still being set up runs no line yet: not shown */
		if (owner != FRAME_OWNED_BY_CSTACK &&
		    (owner == o->owner_generator ||
		     instr >= fcode + l->code_code +
				      2 * (uint64_t)(first_traceable > 0 ? first_traceable : 0))) {
			err = name(ctx, fcode, &firstlineno, out);
			if (!err)
				err = strbuf__printf(out, ":%d)\n",
						     pystack__line(pid, l, fcode, instr, firstlineno));
		}
		frame = procmem__ptr(pid, frame + l->frame_previous);
	}
	return err;
}

uint64_t pystack__tstate_of(pid_t pid, const struct py_layout *l, uint64_t interp, pid_t tid)
{
	uint64_t t = procmem__ptr(pid, interp + l->interp_threads_head);

	for (int k = 0; t && k < 4096; k++) {
		uint64_t native = 0;

		if (!procmem__read(pid, t + l->tstate_native_tid, &native, 8) &&
		    (pid_t)native == tid)
			return t;
		t = procmem__ptr(pid, t + l->tstate_next);
	}
	return 0;
}
