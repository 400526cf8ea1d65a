/*
 * tailptr.c: a function whose only way out is a tail call through a
 * pointer (`return f(v)` at -O2: mov %rdi,%rax; mov %esi,%edi; jmp *%rax),
 * for test_safety.py: it returns, though it has no ret of its own.
 *
 *   tailptr N    calls via_ptr(twice, i) for i = 0 .. N-1, prints the sum
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int twice(int v)
{
	return 2 * v;
}

__attribute__((noinline, noipa)) int via_ptr(int (*f)(int), int v)
{
	return f(v);
}

int main(int argc, char **argv)
{
	int (*volatile f)(int) = twice;
	int n = argc > 1 ? atoi(argv[1]) : 5, sum = 0;

	for (int i = 0; i < n; i++)
		sum += via_ptr(f, i);
	printf("%d\n", sum);
	return 0;
}
