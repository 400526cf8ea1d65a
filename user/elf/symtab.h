/*
 * symtab.h: the function symbols of one ELF file, and what else cmon needs
 * to know about the file (its code bytes, build-id, language runtime).
 *
 * Addresses are the file's own virtual addresses (st_value); file_offset is
 * where that address lives in the file, which is what uprobes take.  PIE and
 * non-PIE files are handled alike: nothing here depends on a load address.
 */
#ifndef CMON_SYMTAB_H
#define CMON_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symtab;

struct symtab_func {
	const char *name;      /* symbol name as stored, without "@VERSION" */
	const char *demangled; /* C++/Rust demangled name with parameters, or NULL */
	const char *version;   /* symbol version ("GLIBC_2.2.5"), or NULL */
	uint64_t addr;         /* st_value */
	uint64_t size;         /* st_size, else up to the next symbol (size_inferred); 0 when unknown */
	uint64_t file_offset;  /* offset of addr in the file */
	bool ifunc;            /* STT_GNU_IFUNC: addr is the resolver, not the function */
	bool dynamic;          /* found in .dynsym (exported) */
	bool size_inferred;    /* st_size was 0 (crt's _init, frame_dummy; asm) */
};

/* Language runtimes whose unwinder walks through every frame: a kernel
 * uretprobe (which rewrites the return address) breaks them. */
enum symtab_runtime_flags {
	SYMTAB_RT_CXX_EH = 1u << 0,  /* C++ exceptions: __cxa_throw / __gxx_personality_v0 */
	SYMTAB_RT_RUST = 1u << 1,    /* Rust panics: rust_eh_personality, rust_panic */
	SYMTAB_RT_GO = 1u << 2,      /* Go: .gopclntab / .go.buildinfo, moving stacks */
	/* Not a runtime: the object was built with exception support
	 * (.gcc_except_table: C++, or C with -fexceptions as glibc is, for
	 * qsort's callbacks), so an exception can pass through its frames. */
	SYMTAB_EH_TABLES = 1u << 3,
	/* The object switches stacks: it imports swapcontext/setcontext
	 * (ucontext coroutines) or has boost.context's jump_fcontext. */
	SYMTAB_RT_STACKS = 1u << 4,
};
#define SYMTAB_RT_UNWINDERS (SYMTAB_RT_CXX_EH | SYMTAB_RT_RUST | SYMTAB_RT_GO)

/*
 * Open PATH and read its function symbols from .symtab and .dynsym (merged,
 * one entry per (name, addr)), defined symbols only, sorted by addr.
 * Returns NULL and sets errno: ENOENT/EACCES/... from open, ENOEXEC if the
 * file is not a 64-bit ELF file, ENODATA if it has no function symbols at
 * all (stripped, with neither .symtab nor .dynsym functions).
 */
struct symtab *symtab__open(const char *path);
/* With DEBUG_SYMBOLS, a program (not a library) without .symtab takes
 * its separate debug file's (elf/debugfile.h: by build ID,
 * .gnu_debuglink, debuginfod), else (and without) its .gnu_debugdata.  A
 * library's .dynsym has what it exports; its internal functions would
 * make every glob over it many more probes, and a trace need not look up
 * (or download) the debug file of every library mapped. */
struct symtab_opts {
	bool debug_symbols;
};
struct symtab *symtab__open_opts(const char *path, const struct symtab_opts *opts);
/* Where the symbols came from when not PATH itself ("DEBUGFILE (how)"), or
 * NULL. */
const char *symtab__symbols_from(const struct symtab *st);
void symtab__free(struct symtab *st); /* NULL is fine */

const char *symtab__path(const struct symtab *st);
const struct symtab_func *symtab__funcs(const struct symtab *st, size_t *count);

/* Among the symbols at F's address (aliases: glibc's free, cfree and
 * __libc_free), the one a person would search for; F when it is alone. */
const struct symtab_func *symtab__alias(const struct symtab *st, const struct symtab_func *f);

/* Function whose [addr, addr + size) holds ADDR, or NULL. */
const struct symtab_func *symtab__find_addr(const struct symtab *st, uint64_t addr);

/* Copy up to LEN bytes of the file's contents at virtual address ADDR (in
 * an executable PT_LOAD segment) into BUF.  Returns the count copied
 * (short at the segment end) or a negative errno. */
/* The file offset of address ADDR (in a loaded segment): true and *OFF. */
bool symtab__offset_at_addr(const struct symtab *st, uint64_t addr, uint64_t *off);

/* The address at file offset OFF (in a loaded segment): true and *ADDR. */
bool symtab__addr_at_offset(const struct symtab *st, uint64_t off, uint64_t *addr);

long symtab__read_code(const struct symtab *st, uint64_t addr, void *buf, size_t len);

/* Lower-case hex GNU build-id, or NULL when the file has none.  Owned by st. */
const char *symtab__build_id(const struct symtab *st);

/* enum symtab_runtime_flags seen in the file (defined or imported symbols,
 * sections). */
unsigned symtab__runtime_flags(const struct symtab *st);

/* ET_DYN (PIE or shared library) rather than ET_EXEC. */
bool symtab__is_dyn(const struct symtab *st);

/* The ELF entry point (e_entry; 0 for most libraries): the loader jumps
 * there, so no return address is on the stack. */
uint64_t symtab__entry(const struct symtab *st);

#endif
