// cxx_cleanup.cpp: an exception passing through a frame that has a
// destructor to run: its landing pad runs ~Guard, then libgcc's
// _Unwind_Resume carries the exception on (a function whose exits cmon
// cannot find).  guarded(x) returns x + 1 for even x; odd x throw.
// Prints "sum=9 caught=3 cleaned=6".
#include <cstdio>
#include <stdexcept>

struct Guard {
	int *n;
	__attribute__((noinline)) ~Guard() { ++*n; }
};

__attribute__((noinline)) int thrower(int x)
{
	if (x % 2)
		throw std::runtime_error("odd");
	return x;
}

__attribute__((noinline)) int guarded(int x, int *cleaned)
{
	Guard g{cleaned};
	return thrower(x) + 1;
}

int main()
{
	int caught = 0, sum = 0, cleaned = 0;

	for (int i = 0; i < 6; i++) {
		try {
			sum += guarded(i, &cleaned);
		} catch (const std::exception &) {
			caught++;
		}
	}
	std::printf("sum=%d caught=%d cleaned=%d\n", sum, caught, cleaned);
	return 0;
}
