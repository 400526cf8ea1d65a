// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// keyfunc_def.cpp: shop::Item's key function, and so its definition in
// DWARF (see keyfunc.cpp).
#include "keyfunc.h"

namespace shop {

long Item::total(int n) const
{
	return price * n;
}

Item *Item::make(int id, long price)
{
	Item *it = new Item;

	it->id = id;
	it->price = price;
	return it;
}
} // namespace shop
