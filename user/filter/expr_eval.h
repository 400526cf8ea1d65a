/*
 * expr_eval.h: an --if expression (filter/expr.h) decided in user space
 * over a recorded call, when a recording is viewed again (`cmon export
 * --if`): the same language trace compiles for the BPF side, over the
 * call's decoded values instead of its registers and memory.
 */
#ifndef CMON_FILTER_EXPR_EVAL_H
#define CMON_FILTER_EXPR_EVAL_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

struct expr;

/* What a recorded call offers a condition. */
struct expr_call {
	json_t *args;          /* {"name": value, ...} as trace -F json writes them, or NULL */
	const int64_t *regs;   /* arg0..arg5 (raw calls), or NULL */
	json_t *ret;           /* the return value, NULL: none (void, not returned) */
	bool has_latency;
	uint64_t latency_ns;
};

/* Does C satisfy E?  A name C has no value for (a parameter another
 * function has, ret of a call that never returned, a member through a
 * pointer that was not followed) makes its comparison unknown; unknown
 * stays unknown through !, && and || as in SQL, and an unknown call is
 * not kept. */
bool expr__eval(const struct expr *e, const struct expr_call *c);


#endif
