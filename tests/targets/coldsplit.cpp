/*
 * coldsplit.cpp: gcc's hot/cold split and conditional tail calls, for
 * test_programs.py (C++: exits are probed on ret instructions).
 *
 *   work(n)      starts with `js work.cold` (n < 0 throws, in the cold part)
 *   checked(n)   n < 0: reports twice in its cold part, then returns -1
 *   maybe_tail(n) n > 5: a tail call (a conditional jump out: jg helper)
 *
 *   coldsplit    calls each with 1..4, then -1 (work's throw is caught),
 *                maybe_tail with 7 and 2, and prints the results
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

__attribute__((noinline)) long work(long n)
{
	if (__builtin_expect(n < 0, 0))
		throw std::invalid_argument("negative");
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i * (i ^ n);
	return s;
}

__attribute__((cold, noinline)) void report(const char *what)
{
	fprintf(stderr, "bad %s\n", what);
}

__attribute__((noinline)) long checked(long n, const char *tag)
{
	if (__builtin_expect(n < 0, 0)) {
		report(tag);
		report(tag);
		return -1;
	}
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i ^ n;
	return s;
}

__attribute__((noinline)) long helper(long n)
{
	return n * 3 + (long)getenv("NO_SUCH_VARIABLE_HERE");
}

__attribute__((noinline)) long maybe_tail(long n)
{
	if (n > 5)
		return helper(n);
	return n + 1;
}

int main()
{
	for (long i = 1; i <= 4; i++)
		printf("%ld %ld\n", work(i * 1000), checked(i * 1000, "t"));
	try {
		work(-1);
	} catch (const std::exception &e) {
		printf("caught %s\n", e.what());
	}
	printf("%ld\n", checked(-1, "neg"));
	printf("%ld %ld\n", maybe_tail(7), maybe_tail(2));
	return 0;
}
