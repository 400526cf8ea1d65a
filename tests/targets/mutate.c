/*
 * mutate.c: functions that change what their pointer parameters point to
 * (--capture-at, test_capture_at.py): deposit() adds to an account's
 * balance (100 -> 110 -> 130), fill() writes a string into a buffer,
 * peek() changes nothing, produce() overwrites an output string and an
 * array (--capture buffers: "INIT" -> "abcdefghi", {-1,-2,-3} ->
 * {100,101,102}).
 */
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, used))

struct account {
	int id;
	long balance;
	char owner[8];
};

NOINLINE long deposit(struct account *a, long amount)
{
	a->balance += amount;
	return a->balance;
}

NOINLINE int fill(char *buf, int n)
{
	snprintf(buf, (size_t)n, "hello");
	return (int)strlen(buf);
}

NOINLINE long peek(const struct account *a)
{
	return a->balance;
}

NOINLINE void produce(char *out, int n, int *vals, int nv)
{
	for (int i = 0; i < n - 1; i++)
		out[i] = (char)('a' + i % 26);
	out[n - 1] = 0;
	for (int i = 0; i < nv; i++)
		vals[i] = 100 + i;
}

int main(void)
{
	struct account acct = { .id = 7, .balance = 100, .owner = "ann" };
	char buf[16] = "", out[40] = "INIT";
	int vals[3] = { -1, -2, -3 };

	deposit(&acct, 10);
	deposit(&acct, 20);
	fill(buf, sizeof(buf));
	/* their values before the call, kept: main reads neither after it */
	__asm__ volatile("" : : "r"(out), "r"(vals) : "memory");
	produce(out, 10, vals, 3);
	printf("%s#%d balance=%ld buf=%s peek=%ld\n", acct.owner, acct.id, acct.balance, buf,
	       peek(&acct));
	return 0;
}
