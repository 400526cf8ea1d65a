/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmon_abi.h: the records, structures and limits the BPF programs and user
 * space share (the one ABI between them; sizes checked below).
 *
 * Fixed-width types only (no long, no pointers) so both sides agree on the
 * layout; every ring-buffer record starts with a type tag; fields are ordered
 * by size so there is no padding to disagree about.
 */
#ifndef CMON_H
#define CMON_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space; BPF code has vmlinux.h */
#endif

#define CMON_MAX_ARGS 6        /* integer argument registers, x86-64 SysV */
#define CMON_COMM_LEN 16
#define CMON_STACK_DEPTH 128   /* pending traced calls per thread */
#define CMON_MAX_CPUS 1024     /* bound for the exact RSS per-CPU sum */

/* The attach cookie of every probe: which function, and for exit probes how
 * the return was observed (it decides where the return-address slot is). */
#define CMON_COOKIE_FUNC_MASK 0xffffffffULL
#define CMON_COOKIE_KIND_SHIFT 32
#define CMON_COOKIE_KIND_MASK 0xff /* bits 32-39: enum cmon_exit_kind */
/* Entry probes past the prologue (-O0 float parameters read from their
 * frame slots): the return-address slot is rsp, or rbp with
 * CMON_COOKIE_SLOT_RBP, plus this 16-bit offset.  0: the entry's sp. */
#define CMON_COOKIE_SLOT_OFF_SHIFT 40
#define CMON_COOKIE_SLOT_RBP (1ULL << 56)
/* On a tail-jump exit cookie, in the bits entries use for the slot: a
 * conditional jump's condition code + 1 (0: a jump always taken).  The
 * exit program ends the call only when the jump is taken. */
#define CMON_COOKIE_JCC_SHIFT 40
#define CMON_COOKIE_JCC_MASK 0x1fULL
/* On an exit cookie: an indirect jump (jmp *%reg, jmp *disp(%reg)) that
 * may leave the function (a tail call through a pointer) or stay in it;
 * bits 45-59 its site in the ind_sites map (shadow_stack.bpf.h), which
 * says where its target is and the function's extent. */
#define CMON_COOKIE_IND (1ULL << 63)
#define CMON_COOKIE_IND_SHIFT 45
#define CMON_COOKIE_IND_MASK 0x7fffULL

struct cmon_ind_site {
	__u32 off;  /* of the jump from the function's start */
	__u32 size; /* the function's */
	__s32 disp; /* MEM: the target is at reg + disp */
	__u16 reg_off; /* the register, as its offset in struct pt_regs (regs.bpf.h) */
	__u8 mem;
	__u8 pad;
};
/* On an entry cookie: the function never returns normally (_start, no ret
 * instruction): it has no exit probe, and its record is written at entry. */
#define CMON_COOKIE_NEVER_RETURNS (1ULL << 57)
/* With it (in the exit-kind bits, unused on entries): the function leaves
 * its stack and its caller is resumed from elsewhere (Go's
 * runtime.morestack: newstack restarts the caller on the grown stack), so
 * its callees are not under it: no frame is kept for it. */
#define CMON_COOKIE_NO_FRAME (1ULL << 32)
/* With it: the function does return, but no probe can see where (its exits
 * cannot be found and a uretprobe is not safe): its record (written at
 * entry, as a never-returning one's) says `entry`, not `never-returns`. */
#define CMON_COOKIE_RETURN_UNSEEN (1ULL << 33)
/* On an entry cookie (--focus): a focus function, and one probed for the
 * focus only (not named by --func: no record of its own). */
#define CMON_COOKIE_FOCUS (1ULL << 58)
#define CMON_COOKIE_QUIET (1ULL << 59)
/* On entry and exit cookies: a Go function (ABIInternal): arguments and
 * results in rax, rbx, rcx, rdi, rsi, r8.., frames kept per goroutine. */
#define CMON_COOKIE_GO (1ULL << 60)
/* On an entry cookie: the probed instruction is `push %rbp` or endbr64,
 * where the kernel's user unwinder (is_uprobe_at_func_entry, Linux 6.16+)
 * itself puts the return address at [sp] after the ip (--stack). */
#define CMON_COOKIE_AT_FUNC_ENTRY (1ULL << 61)
/* On an entry cookie: the entry instruction is single-stepped, and the
 * function has a step probe (cmon_step) on a cheap instruction just past
 * it: its latency is timed from there, without the single-step's cost
 * (~15 us here, varying by microseconds call to call). */
#define CMON_COOKIE_STEP (1ULL << 62)
/* On an entry cookie: a branch of the function leads back to its entry (a
 * loop at -Os, a tail call to itself): an entry at the slot of the
 * function's own pending call is that call going on, not a new one. */
#define CMON_COOKIE_REENTERED (1ULL << 63)

enum cmon_exit_kind {
	CMON_EXIT_URETPROBE = 0, /* kernel uretprobe: ret already popped, slot = sp - 8 */
	CMON_EXIT_RET_INSN = 1,  /* uprobe on a ret instruction: slot = sp */
	CMON_EXIT_TAIL_JMP = 2,  /* uprobe on a jump out of the function: slot = sp, no value */
};

enum cmon_record_type {
	CMON_REC_CALL = 1,
	CMON_REC_CAPTURE = 2,
	CMON_REC_STACK = 3,
	CMON_REC_WATCH = 4,
	CMON_REC_PY = 5,      /* struct cmon_py_rec: one Python call (--py) */
	CMON_REC_PY_CODE = 6, /* struct cmon_py_code_rec: a code object seen first */
	CMON_REC_BATCH = 7,   /* struct cmon_batch: up to CMON_BATCH call records of one CPU */
	CMON_REC_CAPTURE_BATCH = 8, /* struct cmon_capture_batch: capture records of one CPU */
	CMON_REC_PY_ARGS = 9, /* struct cmon_py_args_rec: a Python call's further parameters */
	CMON_REC_PY_FUNC = 10, /* struct cmon_py_func_rec: a selected Python function made */
	CMON_REC_PY_EXIT = 11, /* struct cmon_py_exit_rec: a traced Python process is gone */
	CMON_REC_PY_EXEC = 12, /* struct cmon_py_exec_rec: a traced one's child exec'd */
};

/*
 * --watch: one write to a watched address (a hardware watchpoint, a
 * perf_event program).  IP is the address after the writing instruction
 * (the debug trap comes after it); OLD is the value the watch last saw in
 * this process (seeded at attach from /proc/PID/mem).
 */
#define CMON_MAX_WATCH 8 /* parsed; x86 has 4 debug registers per thread */

struct cmon_watch_spec {
	__u64 addr;
	__u32 len; /* 1, 2, 4, 8 */
	__u32 pad;
};

enum cmon_watch_flags {
	CMON_WATCH_OLD_UNKNOWN = 1u << 0, /* no value seen before in this process */
	CMON_WATCH_FAULT = 1u << 1,       /* the new value could not be read */
};

struct cmon_watch_key {
	__u32 pid;
	__u32 watch_id;
};

struct cmon_watch_rec {
	__u32 type; /* CMON_REC_WATCH */
	__u32 watch_id;
	__u64 ts_ns;
	__u64 ip;
	__u64 old_val;
	__u64 new_val;
	__u32 pid;
	__u32 tid;
	__u32 flags; /* enum cmon_watch_flags */
	__u32 pad;
	char comm[CMON_COMM_LEN]; /* the writing thread's name */
};

/*
 * --stack: a call's user stack at its entry, written before its record and
 * paired with it by (tid, ts_entry_ns).  IPS[0] is the function, IPS[1] the
 * return address ([sp] at entry: the frame-pointer walk would skip the
 * caller, whose frame is not made yet), then the frame-pointer chain.
 */
#define CMON_STACK_MAX 32

/* The file mapped where a frame's address is, as the kernel had it at the
 * call: the process may be gone (and /proc/PID/maps with it) by the time
 * user space names the frame.  INO 0: not a file mapping. */
struct cmon_frame_obj {
	__u64 ino;
	__u64 base;   /* the address of file offset 0 in that mapping */
	__u32 dev;    /* the kernel's dev_t: MAJOR << 20 | MINOR */
	__u32 where;  /* enum cmon_frame_where */
};

enum cmon_frame_where {
	CMON_FRAME_UNKNOWN = 0,  /* not looked up (the mappings were busy) */
	CMON_FRAME_MAPPED = 1,
	CMON_FRAME_UNMAPPED = 2, /* no mapping holds it: a frame-pointer walk gone astray */
};

struct cmon_stack_rec {
	__u32 type; /* CMON_REC_STACK */
	__u32 n;    /* IPS used */
	__u32 tid;
	__u32 pid;
	__u64 ts_entry_ns;
	__u64 ips[CMON_STACK_MAX];
	struct cmon_frame_obj objs[CMON_STACK_MAX];
};

enum cmon_call_flags {
	CMON_CALL_RETURNED = 1u << 0,   /* exit seen: ret, ts_exit, *_exit are valid */
	CMON_CALL_NORETURN = 1u << 1,   /* frame abandoned: longjmp, exception, exit */
	CMON_CALL_ENTRY_ONLY = 1u << 2, /* --no-return: nothing after the entry */
	CMON_CALL_TAILCALL = 1u << 3,   /* left by a tail jump: ret is unknown */
	CMON_CALL_NEVER_RETURNS = 1u << 4, /* with ENTRY_ONLY: the function never returns */
	CMON_CALL_USDT = 1u << 5,          /* with ENTRY_ONLY: a static probe fired */
	CMON_CALL_LINE = 1u << 6,          /* with ENTRY_ONLY: a source line ran */
	CMON_CALL_DEPTH = 1u << 7,         /* with ENTRY_ONLY: depth is the calls pending
					    * under it (unknown with --no-return) */
};

/*
 * USDT probes (<sys/sdt.h>): each site's arguments as its note spells
 * them, read by cmon_usdt into the record's args (the first
 * CMON_MAX_ARGS).  REG_OFF is an offset into struct pt_regs.
 */
enum cmon_usdt_arg_kind {
	CMON_USDT_REG = 0,   /* the register */
	CMON_USDT_MEM = 1,   /* SIZE bytes at register + VALUE */
	CMON_USDT_CONST = 2, /* VALUE */
};

struct cmon_usdt_arg {
	__s64 value;
	__u16 reg_off;
	__u8 kind;
	__u8 size;      /* 1, 2, 4, 8 */
	__u8 is_signed;
	__u8 pad[3];
};

enum cmon_site_kind {
	CMON_SITE_USDT = 0, /* a USDT probe */
	CMON_SITE_LINE = 1, /* a source line (--line): no arguments */
};

struct cmon_usdt_spec {
	__u32 n_args;
	__u32 kind; /* enum cmon_site_kind */
	struct cmon_usdt_arg args[CMON_MAX_ARGS];
};

/* One traced call, written once: at its return, when it is abandoned, or at
 * entry with --no-return. */
struct cmon_call_rec {
	__u32 type;  /* CMON_REC_CALL */
	__u32 flags; /* enum cmon_call_flags */
	__u64 ts_entry_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	/* The return's time less the frame's step_ns: ts_exit_ns -
	 * ts_entry_ns is the measured latency, and a returned record's
	 * order_ns - ts_exit_ns its step (its latency starts that much after
	 * ts_entry_ns). */
	__u64 ts_exit_ns;
	__u64 args[CMON_MAX_ARGS];
	__u64 ret;
	__u64 rss_entry; /* bytes: file + anon + shmem pages, exact */
	__u64 rss_exit;
	__u64 vms_entry; /* bytes: mm->total_vm */
	__u64 vms_exit;
	__u32 pid;
	__u32 tid;
	__u32 func_id; /* index into user space's function table */
	__u32 depth;   /* traced calls pending below this one on the thread */
	char comm[CMON_COMM_LEN]; /* process (thread-group leader) name */
	/* When the record was written (its exit, its entry without one, or
	 * when it was found abandoned): its place in the time order user
	 * space restores across CPUs' batches (user/event/staging.c). */
	__u64 order_ns;
};

/*
 * Call records staged per CPU (bpf/staging.bpf.h): a full batch goes into
 * the ring buffer as one record (one reservation for CMON_BATCH calls: the
 * reservation, not the copy, is most of a record's cost); user space takes
 * a partial batch from the map itself (mmapped) at every poll.  BUSY is the
 * lock between the programs of one CPU and that user-space sweep.  64-byte
 * header and records: a CPU's batch shares no cache line with another's.
 */
#define CMON_BATCH 16
struct cmon_batch {
	__u32 type; /* CMON_REC_BATCH */
	__u32 n;    /* records staged: r[0 .. n); fewer than CMON_BATCH when a
		     * thread's partial batch is sent as it leaves the CPU */
	__u64 busy; /* 1 while a program or the sweep holds the batch (64-bit: BPF's atomics) */
	__u64 sent; /* batches sent to the ring buffer (the fill is checked every 4th) */
	__u32 tid;  /* the thread that staged the last record */
	__u8 pad[36];
	struct cmon_call_rec r[CMON_BATCH];
};

/*
 * The consumer's state, shared with the programs that write call records
 * (a one-slot mmapped array, written by user space only).  ASLEEP is 1
 * while the consumer waits on an empty ring buffer: only then does a
 * filling buffer need a forced wakeup, an IRQ-work self-interrupt on the
 * writing CPU (a VM exit here); a consumer that is reading returns from its
 * poll as long as the buffer holds anything.  A line of its own.
 */
struct cmon_consumer {
	__u64 asleep;
	__u8 pad[56];
};

/*
 * --blocking-timeout: the waits of records that found the ring buffer
 * full (bpf/events.bpf.h, room_wait), per CPU.  GIVEN_UP: waits that
 * ended without room (the record then dropped and counted as lost);
 * SKIPPED: records not made to wait because the consumer had not moved
 * since a wait saw it stopped.
 */
struct cmon_room_waits {
	__u64 times;
	__u64 ns;
	__u64 given_up;
	__u64 skipped;
};

/*
 * A thread's pending traced calls (task storage of trace and profile; user
 * space reads a live thread's at the end to report its calls still open).
 */
struct cmon_frame {
	__u64 slot; /* address of the return-address slot: the frame's identity */
	__u64 ts;
	__u64 args[CMON_MAX_ARGS];
	__u64 rss;
	__u64 vms;
	__u32 func_id;
	__u32 flags; /* CMON_FRAME_* */
	/* The thread that made the call: a goroutine or a coroutine may
	 * return on another (its record and captures name this one). */
	__u32 tid;
	/* ns from TS to where the call's latency starts: the step probe's
	 * time (CMON_COOKIE_STEP), or until it fires an estimate of it; 0
	 * for other entries.  TS stays the call's identity (captures and
	 * stacks are tagged with it). */
	__u32 step_ns;
	/* profile: the probes' cost inside this call spent on the traced
	 * calls it made (their probes as a caller times them, and what they
	 * in turn made: shadow_stack.bpf.h), taken out of its latency. */
	__u64 child_ns;
};

#define CMON_FRAME_TAIL_CALLED 1u /* left through a tail call: returns with its callee */
#define CMON_FRAME_FOCUS 2u       /* a --focus function's frame */
#define CMON_FRAME_QUIET 4u       /* pushed for pairing only: no record */
#define CMON_FRAME_AT_EXIT 8u     /* profile: --if decides at the return (not counted yet) */
#define CMON_FRAME_STEP 16u       /* the step probe has not fired yet (step_ns an estimate) */
#define CMON_FRAME_NO_URET 32u    /* entered past the kernel's nested uretprobes: a
				   * return through one is not seen (lost, not noreturn) */
/* The high half of a frame's flags: the function's duty-cycle generation
 * at its entry (shadow_stack.bpf.h, duty_gen), when its probes are
 * attached and detached by turns (the agent's budget). */
#define CMON_FRAME_GEN_SHIFT 16

/* duty_calls' value (shadow_stack.bpf.h): a function's entries, and the
 * process that made the last one.  The agent prices a call by what that
 * process's CPU time does while the probes come and go. */
struct cmon_duty_calls {
	__u64 calls;
	__u32 tgid;
	__u32 pad;
};

/*
 * Coroutine stacks (shadow_stack.bpf.h): the regions a process made
 * stacks in (makecontext's uc_stack, make_fcontext's sp - size), learnt
 * where they are made; a call whose return slot lies in one pairs on that
 * stack's own shadow stack, whichever thread runs it.
 */
#define CMON_MAX_STACK_REGIONS 64
enum cmon_stack_maker {
	CMON_STACK_MAKER_UCONTEXT = 0, /* makecontext(ucontext_t *ucp, ...) */
	CMON_STACK_MAKER_FCONTEXT = 1, /* make_fcontext(void *sp, size_t size, fn) */
};

struct cmon_stack_regions {
	__u32 n;    /* regions in use */
	__u32 next; /* the one to replace when full (oldest) */
	struct {
		__u64 lo, hi;
	} r[CMON_MAX_STACK_REGIONS];
};

struct cmon_stack_key {
	__u32 tgid;
	__u32 pad;
	__u64 lo; /* the region's low end */
};

struct cmon_shadow_stack {
	__u32 depth;
	__u32 focus; /* --focus: pending focus frames (low 16 bits), the
		      * outermost one's depth (high 16 bits) */
	struct cmon_frame frames[CMON_STACK_DEPTH];
};

/* Per-function counters, one slot per function in a per-CPU array: the hot
 * path never touches a shared cache line. */
struct cmon_func_stats {
	__u64 calls;        /* entries seen */
	__u64 lost_ringbuf; /* record not written: ring buffer full */
	__u64 lost_depth;   /* entry not recorded: CMON_STACK_DEPTH pending calls */
	__u64 lost_nomem;   /* entry not recorded: no per-thread storage */
	__u64 lost_capture; /* capture record not written: ring buffer full */
	__u64 outside_focus; /* --focus: entered outside every focus function,
			      * or deeper than --max-depth below one;
			      * --py's evaluator: calls found not selected at
			      * their return (user space filters the others) */
	__u64 filtered;     /* --if: the condition was false, no record */
	__u64 unchanged;    /* --on-change: the value was the last one, no record */
	__u64 lost_uret;    /* return not seen: nested past the kernel's
			     * CMON_KERNEL_URET_DEPTH uretprobes */
	__u64 cut;          /* duty cycling: entered while the probes were
			     * attached, returned after they were detached
			     * (its return unseen): no record */
};

/* The kernel installs at most this many nested uretprobes per thread
 * (MAX_URETPROBE_DEPTH): a deeper call gets none, and its return, if it
 * was to come through one, is never seen. */
#define CMON_KERNEL_URET_DEPTH 64

/* Following a program's children (follow.bpf.h): at most this many
 * processes at once; a fork past it is not followed, and counted. */
#define CMON_FOLLOW_MAX 8192

/* follow.bpf.h's wakeup: a followed process forked CHILD (user space
 * attaches its library links at once instead of at the next poll). */
struct cmon_fork_rec {
	__u32 child;
	__u32 parent;
};

struct cmon_follow_stats {
	__u64 forks;      /* children followed */
	__u64 unfollowed; /* children of followed processes not followed: map full */
	__u64 changes;    /* keys the programs added to or removed from `followed`:
			   * user space walks the map only when this moved */
	__u64 thread_execs; /* keys added to `thread_execs` (filter.bpf.h): the same */
};

/*
 * Captures: what a function's arguments point to (strings, buffers,
 * structs, arrays), read in the kernel at entry (and at return for the
 * return value) by a small program of fetch items per function, planned in
 * user space from DWARF and --capture.
 *
 * Item i's address is BASE + off, where BASE is a register's value
 * (CMON_BASE_REG), the stack pointer at the probe (CMON_BASE_SP: [sp] is the
 * return address, stack arguments start at sp + 8), or the address item
 * BASE_ITEM was read from (CMON_BASE_ITEM: a field of a struct read
 * earlier).  Then, if DEREF, the pointer stored at that address is loaded
 * and the address becomes pointer + deref_off.  Then SIZE bytes (at most)
 * are read there; for CMON_FETCH_STR up to the first NUL; when len_reg is
 * set, the size is min(size, value of register len_reg * elem_size).
 * CMON_FETCH_REG reads no memory: the item is the register's 8 bytes.
 * Registers use DWARF x86-64 numbering: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi,
 * 5 rdi, 6 rbp, 7 rsp, 8..15 r8..r15.
 */
#define CMON_MAX_FETCH 16
#define CMON_CAPTURE_MAX (1u << 20)   /* bytes of all items of one record */
#define CMON_ITEM_MAX (256u << 10)    /* bytes of one item */

enum cmon_fetch_kind {
	CMON_FETCH_NONE = 0,
	CMON_FETCH_REG = 1, /* the register's value, 8 bytes */
	CMON_FETCH_MEM = 2, /* SIZE bytes of memory */
	CMON_FETCH_STR = 3, /* a C string of at most SIZE bytes (NUL not kept) */
};

enum cmon_fetch_base {
	CMON_BASE_REG = 0,
	CMON_BASE_SP = 1,
	CMON_BASE_ITEM = 2,
	/* At the return: the call's entry-time argument REG (0..5), kept in
	 * its frame (--capture-at return: a pointer parameter read again). */
	CMON_BASE_ENTRY_ARG = 3,
};

struct cmon_fetch {
	__s64 off;
	__s64 deref_off;
	__u32 size;
	__u32 elem_size; /* multiplies the value of len_reg */
	__u8 kind;       /* enum cmon_fetch_kind */
	__u8 base;       /* enum cmon_fetch_base */
	__u8 reg;        /* CMON_BASE_REG / CMON_FETCH_REG: DWARF register */
	__u8 base_item;  /* CMON_BASE_ITEM: an earlier item's index */
	__u8 deref;      /* 0 or 1 */
	__s8 len_reg;    /* -1: none */
	__u8 pad[2];
};

/* One function's fetch program, at entry or at return. */
struct cmon_fetch_plan {
	__u32 n;
	/* At the return: the registers given back their entry values (the
	 * call's argument registers, kept in its frame) before the items run,
	 * so that a length register (len_reg) is the count the call was
	 * given.  Bit 24 + i: argument i (0..5) is put in DWARF register
	 * (entry_regs >> 4 * i) & 15.  0 at entry. */
	__u32 entry_regs;
	struct cmon_fetch items[CMON_MAX_FETCH];
};

enum cmon_item_flags {
	CMON_ITEM_TRUNCATED = 1u << 0, /* longer than its size: cut */
	CMON_ITEM_FAULT = 1u << 1,     /* the memory could not be read (NULL, unmapped) */
};

/* A capture record: this header, then n items, each a struct
 * cmon_capture_item followed by its len bytes, padded to 8. */
struct cmon_capture_rec {
	__u32 type;  /* CMON_REC_CAPTURE */
	__u32 n;     /* items */
	__u64 ts_entry_ns; /* with tid: the call it belongs to */
	__u32 tid;
	__u32 func_id;
	__u32 at_return; /* 0: entry items, 1: return items, CMON_CAPTURE_DROP */
	__u32 len;       /* bytes after this header */
};

/*
 * Capture records staged per CPU, as call records are (struct cmon_batch):
 * a ring-buffer reservation is most of a small record's cost.  Records of
 * less than CMON_CAPBATCH_REC_MAX bytes are appended to DATA, one after the
 * other (each 8-aligned, as in the ring buffer); the batch goes to the
 * ring buffer whole (its header and LEN bytes) when the next record would
 * not fit, and user space takes a partial one from the mmapped map at
 * every poll.  BUSY as in struct cmon_batch.  DATA has CMON_CAPBATCH_REC_MAX
 * bytes of slack past CMON_CAPBATCH_BYTES so that the verifier can bound a
 * record's writes; records never use it.
 */
#define CMON_CAPBATCH_BYTES 8192u
#define CMON_CAPBATCH_REC_MAX 2048u
struct cmon_capture_batch {
	__u32 type; /* CMON_REC_CAPTURE_BATCH */
	__u32 len;  /* bytes of records in data */
	__u64 busy;
	__u32 n;    /* records in data */
	__u8 pad[44];
	__u8 data[CMON_CAPBATCH_BYTES + CMON_CAPBATCH_REC_MAX];
};

/* at_return of an empty capture record: the call was left out by --if or
 * --on-change at its return; its entry capture and stack are forgotten. */
#define CMON_CAPTURE_DROP 2u

struct cmon_capture_item {
	__u32 len;
	__u32 flags; /* enum cmon_item_flags */
};

/*
 * Python functions (--py).  Two ways into CPython (user/python/cpython.h):
 *  - the evaluator: _PyEval_EvalFrameDefault(tstate, frame, throwflag)
 *    probed at entry and return, with interp->eval_frame set so that every
 *    Python call and every resume of a generator goes through it (3.11;
 *    3.12+ with --py-resumes): a trap per Python call;
 *  - the vectorcall entry (3.12+): a selected function's `vectorcall` is
 *    pointed (by user space) at the nop just before _PyFunction_Vectorcall,
 *    which leaves only its calls off CPython's inlined fast path; a probe
 *    there sees them, and nothing else costs a trap (function creation
 *    aside).
 * The interpreter's struct offsets come from user space's per-version
 * layouts; the objects' addresses per process (struct cmon_py_proc).
 */
#define CMON_PY_MAX_ARGS 6     /* parameters kept in a call's frame and record */
#define CMON_PY_MORE_ARGS 26   /* the next ones, in a CMON_REC_PY_ARGS record at entry */
#define CMON_PY_ALL_ARGS (CMON_PY_MAX_ARGS + CMON_PY_MORE_ARGS)
#define CMON_PY_STR_MAX 48     /* bytes of a str or bytes value kept */
#define CMON_PY_STACK_DEPTH 64 /* pending traced Python calls per thread */
#define CMON_PY_EXC_TYPE_MAX 32
#define CMON_PY_TASK_NAME_MAX 24

struct cmon_py_offsets {
	__u32 frame_code;        /* _PyInterpreterFrame.f_code (3.13: f_executable) */
	__u32 frame_owner;       /* .owner (char) */
	__u32 frame_localsplus;  /* .localsplus[] */
	__u32 code_argcount;     /* PyCodeObject.co_argcount (int) */
	__u32 code_posonlyargcount;
	__u32 code_kwonlyargcount;
	__u32 code_flags;        /* co_flags: CO_VARARGS / CO_VARKEYWORDS take slots */
	__u32 code_firstlineno;
	__u32 code_localsplusnames; /* tuple of str */
	__u32 code_filename;
	__u32 code_qualname;
	__u32 func_code;         /* PyFunctionObject.func_code */
	__u32 func_defaults;     /* tuple or NULL */
	__u32 func_kwdefaults;   /* dict or NULL */
	__u32 func_vectorcall;
	__u32 func_version;      /* u32: 0 keeps its calls unspecialized */
	__u32 tuple_items;       /* PyTupleObject.ob_item[] */
	__u32 type_name;         /* PyTypeObject.tp_name (char *) */
	__u32 type_flags;        /* .tp_flags (Py_TPFLAGS_LONG_SUBCLASS: an int) */
	__u32 obj_type;          /* PyObject.ob_type */
	__u32 var_size;          /* PyVarObject.ob_size (tuple, list, bytes; 3.11: int) */
	__u32 long_digits;       /* PyLongObject's 30-bit digits */
	__u32 long_tag;          /* 3.12+: long_value.lv_tag (digits << 3 | sign); 0: ob_size */
	__u32 float_value;       /* PyFloatObject.ob_fval */
	__u32 str_length;        /* PyASCIIObject.length */
	__u32 str_state;         /* .state: kind bits 2-4, compact 5, ascii 6 */
	__u32 str_ascii_data;    /* sizeof(PyASCIIObject) */
	__u32 str_utf8_length;   /* PyCompactUnicodeObject.utf8_length */
	__u32 str_utf8;          /* .utf8 (char *, NULL until asked for) */
	__u32 bytes_data;        /* PyBytesObject.ob_sval */
	__u32 dict_used;         /* PyDictObject.ma_used */
	__u32 dict_keys;         /* .ma_keys (PyDictKeysObject *) */
	__u32 dict_values;       /* .ma_values (split tables: not searched) */
	__u32 cell_ref;          /* PyCellObject.ob_ref */
	__u32 gen_iframe;        /* PyGenObject.gi_iframe: a generator's frame, inside it */
	__u32 gen_frame_state;   /* .gi_frame_state (int8: < 0 suspended, so it yielded) */
	__u32 exc_args;          /* PyBaseExceptionObject.args */
	__u32 tstate_exc;        /* PyThreadState.current_exception (3.11: curexc_value) */
	__u32 tstate_exc_type;   /* 3.11: curexc_type; 0: the exception's own type */
	__u32 gil_holder;        /* 3.12+: _gil_runtime_state.last_holder */
	__u32 owner_generator;   /* the frame owner value of a generator's frame */
	/* asyncio: the task a coroutine runs in, found from the frame that
	 * stepped it (asyncio.events.Handle._run, its _callback: the task's
	 * step wrapper or its bound __wakeup) */
	__u32 frame_previous;    /* _PyInterpreterFrame.previous */
	__u32 tstate_cframe;     /* PyThreadState.cframe (0: 3.13, current_frame below) */
	__u32 cframe_current;    /* _PyCFrame.current_frame (3.13: PyThreadState's) */
	__u32 handle_callback;   /* Handle._callback (a slot) */
	__u32 wrapper_task;      /* TaskStepMethWrapper.sw_task */
	__u32 method_self;       /* PyCFunctionObject.m_self */
	__u32 task_name;         /* _asyncio's TaskObj.task_name (a str, or 3.12+ its number) */
	/* 3.13 (0: not needed): PyTypeObject.tp_version_tag, the guard of a
	 * `Class(...)` site that enters the class's __init__ without a call */
	__u32 type_version;
};

/* The objects a value is recognised by: addresses in the process. */
enum cmon_py_type {
	CMON_PYT_INT = 0, CMON_PYT_FLOAT, CMON_PYT_STR, CMON_PYT_BYTES, CMON_PYT_BOOL,
	CMON_PYT_TUPLE, CMON_PYT_LIST, CMON_PYT_DICT, CMON_PYT_CELL, CMON_PYT_N,
};

enum cmon_py_mode {
	CMON_PY_MODE_EVAL = 0,       /* every call through the evaluator (eval_frame hook) */
	CMON_PY_MODE_VECTORCALL = 1, /* selected functions through vc_entry */
};

/* One traced interpreter process (map py_procs, key: pid). */
struct cmon_py_proc {
	__u64 types[CMON_PYT_N];
	__u64 none, true_, false_; /* _Py_NoneStruct, _Py_TrueStruct, _Py_FalseStruct */
	__u64 vc_func;  /* _PyFunction_Vectorcall: what a function not traced keeps */
	__u64 vc_entry; /* the nop before it (same upper 56 bits): a traced one's */
	__u64 gil;      /* 3.12+: the interpreter's GIL (its holder runs Python) */
	__u32 stop;     /* a launched one: SIGSTOP it at its start, its first call */
	__u32 str_max;  /* --strlen, at most CMON_PY_STR_MAX */
	__u32 mode;     /* enum cmon_py_mode */
	__u32 flags;    /* CMON_PY_PROC_* */
};
/* A function selected being made: the process stopped (SIGSTOP) until user
 * space has sent it through the vectorcall entry (not for a job a shell
 * has in the foreground: its stop would be the shell's too). */
#define CMON_PY_PROC_STOP_NEWFUNC 1u

enum cmon_py_val_kind {
	CMON_PYV_ABSENT = 0, /* no value (unread, or NULL) */
	CMON_PYV_NONE, CMON_PYV_TRUE, CMON_PYV_FALSE,
	CMON_PYV_INT,      /* num: the value, two's complement */
	CMON_PYV_BIGINT,   /* beyond 64 bits: len its bits (0: unread), num 1 if negative */
	CMON_PYV_FLOAT,    /* num: the double's bits */
	CMON_PYV_STR,      /* len: code points; data: the UTF-8 bytes kept (nbytes) */
	CMON_PYV_STR_WIDE, /* a non-ASCII str without its UTF-8 form: len only */
	CMON_PYV_BYTES,    /* len; data */
	CMON_PYV_TUPLE, CMON_PYV_LIST, CMON_PYV_DICT, /* len: items */
	CMON_PYV_OTHER,    /* num: the type object's address; data: its tp_name */
	CMON_PYV_UNREADABLE,
	/* An instance of an int subclass (an IntEnum member): num its value
	 * (len its bits when beyond 64, then INTSUB_BIG in nbytes), data the
	 * type's and the object's addresses (cmon_py_intsub). */
	CMON_PYV_INTSUB,
};

struct cmon_py_intsub {
	__u64 type, obj;
};
#define CMON_PY_INTSUB_BIG 0xff

struct cmon_py_val {
	__u64 num;
	__u32 len;
	__u8 kind;   /* enum cmon_py_val_kind */
	__u8 nbytes; /* bytes of data kept */
	__u8 pad[2];
	char data[CMON_PY_STR_MAX];
};

enum cmon_py_flags {
	CMON_PY_RETURNED = 1u << 0,  /* returned: ret, ts_exit, *_exit valid */
	CMON_PY_EXCEPTION = 1u << 1, /* returned NULL: an exception left it (exc_type, ret) */
	CMON_PY_YIELDED = 1u << 2,   /* a generator or coroutine yielded */
	CMON_PY_NORETURN = 1u << 3,  /* its return was not seen (cmon_py_rec.why) */
	CMON_PY_BREAK = 1u << 4,     /* cmon break: written at entry, the process stopped */
	CMON_PY_MORE = 1u << 5,      /* a CMON_REC_PY_ARGS record has its next parameters */
	CMON_PY_RESUMED = 1u << 6,   /* a generator's or coroutine's frame going on */
	/* Its code object's parameter counts could not be read at entry (its
	 * page not mapped in that instant: seen in forked children): the
	 * evaluator frame's first CMON_PY_MAX_ARGS slots, or a vectorcall's
	 * positional arguments, were read instead; user space keeps as many
	 * as the code object has parameters. */
	CMON_PY_COUNTS_UNREAD = 1u << 7,
};

/* CMON_PY_NORETURN: why its return was not seen. */
enum cmon_py_noreturn {
	CMON_PY_NR_DETACHED = 0, /* still running when cmon detached */
	CMON_PY_NR_NO_SLOT = 1,  /* the kernel's return probes were all in use on the thread */
};

/* One Python call, written at its return, as long as its arguments need. */
struct cmon_py_rec {
	__u32 type;  /* CMON_REC_PY */
	__u32 flags; /* enum cmon_py_flags */
	__u64 ts_entry_ns;
	__u64 ts_exit_ns;
	__u64 code;  /* the code object's address: names it (cmon_py_code_rec) */
	/* CMON_PY_BREAK: the thread's PyThreadState (its callers' frames) and
	 * the call's frame (0 on the vectorcall entry: none yet) */
	__u64 tstate, frame;
	__u64 rss_entry, rss_exit, vms_entry, vms_exit;
	__u32 pid, tid;
	__u32 depth;  /* traced Python calls pending below it on the thread */
	__u32 n_args; /* values in args (parameters, at most CMON_PY_MAX_ARGS) */
	__u32 n_params; /* parameters it has (CMON_PY_MORE: the rest follow) */
	__u32 why;      /* CMON_PY_NORETURN: enum cmon_py_noreturn */
	__u64 task;     /* a coroutine's asyncio task (0: none known) */
	/* its name as the step left it (ASCII, cut), or "#N" (3.12+: Task-N
	 * until the name is asked for) */
	char task_name[CMON_PY_TASK_NAME_MAX];
	char comm[CMON_COMM_LEN];
	char exc_type[CMON_PY_EXC_TYPE_MAX]; /* CMON_PY_EXCEPTION: its type's name */
	struct cmon_py_val ret; /* CMON_PY_EXCEPTION: its message (args[0]) */
	/* n_args of them: the record ends there (CMON_PY_REC_SIZE) */
	struct cmon_py_val args[CMON_PY_MAX_ARGS];
};

/* The bytes of a record with N argument values. */
#define CMON_PY_REC_SIZE(n) (__builtin_offsetof(struct cmon_py_rec, args) + \
			     (n) * sizeof(struct cmon_py_val))

/* A call's parameters past the first CMON_PY_MAX_ARGS, written at its
 * entry (before its cmon_py_rec, which says CMON_PY_MORE): thread TID's
 * call that started at TS_ENTRY_NS.  As long as N values need. */
struct cmon_py_args_rec {
	__u32 type; /* CMON_REC_PY_ARGS */
	__u32 pid, tid;
	__u32 n;
	__u64 ts_entry_ns;
	struct cmon_py_val args[CMON_PY_MORE_ARGS];
};
#define CMON_PY_ARGS_REC_SIZE(n) (__builtin_offsetof(struct cmon_py_args_rec, args) + \
				  (n) * sizeof(struct cmon_py_val))

/* A function object made whose code object is selected (or undecided):
 * user space sends it through the vectorcall entry (cmon_py_proc). */
/* The last thread of a process with an interpreter (py_procs) exited: its
 * records are all before this one in the ring buffer. */
struct cmon_py_exit_rec {
	__u32 type; /* CMON_REC_PY_EXIT */
	__u32 pid;
};

/* Process PID (a traced interpreter, or its followed child) exec'd: its
 * entry in py_procs now stops it at its interpreter's start, should the
 * new program be one (cmon_py_exec).  Its records before are the old
 * program's. */
struct cmon_py_exec_rec {
	__u32 type; /* CMON_REC_PY_EXEC */
	__u32 pid;
};

struct cmon_py_func_rec {
	__u32 type; /* CMON_REC_PY_FUNC */
	__u32 pid, tid;
	__u32 stopped; /* the process was sent SIGSTOP */
	__u64 func, code;
	/* 0: FUNC made; else FUNC (a traced __init__, CMON_PY_VF_INIT) called
	 * with an instance of class CLS, which has a version tag (3.13) */
	__u64 cls;
};

/* A code object the kernel met for the first time in process PID: user
 * space decides from its names whether it is traced (map py_code).  The
 * names are read here, while the object surely lives (the process may be
 * gone by the time user space reads the record); an empty one was not an
 * ASCII str, which user space reads from the process instead. */
#define CMON_PY_QUALNAME_MAX 128
#define CMON_PY_FILENAME_MAX 256
#define CMON_PY_ARGNAME_MAX 32

struct cmon_py_code_rec {
	__u32 type; /* CMON_REC_PY_CODE */
	__u32 pid;
	__u64 code;
	__u64 fp;   /* its fingerprint (struct cmon_py_verdict) */
	__s32 firstlineno;
	__u32 n_names; /* parameter names (with *args, **kw), at most CMON_PY_ALL_ARGS */
	__s32 argcount, kwonlyargcount;
	__s32 flags;   /* co_flags */
	__s32 posonlyargcount;
	char qualname[CMON_PY_QUALNAME_MAX];
	char filename[CMON_PY_FILENAME_MAX];
	char names[CMON_PY_ALL_ARGS][CMON_PY_ARGNAME_MAX];
};

/*
 * The --py patterns as the kernel matches a code object met first, before
 * user space names it: `cmon break` stops its first call at once, and the
 * vectorcall entry redirects only the functions selected.  One row per
 * form a pattern can take: QUALNAME (a glob when CMON_PY_PAT_GLOB: '*'
 * and '?'), and when FILE_LEN, a file name ending in FILE, where it starts
 * at a path boundary (the start, or after a '/'; CMON_PY_PAT_MODULE: a
 * module.func pattern, whose FILE is the module's "a.b.py": a '.' before
 * ".py" matches a '/' too, and a '.' is a boundary too).  Names are
 * compared as the kernel reads them: ASCII.  A pattern the rows cannot
 * express (a glob in its file or module part, a [set]) is a row with
 * CMON_PY_PAT_USER: what no other row selects stays PENDING (user space
 * decides).
 */
#define CMON_PY_PAT_MAX 32
#define CMON_PY_PAT_MODULE 1u
#define CMON_PY_PAT_GLOB 2u
#define CMON_PY_PAT_USER 4u

struct cmon_py_pat {
	__u32 qual_len;
	__u32 file_len; /* 0: any file */
	__u32 flags;    /* CMON_PY_PAT_* */
	__u32 pad;
	char qualname[CMON_PY_QUALNAME_MAX];
	char file[CMON_PY_FILENAME_MAX];
};

/* Map py_code: (pid, code object) -> verdict. */
struct cmon_py_code_key {
	__u32 pid;
	__u32 pad;
	__u64 code;
};

/* Map py_code's value.  Code objects are freed and their addresses reused
 * (exec, a reloaded module): FP, the addresses of co_filename and
 * co_qualname mixed, tells a new object at an old address, which is then
 * announced again.  (A new one with the same name objects is the same
 * function for the patterns: the verdict stands.) */
struct cmon_py_verdict_val {
	__u32 verdict; /* enum cmon_py_verdict */
	__u32 flags;   /* CMON_PY_VF_*, set by user space */
	__u64 fp;
};

/* A traced method __init__ (3.13): a call of it with a class that has a
 * version tag is announced (struct cmon_py_func_rec's cls). */
#define CMON_PY_VF_INIT 1u

enum cmon_py_verdict {
	CMON_PY_PENDING = 1, /* user space has not decided yet: recorded, filtered there */
	CMON_PY_TRACED = 2,
	CMON_PY_SKIP = 3,
};

/* A thread's pending traced Python calls (task storage). */
struct cmon_py_frame {
	__u64 slot;  /* the return-address slot at entry: pairs the return */
	__u64 frame; /* the evaluator's frame (0 on the vectorcall entry) */
	__u64 code;
	__u64 ts;
	__u64 rss, vms;
	__u64 tstate; /* the evaluator's (0 on the vectorcall entry: the GIL's holder) */
	__u64 task;   /* a coroutine's asyncio task (0: none known) */
	__u32 n_args;
	__u32 n_params;
	__u32 flags; /* CMON_PY_FR_* */
	__u32 pad;
	struct cmon_py_val args[CMON_PY_MAX_ARGS];
};
#define CMON_PY_FR_GENERATOR 1u /* a generator's or coroutine's frame (resumed) */
#define CMON_PY_FR_NO_SLOT 2u   /* entered past the kernel's nested return probes */
#define CMON_PY_FR_MORE 4u      /* its further parameters went out at entry */
#define CMON_PY_FR_COUNTS_UNREAD 8u /* CMON_PY_COUNTS_UNREAD */

struct cmon_py_stack {
	__u32 depth; /* may exceed CMON_PY_STACK_DEPTH: those calls are counted lost */
	__u32 pad;
	struct cmon_py_frame frames[CMON_PY_STACK_DEPTH];
};

/*
 * --if EXPR and --on-change EXPR: a small postfix program per function,
 * compiled in user space (user/filter/expr.c) and interpreted by
 * bpf/expr.bpf.h on a stack of CMON_EXPR_STACK 64-bit values.  Every value
 * pushed is already extended to 64 bits by its C type (SIZE bytes,
 * IS_SIGNED), so comparisons are exact; a memory read that faults pushes 0.
 * Programs live in an array by func_id * 2 + (0: --if, 1: --on-change).
 */
#define CMON_EXPR_MAX_OPS 32
#define CMON_EXPR_STACK 8
#define CMON_EXPR_MAX_STRS 4
#define CMON_EXPR_STR_MAX 32  /* bytes of a string constant, NUL not counted */

enum cmon_expr_op {
	CMON_OP_ARG = 1,   /* push args[imm] */
	CMON_OP_RET,       /* push the return value */
	CMON_OP_LAT,       /* push the latency, ns, less lat_bias_ns (at least 0) */
	CMON_OP_CONST,     /* push imm */
	CMON_OP_LOAD,      /* top = SIZE bytes at top + imm (SIZE 0: top + imm, an address) */
	CMON_OP_STR_EQ,    /* top = the C string at top equals strs[imm] */
	CMON_OP_EQ,        /* pop b, pop a, push a OP b (signed unless IS_SIGNED is 0) */
	CMON_OP_NE,
	CMON_OP_LT,
	CMON_OP_LE,
	CMON_OP_GT,
	CMON_OP_GE,
	CMON_OP_AND,       /* logical: both sides are evaluated (no side effects) */
	CMON_OP_OR,
	CMON_OP_NOT,
};

struct cmon_expr_insn {
	__s64 imm;
	__u8 op;        /* enum cmon_expr_op */
	__u8 size;      /* ARG, RET, LOAD: bytes of the value (1, 2, 4, 8) */
	__u8 is_signed; /* ARG, RET, LOAD: sign-extend; compare ops: signed */
	__u8 pad[5];
};

#define CMON_EXPR_AT_EXIT 1u /* names ret or latency_ns: evaluated at the return */

struct cmon_expr_prog {
	__u32 n;     /* instructions; 0: no program */
	__u32 flags; /* CMON_EXPR_* */
	__u64 lat_bias_ns; /* the probe's own cost, taken out of latency_ns (as in records) */
	struct cmon_expr_insn insns[CMON_EXPR_MAX_OPS];
	char strs[CMON_EXPR_MAX_STRS][CMON_EXPR_STR_MAX + 8]; /* NUL-terminated */
};

/* --on-change: the last value recorded, per (process, function). */
struct cmon_change_key {
	__u32 pid;
	__u32 func_id;
};

/* The layout both sides compile: a change here is a change of the ABI. */
_Static_assert(sizeof(struct cmon_call_rec) == 152, "cmon_call_rec layout");
_Static_assert(sizeof(struct cmon_consumer) == 64, "cmon_consumer layout");
_Static_assert(sizeof(struct cmon_room_waits) == 32, "cmon_room_waits layout");
_Static_assert(sizeof(struct cmon_batch) == 64 + CMON_BATCH * 152 && sizeof(struct cmon_batch) % 64 == 0,
	       "cmon_batch layout");
_Static_assert(sizeof(struct cmon_func_stats) == 80, "cmon_func_stats layout");
_Static_assert(sizeof(struct cmon_capture_batch) == 64 + CMON_CAPBATCH_BYTES + CMON_CAPBATCH_REC_MAX,
	       "cmon_capture_batch layout");
_Static_assert(sizeof(struct cmon_capture_rec) == 32 && sizeof(struct cmon_capture_item) == 8,
	       "cmon_capture_rec layout: records stay 8-aligned");
_Static_assert(sizeof(struct cmon_follow_stats) == 32, "cmon_follow_stats layout");
_Static_assert(sizeof(struct cmon_fork_rec) == 8, "cmon_fork_rec layout");
_Static_assert(sizeof(struct cmon_frame) == 104, "cmon_frame layout");
_Static_assert(sizeof(struct cmon_shadow_stack) == 8 + 104 * CMON_STACK_DEPTH,
	       "cmon_shadow_stack layout");
_Static_assert(sizeof(struct cmon_usdt_arg) == 16, "cmon_usdt_arg layout");
_Static_assert(sizeof(struct cmon_ind_site) == 16, "cmon_ind_site layout");
_Static_assert(sizeof(struct cmon_stack_regions) == 8 + 16 * CMON_MAX_STACK_REGIONS,
	       "cmon_stack_regions layout");
_Static_assert(sizeof(struct cmon_stack_key) == 16, "cmon_stack_key layout");
_Static_assert(sizeof(struct cmon_fetch) == 32, "cmon_fetch layout");
_Static_assert(sizeof(struct cmon_watch_rec) == 72, "cmon_watch_rec layout");
_Static_assert(sizeof(struct cmon_watch_spec) == 16, "cmon_watch_spec layout");
_Static_assert(sizeof(struct cmon_stack_rec) == 24 + 32 * CMON_STACK_MAX, "cmon_stack_rec layout");

_Static_assert(sizeof(struct cmon_py_val) == 64, "cmon_py_val layout");
_Static_assert(sizeof(struct cmon_py_rec) == 184 + 64 * (CMON_PY_MAX_ARGS + 1), "cmon_py_rec layout");
_Static_assert(sizeof(struct cmon_py_args_rec) == 24 + 64 * CMON_PY_MORE_ARGS, "cmon_py_args_rec layout");
_Static_assert(sizeof(struct cmon_py_pat) == 16 + CMON_PY_QUALNAME_MAX + CMON_PY_FILENAME_MAX,
	       "cmon_py_pat layout");
_Static_assert(sizeof(struct cmon_py_frame) == 80 + 64 * CMON_PY_MAX_ARGS, "cmon_py_frame layout");
_Static_assert(sizeof(struct cmon_expr_prog) == 16 + 16 * CMON_EXPR_MAX_OPS + 40 * CMON_EXPR_MAX_STRS,
	       "cmon_expr_prog layout");
_Static_assert(sizeof(struct cmon_change_key) == 8, "cmon_change_key layout");

#endif /* CMON_H */
