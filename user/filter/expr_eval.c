// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * expr_eval.c: an --if tree decided over a recorded call's JSON values.
 * Three-valued: 1 true, 0 false, -1 unknown (the call has no such value).
 */
#include <stdlib.h>
#include <string.h>
#include "cmon_abi.h"
#include "filter/expr.h"
#include "filter/expr_eval.h"
#include "filter/expr_tree.h"

enum val_kind { V_NONE, V_NUM, V_STR };

struct val {
	enum val_kind k;
	int64_t n;
	const char *s;
};

/* A pointer as the records write it, "0x55d0...", is its address. */
static bool hex_of(const char *s, int64_t *n)
{
	char *end;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2])
		return false;
	*n = (int64_t)strtoull(s, &end, 16);
	return !*end;
}

static struct val val_of_json(json_t *v)
{
	struct val r = { V_NONE, 0, NULL };

	if (json_is_integer(v)) {
		r.k = V_NUM;
		r.n = (int64_t)json_integer_value(v);
	} else if (json_is_real(v)) { /* a 64-bit unsigned past INT64_MAX */
		r.k = V_NUM;
		r.n = (int64_t)(uint64_t)json_real_value(v);
	} else if (json_is_boolean(v)) {
		r.k = V_NUM;
		r.n = json_is_true(v);
	} else if (json_is_string(v)) {
		r.k = V_STR;
		r.s = json_string_value(v);
	}
	return r;
}

static struct val path_val(const struct node *n, const struct expr_call *c)
{
	struct val none = { V_NONE, 0, NULL };
	json_t *v = NULL;

	if (!strcmp(n->str, "latency_ns") && !n->n_steps) {
		struct val r = { V_NUM, (int64_t)c->latency_ns, NULL };

		return c->has_latency ? r : none;
	}
	if (!strcmp(n->str, "ret"))
		v = c->ret;
	else if (c->args)
		v = json_object_get(c->args, n->str);
	if (!v && c->regs && !strncmp(n->str, "arg", 3) && n->str[3] >= '0' && n->str[3] <= '5' &&
	    !n->str[4] && !n->n_steps) {
		struct val r = { V_NUM, c->regs[n->str[3] - '0'], NULL };

		return r;
	}
	/* a member through -> or .: the record keeps a followed struct as an object */
	for (size_t i = 0; v && i < n->n_steps; i++)
		v = json_is_object(v) ? json_object_get(v, n->steps[i].name) : NULL;
	return v ? val_of_json(v) : none;
}

static struct val value(const struct node *n, const struct expr_call *c)
{
	struct val r = { V_NONE, 0, NULL };

	if (n->kind == N_NUM) {
		r.k = V_NUM;
		r.n = n->num;
	} else if (n->kind == N_STR) {
		r.k = V_STR;
		r.s = n->str;
	} else if (n->kind == N_PATH) {
		r = path_val(n, c);
	}
	return r;
}

static int cmp(int op, int64_t a, int64_t b)
{
	switch (op) {
	case CMON_OP_EQ: return a == b;
	case CMON_OP_NE: return a != b;
	case CMON_OP_LT: return a < b;
	case CMON_OP_LE: return a <= b;
	case CMON_OP_GT: return a > b;
	case CMON_OP_GE: return a >= b;
	}
	return -1;
}

static int eval(const struct node *n, const struct expr_call *c)
{
	struct val a, b;
	int l, r;

	switch (n->kind) {
	case N_NOT:
		l = eval(n->l, c);
		return l < 0 ? -1 : !l;
	case N_AND:
		l = eval(n->l, c);
		r = eval(n->r, c);
		return !l || !r ? 0 : (l < 0 || r < 0 ? -1 : 1);
	case N_OR:
		l = eval(n->l, c);
		r = eval(n->r, c);
		return l == 1 || r == 1 ? 1 : (l < 0 || r < 0 ? -1 : 0);
	case N_CMP:
		a = value(n->l, c);
		b = value(n->r, c);
		if (a.k == V_NONE || b.k == V_NONE)
			return -1;
		if (a.k == V_STR && b.k == V_STR) {
			int eq = !strcmp(a.s, b.s);

			return n->op == CMON_OP_EQ ? eq : n->op == CMON_OP_NE ? !eq : -1;
		}
		/* a pointer's address against a number; a string read through
		 * a pointer that was set, against 0 */
		if ((a.k == V_STR && !hex_of(a.s, &a.n)) || (b.k == V_STR && !hex_of(b.s, &b.n))) {
			int64_t other = a.k == V_STR ? b.n : a.n;

			if (other || (n->op != CMON_OP_EQ && n->op != CMON_OP_NE))
				return -1;
			return n->op == CMON_OP_NE;
		}
		return cmp(n->op, a.n, b.n);
	default: /* a value alone: true when not 0 (a string: a pointer that is set) */
		a = value(n, c);
		if (a.k == V_NONE)
			return -1;
		if (a.k == V_STR)
			return hex_of(a.s, &a.n) ? a.n != 0 : 1;
		return a.n != 0;
	}
}

bool expr__eval(const struct expr *e, const struct expr_call *c)
{
	return eval(e->root, c) == 1;
}
