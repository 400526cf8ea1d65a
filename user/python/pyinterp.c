// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pyinterp.c: see pyinterp.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/log.h"
#include "elf/objsym.h"
#include "proc/libpath.h"
#include "proc/procmaps.h"
#include "proc/procmem.h"
#include "python/pyinterp.h"

const char *const py_newfunc_names[PY_NEWFUNC_N] = {
	"PyFunction_NewWithQualName", "_PyFunction_FromConstructor",
};

static const char *const type_syms[CMON_PYT_N] = {
	"PyLong_Type", "PyFloat_Type", "PyUnicode_Type", "PyBytes_Type",
	"PyBool_Type", "PyTuple_Type", "PyList_Type", "PyDict_Type", "PyCell_Type",
};

/* The ELF file being read: its segments, to find a symbol's bytes. */
struct elf_file {
	int fd;
	Elf *elf;
	GElf_Phdr load[16];
	size_t n_load;
};

/* The file offset of address ADDR (N bytes), 0 when no segment holds it. */
static uint64_t file_off(const struct elf_file *f, uint64_t addr, size_t n)
{
	for (size_t i = 0; i < f->n_load; i++) {
		const GElf_Phdr *ph = &f->load[i];

		if (addr >= ph->p_vaddr && addr + n <= ph->p_vaddr + ph->p_filesz)
			return addr - ph->p_vaddr + ph->p_offset;
	}
	return 0;
}

static int read_at(const struct elf_file *f, uint64_t addr, void *buf, size_t n)
{
	uint64_t off = file_off(f, addr, n);

	return off && pread(f->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -EIO;
}

/* The symbols cmon needs, from .symtab and .dynsym (a library's local
 * _PyFunction_Vectorcall is in .symtab only).  DT_NEEDED libpython into
 * NEEDED; *IS_PY set when the file defines Py_Initialize (every CPython
 * does, 2.x too). */
static void read_symbols(struct elf_file *f, struct py_interp *pi, uint64_t *version_addr,
			 char *needed, size_t needed_len, bool *is_py)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh))
			continue;
		data = elf_getdata(scn, NULL);
		if (sh.sh_type == SHT_DYNAMIC) {
			for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Dyn dyn;
				const char *lib;

				if (gelf_getdyn(data, (int)i, &dyn) && dyn.d_tag == DT_NEEDED &&
				    (lib = elf_strptr(f->elf, sh.sh_link, dyn.d_un.d_val)) &&
				    !strncmp(lib, "libpython", 9))
					snprintf(needed, needed_len, "%s", lib);
			}
			continue;
		}
		if (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB)
			continue;
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || !sym.st_value ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(f->elf, sh.sh_link, sym.st_name);
			if (!name || (name[0] != '_' && name[0] != 'P'))
				continue;
			if (!strcmp(name, PY_EVAL_FUNC))
				pi->eval_func = sym.st_value;
			else if (!strcmp(name, PY_VC_FUNC))
				pi->vc_func = sym.st_value;
			else if (!strcmp(name, "_PyRuntime"))
				pi->runtime = sym.st_value;
			else if (!strcmp(name, "Py_Version"))
				*version_addr = sym.st_value;
			else if (!strcmp(name, "_Py_NoneStruct"))
				pi->none = sym.st_value;
			else if (!strcmp(name, "_Py_TrueStruct"))
				pi->true_ = sym.st_value;
			else if (!strcmp(name, "_Py_FalseStruct"))
				pi->false_ = sym.st_value;
			else if (!strcmp(name, "PyCode_Type"))
				pi->code_type = sym.st_value;
			else if (!strcmp(name, "PyFunction_Type"))
				pi->func_type = sym.st_value;
			else if (!strcmp(name, "Py_InitializeFromConfig"))
				pi->start = sym.st_value;
			else if (!strcmp(name, "Py_Initialize"))
				*is_py = true;
			for (int t = 0; t < CMON_PYT_N; t++)
				if (!strcmp(name, type_syms[t]))
					pi->types[t] = sym.st_value;
			for (int k = 0; k < PY_NEWFUNC_N; k++)
				if (!strcmp(name, py_newfunc_names[k]))
					pi->newfunc[k] = sym.st_value;
		}
	}
}

/* The vectorcall entry: the nops before _PyFunction_Vectorcall, entered
 * where only nops run into it, in its 256-byte block (a pointer to it
 * differs from the function's in its last byte only). */
static void find_vc_entry(const struct elf_file *f, struct py_interp *pi)
{
	uint8_t code[16];
	uint64_t lo, n;
	uint32_t off;
	enum probe_cost cost;

	pi->vc_entry = 0;
	if (pi->layout.minor < 12) {
		snprintf(pi->vc_why, sizeof(pi->vc_why), "3.11 inlines a call whatever the "
			 "function's vectorcall");
		return;
	}
	if (!pi->vc_func) {
		snprintf(pi->vc_why, sizeof(pi->vc_why), "no %s symbol", PY_VC_FUNC);
		return;
	}
	lo = pi->vc_func & ~(uint64_t)0xff;
	n = pi->vc_func - lo < sizeof(code) ? pi->vc_func - lo : sizeof(code);
	if (!n || read_at(f, pi->vc_func - n, code, n)) {
		snprintf(pi->vc_why, sizeof(pi->vc_why), "%s starts a 256-byte block", PY_VC_FUNC);
		return;
	}
	if (insn__nop_entry(code, n, pi->vc_func - n, &off, &cost)) {
		snprintf(pi->vc_why, sizeof(pi->vc_why), "no nop a probe can take before %s",
			 PY_VC_FUNC);
		return;
	}
	pi->vc_entry = pi->vc_func - n + off;
	pi->vc_entry_cost = cost;
	pi->vc_entry_off = file_off(f, pi->vc_entry, 1);
}

/* The sizes the type objects give (tp_basicsize) against the layout's:
 * READ(CTX, ADDR, 8-byte buffer) reads the file or the process. */
typedef int (*read_fn)(void *ctx, uint64_t addr, int64_t *out);

static int check_types(const struct py_interp *pi, uint64_t bias, read_fn read, void *ctx,
		       char *why, size_t why_len)
{
	const struct py_layout *l = &pi->layout;
	const struct {
		uint64_t type;
		uint32_t size;
		const char *name;
	} types[] = {
		{ pi->code_type, l->size_code, "PyCodeObject" },
		{ pi->func_type, l->size_func, "PyFunctionObject" },
		{ pi->types[CMON_PYT_INT], l->size_long, "PyLongObject" },
		{ pi->types[CMON_PYT_FLOAT], l->size_float, "PyFloatObject" },
		{ pi->types[CMON_PYT_TUPLE], l->size_tuple, "PyTupleObject" },
		{ pi->types[CMON_PYT_CELL], l->size_cell, "PyCellObject" },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int64_t size = 0;
		int err = read(ctx, types[i].type + bias + l->type_basicsize, &size);

		if (err) {
			snprintf(why, why_len, "its %s type is not readable (%s)", types[i].name,
				 strerror(-err));
			return err;
		}
		if (size != types[i].size) {
			snprintf(why, why_len, "its %s is %lld bytes, not %u as in CPython %u.%u's "
				 "headers", types[i].name, (long long)size, types[i].size, l->major,
				 l->minor);
			return -EINVAL;
		}
	}
	return 0;
}

static int read_file8(void *ctx, uint64_t addr, int64_t *out)
{
	return read_at(ctx, addr, out, 8);
}

static int read_mem8(void *ctx, uint64_t addr, int64_t *out)
{
	return procmem__read(*(pid_t *)ctx, addr, out, 8);
}

static int refuse(char *why, size_t len, int err, const char *fmt, const char *a)
{
	snprintf(why, len, fmt, a);
	return err;
}

/* A CPython without Py_Version (older than 3.11) refused, its version
 * named from its file's name as pyenv, Debian and python.org name them
 * (libpython3.10.so.1.0, libpython3.6m.so, python2.7) when it says. */
static int refuse_old(const char *path, char *why, size_t len)
{
	const char *base = strrchr(path, '/');
	unsigned major, minor;

	base = base ? base + 1 : path;
	if (sscanf(base, "libpython%u.%u", &major, &minor) == 2 ||
	    sscanf(base, "python%u.%u", &major, &minor) == 2)
		snprintf(why, len, "CPython %u.%u (cmon knows %s)", major, minor,
			 pylayout__known());
	else
		snprintf(why, len, "CPython older than 3.11 (no Py_Version; cmon knows %s)",
			 pylayout__known());
	return -ENOEXEC;
}

int pyinterp__open(const char *path, const char *open_path, struct py_interp *pi, char *why,
		   size_t why_len)
{
	struct elf_file f = { .fd = -1 };
	char needed[128] = "";
	uint64_t version_addr = 0;
	const struct py_layout *l;
	GElf_Ehdr eh;
	size_t nph = 0;
	bool is_py = false;
	int err;

	memset(pi, 0, sizeof(*pi));
	f.fd = open(open_path ? open_path : path, O_RDONLY | O_CLOEXEC);
	if (f.fd < 0)
		return refuse(why, why_len, -errno, "%s", strerror(errno));
	elf_version(EV_CURRENT);
	f.elf = elf_begin(f.fd, ELF_C_READ, NULL);
	if (!f.elf || !gelf_getehdr(f.elf, &eh) || elf_getphdrnum(f.elf, &nph)) {
		err = refuse(why, why_len, -ENOEXEC, "not an ELF file%s", "");
		goto out;
	}
	for (size_t i = 0; i < nph && f.n_load < 16; i++)
		if (gelf_getphdr(f.elf, (int)i, &f.load[f.n_load]) &&
		    f.load[f.n_load].p_type == PT_LOAD)
			f.n_load++;
	pi->pie = eh.e_type == ET_DYN;
	read_symbols(&f, pi, &version_addr, needed, sizeof(needed), &is_py);
	if (!pi->runtime && needed[0]) {
		/* an executable that runs CPython from its libpython: that one */
		char *lib = NULL;

		elf_end(f.elf);
		close(f.fd);
		err = libpath__find_library(path, needed, &lib);
		if (err)
			return refuse(why, why_len, -ENOENT, "its %s is not found", needed);
		err = pyinterp__open(lib, NULL, pi, why, why_len);
		free(lib);
		return err;
	}
	if (is_py && !version_addr) {
		err = refuse_old(path, why, why_len);
		goto out;
	}
	if (!pi->runtime || !pi->eval_func) {
		err = refuse(why, why_len, -ENOEXEC, "not a CPython interpreter (no %s symbol)",
			     !pi->runtime ? "_PyRuntime" : PY_EVAL_FUNC);
		goto out;
	}
	if (!version_addr || read_at(&f, version_addr, &pi->version, 4)) {
		err = refuse_old(path, why, why_len);
		goto out;
	}
	l = pylayout__for(pi->version >> 24, (pi->version >> 16) & 0xff);
	if (!l) {
		snprintf(why, why_len, "CPython %u.%u (cmon knows %s)", pi->version >> 24,
			 (pi->version >> 16) & 0xff, pylayout__known());
		err = -ENOEXEC;
		goto out;
	}
	pi->layout = *l;
	if (l->minor >= 13) {
		uint8_t raw[PYLAYOUT_DEBUG_OFFSETS_LEN];

		if (read_at(&f, pi->runtime, raw, sizeof(raw))) {
			err = refuse(why, why_len, -ENOEXEC, "_PyRuntime unreadable%s", "");
			goto out;
		}
		err = pylayout__check_debug_offsets(l, raw, sizeof(raw), pi->version, why, why_len);
		if (err) {
			err = -ENOEXEC;
			goto out;
		}
	}
	for (int t = 0; t < CMON_PYT_N; t++) {
		if (!pi->types[t]) {
			err = refuse(why, why_len, -ENOEXEC, "no %s symbol", type_syms[t]);
			goto out;
		}
	}
	if (!pi->none || !pi->true_ || !pi->false_ || !pi->code_type || !pi->func_type) {
		err = refuse(why, why_len, -ENOEXEC, "no %s symbol",
			     !pi->none ? "_Py_NoneStruct" : !pi->code_type ? "PyCode_Type"
			     : !pi->func_type ? "PyFunction_Type" : "_Py_TrueStruct");
		goto out;
	}
	/* the types' sizes as the file has them: the process starts from them */
	if (check_types(pi, 0, read_file8, &f, why, why_len)) {
		err = -ENOEXEC;
		goto out;
	}
	pi->eval_off = file_off(&f, pi->eval_func, 1);
	for (int k = 0; k < PY_NEWFUNC_N; k++)
		pi->newfunc_off[k] = pi->newfunc[k] ? file_off(&f, pi->newfunc[k], 1) : 0;
	pi->start_off = pi->start ? file_off(&f, pi->start, 1) : 0;
	find_vc_entry(&f, pi);
	pi->shared = !strncmp(strrchr(path, '/') ? strrchr(path, '/') + 1 : path, "libpython", 9);
	pi->path = strdup(path);
	pi->open_path = strdup(open_path ? open_path : path);
	err = pi->path && pi->open_path ? 0 : -ENOMEM;
out:
	if (f.elf)
		elf_end(f.elf);
	if (f.fd >= 0)
		close(f.fd);
	if (err)
		pyinterp__clear(pi);
	return err;
}

bool pyinterp__is_python(const char *path)
{
	struct elf_file f = { .fd = open(path, O_RDONLY | O_CLOEXEC) };
	struct py_interp pi;
	char needed[128] = "";
	uint64_t version_addr = 0;
	bool yes = false, is_py = false;

	if (f.fd < 0)
		return false;
	elf_version(EV_CURRENT);
	f.elf = elf_begin(f.fd, ELF_C_READ, NULL);
	if (f.elf) {
		memset(&pi, 0, sizeof(pi));
		read_symbols(&f, &pi, &version_addr, needed, sizeof(needed), &is_py);
		yes = needed[0] || pi.runtime || pi.eval_func || is_py;
		elf_end(f.elf);
	}
	close(f.fd);
	return yes;
}

int pyinterp__of_process(pid_t pid, struct py_interp *pi, char *why, size_t why_len)
{
	struct proc_object *objs = NULL;
	size_t n = 0, pick = 0;
	int err = proc_objects__read(pid, &objs, &n);

	if (err)
		return refuse(why, why_len, err, "%s", strerror(-err));
	if (!n) {
		proc_objects__free(objs, n);
		return refuse(why, why_len, -ENOEXEC, "it maps no executable file%s", "");
	}
	for (size_t i = 1; i < n; i++) {
		const char *base = strrchr(objs[i].path, '/');

		base = base ? base + 1 : objs[i].path;
		if (!strncmp(base, "libpython", 9) && strstr(base, ".so"))
			pick = i;
	}
	err = pyinterp__open(objs[pick].path, objs[pick].open_path, pi, why, why_len);
	proc_objects__free(objs, n);
	return err;
}

int pyinterp__bias(const struct py_interp *pi, pid_t pid, uint64_t *bias)
{
	struct proc_object *objs = NULL;
	size_t n = 0;
	uint64_t first = 0;
	bool dyn = false;
	int err;

	if (!pi->pie) {
		*bias = 0;
		return 0;
	}
	err = objsym__layout(pi->open_path, &dyn, &first);
	if (err)
		return err;
	err = proc_objects__read(pid, &objs, &n);
	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(objs[i].path, pi->path)) {
			*bias = objs[i].start - first;
			err = 0;
			break;
		}
	}
	proc_objects__free(objs, n);
	return err;
}

int pyinterp__check(const struct py_interp *pi, pid_t pid, uint64_t bias, uint64_t *interp,
		    char *why, size_t why_len)
{
	const struct py_layout *l = &pi->layout;
	uint64_t tstate, back;
	int err = check_types(pi, bias, read_mem8, &pid, why, why_len);

	if (err)
		return err == -ESRCH ? -ESRCH : -EINVAL;
	*interp = procmem__ptr(pid, pi->runtime + bias + l->runtime_interp_main);
	if (!*interp) {
		snprintf(why, why_len, "it has no Python interpreter running (yet)");
		return -ESRCH;
	}
	/* a thread state of that interpreter points back to it */
	tstate = procmem__ptr(pid, *interp + l->interp_threads_head);
	back = tstate ? procmem__ptr(pid, tstate + l->tstate_interp) : *interp;
	if (back != *interp) {
		snprintf(why, why_len, "its interpreter's thread state does not point back to it "
			 "(a layout other than CPython %u.%u's)", l->major, l->minor);
		return -EINVAL;
	}
	return 0;
}

void pyinterp__clear(struct py_interp *pi)
{
	free(pi->path);
	free(pi->open_path);
	pi->path = pi->open_path = NULL;
}
