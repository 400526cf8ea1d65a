// cxx_qsort.cpp: a C++ exception thrown by a comparator unwinds through
// libc's qsort (glibc is built with exception tables for this).  A kernel
// uretprobe on qsort would make the unwinder abort the program: cmon must
// observe qsort's returns another way and leave the output unchanged.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static int limit;

extern "C" __attribute__((noinline)) int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (x > limit || y > limit)
		throw std::out_of_range("too big");
	return (x > y) - (x < y);
}

__attribute__((noinline)) int sort_upto(int *v, int n, int lim)
{
	limit = lim;
	try {
		qsort(v, (size_t)n, sizeof(*v), by_value);
	} catch (const std::out_of_range &) {
		return -1;
	}
	return 0;
}

int main()
{
	int a[] = { 5, 3, 9, 1 }, b[] = { 5, 3, 9, 1 };
	int ra = sort_upto(a, 4, 10), rb = sort_upto(b, 4, 6);

	std::printf("ra=%d a=%d,%d,%d,%d rb=%d\n", ra, a[0], a[1], a[2], a[3], rb);
	return 0;
}
