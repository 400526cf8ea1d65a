/*
 * expr.h: the conditions of `--if EXPR` and the values of `--on-change
 * EXPR`, compiled for the BPF side (bpf/expr.bpf.h runs them).
 *
 * EXPR is C-like: parameters by DWARF name or arg0..arg5, ret, latency_ns,
 * members through pointers (req->len, req->hdr.kind), integers (decimal,
 * 0x hex, negative), strings ("GET", compared with == and != only, against
 * a char * or a char array), the comparisons == != < <= > >=, and !, &&,
 * || with parentheses.  A value alone is true when it is not 0.
 *
 * Parsing knows no function (expr__parse); compiling resolves the names
 * against one function's DWARF signature (expr__compile), so a glob over
 * several functions gets one program each.
 */
#ifndef CMON_FILTER_EXPR_H
#define CMON_FILTER_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include "cmon_abi.h"
#include "dwarf/debuginfo.h"

struct probe_set;
struct probe_calib;
struct expr;

/* Parse TEXT.  0 and *OUT (free with expr__free), or -EINVAL after one
 * error line "WHAT: MESSAGE at column N: TEXT", or -ENOMEM. */
int expr__parse(const char *text, const char *what, struct expr **out);
void expr__free(struct expr *e); /* NULL fine */

/* TEXT parses: 0, or -EINVAL with "MESSAGE at column N: TEXT" in MSG
 * (LEN bytes) and nothing logged (the agent's spec keeps it). */
int expr__check(const char *text, char *msg, size_t len);

/* E names ret or latency_ns: it can only be decided at the return. */
bool expr__at_exit(const struct expr *e);

/* Compile E for function FUNC with signature SIG (NULL: no DWARF, only
 * arg0..arg5, ret and latency_ns).  0 and *OUT; -EINVAL after one error
 * line naming WHAT, the name's column and FUNC (no such parameter, no
 * DWARF, not a pointer to a struct, a string against a number, too long). */
int expr__compile(const struct expr *e, const struct func_sig *sig, const char *func,
		  struct cmon_expr_prog *out);

/*
 * Parse TEXT and compile it for every function of SET (DWARF from each
 * object; a USDT or line site in SET is an error: not filtered).
 * PROGS has SET->n_funcs entries.  ENTRY_ONLY: ret and latency_ns are an
 * error (nothing returns).  0, or -EINVAL after one error line.
 */
int expr__compile_set(const char *text, const char *what, const struct probe_set *set,
		      bool entry_only, struct cmon_expr_prog *progs);

/*
 * The programs of one run: IF_TEXT (--if) and CHANGE_TEXT (--on-change),
 * either NULL, compiled for every function of SET into *OUT, 2 per
 * function (func_id * 2 + 0: --if, + 1: --on-change; free() it), as the
 * BPF side's expr_progs map takes them.  When either needs the return,
 * both are decided there (--on-change then sees only what --if kept).
 * *OUT is NULL when both texts are.  0 or -EINVAL after one error line.
 */
int expr__compile_run(const char *if_text, const char *change_text, const struct probe_set *set,
		      bool entry_only, struct cmon_expr_prog **out);

/* latency_ns in PROGS (from expr__compile_run) is the function's own, as
 * records and profiles show it: each function's probe cost (CALIB; NULL
 * or not valid: none, --raw-latency) is taken out. */
void expr__set_latency_bias(struct cmon_expr_prog *progs, const struct probe_set *set,
			    const struct probe_calib *calib);

#endif
