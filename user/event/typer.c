// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/grow.h"
#include "core/log.h"
#include "dwarf/debuginfo.h"
#include "pending.h"
#include "typer.h"

struct typed_func {
	struct plan_layout *layout; /* NULL: raw */
	struct render_cols *cols;   /* its values' columns (render.h) */
	size_t *columns;            /* per parameter: its extra CSV column */
	const char **names;
};

struct typer {
	const struct probe_set *set;
	struct typed_func *funcs;
	struct cmon_fetch_plan *plans; /* 2 per function */
	bool any_plan;
	size_t n_typed;
	const char **columns;
	size_t n_columns, cap_columns;
	struct capture_spec *specs;
	size_t n_specs;
	struct pending_caps *pending; /* captures waiting for their call records */
	struct render_out out;
	uint64_t unavailable;       /* values rendered <unavailable: ... in xmm/st> */
	struct call_typed view;
	struct render_item items[2][CMON_MAX_FETCH];
	bool leaves;                /* typer_opts.leaves */
};

static size_t column_of(struct typer *t, const char *name)
{
	for (size_t i = 0; i < t->n_columns; i++)
		if (!strcmp(t->columns[i], name))
			return i;
	if (GROW(t->columns, t->n_columns, t->cap_columns, 16))
		return SIZE_MAX;
	t->columns[t->n_columns] = name;
	return t->n_columns++;
}

static bool names_arg(const struct func_sig *sig, const char *name)
{
	if (!name)
		return true;
	if (!strncmp(name, "arg", 3) && name[3] >= '0' && name[3] <= '5' && !name[4])
		return true; /* a raw register */
	for (size_t i = 0; sig && i < sig->n_params; i++)
		if (!strcmp(sig->params[i].name, name))
			return true;
	return false;
}

/* The --capture specs this function can take: those whose names it has
 * (the others are for other functions, and not worth a message). */
/* What became of each --capture (typer__new): no function names its
 * arguments, one took it, or its plan was refused (with an error line). */
enum { SPEC_UNUSED = 0, SPEC_TAKEN, SPEC_REFUSED };

static int plan_one(struct typer *t, size_t i, const struct func_sig *sig,
		    const struct plan_opts *base, uint8_t *took)
{
	struct capture_spec *mine = NULL;
	struct plan_opts o = *base;
	struct plan_layout *layout = NULL;
	size_t n = 0;
	int err = 0;

	if (t->n_specs) {
		mine = calloc(t->n_specs, sizeof(*mine));
		if (!mine)
			return -ENOMEM;
	}
	for (size_t k = 0; k < t->n_specs; k++) {
		struct cmon_fetch_plan e, r;
		struct plan_layout *probe = NULL;

		if (!names_arg(sig, t->specs[k].ptr) || !names_arg(sig, t->specs[k].len))
			continue;
		o.captures = &t->specs[k];
		o.n_captures = 1;
		if (plan__build(sig, &o, &e, &r, &probe) == 0) {
			mine[n++] = t->specs[k];
			took[k] = SPEC_TAKEN;
		} else if (!took[k]) {
			took[k] = SPEC_REFUSED; /* plan__build said why */
		}
		plan_layout__free(probe);
	}
	o.captures = mine;
	o.n_captures = n;
	err = plan__build(sig, &o, &t->plans[2 * i], &t->plans[2 * i + 1], &layout);
	free(mine);
	if (err)
		return err;
	if (t->plans[2 * i].n || t->plans[2 * i + 1].n)
		t->any_plan = true;
	if (!layout->typed && !layout->n_captures) {
		plan_layout__free(layout);
		return 0;
	}
	t->funcs[i].layout = layout;
	if (layout->typed)
		t->n_typed++;
	err = render__columns(layout, &t->funcs[i].cols);
	if (err)
		return err;
	t->funcs[i].columns = calloc(layout->n_params + 1, sizeof(size_t));
	t->funcs[i].names = calloc(layout->n_params + 1, sizeof(char *));
	if (!t->funcs[i].columns || !t->funcs[i].names)
		return -ENOMEM;
	for (size_t p = 0; p < layout->n_params; p++) {
		t->funcs[i].names[p] = layout->values[p].name;
		t->funcs[i].columns[p] = column_of(t, layout->values[p].name);
		if (t->funcs[i].columns[p] == SIZE_MAX)
			return -ENOMEM;
	}
	return 0;
}

/* A parameter the ABI left in an SSE register because its frame slot was
 * not written yet at the probe (gcc -O0 floats). */
static bool float_in_slot_later(const struct func_sig *sig)
{
	for (size_t i = 0; i < sig->n_params; i++) {
		const struct dloc *l = &sig->params[i].loc;

		for (unsigned k = 0; l->source == DLOC_SRC_ABI && k < l->n; k++)
			if (l->p[k].kind == DLOC_XMM)
				return true;
	}
	return false;
}

/* Every parameter readable from DWARF's own location (none in an SSE
 * register or unknown). */
static bool all_readable(const struct func_sig *sig)
{
	for (size_t i = 0; i < sig->n_params; i++) {
		const struct dloc *l = &sig->params[i].loc;

		for (unsigned k = 0; k < l->n; k++)
			if (l->p[k].kind == DLOC_XMM || l->p[k].kind == DLOC_X87 ||
			    l->p[k].kind == DLOC_NONE)
				return false;
	}
	return true;
}

/*
 * The signature of F at its entry probe; when a float parameter is only
 * readable once the prologue has stored it (-O0), move the entry probe to
 * where the body begins, with the return-address slot the CFI gives there
 * (so returns still pair), and read every parameter there.
 */
static void signature_of(struct debuginfo *di, struct probe_func *f, struct func_sig **out)
{
	struct func_sig *sig = NULL, *later = NULL;
	uint64_t pc;
	uint8_t reg;
	int64_t off;

	*out = NULL;
	if (debuginfo__signature(di, f->addr, f->addr + f->entry.skip, true, &sig))
		return;
	if (float_in_slot_later(sig) && !debuginfo__body_start(di, f->addr, &pc, &reg, &off) &&
	    pc - f->addr < f->size && !debuginfo__signature(di, f->addr, pc, false, &later) &&
	    all_readable(later)) {
		func_sig__free(sig);
		sig = later;
		f->body_skip = (uint32_t)(pc - f->addr);
		f->slot_reg = reg;
		f->slot_off = (uint16_t)off;
		log_info("%s: entry probe past the prologue (+%u), where its float parameters "
			 "are stored", f->name, f->body_skip);
	} else {
		func_sig__free(later);
	}
	*out = sig;
}

int typer__new(struct probe_set *set, const struct typer_opts *opts, struct typer **out)
{
	struct debuginfo **dis = NULL;
	struct plan_opts po;
	struct typer *t;
	uint8_t *took = NULL;
	int err = 0;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (t)
		t->leaves = opts->leaves;
	if (!t)
		return -ENOMEM;
	t->set = set;
	t->funcs = calloc(set->n_funcs ? set->n_funcs : 1, sizeof(*t->funcs));
	t->plans = calloc(2 * (set->n_funcs ? set->n_funcs : 1), sizeof(*t->plans));
	t->specs = calloc(opts->n_captures ? opts->n_captures : 1, sizeof(*t->specs));
	took = calloc(opts->n_captures ? opts->n_captures : 1, sizeof(*took));
	dis = calloc(set->n_objects ? set->n_objects : 1, sizeof(*dis));
	t->pending = pending__new(0);
	if (!t->funcs || !t->plans || !t->specs || !took || !dis || !t->pending) {
		err = -ENOMEM;
		goto cleanup;
	}
	plan_opts__init(&po);
	if (opts->strlen)
		po.strlen = opts->strlen;
	if (opts->deref_set)
		po.deref = opts->deref;
	if (opts->capture_max)
		po.capture_max = opts->capture_max;
	po.capture_at = opts->capture_at;
	for (size_t k = 0; k < opts->n_captures; k++) {
		/* The syntax was checked with the options: only ENOMEM here. */
		err = capture_spec__parse(opts->captures[k], &t->specs[k]);
		if (err)
			goto cleanup;
		t->n_specs++;
	}
	for (size_t i = 0; i < set->n_funcs; i++) {
		struct probe_func *f = &set->funcs[i];
		struct func_sig *sig = NULL;

		bool line = f->usdt && f->usdt_spec.kind == CMON_SITE_LINE;

		if (f->usdt && !(line && opts->locals))
			continue; /* a probe site, not a function: its note types it */
		if (f->python)
			continue; /* CPython's: its records are Python calls (python/) */
		if (!opts->raw && !dis[f->object])
			dis[f->object] = debuginfo__open(set->objects[f->object].attach_path);
		if (dis[f->object] && debuginfo__kind(dis[f->object]) == DEBUGINFO_DWARF) {
			if (line)
				debuginfo__locals(dis[f->object], f->addr, &sig);
			else
				signature_of(dis[f->object], f, &sig);
		}
		err = plan_one(t, i, sig, &po, took);
		func_sig__free(sig);
		if (err) {
			log_error("cannot plan the arguments of %s: %s", f->name, strerror(-err));
			goto cleanup;
		}
	}
	for (size_t k = 0; k < t->n_specs; k++) {
		if (took[k] != SPEC_TAKEN) {
			if (took[k] != SPEC_REFUSED) /* else its own line said why */
				log_error("--capture '%s': no traced function has the arguments "
					  "it names", t->specs[k].text);
			err = took[k] == SPEC_REFUSED ? -EINVAL : -ENOENT;
			goto cleanup;
		}
	}
	for (size_t o = 0; o < set->n_objects; o++)
		if (dis[o])
			log_info("%s: %s", set->objects[o].path, debuginfo__describe(dis[o]));
cleanup:
	for (size_t o = 0; dis && o < set->n_objects; o++)
		debuginfo__free(dis[o]);
	free(dis);
	free(took);
	if (err) {
		typer__free(t);
		return err;
	}
	*out = t;
	return 0;
}

const struct cmon_fetch_plan *typer__plans(const struct typer *t)
{
	return t->any_plan ? t->plans : NULL;
}

size_t typer__typed_count(const struct typer *t) { return t->n_typed; }

const char *const *typer__columns(const struct typer *t, size_t *n)
{
	*n = t->n_columns;
	return t->columns;
}

const struct render_cols *typer__cols(const struct typer *t, uint32_t func_id)
{
	return t && func_id < t->set->n_funcs ? t->funcs[func_id].cols : NULL;
}

const struct plan_layout *typer__layout(const struct typer *t, uint32_t func_id)
{
	return func_id < t->set->n_funcs ? t->funcs[func_id].layout : NULL;
}

static int put_str(struct strbuf *sb, const char *s)
{
	return json_escape(sb, s ? s : "");
}

char *typer__signature_json(const struct typer *t, uint32_t func_id)
{
	const struct plan_layout *l = typer__layout(t, func_id);
	struct strbuf sb = {};
	int err;

	if (func_id >= t->set->n_funcs)
		return NULL;
	if (!l || !l->typed) {
		/* No DWARF: the six argument registers and rax, as trace shows
		 * them (signed 64-bit). */
		err = strbuf__puts(&sb, "{\"params\":[");
		for (int i = 0; i < CMON_MAX_ARGS && !err; i++)
			err = strbuf__printf(&sb, "%s{\"name\":\"arg%d\",\"type\":\"long\","
					     "\"kind\":\"raw\"}", i ? "," : "", i);
		if (!err)
			err = strbuf__puts(&sb, "],\"ret\":\"long\"");
		goto captures;
	}
	err = strbuf__puts(&sb, "{\"params\":[");
	for (size_t i = 0; i < l->n_params && !err; i++) {
		const struct plan_value *v = &l->values[i];

		err = strbuf__puts(&sb, i ? ",{\"name\":" : "{\"name\":");
		if (!err)
			err = put_str(&sb, v->name);
		if (!err)
			err = strbuf__puts(&sb, ",\"type\":");
		if (!err)
			err = put_str(&sb, v->type ? v->type->name : "?");
		if (!err)
			err = strbuf__puts(&sb, ",\"kind\":");
		if (!err)
			err = put_str(&sb, v->type ? ctype_kind__name(ctype__concrete(v->type)->kind)
						   : "unknown");
		if (!err)
			err = strbuf__puts(&sb, "}");
	}
	if (!err)
		err = strbuf__puts(&sb, "],\"ret\":");
	if (!err)
		err = put_str(&sb, l->ret_value >= 0 && l->values[l->ret_value].type
					   ? l->values[l->ret_value].type->name
					   : "void");
captures:
	/* The --capture values of each call are blobs of these names. */
	for (size_t i = 0; l && i < l->n_captures && !err; i++) {
		static const char *const kinds[] = { [CAPTURE_BUF] = "bytes",
						     [CAPTURE_ARRAY] = "array",
						     [CAPTURE_STR] = "str" };

		err = strbuf__puts(&sb, i ? ",{\"name\":" : ",\"captures\":[{\"name\":");
		if (!err)
			err = put_str(&sb, l->captures[i].name);
		if (!err)
			err = strbuf__printf(&sb, ",\"kind\":\"%s\"}", kinds[l->captures[i].kind]);
		if (!err && i + 1 == l->n_captures)
			err = strbuf__puts(&sb, "]");
	}
	if (!err)
		err = strbuf__puts(&sb, "}");
	if (err) {
		free(sb.buf);
		return NULL;
	}
	return sb.buf;
}

int typer__capture(struct typer *t, const struct cmon_capture_rec *rec)
{
	if (rec->func_id >= t->set->n_funcs || !t->funcs[rec->func_id].layout)
		return 0;
	if (rec->at_return == CMON_CAPTURE_DROP) {
		/* --if / --on-change left the call out at its return. */
		pending__forget(t->pending, rec->tid, rec->ts_entry_ns, rec->func_id);
		return 0;
	}
	return pending__put(t->pending, rec);
}

uint64_t typer__orphans(const struct typer *t)
{
	return t ? pending__evicted(t->pending) : 0;
}

/* Split a capture record into its items. */
static size_t items_of(const struct cmon_capture_rec *rec, struct render_item *items)
{
	const uint8_t *cur = (const uint8_t *)(rec + 1);
	const uint8_t *end = cur + rec->len;
	size_t n = 0;

	for (uint32_t i = 0; i < rec->n && n < CMON_MAX_FETCH; i++) {
		struct cmon_capture_item it;

		if ((size_t)(end - cur) < sizeof(it))
			break;
		memcpy(&it, cur, sizeof(it));
		cur += sizeof(it);
		if (it.len > (size_t)(end - cur))
			break;
		items[n].flags = it.flags;
		items[n].len = it.len;
		items[n].data = cur;
		n++;
		cur += (it.len + 7) & ~7u;
	}
	return n;
}

const struct call_typed *typer__render(struct typer *t, const struct cmon_call_rec *rec,
				       const struct render_out **render)
{
	const struct typed_func *tf;
	struct cmon_capture_rec *entry, *exit;
	struct render_call rc = {};
	int64_t args[CMON_MAX_ARGS];
	struct call_typed *v = &t->view;

	if (render)
		*render = NULL;
	if (rec->func_id >= t->set->n_funcs || !t->funcs[rec->func_id].layout)
		return NULL;
	tf = &t->funcs[rec->func_id];
	entry = pending__take(t->pending, rec->tid, rec->ts_entry_ns, rec->func_id, 0);
	exit = pending__take(t->pending, rec->tid, rec->ts_entry_ns, rec->func_id, 1);
	for (int i = 0; i < CMON_MAX_ARGS; i++)
		args[i] = (int64_t)rec->args[i];
	rc.args = args;
	rc.ret = (int64_t)rec->ret;
	rc.has_ret = (rec->flags & CMON_CALL_RETURNED) && !(rec->flags & CMON_CALL_TAILCALL);
	rc.cols = t->leaves ? tf->cols : NULL;
	if (entry) {
		rc.entry = t->items[0];
		rc.n_entry = items_of(entry, t->items[0]);
	}
	if (exit && rc.has_ret) {
		rc.exit = t->items[1];
		rc.n_exit = items_of(exit, t->items[1]);
	}
	if (render__call(tf->layout, &rc, &t->out)) {
		pending__release(entry);
		pending__release(exit);
		return NULL;
	}
	pending__release(entry);
	pending__release(exit);
	t->unavailable += t->out.n_unavailable;
	memset(v, 0, sizeof(*v));
	v->args = t->out.args.buf ? t->out.args.buf : "{}";
	v->retval = t->out.ret.buf ? t->out.ret.buf : "null";
	v->captures = tf->layout->n_captures && t->out.captures.buf ? t->out.captures.buf : NULL;
	v->truncated = t->out.n_truncated ? t->out.truncated.buf : NULL;
	v->faults = t->out.n_faults ? t->out.faults.buf : NULL;
	v->at_return = t->out.at_return.len ? t->out.at_return.buf : NULL;
	v->changed = t->out.changed.len ? t->out.changed.buf : NULL;
	v->names = tf->names;
	v->cells = t->out.cells;
	v->columns = tf->columns;
	v->n_cells = t->out.n_cells < tf->layout->n_params ? t->out.n_cells : tf->layout->n_params;
	v->returns_void = tf->layout->returns_void;
	v->cols = rc.cols;
	v->leaves = t->out.leaves;
	v->n_leaves = rc.cols ? t->out.n_leaves : 0;
	v->unavailable = t->out.unavailable.len ? t->out.unavailable.buf : NULL;
	if (render)
		*render = &t->out;
	return v;
}

uint64_t typer__unavailable(const struct typer *t)
{
	return t ? t->unavailable : 0;
}

void typer__free(struct typer *t)
{
	if (!t)
		return;
	pending__free(t->pending);
	for (size_t i = 0; t->funcs && i < t->set->n_funcs; i++) {
		plan_layout__free(t->funcs[i].layout);
		render_cols__free(t->funcs[i].cols);
		free(t->funcs[i].columns);
		free(t->funcs[i].names);
	}
	for (size_t k = 0; k < t->n_specs; k++)
		capture_spec__clear(&t->specs[k]);
	render_out__release(&t->out);
	free(t->specs);
	free(t->columns);
	free(t->funcs);
	free(t->plans);
	free(t);
}
