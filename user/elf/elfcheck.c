// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* elfcheck.c: see elfcheck.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elf/elfcheck.h"

static const char *machine_name(unsigned m)
{
	switch (m) {
	case EM_386: return "i386";
	case EM_ARM: return "arm";
	case EM_AARCH64: return "aarch64";
	case EM_RISCV: return "riscv";
	case EM_PPC: return "ppc";
	case EM_PPC64: return "ppc64";
	case EM_S390: return "s390";
	case EM_MIPS: return "mips";
	case EM_SPARCV9: return "sparc64";
	case EM_LOONGARCH: return "loongarch";
	default: return NULL;
	}
}

/* Every section that occupies file bytes lies inside the file. */
static int check_sections(Elf *elf, uint64_t file_size, char *why, size_t len)
{
	size_t n;
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(elf, &n)) {
		snprintf(why, len, "corrupt ELF file (unreadable section table)");
		return -EBADMSG;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh)) {
			snprintf(why, len, "corrupt ELF file (unreadable section header)");
			return -EBADMSG;
		}
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset)) {
			snprintf(why, len, "corrupt ELF file (truncated: a section ends at byte "
				 "%llu of %llu)",
				 (unsigned long long)(sh.sh_offset + sh.sh_size),
				 (unsigned long long)file_size);
			return -EBADMSG;
		}
	}
	return 0;
}

int elfcheck__file(const char *path, char *why, size_t len)
{
	unsigned char ident[EI_NIDENT];
	Elf *elf = NULL;
	struct stat st;
	GElf_Ehdr eh;
	int fd, err = 0;
	ssize_t got;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, len, "%s", strerror(-err));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		snprintf(why, len, "%s", strerror(-err));
		goto cleanup;
	}
	got = pread(fd, ident, sizeof(ident), 0);
	if (got < SELFMAG || memcmp(ident, ELFMAG, SELFMAG)) {
		snprintf(why, len, "not an ELF file");
		err = -ENOEXEC;
		goto cleanup;
	}
	if (got < EI_NIDENT || (ident[EI_CLASS] != ELFCLASS32 && ident[EI_CLASS] != ELFCLASS64) ||
	    (ident[EI_DATA] != ELFDATA2LSB && ident[EI_DATA] != ELFDATA2MSB)) {
		snprintf(why, len, "corrupt ELF file (bad header)");
		err = -EBADMSG;
		goto cleanup;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh)) {
		snprintf(why, len, "corrupt ELF file (truncated header)");
		err = -EBADMSG;
		goto cleanup;
	}
	if (ident[EI_DATA] == ELFDATA2MSB) {
		/* (libelf reads its fields big-endian: an x86-64 header marked
		 * so reads as machine 15872, named here for what it says) */
		const char *m = machine_name(eh.e_machine);

		snprintf(why, len, "big-endian %s%s%sELF file: cmon traces x86-64 programs",
			 ident[EI_CLASS] == ELFCLASS32 ? "32-bit " : "", m ? m : "", m ? " " : "");
		err = -ENOTSUP;
		goto cleanup;
	}
	if (ident[EI_CLASS] == ELFCLASS32 || eh.e_machine != EM_X86_64) {
		const char *m = machine_name(eh.e_machine);
		const char *bits = ident[EI_CLASS] == ELFCLASS32 ? "32-bit " : "";

		if (m)
			snprintf(why, len, "%s%s ELF file: cmon traces x86-64 programs", bits, m);
		else if (*bits && eh.e_machine == EM_X86_64)
			snprintf(why, len, "32-bit ELF file (x32): cmon traces x86-64 programs");
		else
			snprintf(why, len, "%sELF file for machine %u: cmon traces x86-64 programs",
				 bits, eh.e_machine);
		err = -ENOTSUP;
		goto cleanup;
	}
	if (eh.e_shoff > (uint64_t)st.st_size ||
	    (uint64_t)eh.e_shnum * eh.e_shentsize > (uint64_t)st.st_size - eh.e_shoff ||
	    eh.e_phoff > (uint64_t)st.st_size ||
	    (uint64_t)eh.e_phnum * eh.e_phentsize > (uint64_t)st.st_size - eh.e_phoff) {
		snprintf(why, len, "corrupt ELF file (truncated: its headers end past its %llu "
			 "bytes)", (unsigned long long)st.st_size);
		err = -EBADMSG;
		goto cleanup;
	}
	err = check_sections(elf, (uint64_t)st.st_size, why, len);
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}
