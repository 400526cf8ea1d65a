/*
 * objsym.h: data symbols of an ELF file (--watch SYMBOL[+OFF]) and where
 * its image starts (a PIE's load bias from its lowest mapping).
 */
#ifndef CMON_ELF_OBJSYM_H
#define CMON_ELF_OBJSYM_H

#include <stdbool.h>
#include <stdint.h>

/* The object (or any non-function) symbol NAME of PATH, .symtab then
 * .dynsym: 0 with *ADDR, *SIZE; -ENOENT; -errno when PATH cannot be read. */
int objsym__find(const char *path, const char *name, uint64_t *addr, uint64_t *size);

/* Is PATH position-independent (ET_DYN), and the page-aligned virtual
 * address of its first PT_LOAD (what its lowest mapping holds): 0 or
 * -errno. */
int objsym__layout(const char *path, bool *dyn, uint64_t *first_vaddr);

#endif
