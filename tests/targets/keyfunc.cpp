// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// keyfunc.cpp: a class whose key function (its first virtual member not
// defined inline) is in another file, keyfunc_def.cpp.  Both compilers
// describe shop::Item there only: in this file's compilation unit it is a
// declaration (test_typed.py: bill()'s parameters are typed all the same).
#include <cstdio>

namespace shop {
struct Item {
	int id;
	long price;
	virtual long total(int n) const;
	static Item *make(int id, long price);
};
} // namespace shop

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
