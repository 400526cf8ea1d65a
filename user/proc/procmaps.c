// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* procmaps.c: the executable objects of a process, from /proc/PID/maps. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "core/grow.h"
#include "core/log.h"
#include "proc/procmaps.h"

#define DELETED_SUFFIX " (deleted)"

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* Strict unsigned number: at least one digit, no sign, no leading blanks
 * (strtoull would accept both). */
static int parse_num(char **p, int base, uint64_t *val)
{
	char *end;

	if (base == 16 ? !is_hex(**p) : !(**p >= '0' && **p <= '9'))
		return -EINVAL;
	errno = 0;
	*val = strtoull(*p, &end, base);
	if (errno)
		return -EINVAL;
	*p = end;
	return 0;
}

static int expect(char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

int maps_line__parse(char *line, struct maps_line *out)
{
	static const char perm_chars[4][3] = { "r-", "w-", "x-", "ps" };
	uint64_t major, minor;
	char *p = line;
	size_t len;

	if (!line || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (parse_num(&p, 16, &out->start) || expect(&p, '-') ||
	    parse_num(&p, 16, &out->end) || expect(&p, ' '))
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		if (!p[i] || !strchr(perm_chars[i], p[i]))
			return -EINVAL;
		out->perms[i] = p[i];
	}
	out->perms[4] = '\0';
	p += 4;
	if (expect(&p, ' ') || parse_num(&p, 16, &out->offset) || expect(&p, ' ') ||
	    parse_num(&p, 16, &major) || expect(&p, ':') ||
	    parse_num(&p, 16, &minor) || expect(&p, ' ') ||
	    parse_num(&p, 10, &out->inode))
		return -EINVAL;
	if (major > 0xfff || minor > 0xfffff || out->end < out->start)
		return -EINVAL;
	out->dev_major = (unsigned)major;
	out->dev_minor = (unsigned)minor;

	/* Only the newline is trimmed: a file name may end in blanks. */
	len = strlen(p);
	if (len && p[len - 1] == '\n')
		p[--len] = '\0';
	if (*p && *p != ' ' && *p != '\t')
		return -EINVAL;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return 0; /* anonymous */
	len = strlen(p);
	if (len > strlen(DELETED_SUFFIX) &&
	    !strcmp(p + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
		p[len - strlen(DELETED_SUFFIX)] = '\0';
		out->deleted = true;
	}
	out->path = p;
	return 0;
}

/* Backed by a file one can name, not a pseudo-mapping: "[vdso]", "memfd:x"
 * or the shmem files behind shared anonymous memory and SysV segments. */
static bool is_file_mapping(const struct maps_line *ml)
{
	if (!ml->path || ml->path[0] != '/')
		return false;
	if (!strncmp(ml->path, "/memfd:", 7))
		return false;
	if (ml->deleted &&
	    (!strcmp(ml->path, "/dev/zero") || !strncmp(ml->path, "/SYSV", 5)))
		return false;
	return true;
}

/* Per (dev, inode) while reading; copied into proc_object at the end. */
struct obj_acc {
	char *path;
	uint64_t dev, inode, start;
	uint64_t x_start, x_end; /* one executable mapping, for map_files */
	bool exec, deleted;
};

static int map_open_errno(int err)
{
	/* /proc/PID vanishes with the process. */
	if (err == ENOENT || err == ESRCH)
		return -ESRCH;
	if (err == EPERM || err == EACCES)
		return -EACCES;
	return -err;
}

static int acc_add(struct obj_acc **accs, size_t *n, size_t *cap,
		   const struct maps_line *ml)
{
	uint64_t dev = makedev(ml->dev_major, ml->dev_minor);
	bool exec = ml->perms[2] == 'x';
	struct obj_acc *a = NULL;

	for (size_t i = 0; i < *n; i++) {
		if ((*accs)[i].dev == dev && (*accs)[i].inode == ml->inode) {
			a = &(*accs)[i];
			break;
		}
	}
	if (!a) {
		if (GROW(*accs, *n, *cap, 16))
			return -ENOMEM;
		a = &(*accs)[(*n)++];
		memset(a, 0, sizeof(*a));
		a->path = strdup(ml->path);
		if (!a->path) {
			(*n)--;
			return -ENOMEM;
		}
		a->dev = dev;
		a->inode = ml->inode;
		/* maps is sorted by address: the first mapping is the lowest */
		a->start = ml->start;
	}
	if (exec && !a->exec) {
		a->exec = true;
		a->x_start = ml->start;
		a->x_end = ml->end;
	}
	a->deleted |= ml->deleted;
	return 0;
}

static int cmp_acc_start(const void *a, const void *b)
{
	const struct obj_acc *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Index of the main executable among ACCS, or -1.  By (dev, inode) of
 * /proc/PID/exe; by path when those differ (overlayfs reports the
 * underlying inode in maps but its own in stat). */
static ssize_t find_main(pid_t pid, const struct obj_acc *accs, size_t n)
{
	char link[64], target[4096];
	struct stat st;
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	if (stat(link, &st) == 0) {
		for (size_t i = 0; i < n; i++)
			if (accs[i].dev == st.st_dev && accs[i].inode == st.st_ino)
				return (ssize_t)i;
	}
	len = readlink(link, target, sizeof(target) - 1);
	if (len <= 0)
		return -1;
	target[len] = '\0';
	if ((size_t)len > strlen(DELETED_SUFFIX) &&
	    !strcmp(target + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX))
		target[len - strlen(DELETED_SUFFIX)] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!strcmp(accs[i].path, target))
			return (ssize_t)i;
	return -1;
}

/* Where cmon opens A, and the path as the process sees it: maps names a
 * file as seen from cmon's root.  A process in another mount namespace
 * sees it at that path in its own root (/proc/PID/root + path); one
 * chrooted in cmon's namespace (its root ROOT_PREFIX, not "/") at what
 * follows ROOT_PREFIX.  A deleted file, or one not there, through
 * map_files (which opens the mapped file itself). */
static int open_path_of(pid_t pid, const char *root_prefix, struct obj_acc *a, char **out)
{
	size_t n = strlen(root_prefix);

	if (n > 1 && !strncmp(a->path, root_prefix, n) && a->path[n] == '/')
		memmove(a->path, a->path + n, strlen(a->path + n) + 1);
	if (!a->deleted) {
		if (asprintf(out, "/proc/%d/root%s", (int)pid, a->path) < 0)
			return -1;
		if (!access(*out, F_OK))
			return 0;
		free(*out);
	}
	return asprintf(out, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, a->x_start,
			a->x_end) < 0 ? -1 : 0;
}

static int fill_object(pid_t pid, const char *root_prefix, struct obj_acc *a,
		       struct proc_object *o)
{
	int len = open_path_of(pid, root_prefix, a, &o->open_path);

	if (len < 0) {
		o->open_path = NULL;
		return -ENOMEM;
	}
	o->path = a->path;
	a->path = NULL; /* moved */
	o->dev = a->dev;
	o->inode = a->inode;
	o->start = a->start;
	o->deleted = a->deleted;
	return 0;
}

int proc_objects__read(pid_t pid, struct proc_object **objs, size_t *count)
{
	struct proc_object *out = NULL;
	struct obj_acc *accs = NULL;
	size_t n = 0, cap = 0, nout = 0;
	char maps[64], root_prefix[4096], *line = NULL;
	size_t line_cap = 0;
	FILE *f = NULL;
	ssize_t main_idx;
	int err = 0;

	if (!objs || !count)
		return -EINVAL;
	*objs = NULL;
	*count = 0;
	if (pid <= 0)
		return -ESRCH;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f) {
		err = map_open_errno(errno);
		goto cleanup;
	}
	for (;;) {
		struct maps_line ml;

		errno = 0;
		if (getline(&line, &line_cap, f) < 0) {
			if (errno)
				err = map_open_errno(errno);
			break;
		}
		if (maps_line__parse(line, &ml)) {
			log_debug("%s: unparsable line: %s", maps, line);
			continue;
		}
		if (!is_file_mapping(&ml))
			continue;
		err = acc_add(&accs, &n, &cap, &ml);
		if (err)
			goto cleanup;
	}
	if (err)
		goto cleanup;

	/* Keep only objects with code; the main executable first. */
	{
		size_t kept = 0;

		for (size_t i = 0; i < n; i++) {
			if (accs[i].exec)
				accs[kept++] = accs[i];
			else
				free(accs[i].path);
		}
		n = kept;
	}
	if (n) /* accs is NULL when nothing is mapped */
		qsort(accs, n, sizeof(*accs), cmp_acc_start);
	main_idx = find_main(pid, accs, n);
	if (main_idx > 0) {
		struct obj_acc m = accs[main_idx];

		memmove(&accs[1], &accs[0], (size_t)main_idx * sizeof(*accs));
		accs[0] = m;
	} else if (main_idx < 0 && n) {
		log_debug("pid %d: main executable not found in maps", (int)pid);
	}

	if (n) {
		out = calloc(n, sizeof(*out));
		if (!out) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	{
		char link[32];
		ssize_t rn;

		snprintf(link, sizeof(link), "/proc/%d/root", (int)pid);
		rn = readlink(link, root_prefix, sizeof(root_prefix) - 1);
		root_prefix[rn > 0 ? rn : 0] = '\0';
	}
	for (; nout < n; nout++) {
		err = fill_object(pid, root_prefix, &accs[nout], &out[nout]);
		if (err)
			goto cleanup;
	}
	if (nout && main_idx >= 0)
		out[0].exe = true;
	*objs = out;
	*count = nout;
	out = NULL;

cleanup:
	if (out)
		proc_objects__free(out, nout);
	if (accs) {
		for (size_t i = 0; i < n; i++)
			free(accs[i].path);
		free(accs);
	}
	free(line);
	if (f)
		fclose(f);
	return err;
}

void proc_objects__free(struct proc_object *objs, size_t count)
{
	if (!objs)
		return;
	for (size_t i = 0; i < count; i++) {
		free(objs[i].path);
		free(objs[i].open_path);
	}
	free(objs);
}

char proc__stat(pid_t pid, pid_t tid, unsigned long long *start)
{
	char path[64], buf[1024], *q;
	ssize_t n;
	int fd;

	if (start)
		*start = 0;
	if (pid <= 0)
		return 0;
	if (tid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "pid (comm) S ...": comm may hold ')' and blanks, so the last ')'. */
	q = strrchr(buf, ')');
	if (!q || q[1] != ' ' || !q[2])
		return 0;
	if (start) {
		const char *f = q + 1;

		/* F is the blank before field 3 (state); each step moves to
		 * the blank before the next field, up to field 22 (starttime). */
		for (int field = 3; f && field < 22; field++)
			f = strchr(f + 1, ' ');
		if (f)
			*start = strtoull(f + 1, NULL, 10);
	}
	return q[2];
}

void proc__comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	comm[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(comm, (int)len, f))
		comm[strcspn(comm, "\n")] = 0;
	else
		comm[0] = 0;
	fclose(f);
}

pid_t proc__ppid(pid_t pid)
{
	char path[64], buf[1024], *q;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = 0;
	q = strrchr(buf, ')'); /* past comm, which may hold ')' and blanks */
	if (!q || q[1] != ' ' || !q[2] || q[3] != ' ')
		return 0;
	return (pid_t)atoi(q + 4);
}

int proc__children(pid_t pid, pid_t **kids, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t cap = 0;
	int err = 0;

	*kids = NULL;
	*n = 0;
	while (d && !err && (de = readdir(d))) {
		pid_t k = (pid_t)atoi(de->d_name);

		if (k <= 0 || proc__ppid(k) != pid)
			continue;
		if (GROW(*kids, *n, cap, 8))
			err = -ENOMEM;
		else
			(*kids)[(*n)++] = k;
	}
	if (d)
		closedir(d);
	return err;
}

bool proc__alive(pid_t pid)
{
	char s = proc__stat(pid, 0, NULL);

	return s && !strchr("ZXx", s);
}

pid_t proc__tgid(pid_t id)
{
	char path[64], line[128];
	pid_t tgid = 0;
	FILE *f;

	if (id <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)id);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}
