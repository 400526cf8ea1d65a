// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_expr: the --if / --on-change / `if:` language (filter/expr.c) on
 * any bytes: each input parses or is refused with one error (expr__parse
 * and expr__check, the agent's), and what parses compiles for a function
 * with DWARF parameters (struct pointers, char arrays, u64) and without.
 * `make fuzz` runs it under libFuzzer; tests/unit/test_fuzz_corpus.c
 * replays the kept corpus (tests/fuzz/corpus/expr) in `make test`.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/log.h"
#include "dwarf/ctype.h"
#include "filter/expr.h"

static void fuzz_expr_quiet(void *ctx, enum log_level level, const char *text)
{
	(void)ctx;
	(void)level;
	(void)text;
}

/* int handle(struct req *r, int n, unsigned long u), struct req { char
 * *method; long len; struct hdr { int kind; unsigned short flags; } hdr;
 * char tag[8]; } */
static const struct func_sig *fuzz_expr_sig(void)
{
	static struct func_param params[3];
	static struct func_sig sig;
	struct ctype_arena *a;
	struct ctype *ch, *in, *lg, *us, *ul, *hdr, *req;
	struct ctype_member *hm, *rm;

	if (sig.name)
		return &sig;
	a = ctype_arena__new();
	ch = ctype__new_int(a, CTYPE_CHAR, "char", 1);
	in = ctype__new_int(a, CTYPE_INT, "int", 4);
	lg = ctype__new_int(a, CTYPE_INT, "long", 8);
	us = ctype__new_int(a, CTYPE_UINT, "unsigned short", 2);
	ul = ctype__new_int(a, CTYPE_UINT, "unsigned long", 8);
	hdr = ctype__new(a, CTYPE_STRUCT, "struct hdr", 8, 4);
	req = ctype__new(a, CTYPE_STRUCT, "struct req", 32, 8);
	hm = ctype_arena__alloc(a, 2 * sizeof(*hm));
	rm = ctype_arena__alloc(a, 4 * sizeof(*rm));
	if (!a || !ch || !in || !lg || !us || !ul || !hdr || !req || !hm || !rm)
		abort();
	ch->is_signed = true;
	hm[0] = (struct ctype_member){ .name = "kind", .offset = 0, .type = in };
	hm[1] = (struct ctype_member){ .name = "flags", .offset = 4, .type = us };
	hdr->members = hm;
	hdr->n_members = 2;
	rm[0] = (struct ctype_member){ .name = "method", .offset = 0,
				       .type = ctype__new_pointer(a, ch) };
	rm[1] = (struct ctype_member){ .name = "len", .offset = 8, .type = lg };
	rm[2] = (struct ctype_member){ .name = "hdr", .offset = 16, .type = hdr };
	rm[3] = (struct ctype_member){ .name = "tag", .offset = 24,
				       .type = ctype__new_array(a, ch, 8) };
	req->members = rm;
	req->n_members = 4;
	params[0] = (struct func_param){ .name = "r", .type = ctype__new_pointer(a, req),
					 .loc = { .n = 1, .p = { { .kind = DLOC_REG, .reg = DREG_RDI,
								   .size = 8 } } } };
	params[1] = (struct func_param){ .name = "n", .type = in,
					 .loc = { .n = 1, .p = { { .kind = DLOC_REG, .reg = DREG_RSI,
								   .size = 4 } } } };
	params[2] = (struct func_param){ .name = "u", .type = ul,
					 .loc = { .n = 1, .p = { { .kind = DLOC_REG, .reg = DREG_RDX,
								   .size = 8 } } } };
	sig.params = params;
	sig.n_params = 3;
	sig.ret_type = in;
	sig.ret_loc = (struct dloc){ .n = 1, .p = { { .kind = DLOC_REG, .reg = DREG_RAX,
						      .size = 4 } } };
	sig.arena = a;
	sig.name = "handle";
	return &sig;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), msg[512];
	struct cmon_expr_prog prog;
	struct expr *e = NULL;
	int a, b;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0; /* an embedded NUL ends the text, as it does on a command line */
	log_set_sink(fuzz_expr_quiet, NULL);
	a = expr__parse(text, "--if", &e);
	b = expr__check(text, msg, sizeof(msg));
	/* the CLI's parse and the agent's check agree */
	if ((a == 0) != (b == 0) || (a && a != -EINVAL && a != -ENOMEM) || (a && e) ||
	    (!a && !e))
		abort();
	if (e) {
		(void)expr__at_exit(e);
		if (expr__compile(e, fuzz_expr_sig(), "handle", &prog) == 0 &&
		    (prog.n > CMON_EXPR_MAX_OPS))
			abort();
		if (expr__compile(e, NULL, "handle", &prog) == 0 && prog.n > CMON_EXPR_MAX_OPS)
			abort();
	}
	expr__free(e);
	log_set_sink(NULL, NULL);
	free(text);
	return 0;
}
