// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* names_dl.c: the library names.c opens by a relative path. */
__attribute__((noinline)) int dl_twice(int x)
{
	__asm__ volatile("" ::: "memory");
	return 2 * x;
}
