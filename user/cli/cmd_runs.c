// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_runs.c: capture stores as a set.
 *
 *   cmon ls DIR        DIR holds stores (run/, run-1/, ...): one line each,
 *                      command, start time, calls, size on disk; a store
 *                      folder libcmon cannot read (truncated, empty,
 *                      corrupted) as "damaged: " and the reason
 *   cmon rm RUN...     remove stores; anything that is not one is refused
 *                      (and then nothing is removed)
 *
 * A store is a folder holding calls.db (and SQLite's calls.db-wal,
 * calls.db-shm, calls.db-journal) that libcmon opens as a cmon store, or
 * that has cmon's name and fails only as corrupted or of another format
 * version (a store cut short by a crash is still removable).  rm never
 * follows a symlink and never removes a folder holding any other file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/grow.h"
#include "cli/options.h"
#include "cli/commands.h"
#include "cli/runs.h"
#include "cli/store_cli.h"
#include "core/log.h"

static const char *const store_files[] = {
	"calls.db", "calls.db-wal", "calls.db-shm", "calls.db-journal",
};

static bool is_store_file(const char *name)
{
	for (size_t i = 0; i < sizeof(store_files) / sizeof(store_files[0]); i++)
		if (!strcmp(name, store_files[i]))
			return true;
	return false;
}

/* Bytes of the store's files in folder PATH. */
static uint64_t store_bytes(const char *path)
{
	uint64_t total = 0;
	char *p = NULL;
	struct stat st;

	for (size_t i = 0; i < sizeof(store_files) / sizeof(store_files[0]); i++) {
		if (asprintf(&p, "%s/%s", path, store_files[i]) < 0)
			return total;
		if (!lstat(p, &st) && S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
		free(p);
	}
	return total;
}

bool runs__is_store_dir(const char *path)
{
	struct stat st;
	char *db = NULL;
	bool yes;

	if (asprintf(&db, "%s/calls.db", path) < 0)
		return false;
	/* Of any type: libcmon says what is wrong with one that is not a file. */
	yes = !lstat(db, &st);
	free(db);
	return yes;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int runs__list_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, stores = 0, others = 0, damaged = 0;
	int rc = CMON_EXIT_OK;

	if (!d) {
		log_error("ls: cannot open %s: %s", dir, strerror(errno));
		return CMON_EXIT_ERROR;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (GROW(names, n, cap, 32))
			break;
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	printf("%-24s %-36s %10s %12s  %s\n", "run", "start", "calls", "size", "command");
	for (size_t i = 0; i < n; i++) {
		struct cmon_store *s = NULL;
		const struct cmon_function *fs;
		char *path = NULL, start[64] = "-", size[32];
		const char *t;
		uint64_t calls = 0, ns;
		size_t nf = 0;
		char msg[1100];
		int err;

		if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
			rc = CMON_EXIT_ERROR;
			break;
		}
		if (!runs__is_store_dir(path)) {
			others++;
			free(path);
			continue;
		}
		err = cmon_store_open_ex(path, 0, &s, msg, sizeof(msg));
		if (err) {
			/* A store folder libcmon cannot read (truncated, empty,
			 * corrupted, another version): named, with the reason,
			 * not counted among the other entries. */
			const char *why = msg[0] ? msg : cmon_strerror(err);
			size_t pl = strlen(path);

			/* Its messages start with the file's path: the name says it. */
			if (!strncmp(why, "./", 2) && strncmp(path, "./", 2))
				why += 2;
			if (!strncmp(why, path, pl) && !strncmp(why + pl, "/calls.db: ", 11))
				why += pl + 11;
			damaged++;
			store_cli__put_safe(stdout, names[i]);
			printf("%*s damaged: ",
			       (int)(strlen(names[i]) < 24 ? 24 - strlen(names[i]) : 0), "");
			store_cli__put_safe(stdout, why);
			putchar('\n');
			free(path);
			continue;
		}
		stores++;
		if (!cmon_store_functions(s, &fs, &nf))
			for (size_t k = 0; k < nf; k++)
				calls += fs[k].calls;
		t = cmon_store_meta(s, "start_time_ns");
		if (t && !store_cli__parse_u64(t, &ns))
			store_cli__time(ns, start, sizeof(start));
		store_cli__bytes(store_bytes(path), size, sizeof(size));
		store_cli__put_safe(stdout, names[i]);
		printf("%*s %-36s %10" PRIu64 " %12s  ",
		       (int)(strlen(names[i]) < 24 ? 24 - strlen(names[i]) : 0), "", start, calls,
		       size);
		store_cli__put_safe(stdout, cmon_store_meta(s, "command_line") ?: "-");
		putchar('\n');
		cmon_store_close(s);
		free(path);
	}
	printf("%zu store%s", stores, stores == 1 ? "" : "s");
	if (damaged)
		printf(", %zu damaged", damaged);
	if (others)
		printf(" (%zu other entr%s, not stores)", others, others == 1 ? "y" : "ies");
	putchar('\n');
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (fflush(stdout))
		rc = CMON_EXIT_ERROR;
	return rc;
}

/* Why PATH is not a removable store (NULL: it is one); *DFD is then an
 * O_DIRECTORY fd on it. */
/* PATH's last component is . or .. (trailing slashes aside): rmdir(2)
 * refuses those, so the files would go and the folder stay. */
static bool ends_in_dot(const char *path)
{
	size_t n = strlen(path), b;

	while (n > 1 && path[n - 1] == '/')
		n--;
	b = n;
	while (b > 0 && path[b - 1] != '/')
		b--;
	return (n - b == 1 && path[b] == '.') || (n - b == 2 && path[b] == '.' && path[b + 1] == '.');
}

static const char *check_store(const char *path, int *dfd, struct stat *id)
{
	static char whybuf[128];
	struct cmon_store *s = NULL;
	struct stat st;
	struct dirent *e;
	const char *why = NULL;
	DIR *d;
	int fd, err;

	*dfd = -1;
	if (ends_in_dot(path))
		return "a path ending in . or .. (name the store folder itself)";
	if (lstat(path, &st))
		return strerror(errno);
	*id = st;
	if (S_ISLNK(st.st_mode))
		return "a symlink (not followed)";
	if (!S_ISDIR(st.st_mode))
		return "not a store folder";
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return strerror(errno);
	d = fdopendir(dup(fd));
	if (!d) {
		close(fd);
		return strerror(errno);
	}
	while (!why && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !is_store_file(e->d_name))
			why = "holds files that are not the store's";
	closedir(d);
	if (!why && fstatat(fd, "calls.db", &st, AT_SYMLINK_NOFOLLOW))
		why = "no calls.db: not a store";
	/* Before libcmon opens it: an open() of a FIFO there waits forever. */
	for (size_t i = 0; !why && i < sizeof(store_files) / sizeof(store_files[0]); i++)
		if (!fstatat(fd, store_files[i], &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode)) {
			snprintf(whybuf, sizeof(whybuf), "%s is %s, not a regular file",
				 store_files[i], S_ISLNK(st.st_mode) ? "a symlink" :
						 S_ISFIFO(st.st_mode) ? "a FIFO" : "not a file");
			why = whybuf;
		}
	if (!why) {
		err = cmon_store_open_ex(path, 0, &s, NULL, 0);
		if (err && err != CMON_ERR_CORRUPT && err != CMON_ERR_VERSION && err != CMON_ERR_BUSY)
			why = "calls.db is not a cmon store";
		cmon_store_close(s);
	}
	if (why) {
		close(fd);
		return why;
	}
	*dfd = fd;
	return NULL;
}

static void rm_usage(FILE *f)
{
	fprintf(f, "usage: cmon rm RUN...\n\nRemove capture stores.  Anything that is not one "
		   "(another folder, a file,\na symlink, a store folder holding other files) is "
		   "refused, and then nothing\nis removed.\n");
}

int cmd_rm(int argc, char **argv)
{
	int *fds, rc = cmon_opts__help_only(OC_RM, "rm", argc, argv, rm_usage);
	struct stat *ids;
	size_t n;

	if (rc >= 0)
		return rc;
	rc = CMON_EXIT_OK;
	if (argc - optind < 1) {
		log_error("rm: give the stores to remove (usage: cmon rm RUN...)");
		return CMON_EXIT_USAGE;
	}
	n = (size_t)(argc - optind);
	fds = malloc(n * sizeof(*fds));
	if (!fds) {
		log_error("rm: out of memory");
		return CMON_EXIT_ERROR;
	}
	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	ids = calloc(n, sizeof(*ids));
	if (!ids) {
		free(fds);
		log_error("rm: out of memory");
		return CMON_EXIT_ERROR;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		const char *why = check_store(argv[optind + i], &fds[i], &ids[i]);

		for (size_t k = 0; !why && k < i; k++)
			if (ids[k].st_dev == ids[i].st_dev && ids[k].st_ino == ids[i].st_ino)
				why = "named twice";

		if (why) {
			log_error("rm: refusing %s: %s (nothing removed)", argv[optind + i], why);
			rc = CMON_EXIT_ERROR;
		}
	}
	for (size_t i = 0; i < n && !rc; i++) {
		for (size_t k = 0; k < sizeof(store_files) / sizeof(store_files[0]); k++)
			if (unlinkat(fds[i], store_files[k], 0) && errno != ENOENT)
				rc = CMON_EXIT_ERROR;
		if (!rc && rmdir(argv[optind + i]))
			rc = CMON_EXIT_ERROR;
		if (rc)
			log_error("rm: cannot remove %s: %s", argv[optind + i], strerror(errno));
		else
			fprintf(stderr, "cmon: removed %s\n", argv[optind + i]);
	}
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(ids);
	return rc;
}
