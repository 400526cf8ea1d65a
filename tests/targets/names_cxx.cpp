// names_cxx.cpp: C++ names in -F tree (test_names.py): a function with no
// parameters, one that catches what its callee throws.
#include <cstdio>
#include <stdexcept>

__attribute__((noinline)) int answer()
{
	return 42;
}

__attribute__((noinline)) int thrower(int i)
{
	if (i)
		throw std::runtime_error("thrown");
	return 0;
}

__attribute__((noinline)) int catch_exc(int i)
{
	try {
		return thrower(i);
	} catch (const std::exception &) {
		return -i;
	}
}

int main()
{
	std::printf("answer=%d caught=%d\n", answer(), catch_exc(1));
	return 0;
}
