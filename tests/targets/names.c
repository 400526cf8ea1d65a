// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * names.c: names and values a user reads (test_names.py).
 *   alias   frees three blocks (glibc's free is also cfree and __libc_free)
 *   union   passes a transparent union (glibc's __SOCKADDR_ARG)
 *   dlopen  opens ./libnames_dl.so by a relative path and calls into it
 * It prints what the test compares the records with.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define NOINLINE __attribute__((noinline))

/* GCC's DWARF: a union of 8 bytes with no members. */
NOINLINE int take_addr(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	__asm__ volatile("" ::: "memory");
	return fd + addr.__sockaddr__->sa_family + (int)*len;
}

static int run_alias(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = malloc(1000 + (size_t)i);

		printf("free %p\n", p);
		fflush(stdout);
		free(p);
	}
	return 0;
}

static int run_union(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t n = sizeof(sin);

	printf("take_addr %p %d\n", (void *)&sin, take_addr(3, (struct sockaddr *)&sin, &n));
	return 0;
}

static int run_dlopen(void)
{
	void *dl = dlopen("./libnames_dl.so", RTLD_NOW);
	int (*twice)(int);

	if (!dl) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&twice = dlsym(dl, "dl_twice");
	printf("dl_twice %d %d\n", twice(4), twice(21));
	dlclose(dl);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "alias";

	if (!strcmp(what, "alias"))
		return run_alias();
	if (!strcmp(what, "union"))
		return run_union();
	if (!strcmp(what, "dlopen"))
		return run_dlopen();
	fprintf(stderr, "usage: names alias|union|dlopen\n");
	return 2;
}
