/*
 * lines.c: source lines the --line and --lines tests know (test_lines.py
 * finds them by their marker comments).  Built at -O0 and -O2 (lines,
 * lines_O2).
 *
 *   lines N      walk(i) for i < N: the "once per walk" line runs N times
 *   lines grow   grow_lines(8): the "touches" line touches 8 MiB
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, used))

volatile long total, tripled;

NOINLINE long walk(long i)
{
	long sq = i * i;

	total += sq; /* marker: once per walk */
	return sq + 1;
}

/* One line, three rows of the line table at -O0 (prologue, body,
 * epilogue): one run of the line each call. */
NOINLINE long triple(long x) { return x * 3; } /* marker: one-liner */

NOINLINE long grow_lines(long mb)
{
	size_t len = (size_t)mb << 20;
	char *p = malloc(len);

	if (!p)
		return -1;
	memset(p, 1, len); /* marker: touches */
	total += p[len - 1];
	return (long)len;
}

int main(int argc, char **argv)
{
	long n;

	if (argc > 1 && !strcmp(argv[1], "grow")) {
		printf("grow=%ld\n", grow_lines(8));
		return 0;
	}
	n = argc > 1 ? atol(argv[1]) : 5;
	for (long i = 0; i < n; i++)
		tripled += triple(walk(i));
	printf("total=%ld\n", total);
	return 0;
}
