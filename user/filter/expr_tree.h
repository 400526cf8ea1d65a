/*
 * expr_tree.h: the parsed form of an --if expression, shared by the BPF
 * compiler (expr.c) and the user-space evaluator (expr_eval.c).  Private
 * to user/filter/.
 */
#ifndef CMON_FILTER_EXPR_TREE_H
#define CMON_FILTER_EXPR_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum node_kind { N_NUM, N_STR, N_PATH, N_CMP, N_AND, N_OR, N_NOT };

#define PATH_MAX_STEPS 8
struct node {
	enum node_kind kind;
	int col;          /* 1-based column of the node's first character */
	int64_t num;      /* N_NUM */
	char *str;        /* N_STR: the string; N_PATH: the root name */
	size_t str_len;
	int op;           /* N_CMP: CMON_OP_EQ.. */
	int depth;        /* operators below and at it: 0 for a value */
	/* N_PATH: members after the root, each through -> (arrow) or . */
	size_t n_steps;
	struct { char *name; bool arrow; int col; } steps[PATH_MAX_STEPS];
	struct node *l, *r;
};

struct expr {
	char *text;
	char *what;
	struct node *root;
};

#endif
