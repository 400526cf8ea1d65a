// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * expr.c: --if / --on-change expressions: a recursive-descent parser to a
 * small tree, then per function a postfix program for bpf/expr.bpf.h.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "dwarf/ctype.h"
#include "filter/expr.h"
#include "filter/expr_tree.h"
#include "probe/calib.h"
#include "probe/resolve.h"

/* How deep a tree may nest (parentheses, '!', operands of an operator).
 * A program holds CMON_EXPR_MAX_OPS steps, so nothing deeper could
 * compile; the bound keeps the recursive parser, compiler and free off a
 * stack that 30,000 '(' would overflow. */
#define EXPR_MAX_DEPTH 64
#define QUOTE_MAX 200 /* bytes of the text an error line quotes */

struct parser {
	const char *text, *p;
	const char *what;
	char *msg;      /* expr__check: the message goes here, not to the log */
	size_t msg_len;
	int nest;       /* '(' and '!' being parsed: the parser's own recursion */
	int err;
};

static void node_free(struct node *n)
{
	if (!n)
		return;
	node_free(n->l);
	node_free(n->r);
	free(n->str);
	for (size_t i = 0; i < n->n_steps; i++)
		free(n->steps[i].name);
	free(n);
}

void expr__free(struct expr *e)
{
	if (!e)
		return;
	node_free(e->root);
	free(e->text);
	free(e->what);
	free(e);
}

static int col_of(const struct parser *ps, const char *at) { return (int)(at - ps->text) + 1; }

/* TEXT as an error line quotes it: at most QUOTE_MAX bytes of it ("..."
 * after), control characters escaped (a spec's multi-line YAML string
 * would break the line). */
static void quote_text(const char *text, char *out, size_t len)
{
	size_t o = 0, i;

	for (i = 0; text[i] && i < QUOTE_MAX && o + 5 < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\n' || c == '\t')
			o += (size_t)snprintf(out + o, len - o, "\\%c", c == '\n' ? 'n' : 't');
		else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (text[i] && o + 4 < len)
		o += (size_t)snprintf(out + o, len - o, "...");
	out[o < len ? o : len - 1] = 0;
}

/* The one error line of a parse; the first one wins. */
__attribute__((format(printf, 3, 4)))
static void perr(struct parser *ps, const char *at, const char *fmt, ...)
{
	char msg[160], quoted[4 * QUOTE_MAX + 8];
	va_list ap;

	if (ps->err)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	quote_text(ps->text, quoted, sizeof(quoted));
	if (ps->msg)
		snprintf(ps->msg, ps->msg_len, "%s at column %d: %s", msg, col_of(ps, at), quoted);
	else
		log_error("%s: %s at column %d: %s", ps->what, msg, col_of(ps, at), quoted);
	ps->err = -EINVAL;
}

static void skip_ws(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

/* Skip TOK (after blanks) when it is next. */
static bool accept(struct parser *ps, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(ps);
	if (strncmp(ps->p, tok, n))
		return false;
	ps->p += n;
	return true;
}

static struct node *new_node(struct parser *ps, enum node_kind kind, const char *at)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n) {
		if (!ps->err)
			ps->err = -ENOMEM;
		return NULL;
	}
	n->kind = kind;
	n->col = col_of(ps, at);
	return n;
}

/* N's depth from its operands; false (and the error) past the bound. */
static bool set_depth(struct parser *ps, struct node *n)
{
	int l = n->l ? n->l->depth : 0, r = n->r ? n->r->depth : 0;

	n->depth = 1 + (l > r ? l : r);
	if (n->depth <= EXPR_MAX_DEPTH)
		return true;
	perr(ps, ps->text + n->col - 1, "nested deeper than %d levels", EXPR_MAX_DEPTH);
	return false;
}

/* Entering a '(' or a '!': false (and the error) past the bound. */
static bool nest_in(struct parser *ps, const char *at)
{
	if (++ps->nest <= EXPR_MAX_DEPTH)
		return true;
	perr(ps, at, "nested deeper than %d levels", EXPR_MAX_DEPTH);
	return false;
}

static char *ident(struct parser *ps)
{
	const char *s = ps->p;
	char *v;

	if (!isalpha((unsigned char)*s) && *s != '_')
		return NULL;
	while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
		ps->p++;
	v = strndup(s, (size_t)(ps->p - s));
	if (!v && !ps->err)
		ps->err = -ENOMEM;
	return v;
}

static struct node *parse_or(struct parser *ps);

static struct node *parse_number(struct parser *ps, bool neg)
{
	const char *at = ps->p;
	struct node *n;
	uint64_t v;
	char *end;

	errno = 0;
	v = strtoull(ps->p, &end, 0);
	if (errno || end == ps->p || isalnum((unsigned char)*end) || *end == '_' ||
	    (neg && v > (uint64_t)INT64_MAX + 1)) {
		perr(ps, at, "invalid number");
		return NULL;
	}
	ps->p = end;
	n = new_node(ps, N_NUM, at);
	if (n)
		n->num = neg ? (int64_t)(0 - v) : (int64_t)v;
	return n;
}

static struct node *parse_string(struct parser *ps)
{
	const char *at = ps->p;
	char buf[CMON_EXPR_STR_MAX + 1];
	size_t len = 0;
	struct node *n;

	ps->p++; /* the quote */
	while (*ps->p && *ps->p != '"') {
		char c = *ps->p++;

		if (c == '\\') {
			c = *ps->p++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case '\\': case '"': break;
			default:
				perr(ps, ps->p - 2, "unknown escape");
				return NULL;
			}
		}
		if (len >= CMON_EXPR_STR_MAX) {
			perr(ps, at, "string longer than %d bytes", CMON_EXPR_STR_MAX);
			return NULL;
		}
		buf[len++] = c;
	}
	if (*ps->p != '"') {
		perr(ps, ps->p, "expected '\"'");
		return NULL;
	}
	ps->p++;
	n = new_node(ps, N_STR, at);
	if (!n)
		return NULL;
	n->str = malloc(len + 1);
	if (!n->str) {
		node_free(n);
		ps->err = -ENOMEM;
		return NULL;
	}
	memcpy(n->str, buf, len);
	n->str[len] = 0;
	n->str_len = len;
	return n;
}

static struct node *parse_path(struct parser *ps)
{
	const char *at = ps->p;
	struct node *n = new_node(ps, N_PATH, at);

	if (!n)
		return NULL;
	n->str = ident(ps);
	if (!n->str)
		goto fail;
	for (;;) {
		bool arrow;
		const char *step_at;

		skip_ws(ps);
		if (!strncmp(ps->p, "->", 2))
			arrow = true;
		else if (*ps->p == '.')
			arrow = false;
		else
			break;
		ps->p += arrow ? 2 : 1;
		skip_ws(ps);
		step_at = ps->p;
		if (n->n_steps == PATH_MAX_STEPS) {
			perr(ps, step_at, "more than %d members in a row", PATH_MAX_STEPS);
			goto fail;
		}
		n->steps[n->n_steps].name = ident(ps);
		if (!n->steps[n->n_steps].name) {
			perr(ps, step_at, "expected a member name");
			goto fail;
		}
		n->steps[n->n_steps].arrow = arrow;
		n->steps[n->n_steps].col = col_of(ps, step_at);
		n->n_steps++;
	}
	return n;
fail:
	node_free(n);
	return NULL;
}

static struct node *parse_primary(struct parser *ps)
{
	struct node *n;

	skip_ws(ps);
	if (*ps->p == '(') {
		if (!nest_in(ps, ps->p))
			return NULL;
		ps->p++;
		n = parse_or(ps);
		ps->nest--;
		if (!n)
			return NULL;
		if (!accept(ps, ")")) {
			perr(ps, ps->p, "expected ')'");
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (*ps->p == '"')
		return parse_string(ps);
	if (isdigit((unsigned char)*ps->p))
		return parse_number(ps, false);
	if (*ps->p == '-' && isdigit((unsigned char)ps->p[1])) {
		ps->p++;
		return parse_number(ps, true);
	}
	if (isalpha((unsigned char)*ps->p) || *ps->p == '_')
		return parse_path(ps);
	perr(ps, ps->p, *ps->p ? "expected a value" : "expected a value, found the end");
	return NULL;
}

static struct node *parse_unary(struct parser *ps)
{
	const char *at;
	struct node *n;

	skip_ws(ps);
	at = ps->p;
	if (*ps->p == '!' && ps->p[1] != '=') {
		if (!nest_in(ps, at))
			return NULL;
		ps->p++;
		n = new_node(ps, N_NOT, at);
		if (n)
			n->l = parse_unary(ps);
		ps->nest--;
		if (n && (!n->l || !set_depth(ps, n))) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	return parse_primary(ps);
}

static struct node *parse_cmp(struct parser *ps)
{
	static const struct { const char *tok; int op; } ops[] = {
		{ "==", CMON_OP_EQ }, { "!=", CMON_OP_NE }, { "<=", CMON_OP_LE },
		{ ">=", CMON_OP_GE }, { "<", CMON_OP_LT },  { ">", CMON_OP_GT },
	};
	struct node *l = parse_unary(ps), *n;
	const char *at;

	if (!l)
		return NULL;
	skip_ws(ps);
	at = ps->p;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strncmp(ps->p, ops[i].tok, strlen(ops[i].tok)))
			continue;
		ps->p += strlen(ops[i].tok);
		n = new_node(ps, N_CMP, at);
		if (!n) {
			node_free(l);
			return NULL;
		}
		n->op = ops[i].op;
		n->l = l;
		n->r = parse_unary(ps);
		if (!n->r || !set_depth(ps, n)) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (*ps->p == '=' && ps->p[1] != '=') {
		perr(ps, at, "'=' is not a comparison (use '==')");
		node_free(l);
		return NULL;
	}
	return l;
}

static struct node *parse_chain(struct parser *ps, const char *tok, enum node_kind kind,
				struct node *(*sub)(struct parser *))
{
	struct node *l = sub(ps), *n;

	while (l) {
		const char *at;

		skip_ws(ps);
		at = ps->p;
		if (!accept(ps, tok))
			break;
		n = new_node(ps, kind, at);
		if (!n) {
			node_free(l);
			return NULL;
		}
		n->l = l;
		n->r = sub(ps);
		if (!n->r || !set_depth(ps, n)) {
			node_free(n);
			return NULL;
		}
		l = n;
	}
	return l;
}

static struct node *parse_and(struct parser *ps) { return parse_chain(ps, "&&", N_AND, parse_cmp); }
static struct node *parse_or(struct parser *ps) { return parse_chain(ps, "||", N_OR, parse_and); }

static int parse(struct parser *ps, struct expr **out);

int expr__parse(const char *text, const char *what, struct expr **out)
{
	struct parser ps = { .text = text, .p = text, .what = what };

	return parse(&ps, out);
}

int expr__check(const char *text, char *msg, size_t len)
{
	struct parser ps = { .text = text, .p = text, .what = "", .msg = msg, .msg_len = len };
	struct expr *e = NULL;
	int err = parse(&ps, &e);

	expr__free(e);
	if (err == -ENOMEM)
		snprintf(msg, len, "out of memory");
	return err;
}

/* The whole of PS's text: one expression, nothing after it. */
static int parse(struct parser *ps, struct expr **out)
{
	struct expr *e;
	struct node *root;

	*out = NULL;
	root = parse_or(ps);
	if (root) {
		skip_ws(ps);
		if (*ps->p == ')')
			perr(ps, ps->p, "unbalanced ')'");
		else if (*ps->p == '=' || *ps->p == '&' || *ps->p == '|')
			perr(ps, ps->p, "unexpected '%c'", *ps->p);
		else if (*ps->p)
			perr(ps, ps->p, "expected an operator");
	} else if (!ps->err) {
		ps->err = -ENOMEM;
	}
	if (ps->err) {
		node_free(root);
		return ps->err;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->text = strdup(ps->text)) || !(e->what = strdup(ps->what))) {
		node_free(root);
		expr__free(e);
		return -ENOMEM;
	}
	e->root = root;
	*out = e;
	return 0;
}

static bool node_at_exit(const struct node *n)
{
	if (!n)
		return false;
	if (n->kind == N_PATH && (!strcmp(n->str, "ret") || !strcmp(n->str, "latency_ns")))
		return true;
	return node_at_exit(n->l) || node_at_exit(n->r);
}

bool expr__at_exit(const struct expr *e) { return e && node_at_exit(e->root); }

/* ---- compiling ---- */

/* What a compiled value is, for the operators above it. */
struct vtype {
	bool is_unsigned64; /* compares unsigned (u64, pointers) */
	bool is_string;     /* a char * or the address of a char array: STR_EQ takes it */
	bool is_string_const;
};

struct compiler {
	const struct expr *e;
	const struct func_sig *sig;
	const char *func;
	struct cmon_expr_prog *prog;
	int depth, max_depth;
	unsigned n_strs;
	int err;
};

__attribute__((format(printf, 3, 4)))
static void cerr(struct compiler *c, int col, const char *fmt, ...)
{
	char msg[200], quoted[4 * QUOTE_MAX + 8];
	va_list ap;

	if (c->err)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	quote_text(c->e->text, quoted, sizeof(quoted));
	log_error("%s: %s at column %d: %s", c->e->what, msg, col, quoted);
	c->err = -EINVAL;
}

static void emit(struct compiler *c, int col, __u8 op, __s64 imm, __u8 size, bool is_signed)
{
	struct cmon_expr_insn *in;

	if (c->err)
		return;
	if (c->prog->n >= CMON_EXPR_MAX_OPS) {
		cerr(c, col, "too long for %s (at most %d steps)", c->func, CMON_EXPR_MAX_OPS);
		return;
	}
	in = &c->prog->insns[c->prog->n++];
	in->op = op;
	in->imm = imm;
	in->size = size;
	in->is_signed = is_signed;
	switch (op) {
	case CMON_OP_ARG: case CMON_OP_RET: case CMON_OP_LAT: case CMON_OP_CONST:
		c->depth++;
		break;
	case CMON_OP_EQ: case CMON_OP_NE: case CMON_OP_LT: case CMON_OP_LE:
	case CMON_OP_GT: case CMON_OP_GE: case CMON_OP_AND: case CMON_OP_OR:
		c->depth--;
		break;
	default:
		break;
	}
	if (c->depth > c->max_depth)
		c->max_depth = c->depth;
	if (c->max_depth > CMON_EXPR_STACK)
		cerr(c, col, "nested too deeply (a stack of %d values)", CMON_EXPR_STACK);
}

/* A value of type T (typedefs stripped) that fits a register: its width
 * and sign; false for structs, floats, arrays. */
static bool scalar(const struct ctype *t, __u8 *size, bool *is_signed, struct vtype *vt)
{
	if (!t)
		return false;
	t = ctype__concrete(t);
	if ((t->kind != CTYPE_INT && t->kind != CTYPE_UINT && t->kind != CTYPE_CHAR &&
	     t->kind != CTYPE_BOOL && t->kind != CTYPE_ENUM && t->kind != CTYPE_POINTER) ||
	    (t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8))
		return false;
	*size = (__u8)t->size;
	*is_signed = t->kind == CTYPE_INT ||
		     ((t->kind == CTYPE_CHAR || t->kind == CTYPE_ENUM) && t->is_signed);
	memset(vt, 0, sizeof(*vt));
	vt->is_unsigned64 = !*is_signed && t->size == 8;
	vt->is_string = ctype__is_string(t);
	return true;
}

/* Member NAME of struct/union T, anonymous members searched too: its type
 * and byte offset; NULL when there is none. */
static const struct ctype_member *find_member(const struct ctype *t, const char *name,
					      uint32_t *off, int depth)
{
	t = ctype__concrete(t);
	if (depth > 8 || (t->kind != CTYPE_STRUCT && t->kind != CTYPE_UNION))
		return NULL;
	for (size_t i = 0; i < t->n_members; i++) {
		const struct ctype_member *m = &t->members[i];

		if (m->name && !strcmp(m->name, name)) {
			*off = m->offset;
			return m;
		}
		if (!m->name && m->type) {
			uint32_t sub;
			const struct ctype_member *f = find_member(m->type, name, &sub, depth + 1);

			if (f) {
				*off = m->offset + sub;
				return f;
			}
		}
	}
	return NULL;
}

static bool char_array(const struct ctype *t)
{
	t = ctype__concrete(t);
	return t->kind == CTYPE_ARRAY && t->target &&
	       ctype__concrete(t->target)->kind == CTYPE_CHAR;
}

/* A name and its members: pushes one value. */
static void compile_path(struct compiler *c, const struct node *n, struct vtype *vt)
{
	const struct func_sig *sig = c->sig;
	const struct ctype *type = NULL; /* NULL: a raw register */
	int num = -1;
	bool is_signed = true;
	__u8 size = 8;

	memset(vt, 0, sizeof(*vt));
	if (!strncmp(n->str, "arg", 3) && n->str[3] >= '0' && n->str[3] <= '5' && !n->str[4])
		num = n->str[3] - '0';
	if (!strcmp(n->str, "latency_ns")) {
		emit(c, n->col, CMON_OP_LAT, 0, 8, false);
		vt->is_unsigned64 = true;
	} else if (!strcmp(n->str, "ret")) {
		if (sig && sig->ret_type && ctype__concrete(sig->ret_type)->kind == CTYPE_VOID) {
			cerr(c, n->col, "%s returns void: no ret", c->func);
			return;
		}
		if (sig && !(sig->ret_loc.n == 1 && sig->ret_loc.p[0].kind == DLOC_REG &&
			     sig->ret_loc.p[0].reg == DREG_RAX &&
			     scalar(sig->ret_type, &size, &is_signed, vt))) {
			cerr(c, n->col, "%s does not return an integer or a pointer in rax", c->func);
			return;
		}
		type = sig ? sig->ret_type : NULL;
		emit(c, n->col, CMON_OP_RET, 0, size, is_signed);
	} else if (num >= 0) {
		/* The register; typed when DWARF says which parameter it holds. */
		for (size_t i = 0; sig && i < sig->n_params; i++) {
			if (dloc__arg_register(&sig->params[i].loc, sig->go) == num &&
			    scalar(sig->params[i].type, &size, &is_signed, vt)) {
				type = sig->params[i].type;
				break;
			}
		}
		emit(c, n->col, CMON_OP_ARG, num, size, is_signed);
	} else {
		const struct func_param *p = NULL;

		if (!sig) {
			cerr(c, n->col, "'%s': %s has no DWARF (name arguments arg0..arg5)", n->str,
			     c->func);
			return;
		}
		for (size_t i = 0; i < sig->n_params && !p; i++)
			if (!strcmp(sig->params[i].name, n->str))
				p = &sig->params[i];
		if (!p) {
			cerr(c, n->col, "%s has no parameter '%s'", c->func, n->str);
			return;
		}
		num = dloc__arg_register(&p->loc, sig->go);
		if (num < 0) {
			cerr(c, n->col, "'%s' of %s is not in an argument register", n->str, c->func);
			return;
		}
		if (!scalar(p->type, &size, &is_signed, vt)) {
			cerr(c, n->col, "'%s' of %s is a %s, not an integer or a pointer", n->str,
			     c->func, p->type ? p->type->name : "value");
			return;
		}
		type = p->type;
		emit(c, n->col, CMON_OP_ARG, num, size, is_signed);
	}
	/* Members: the top is a pointer; OFF accumulates through '.' until a
	 * value is loaded. */
	{
		const struct ctype *obj = NULL; /* the struct at top + off, when not loaded */
		uint32_t off = 0;

		for (size_t i = 0; i < n->n_steps && !c->err; i++) {
			const char *name = n->steps[i].name;
			int col = n->steps[i].col;
			const struct ctype_member *m;
			const struct ctype *mt;
			uint32_t moff;

			if (n->steps[i].arrow) {
				const struct ctype *pt = type ? ctype__concrete(type) : NULL;

				if (obj || !pt || pt->kind != CTYPE_POINTER || !pt->target ||
				    (ctype__concrete(pt->target)->kind != CTYPE_STRUCT &&
				     ctype__concrete(pt->target)->kind != CTYPE_UNION)) {
					cerr(c, col, "'->%s': not a pointer to a struct%s", name,
					     type ? "" : " (no DWARF type)");
					return;
				}
				obj = pt->target;
				off = 0;
			} else if (!obj) {
				cerr(c, col, "'.%s': not a struct (use '->' through a pointer)", name);
				return;
			}
			m = find_member(obj, name, &moff, 0);
			if (!m) {
				cerr(c, col, "%s has no member '%s'", obj->name, name);
				return;
			}
			if (m->bit_size) {
				cerr(c, col, "'%s' is a bitfield (not supported)", name);
				return;
			}
			off += moff;
			mt = ctype__concrete(m->type);
			if (mt->kind == CTYPE_STRUCT || mt->kind == CTYPE_UNION) {
				obj = m->type;
				type = NULL;
				continue;
			}
			if (char_array(mt)) {
				emit(c, col, CMON_OP_LOAD, off, 0, false); /* its address */
				memset(vt, 0, sizeof(*vt));
				vt->is_string = true;
				type = NULL;
				obj = NULL;
				continue;
			}
			if (!scalar(m->type, &size, &is_signed, vt)) {
				cerr(c, col, "member '%s' is a %s, not an integer or a pointer", name,
				     m->type->name);
				return;
			}
			emit(c, col, CMON_OP_LOAD, off, size, is_signed);
			type = m->type;
			obj = NULL;
		}
		if (obj && !c->err)
			cerr(c, n->col, "'%s' is a struct: name one of its members", n->str);
	}
}

static void compile_node(struct compiler *c, const struct node *n, struct vtype *vt);

static void compile_string_cmp(struct compiler *c, const struct node *n, const struct node *s,
			       const struct node *other)
{
	struct vtype ot;
	unsigned idx;

	if (n->op != CMON_OP_EQ && n->op != CMON_OP_NE) {
		cerr(c, n->col, "a string compares with == and != only");
		return;
	}
	if (other->kind == N_STR) {
		cerr(c, other->col, "two strings: compare a value with a string");
		return;
	}
	compile_node(c, other, &ot);
	if (c->err)
		return;
	if (!ot.is_string) {
		cerr(c, other->col, "not a string (a char * or a char array)");
		return;
	}
	/* The same constant twice takes one slot. */
	for (idx = 0; idx < c->n_strs; idx++)
		if (!strcmp(c->prog->strs[idx], s->str))
			break;
	if (idx == c->n_strs) {
		if (idx >= CMON_EXPR_MAX_STRS) {
			cerr(c, s->col, "more than %d strings", CMON_EXPR_MAX_STRS);
			return;
		}
		memcpy(c->prog->strs[idx], s->str, s->str_len + 1);
		c->n_strs++;
	}
	emit(c, n->col, CMON_OP_STR_EQ, idx, 0, false);
	if (n->op == CMON_OP_NE)
		emit(c, n->col, CMON_OP_NOT, 0, 0, false);
}

static void compile_node(struct compiler *c, const struct node *n, struct vtype *vt)
{
	struct vtype lt, rt;

	memset(vt, 0, sizeof(*vt));
	if (c->err)
		return;
	switch (n->kind) {
	case N_NUM:
		emit(c, n->col, CMON_OP_CONST, n->num, 8, true);
		break;
	case N_STR:
		cerr(c, n->col, "a string compares with == or != against a char * or char array");
		break;
	case N_PATH:
		compile_path(c, n, vt);
		break;
	case N_CMP:
		if (n->l->kind == N_STR || n->r->kind == N_STR) {
			bool right = n->r->kind == N_STR;

			compile_string_cmp(c, n, right ? n->r : n->l, right ? n->l : n->r);
			break;
		}
		compile_node(c, n->l, &lt);
		compile_node(c, n->r, &rt);
		/* Values are exact in 64 bits; only a u64 or a pointer needs the
		 * unsigned comparison. */
		emit(c, n->col, (__u8)n->op, 0, 0, !(lt.is_unsigned64 || rt.is_unsigned64));
		break;
	case N_AND:
	case N_OR:
		compile_node(c, n->l, &lt);
		compile_node(c, n->r, &rt);
		emit(c, n->col, n->kind == N_AND ? CMON_OP_AND : CMON_OP_OR, 0, 0, false);
		break;
	case N_NOT:
		compile_node(c, n->l, &lt);
		emit(c, n->col, CMON_OP_NOT, 0, 0, false);
		break;
	}
}

int expr__compile(const struct expr *e, const struct func_sig *sig, const char *func,
		  struct cmon_expr_prog *out)
{
	struct compiler c = { .e = e, .sig = sig, .func = func, .prog = out };
	struct vtype vt;

	memset(out, 0, sizeof(*out));
	compile_node(&c, e->root, &vt);
	if (c.err) {
		memset(out, 0, sizeof(*out));
		return c.err;
	}
	out->flags = expr__at_exit(e) ? CMON_EXPR_AT_EXIT : 0;
	return 0;
}

int expr__compile_set(const char *text, const char *what, const struct probe_set *set,
		      bool entry_only, struct cmon_expr_prog *progs)
{
	struct debuginfo **dis = NULL;
	struct expr *e = NULL;
	int err;

	err = expr__parse(text, what, &e);
	if (err)
		return err;
	if (entry_only && expr__at_exit(e)) {
		log_error("%s: ret and latency_ns need the return (not with --no-return): %s",
			  what, text);
		err = -EINVAL;
		goto cleanup;
	}
	dis = calloc(set->n_objects ? set->n_objects : 1, sizeof(*dis));
	if (!dis) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < set->n_funcs && !err; i++) {
		const struct probe_func *f = &set->funcs[i];
		struct func_sig *sig = NULL;

		memset(&progs[i], 0, sizeof(progs[i]));
		if (f->usdt) {
			/* Their arguments are not a function's: refused, not
			 * passed through unfiltered. */
			log_error("%s: %s is a USDT probe or a source line: %s applies to "
				  "functions (--func) only", what, f->name, what);
			err = -EINVAL;
			break;
		}
		if (f->quiet)
			continue;
		if (!dis[f->object])
			dis[f->object] = debuginfo__open(set->objects[f->object].attach_path);
		if (dis[f->object] && debuginfo__kind(dis[f->object]) == DEBUGINFO_DWARF)
			debuginfo__signature(dis[f->object], f->addr, f->addr + f->entry.skip, true,
					     &sig);
		err = expr__compile(e, sig, f->name, &progs[i]);
		func_sig__free(sig);
	}
cleanup:
	for (size_t o = 0; dis && o < set->n_objects; o++)
		debuginfo__free(dis[o]);
	free(dis);
	expr__free(e);
	return err;
}

int expr__compile_run(const char *if_text, const char *change_text, const struct probe_set *set,
		      bool entry_only, struct cmon_expr_prog **out)
{
	size_t n = set->n_funcs ? set->n_funcs : 1;
	struct cmon_expr_prog *progs = NULL, *tmp = NULL;
	const char *texts[2] = { if_text, change_text };
	static const char *const whats[2] = { "--if", "--on-change" };
	int err = 0;

	*out = NULL;
	if (!if_text && !change_text)
		return 0;
	progs = calloc(2 * n, sizeof(*progs));
	tmp = calloc(n, sizeof(*tmp));
	if (!progs || !tmp) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int k = 0; k < 2 && !err; k++) {
		if (!texts[k])
			continue;
		err = expr__compile_set(texts[k], whats[k], set, entry_only, tmp);
		for (size_t i = 0; !err && i < set->n_funcs; i++)
			progs[2 * i + k] = tmp[i];
	}
	for (size_t i = 0; !err && i < set->n_funcs; i++) {
		__u32 at_exit = (progs[2 * i].flags | progs[2 * i + 1].flags) & CMON_EXPR_AT_EXIT;

		progs[2 * i].flags |= at_exit;
		progs[2 * i + 1].flags |= at_exit;
	}
cleanup:
	free(tmp);
	if (err)
		free(progs);
	else
		*out = progs;
	return err;
}

void expr__set_latency_bias(struct cmon_expr_prog *progs, const struct probe_set *set,
			    const struct probe_calib *calib)
{
	for (size_t i = 0; progs && i < set->n_funcs; i++) {
		uint64_t bias = calib && calib->valid ? probe_calib__bias(calib, &set->funcs[i]) : 0;

		progs[2 * i].lat_bias_ns = bias;
		progs[2 * i + 1].lat_bias_ns = bias;
	}
}
