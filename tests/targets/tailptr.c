/*
 * tailptr.c: functions whose exits are unusual, for test_safety.py:
 * via_ptr() leaves only by a tail call through a pointer (`return f(v)`
 * at -O2: mov %rdi,%rax; mov %esi,%edi; jmp *%rax), hook() is a lone ret
 * (its entry and exit probes share an address).
 *
 *   tailptr N    calls via_ptr(twice, i), hook(i), cond_tail(i),
 *                sra(&pair, i) and count_down(i, 0) for i = 0 .. N-1, 20 ms
 *                apart, prints the sum
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) int twice(int v)
{
	return 2 * v;
}

__attribute__((noinline, noipa)) int via_ptr(int (*f)(int), int v)
{
	return f(v);
}

__attribute__((noinline)) void hook(int v)
{
	__asm__ volatile("" : : "r"(v));
}

struct pair {
	int a, b;
};

static __attribute__((noinline)) int sra(const struct pair *p, int k)
{
	return p->b * k;
}

/* In assembly: gcc makes no conditional tail calls (clang does). */
__asm__(".text\n.globl cond_tail\n.type cond_tail, @function\n.p2align 4\n"
	"cond_tail:\n test %rdi, %rdi\n jne twice\n xor %eax, %eax\n ret\n"
	".size cond_tail, . - cond_tail\n");
int cond_tail(int v);

/* count_down(n, 0): n jumps back to its entry, then returns n. */
__asm__(".text\n.globl count_down\n.type count_down, @function\n.p2align 4\n"
	"count_down:\n test %rdi, %rdi\n je 1f\n dec %rdi\n inc %rsi\n jmp count_down\n"
	"1:\n mov %rsi, %rax\n ret\n.size count_down, . - count_down\n");
long count_down(long n, long acc);

int main(int argc, char **argv)
{
	int (*volatile f)(int) = twice;
	int n = argc > 1 ? atoi(argv[1]) : 5, sum = 0;
	struct pair pr = { 1, argc };

	for (int i = 0; i < n; i++) {
		sum += via_ptr(f, i);
		hook(i);
		sum += cond_tail(i);
		sum += sra(&pr, i);
		sum += (int)count_down(i, 0);
		usleep(20000);
	}
	printf("%d\n", sum);
	return 0;
}
