/* Unit tests for proc/procmaps: maps line parsing and the executable objects
 * of live processes (ourselves, exec'd children, a deleted executable). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "proc/procmaps.h"

/* ---- maps_line__parse ---- */

struct parse_case {
	const char *line;
	int ret;
	uint64_t start, end, offset, inode;
	unsigned major, minor;
	const char *perms;
	const char *path; /* NULL: anonymous */
	bool deleted;
};

static const struct parse_case parse_cases[] = {
	{ "7f3a1c228000-7f3a1c3bd000 r-xp 00028000 fe:00 1837458                    /usr/lib/x86_64-linux-gnu/libc.so.6\n",
	  0, 0x7f3a1c228000, 0x7f3a1c3bd000, 0x28000, 1837458, 0xfe, 0x00, "r-xp",
	  "/usr/lib/x86_64-linux-gnu/libc.so.6", false },
	{ "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon",
	  0, 0x400000, 0x452000, 0, 173521, 8, 2, "r-xp", "/usr/bin/dbus-daemon", false },
	{ "55d0c0a00000-55d0c0a10000 r--s 00001000 103:1f 42    /tmp/my dir/lib foo.so\n",
	  0, 0x55d0c0a00000, 0x55d0c0a10000, 0x1000, 42, 0x103, 0x1f, "r--s",
	  "/tmp/my dir/lib foo.so", false },
	{ "55d0c0a00000-55d0c0a10000 r-xp 00000000 00:2a 99    /tmp/t/sleep copy (deleted)\n",
	  0, 0x55d0c0a00000, 0x55d0c0a10000, 0, 99, 0, 0x2a, "r-xp", "/tmp/t/sleep copy", true },
	/* " (deleted)" counts only at the very end. */
	{ "1000-2000 r-xp 00000000 00:2a 99    /tmp/a (deleted) b\n",
	  0, 0x1000, 0x2000, 0, 99, 0, 0x2a, "r-xp", "/tmp/a (deleted) b", false },
	{ "7ffc4a9e5000-7ffc4aa06000 rw-p 00000000 00:00 0                          [stack]\n",
	  0, 0x7ffc4a9e5000, 0x7ffc4aa06000, 0, 0, 0, 0, "rw-p", "[stack]", false },
	{ "7ffc4abb1000-7ffc4abb3000 r-xp 00000000 00:00 0                          [vdso]\n",
	  0, 0x7ffc4abb1000, 0x7ffc4abb3000, 0, 0, 0, 0, "r-xp", "[vdso]", false },
	{ "7f3a1c1fb000-7f3a1c1fe000 rw-p 00000000 00:00 0 \n",
	  0, 0x7f3a1c1fb000, 0x7f3a1c1fe000, 0, 0, 0, 0, "rw-p", NULL, false },
	{ "7f3a1c1fb000-7f3a1c1fe000 ---p 00000000 00:00 0\n",
	  0, 0x7f3a1c1fb000, 0x7f3a1c1fe000, 0, 0, 0, 0, "---p", NULL, false },
	{ "7f3a1c1fb000-7f3a1c1fe000 rwxs 00000000 00:01 2049    /memfd:jit (deleted)\n",
	  0, 0x7f3a1c1fb000, 0x7f3a1c1fe000, 0, 2049, 0, 1, "rwxs", "/memfd:jit", true },
	/* malformed */
	{ "", -EINVAL },
	{ "\n", -EINVAL },
	{ "garbage", -EINVAL },
	{ "1000-2000", -EINVAL },
	{ "1000-2000 r-xp", -EINVAL },
	{ "1000-2000 r-xp 00000000 fe:00", -EINVAL },
	{ "1000-2000 r-xp 00000000 fe:00 \n", -EINVAL },
	{ "1000 2000 r-xp 00000000 fe:00 1 /x", -EINVAL },
	{ "1000-2000 rzxp 00000000 fe:00 1 /x", -EINVAL },
	{ "1000-2000 r-xq 00000000 fe:00 1 /x", -EINVAL },
	{ "1000-2000 r-x 00000000 fe:00 1 /x", -EINVAL },
	{ "1000-2000 r-xp 0000g000 fe:00 1 /x", -EINVAL },
	{ "1000-2000 r-xp 00000000 fe-00 1 /x", -EINVAL },
	{ "1000-2000 r-xp 00000000 fe:00 12x /x", -EINVAL },
	{ "1000-2000 r-xp 00000000 fe:00 -1 /x", -EINVAL },
	{ "-1000-2000 r-xp 00000000 fe:00 1 /x", -EINVAL },
	{ "2000-1000 r-xp 00000000 fe:00 1 /x", -EINVAL },
};

static void test_parse_table(void **state)
{
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		char *buf = strdup(c->line);
		struct maps_line ml;
		int ret;

		assert_non_null(buf);
		ret = maps_line__parse(buf, &ml);
		if (ret != c->ret)
			fail_msg("case %zu \"%s\": ret %d, want %d", i, c->line, ret, c->ret);
		if (ret == 0) {
			assert_int_equal(ml.start, c->start);
			assert_int_equal(ml.end, c->end);
			assert_int_equal(ml.offset, c->offset);
			assert_int_equal(ml.inode, c->inode);
			assert_int_equal(ml.dev_major, c->major);
			assert_int_equal(ml.dev_minor, c->minor);
			assert_string_equal(ml.perms, c->perms);
			if (c->path) {
				assert_non_null(ml.path);
				assert_string_equal(ml.path, c->path);
				/* points into the line buffer */
				assert_true(ml.path >= buf && ml.path < buf + strlen(c->line));
			} else {
				assert_null(ml.path);
			}
			assert_int_equal(ml.deleted, c->deleted);
		}
		free(buf);
	}
}

/* ---- helpers ---- */

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

/* Right after exec only the program and ld.so are mapped: wait (5 s at
 * most) until the loader has mapped the code of NEEDLE too. */
static void wait_mapped(pid_t pid, const char *needle)
{
	char path[64], *line = NULL;
	size_t cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (int tries = 0; tries < 500; tries++) {
		FILE *f = fopen(path, "re");
		bool found = false;

		assert_non_null(f);
		while (!found && getline(&line, &cap, f) > 0)
			found = strstr(line, needle) && strstr(line, " r-xp ");
		fclose(f);
		if (found) {
			free(line);
			return;
		}
		usleep(10000);
	}
	free(line);
	fail_msg("pid %d never mapped %s", (int)pid, needle);
}

/* fork + exec ARGV[0]; returns once the exec happened (close-on-exec pipe
 * reaches EOF) and the loader mapped libc. */
static pid_t spawn(char *const argv[])
{
	int fds[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* no stray child when a failed assertion ends the test early */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 0);
	close(fds[0]);
	wait_mapped(pid, "/libc.so.6");
	return pid;
}

static void reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

/* The invariants every result must keep. */
static void check_objects(pid_t pid, const struct proc_object *objs, size_t n)
{
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root/", (int)pid);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(objs[i].path);
		assert_non_null(objs[i].open_path);
		assert_int_equal(objs[i].path[0], '/');
		assert_false(has_prefix(objs[i].path, "/memfd:"));
		if (!objs[i].deleted) {
			assert_true(has_prefix(objs[i].open_path, root));
			assert_string_equal(objs[i].open_path + strlen(root) - 1, objs[i].path);
		}
		/* the others in address order */
		if (i >= 2)
			assert_true(objs[i - 1].start < objs[i].start);
		for (size_t j = 0; j < i; j++)
			assert_false(objs[j].dev == objs[i].dev && objs[j].inode == objs[i].inode);
	}
}

/* ---- proc_objects__read ---- */

static void test_read_self(void **state)
{
	struct proc_object *objs = NULL;
	struct stat exe_st, libc_st;
	size_t n = 0, libc = SIZE_MAX;
	pid_t pid = getpid();
	char root[64];
	int fd;

	assert_int_equal(proc_objects__read(pid, &objs, &n), 0);
	assert_non_null(objs);
	assert_true(n >= 3); /* exe, libc, ld.so at least */
	check_objects(pid, objs, n);

	assert_int_equal(stat("/proc/self/exe", &exe_st), 0);
	assert_int_equal(objs[0].inode, exe_st.st_ino);
	assert_int_equal(objs[0].dev, exe_st.st_dev);
	assert_false(objs[0].deleted);

	snprintf(root, sizeof(root), "/proc/%d/root/", (int)pid);
	for (size_t i = 0; i < n; i++)
		if (has_suffix(objs[i].path, "/libc.so.6"))
			libc = i;
	assert_true(libc != SIZE_MAX && libc > 0);
	assert_true(has_prefix(objs[libc].open_path, root));
	assert_false(objs[libc].deleted);
	assert_int_equal(stat(objs[libc].open_path, &libc_st), 0);
	assert_int_equal(libc_st.st_ino, objs[libc].inode);
	assert_int_equal(libc_st.st_dev, objs[libc].dev);
	fd = open(objs[libc].open_path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	proc_objects__free(objs, n);
}

static void test_read_child(void **state)
{
	char *argv[] = { "/bin/sleep", "1000", NULL };
	struct proc_object *objs = NULL;
	char want[4200], real[4096];
	struct stat st;
	size_t n = 0;
	pid_t pid = spawn(argv);

	assert_int_equal(proc_objects__read(pid, &objs, &n), 0);
	check_objects(pid, objs, n);
	assert_true(n >= 3);
	/* maps names the file after symlinks: /bin may point at usr/bin */
	assert_non_null(realpath("/bin/sleep", real));
	assert_int_equal(stat(real, &st), 0);
	assert_string_equal(objs[0].path, real);
	assert_int_equal(objs[0].inode, st.st_ino);
	snprintf(want, sizeof(want), "/proc/%d/root%s", (int)pid, real);
	assert_string_equal(objs[0].open_path, want);
	assert_false(objs[0].deleted);
	proc_objects__free(objs, n);
	reap(pid);
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in, out, ret = -1;
	ssize_t len;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (out < 0)
		goto done;
	while ((len = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)len) != len)
			goto done;
	ret = len == 0 ? 0 : -1;
done:
	if (out >= 0)
		close(out);
	close(in);
	return ret;
}

static void test_read_deleted_exe(void **state)
{
	char dir[] = "/tmp/cmon-procmaps-XXXXXX", exe[128], prefix[64];
	struct proc_object *objs = NULL;
	uint64_t lo, hi;
	unsigned char magic[4];
	struct stat st;
	size_t n = 0;
	int fd, used = 0;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	/* a blank in the name too: maps prints it as is */
	snprintf(exe, sizeof(exe), "%s/sleep copy", dir);
	assert_int_equal(copy_file("/bin/sleep", exe, 0755), 0);
	assert_int_equal(stat(exe, &st), 0);
	{
		char *argv[] = { exe, "1000", NULL };

		pid = spawn(argv);
	}
	assert_int_equal(unlink(exe), 0);
	assert_int_equal(rmdir(dir), 0);

	assert_int_equal(proc_objects__read(pid, &objs, &n), 0);
	check_objects(pid, objs, n);
	assert_true(n >= 3);
	assert_true(objs[0].deleted);
	assert_string_equal(objs[0].path, exe);
	assert_int_equal(objs[0].inode, st.st_ino);
	assert_int_equal(objs[0].dev, st.st_dev);
	snprintf(prefix, sizeof(prefix), "/proc/%d/map_files/", (int)pid);
	assert_true(has_prefix(objs[0].open_path, prefix));
	/* "START-END", lower-case hex without 0x, one executable mapping */
	assert_int_equal(sscanf(objs[0].open_path + strlen(prefix),
				"%" SCNx64 "-%" SCNx64 "%n", &lo, &hi, &used), 2);
	assert_int_equal(used, strlen(objs[0].open_path + strlen(prefix)));
	assert_true(lo >= objs[0].start && lo < hi);
	assert_null(strpbrk(objs[0].open_path + strlen(prefix), "ABCDEFx"));

	/* the deleted file can still be read through it */
	fd = open(objs[0].open_path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, magic, 4), 4);
	assert_memory_equal(magic, "\177ELF", 4);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_ino, objs[0].inode);
	close(fd);

	/* the libraries are not deleted and stay under /proc/PID/root */
	for (size_t i = 1; i < n; i++)
		assert_false(objs[i].deleted);
	proc_objects__free(objs, n);
	reap(pid);
}

/* A forked child (our own executable) that maps files by hand below its
 * executable: /bin/true readable at 0x180000 and executable at 0x200000,
 * /bin/sleep only readable, an executable memfd. */
static void test_read_hand_mappings(void **state)
{
	struct proc_object *objs = NULL;
	struct stat exe_st, true_st, sleep_st;
	bool found_true = false;
	int fds[2];
	size_t n = 0;
	char c;
	pid_t pid;

	assert_int_equal(stat("/bin/true", &true_st), 0);
	assert_int_equal(stat("/bin/sleep", &sleep_st), 0);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int t = open("/bin/true", O_RDONLY), s = open("/bin/sleep", O_RDONLY);
		int m = memfd_create("cmon-test", 0);
		int flags = MAP_PRIVATE | MAP_FIXED_NOREPLACE;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (t < 0 || s < 0 || m < 0 || ftruncate(m, 4096) ||
		    mmap((void *)0x180000, 4096, PROT_READ, flags, t, 0) == MAP_FAILED ||
		    mmap((void *)0x200000, 4096, PROT_READ | PROT_EXEC, flags, t, 0) == MAP_FAILED ||
		    mmap((void *)0x300000, 4096, PROT_READ, flags, s, 0) == MAP_FAILED ||
		    mmap((void *)0x400000, 4096, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED_NOREPLACE,
			 m, 0) == MAP_FAILED)
			_exit(1);
		if (write(fds[1], "k", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);

	{
		char exe[64];

		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
		assert_int_equal(stat(exe, &exe_st), 0);
	}
	assert_int_equal(proc_objects__read(pid, &objs, &n), 0);
	check_objects(pid, objs, n);
	assert_true(n >= 3);
	/* the executable first, though /bin/true lies below it */
	assert_int_equal(objs[0].inode, exe_st.st_ino);
	assert_int_equal(objs[0].dev, exe_st.st_dev);
	for (size_t i = 1; i < n; i++) {
		if (objs[i].inode != true_st.st_ino || objs[i].dev != true_st.st_dev)
			continue;
		/* the lowest mapping, though that one is not executable */
		assert_int_equal(objs[i].start, 0x180000);
		assert_false(objs[i].deleted);
		found_true = true;
	}
	assert_true(found_true);
	for (size_t i = 0; i < n; i++) {
		assert_false(objs[i].inode == sleep_st.st_ino && objs[i].dev == sleep_st.st_dev);
		assert_null(strstr(objs[i].path, "cmon-test"));
	}
	proc_objects__free(objs, n);
	reap(pid);
}

static pid_t exited_child(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	return pid;
}

static void test_read_no_such_process(void **state)
{
	struct proc_object *objs = (void *)1;
	size_t n = 7;
	int status;
	pid_t pid = exited_child();

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(proc_objects__read(pid, &objs, &n), -ESRCH);
	assert_null(objs);
	assert_int_equal(n, 0);
	assert_int_equal(proc_objects__read(-5, &objs, &n), -ESRCH);
}

static void test_read_permission(void **state)
{
	pid_t parent = getpid(), pid;
	int status;

	if (geteuid() != 0)
		skip();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct proc_object *objs;
		size_t n;
		int ret;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(100);
		ret = proc_objects__read(parent, &objs, &n);
		_exit(ret == -EACCES ? 0 : 101);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- proc__alive ---- */

static void test_alive(void **state)
{
	siginfo_t info;
	int status;
	pid_t pid;

	assert_true(proc__alive(getpid()));
	assert_false(proc__alive(0));
	assert_false(proc__alive(-1));

	/* a zombie: exited, not reaped (WNOWAIT waits without reaping) */
	pid = exited_child();
	memset(&info, 0, sizeof(info));
	assert_int_equal(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
	assert_int_equal(info.si_pid, pid);
	assert_false(proc__alive(pid));

	/* reaped */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_false(proc__alive(pid));
}

static void test_alive_running_child(void **state)
{
	char *argv[] = { "/bin/sleep", "1000", NULL };
	pid_t pid = spawn(argv);

	assert_true(proc__alive(pid));
	reap(pid);
	assert_false(proc__alive(pid));
}

/* ---- proc__stat ---- */

/* Field N (1-based, N > 2) of /proc/PID/stat, split independently. */
static unsigned long long stat_field(pid_t pid, int n)
{
	char path[64], buf[1024], *q, *save = NULL, *tok;
	FILE *f;
	size_t len;
	int field = 3;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	q = strrchr(buf, ')');
	assert_non_null(q);
	for (tok = strtok_r(q + 2, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++)
		if (field == n)
			return strtoull(tok, NULL, 10);
	fail_msg("no field %d", n);
	return 0;
}

/* The start time is field 22, not field 23 (vsize): the Python hook's
 * sharing keys a process by it, and a vsize changes under it. */
static void test_stat_start_time(void **state)
{
	char *argv[] = { "/bin/sleep", "1000", NULL };
	unsigned long long start = 1, vsize;
	pid_t pid = spawn(argv);

	(void)state;
	assert_int_not_equal(proc__stat(pid, 0, &start), 0);
	vsize = stat_field(pid, 23);
	assert_int_equal(start, stat_field(pid, 22));
	assert_int_not_equal(start, vsize);
	assert_int_equal(proc__stat(getpid(), 0, &start), 'R');
	assert_int_equal(start, stat_field(getpid(), 22));
	reap(pid);
	assert_int_equal(proc__stat(pid, 0, &start), 0);
	assert_int_equal(start, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_read_child),
		cmocka_unit_test(test_read_deleted_exe),
		cmocka_unit_test(test_read_hand_mappings),
		cmocka_unit_test(test_read_no_such_process),
		cmocka_unit_test(test_read_permission),
		cmocka_unit_test(test_alive),
		cmocka_unit_test(test_alive_running_child),
		cmocka_unit_test(test_stat_start_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
