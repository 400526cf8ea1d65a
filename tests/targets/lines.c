/*
 * lines.c: source lines the --line tests know (test_lines.py).  Built at
 * -O0 and -O2 (lines, lines_O2).
 *
 *   lines N      walk(i) for i < N: line 18 runs N times
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, used))

volatile long total;

NOINLINE long walk(long i)
{
	long sq = i * i;

	total += sq;  /* line 18: runs once per walk() */
	return sq + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5;

	for (long i = 0; i < n; i++)
		walk(i);

	printf("total=%ld\n", total);
	return 0;
}
