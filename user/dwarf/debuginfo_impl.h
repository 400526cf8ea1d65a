/*
 * debuginfo_impl.h: what the debuginfo modules share inside dwarf/ (not
 * for the rest of cmon: debuginfo.h is the interface).
 *
 *   debuginfo.c   finding a file's DWARF (build-id, debuglink), lookups
 *   dtypes.c      ctype graphs from DIEs, with C/C++ display names
 *   abi.c         where values live by the ABI: SysV x86-64, Go ABIInternal
 *   locations.c   DWARF location expressions and lists at a pc, the CFA
 *   signature.c   function signatures and the locals in scope at a pc
 */
#ifndef CMON_DEBUGINFO_IMPL_H
#define CMON_DEBUGINFO_IMPL_H

#include <elfutils/libdw.h>
#include "dwarf/debuginfo.h"

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define MAX_TYPE_DEPTH 48

/* DIE (by its address in the mapped section: unique across sections and
 * type units) -> type node. */
struct type_slot {
	const void *key;
	struct ctype *type;
};

struct ptr_vec {
	struct ctype **v;
	size_t n, cap;
};

struct debuginfo {
	char *path;
	int fd, dfd;
	Elf *elf;   /* PATH */
	Elf *delf;  /* the separate debug file, or NULL */
	Dwarf *dwarf;
	Dwarf_CFI *cfi_eh;     /* .eh_frame of PATH, owned */
	bool cfi_eh_tried;
	enum debuginfo_kind kind;
	bool fetching; /* debuginfod: in the background */
	char *dwarf_path;
	char *desc;
	struct ctype_arena *arena;
	struct type_slot *slots;
	size_t n_slots, cap_slots; /* cap: power of 2 */
	struct ctype *void_type;
	struct ptr_vec fresh;   /* concrete nodes built since the last finalize */
	struct ptr_vec aliases; /* alias nodes waiting for their fields */
	/* Every CU's address ranges, sorted: built on the first lookup that
	 * .debug_aranges cannot answer (debuginfo__cu_at). */
	struct cu_range *cu_ranges;
	size_t n_cu_ranges;
	bool cu_ranges_built;
	bool dwo_missing_said;
	/* Every complete struct, class and union by its qualified name,
	 * sorted: built when a parameter's type is only declared in its CU
	 * (dtype__of). */
	struct type_def *type_defs;
	size_t n_type_defs;
	bool type_defs_built;
};

/* debuginfo.c: FN on every compilation unit of DI until FN returns
 * nonzero: that value, else 0.  SPLIT: a skeleton unit (-gsplit-dwarf)
 * as its split unit from the .dwo (skipped when that is missing), for
 * its DIEs; else as it is in the file, for its ranges, lines and DIE
 * offsets. */
int debuginfo__each_cu(struct debuginfo *di, bool split, int (*fn)(Dwarf_Die *cu, void *arg),
		       void *arg);

/* debuginfo.c: CU as the unit its DIEs are in: a skeleton unit
 * (-gsplit-dwarf) is replaced by its split unit from the .dwo.  False when
 * that is missing (warned once when DI is given). */
bool debuginfo__unit_die(struct debuginfo *di, Dwarf_Die *cu);

/* debuginfo.c: the compilation unit whose code holds ADDR.  From
 * .debug_aranges when it has it, else from the CUs' own ranges: Go and
 * clang write no .debug_aranges.  False: none. */
bool debuginfo__cu_at(struct debuginfo *di, uint64_t addr, Dwarf_Die *cu);


/* dtypes.c */
void dtype__free_defs(struct debuginfo *di);
bool dtype__die_type(Dwarf_Die *die, Dwarf_Die *out);
/* The type node of DIE (NULL: void), built and cached; finish a batch
 * with dtype__finalize before reading sizes and alignments. */
const struct ctype *dtype__of(struct debuginfo *di, Dwarf_Die *die, int depth);
void dtype__finalize(struct debuginfo *di);
uint32_t dtype__align(const struct ctype *t, int depth);

/* abi.c */
void dloc__piece_add(struct dloc *l, enum dloc_kind kind, uint8_t reg, uint32_t size, int64_t off);
/* SysV: the return value's location at the return (*HIDDEN: the caller
 * passes its buffer in rdi), and each parameter's at the entry. */
void abi__sysv_return(const struct ctype *rt, struct dloc *l, bool *hidden);
void abi__sysv_params(const struct ctype *const *types, size_t n, bool hidden, struct dloc *locs);
/* Go ABIInternal: N values' locations, stack ones from sp + BASE;
 * returns the stack bytes used. */
uint32_t abi__go(const struct ctype *const *types, size_t n, int64_t base, struct dloc *locs);

/* locations.c */
struct loc_ctx {
	struct debuginfo *di;
	Dwarf_Die *func;
	uint64_t pc;
	bool frame_based;
	bool at_entry; /* pc is the function's entry: the ABI locations are exact */
};

/* PARAM is not passed at PC: a clone's (foo.isra.0) parameter that gcc
 * took out, its location DW_OP_GNU_parameter_ref (the caller's value). */
bool loc__not_passed(Dwarf_Die *param, uint64_t pc);

/* The CFA at PC as register + offset. */
int loc__cfa_at(struct debuginfo *di, uint64_t pc, uint8_t *reg, int64_t *off);
/* PARAM's location at C->pc into OUT, ABI its ABI location (the rule in
 * debuginfo.h); LOW the function's address. */
void loc__param(struct loc_ctx *c, Dwarf_Die *param, const struct ctype *t, uint64_t low,
		const struct dloc *abi, struct dloc *out);

/* signature.c */
int sig__find_subprogram(struct debuginfo *di, uint64_t addr, Dwarf_Die *out);

#endif
