// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>
#include "elf/objsym.h"

static Elf *open_elf(const char *path, int *fd)
{
	Elf *e;

	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ, NULL);
	if (!e) {
		close(*fd);
		*fd = -1;
		errno = ENOEXEC;
	}
	return e;
}

int objsym__find(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	int fd, err = -ENOENT;
	Elf *e = open_elf(path, &fd);

	if (!e)
		return -errno;
	for (int pass = 0; pass < 2 && err; pass++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while (err && (scn = elf_nextscn(e, scn))) {
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				const char *n;

				if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
				    GELF_ST_TYPE(s.st_info) == STT_FUNC ||
				    GELF_ST_TYPE(s.st_info) == STT_SECTION ||
				    GELF_ST_TYPE(s.st_info) == STT_FILE)
					continue;
				n = elf_strptr(e, sh.sh_link, s.st_name);
				if (!n || strcmp(n, name))
					continue;
				*addr = s.st_value;
				*size = s.st_size;
				err = 0;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return err;
}

int objsym__layout(const char *path, bool *dyn, uint64_t *first_vaddr)
{
	int fd, err = -ENOEXEC;
	Elf *e = open_elf(path, &fd);
	GElf_Ehdr eh;
	size_t n = 0;

	if (!e)
		return -errno;
	if (gelf_getehdr(e, &eh) && !elf_getphdrnum(e, &n)) {
		*dyn = eh.e_type == ET_DYN;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
				*first_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
				err = 0;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return err;
}
