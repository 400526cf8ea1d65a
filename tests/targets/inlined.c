// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* inlined.c: sq() has no copy of its own at -O2: it is inlined into a()
 * and b() (test_safety.py: the error names them). */
#include <stdio.h>

static inline int sq(int x)
{
	return x * x;
}

__attribute__((noinline)) int a(int v)
{
	return sq(v) + 1;
}

__attribute__((noinline)) int b(int v)
{
	return sq(v + 1) - 1;
}

int main(int argc, char **argv)
{
	printf("%d %d\n", a(argc), b(argc));
	return 0;
}
