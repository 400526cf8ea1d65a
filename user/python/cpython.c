// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cpython.c: the trace (cpython.h, pytrace_impl.h): its patterns, the
 * probes' places, its counts. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/log.h"
#include "probe/insn.h"
#include "probe/resolve.h"
#include "python/pytrace_impl.h"

struct pytrace *pytrace__new(const char *const *patterns, size_t n, size_t strlen, bool resumes)
{
	struct pytrace *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->patterns = calloc(n ? n : 1, sizeof(char *));
	pt->hits = calloc(n ? n : 1, sizeof(*pt->hits));
	pt->unmatched = calloc(n ? n : 1, sizeof(*pt->unmatched));
	if (!pt->patterns || !pt->hits || !pt->unmatched) {
		pytrace__free(pt);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		pt->patterns[i] = strdup(patterns[i]);
		if (!pt->patterns[i]) {
			pt->n_patterns = i;
			pytrace__free(pt);
			errno = ENOMEM;
			return NULL;
		}
	}
	pt->n_patterns = n;
	pt->strlen = strlen && strlen < CMON_PY_STR_MAX ? strlen : CMON_PY_STR_MAX;
	pt->resumes = resumes;
	pt->procs_fd = pt->code_fd = pt->lost_fd = -1;
	pt->args_column = SIZE_MAX;
	return pt;
}

void pytrace__free(struct pytrace *pt)
{
	if (!pt)
		return;
	pytrace__restore(pt);
	for (size_t i = 0; i < pt->n_procs; i++)
		pyproc__release(&pt->procs[i]);
	free(pt->procs);
	for (size_t i = 0; i < pt->n_patterns; i++)
		free(pt->patterns[i]);
	free(pt->patterns);
	free(pt->hits);
	free(pt->unmatched);
	free(pt->rows);
	free(pt->more);
	hmap__release(&pt->forks);
	strbuf__release(&pt->args);
	strbuf__release(&pt->ret);
	strbuf__release(&pt->where);
	strbuf__release(&pt->cellbuf);
	strbuf__release(&pt->task);
	free(pt);
}

const struct cmon_py_offsets *pytrace__bpf_offsets(const struct pytrace *pt)
{
	return pt->layout ? &pt->layout->bpf : NULL;
}

unsigned pytrace__mode(const struct pytrace *pt)
{
	return pt->mode;
}

int pytrace__rows(struct pytrace *pt, bool for_break, const struct cmon_py_pat **rows,
		  unsigned *n)
{
	int err;

	free(pt->rows);
	pt->rows = NULL;
	pt->n_rows = 0;
	err = pycode__rows((const char *const *)pt->patterns, pt->n_patterns, for_break,
			   &pt->rows, &pt->n_rows);
	*rows = pt->rows;
	*n = pt->n_rows;
	return err;
}

static int add_probe(struct probe_set *set, size_t obj, const char *name, uint64_t addr,
		     uint64_t off, enum probe_python kind)
{
	struct probe_func *f = probe_set__add_func(set, obj, name, addr, off);

	if (!f)
		return -ENOMEM;
	f->python = kind;
	f->ret_mode = kind == PROBE_PY_NEWFUNC ? RETURN_URETPROBE : RETURN_NONE;
	f->quiet = true; /* not a row of the summary: its calls are not Python calls */
	return 0;
}

/* The LEN bytes of PATH at file offset OFF, planned as code at ADDR. */
static int plan_bytes(const char *path, uint64_t off, uint64_t len, uint64_t addr,
		      struct exit_plan *plan)
{
	uint8_t *body = len && len < (64u << 20) ? malloc(len) : NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = -EIO;

	if (body && fd >= 0 && pread(fd, body, len, (off_t)off) == (ssize_t)len)
		err = insn__plan_exits(body, len, addr, plan);
	if (fd >= 0)
		close(fd);
	free(body);
	return err;
}

/*
 * The evaluator's return instructions into F's exits (its ret_mode stays
 * RETURN_NONE): where its inherited probes (links.c) see its returns, no
 * return probe held per frame, so at any depth.  Only when they are its
 * only ways out: no tail jump, in its cold part neither (its indirect
 * jumps are its opcode dispatch, computed gotos).  Else it keeps a
 * uretprobe.
 */
static void plan_eval_returns(const struct probe_set *set, struct probe_func *f)
{
	const struct probe_object *obj = &set->objects[f->object];
	const char *path = obj->attach_path ? obj->attach_path : obj->path;
	struct exit_plan hot = {}, cold = {};
	bool ok = !plan_bytes(path, f->file_offset, f->size, f->addr, &hot) && hot.complete &&
		  hot.n_ret && !hot.n_tail;

	if (ok && f->cold_size)
		ok = !plan_bytes(path, f->cold_file_offset, f->cold_size, f->cold_addr, &cold) &&
		     cold.complete && !cold.n_ret && !cold.n_tail;
	exit_plan__clear(&cold);
	if (!ok) {
		exit_plan__clear(&hot);
		return;
	}
	exit_plan__clear(&f->exits);
	f->exits = hot;
}

long pytrace__mark(struct pytrace *pt, struct probe_set *set, bool follow)
{
	long id = 0;
	size_t n = set->n_funcs;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		struct probe_func *f = &set->funcs[i];
		const struct py_interp *pi = NULL;
		size_t obj = f->object;

		if (strcmp(f->name, PY_EVAL_FUNC) || f->python)
			continue;
		for (size_t k = 0; k < pt->n_procs && !pi; k++)
			if (!strcmp(set->objects[obj].path, pt->procs[k].interp.path))
				pi = &pt->procs[k].interp;
		if (!pi)
			pi = pt->n_procs ? &pt->procs[0].interp : NULL;
		if (!pi)
			continue;
		id = (long)i;
		if (pt->mode == CMON_PY_MODE_VECTORCALL) {
			/* the evaluator's place becomes the vectorcall entry's */
			free(f->name);
			f->name = strdup(PY_VC_FUNC);
			if (!f->name)
				return -ENOMEM;
			f->python = PROBE_PY_VC;
			f->addr = pi->vc_entry;
			f->file_offset = pi->vc_entry_off;
			f->ret_mode = RETURN_NONE;
			for (int k = 0; k < PY_NEWFUNC_N && !err; k++)
				if (pi->newfunc_off[k])
					err = add_probe(set, obj, py_newfunc_names[k], pi->newfunc[k],
							pi->newfunc_off[k], PROBE_PY_NEWFUNC);
		} else {
			f->python = PROBE_PY_EVAL;
			f->ret_mode = RETURN_NONE;
			plan_eval_returns(set, f);
		}
		/* a launched interpreter's start, and a followed child's that
		 * runs it again (exec): stopped there to be set up */
		for (size_t k = 0; k < pt->n_procs && !follow; k++)
			follow = pt->procs[k].launched;
		if (pi->start_off && follow)
			err = add_probe(set, obj, "Py_InitializeFromConfig", pi->start,
					pi->start_off, PROBE_PY_START);
	}
	if (err) {
		log_error("out of memory");
		return err;
	}
	return id;
}

const char *const *pytrace__unmatched(struct pytrace *pt, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < pt->n_patterns; i++)
		if (!pt->hits[i])
			pt->unmatched[(*n)++] = pt->patterns[i];
	return pt->unmatched;
}

