// peakrss FILE CMD ARGS...
//
// Runs CMD and writes its own peak RSS (VmHWM, kB) to FILE.  GNU time's %M
// cannot be used for tracers: the rusage wait4() returns merges in the
// descendants the tracer reaped, so a tracer's figure would be the traced
// program's whenever that is larger.  Here CMD is ptraced with
// PTRACE_O_TRACEEXIT, which stops it in do_exit() before its memory is
// released, and VmHWM is read from /proc then.  Children of CMD are not
// traced.  Exits with CMD's status.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static long read_hwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	long hwm = -1;
	int status, exec_seen = 0;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: peakrss FILE CMD ARGS...\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
			perror("ptrace");
			_exit(126);
		}
		execvp(argv[2], &argv[2]);
		perror(argv[2]);
		_exit(127);
	}
	for (;;) {
		if (waitpid(pid, &status, 0) < 0) {
			if (errno == EINTR)
				continue;
			perror("waitpid");
			return 1;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		if (!WIFSTOPPED(status))
			continue;

		int sig = WSTOPSIG(status), inject = 0;

		if (!exec_seen && sig == SIGTRAP) {
			// The stop after execve: from here on report exit, and
			// turn later execs (wrapper scripts) into events
			// instead of SIGTRAPs that would kill CMD.
			exec_seen = 1;
			ptrace(PTRACE_SETOPTIONS, pid, NULL,
			       (void *)(long)(PTRACE_O_TRACEEXIT |
					      PTRACE_O_TRACEEXEC |
					      PTRACE_O_EXITKILL));
		} else if (sig == SIGTRAP &&
			   (status >> 16) == PTRACE_EVENT_EXIT) {
			hwm = read_hwm_kb(pid);
		} else if (sig == SIGTRAP && (status >> 16) != 0) {
			// another ptrace event (exec): nothing to deliver
		} else {
			inject = sig; // pass ordinary signals through
		}
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)inject);
	}

	FILE *out = fopen(argv[1], "w");

	if (out) {
		fprintf(out, "%ld\n", hwm);
		fclose(out);
	} else {
		perror(argv[1]);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
