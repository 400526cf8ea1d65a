/*
 * resolve.h: from what the user named (processes, a program to launch, a
 * binary; function patterns) to the exact probes: which files, which
 * functions at which file offsets, where each probe sits and how its return
 * is observed.  Everything that can be wrong with the input is found here,
 * before anything is attached.
 */
#ifndef CMON_RESOLVE_H
#define CMON_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cmon_abi.h"
#include <sys/types.h>
#include "elf/funcpattern.h"
#include "elf/symtab.h"
#include "probe/insn.h"

enum return_mode {
	RETURN_NONE = 0,  /* entries only (--no-return) */
	RETURN_URETPROBE, /* kernel uretprobe: cheap, rewrites the return address */
	RETURN_INSN,      /* uprobes on the function's ret instructions: stack untouched */
	/* while planning only (never a probe_func's): RETURN_INSN where the
	 * function's ret instructions are found, else RETURN_URETPROBE */
	RETURN_INSN_ELSE_URETPROBE,
};

/* RETURN_PREFER_INSN: ret-insn probes wherever they can be had (else what
 * RETURN_AUTO would choose), for sets detached one function at a time
 * while the others run (duty cycling): since Linux 6.12 a uretprobe
 * pending in an outer function makes such a detach wait until that
 * function returns (probe/detach.h), and the function stays probed. */
enum return_choice { RETURN_AUTO = 0, RETURN_FORCE_URETPROBE, RETURN_FORCE_INSN, RETURN_OFF,
		     RETURN_PREFER_INSN };

const char *return_mode__name(enum return_mode m); /* "none" "uretprobe" "ret-insn" */
int return_choice__parse(const char *s, enum return_choice *out);
/* The choice for a set whose functions are detached one at a time (duty
 * cycling): RETURN_PREFER_INSN where the user left it to cmon. */
enum return_choice return_choice__duty_cycled(enum return_choice c);

/* A file cmon attaches to. */
struct probe_object {
	char *path;        /* as the traced processes see it */
	char *attach_path; /* what cmon opens and attaches to (see procmaps.h) */
	const char *module; /* basename of path */
	char *symbols_from; /* the debug file its symbols came from (stripped), or NULL */
	uint64_t dev, ino;
	struct symtab *symtab; /* during resolution only (NULL after, or without symbols) */
	unsigned runtime;      /* enum symtab_runtime_flags */
	/* Where a coroutine's stack is made (makecontext, make_fcontext):
	 * file offsets and CMON_STACK_MAKER_* kinds. */
	uint64_t stack_maker_off[2];
	uint8_t stack_maker_kind[2], n_stack_makers;
};

/* The Python probes (user/python/cpython.h): the evaluator (entry and
 * return), the vectorcall entry of selected functions (entry and return),
 * the return of CPython's function constructors, a launched interpreter's
 * start. */
enum probe_python { PROBE_PY_NONE = 0, PROBE_PY_EVAL, PROBE_PY_VC, PROBE_PY_NEWFUNC, PROBE_PY_START };

/* A traced function; its index in probe_set.funcs is its func_id. */
struct probe_func {
	char *name;        /* demangled (with parameters) for C++, else the symbol */
	size_t object;     /* index into probe_set.objects */
	uint64_t addr, size, file_offset;
	struct entry_plan entry;
	/* A single-stepped entry's step probe (insn.h), used when
	 * probe_func__step_timed says so. */
	struct step_plan step;
	/* A branch of the body leads back to the entry (CMON_COOKIE_REENTERED):
	 * an entry at the slot of the pending call is that call going on. */
	bool reentered;
	enum return_mode ret_mode; /* RETURN_NONE when never_returns */
	struct exit_plan exits; /* RETURN_INSN only */
	/* gcc's hot/cold split: the function's cold part (a symbol <name>.cold,
	 * not a function of its own), where its rare paths are.  Jumps between
	 * the parts stay inside; the cold part's returns and jumps out are the
	 * function's exits too (COLD_EXITS, offsets from COLD_ADDR: RETURN_INSN
	 * only).  COLD_SIZE 0: none. */
	uint64_t cold_addr, cold_size, cold_file_offset;
	struct exit_plan cold_exits;
	/* RETURN_INSN: the first of its indirect jumps' sites (exits.ind) in
	 * the set's ind_sites map (probe_set__number_ind_sites); UINT32_MAX:
	 * not probed (past the map's reach). */
	uint32_t ind_base;
	/* Entered without a return to wait for: the object's entry point
	 * (_start: [sp] is argc, not a return address) or a body with no ret
	 * and no tail jump (noreturn).  It gets no exit probe in any mode: a
	 * uretprobe would overwrite what sits where a return address would. */
	bool never_returns;
	/* With never_returns: its caller is resumed from elsewhere (Go's
	 * runtime.morestack), so no frame is kept for its callees. */
	bool no_frame;
	/* With never_returns: it does return, where no probe can see (its
	 * exits cannot be found, a uretprobe is not safe): recorded at entry
	 * as `entry`. */
	bool returns_unseen;
	/* A USDT site (--usdt): entry-only, attached with the USDT program, its
	 * arguments read as the note's specs say; SEMA_OFFSET its semaphore. */
	bool usdt;
	/* --focus: a focus function (records only while a thread is inside
	 * one); QUIET: probed for that alone (no --func named it). */
	bool focus, quiet;
	/* A Go function (ABIInternal: arguments and results in rax, rbx, rcx,
	 * rdi, rsi, r8..; frames kept per goroutine): CMON_COOKIE_GO. */
	bool go;
	/* --lines FUNC: LINES_OWNER for FUNC itself (its return closes its last
	 * line), IN_LINES for each of its line sites. */
	bool lines_owner, in_lines;
	/* --py: a place of CPython's probed with the Python programs
	 * (python.bpf.h) instead of the C ones (enum probe_python). */
	uint8_t python;
	struct cmon_usdt_spec usdt_spec;
	uint64_t sema_offset;
	char *usdt_args; /* the note's spec text, for cmon list */
	/* Set by typer.c when typed arguments are read where the prologue
	 * stored them (-O0 floats): the entry probe goes BODY_SKIP bytes past
	 * the start (a uretprobe stays at entry.skip), where the return-address
	 * slot is register SLOT_REG (DWARF: 7 rsp, 6 rbp) + SLOT_OFF.  0: not. */
	uint32_t body_skip;
	uint8_t slot_reg;
	uint16_t slot_off;
};

/* Does F's latency start at its step probe (insn.h: struct step_plan)?
 * Not for what is timed otherwise: Go and Python functions, USDT and line
 * sites, a --lines function (its return closes its last line), entries
 * moved into the body (typed -O0 floats), calls that never return. */
bool probe_func__step_timed(const struct probe_func *f);

/* Where links go: one process (pid 0: every process mapping the objects). */
struct probe_target {
	pid_t pid;
	size_t *objects; /* indexes into probe_set.objects */
	size_t n_objects, cap_objects;
	/* The process's executable among OBJECTS (an index into
	 * probe_set.objects), or -1 (not known, or --binary).  Following
	 * children, its links go without a pid filter (links.h). */
	long exe_object;
};

struct probe_set {
	struct probe_object *objects;
	size_t n_objects;
	struct probe_func *funcs;
	size_t n_funcs;
	struct probe_target *targets;
	size_t n_targets;
	bool binary_mode; /* --binary: pid 0 targets */
	/* A target switches stacks (ucontext, boost.context): frames pair
	 * per stack, whose regions are learnt where they are made. */
	bool stack_switch;
	bool go; /* some function is Go's: frames pair per goroutine */
	uint64_t exe_dev, exe_ino; /* --binary: the program whose processes count */
	pid_t launch_pid; /* -- CMD: the child, traced from its exec (lifecycle.bpf.h) */
	size_t n_ind_sites; /* the indirect jumps probed as possible exits */
};

/* Number the indirect jumps of SET's functions on return instructions:
 * each function's ind_base, and n_ind_sites (a set's map holds at most
 * CMON_COOKIE_IND_MASK + 1: the jumps of functions past that are not
 * probed).  Done by probe_set__resolve and probe_set__union. */
void probe_set__number_ind_sites(struct probe_set *set);

struct resolve_opts {
	const pid_t *pids;      /* -p */
	size_t n_pids;
	const char *binary;     /* --binary */
	/* --cgroup / --container: the files of these processes (the cgroup's
	 * now), each attached once for every process that maps it; which
	 * processes count is the BPF filter's (bpf_set_opts.filter_cgroup).
	 * CGROUP_DESC names the cgroup in messages. */
	const pid_t *cgroup_pids;
	size_t n_cgroup_pids;
	const char *cgroup_desc;
	const char *launch_exe; /* -- CMD, resolved path */
	pid_t launch_pid;       /* the launched child, paused before exec */
	bool launch_execed;     /* ... or held past it (launch__run_to): no launcher to leave out */
	const struct funcpattern *patterns;
	size_t n_patterns;
	const char *const *usdts; /* --usdt [FILE:]PROVIDER:NAME, globs */
	size_t n_usdts;
	const struct funcpattern *focus; /* --focus: calls recorded only inside these */
	size_t n_focus;
	const char *const *lines; /* --line FILE:LINE */
	size_t n_lines;
	const struct funcpattern *lines_of; /* --lines FUNC: every line of these */
	size_t n_lines_of;
	enum return_choice ret_choice;
	bool list_only;         /* cmon list: keep unprobeable functions, never fail on them */
};

/*
 * Resolve. Returns 0 and a set (free with probe_set__free), or a negative
 * errno after printing one error line: -ESRCH (no such process), -ENOENT
 * (no function matched, or a file is missing), -ENOEXEC (not ELF), -ENODATA
 * (no symbols), -EEXIST (an exact name in several objects), -EINVAL (a
 * function cmon cannot probe safely).
 */
int probe_set__resolve(const struct resolve_opts *o, struct probe_set **out);
void probe_set__free(struct probe_set *set);

/* A function added after resolution (the Python probes' places), in object
 * OBJ at ADDR (FILE_OFFSET in its file), named NAME: NULL when out of
 * memory.  Its probes are the caller's to set. */
struct probe_func *probe_set__add_func(struct probe_set *set, size_t obj, const char *name,
				       uint64_t addr, uint64_t file_offset);

/* Count of probe addresses (entry + exit) the set attaches per target. */
size_t probe_set__probe_count(const struct probe_set *set);

#endif
