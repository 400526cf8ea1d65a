/*
 * mutate.c: functions that change what their pointer parameters point to
 * (--capture-at, test_capture_at.py): deposit() adds to an account's
 * balance (100 -> 110 -> 130), fill() writes a string into a buffer,
 * peek() changes nothing.
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

int main(void)
{
	struct account acct = { .id = 7, .balance = 100, .owner = "ann" };
	char buf[16] = "";

	deposit(&acct, 10);
	deposit(&acct, 20);
	fill(buf, sizeof(buf));
	printf("%s#%d balance=%ld buf=%s peek=%ld\n", acct.owner, acct.id, acct.balance, buf,
	       peek(&acct));
	return 0;
}
