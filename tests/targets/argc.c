// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * argc.c: a program whose output depends on what the loader put on the
 * stack (argc, argv) and that ends through a noreturn function, so tracing
 * every one of its functions (`'argc:*'`: _start, _init, frame_dummy...)
 * shows whether cmon changed it (test_safety.py).
 *
 *   argc [ARGS...]   prints argc, argv[1] and twice(argc); with more than
 *                    three arguments ends through die(3): exit status 3
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int twice(int x)
{
	return 2 * x;
}

__attribute__((noreturn, noinline)) void die(int code)
{
	printf("bye %d\n", twice(code));
	fflush(stdout);
	exit(code);
}

int main(int argc, char **argv)
{
	printf("argc=%d argv1=%s t=%d\n", argc, argc > 1 ? argv[1] : "-", twice(argc));
	if (argc > 3)
		die(3);
	return 0;
}
