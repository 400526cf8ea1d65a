// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An IFUNC as glibc writes them: twice's symbol is the resolver, which
 * picks __twice_plain or __twice_shift at load; the implementations are
 * the functions to trace.  Prints "twice=42". */
#include <stdio.h>

__attribute__((noinline)) int __twice_plain(int x) { return x + x; }
__attribute__((noinline)) int __twice_shift(int x) { return x << 1; }

static int (*resolve_twice(void))(int)
{
	return __twice_shift;
}

int twice(int x) __attribute__((ifunc("resolve_twice")));

int main(void)
{
	printf("twice=%d\n", twice(21));
	return 0;
}
