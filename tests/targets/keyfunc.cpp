// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// keyfunc.cpp: bill() takes a shop::Item (keyfunc.h), a class whose DWARF
// description is in keyfunc_def.cpp's compilation unit only.
#include <cstdio>

#include "keyfunc.h"

__attribute__((noinline)) long bill(const shop::Item &it, shop::Item *other, int n)
{
	return it.total(n) + other->price;
}

int main()
{
	shop::Item *a = shop::Item::make(7, 250), *b = shop::Item::make(8, 1000);

	std::printf("bill %ld\n", bill(*a, b, 3));
	return 0;
}
