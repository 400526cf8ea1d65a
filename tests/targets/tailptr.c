/*
 * tailptr.c: functions whose exits are unusual, for test_safety.py:
 * via_ptr() leaves only by a tail call through a pointer (`return f(v)`
 * at -O2: mov %rdi,%rax; mov %esi,%edi; jmp *%rax), hook() is a lone ret
 * (its entry and exit probes share an address).
 *
 *   tailptr N    calls via_ptr(twice, i), hook(i), cond_tail(i),
 *                sra(&pair, i), count_down(i, 0), either(twice, i) and
 *                table(i, i + 1) for i = 0 .. N-1, 20 ms apart, prints the sum
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

/* v > 1: a tail call through f (jmp *%rax); else its own ret. */
__attribute__((noinline, noipa)) int either(int (*f)(int), int v)
{
	if (v > 1)
		return f(v);
	return v + 100;
}

/* A switch gcc makes a jump table of (its cases compute differently): an
 * indirect jump that stays in the function. */
__attribute__((noinline, noipa)) int table(int k, int x)
{
	switch (k) {
	case 0: return x * 7 + 11;
	case 1: return (x ^ 0x55) + 3;
	case 2: return x << 4;
	case 3: return x * x * x - 5;
	case 4: return 1000 / (x + 1);
	case 5: return x | 0x300;
	default: return -x;
	}
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
		sum += either(f, i) + table(i, i + 1);
		usleep(20000);
	}
	printf("%d\n", sum);
	return 0;
}
