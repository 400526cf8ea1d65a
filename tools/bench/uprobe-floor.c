// uprobe-floor [--ret | --clock] BINARY FUNC -- CMD ARGS...
//
// Runs CMD with an empty uprobe (and, with --ret, an empty uretprobe) on
// FUNC in BINARY, scoped to CMD's pid: the cheapest tracing any uprobe tool
// can do, which the benchmark uses as its floor.  --clock: a uprobe and a
// uretprobe that only read the clock, the floor of any latency profile.
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "floor.skel.h"

static int silent_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_WARN)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: uprobe-floor [--ret | --clock] BINARY FUNC -- CMD ARGS...\n");
}

int main(int argc, char **argv)
{
	struct floor_bpf *skel = NULL;
	struct bpf_link *entry = NULL, *ret = NULL;
	bool with_ret = false, with_clock = false;
	int go[2] = { -1, -1 };
	pid_t child = -1;
	int status = 0, rc = 1, argi = 1;

	if (argi < argc && strcmp(argv[argi], "--ret") == 0) {
		with_ret = true;
		argi++;
	} else if (argi < argc && strcmp(argv[argi], "--clock") == 0) {
		with_ret = with_clock = true;
		argi++;
	}
	if (argc - argi < 4 || strcmp(argv[argi + 2], "--") != 0) {
		usage();
		return 2;
	}
	const char *binary = argv[argi];
	const char *func = argv[argi + 1];
	char **cmd = &argv[argi + 3];

	libbpf_set_print(silent_print);

	// The child waits on a pipe so the probes are in place before it execs.
	if (pipe(go) < 0) {
		perror("pipe");
		goto cleanup;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		goto cleanup;
	}
	if (child == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		close(go[0]);
		execvp(cmd[0], cmd);
		perror(cmd[0]);
		_exit(127);
	}
	close(go[0]);
	go[0] = -1;

	skel = floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "uprobe-floor: load: %s\n", strerror(errno));
		goto cleanup;
	}

	LIBBPF_OPTS(bpf_uprobe_opts, eopts, .func_name = func);
	entry = bpf_program__attach_uprobe_opts(with_clock ? skel->progs.floor_clock_entry
							   : skel->progs.floor_entry, child,
						binary, 0, &eopts);
	if (!entry) {
		fprintf(stderr, "uprobe-floor: attach %s:%s: %s\n", binary,
			func, strerror(errno));
		goto cleanup;
	}
	if (with_ret) {
		LIBBPF_OPTS(bpf_uprobe_opts, ropts, .func_name = func,
			    .retprobe = true);
		ret = bpf_program__attach_uprobe_opts(with_clock ? skel->progs.floor_clock_return
								 : skel->progs.floor_return,
						      child, binary, 0, &ropts);
		if (!ret) {
			fprintf(stderr, "uprobe-floor: attach ret %s:%s: %s\n",
				binary, func, strerror(errno));
			goto cleanup;
		}
	}

	if (write(go[1], "g", 1) != 1) {
		perror("write");
		goto cleanup;
	}
	close(go[1]);
	go[1] = -1;
	if (waitpid(child, &status, 0) < 0) {
		perror("waitpid");
		goto cleanup;
	}
	child = -1;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

cleanup:
	if (go[1] >= 0)
		close(go[1]); // an unreleased child reads EOF and exits
	if (go[0] >= 0)
		close(go[0]);
	if (child > 0)
		waitpid(child, NULL, 0);
	bpf_link__destroy(ret);
	bpf_link__destroy(entry);
	floor_bpf__destroy(skel);
	return rc;
}
