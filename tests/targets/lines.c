/*
 * lines.c: source lines the --line and --lines tests know (test_lines.py
 * finds them by their marker comments).  Built at -O0 and -O2 (lines,
 * lines_O2).
 *
 *   lines N      walk(i) for i < N: the "once per walk" line runs N times
 *   lines grow   grow_lines(8): the "touches" line touches 8 MiB
 *   lines list   show_list() over 3 nodes: its fprintf line runs 3 times
 *   lines inl    outer_of(i) for i < 3, inlining scaled(i, i + 5)
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

struct node {
	const char *name;
	long w;
	struct node *next;
};

/* At -O1 the fprintf line's one statement row follows a row of its own
 * that is not a statement: its site must stay. */
NOINLINE void show_list(struct node *it, FILE *f)
{
	while (it) {
		fprintf(f, "%s=%ld\n", it->name, it->w); /* marker: show line */
		it = it->next;
	}
}

volatile int sink;

/* Inlined into outer_of: --locals at its lines reads the copy's own
 * variables (v, w, r), not the function it was inlined into. */
static inline __attribute__((always_inline)) int scaled(int v, int w)
{
	int r;

	sink = v;
	r = v * w;
	sink = r; /* marker: inlined */
	return r + 1;
}

NOINLINE int outer_of(int x) { return scaled(x, x + 5) + 3; }

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

	if (argc > 1 && !strcmp(argv[1], "list")) {
		struct node c = { "gamma", 3, NULL }, b = { "beta", 2, &c }, a = { "alpha", 1, &b };

		show_list(&a, stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "inl")) {
		int s = 0;

		for (int i = 0; i < 3; i++)
			s += outer_of(i);
		printf("inl=%d\n", s);
		return 0;
	}
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
