// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// keyfunc.h: shop::Item, whose key function (its first virtual member not
// defined inline) is in keyfunc_def.cpp.  Both compilers describe the class
// in DWARF only there: in keyfunc.cpp's compilation unit it is a
// declaration (test_typed.py: bill()'s parameters are typed all the same).
#ifndef KEYFUNC_H
#define KEYFUNC_H

namespace shop {
struct Item {
	int id;
	long price;
	virtual long total(int n) const;
	static Item *make(int id, long price);
};
} // namespace shop

#endif
