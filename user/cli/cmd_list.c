// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_list.c: `cmon list`: what the patterns would probe, where each probe
 * sits, what it costs per hit (measured on this host: cmon times its own
 * calibration functions, probe/calib.h), and how returns are observed.
 * Attaches nothing to the target.
 */
#include "core/grow.h"
#include "python/cpython.h"
#include "python/pycode.h"
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/commands.h"
#include "dwarf/debuginfo.h"
#include "dwarf/lines.h"
#include "cli/options.h"
#include "core/log.h"
#include "probe/calib.h"
#include "proc/libpath.h"

/* ns per hit of an entry probe of class COST: as measured on this host at
 * start (probe/calib.h), else the typical figure. */
static unsigned hit_ns(const struct probe_calib *c, enum probe_cost cost)
{
	if (c->valid && cost < CMON_CALIB_CLASSES)
		return (unsigned)c->call_ns[cost];
	return probe_cost__typical_ns(cost);
}

/* What a call pays for F's return probe, as text ("-": none). */
static const char *ret_ns(const struct probe_calib *c, const struct probe_func *f, char *buf,
			  size_t len)
{
	int m = f->ret_mode == RETURN_URETPROBE ? 0 : f->ret_mode == RETURN_INSN ? 1 : -1;

	if (m < 0 || f->never_returns)
		return "-";
	if (!c->valid)
		return m ? "~2600" : "~300"; /* typical single-step / uretprobe */
	snprintf(buf, len, "%llu", (unsigned long long)c->ret_ns[m]);
	return buf;
}

static void print_set(const struct probe_set *s, const struct probe_calib *c)
{
	size_t n_usdt = 0;

	for (size_t i = 0; i < s->n_funcs; i++)
		n_usdt += s->funcs[i].usdt;
	if (n_usdt < s->n_funcs)
		printf("%-40s %-20s %18s %10s %6s  %-24s %-11s %8s  %8s  %-40s  %s\n", "FUNCTION",
		       "MODULE", "ADDRESS", "OFFSET", "PROBE", "INSTRUCTION", "COST", "NS/HIT",
		       "RET NS", "RETURN", "TIMED FROM");
	for (size_t i = 0; i < s->n_funcs; i++) {
		const struct probe_func *f = &s->funcs[i];
		char ret[128], ret_cost[24], from[16], ind_text[32];

		if (f->usdt)
			continue; /* listed after the functions */
		if (f->returns_unseen)
			snprintf(ret, sizeof(ret), "entry only (its exits cannot be seen)");
		else if (f->never_returns)
			snprintf(ret, sizeof(ret), "never-returns (no exit probe)");
		else if (f->ret_mode == RETURN_INSN) {
			size_t ind = f->ind_base != UINT32_MAX ? f->exits.n_ind : 0;

			snprintf(ind_text, sizeof(ind_text), ", %zu indirect", ind);
			snprintf(ret, sizeof(ret), "ret-insn (%zu ret, %zu tail%s%s%s)",
				 f->exits.n_ret + f->cold_exits.n_ret,
				 f->exits.n_tail + f->cold_exits.n_tail, ind ? ind_text : "",
				 f->cold_size ? "; a cold part" : "",
				 f->go ? "; Go: its stack moves" : "");
		} else
			snprintf(ret, sizeof(ret), "%s", return_mode__name(f->ret_mode));
		/* Where a latency starts: the entry probe, or a single-stepped
		 * entry's step probe (insn.h), whose time has no single-step in it. */
		if (f->ret_mode == RETURN_NONE || f->never_returns)
			snprintf(from, sizeof(from), "-");
		else if (probe_func__step_timed(f))
			snprintf(from, sizeof(from), "+%u", f->step.off);
		else
			snprintf(from, sizeof(from), "entry");
		printf("%-40s %-20s %#18llx %#10llx    +%-2u  %-24s %-11s %8u  %8s  %-40s  %s\n",
		       f->name, s->objects[f->object].module, (unsigned long long)f->addr,
		       (unsigned long long)f->file_offset, f->entry.skip, f->entry.insn,
		       probe_cost__name(f->entry.cost), hit_ns(c, f->entry.cost),
		       ret_ns(c, f, ret_cost, sizeof(ret_cost)), ret, from);
	}
	for (size_t i = 0, first = 1; i < s->n_funcs; i++) {
		const struct probe_func *f = &s->funcs[i];

		if (!f->usdt)
			continue;
		if (first)
			printf("%s%-40s %-20s %18s %10s %10s  %s\n", n_usdt < s->n_funcs ? "\n" : "",
			       "USDT PROBE", "MODULE", "ADDRESS",
			       "OFFSET", "SEMAPHORE", "ARGUMENTS (SIZE@WHERE, negative: signed)");
		first = 0;
		printf("%-40s %-20s %#18llx %#10llx %#10llx  %s\n", f->name,
		       s->objects[f->object].module, (unsigned long long)f->addr,
		       (unsigned long long)f->file_offset, (unsigned long long)f->sema_offset,
		       f->usdt_args && *f->usdt_args ? f->usdt_args : "-");
	}
	/* Cost in words: where a per-call cost begins to show. */
	if (n_usdt)
		printf("\n%zu USDT probe%s.", n_usdt, n_usdt == 1 ? "" : "s");
	printf("%s%zu function%s.  A single-stepped probe costs %s%u ns per call%s: at 10,000 "
	       "calls/s per thread that is %.1f%% of a core.\n", n_usdt ? "  " : "\n",
	       s->n_funcs - n_usdt, s->n_funcs - n_usdt == 1 ? "" : "s", c->valid ? "" : "~",
	       hit_ns(c, PROBE_COST_SINGLESTEP), c->valid ? " on this host" : "",
	       hit_ns(c, PROBE_COST_SINGLESTEP) * 10000.0 / 1e9 * 100.0);
}

/* Where each probed file's symbols and DWARF came from, when some came
 * from a separate debug file (found by build ID, .gnu_debuglink or
 * debuginfod): a stripped program's listing says so; a -g build's is the
 * table alone. */
static void print_files(const struct probe_set *s)
{
	struct debuginfo **dis = calloc(s->n_objects + 1, sizeof(*dis));
	bool *used = calloc(s->n_objects + 1, sizeof(*used)), separate = false;

	if (!dis || !used)
		goto out;
	for (size_t i = 0; i < s->n_funcs; i++)
		used[s->funcs[i].object] = true;
	for (size_t oi = 0; oi < s->n_objects; oi++) {
		const struct probe_object *obj = &s->objects[oi];

		if (!used[oi])
			continue;
		dis[oi] = debuginfo__open(obj->attach_path);
		separate |= obj->symbols_from ||
			    (dis[oi] && debuginfo__dwarf_path(dis[oi]) &&
			     strcmp(debuginfo__dwarf_path(dis[oi]), obj->attach_path));
	}
	if (separate)
		printf("\n%-20s %s\n", "FILE", "DEBUG INFO");
	for (size_t oi = 0; separate && oi < s->n_objects; oi++) {
		const struct probe_object *obj = &s->objects[oi];

		if (!used[oi])
			continue;
		printf("%-20s %s\n", obj->module, obj->path);
		if (obj->symbols_from)
			printf("%-20s symbols from %s\n", "", obj->symbols_from);
		printf("%-20s %s\n", "", dis[oi] ? debuginfo__describe(dis[oi]) : "no DWARF");
	}
out:
	for (size_t oi = 0; dis && oi < s->n_objects; oi++)
		debuginfo__free(dis[oi]);
	free(dis);
	free(used);
}

/* --lines: each function's lines of code, where --line FILE:LINE can go. */
static void print_lines(const struct probe_set *s)
{
	struct debuginfo *di = NULL;
	size_t di_obj = SIZE_MAX;

	printf("%-40s %-32s %18s\n", "FUNCTION", "LINE", "ADDRESS");
	for (size_t i = 0; i < s->n_funcs; i++) {
		const struct probe_func *f = &s->funcs[i];
		struct line_row *rows = NULL;
		const char *file = NULL, *base;
		size_t n = 0;

		if (f->usdt)
			continue;
		if (f->object != di_obj) {
			debuginfo__free(di);
			di = debuginfo__open(s->objects[f->object].attach_path);
			di_obj = f->object;
		}
		if (!di || lines__in_range(di, f->addr, f->addr + (f->size ? f->size : 1), &rows,
					   &n, &file)) {
			printf("%-40s %-32s %18s\n", f->name, "(no line table)", "-");
			continue;
		}
		base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
		for (size_t k = 0; k < n; k++) {
			char where[300];

			snprintf(where, sizeof(where), "%s:%u", base, rows[k].line);
			printf("%-40s %-32s %#18llx\n", k ? "" : f->name, where,
			       (unsigned long long)rows[k].addr);
		}
		free(rows);
	}
	debuginfo__free(di);
}

/* list --py: the Python functions a process has. */
struct py_list {
	const struct cmd_opts *o;
	struct py_code **codes;
	size_t n, cap;
};

static int keep_code(void *ctx, const struct py_code *c)
{
	struct py_list *pl = ctx;
	struct py_code *copy;
	bool want = !pl->o->n_funcs;

	for (size_t i = 0; i < pl->o->n_funcs && !want; i++)
		want = pycode__matches(pl->o->funcs[i], c->qualname, c->filename);
	if (!want)
		return 0;
	if (GROW(pl->codes, pl->n, pl->cap, 64))
		return -ENOMEM;
	copy = calloc(1, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = *c;
	copy->qualname = strdup(c->qualname);
	copy->filename = strdup(c->filename);
	for (unsigned k = 0; k < c->n_names; k++)
		copy->names[k] = c->names[k] ? strdup(c->names[k]) : NULL;
	pl->codes[pl->n++] = copy;
	return copy->qualname && copy->filename ? 0 : -ENOMEM;
}

static int cmp_codes(const void *a, const void *b)
{
	const struct py_code *x = *(struct py_code *const *)a, *y = *(struct py_code *const *)b;
	int d = strcmp(x->filename, y->filename);

	return d ? d : x->firstlineno != y->firstlineno ? (x->firstlineno < y->firstlineno ? -1 : 1)
			    : strcmp(x->qualname, y->qualname);
}

static int list_python(const struct cmd_opts *o)
{
	struct py_list pl = { .o = o };
	int err = 0;

	if (o->n_pids != 1 || o->cmd || o->binary) {
		log_error("list --py: the functions of one running process: -p PID");
		return -EINVAL;
	}
	err = pytrace__list_functions(o->pids[0], keep_code, &pl);
	if (!err && pl.n)
		qsort(pl.codes, pl.n, sizeof(*pl.codes), cmp_codes);
	if (!err)
		printf("%-40s %-50s %s\n", "FUNCTION", "FILE:LINE", "PARAMETERS");
	for (size_t i = 0; !err && i < pl.n; i++) {
		const struct py_code *c = pl.codes[i];
		char where[4096];

		snprintf(where, sizeof(where), "%s:%d", c->filename, c->firstlineno);
		printf("%-40s %-50s (", c->qualname, where);
		for (unsigned k = 0; k < c->n_names; k++)
			printf("%s%s", k ? ", " : "", c->names[k] ? c->names[k] : "?");
		printf(")%s\n", pycode__is_generator(c) ? " generator" : "");
	}
	if (!err)
		printf("\n%zu function%s\n", pl.n, pl.n == 1 ? "" : "s");
	for (size_t i = 0; i < pl.n; i++)
		pycode__free(pl.codes[i]);
	free(pl.codes);
	return err;
}

int cmd_list(int argc, char **argv)
{
	struct cmd_opts o = {};
	struct resolve_opts ro = {};
	struct funcpattern *pats = NULL;
	struct probe_set *set = NULL;
	struct probe_calib calib = {};
	char *exe = NULL;
	int err = cmd_opts__begin(CMD_LIST, argc, argv, &o);

	if (err >= 0)
		return err;
	err = 0;
	if (o.py_list) {
		err = list_python(&o);
		goto cleanup;
	}
	pats = calloc(o.n_funcs ? o.n_funcs : 1, sizeof(*pats));
	if (!pats) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < o.n_funcs; i++) {
		if (funcpattern__parse(o.funcs[i], &pats[i])) {
			log_error("invalid function pattern '%s'", o.funcs[i]);
			err = -EINVAL;
			goto cleanup;
		}
	}
	if (o.cmd) {
		err = libpath__find_exe(o.cmd[0], &exe);
		if (err) {
			log_error("%s: %s", o.cmd[0], strerror(-err));
			goto cleanup;
		}
	}
	ro.pids = o.pids;
	ro.n_pids = o.n_pids;
	ro.binary = o.binary;
	ro.launch_exe = exe;
	ro.patterns = pats;
	ro.n_patterns = o.n_funcs;
	ro.usdts = o.usdts;
	ro.n_usdts = o.n_usdts;
	ro.ret_choice = o.ret_choice;
	ro.list_only = true;
	err = probe_set__resolve(&ro, &set);
	if (err)
		goto cleanup;
	/* Without privilege (or BPF) the typical figures are shown. */
	if (!o.list_lines && probe_calib__measure(&calib))
		log_info("cannot measure the probes' cost here: typical figures shown");
	if (o.list_lines)
		print_lines(set);
	else
		print_set(set, &calib);
	if (!o.list_lines)
		print_files(set);
cleanup:
	probe_set__free(set);
	for (size_t i = 0; pats && i < o.n_funcs; i++)
		funcpattern__clear(&pats[i]);
	free(pats);
	free(exe);
	cmd_opts__free(&o);
	return err ? CMON_EXIT_ERROR : CMON_EXIT_OK;
}
