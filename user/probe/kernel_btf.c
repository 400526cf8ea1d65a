// The kernel's BTF, read with one copy instead of two.
//
// libbpf 1.1 reads /sys/kernel/btf/vmlinux into a buffer and btf__new()
// copies it: two 5.5 MB buffers live at once, the tracer's peak RSS (it
// happens while every program is loaded).  Since Linux 6.16 the sysfs file
// can be mapped read-only; the mapping is the kernel's own pages (a PFN map,
// not counted in RSS), so btf__new() copying from it costs one buffer.
// libbpf 1.6 does the same.  This definition takes the place of libbpf's
// (the executable's symbol wins over a shared library's, and libbpf calls it
// through its PLT while loading an object); where the file cannot be mapped
// (older kernels, BTF read from a vmlinux image) libbpf's own runs.
#include <bpf/btf.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYSFS_VMLINUX "/sys/kernel/btf/vmlinux"

static struct btf *mapped_btf(void)
{
	struct btf *btf;
	struct stat st;
	void *p;
	int fd;

	fd = open(SYSFS_VMLINUX, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size <= 0) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	btf = btf__new(p, (__u32)st.st_size);
	munmap(p, (size_t)st.st_size);
	return btf; /* NULL (errno set) if libbpf could not parse it */
}

struct btf *btf__load_vmlinux_btf(void)
{
	struct btf *(*libbpf_own)(void);
	struct btf *btf = mapped_btf();

	if (btf)
		return btf;
	libbpf_own = (struct btf * (*)(void)) dlsym(RTLD_NEXT, "btf__load_vmlinux_btf");
	if (!libbpf_own) {
		errno = ENOENT;
		return NULL;
	}
	return libbpf_own();
}
