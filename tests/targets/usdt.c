/*
 * usdt.c: static probes (<sys/sdt.h>) whose firings the tests know.
 *
 *   usdt N             N x demo:tick(i, -5 - i, 1234567890123 + i,
 *                      UINT64_MAX - i: an unsigned 8@ argument); and,
 *                      only while a tracer holds its semaphore,
 *                      demo:guarded(i); then demo:consts(250, 65000,
 *                      4000000000, -5): constants in the note, which gcc
 *                      spells as signed immediates (1@$-6 for 250);
 *                      prints "guarded=K" (K fired)
 *   usdt --wait N      prints "ready PID", waits for a line, runs as above,
 *                      then prints "ready" and waits again, and prints the
 *                      semaphore's value ("semaphore=0" once nothing traces)
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sdt.h>

/* The semaphore <sys/sdt.h> names in the note: a tracer raises it (cmon
 * through the kernel's reference counter) while the probe is attached. */
__extension__ unsigned short demo_guarded_semaphore __attribute__((unused))
	__attribute__((section(".probes")));
__extension__ unsigned short demo_tick_semaphore __attribute__((unused))
	__attribute__((section(".probes")));
__extension__ unsigned short demo_consts_semaphore __attribute__((unused))
	__attribute__((section(".probes")));
#define DEMO_GUARDED_ENABLED() __builtin_expect(demo_guarded_semaphore, 0)

static void wait_line(void)
{
	char buf[16];

	fflush(stdout);
	if (!fgets(buf, sizeof(buf), stdin))
		exit(1);
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "--wait");
	int n = argc > 1 + wait ? atoi(argv[1 + wait]) : 3, guarded = 0;
	volatile long big = 1234567890123L;
	volatile unsigned long wide = ~0UL;

	if (wait) {
		printf("ready %d\n", (int)getpid());
		wait_line();
	}
	for (int i = 0; i < n; i++) {
		DTRACE_PROBE4(demo, tick, i, -5 - i, big + i, wide - (unsigned long)i);
		if (DEMO_GUARDED_ENABLED()) {
			STAP_PROBE1(demo, guarded, 100 + i);
			guarded++;
		}
	}
	DTRACE_PROBE4(demo, consts, (unsigned char)250, (unsigned short)65000, 4000000000u,
		      (signed char)-5);
	printf("guarded=%d\n", guarded);
	if (wait) {
		printf("ready\n");
		wait_line();
		printf("semaphore=%u\n", (unsigned)demo_guarded_semaphore);
	}
	return 0;
}
