/*
 * dynamic.h: the dynamic-loading facts of one x86-64 ELF file (PT_INTERP
 * and the PT_DYNAMIC entries the loader reads), read through the program
 * headers: section headers may be stripped, the loader never looks at them.
 */
#ifndef CMON_ELF_DYNAMIC_H
#define CMON_ELF_DYNAMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct elf_dynamic {
	dev_t dev;
	ino_t ino;
	char *interp;  /* PT_INTERP */
	char *soname;  /* DT_SONAME */
	char *rpath;   /* DT_RPATH, NULL when absent */
	char *runpath; /* DT_RUNPATH, NULL when absent */
	char **needed; /* DT_NEEDED, in order */
	size_t n_needed;
	bool nodeflib; /* DF_1_NODEFLIB: no cache, no default directories */
};

/* Load INFO from PATH.  -ENOEXEC for anything the x86-64 loader would pass
 * over (not ELF, not 64-bit, another machine), -errno if unopenable. */
int elf_dynamic__load(const char *path, struct elf_dynamic *info);
void elf_dynamic__clear(struct elf_dynamic *info);

#endif
