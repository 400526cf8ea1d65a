// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "core/clock.h"
#include "core/file.h"
#include "output/ch_url.h"
#include "output/outpath.h"
#include "cli/commands.h"
#include "core/log.h"
#include "core/privilege.h"
#include "output/stream.h"
#include "proc/libpath.h"
#include "proc/procmaps.h"
#include "event/tracer.h"
#include "probe/follow.h"
#include "python/cpython.h"
#include "session.h"

volatile sig_atomic_t session_stop_signal;

/* Start-up (session__starting): a signal ends cmon at once, the launched
 * program killed before it ran, the output file it made removed; the BPF
 * objects go with the process.  (The kernel's verifier, seconds for
 * thousands of typed functions, is retried by libbpf when a signal cuts
 * it short: a flag checked after it came too late.) */
static volatile sig_atomic_t starting, progress_shown;
static volatile pid_t starting_child = -1;
static const char *volatile starting_output;

static const char interrupted[] = "cmon: interrupted while starting: nothing was traced\n";

void session__say_interrupted(void)
{
	fputs(interrupted, stderr);
}

static void on_signal(int sig)
{
	int saved = errno;

	session_stop_signal = sig;
	if (starting) {
		if (starting_child > 0)
			kill(starting_child, SIGKILL);
		if (starting_output)
			unlink(starting_output);
		if (progress_shown && write(STDERR_FILENO, "\n", 1) < 0)
			_exit(0);
		if (write(STDERR_FILENO, interrupted, sizeof(interrupted) - 1) < 0)
			_exit(0);
		_exit(0);
	}
	errno = saved;
}

/* What start-up is doing, said on a terminal once it takes more than a
 * moment: a line a step. */
static struct {
	pthread_t thread;
	bool running;
	double since;
	const char *volatile what;
} progress;

static void *progress_main(void *arg)
{
	const char *said = NULL;

	(void)arg;
	while (starting) {
		const char *what = progress.what;
		double t = clock__mono_s() - progress.since;

		if (t >= 0.5 && what && what != said) {
			fprintf(stderr, "cmon: starting (%.1f s): %s; Ctrl-C stops it\n", t, what);
			progress_shown = 1;
			said = what;
		}
		poll(NULL, 0, 50);
	}
	return NULL;
}

void session__starting(struct session *s, bool on)
{
	if (on && !starting) {
		starting_child = s->launched ? s->launch.pid : -1;
		starting_output = s->out_created ? s->out_path : NULL;
		progress.since = clock__mono_s();
		progress.what = NULL;
		starting = 1;
		/* a signal that came before this point is handled as before */
		if (session_stop_signal) {
			starting = 0;
			return;
		}
		progress.running = isatty(STDERR_FILENO) && !s->opts->quiet &&
				   !pthread_create(&progress.thread, NULL, progress_main, NULL);
	} else if (!on && starting) {
		starting = 0;
		if (progress.running)
			pthread_join(progress.thread, NULL);
		progress.running = false;
	}
}

void session__step(const char *what)
{
	progress.what = what;
}

static void *stdout_buf; /* stdout's buffer, once set: it lives until exit */

void session__init(struct session *s, const struct cmd_opts *opts)
{
	memset(s, 0, sizeof(*s));
	s->opts = opts;
	s->launch.pid = -1;
	s->launch.go_fd = s->launch.err_fd = s->launch.pidfd = -1;
	s->wake_fd = -1;
}

int session__parse_patterns(struct session *s)
{
	s->patterns = calloc(s->opts->n_funcs + 1, sizeof(*s->patterns));
	if (!s->patterns)
		return -ENOMEM;
	for (size_t i = 0; i < s->opts->n_funcs; i++) {
		if (funcpattern__parse(s->opts->funcs[i], &s->patterns[i])) {
			log_error("invalid function pattern '%s'", s->opts->funcs[i]);
			return -EINVAL;
		}
	}
	s->n_patterns = s->opts->n_funcs;
	/* --py: CPython's evaluator is the one C function probed for them. */
	if (s->opts->n_py && funcpattern__parse(PY_EVAL_FUNC, &s->patterns[s->n_patterns++]))
		return -EINVAL;
	s->lines_of = calloc(s->opts->n_lines_of ? s->opts->n_lines_of : 1, sizeof(*s->lines_of));
	if (!s->lines_of)
		return -ENOMEM;
	for (size_t i = 0; i < s->opts->n_lines_of; i++) {
		if (funcpattern__parse(s->opts->lines_of[i], &s->lines_of[i]) ||
		    s->lines_of[i].exclude) {
			log_error("invalid --lines pattern '%s'", s->opts->lines_of[i]);
			return -EINVAL;
		}
	}
	s->focus = calloc(s->opts->n_focus ? s->opts->n_focus : 1, sizeof(*s->focus));
	if (!s->focus)
		return -ENOMEM;
	for (size_t i = 0; i < s->opts->n_focus; i++) {
		if (funcpattern__parse(s->opts->focus[i], &s->focus[i]) || s->focus[i].exclude) {
			log_error("invalid --focus pattern '%s'", s->opts->focus[i]);
			return -EINVAL;
		}
	}
	return 0;
}

int session__open_output(struct session *s, size_t bufsize)
{
	const char *path = s->opts->output;
	int fd, err;

	/* "%%" alone: one file, its name with a '%'. */
	if (path && strchr(path, '%') && !out_path__per_process(path) &&
	    strncmp(path, "unix:", 5)) {
		free(s->out_name);
		if (out_path__expand(path, 0, "", NULL, &s->out_name))
			return -ENOMEM;
		path = s->out_name;
	}
	if (path && ch_url__is(path)) {
		s->out = NULL; /* a ClickHouse table: the router's sink */
		return 0;
	}
	if (path && out_path__per_process(path)) {
		s->out = NULL; /* one file per process, made at its first record */
		return 0;
	} else if (!path || !strcmp(path, "-")) {
		s->out = stdout;
	} else if (!strncmp(path, "unix:", 5)) {
		/* Served live (stream.h): buffered, sent after each drain. */
		s->out = stream__open(path + 5);
		if (!s->out) {
			err = -errno;
			log_error("cannot serve on %s: %s", path + 5, strerror(-err));
			return err;
		}
		s->out_owned = true;
		s->out_live = true;
		return 0;
	} else {
		struct stat st;

		/* Not truncated yet: a run that fails before it starts leaves a
		 * file that was there as it was (session__start_output). */
		s->out_created = stat(path, &st) != 0;
		/* A new file is the user's alone (README: Files cmon writes). */
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			err = -errno;
			log_error("cannot write %s: %s", path, strerror(-err));
			return err;
		}
		s->out_path = path;
		s->out = fdopen(fd, "w");
		if (!s->out) {
			close(fd);
			return -ENOMEM;
		}
		s->out_owned = true;
	}
	/* Writers format whole records: one write per many of them.  Stdout's
	 * buffer is used until exit: kept, never freed. */
	if (s->out != stdout)
		s->out_buf = file__buffer(s->out, bufsize);
	else if (!stdout_buf)
		stdout_buf = file__buffer(stdout, bufsize);
	return 0;
}

int session__start_output(struct session *s)
{
	struct stat st;

	if (s->out_started || !s->out_path)
		return 0;
	s->out_started = true;
	/* Only a regular file is emptied (not a FIFO, a tty or /dev/null). */
	if (!fstat(fileno(s->out), &st) && S_ISREG(st.st_mode) && ftruncate(fileno(s->out), 0)) {
		int err = -errno;

		log_error("cannot write %s: %s", s->out_path, strerror(-err));
		return err;
	}
	return 0;
}


/* Does PATH start as an ELF file does? */
static bool is_elf(const char *path)
{
	char magic[4] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool elf = fd >= 0 && read(fd, magic, 4) == 4 && !memcmp(magic, "\177ELF", 4);

	if (fd >= 0)
		close(fd);
	return elf;
}

/* A file running CPython, whatever its version (--py then says whether
 * it knows it, before it runs). */
static bool is_cpython(void *ctx, const char *exe)
{
	(void)ctx;
	return pyinterp__is_python(exe);
}

int session__start_program(struct session *s)
{
	bool through;
	int err;

	if (!s->opts->cmd)
		return 0;
	err = libpath__find_exe(s->opts->cmd[0], &s->launch_path);
	if (err) {
		log_error("%s: %s", s->opts->cmd[0], strerror(-err));
		return err;
	}
	s->launch.stop_at_exec = s->opts->n_watches > 0;
	/* --py through a script (#!) or a pyenv shim: the CPython it runs */
	through = s->opts->n_py && !is_elf(s->launch_path);
	if (through)
		s->launch.stop_at_exec = true;
	err = launch__start(s->launch_path, s->opts->cmd, &s->launch);
	if (err) {
		log_error("cannot start %s: %s", s->launch_path, strerror(-err));
		return err;
	}
	s->launched = true;
	if (through) {
		char *exe = NULL;

		err = launch__run_to(&s->launch, is_cpython, NULL, &exe);
		if (err) {
			log_error("%s ran no CPython%s%s%s", s->launch_path, exe ? " (it ran " : "",
				  exe ? exe : "", exe ? " last)" : "");
			free(exe);
			s->launched = s->launch.pid > 0;
			return err == -ENOENT ? -ENOEXEC : err;
		}
		log_info("--py: %s runs %s", s->launch_path, exe);
		free(s->launch_path);
		s->launch_path = exe;
	}
	return 0;
}

/* Is /proc/PID/exe a container runtime's memfd copy of itself (runc's,
 * before it execs the container's program)? */
static bool runtime_exe(pid_t pid)
{
	char link[32], exe[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	return n > 7 && !strncmp(exe, "/memfd:", 7);
}

static bool only_runtime(const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!runtime_exe(pids[i]))
			return false;
	return true;
}

/* --cgroup / --container: the cgroup and its processes now; while it has
 * none (but a runtime starting one), wait for one (the run covers what its
 * processes run). */
static int open_cgroup(struct session *s)
{
	const struct cmd_opts *o = s->opts;
	bool said = false;
	int err;

	if (!o->cgroup && !o->container)
		return 0;
	err = o->cgroup ? cgroup__resolve(o->cgroup, &s->cgroup)
			: cgroup__find_container(o->container, &s->cgroup);
	if (err)
		return err;
	s->cgroup_on = true;
	if ((o->container ? asprintf(&s->cgroup_desc, "container %s (cgroup %s)", o->container,
				     s->cgroup.rel)
			  : asprintf(&s->cgroup_desc, "cgroup %s", s->cgroup.rel)) < 0 ||
	    !(s->cg_names = cgroup_names__new())) {
		s->cgroup_desc = NULL;
		log_error("out of memory");
		return -ENOMEM;
	}
	for (;;) {
		free(s->cg_pids);
		s->cg_pids = NULL;
		err = cgroup__pids(&s->cgroup, &s->cg_pids, &s->n_cg_pids);
		if (err) {
			log_error("%s: %s", s->cgroup_desc,
				  err == -ENOENT ? "removed" : strerror(-err));
			return err;
		}
		if (s->n_cg_pids && !only_runtime(s->cg_pids, s->n_cg_pids))
			return 0;
		if (!said && !o->quiet)
			fprintf(stderr, "cmon: %s has no process yet: waiting for one\n",
				s->cgroup_desc);
		said = true;
		usleep(20 * 1000);
	}
}

/* cg_seen: a process's executable (inode), and whether it was decided. */
#define EXE_DECIDED (1ull << 63)

static uint64_t exe_ino(pid_t pid)
{
	char link[32];
	struct stat st;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	return stat(link, &st) ? 0 : (uint64_t)st.st_ino & ~EXE_DECIDED;
}

void session__cover_cgroup(struct session *s, const struct probe_set *set)
{
	s->cg_set = set;
	/* The processes resolved are covered (in what they run now). */
	for (size_t i = 0; i < s->n_cg_pids; i++) {
		uint64_t *v = hmap__get(&s->cg_seen, &s->cg_pids[i], sizeof(pid_t), NULL);

		if (v)
			*v = exe_ino(s->cg_pids[i]) | EXE_DECIDED;
	}
}

const char *session__cgroup_of(struct session *s, pid_t pid)
{
	const char *name;

	if (!s->cgroup_on)
		return NULL;
	name = cgroup_names__of(s->cg_names, pid);
	return name ? name : s->cgroup.rel;
}

/* A process of the cgroup: is its executable one the probes cover?  The
 * probes are on files: a process running another one is not traced; say
 * so once per file.  Decided when a process has run the same file for two
 * scans: a runtime's or a shell's moments before its exec are not. */
static void cgroup_check_pid(struct session *s, pid_t pid)
{
	char link[32], exe[PATH_MAX];
	struct stat st;
	ssize_t n;
	bool covered = false, added;
	uint64_t *said, *seen;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0 || stat(link, &st))
		return; /* gone, or a kernel thread */
	exe[n] = '\0';
	seen = hmap__get(&s->cg_seen, &pid, sizeof(pid), &added);
	if (!seen || (*seen & EXE_DECIDED && (*seen & ~EXE_DECIDED) == (uint64_t)st.st_ino))
		return;
	if (added || *seen != (uint64_t)st.st_ino) {
		*seen = (uint64_t)st.st_ino; /* seen running it: decided next time */
		return;
	}
	*seen |= EXE_DECIDED;
	/* A runtime's own start (runc's memfd copy of itself) before the exec. */
	if (runtime_exe(pid))
		return;
	for (size_t i = 0; s->cg_set && i < s->cg_set->n_objects && !covered; i++)
		covered = s->cg_set->objects[i].dev == (uint64_t)st.st_dev &&
			  s->cg_set->objects[i].ino == (uint64_t)st.st_ino;
	said = covered ? NULL : hmap__get(&s->cg_said, exe, strlen(exe), &added);
	if (said && added && !s->opts->quiet)
		fprintf(stderr, "cmon: process %d in %s runs %s, which none of its processes ran "
			"when cmon started: it is not traced (run cmon again to cover it)\n",
			(int)pid, s->cgroup_desc, exe);
}

/* Once a second: the cgroup removed ends the run; new processes checked. */
static bool cgroup_scan(struct session *s)
{
	pid_t *pids = NULL;
	size_t n = 0;
	double now = clock__mono_s();

	if (now < s->cg_next_scan)
		return false;
	s->cg_next_scan = now + 1.0;
	if (cgroup__pids(&s->cgroup, &pids, &n) == -ENOENT) {
		if (!s->opts->quiet)
			fprintf(stderr, "cmon: %s was removed\n", s->cgroup_desc);
		return s->cgroup_gone = true;
	}
	for (size_t i = 0; i < n; i++)
		cgroup_check_pid(s, pids[i]);
	free(pids);
	return false;
}

int session__begin(struct session *s, size_t out_bufsize)
{
	int err = privilege__check();

	if (!err)
		err = session__parse_patterns(s);
	if (!err)
		err = open_cgroup(s);
	if (!err && out_bufsize)
		err = session__open_output(s, out_bufsize);
	if (!err)
		err = session__start_program(s);
	return err;
}

int session__open_pidfds(struct session *s)
{
	size_t n = s->opts->n_pids ? s->opts->n_pids : 1;

	s->pidfds = calloc(n, sizeof(*s->pidfds));
	s->pid_gone = calloc(n, sizeof(*s->pid_gone));
	if (!s->pidfds || !s->pid_gone) {
		log_error("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->opts->n_pids; i++)
		s->pidfds[i] = (int)syscall(SYS_pidfd_open, s->opts->pids[i], 0);
	return 0;
}

void session__resolve_opts(const struct session *s, struct resolve_opts *ro)
{
	ro->pids = s->opts->pids;
	ro->n_pids = s->opts->n_pids;
	ro->binary = s->opts->binary;
	ro->cgroup_pids = s->cg_pids;
	ro->n_cgroup_pids = s->n_cg_pids;
	ro->cgroup_desc = s->cgroup_desc;
	ro->launch_exe = s->launch_path;
	ro->launch_pid = s->launched ? s->launch.pid : 0;
	ro->launch_execed = s->launched && s->launch.ran_to;
	ro->patterns = s->patterns;
	ro->n_patterns = s->n_patterns;
	ro->usdts = s->opts->usdts;
	ro->n_usdts = s->opts->n_usdts;
	ro->lines = s->opts->lines;
	ro->n_lines = s->opts->n_lines;
	ro->lines_of = s->lines_of;
	ro->n_lines_of = s->opts->n_lines_of;
	ro->focus = s->focus;
	ro->n_focus = s->opts->n_focus;
}

int session__release(struct session *s)
{
	int err;

	/* Stopped while starting: the program is not run (untraced). */
	if (!s->launched || session_stop_signal)
		return 0;
	err = launch__release(&s->launch);
	if (err)
		log_error("cannot run %s: %s", s->launch_path, strerror(-err));
	return err;
}

int session__continue(struct session *s)
{
	int err;

	if (!s->launched)
		return 0;
	err = launch__continue(&s->launch);
	if (err)
		log_error("cannot let %s go on: %s", s->launch_path, strerror(-err));
	return err;
}

void session__cover_binary(struct session *s, uint64_t dev, uint64_t ino)
{
	s->binary_dev = dev;
	s->binary_ino = ino;
}

/* The links are on the old inode: a file put in its place (an upgrade, a
 * rebuild) runs untraced.  Say so rather than trace less in silence. */
static void check_binary(struct session *s)
{
	struct stat st;

	if (!s->opts->binary || s->binary_moved || !s->binary_ino)
		return;
	if (!stat(s->opts->binary, &st) && (uint64_t)st.st_dev == s->binary_dev &&
	    (uint64_t)st.st_ino == s->binary_ino)
		return;
	s->binary_moved = true;
	fprintf(stderr, "cmon: %s was replaced or removed on disk: processes started from "
		"the new file are not traced (run cmon again to cover them)\n", s->opts->binary);
}

pid_t *session__roots(const struct session *s, size_t *n)
{
	pid_t *roots = calloc(s->opts->n_pids + 1, sizeof(*roots));

	*n = 0;
	for (size_t i = 0; roots && i < s->opts->n_pids; i++)
		roots[(*n)++] = s->opts->pids[i];
	if (roots && s->launched && s->launch.pid > 0)
		roots[(*n)++] = s->launch.pid;
	return roots;
}

bool session__targets_gone(struct session *s, int *status, bool *have_status)
{
	bool all = true, reaped = false;

	check_binary(s);
	if (s->cgroup_on)
		return s->cgroup_gone || cgroup_scan(s);
	/* Reaped before the followed processes are counted: a count taken
	 * first (a scan attaching children's links can take long) would still
	 * hold the children the program waited for, and the program itself. */
	if (s->launched && !s->launch_reaped && launch__reap(&s->launch, status, 0)) {
		*have_status = true;
		s->launch_reaped = reaped = true;
	}
	if (s->follow) {
		int n = follow__scan(s->follow);

		s->followed_alive = n < 0 ? 1 : n; /* an error: keep going */
	}
	if (s->launched) {
		if (reaped && s->follow && s->followed_alive && !s->opts->quiet)
			fprintf(stderr, "cmon: %s exited; following the %d process%s it left "
					"running (until %s, or a signal)\n",
				s->launch_path, s->followed_alive,
				s->followed_alive == 1 ? "" : "es",
				s->followed_alive == 1 ? "it exits" : "they exit");
		return s->launch_reaped && (!s->follow || !s->followed_alive);
	}
	if (!s->opts->n_pids)
		return false;
	for (size_t i = 0; i < s->opts->n_pids; i++) {
		struct pollfd p = { .fd = s->pidfds[i], .events = POLLIN };

		if (s->pid_gone[i])
			continue;
		if (s->pidfds[i] < 0)
			s->pid_gone[i] = !proc__alive(s->opts->pids[i]);
		else
			s->pid_gone[i] = poll(&p, 1, 0) > 0;
		all = all && s->pid_gone[i];
	}
	return all && (!s->follow || !s->followed_alive);
}

void session__wait(struct session *s, double timeout_s)
{
	struct pollfd fds[64];
	nfds_t n = 0;
	int ms = (int)(timeout_s * 1000) + 1;

	/* Following: a new child's library links wait for the next scan. */
	if (s->follow && ms > 10)
		ms = 10;

	if (s->wake_fd >= 0)
		fds[n++] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
	if (s->launched && s->launch.pidfd >= 0 && !s->launch_reaped)
		fds[n++] = (struct pollfd){ .fd = s->launch.pidfd, .events = POLLIN };
	for (size_t i = 0; i < s->opts->n_pids && n < sizeof(fds) / sizeof(fds[0]); i++)
		if (s->pidfds[i] >= 0 && !s->pid_gone[i])
			fds[n++] = (struct pollfd){ .fd = s->pidfds[i], .events = POLLIN };
	poll(n ? fds : NULL, n, ms);
}

void session__install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}


void session__say_room_waits(const struct tracer *t)
{
	struct cmon_room_waits w;

	tracer__room_waits(t, &w);
	fprintf(stderr, "cmon: waited for room: %llu times, %llu ms\n", (unsigned long long)w.times,
		(unsigned long long)(w.ns / 1000000));
	log_info("waits given up: %llu (the timeout passed); records not made to wait: %llu "
		 "(the consumer had stopped)", (unsigned long long)w.given_up,
		 (unsigned long long)w.skipped);
}

void session__say_py_untraced(const struct tracer *t)
{
	unsigned max;
	uint64_t n = t ? tracer__py_procs_full(t, &max) : 0;

	if (n)
		fprintf(stderr, "cmon: python calls not traced: %llu (made in forked children "
				"while %u interpreter processes were traced at once, the most "
				"cmon holds; counted lost)\n", (unsigned long long)n, max);
}

void session__say_unmatched_py(const struct session *s, struct pytrace *py)
{
	const char *const *none;
	size_t n;

	none = pytrace__unmatched(py, &n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s%s", i ? ", " : s->opts->n_pids ?
				"cmon: --py patterns that matched no function so far: " :
				"cmon: --py patterns that matched no function: ",
			none[i], i + 1 == n ? "\n" : "");
}

int session__exit_status(int err, uint64_t lost, bool have_status, int status)
{
	if (err)
		return CMON_EXIT_ERROR;
	if (have_status) {
		if (WIFSIGNALED(status))
			return 128 + WTERMSIG(status);
		if (WIFEXITED(status) && WEXITSTATUS(status))
			return WEXITSTATUS(status);
	}
	return lost ? CMON_EXIT_LOST : CMON_EXIT_OK;
}

void session__cleanup(struct session *s)
{
	if (s->launched && (s->launch.go_fd >= 0 || s->launch.stopped))
		launch__abort(&s->launch); /* never released: do not run it untraced */
	else if (s->launched)
		launch__close(&s->launch);
	if (s->out_owned && s->out)
		fclose(s->out);
	else if (s->out)
		fflush(s->out);
	free(s->out_buf); /* after the stream that used it */
	if (s->out_path && s->out_created && !s->out_started)
		unlink(s->out_path); /* a run that never started: no empty file */
	for (size_t i = 0; s->patterns && i < s->opts->n_funcs + 1; i++)
		funcpattern__clear(&s->patterns[i]); /* the spare one is zeroed or --py's */
	free(s->patterns);
	for (size_t i = 0; s->focus && i < s->opts->n_focus; i++)
		funcpattern__clear(&s->focus[i]);
	free(s->focus);
	for (size_t i = 0; s->lines_of && i < s->opts->n_lines_of; i++)
		funcpattern__clear(&s->lines_of[i]);
	free(s->lines_of);
	free(s->out_name);
	for (size_t i = 0; s->pidfds && i < s->opts->n_pids; i++)
		if (s->pidfds[i] >= 0)
			close(s->pidfds[i]);
	free(s->pidfds);
	free(s->pid_gone);
	free(s->launch_path);
	cgroup_sel__clear(&s->cgroup);
	free(s->cgroup_desc);
	free(s->cg_pids);
	cgroup_names__free(s->cg_names);
	hmap__release(&s->cg_seen);
	hmap__release(&s->cg_said);
	s->cgroup_desc = NULL;
	s->cg_pids = NULL;
	s->cg_names = NULL;
	s->patterns = NULL;
	s->pidfds = NULL;
	s->pid_gone = NULL;
	s->launch_path = NULL;
	s->out = NULL;
}
