// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* outpath.c: see outpath.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/grow.h"
#include "core/strbuf.h"
#include "outpath.h"

bool out_path__per_process(const char *tmpl)
{
	for (const char *p = tmpl; p && (p = strchr(p, '%')); p += 2) {
		if (p[1] == 'p' || p[1] == 'r' || p[1] == 'f')
			return true;
		if (!p[1])
			break;
	}
	return false;
}

bool out_path__per_function(const char *tmpl)
{
	for (const char *p = tmpl; p && (p = strchr(p, '%')); p += 2) {
		if (p[1] == 'f')
			return true;
		if (!p[1])
			break;
	}
	return false;
}

int out_path__check(const char *tmpl, size_t *at)
{
	for (const char *p = tmpl; (p = strchr(p, '%')); p += 2) {
		if (p[1] != 'p' && p[1] != 'r' && p[1] != 'f' && p[1] != '%') {
			*at = (size_t)(p - tmpl);
			return -EINVAL;
		}
	}
	return 0;
}

/* Launchers' rank variables, in the order they are believed. */
static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
					 "RANK" };

void out_path__rank(pid_t pid, char *buf, size_t len)
{
	char path[64], env[65536];
	const char *best = NULL;
	size_t best_i = sizeof(rank_vars) / sizeof(rank_vars[0]);
	ssize_t n;
	int fd;

	snprintf(buf, len, "norank");
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, env, sizeof(env) - 1);
	close(fd);
	if (n <= 0)
		return;
	env[n] = 0;
	for (const char *e = env; e < env + n; e += strlen(e) + 1) {
		for (size_t i = 0; i < best_i; i++) {
			size_t k = strlen(rank_vars[i]);

			/* A rank is digits: anything else would make a path. */
			if (!strncmp(e, rank_vars[i], k) && e[k] == '=' && e[k + 1] &&
			    strspn(e + k + 1, "0123456789") == strlen(e + k + 1)) {
				best = e + k + 1;
				best_i = i;
			}
		}
	}
	if (best)
		snprintf(buf, len, "%s", best);
}

void rank_book__note(struct rank_book *b, pid_t pid)
{
	struct rank_entry *v;

	if (GROW(b->v, b->n, b->cap, 8))
		return; /* read when asked instead */
	v = b->v;
	v[b->n].pid = pid;
	out_path__rank(pid, v[b->n].rank, sizeof(v[b->n].rank));
	b->n++;
}

void rank_book__rank(const struct rank_book *b, pid_t pid, char *buf, size_t len)
{
	for (size_t i = 0; i < b->n; i++) {
		if (b->v[i].pid == pid) {
			snprintf(buf, len, "%s", b->v[i].rank);
			return;
		}
	}
	out_path__rank(pid, buf, len);
}

void rank_book__free(struct rank_book *b)
{
	free(b->v);
	b->v = NULL;
	b->n = b->cap = 0;
}

int out_path__expand(const char *tmpl, pid_t pid, const char *rank, const char *func, char **out)
{
	struct strbuf sb = {};
	int err = 0;

	*out = NULL;
	for (const char *p = tmpl; *p && !err; p++) {
		if (*p != '%') {
			err = strbuf__putc(&sb, *p);
			continue;
		}
		if (!p[1]) {
			err = -EINVAL; /* a '%' ends the template */
			break;
		}
		switch (*++p) {
		case 'p':
			err = strbuf__printf(&sb, "%d", (int)pid);
			break;
		case 'r':
			err = strbuf__puts(&sb, rank);
			break;
		case 'f':
			/* a name is untrusted bytes (C++: "ns::f(int)"): a path part */
			for (const char *f = func ? func : ""; *f && !err; f++) {
				char c = *f;
				bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					  (c >= '0' && c <= '9') || c == '_' || c == '-' ||
					  (c == '.' && f != func);

				err = strbuf__putc(&sb, ok ? c : '_');
			}
			break;
		case '%':
			err = strbuf__putc(&sb, '%');
			break;
		default:
			err = -EINVAL;
			break;
		}
	}
	if (!err)
		err = strbuf__putc(&sb, 0);
	if (err) {
		strbuf__release(&sb);
		return err;
	}
	*out = sb.buf;
	return 0;
}
