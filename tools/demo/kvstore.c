/*
 * kvstore.c: the program `make demo` traces.  A tiny in-memory key-value
 * store that parses a few requests, grows its table, and fails one lookup,
 * so a trace shows arguments, returns, nesting, latency and memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noipa)) /* no clones: calls go to the named symbol */

struct entry {
	char key[32];
	long value;
};

static struct entry *table;
static long table_len, table_cap;

NOINLINE long hash_key(const char *key, long len)
{
	unsigned long h = 1469598103934665603UL;

	for (long i = 0; i < len; i++)
		h = (h ^ (unsigned char)key[i]) * 1099511628211UL;
	return (long)(h >> 1);
}

/* Doubles the table, touching the new memory: RSS grows inside the call. */
NOINLINE long grow_table(long min_cap)
{
	long cap = table_cap ? table_cap : 1024;

	while (cap < min_cap)
		cap *= 2;
	table = realloc(table, (size_t)cap * sizeof(*table));
	memset(table + table_cap, 0, (size_t)(cap - table_cap) * sizeof(*table));
	table_cap = cap;
	return cap;
}

NOINLINE int kv_put(const char *key, long value)
{
	if (table_len == table_cap)
		grow_table(table_cap * 2 + 1);
	snprintf(table[table_len].key, sizeof(table[0].key), "%s", key);
	table[table_len].value = value;
	hash_key(key, (long)strlen(key));
	return (int)table_len++;
}

NOINLINE long kv_get(const char *key)
{
	hash_key(key, (long)strlen(key));
	for (long i = 0; i < table_len; i++)
		if (!strcmp(table[i].key, key))
			return table[i].value;
	return -1;
}

NOINLINE int handle_request(const char *line)
{
	char key[32];
	long value;

	if (sscanf(line, "PUT %31s %ld", key, &value) == 2)
		return kv_put(key, value);
	if (sscanf(line, "GET %31s", key) == 1)
		return (int)kv_get(key);
	return -22;
}

int main(void)
{
	static const char *requests[] = {
		"PUT apples 3", "PUT pears 5", "GET apples", "GET plums", "BOGUS",
	};
	char key[32];

	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		printf("%-14s -> %d\n", requests[i], handle_request(requests[i]));
	/* Enough keys to grow the table a few times. */
	for (int i = 0; i < 200000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		kv_put(key, i);
	}
	printf("stored %ld keys\n", table_len);
	return 0;
}
