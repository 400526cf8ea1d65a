// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cpython.c: see cpython.h.  Supported: CPython 3.11 (offsets checked
 * against Debian's python3.11-dev headers, 3.11.2).
 *
 * 3.12 would be one more row of the table (its frames and code objects
 * moved: f_code -> f_executable in 3.13, the str layout lost wstr); from
 * 3.13 on, the offsets need not be a table at all: _PyRuntime starts with
 * _Py_DebugOffsets ("xdebugpy" cookie, version, then the offsets of the
 * runtime, interpreter, frame, code and object structs), which cmon would
 * read from the process and check against the version.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "proc/procmaps.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "probe/resolve.h"
#include "python/cpython.h"

/* One row per supported version: what user space reads, and the BPF side's
 * offsets (cmon_abi.h). */
struct py_version {
	unsigned major, minor;
	uint32_t runtime_interp_main; /* _PyRuntimeState.interpreters.main */
	uint32_t interp_eval_frame;   /* PyInterpreterState.eval_frame */
	uint32_t code_firstlineno, code_localsplusnames, code_filename, code_qualname;
	uint32_t tuple_items;         /* PyTupleObject.ob_item */
	uint32_t type_name;           /* PyTypeObject.tp_name */
	/* cmon break --py: the Python stack, from the thread state */
	uint32_t tstate_cframe;       /* PyThreadState.cframe */
	uint32_t cframe_current;      /* _PyCFrame.current_frame */
	uint32_t frame_previous;      /* _PyInterpreterFrame.previous */
	uint32_t code_linetable;      /* PyCodeObject.co_linetable (bytes) */
	uint32_t code_firsttraceable; /* ._co_firsttraceable (int) */
	uint32_t code_code;           /* .co_code_adaptive[] */
	struct cmon_py_offsets bpf;
};

static const struct py_version versions[] = {
	{ 3, 11, 48, 1424, 72, 96, 112, 128, 24, 24, 56, 8, 48, 136, 168, 184,
	  { .frame_code = 32, .frame_prev_instr = 56, .frame_owner = 69, .frame_localsplus = 72,
	    .code_argcount = 56, .code_kwonlyargcount = 64, .code_flags = 48,
	    .code_firstlineno = 72, .code_localsplusnames = 96, .code_filename = 112,
	    .code_qualname = 128, .tuple_items = 24, .type_name = 24, .obj_type = 8,
	    .var_size = 16, .long_digits = 24, .float_value = 16, .str_length = 16,
	    .str_state = 32, .str_ascii_data = 48, .str_utf8_length = 48, .str_utf8 = 56,
	    .bytes_data = 32, .dict_used = 16, .owner_generator = 1, .op_yield_value = 86 } },
};

static const char *const type_syms[CMON_PYT_N] = {
	"PyLong_Type", "PyFloat_Type", "PyUnicode_Type", "PyBytes_Type",
	"PyBool_Type", "PyTuple_Type", "PyList_Type", "PyDict_Type",
};

struct py_code {
	char *qualname, *filename;
	int firstlineno;
	char *names[CMON_PY_MAX_ARGS];
	bool traced;
};

struct py_proc {
	pid_t pid;
	bool launched, stopped_wait, hooked, gone;
	uint64_t bias;
	uint64_t eval_func, runtime; /* addresses in the process */
	uint64_t interp;
	unsigned long long start; /* process start time (hook_refs) */
	struct cmon_py_proc kern;
	struct hmap codes; /* code address -> struct py_code * */
	struct hmap types; /* type address -> char * (tp_name) */
};

struct pytrace {
	char **patterns;
	size_t n_patterns;
	size_t strlen;
	const struct py_version *ver;
	struct py_proc *procs;
	size_t n_procs;
	int procs_fd, code_fd;
	uint64_t filtered;
	/* the last decoded record's strings */
	struct strbuf args, ret, where, cellbuf;
	char *names[CMON_PY_MAX_ARGS];
	const char *cells[CMON_PY_MAX_ARGS];
	size_t cell_off[CMON_PY_MAX_ARGS];
	size_t columns[CMON_PY_MAX_ARGS];
	struct call_typed typed;
	size_t args_column;
	struct cmon_py_break_pat *break_pats; /* cmon break --py */
	unsigned n_break_pats;
};

const struct cmon_py_offsets *pytrace__bpf_offsets(void) { return &versions[0].bpf; }

struct pytrace *pytrace__new(const char *const *patterns, size_t n, size_t strlen)
{
	struct pytrace *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->patterns = calloc(n ? n : 1, sizeof(char *));
	if (!pt->patterns) {
		free(pt);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		pt->patterns[i] = strdup(patterns[i]);
		if (!pt->patterns[i]) {
			pt->n_patterns = i;
			pytrace__free(pt);
			errno = ENOMEM;
			return NULL;
		}
	}
	pt->n_patterns = n;
	pt->strlen = strlen && strlen < CMON_PY_STR_MAX ? strlen : CMON_PY_STR_MAX;
	pt->ver = &versions[0];
	pt->procs_fd = pt->code_fd = -1;
	pt->args_column = SIZE_MAX;
	return pt;
}

static void code_free(struct py_code *c)
{
	if (!c)
		return;
	free(c->qualname);
	free(c->filename);
	for (int k = 0; k < CMON_PY_MAX_ARGS; k++)
		free(c->names[k]);
	free(c);
}

static void free_codes(struct py_proc *p)
{
	for (size_t i = 0; i < p->codes.cap; i++) {
		struct py_code *c;

		if (!p->codes.slots[i].key)
			continue;
		c = (struct py_code *)(uintptr_t)p->codes.slots[i].value;
		code_free(c);
	}
	hmap__release(&p->codes);
	for (size_t i = 0; i < p->types.cap; i++)
		if (p->types.slots[i].key)
			free((char *)(uintptr_t)p->types.slots[i].value);
	hmap__release(&p->types);
}

void pytrace__free(struct pytrace *pt)
{
	if (!pt)
		return;
	pytrace__restore(pt);
	for (size_t i = 0; i < pt->n_procs; i++)
		free_codes(&pt->procs[i]);
	free(pt->procs);
	for (size_t i = 0; i < pt->n_patterns; i++)
		free(pt->patterns[i]);
	free(pt->patterns);
	strbuf__release(&pt->args);
	strbuf__release(&pt->ret);
	strbuf__release(&pt->where);
	strbuf__release(&pt->cellbuf);
	free(pt->break_pats);
	free(pt);
}

/* ---- the executable: symbols and version ---- */

struct py_syms {
	uint64_t eval_func, runtime, version_addr, none, true_, false_;
	uint64_t types[CMON_PYT_N];
	uint32_t version; /* Py_Version: 0x030b02f0 for 3.11.2 */
	bool dyn;
	char libpython[64]; /* DT_NEEDED libpython*, if any */
};

static int read_syms(const char *path, struct py_syms *s)
{
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int fd, err = -ENOEXEC;
	uint64_t ver_off = 0;

	memset(s, 0, sizeof(*s));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh))
		goto out;
	s->dyn = eh.e_type == ET_DYN;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNAMIC) {
			data = elf_getdata(scn, NULL);
			for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Dyn dyn;
				const char *lib;

				if (gelf_getdyn(data, (int)i, &dyn) && dyn.d_tag == DT_NEEDED &&
				    (lib = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)) &&
				    !strncmp(lib, "libpython", 9))
					snprintf(s->libpython, sizeof(s->libpython), "%s", lib);
			}
			continue;
		}
		if (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			if (!strcmp(name, PY_EVAL_FUNC))
				s->eval_func = sym.st_value;
			else if (!strcmp(name, "_PyRuntime"))
				s->runtime = sym.st_value;
			else if (!strcmp(name, "Py_Version"))
				s->version_addr = sym.st_value;
			else if (!strcmp(name, "_Py_NoneStruct"))
				s->none = sym.st_value;
			else if (!strcmp(name, "_Py_TrueStruct"))
				s->true_ = sym.st_value;
			else if (!strcmp(name, "_Py_FalseStruct"))
				s->false_ = sym.st_value;
			for (int t = 0; t < CMON_PYT_N; t++)
				if (!strcmp(name, type_syms[t]))
					s->types[t] = sym.st_value;
		}
	}
	/* Py_Version's 4 bytes, from the segment that holds it. */
	if (s->version_addr) {
		size_t n = 0;

		if (!elf_getphdrnum(elf, &n)) {
			for (size_t i = 0; i < n; i++) {
				GElf_Phdr ph;

				if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
				    s->version_addr >= ph.p_vaddr &&
				    s->version_addr + 4 <= ph.p_vaddr + ph.p_filesz)
					ver_off = s->version_addr - ph.p_vaddr + ph.p_offset;
			}
		}
		if (ver_off && pread(fd, &s->version, 4, (off_t)ver_off) != 4)
			s->version = 0;
	}
	err = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

static uint64_t load_bias(pid_t pid, const char *exe, bool dyn)
{
	char path[64], line[4096];
	uint64_t bias = 0;
	FILE *f;

	if (!dyn)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char *name = strchr(line, '/');

		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &off) != 3 || !name)
			continue;
		name[strcspn(name, "\n")] = 0;
		if (off == 0 && !strcmp(name, exe)) {
			bias = start;
			break;
		}
	}
	fclose(f);
	return bias;
}

int pytrace__add_process(struct pytrace *pt, pid_t pid, const char *exe, bool launched)
{
	char link[64], real[4096];
	struct py_syms s;
	struct py_proc *p, *v;
	ssize_t n;
	int err;

	if (!launched) {
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		n = readlink(link, real, sizeof(real) - 1);
		if (n < 0) {
			log_error("--py: cannot read %s: %s", link, strerror(errno));
			return -errno;
		}
		real[n] = 0;
		exe = real;
	}
	err = read_syms(exe, &s);
	if (err) {
		log_error("--py: %s is not a CPython 3.11 interpreter (%s)", exe,
			  err == -ENOEXEC ? "not an ELF file" : strerror(-err));
		return -ENOEXEC;
	}
	if (s.libpython[0] && !s.eval_func) {
		log_error("--py: %s runs CPython from %s: a shared libpython is not supported "
			  "(a python built without --enable-shared, such as Debian's, is)", exe,
			  s.libpython);
		return -ENOEXEC;
	}
	if (!s.eval_func || !s.runtime) {
		log_error("--py: %s is not a CPython 3.11 interpreter (no %s symbol)", exe,
			  !s.eval_func ? PY_EVAL_FUNC : "_PyRuntime");
		return -ENOEXEC;
	}
	if ((s.version >> 24) != pt->ver->major || ((s.version >> 16) & 0xff) != pt->ver->minor) {
		log_error("--py: %s is CPython %u.%u, not 3.11 (the only version supported)", exe,
			  s.version >> 24, (s.version >> 16) & 0xff);
		return -ENOEXEC;
	}
	for (int t = 0; t < CMON_PYT_N; t++) {
		if (!s.types[t] || !s.none || !s.true_ || !s.false_) {
			log_error("--py: %s is not a CPython 3.11 interpreter (no %s symbol)", exe,
				  s.types[t] ? "_Py_NoneStruct" : type_syms[t]);
			return -ENOEXEC;
		}
	}
	v = realloc(pt->procs, (pt->n_procs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	pt->procs = v;
	p = &v[pt->n_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->launched = launched;
	/* A launched program is not mapped yet: a position-dependent python
	 * (Debian's) needs no bias; a PIE one gets it when it stops. */
	p->bias = launched ? 0 : load_bias(pid, exe, s.dyn);
	if (launched && s.dyn) {
		log_error("--py: %s is position-independent: launch it, then use -p PID", exe);
		pt->n_procs--;
		return -ENOEXEC;
	}
	p->eval_func = s.eval_func + p->bias;
	p->runtime = s.runtime + p->bias;
	for (int t = 0; t < CMON_PYT_N; t++)
		p->kern.types[t] = s.types[t] + p->bias;
	p->kern.none = s.none + p->bias;
	p->kern.true_ = s.true_ + p->bias;
	p->kern.false_ = s.false_ + p->bias;
	p->kern.str_max = (uint32_t)pt->strlen;
	return 0;
}

/* ---- the process's memory ---- */

static int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

static int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

static uint64_t read_ptr(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	return addr && !mem_read(pid, addr, &v, sizeof(v)) ? v : 0;
}

/*
 * The pointer is written while no thread of the process runs: the kernel
 * copies it with `rep movsb` (FSRM), which does not promise one 8-byte
 * store, and a thread reading a half-written evaluator would jump to
 * garbage.  A process cmon attached to (-p) is paused with PTRACE_SEIZE +
 * PTRACE_INTERRUPT, thread by thread: a ptrace stop, which neither the
 * process nor its parent (a shell's job control) sees, and system calls
 * are restarted when it goes on.  A launched one (cmon's own child) is
 * stopped with SIGSTOP (or already is, at its first Python call).
 */
struct freeze {
	pid_t pid;
	bool sigstop;    /* SIGSTOP sent: SIGCONT at thaw */
	pid_t *tids;     /* PTRACE_SEIZE'd */
	int *sigs;       /* a signal caught in its stop, given back at detach */
	size_t n, cap;
};

static bool all_stopped(pid_t pid)
{
	char path[300], buf[512], *q;
	struct dirent *de;
	bool all = true;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (all && (de = readdir(dir))) {
		ssize_t n;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* gone */
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		q = strrchr(buf, ')');
		all = !q || q[1] != ' ' || q[2] == 'T' || q[2] == 't' || q[2] == 'Z' || q[2] == 'X';
	}
	closedir(dir);
	return all;
}

static bool seized(const struct freeze *fz, pid_t tid)
{
	for (size_t i = 0; i < fz->n; i++)
		if (fz->tids[i] == tid)
			return true;
	return false;
}

/* Stop one more thread; 1 when it was stopped, 0 gone, -errno. */
static int seize_thread(struct freeze *fz, pid_t tid)
{
	int status = 0, sig = 0;

	if (fz->n == fz->cap) {
		size_t cap = fz->cap ? 2 * fz->cap : 16;
		pid_t *t = realloc(fz->tids, cap * sizeof(*t));
		int *s;

		if (!t)
			return -ENOMEM;
		fz->tids = t;
		s = realloc(fz->sigs, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		fz->sigs = s;
		fz->cap = cap;
	}
	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return errno == ESRCH ? 0 : -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return errno == ESRCH ? 0 : -errno;
	}
	for (;;) {
		pid_t w = waitpid(tid, &status, __WALL);

		if (w == tid)
			break;
		if (w < 0 && errno == EINTR)
			continue; /* SIGINT: cmon stops after the write, not inside it */
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0; /* it exited */
	/* a signal-delivery stop: the signal is the thread's, given back */
	if ((status >> 16) != PTRACE_EVENT_STOP && WSTOPSIG(status) != SIGTRAP)
		sig = WSTOPSIG(status);
	fz->tids[fz->n] = tid;
	fz->sigs[fz->n] = sig;
	fz->n++;
	return 1;
}

static void thaw(struct freeze *fz)
{
	for (size_t i = 0; i < fz->n; i++)
		ptrace(PTRACE_DETACH, fz->tids[i], 0, (void *)(uintptr_t)fz->sigs[i]);
	if (fz->sigstop)
		kill(fz->pid, SIGCONT);
	free(fz->tids);
	free(fz->sigs);
	memset(fz, 0, sizeof(*fz));
}

/* Every thread of process PID stopped (LAUNCHED: cmon's child, by
 * SIGSTOP; else by ptrace).  0, or -errno with nothing left stopped. */
static int freeze(pid_t pid, bool launched, struct freeze *fz)
{
	bool more = true;
	int err = 0;

	memset(fz, 0, sizeof(*fz));
	fz->pid = pid;
	if (launched) {
		if (kill(pid, SIGSTOP))
			return -errno;
		fz->sigstop = true;
		for (int i = 0; i < 2000 && !all_stopped(pid); i++)
			usleep(500);
		if (all_stopped(pid))
			return 0;
		thaw(fz);
		return -ETIMEDOUT;
	}
	/* Threads made while seizing are seized by the next pass. */
	for (int pass = 0; more && !err && pass < 100; pass++) {
		char path[64];
		struct dirent *de;
		DIR *dir;

		more = false;
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		dir = opendir(path);
		if (!dir) {
			err = -errno;
			break;
		}
		while (!err && (de = readdir(dir))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			int r;

			if (tid <= 0 || seized(fz, tid))
				continue;
			r = seize_thread(fz, tid);
			if (r < 0)
				err = r;
			else if (r > 0)
				more = true;
		}
		closedir(dir);
	}
	if (err)
		thaw(fz);
	return err;
}

/* Write VAL at ADDR of P with every thread stopped (unless ALREADY: it is). */
static int frozen_write(struct py_proc *p, uint64_t addr, uint64_t val, bool already)
{
	struct freeze fz = { 0 };
	int err = already ? 0 : freeze(p->pid, p->launched, &fz);

	if (err)
		return err;
	err = mem_write(p->pid, addr, &val, sizeof(val));
	if (!already)
		thaw(&fz);
	return err;
}

/*
 * Hooks this cmon holds, by (process, address): several users of the same
 * interpreter in one cmon (the agent's probes, one replacing another) share
 * one hook; the last to go restores the pointer.  Its start time tells a
 * process from a later one with the same pid.
 */
struct hook_ref {
	pid_t pid;
	unsigned long long start; /* /proc/PID/stat starttime */
	uint64_t addr, prev;
	unsigned refs;
};

static struct hook_ref *hook_refs;
static size_t n_hook_refs;
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long long proc_start_of(pid_t pid)
{
	unsigned long long start;

	proc__stat(pid, 0, &start);
	return start;
}

static struct hook_ref *hook_ref_find(pid_t pid, uint64_t addr, unsigned long long start)
{
	for (size_t i = 0; i < n_hook_refs; i++)
		if (hook_refs[i].pid == pid && hook_refs[i].addr == addr &&
		    hook_refs[i].start == start && hook_refs[i].refs)
			return &hook_refs[i];
	return NULL;
}

/* Set the hook of P's main interpreter: eval_frame = &_PyEval_EvalFrameDefault. */
static int hook(struct pytrace *pt, struct py_proc *p, bool stopped)
{
	uint64_t interp = read_ptr(p->pid, p->runtime + pt->ver->runtime_interp_main), cur = 0;
	unsigned long long start = proc_start_of(p->pid);
	struct hook_ref *ref, *v;
	uint64_t at;
	int err;

	if (!interp) {
		log_error("--py: process %d has no Python interpreter running (yet)", (int)p->pid);
		return -ESRCH;
	}
	at = interp + pt->ver->interp_eval_frame;
	pthread_mutex_lock(&hook_lock);
	ref = hook_ref_find(p->pid, at, start);
	if (ref) {
		/* already set by this cmon: shared */
		ref->refs++;
		goto done;
	}
	err = mem_read(p->pid, at, &cur, sizeof(cur));
	if (!err && cur && cur != p->eval_func) {
		/* Someone else's evaluator (a debugger, a JIT): cmon does not replace it. */
		log_error("--py: process %d has its own frame evaluator (%#llx): not traced",
			  (int)p->pid, (unsigned long long)cur);
		err = -EBUSY;
	} else if (!err) {
		err = frozen_write(p, at, p->eval_func, stopped);
	}
	if (!err) {
		v = realloc(hook_refs, (n_hook_refs + 1) * sizeof(*v));
		if (!v) {
			frozen_write(p, at, cur == p->eval_func ? 0 : cur, stopped);
			err = -ENOMEM;
		} else {
			hook_refs = v;
			/* Our own evaluator left by a cmon that was killed: it
			 * stands for NULL (CPython's own setter stores it so). */
			v[n_hook_refs++] = (struct hook_ref){ .pid = p->pid, .start = start,
							     .addr = at, .refs = 1,
							     .prev = cur == p->eval_func ? 0 : cur };
		}
	}
	if (err) {
		pthread_mutex_unlock(&hook_lock);
		if (err != -EBUSY)
			log_error("--py: cannot set the eval_frame hook of process %d: %s%s",
				  (int)p->pid, strerror(-err),
				  err == -EPERM ? " (is it being debugged?)" : "");
		return err;
	}
	log_info("--py: process %d: eval_frame hook set", (int)p->pid);
done:
	pthread_mutex_unlock(&hook_lock);
	p->interp = interp;
	p->start = start;
	p->hooked = true;
	return 0;
}

static void unhook(struct pytrace *pt, struct py_proc *p)
{
	uint64_t at, cur = 0;
	struct hook_ref *ref;

	if (!p->hooked)
		return;
	p->hooked = false;
	at = p->interp + pt->ver->interp_eval_frame;
	pthread_mutex_lock(&hook_lock);
	ref = hook_ref_find(p->pid, at, p->start);
	if (!ref || --ref->refs) {
		pthread_mutex_unlock(&hook_lock);
		return; /* another user of this cmon still needs it */
	}
	/* Only cmon's own value is put back: anything else was set since.
	 * When the process cannot be paused, the hook stays (harmless). */
	if (!mem_read(p->pid, at, &cur, sizeof(cur)) && cur == p->eval_func) {
		int err = frozen_write(p, at, ref->prev, false);

		if (!err)
			log_info("--py: process %d: eval_frame restored", (int)p->pid);
		else if (err != -ESRCH)
			log_warn("--py: process %d: eval_frame left set (cannot pause it: %s); it "
				 "only keeps Python calls from being inlined", (int)p->pid,
				 strerror(-err));
	}
	pthread_mutex_unlock(&hook_lock);
}

uint32_t pytrace__mark(struct probe_set *set)
{
	uint32_t id = 0;

	for (size_t i = 0; i < set->n_funcs; i++) {
		struct probe_func *f = &set->funcs[i];

		if (strcmp(f->name, PY_EVAL_FUNC))
			continue;
		f->python = true;
		f->ret_mode = RETURN_URETPROBE;
		id = (uint32_t)i;
	}
	return id;
}

int pytrace__start(struct pytrace *pt, int procs_fd, int code_fd)
{
	pt->procs_fd = procs_fd;
	pt->code_fd = code_fd;
	for (size_t i = 0; i < pt->n_procs; i++) {
		struct py_proc *p = &pt->procs[i];
		__u32 key = (__u32)p->pid;
		int err;

		p->kern.stop = p->launched ? 1 : 0;
		p->stopped_wait = p->launched;
		if (bpf_map_update_elem(procs_fd, &key, &p->kern, BPF_ANY)) {
			err = -errno;
			log_error("--py: cannot register process %d: %s", (int)p->pid, strerror(errno));
			return err;
		}
		if (!p->launched) {
			err = hook(pt, p, false);
			if (err)
				return err;
		}
	}
	return 0;
}

void pytrace__tick(struct pytrace *pt)
{
	for (size_t i = 0; i < pt->n_procs; i++) {
		struct py_proc *p = &pt->procs[i];
		uint64_t cur = 1;
		char st;

		/* Another cmon on the same interpreter restored it as it ended:
		 * set again (calls in between went unseen: said). */
		if (p->hooked &&
		    !mem_read(p->pid, p->interp + pt->ver->interp_eval_frame, &cur, sizeof(cur)) &&
		    cur == 0 && !frozen_write(p, p->interp + pt->ver->interp_eval_frame, p->eval_func,
					      false))
			log_warn("--py: process %d: its eval_frame hook was cleared (another cmon "
				 "ended?): set again; Python-to-Python calls made meanwhile were "
				 "not seen", (int)p->pid);

		if (!p->stopped_wait)
			continue;
		st = proc__stat(p->pid, 0, NULL);
		if (!st || st == 'Z' || st == 'X') {
			p->stopped_wait = false; /* gone */
			continue;
		}
		if (st != 'T' || !all_stopped(p->pid))
			continue; /* not yet (every thread: the hook is read by all) */
		if (pt->procs_fd >= 0) {
			/* Stopped by the probe's SIGSTOP, not by another (cmon
			 * break's at a C function, which its cue resumes)? */
			struct cmon_py_proc k;
			__u32 key = (__u32)p->pid;

			if (!bpf_map_lookup_elem(pt->procs_fd, &key, &k) && k.stop != 2)
				continue;
		}
		p->stopped_wait = false;
		hook(pt, p, true); /* on failure: traced as far as calls reach the evaluator */
		kill(p->pid, SIGCONT);
	}
}

void pytrace__restore(struct pytrace *pt)
{
	for (size_t i = 0; pt && i < pt->n_procs; i++) {
		struct py_proc *p = &pt->procs[i];

		if (p->stopped_wait) {
			/* Stopped (or about to stop) for a hook that will not come. */
			__u32 key = (__u32)p->pid;

			if (pt->procs_fd >= 0)
				bpf_map_delete_elem(pt->procs_fd, &key);
			p->stopped_wait = false;
			/* a probe that had read the entry may still send its
			 * SIGSTOP: look a few times */
			for (int k = 0; k < 10; k++) {
				if (proc__stat(p->pid, 0, NULL) == 'T')
					kill(p->pid, SIGCONT);
				usleep(2000);
			}
		}
		unhook(pt, p);
	}
}

/* ---- code objects: names and the decision ---- */

/* A str object's text (UTF-8), malloc'd; NULL when unreadable. */
static char *read_str(pid_t pid, uint64_t obj, const struct cmon_py_offsets *o)
{
	unsigned char hdr[80];
	uint64_t len, state, data, utf8 = 0, utf8_len = 0;
	unsigned kind;
	char *s;

	if (!obj || mem_read(pid, obj, hdr, sizeof(hdr)))
		return NULL;
	memcpy(&len, hdr + o->str_length, 8);
	state = hdr[o->str_state];
	if (len > 4096)
		return NULL;
	kind = (state >> 2) & 7;
	if ((state & 0x60) == 0x60) {
		data = obj + o->str_ascii_data;
		s = malloc(len + 1);
		if (s && mem_read(pid, data, s, len)) {
			free(s);
			return NULL;
		}
		if (s)
			s[len] = 0;
		return s;
	}
	memcpy(&utf8, hdr + o->str_utf8, 8);
	memcpy(&utf8_len, hdr + o->str_utf8_length, 8);
	if (utf8 && utf8_len <= 4 * 4096) {
		s = malloc(utf8_len + 1);
		if (s && mem_read(pid, utf8, s, utf8_len)) {
			free(s);
			return NULL;
		}
		if (s)
			s[utf8_len] = 0;
		return s;
	}
	if (!(state & 0x20) || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	/* Compact, not ASCII: code points of KIND bytes after the header, to UTF-8. */
	{
		unsigned char *raw = malloc(len * kind + 1);
		char *out = malloc(len * 4 + 1), *q = out;

		if (!raw || !out || mem_read(pid, obj + 72, raw, len * kind)) {
			free(raw);
			free(out);
			return NULL;
		}
		for (uint64_t i = 0; i < len; i++) {
			uint32_t c = kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i]
								  : ((uint32_t *)raw)[i];

			if (c < 0x80) {
				*q++ = (char)c;
			} else if (c < 0x800) {
				*q++ = (char)(0xc0 | c >> 6);
				*q++ = (char)(0x80 | (c & 0x3f));
			} else if (c < 0x10000) {
				*q++ = (char)(0xe0 | c >> 12);
				*q++ = (char)(0x80 | (c >> 6 & 0x3f));
				*q++ = (char)(0x80 | (c & 0x3f));
			} else {
				*q++ = (char)(0xf0 | c >> 18);
				*q++ = (char)(0x80 | (c >> 12 & 0x3f));
				*q++ = (char)(0x80 | (c >> 6 & 0x3f));
				*q++ = (char)(0x80 | (c & 0x3f));
			}
		}
		*q = 0;
		free(raw);
		return out;
	}
}

/* Does PATTERN name the function QUALNAME of FILENAME?  FILE:qualname
 * (FILE a path, a path suffix or a basename); else the qualname, or
 * module.qualname with the module any dotted tail of the file's path
 * (app/handlers.py: handlers.f, app.handlers.f). */
bool pytrace__pattern_matches(const char *pattern, const char *qualname, const char *filename)
{
	const char *colon = strchr(pattern, ':');
	char dotted[4096], cand[8192];
	size_t n;

	if (colon) {
		size_t flen = (size_t)(colon - pattern), plen = strlen(filename);
		bool file_ok = (plen == flen && !strncmp(filename, pattern, flen)) ||
			       (plen > flen && !strncmp(filename + plen - flen, pattern, flen) &&
				filename[plen - flen - 1] == '/');

		return file_ok && !fnmatch(colon + 1, qualname, 0);
	}
	if (!fnmatch(pattern, qualname, 0))
		return true;
	n = strlen(filename);
	if (n < 4 || strcmp(filename + n - 3, ".py") || n - 3 >= sizeof(dotted))
		return false;
	memcpy(dotted, filename, n - 3);
	dotted[n - 3] = 0;
	for (char *c = dotted; *c; c++)
		if (*c == '/')
			*c = '.';
	/* every tail starting after a '.' (a path component) */
	for (const char *t = dotted; t; t = strchr(t, '.')) {
		if (*t == '.')
			t++;
		if (!*t)
			break;
		snprintf(cand, sizeof(cand), "%s.%s", t, qualname);
		if (!fnmatch(pattern, cand, 0))
			return true;
		/* a package's __init__: the package itself */
	}
	return false;
}

static struct py_proc *proc_of(struct pytrace *pt, pid_t pid)
{
	for (size_t i = 0; i < pt->n_procs; i++)
		if (pt->procs[i].pid == pid)
			return &pt->procs[i];
	return NULL;
}

/* A name the kernel read (REC_TEXT, N bytes at most), else from memory. */
static char *name_of(pid_t pid, const char *rec_text, size_t n, uint64_t obj_at,
		     const struct cmon_py_offsets *o)
{
	if (rec_text && rec_text[0])
		return strndup(rec_text, n);
	return read_str(pid, read_ptr(pid, obj_at), o);
}

/* CODE's names and verdict: from REC (the kernel's announcement: read
 * again, an address seen before held a code object since freed), else
 * cached, else read from the process. */
static struct py_code *code_of(struct pytrace *pt, struct py_proc *p, uint64_t code,
			       const struct cmon_py_code_rec *rec)
{
	const struct py_version *v = pt->ver;
	const struct cmon_py_offsets *o = &v->bpf;
	uint64_t *slot, names;
	struct py_code *c;
	bool added;
	int32_t argc = 0, kwonly = 0, flags = 0, n;

	slot = hmap__get(&p->codes, &code, sizeof(code), &added);
	if (!slot)
		return NULL;
	if (!added && *slot && !rec)
		return (struct py_code *)(uintptr_t)*slot;
	code_free((struct py_code *)(uintptr_t)*slot);
	*slot = 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	*slot = (uintptr_t)c;
	c->qualname = name_of(p->pid, rec ? rec->qualname : NULL, CMON_PY_QUALNAME_MAX,
			      code + o->code_qualname, o);
	c->filename = name_of(p->pid, rec ? rec->filename : NULL, CMON_PY_FILENAME_MAX,
			      code + o->code_filename, o);
	if (rec) {
		c->firstlineno = rec->firstlineno;
		argc = rec->argcount;
		kwonly = rec->kwonlyargcount;
		flags = rec->flags;
	} else {
		mem_read(p->pid, code + o->code_firstlineno, &c->firstlineno, 4);
		mem_read(p->pid, code + o->code_argcount, &argc, 4);
		mem_read(p->pid, code + o->code_kwonlyargcount, &kwonly, 4);
		mem_read(p->pid, code + o->code_flags, &flags, 4);
	}
	n = argc + kwonly + !!(flags & 4) + !!(flags & 8);
	names = read_ptr(p->pid, code + o->code_localsplusnames);
	for (int i = 0; i < n && i < CMON_PY_MAX_ARGS; i++) {
		c->names[i] = name_of(p->pid, rec ? rec->names[i] : NULL, CMON_PY_ARGNAME_MAX,
				      names ? names + o->tuple_items + 8 * (uint64_t)i : 0, o);
		if (c->names[i] && (flags & 4) && i == argc + kwonly) {
			char *star = NULL;

			if (asprintf(&star, "*%s", c->names[i]) >= 0) {
				free(c->names[i]);
				c->names[i] = star;
			}
		} else if (c->names[i] && (flags & 8) && i == argc + kwonly + !!(flags & 4)) {
			char *star = NULL;

			if (asprintf(&star, "**%s", c->names[i]) >= 0) {
				free(c->names[i]);
				c->names[i] = star;
			}
		}
	}
	if (!c->qualname) {
		if (asprintf(&c->qualname, "<code %#llx>", (unsigned long long)code) < 0)
			c->qualname = NULL;
	}
	if (!c->filename)
		c->filename = strdup("?");
	for (size_t i = 0; c->qualname && c->filename && i < pt->n_patterns && !c->traced; i++)
		c->traced = pytrace__pattern_matches(pt->patterns[i], c->qualname, c->filename);
	return c;
}

void pytrace__on_code(struct pytrace *pt, const struct cmon_py_code_rec *rec)
{
	struct py_proc *p = proc_of(pt, (pid_t)rec->pid);
	struct cmon_py_code_key key = { .pid = rec->pid, .code = rec->code };
	struct cmon_py_verdict_val val = { .fp = rec->fp };
	struct py_code *c;

	if (!p)
		return;
	c = code_of(pt, p, rec->code, rec);
	val.verdict = c && c->traced ? CMON_PY_TRACED : CMON_PY_SKIP;
	if (pt->code_fd >= 0)
		bpf_map_update_elem(pt->code_fd, &key, &val, BPF_ANY);
}

/* ---- values ---- */

static int json_string(struct strbuf *sb, const char *s, size_t n)
{
	int err = strbuf__putc(sb, '"');

	for (size_t i = 0; i < n && !err; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			err = strbuf__printf(sb, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			err = strbuf__printf(sb, "\\u%04x", c);
		else
			err = strbuf__putc(sb, (char)c);
	}
	return err ? err : strbuf__putc(sb, '"');
}

/* Invalid UTF-8 would break JSON readers: bytes >= 0x80 of a bytes value
 * are written as \u00XX (their Latin-1 reading), and a cut str keeps whole
 * characters. */
static int json_bytes(struct strbuf *sb, const char *s, size_t n)
{
	int err = strbuf__puts(sb, "\"b'");

	for (size_t i = 0; i < n && !err; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			err = strbuf__printf(sb, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			err = strbuf__printf(sb, "\\\\x%02x", c);
		else
			err = strbuf__putc(sb, (char)c);
	}
	return err ? err : strbuf__puts(sb, "'\"");
}

static size_t utf8_cut(const char *s, size_t n)
{
	size_t i = n;

	/* back off a trailing partial sequence */
	while (i > 0 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i > 0 && (unsigned char)s[i - 1] >= 0xc0) {
		unsigned char lead = (unsigned char)s[i - 1];
		size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;

		if (n - (i - 1) < need)
			return i - 1;
	}
	return n;
}

static const char *type_name(struct py_proc *p, uint64_t type, const struct py_version *v)
{
	uint64_t *slot;
	bool added;
	char buf[128] = "";

	slot = hmap__get(&p->types, &type, sizeof(type), &added);
	if (!slot)
		return "object";
	if (added) {
		uint64_t at = read_ptr(p->pid, type + v->type_name);

		if (!at || mem_read(p->pid, at, buf, sizeof(buf) - 1)) {
			/* a name near the end of a mapping: byte by byte */
			for (size_t i = 0; at && i < sizeof(buf) - 1 && !mem_read(p->pid, at + i, &buf[i], 1) && buf[i]; i++)
				;
		}
		buf[sizeof(buf) - 1] = 0;
		*slot = (uintptr_t)strdup(buf[0] ? buf : "object");
	}
	return *slot ? (const char *)(uintptr_t)*slot : "object";
}

static int render(struct pytrace *pt, struct py_proc *p, const struct cmon_py_val *v,
		  struct strbuf *sb)
{
	char tmp[64];
	double d;
	size_t n = v->nbytes <= CMON_PY_STR_MAX ? v->nbytes : CMON_PY_STR_MAX;

	switch (v->kind) {
	case CMON_PYV_NONE:
		return strbuf__puts(sb, "null");
	case CMON_PYV_TRUE:
		return strbuf__puts(sb, "true");
	case CMON_PYV_FALSE:
		return strbuf__puts(sb, "false");
	case CMON_PYV_INT:
		return strbuf__printf(sb, "%lld", (long long)v->num);
	case CMON_PYV_BIGINT:
		/* beyond 64 bits: its sign and size ("<int -101 bits>": -2**100) */
		return strbuf__printf(sb, "\"<int %s%u bits>\"", v->num ? "-" : "", v->len);
	case CMON_PYV_FLOAT:
		memcpy(&d, &v->num, 8);
		if (d != d || d - d != 0) /* nan, inf: not JSON numbers */
			return strbuf__printf(sb, "\"%g\"", d);
		snprintf(tmp, sizeof(tmp), "%.17g", d);
		if (!strpbrk(tmp, ".eE"))
			strcat(tmp, ".0");
		return strbuf__puts(sb, tmp);
	case CMON_PYV_STR: {
		int err;

		n = utf8_cut(v->data, n);
		err = json_string(sb, v->data, n);
		if (!err && n < v->len) {
			sb->len--; /* cut: "..." inside the quotes */
			err = strbuf__puts(sb, "...\"");
		}
		return err;
	}
	case CMON_PYV_STR_WIDE:
		return strbuf__printf(sb, "\"<str len %u>\"", v->len);
	case CMON_PYV_BYTES:
		return json_bytes(sb, v->data, n);
	case CMON_PYV_TUPLE:
		return strbuf__printf(sb, "\"<tuple len %u>\"", v->len);
	case CMON_PYV_LIST:
		return strbuf__printf(sb, "\"<list len %u>\"", v->len);
	case CMON_PYV_DICT:
		return strbuf__printf(sb, "\"<dict len %u>\"", v->len);
	case CMON_PYV_OTHER:
		if (n)
			return strbuf__printf(sb, "\"<%.*s>\"", (int)utf8_cut(v->data, n), v->data);
		return strbuf__printf(sb, "\"<%s>\"", type_name(p, v->num, pt->ver));
	case CMON_PYV_UNREADABLE:
		return strbuf__puts(sb, "\"<unreadable>\"");
	default:
		return strbuf__puts(sb, "null");
	}
}

int pytrace__copy_rec(const void *data, size_t size, struct cmon_py_rec *out)
{
	const struct cmon_py_rec *in = data;

	if (size < CMON_PY_REC_SIZE(0) || in->n_args > CMON_PY_MAX_ARGS ||
	    size < CMON_PY_REC_SIZE(in->n_args))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	memcpy(out, data, CMON_PY_REC_SIZE(in->n_args)); /* what it carries, no more */
	out->comm[CMON_COMM_LEN - 1] = 0;
	return 0;
}

uint64_t pytrace__filtered(const struct pytrace *pt) { return pt->filtered; }
void pytrace__set_args_column(struct pytrace *pt, size_t col) { pt->args_column = col; }

int pytrace__decode(struct pytrace *pt, const struct cmon_py_rec *rec, int64_t mono_to_real,
		    struct call_record *out)
{
	struct py_proc *p = proc_of(pt, (pid_t)rec->pid);
	struct py_code *c;
	uint32_t n = rec->n_args < CMON_PY_MAX_ARGS ? rec->n_args : CMON_PY_MAX_ARGS;
	int err = 0;

	if (!p)
		return 0;
	c = code_of(pt, p, rec->code, NULL);
	if (!c)
		return -ENOMEM;
	if (!c->traced && !(rec->flags & CMON_PY_BREAK)) {
		pt->filtered++;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	out->ts_ns = rec->ts_entry_ns + (uint64_t)mono_to_real;
	out->pid = rec->pid;
	out->tid = rec->tid;
	out->comm = rec->comm;
	out->func = c->qualname;
	strbuf__reset(&pt->where);
	err = strbuf__printf(&pt->where, "%s:%d", c->filename, c->firstlineno);
	out->module = pt->where.buf;
	out->depth = (int)rec->depth;
	out->status = rec->flags & CMON_PY_BREAK ? CALL_ENTRY_ONLY
		      : rec->flags & CMON_PY_EXCEPTION ? CALL_RAISED
		      : rec->flags & CMON_PY_YIELDED ? CALL_YIELD
		      : rec->flags & CMON_PY_RETURNED ? CALL_OK
						      : CALL_NORETURN;
	out->latency_ns = rec->ts_exit_ns > rec->ts_entry_ns ? rec->ts_exit_ns - rec->ts_entry_ns : 0;
	out->rss_entry = rec->rss_entry;
	out->rss_exit = rec->rss_exit;
	out->vms_entry = rec->vms_entry;
	out->vms_exit = rec->vms_exit;

	/* the values: cells, then {"name":value,...} */
	strbuf__reset(&pt->cellbuf);
	for (uint32_t i = 0; i < n && !err; i++) {
		pt->cell_off[i] = pt->cellbuf.len;
		err = render(pt, p, &rec->args[i], &pt->cellbuf);
		if (!err)
			err = strbuf__putc(&pt->cellbuf, 0);
	}
	strbuf__reset(&pt->args);
	err = err ? err : strbuf__putc(&pt->args, '{');
	for (uint32_t i = 0; i < n && !err; i++) {
		char argn[16];
		const char *name = c->names[i];

		if (!name) {
			snprintf(argn, sizeof(argn), "arg%u", i);
			name = argn;
		}
		pt->cells[i] = pt->cellbuf.buf + pt->cell_off[i];
		pt->names[i] = c->names[i];
		pt->columns[i] = SIZE_MAX;
		if (i)
			err = strbuf__putc(&pt->args, ',');
		if (!err)
			err = json_string(&pt->args, name, strlen(name));
		if (!err)
			err = strbuf__printf(&pt->args, ":%s", pt->cells[i]);
	}
	err = err ? err : strbuf__putc(&pt->args, '}');
	strbuf__reset(&pt->ret);
	if (!err)
		err = render(pt, p, &rec->ret, &pt->ret);
	if (err)
		return err;
	for (uint32_t i = 0; i < n; i++)
		if (!pt->names[i])
			pt->names[i] = (char *)"?";
	pt->typed = (struct call_typed){
		.args = pt->args.buf,
		.retval = pt->ret.buf,
		.names = (const char *const *)pt->names,
		.cells = pt->cells,
		.columns = pt->columns,
		.n_cells = n,
		.python = true,
		.args_column = pt->args_column,
	};
	out->typed = &pt->typed;
	out->sampled = 0;
	return 1;
}

/* ---- cmon break --py ---- */

static int break_row(struct pytrace *pt, const char *pattern, const char *qual, size_t qlen,
		     const char *file, size_t flen, uint32_t flags)
{
	struct cmon_py_break_pat *row;

	if (!qlen || qlen > CMON_PY_QUALNAME_MAX - 2 || flen > CMON_PY_FILENAME_MAX - 2) {
		log_error("--py '%s': %s for break (names up to %d bytes, files up to %d)",
			  pattern, qlen ? "too long" : "no function name", CMON_PY_QUALNAME_MAX - 2,
			  CMON_PY_FILENAME_MAX - 2);
		return -EINVAL;
	}
	if (pt->n_break_pats == CMON_PY_BREAK_MAX) {
		log_error("--py '%s': too many names for break (at most %d forms; a dotted name "
			  "counts once per dot and once whole)", pattern, CMON_PY_BREAK_MAX);
		return -EINVAL;
	}
	row = &pt->break_pats[pt->n_break_pats++];
	memset(row, 0, sizeof(*row));
	memcpy(row->qualname, qual, qlen);
	row->qual_len = (uint32_t)qlen;
	memcpy(row->file, file, flen);
	row->file_len = (uint32_t)flen;
	row->flags = flags;
	return 0;
}

int pytrace__break_pats(struct pytrace *pt, const struct cmon_py_break_pat **pats, unsigned *n)
{
	int err = 0;

	free(pt->break_pats);
	pt->n_break_pats = 0;
	pt->break_pats = calloc(CMON_PY_BREAK_MAX, sizeof(*pt->break_pats));
	if (!pt->break_pats) {
		log_error("out of memory");
		return -ENOMEM;
	}
	/* The forms pytrace__pattern_matches accepts, without globs. */
	for (size_t i = 0; i < pt->n_patterns && !err; i++) {
		const char *p = pt->patterns[i], *colon = strchr(p, ':');
		size_t len = strlen(p);

		if (colon) {
			/* FILE:qualname: FILE, or a path ending in "/FILE" */
			if (colon == p) {
				log_error("--py '%s': no file before ':'", p);
				return -EINVAL;
			}
			err = break_row(pt, p, colon + 1, strlen(colon + 1), p, (size_t)(colon - p), 0);
			continue;
		}
		err = break_row(pt, p, p, len, "", 0, 0);
		/* module.qualname: the module a dotted tail of the file's path */
		for (size_t k = 1; !err && k + 1 < len; k++) {
			char file[CMON_PY_FILENAME_MAX];

			if (p[k] != '.')
				continue;
			if (k + 3 >= sizeof(file)) {
				log_error("--py '%s': too long for break", p);
				return -EINVAL;
			}
			memcpy(file, p, k);
			memcpy(file + k, ".py", 3);
			err = break_row(pt, p, p + k + 1, len - k - 1, file, k + 3,
					CMON_PY_BREAK_MODULE);
		}
	}
	*pats = pt->break_pats;
	*n = pt->n_break_pats;
	return err;
}

static int varint(const uint8_t *t, size_t n, size_t *i, uint32_t *out)
{
	uint32_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*i >= n || shift > 28)
			return -1;
		b = t[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = v;
	return 0;
}

/* The source line of the instruction at INSTR (the frame's prev_instr) in
 * code object CODE, from its location table (3.11: Objects/locations.md);
 * FIRST (co_firstlineno) when unknown. */
static int code_line(const struct pytrace *pt, pid_t pid, uint64_t code, uint64_t instr, int first)
{
	const struct py_version *v = pt->ver;
	uint64_t table = read_ptr(pid, code + v->code_linetable), size = 0, start = code + v->code_code;
	uint64_t at, pos = 0;
	uint8_t *t;
	int line = first, found = first;
	size_t i = 0;

	if (!table || instr < start || mem_read(pid, table + v->bpf.var_size, &size, 8) ||
	    !size || size > (1u << 20))
		return first;
	t = malloc(size);
	if (!t)
		return first;
	if (mem_read(pid, table + v->bpf.bytes_data, t, size)) {
		free(t);
		return first;
	}
	at = (instr - start) / 2; /* code units */
	while (i < size) {
		uint8_t b = t[i++];
		unsigned kind = (b >> 3) & 15, len = (b & 7) + 1;
		uint32_t u = 0, skip;
		int delta = 0;
		bool known = true;

		if (!(b & 0x80))
			break; /* not an entry's first byte: lost */
		if (kind == 15) {
			known = false; /* no location */
		} else if (kind == 14 || kind == 13) {
			if (varint(t, size, &i, &u))
				break;
			delta = u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
			for (int k = 0; kind == 14 && k < 3; k++)
				if (varint(t, size, &i, &skip))
					break;
		} else if (kind >= 10) {
			delta = (int)kind - 10;
			i += 2;
		} else {
			i += 1;
		}
		line += delta;
		if (at < pos + len) {
			found = known ? line : found;
			break;
		}
		if (known)
			found = line;
		pos += len;
	}
	free(t);
	return found;
}

uint64_t pytrace__eval_func(struct pytrace *pt, pid_t pid)
{
	struct py_proc *p = proc_of(pt, pid);

	return p ? p->eval_func : 0;
}

int pytrace__stack(struct pytrace *pt, const struct cmon_py_rec *rec, struct strbuf *out)
{
	const struct py_version *v = pt->ver;
	pid_t pid = (pid_t)rec->pid;
	struct py_proc *p = proc_of(pt, pid);
	uint64_t tstate = rec->tstate, frame;
	struct py_code *c;
	int err;

	if (!p)
		return -ESRCH;
	c = code_of(pt, p, rec->code, NULL);
	if (!c)
		return -ENOMEM;
	/* The callee: its frame is not linked yet (the evaluator links it
	 * past the instruction the probe sits on); its first line, or the
	 * line a resumed generator stands at. */
	err = strbuf__printf(out, "%s (%s:%d)\n", c->qualname, c->filename,
			     code_line(pt, pid, rec->code,
				       read_ptr(pid, rec->frame + v->bpf.frame_prev_instr),
				       c->firstlineno));
	/* The callers: the frame the thread state holds, then `previous`. */
	frame = read_ptr(pid, read_ptr(pid, tstate + v->tstate_cframe) + v->cframe_current);
	for (int d = 0; frame && d < 128 && !err; d++) {
		uint64_t fcode = read_ptr(pid, frame + v->bpf.frame_code);
		uint64_t instr = read_ptr(pid, frame + v->bpf.frame_prev_instr);
		int32_t first_traceable = 0;
		uint8_t owner = 0;

		if (!fcode)
			break;
		mem_read(pid, frame + v->bpf.frame_owner, &owner, 1);
		mem_read(pid, fcode + v->code_firsttraceable, &first_traceable, 4);
		/* a frame still being set up runs no line yet: not shown */
		if (owner == v->bpf.owner_generator ||
		    instr >= fcode + v->code_code + 2 * (uint64_t)(first_traceable > 0 ? first_traceable : 0)) {
			c = code_of(pt, p, fcode, NULL);
			if (!c)
				return -ENOMEM;
			err = strbuf__printf(out, "%s (%s:%d)\n", c->qualname, c->filename,
					     code_line(pt, pid, fcode, instr, c->firstlineno));
		}
		frame = read_ptr(pid, frame + v->frame_previous);
	}
	if (!err && out->len && out->buf[out->len - 1] == '\n')
		out->buf[--out->len] = 0; /* the writer ends each frame's line */
	return err;
}
