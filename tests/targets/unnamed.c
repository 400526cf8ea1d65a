// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unnamed: C23 unnamed parameters (test_typed.py), built with -std=gnu2x.
 * un2's second parameter has no DWARF name, and its first is named param1,
 * the name cmon once gave the unnamed one: un2(111, 222) must show both.
 */
#include <stdio.h>

__attribute__((noinline)) int un2(int param1, int)
{
	__asm__ volatile("" ::: "memory");
	return param1 + 1;
}

__attribute__((noinline)) long un3(int, long b, int)
{
	__asm__ volatile("" ::: "memory");
	return b * 2;
}

int main(void)
{
	printf("un2=%d un3=%ld\n", un2(111, 222), un3(7, 21, 9));
	return 0;
}
