// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/probe/insn.c: hand-assembled x86-64 byte sequences. */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "probe/insn.h"

#define BASE 0x401000ULL
#define MAX_OFFS 8

/* ---- probe_cost names ---- */

static void test_cost_names(void **state)
{
	(void)state;
	assert_string_equal(probe_cost__name(PROBE_COST_OPTIMIZED), "optimized");
	assert_string_equal(probe_cost__name(PROBE_COST_EMULATED), "emulated");
	assert_string_equal(probe_cost__name(PROBE_COST_SINGLESTEP), "single-step");
	assert_string_equal(probe_cost__name(PROBE_COST_UNPROBEABLE), "unprobeable");
	assert_int_equal(probe_cost__typical_ns(PROBE_COST_OPTIMIZED), 110);
	assert_int_equal(probe_cost__typical_ns(PROBE_COST_EMULATED), 200);
	assert_int_equal(probe_cost__typical_ns(PROBE_COST_SINGLESTEP), 2600);
	assert_int_equal(probe_cost__typical_ns(PROBE_COST_UNPROBEABLE), 0);
}

/* ---- entry plans ---- */

struct entry_case {
	const char *name;
	uint8_t code[24];
	size_t len;
	int ret;
	uint32_t skip;
	enum probe_cost cost;
	const char *insn;
};

#define ENDBR 0xf3, 0x0f, 0x1e, 0xfa

static const struct entry_case entry_cases[] = {
	{ "endbr64 + push rbp", { ENDBR, 0x55, 0x48, 0x89, 0xe5 }, 8,
	  0, 4, PROBE_COST_EMULATED, "push rbp" },
	{ "push rbp", { 0x55, 0x48, 0x89, 0xe5 }, 4,
	  0, 0, PROBE_COST_EMULATED, "push rbp" },
	{ "endbr64 + nop5", { ENDBR, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55 }, 10,
	  0, 4, PROBE_COST_OPTIMIZED, "nop dword ptr [rax + rax]" },
	{ "nop5", { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55 }, 6,
	  0, 0, PROBE_COST_OPTIMIZED, "nop dword ptr [rax + rax]" },
	{ "lea rax, [rip + 0x10]", { 0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00 }, 7,
	  0, 0, PROBE_COST_SINGLESTEP, "lea rax, [rip + 0x10]" },
	{ "mov eax, edi", { 0x89, 0xf8, 0xc3 }, 3,
	  0, 0, PROBE_COST_SINGLESTEP, "mov eax, edi" },
	{ "endbr64 + sub rsp", { ENDBR, 0x48, 0x83, 0xec, 0x18 }, 8,
	  0, 4, PROBE_COST_SINGLESTEP, "sub rsp, 0x18" },
	{ "push r12 (REX.B)", { 0x41, 0x54, 0x55 }, 3,
	  0, 0, PROBE_COST_EMULATED, "push r12" },
	{ "push r15 after endbr64", { ENDBR, 0x41, 0x57 }, 6,
	  0, 4, PROBE_COST_EMULATED, "push r15" },
	{ "nop", { 0x90, 0xc3 }, 2, 0, 0, PROBE_COST_EMULATED, "nop" },
	{ "xchg ax, ax (66 90)", { 0x66, 0x90 }, 2, 0, 0, PROBE_COST_EMULATED, "nop" },
	{ "nop4", { 0x0f, 0x1f, 0x40, 0x00 }, 4,
	  0, 0, PROBE_COST_EMULATED, "nop dword ptr [rax]" },
	{ "nop6 (66 prefix) is not the nop5", { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6,
	  0, 0, PROBE_COST_EMULATED, "nop word ptr [rax + rax]" },
	{ "xchg eax, r8d (41 90)", { 0x41, 0x90 }, 2,
	  0, 0, PROBE_COST_SINGLESTEP, "xchg eax, r8d" },
	{ "jmp rel32", { 0xe9, 0x00, 0x01, 0x00, 0x00 }, 5,
	  0, 0, PROBE_COST_EMULATED, "jmp 0x401105" },
	{ "jmp rel8", { 0xeb, 0x10 }, 2, 0, 0, PROBE_COST_EMULATED, "jmp 0x401012" },
	{ "call rel32", { 0xe8, 0xfb, 0xff, 0xff, 0xff }, 5,
	  0, 0, PROBE_COST_EMULATED, "call 0x401000" },
	{ "je rel8", { 0x74, 0x05 }, 2, 0, 0, PROBE_COST_EMULATED, "je 0x401007" },
	{ "jne rel32", { 0x0f, 0x85, 0x00, 0x01, 0x00, 0x00 }, 6,
	  0, 0, PROBE_COST_EMULATED, "jne 0x401106" },
	{ "16-bit jmp is refused", { 0x66, 0xe9, 0x00, 0x00 }, 4,
	  0, 0, PROBE_COST_UNPROBEABLE, "jmp 0x1004" /* capstone cuts it to 16 bits */ },
	{ "push rbp with 66 prefix", { 0x66, 0x55 }, 2,
	  0, 0, PROBE_COST_SINGLESTEP, "push bp" },
	{ "mov rbp, rsp", { 0x48, 0x89, 0xe5 }, 3,
	  0, 0, PROBE_COST_SINGLESTEP, "mov rbp, rsp" },
	{ "int3", { 0xcc }, 1, 0, 0, PROBE_COST_UNPROBEABLE, "int3" },
	{ "int 0x80", { 0xcd, 0x80 }, 2, 0, 0, PROBE_COST_UNPROBEABLE, "int 0x80" },
	{ "hlt", { 0xf4 }, 1, 0, 0, PROBE_COST_UNPROBEABLE, "hlt" },
	{ "cli", { 0xfa }, 1, 0, 0, PROBE_COST_UNPROBEABLE, "cli" },
	{ "sti", { 0xfb }, 1, 0, 0, PROBE_COST_UNPROBEABLE, "sti" },
	{ "in al, 0x60", { 0xe4, 0x60 }, 2, 0, 0, PROBE_COST_UNPROBEABLE, "in al, 0x60" },
	{ "out dx, al", { 0xee }, 1, 0, 0, PROBE_COST_UNPROBEABLE, "out dx, al" },
	{ "iretq", { 0x48, 0xcf }, 2, 0, 0, PROBE_COST_UNPROBEABLE, "iretq" },
	{ "ud2", { 0x0f, 0x0b }, 2, 0, 0, PROBE_COST_UNPROBEABLE, "ud2" },
	{ "syscall", { 0x0f, 0x05 }, 2, 0, 0, PROBE_COST_UNPROBEABLE, "syscall" },
	{ "sysenter", { 0x0f, 0x34 }, 2, 0, 0, PROBE_COST_UNPROBEABLE, "sysenter" },
	{ "lock cmpxchg", { 0xf0, 0x48, 0x0f, 0xb1, 0x0f }, 5,
	  0, 0, PROBE_COST_UNPROBEABLE, "lock cmpxchg qword ptr [rdi], rcx" },
	{ "cs nopw (cs prefix)", { 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 }, 9,
	  0, 0, PROBE_COST_UNPROBEABLE, "nop dword ptr cs:[rax + rax]" },
	{ "mov ss, eax", { 0x8e, 0xd0 }, 2, 0, 0, PROBE_COST_UNPROBEABLE, "mov ss, eax" },
	{ "garbage (push es is invalid in 64-bit)", { 0x06, 0xc3 }, 2,
	  -EINVAL, 0, PROBE_COST_UNPROBEABLE, "(bad)" },
	{ "truncated call", { 0xe8, 0x00, 0x00 }, 3,
	  -EINVAL, 0, PROBE_COST_UNPROBEABLE, "(bad)" },
	{ "endbr64 alone", { ENDBR }, 4, -EINVAL, 4, PROBE_COST_UNPROBEABLE, "(bad)" },
	{ "truncated endbr64 is not skipped", { 0xf3, 0x0f, 0x1e }, 3,
	  -EINVAL, 0, PROBE_COST_UNPROBEABLE, "(bad)" },
	/* a long operand string is cut to fit, terminated */
	{ "long text truncated",
	  { 0x48, 0xc7, 0x84, 0x88, 0x78, 0x56, 0x34, 0x12, 0x88, 0x77, 0x66, 0x55 }, 12,
	  0, 0, PROBE_COST_SINGLESTEP,
	  "mov qword ptr [rax + rcx*4 + 0x12345678], 0x55667788" },
};

static void test_entry_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(entry_cases) / sizeof(entry_cases[0]); i++) {
		const struct entry_case *c = &entry_cases[i];
		struct entry_plan plan;
		char want[sizeof(plan.insn)];
		int ret;

		memset(&plan, 0x5a, sizeof(plan));
		ret = insn__plan_entry(c->code, c->len, BASE, &plan);
		/* the expectation, cut the way the plan must cut it */
		snprintf(want, sizeof(want), "%s", c->insn);
		if (ret != c->ret || plan.skip != c->skip || plan.cost != c->cost ||
		    strcmp(plan.insn, want) != 0)
			print_message("case '%s': got %d skip %u %s '%s'\n", c->name, ret,
				      plan.skip, probe_cost__name(plan.cost), plan.insn);
		assert_int_equal(ret, c->ret);
		assert_int_equal(plan.skip, c->skip);
		assert_int_equal(plan.cost, c->cost);
		assert_string_equal(plan.insn, want);
	}
}

static void test_entry_text_is_truncated(void **state)
{
	/* a 52-character instruction: the text fills the buffer and stops */
	static const uint8_t code[] = { 0x48, 0xc7, 0x84, 0x88, 0x78, 0x56, 0x34, 0x12,
					0x88, 0x77, 0x66, 0x55 };
	struct entry_plan plan;

	(void)state;
	assert_int_equal(insn__plan_entry(code, sizeof(code), BASE, &plan), 0);
	assert_int_equal(strlen(plan.insn), sizeof(plan.insn) - 1);
	assert_memory_equal(plan.insn, "mov qword ptr [rax + rcx*4 + 0x12345678], ", 42);
}

static void test_entry_bad_args(void **state)
{
	static const uint8_t code[] = { 0x55 };
	struct entry_plan plan;

	(void)state;
	assert_int_equal(insn__plan_entry(NULL, 1, BASE, &plan), -EINVAL);
	assert_int_equal(insn__plan_entry(code, 0, BASE, &plan), -EINVAL);
	assert_int_equal(insn__plan_entry(code, 1, BASE, NULL), -EINVAL);
}

/* ---- exit plans ---- */

struct exit_case {
	const char *name;
	uint8_t code[40];
	size_t len;
	uint32_t rets[MAX_OFFS];
	size_t n_ret;
	uint32_t tails[MAX_OFFS];
	size_t n_tail;
	bool complete;
	size_t n_indirect; /* jmp reg / jmp [table]: may be tail calls */
};

static const struct exit_case exit_cases[] = {
	{ "one ret",
	  /* push rbp; mov rbp,rsp; mov eax,edi; pop rbp; ret */
	  { 0x55, 0x48, 0x89, 0xe5, 0x89, 0xf8, 0x5d, 0xc3 }, 8,
	  { 7 }, 1, { 0 }, 0, true },
	{ "two rets",
	  /* test edi,edi; je +3; xor eax,eax; ret; mov eax,1; ret */
	  { 0x85, 0xff, 0x74, 0x03, 0x31, 0xc0, 0xc3, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3 }, 13,
	  { 6, 12 }, 2, { 0 }, 0, true },
	{ "repz ret: offset of the prefix",
	  /* xor eax,eax; repz ret */
	  { 0x31, 0xc0, 0xf3, 0xc3 }, 4,
	  { 2 }, 1, { 0 }, 0, true },
	{ "bnd ret and ret imm16",
	  /* test edi,edi; je +3; bnd ret; nop; ret 8 */
	  { 0x85, 0xff, 0x74, 0x03, 0xf2, 0xc3, 0x90, 0xc2, 0x08, 0x00 }, 10,
	  { 4, 7 }, 2, { 0 }, 0, true },
	{ "tail jmp rel32 outside",
	  /* add rsp,8; jmp +0x1000 */
	  { 0x48, 0x83, 0xc4, 0x08, 0xe9, 0x00, 0x10, 0x00, 0x00 }, 9,
	  { 0 }, 0, { 4 }, 1, true },
	{ "tail jmp rel8 backwards, before the start",
	  /* xor eax,eax; jmp -0x10 */
	  { 0x31, 0xc0, 0xeb, 0xf0 }, 4,
	  { 0 }, 0, { 2 }, 1, true },
	{ "jmp rel8 inside is not an exit",
	  /* xor eax,eax; jmp +1; nop; ret */
	  { 0x31, 0xc0, 0xeb, 0x01, 0x90, 0xc3 }, 6,
	  { 5 }, 1, { 0 }, 0, true },
	{ "jmp rel32 back to the start is not an exit",
	  /* test edi,edi; dec edi; jmp -9 (to +0) */
	  { 0x85, 0xff, 0xff, 0xcf, 0xe9, 0xf7, 0xff, 0xff, 0xff }, 9,
	  { 0 }, 0, { 0 }, 0, true },
	{ "jmp to exactly start + len is outside",
	  /* jmp +1; ret */
	  { 0xeb, 0x01, 0xc3 }, 3,
	  { 2 }, 1, { 0 }, 1, true },
	{ "jump table: jmp rax, notrack jmp rax, jmp [rax*8+tab]",
	  /* lea rax,[rip+0]; movsxd rcx,[rax+rdi*4]; add rax,rcx; jmp rax;
	   * notrack jmp rax; jmp qword ptr [rax*8+0x400000]; ret */
	  { 0x48, 0x8d, 0x05, 0x00, 0x00, 0x00, 0x00, 0x48, 0x63, 0x0c, 0xb8,
	    0x48, 0x01, 0xc8, 0xff, 0xe0, 0x3e, 0xff, 0xe0,
	    0xff, 0x24, 0xc5, 0x00, 0x00, 0x40, 0x00, 0xc3 }, 27,
	  { 26 }, 1, { 0 }, 0, true, 3 },
	{ "an indirect tail call is the only way out: no ret, no tail, one indirect",
	  /* mov rax,rdi; mov edi,esi; jmp rax (return f(v) through a pointer) */
	  { 0x48, 0x89, 0xf8, 0x89, 0xf7, 0xff, 0xe0 }, 7,
	  { 0 }, 0, { 0 }, 0, true, 1 },
	{ "jmp qword ptr [rip + 0x1234] is a tail exit",
	  /* pop rbx; jmp [rip+0x1234] */
	  { 0x5b, 0xff, 0x25, 0x34, 0x12, 0x00, 0x00 }, 7,
	  { 0 }, 0, { 1 }, 1, true },
	{ "jmp [rip] with a REX prefix",
	  { 0x41, 0xff, 0x25, 0x34, 0x12, 0x00, 0x00 }, 7,
	  { 0 }, 0, { 0 }, 1, true },
	{ "call [rip] and call rel32 are not exits",
	  /* call [rip+0x10]; call +0x1000; ret */
	  { 0xff, 0x15, 0x10, 0x00, 0x00, 0x00, 0xe8, 0x00, 0x10, 0x00, 0x00, 0xc3 }, 12,
	  { 11 }, 1, { 0 }, 0, true },
	{ "conditional tail call (jne rel32 outside)",
	  /* test edi,edi; jne +0x100; xor eax,eax; ret */
	  { 0x85, 0xff, 0x0f, 0x85, 0x00, 0x01, 0x00, 0x00, 0x31, 0xc0, 0xc3 }, 11,
	  { 10 }, 1, { 2 }, 1, true },
	{ "jcc rel8 outside, jcc rel8 inside",
	  /* test edi,edi; je -0x20; js +1; nop; ret */
	  { 0x85, 0xff, 0x74, 0xe0, 0x78, 0x01, 0x90, 0xc3 }, 8,
	  { 7 }, 1, { 2 }, 1, true },
	{ "exits come sorted, mixed",
	  /* test; je +0x40 (out); jmp [rip] ; ret; jmp +0x1000 (out); ret */
	  { 0x85, 0xff, 0x74, 0x40, 0xff, 0x25, 0x00, 0x00, 0x00, 0x00, 0xc3,
	    0xe9, 0x00, 0x10, 0x00, 0x00, 0xc3 }, 17,
	  { 10, 16 }, 2, { 2, 4, 11 }, 3, true },
	{ "int3 padding after a noreturn call",
	  /* call abort; int3; int3; nopw; ... then more code: xor; ret */
	  { 0xe8, 0x00, 0x10, 0x00, 0x00, 0xcc, 0xcc, 0x66, 0x90, 0x31, 0xc0, 0xc3 }, 12,
	  { 11 }, 1, { 0 }, 0, true },
	{ "undecodable byte stops the sweep",
	  /* push rbp; (06 invalid); ret */
	  { 0x55, 0x06, 0xc3 }, 3,
	  { 0 }, 0, { 0 }, 0, false },
	{ "exits before the bad byte are kept",
	  /* ret; (ea invalid); ret */
	  { 0xc3, 0xea, 0xc3 }, 3,
	  { 0 }, 1, { 0 }, 0, false },
	{ "truncated last instruction",
	  /* xor eax,eax; jmp rel32 cut */
	  { 0x31, 0xc0, 0xe9, 0x00 }, 4,
	  { 0 }, 0, { 0 }, 0, false },
};

static bool offs_equal(const uint32_t *got, size_t n_got, const uint32_t *want, size_t n_want)
{
	if (n_got != n_want)
		return false;
	for (size_t i = 0; i < n_got; i++)
		if (got[i] != want[i])
			return false;
	return true;
}

static void test_exit_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(exit_cases) / sizeof(exit_cases[0]); i++) {
		const struct exit_case *c = &exit_cases[i];
		struct exit_plan plan;
		int ret;

		ret = insn__plan_exits(c->code, c->len, BASE, &plan);
		if (ret != 0 || plan.complete != c->complete ||
		    !offs_equal(plan.ret_offs, plan.n_ret, c->rets, c->n_ret) ||
		    !offs_equal(plan.tail_offs, plan.n_tail, c->tails, c->n_tail))
			print_message("case '%s': got %d, %zu rets, %zu tails, complete %d\n",
				      c->name, ret, plan.n_ret, plan.n_tail, plan.complete);
		assert_int_equal(ret, 0);
		assert_int_equal(plan.complete, c->complete);
		assert_int_equal(plan.n_ret, c->n_ret);
		assert_int_equal(plan.n_tail, c->n_tail);
		assert_int_equal(plan.n_indirect, c->n_indirect);
		for (size_t k = 0; k < c->n_ret; k++)
			assert_int_equal(plan.ret_offs[k], c->rets[k]);
		for (size_t k = 0; k < c->n_tail; k++)
			assert_int_equal(plan.tail_offs[k], c->tails[k]);
		exit_plan__clear(&plan);
		assert_null(plan.ret_offs);
		assert_null(plan.tail_offs);
		assert_int_equal(plan.n_ret, 0);
	}
}

/* The load address only moves the code: offsets must not change. */
static void test_exit_addr_independent(void **state)
{
	static const uint8_t code[] = { 0x85, 0xff, 0x0f, 0x85, 0x00, 0x01, 0x00, 0x00,
					0x31, 0xc0, 0xc3 };
	static const uint64_t addrs[] = { 0, 0x1000, 0x7fffffffe000ULL, 0xfffffffffffff000ULL };

	(void)state;
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct exit_plan plan;

		assert_int_equal(insn__plan_exits(code, sizeof(code), addrs[i], &plan), 0);
		assert_true(plan.complete);
		assert_int_equal(plan.n_ret, 1);
		assert_int_equal(plan.ret_offs[0], 10);
		assert_int_equal(plan.n_tail, 1);
		assert_int_equal(plan.tail_offs[0], 2);
		exit_plan__clear(&plan);
	}
}

/* Many exits: the offset arrays grow past their first allocation. */
static void test_exit_many(void **state)
{
	uint8_t code[300];
	struct exit_plan plan;

	(void)state;
	for (size_t i = 0; i < 100; i++) {
		code[3 * i] = 0x31; /* xor eax, eax */
		code[3 * i + 1] = 0xc0;
		code[3 * i + 2] = 0xc3; /* ret */
	}
	assert_int_equal(insn__plan_exits(code, sizeof(code), BASE, &plan), 0);
	assert_true(plan.complete);
	assert_int_equal(plan.n_ret, 100);
	for (size_t i = 0; i < 100; i++)
		assert_int_equal(plan.ret_offs[i], 3 * i + 2);
	assert_int_equal(plan.n_tail, 0);
	exit_plan__clear(&plan);
}

static void test_exit_bad_args(void **state)
{
	static const uint8_t code[] = { 0xc3 };
	struct exit_plan plan;

	(void)state;
	assert_int_equal(insn__plan_exits(NULL, 1, BASE, &plan), -EINVAL);
	assert_null(plan.ret_offs);
	assert_int_equal(insn__plan_exits(code, 0, BASE, &plan), -EINVAL);
	assert_int_equal(insn__plan_exits(code, 1, BASE, NULL), -EINVAL);
	exit_plan__clear(NULL);
}

/* ---- step plans (single-stepped entries) ---- */

struct step_case {
	const char *name;
	uint8_t code[40];
	size_t len;
	uint32_t entry_off;
	uint32_t off; /* 0: no step probe */
	enum probe_cost cost;
};

static const struct step_case step_cases[] = {
	{ "lea then push rbp: the push",
	  /* lea rax,[rdi+rsi]; push rbp; pop rbp; ret */
	  { 0x48, 0x8d, 0x04, 0x37, 0x55, 0x5d, 0xc3 }, 7, 0, 4, PROBE_COST_EMULATED },
	{ "sub rsp; mov edi; call: the call",
	  /* sub rsp,8; mov edi,0x18; call +0x100; add rsp,8; ret */
	  { 0x48, 0x83, 0xec, 0x08, 0xbf, 0x18, 0x00, 0x00, 0x00, 0xe8, 0x00, 0x01, 0x00, 0x00,
	    0x48, 0x83, 0xc4, 0x08, 0xc3 }, 19, 0, 9, PROBE_COST_EMULATED },
	{ "test then je: the je",
	  /* test rdi,rdi; je +1; nop; ret */
	  { 0x48, 0x85, 0xff, 0x74, 0x01, 0x90, 0xc3 }, 7, 0, 3, PROBE_COST_EMULATED },
	{ "past endbr64",
	  /* endbr64; mov eax,edi; push rbx; pop rbx; ret */
	  { 0xf3, 0x0f, 0x1e, 0xfa, 0x89, 0xf8, 0x53, 0x5b, 0xc3 }, 9, 4, 6, PROBE_COST_EMULATED },
	{ "a 5-byte nop: optimized",
	  /* mov eax,edi; nopl 0(rax,rax,1); ret */
	  { 0x89, 0xf8, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3 }, 8, 0, 2, PROBE_COST_OPTIMIZED },
	{ "mov then ret: none",
	  /* mov eax,edi; ret */
	  { 0x89, 0xf8, 0xc3 }, 3, 0, 0, 0 },
	{ "a lone ret: none",
	  { 0xc3 }, 1, 0, 0, 0 },
	{ "a loop back to the push: none",
	  /* mov eax,edi; push rbx; pop rbx; dec eax; jne -6 (to the push); ret */
	  { 0x89, 0xf8, 0x53, 0x5b, 0xff, 0xc8, 0x75, 0xfa, 0xc3 }, 9, 0, 0, 0 },
	{ "a loop back to the entry itself is fine",
	  /* mov eax,edi; push rbx; pop rbx; dec eax; jne -10 (to +0); ret */
	  { 0x89, 0xf8, 0x53, 0x5b, 0xff, 0xc8, 0x75, 0xf8, 0xc3 }, 9, 0, 2, PROBE_COST_EMULATED },
	{ "a jump table in the body: none",
	  /* mov eax,edi; push rbx; jmp rax; pop rbx; ret */
	  { 0x89, 0xf8, 0x53, 0xff, 0xe0, 0x5b, 0xc3 }, 7, 0, 0, 0 },
	{ "a tail jump through the GOT is no jump table",
	  /* mov eax,edi; push rbx; pop rbx; jmp [rip+0x10] */
	  { 0x89, 0xf8, 0x53, 0x5b, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00 }, 10, 0, 2,
	  PROBE_COST_EMULATED },
	{ "rep stosb before the push: none",
	  /* mov rcx,rdx; rep stosb; push rbx; pop rbx; ret */
	  { 0x48, 0x89, 0xd1, 0xf3, 0xaa, 0x53, 0x5b, 0xc3 }, 8, 0, 0, 0 },
	{ "an indirect call before the push: none",
	  /* mov rax,rdi; call rax; push rbx; pop rbx; ret */
	  { 0x48, 0x89, 0xf8, 0xff, 0xd0, 0x53, 0x5b, 0xc3 }, 8, 0, 0, 0 },
	{ "a syscall before the push: none",
	  /* mov eax,39; syscall; push rbx; pop rbx; ret */
	  { 0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x53, 0x5b, 0xc3 }, 10, 0, 0, 0 },
	{ "too far: none",
	  /* 9 x mov eax,edi; push rbx; pop rbx; ret */
	  { 0x89, 0xf8, 0x89, 0xf8, 0x89, 0xf8, 0x89, 0xf8, 0x89, 0xf8, 0x89, 0xf8, 0x89, 0xf8,
	    0x89, 0xf8, 0x89, 0xf8, 0x53, 0x5b, 0xc3 }, 21, 0, 0, 0 },
	{ "an undecodable body: none",
	  /* mov eax,edi; push rbx; (06 invalid) */
	  { 0x89, 0xf8, 0x53, 0x06 }, 4, 0, 0, 0 },
};

static void test_step_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(step_cases) / sizeof(step_cases[0]); i++) {
		const struct step_case *c = &step_cases[i];
		struct step_plan plan;
		int ret = insn__plan_step(c->code, c->len, BASE, c->entry_off, &plan);

		if (ret != 0 || plan.off != c->off || (c->off && plan.cost != c->cost))
			print_message("case '%s': got %d, off %u, cost %d\n", c->name, ret,
				      plan.off, (int)plan.cost);
		assert_int_equal(ret, 0);
		assert_int_equal(plan.off, c->off);
		if (c->off)
			assert_int_equal(plan.cost, c->cost);
	}
}

static void test_step_bad_args(void **state)
{
	uint8_t code[] = { 0x89, 0xf8, 0x53, 0xc3 };
	struct step_plan plan;

	(void)state;
	assert_int_equal(insn__plan_step(NULL, 1, BASE, 0, &plan), -EINVAL);
	assert_int_equal(insn__plan_step(code, sizeof(code), BASE, 4, &plan), -EINVAL);
	assert_int_equal(insn__plan_step(code, sizeof(code), BASE, 0, NULL), -EINVAL);
}

/* ---- this binary's own code ---- */

static __attribute__((noinline, used)) int twice(int x)
{
	return x * 2;
}

static void test_real_code(void **state)
{
	int (*volatile fn)(int) = twice;
	const uint8_t *code = (const uint8_t *)(uintptr_t)fn;
	struct exit_plan exits;
	struct entry_plan entry;
	/* Longer than twice() at any -O level: what follows may be another
	 * function or padding, so completeness is not asserted. */
	const size_t len = 48;
	bool endbr;

	(void)state;
	assert_int_equal(fn(21), 42);
	endbr = memcmp(code, (const uint8_t[]){ ENDBR }, 4) == 0;

	assert_int_equal(insn__plan_entry(code, len, (uintptr_t)code, &entry), 0);
	assert_int_equal(entry.skip, endbr ? 4 : 0);
	assert_int_not_equal(entry.cost, PROBE_COST_UNPROBEABLE);
	assert_true(entry.insn[0] != '\0');

	assert_int_equal(insn__plan_exits(code, len, (uintptr_t)code, &exits), 0);
	print_message("twice(): entry '%s' (%s), %zu rets, first at +%u, complete %d\n",
		      entry.insn, probe_cost__name(entry.cost), exits.n_ret,
		      exits.n_ret ? exits.ret_offs[0] : 0, exits.complete);
	assert_true(exits.n_ret >= 1);
	/* x*2 plus a frame at -O0 fits in 32 bytes, and the offset really is a ret */
	assert_true(exits.ret_offs[0] < 32);
	assert_int_equal(code[exits.ret_offs[0]], 0xc3);
	exit_plan__clear(&exits);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cost_names),
		cmocka_unit_test(test_entry_table),
		cmocka_unit_test(test_entry_text_is_truncated),
		cmocka_unit_test(test_entry_bad_args),
		cmocka_unit_test(test_exit_table),
		cmocka_unit_test(test_exit_addr_independent),
		cmocka_unit_test(test_exit_many),
		cmocka_unit_test(test_exit_bad_args),
		cmocka_unit_test(test_step_table),
		cmocka_unit_test(test_step_bad_args),
		cmocka_unit_test(test_real_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
