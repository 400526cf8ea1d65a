/*
 * migrate.c: T threads call move_step(t, i) for i = 0 .. N-1, each thread moving
 * to the next allowed CPU before every call, so that one thread's calls are
 * recorded on alternating CPUs (cmon stages call records per CPU): the
 * order read back must still be the order of the calls.
 *
 * move_tagged(t, i, tag) follows each call with the same numbers in a string
 * ("t.i"): a call's captured string must come back with its own record.
 *
 *   migrate N T     prints the sum of move_step's returns
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static long n_calls;
static int cpus[CPU_SETSIZE], n_cpus;

__attribute__((noinline)) long move_step(long t, long i)
{
	__asm__ volatile("" ::: "memory");
	return t * 1000000 + i;
}

__attribute__((noinline)) long move_tagged(long t, long i, const char *tag)
{
	__asm__ volatile("" ::: "memory");
	return tag[0] == 't' ? t + i : -1;
}

static void *run(void *arg)
{
	long t = (long)arg, sum = 0;
	char tag[48];

	for (long i = 0; i < n_calls; i++) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpus[(t + i) % n_cpus], &set);
		sched_setaffinity(0, sizeof(set), &set);
		sum += move_step(t, i);
		snprintf(tag, sizeof(tag), "t%ld.%ld", t, i);
		move_tagged(t, i, tag);
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	cpu_set_t allowed;
	long n_threads, sum = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N THREADS\n", argv[0]);
		return 2;
	}
	n_calls = atol(argv[1]);
	n_threads = atol(argv[2]);
	if (n_calls < 1 || n_threads < 1 || n_threads > 64)
		return 2;
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return 1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[n_cpus++] = c;
	for (long t = 0; t < n_threads; t++)
		if (pthread_create(&th[t], NULL, run, (void *)t))
			return 1;
	for (long t = 0; t < n_threads; t++) {
		void *r;

		pthread_join(th[t], &r);
		sum += (long)r;
	}
	printf("%ld\n", sum);
	return 0;
}
