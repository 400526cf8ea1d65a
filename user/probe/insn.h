/*
 * insn.h: where to put a function's probes, decided by decoding its machine
 * code (x86-64, with capstone).
 *
 * The cost of a uprobe depends on the instruction under it (Linux 6.18):
 *   - a 5-byte nop is optimized into a call to a trampoline   (~0.1 us)
 *   - nop, push reg, and jmp/call/jcc rel are emulated          (~0.2 us)
 *   - anything else is single-stepped out of line               (~2.5 us)
 * The entry probe goes on the cheapest address where the arguments and the
 * stack are still exactly as the caller left them: past an endbr64, which
 * only marks an indirect-branch target.
 *
 * Return probes placed on the function's own ret instructions never touch
 * the stack, unlike kernel uretprobes which rewrite the return address and
 * so break C++ exception unwinding and Go: they are cmon's safe return
 * mechanism.  A jump that leaves the function (a tail call) is a return
 * whose value cmon cannot see.
 */
#ifndef CMON_INSN_H
#define CMON_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum probe_cost {
	PROBE_COST_OPTIMIZED = 0, /* nop5 */
	PROBE_COST_EMULATED = 1,  /* nop, push reg, rel jmp/call/jcc */
	PROBE_COST_SINGLESTEP = 2,
	PROBE_COST_UNPROBEABLE = 3, /* the kernel refuses the instruction */
};

/* "optimized", "emulated", "single-step", "unprobeable" */
const char *probe_cost__name(enum probe_cost cost);
/* Typical ns per hit on this kind of machine, for `cmon list`. */
unsigned probe_cost__typical_ns(enum probe_cost cost);

/* Where the entry probe of a function starting at CODE goes. */
struct entry_plan {
	uint32_t skip;        /* bytes past the function start: 0, or 4 past endbr64 */
	enum probe_cost cost; /* cost class of the instruction at start + skip */
	char insn[48];        /* that instruction, "push rbp" */
};

/* An entry to the end of CODE (LEN bytes at ADDR, the padding before a
 * function) from which only nops run: the cheapest to probe, of those the
 * nearest the end.  0 and *OFF, *COST; -ENOENT when there is none. */
int insn__nop_entry(const uint8_t *code, size_t len, uint64_t addr, uint32_t *off,
		    enum probe_cost *cost);

/* Decode the first instructions of CODE (LEN bytes, loaded at ADDR).
 * Returns 0, or -EINVAL when nothing decodes. */
int insn__plan_entry(const uint8_t *code, size_t len, uint64_t addr, struct entry_plan *out);

/*
 * Where a single-stepped entry's latency can start.  The single-step costs
 * ~15 us on some hosts and varies call to call by microseconds, more than
 * the functions it times; the first cheap instruction the entry leads to
 * in a straight line gets a second probe that only takes the time (see
 * bpf/shadow_stack.bpf.h, cmon_step).  The instructions in between must
 * take no branch, no long-running string operation, and no branch of the
 * function may lead into them (a loop would fire the probe again).
 */
struct step_plan {
	uint32_t off;         /* bytes past the function start; 0: no step probe */
	enum probe_cost cost; /* of the instruction there: emulated or optimized */
};

/* Plan the step probe of the function whose whole body is CODE (LEN bytes
 * at ADDR), entered at ENTRY_OFF.  Returns 0 (OUT->off 0 when there is no
 * such place), or a negative errno. */
int insn__plan_step(const uint8_t *code, size_t len, uint64_t addr, uint32_t entry_off,
		    struct step_plan *out);

/* Does a direct branch of the body CODE (LEN bytes at ADDR) lead to an
 * offset in [LO, HI] (the entry: a loop at -Os, a tail call to itself)?
 * False when it does not or the body does not decode. */
bool insn__branches_into(const uint8_t *code, size_t len, uint64_t addr, uint32_t lo,
			 uint32_t hi);

/* An indirect jump of a function body (cmon_ind_site). */
struct ind_jump {
	uint32_t off;  /* from the function's start */
	int32_t disp;  /* MEM: the target is the word at reg + disp */
	uint8_t reg;   /* x86 encoding: 0 rax .. 7 rdi, 8 r8 .. 15 r15 */
	bool mem;
};

/* The exits of a whole function body. */
struct exit_plan {
	uint32_t *ret_offs;  /* offsets (from the function start) of ret instructions */
	size_t n_ret;
	uint32_t *tail_offs; /* offsets of jumps whose target is outside [0, len) */
	/* Each one's condition: 0 a jump always taken, else a conditional
	 * jump's condition code (the low nibble of its opcode) + 1: its exit
	 * probe must see whether it is taken (CMON_COOKIE_JCC). */
	uint8_t *tail_cond;
	size_t n_tail;
	/* indirect jumps (`jmp *%rax`, jump tables): each may be a tail call
	 * through a function pointer, so a body with one may return. */
	size_t n_indirect;
	/* Those whose target an exit probe can compute (jmp *%reg, jmp
	 * *disp(%reg); not a table indexed by a scaled register): probed,
	 * they end a call when their target is outside the function. */
	struct ind_jump *ind;
	size_t n_ind;
	bool complete;       /* every byte decoded; false: do not trust the exits */
};

/* Decode the whole body (CODE, LEN = the symbol size, loaded at ADDR) and
 * list its exits.  Indirect jumps through a register or a table (jump tables,
 * `jmp *%rax`) are not exits; `jmp *sym(%rip)` (a tail call through the GOT)
 * is a tail exit.  Returns 0 and fills OUT (free with exit_plan__clear), or a
 * negative errno. */
int insn__plan_exits(const uint8_t *code, size_t len, uint64_t addr, struct exit_plan *out);

/* As insn__plan_exits, with jumps into [IN_LO, IN_HI) (addresses: the
 * function's other part, gcc's hot/cold split) staying inside too. */
int insn__plan_exits_in(const uint8_t *code, size_t len, uint64_t addr, uint64_t in_lo,
			uint64_t in_hi, struct exit_plan *out);

/* The target address of the direct jump at OFF of CODE (LEN bytes at
 * ADDR): 0 and *TARGET, or -EINVAL when it is none. */
int insn__jump_target(const uint8_t *code, size_t len, uint64_t addr, uint32_t off,
		      uint64_t *target);
void exit_plan__clear(struct exit_plan *p);

/* Unload the disassembler (it is loaded again on the next use): planning
 * is done once, and its tables are large. */
void insn__release(void);

#endif
