// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dynamic.c: see dynamic.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gelf.h>
#include <libelf.h>
#include "core/strv.h"
#include "elf/dynamic.h"

void elf_dynamic__clear(struct elf_dynamic *info)
{
	free(info->interp);
	free(info->soname);
	free(info->rpath);
	free(info->runpath);
	strv__free(info->needed, info->n_needed);
	memset(info, 0, sizeof(*info));
}

/* File offset of virtual address VADDR, from the PT_LOAD segments. */
static int vaddr_to_offset(Elf *elf, size_t phnum, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			*off = ph.p_offset + (vaddr - ph.p_vaddr);
			return 0;
		}
	}
	return -ENOEXEC;
}

static const char *strtab_at(Elf_Data *strtab, uint64_t off)
{
	const char *base = strtab->d_buf;

	if (off >= strtab->d_size || !memchr(base + off, '\0', strtab->d_size - off))
		return NULL;
	return base + off;
}

/* Read the dynamic section through the program headers: section headers
 * may be stripped, the loader never looks at them. */
static int read_dynamic(Elf *elf, size_t phnum, const GElf_Phdr *dyn_ph,
			struct elf_dynamic *info)
{
	uint64_t strtab_addr = 0, strsz = 0, strtab_off;
	Elf_Data *dyn, *strtab;
	size_t ndyn;
	int err;

	dyn = elf_getdata_rawchunk(elf, (int64_t)dyn_ph->p_offset, dyn_ph->p_filesz, ELF_T_DYN);
	if (!dyn)
		return -ENOEXEC;
	ndyn = dyn->d_size / sizeof(Elf64_Dyn);
	for (size_t i = 0; i < ndyn; i++) {
		GElf_Dyn d;

		if (!gelf_getdyn(dyn, (int)i, &d) || d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_STRTAB)
			strtab_addr = d.d_un.d_ptr;
		else if (d.d_tag == DT_STRSZ)
			strsz = d.d_un.d_val;
		else if (d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_NODEFLIB))
			info->nodeflib = true;
	}
	if (!strtab_addr || !strsz)
		return 0; /* nothing named */
	if (vaddr_to_offset(elf, phnum, strtab_addr, &strtab_off))
		return -ENOEXEC;
	strtab = elf_getdata_rawchunk(elf, (int64_t)strtab_off, strsz, ELF_T_BYTE);
	if (!strtab)
		return -ENOEXEC;

	for (size_t i = 0; i < ndyn; i++) {
		const char *s;
		char **slot = NULL;
		GElf_Dyn d;

		if (!gelf_getdyn(dyn, (int)i, &d) || d.d_tag == DT_NULL)
			break;
		if (d.d_tag != DT_NEEDED && d.d_tag != DT_SONAME && d.d_tag != DT_RPATH &&
		    d.d_tag != DT_RUNPATH)
			continue;
		s = strtab_at(strtab, d.d_un.d_val);
		if (!s)
			return -ENOEXEC;
		if (d.d_tag == DT_NEEDED) {
			err = strv__push(&info->needed, &info->n_needed, s);
			if (err)
				return err;
			continue;
		}
		slot = d.d_tag == DT_SONAME ? &info->soname :
		       d.d_tag == DT_RPATH ? &info->rpath : &info->runpath;
		if (*slot)
			continue; /* the first one counts */
		*slot = strdup(s);
		if (!*slot)
			return -ENOMEM;
	}
	return 0;
}

int elf_dynamic__load(const char *path, struct elf_dynamic *info)
{
	GElf_Phdr dyn_ph = { 0 };
	bool has_dyn = false;
	Elf *elf = NULL;
	GElf_Ehdr ehdr;
	struct stat st;
	size_t phnum;
	int fd, err = 0;

	memset(info, 0, sizeof(*info));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	info->dev = st.st_dev;
	info->ino = st.st_ino;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    !gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    elf_getphdrnum(elf, &phnum)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			err = -ENOEXEC;
			goto cleanup;
		}
		if (ph.p_type == PT_DYNAMIC && !has_dyn) {
			dyn_ph = ph;
			has_dyn = true;
		} else if (ph.p_type == PT_INTERP && !info->interp) {
			Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
							   ph.p_filesz, ELF_T_BYTE);

			if (!d || !d->d_size) {
				err = -ENOEXEC;
				goto cleanup;
			}
			info->interp = strndup(d->d_buf, d->d_size);
			if (!info->interp) {
				err = -ENOMEM;
				goto cleanup;
			}
		}
	}
	if (has_dyn)
		err = read_dynamic(elf, phnum, &dyn_ph, info);

cleanup:
	if (err)
		elf_dynamic__clear(info);
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}
