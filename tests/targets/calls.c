/*
 * calls.c: a program whose calls the integration tests know exactly.
 *
 *   calls SCENARIO [ARGS]      run it now
 *   calls --wait SCENARIO ...  print "ready PID", wait for a line on stdin,
 *                              run it (the test attaches in between)
 *
 * Functions are noinline and externally visible so they stay in .symtab.
 */
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

NOINLINE int add(int a, int b) { BARRIER(); return a + b; }

NOINLINE long six(long a, long b, long c, long d, long e, long f)
{
	BARRIER();
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f;
}

NOINLINE long negate(long v) { BARRIER(); return -v; }

NOINLINE long fact(long n) { BARRIER(); return n <= 1 ? 1 : n * fact(n - 1); }

/* N + 1 nested calls, each returning: deeper than the kernel's 64 nested
 * uretprobes when N >= 64. */
NOINLINE long nest(long n)
{
	long r;

	BARRIER();
	if (n <= 0)
		return 0;
	r = nest(n - 1) + 1;
	__asm__ volatile("" : : "r"(r) : "memory"); /* no tail call */
	return r;
}

NOINLINE int leaf(int x) { BARRIER(); return x + 1; }
NOINLINE int middle(int x) { BARRIER(); return leaf(x) * 2; }
NOINLINE int outer(int x) { BARRIER(); return middle(x) + 3; }

/* Allocate and touch MB MiB: RSS grows by that much during the call. */
NOINLINE void *grow(long mb)
{
	size_t len = (size_t)mb << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	return p;
}

static jmp_buf env;
NOINLINE int jumper(int x)
{
	BARRIER();
	if (x)
		longjmp(env, x);
	return 0;
}

/* Leaves only by longjmp: no ret, it never returns normally. */
NOINLINE __attribute__((noreturn)) void fail(int x)
{
	leaf(x);
	longjmp(env, x);
}

NOINLINE int guarded(int x)
{
	if (setjmp(env))
		return leaf(100);
	fail(x);
}

NOINLINE int work(int thread, int i) { BARRIER(); return thread * 1000 + i; }

/* A thread (not the main one) that execs: the kernel makes it the leader,
 * with the process's pid, under the new program's name. */
NOINLINE int exec_from_thread(int x)
{
	BARRIER();
	execl("/bin/echo", "echo", "exec-from-thread", (char *)NULL);
	return x;
}

/* A thread execs this program again, waiting (--wait) before it runs
 * SCENARIO: a test can tell when cmon is ready for the new image. */
static void *exec_self_thread(void *arg)
{
	execl("/proc/self/exe", "calls", "--wait", (const char *)arg, (char *)NULL);
	return NULL;
}

static void *exec_thread(void *arg)
{
	exec_from_thread((int)(long)arg);
	return NULL;
}

static int per_thread;
static void *thread_main(void *arg)
{
	int t = (int)(long)arg;
	long sum = 0;

	for (int i = 0; i < per_thread; i++)
		sum += work(t, i);
	return (void *)sum;
}

NOINLINE int tail_target(int x) { BARRIER(); return x * 3; }
/* A sibling call (jmp, not call): -O1 does not make them by itself. */
NOINLINE __attribute__((optimize("optimize-sibling-calls"))) int tail_caller(int x)
{
	BARRIER();
	return tail_target(x + 1);
}

NOINLINE int exit_inside(int code) { BARRIER(); exit(code); }

static volatile sig_atomic_t *usr1_flag;

static void on_usr1(int sig)
{
	(void)sig;
	*usr1_flag = 1;
}

static int run(int argc, char **argv)
{
	const char *s = argv[0];

	if (!strcmp(s, "calls")) {
		printf("add=%d\n", add(2, 3));
		printf("add=%d\n", add(-7, 4));
		printf("six=%ld\n", six(1, 2, 3, 4, 5, 6));
		printf("negate=%ld\n", negate(1234567890123L));
		return 0;
	}
	if (!strcmp(s, "recurse")) {
		printf("fact=%ld\n", fact(5));
		printf("outer=%d\n", outer(10));
		return 0;
	}
	if (!strcmp(s, "deep") && argc > 1) {
		printf("nest=%ld\n", nest(atol(argv[1])));
		return 0;
	}
	if (!strcmp(s, "grow")) {
		printf("grow=%s\n", grow(argc > 1 ? atol(argv[1]) : 64) ? "ok" : "failed");
		return 0;
	}
	if (!strcmp(s, "longjmp")) {
		int v = setjmp(env);

		if (v == 0)
			jumper(7);
		printf("longjmp=%d\n", v);
		printf("after=%d\n", add(1, 1));
		return 0;
	}
	if (!strcmp(s, "strcmp") && argc > 2) { /* libc's IFUNCs: strcmp, memset */
		char buf[64];
		size_t n = strlen(argv[2]) < sizeof(buf) ? strlen(argv[2]) : sizeof(buf);

		memset(buf, argv[1][0], n);
		printf("strcmp=%d memset=%c\n", strcmp(argv[1], argv[2]) < 0 ? -1 : 1, buf[0]);
		return 0;
	}
	if (!strcmp(s, "vfork")) { /* the child runs on the parent's stack */
		int st = 0;
		pid_t pid = vfork();

		if (pid == 0)
			_exit(7);
		waitpid(pid, &st, 0);
		printf("vfork=%d\n", WEXITSTATUS(st));
		return 0;
	}
	if (!strcmp(s, "fail")) {
		printf("guarded=%d\n", guarded(7));
		return 0;
	}
	if (!strcmp(s, "threads")) {
		int n = argc > 1 ? atoi(argv[1]) : 4;
		pthread_t th[64];
		long total = 0;

		per_thread = argc > 2 ? atoi(argv[2]) : 1000;
		for (int t = 0; t < n && t < 64; t++)
			pthread_create(&th[t], NULL, thread_main, (void *)(long)t);
		for (int t = 0; t < n && t < 64; t++) {
			void *r;

			pthread_join(th[t], &r);
			total += (long)r;
		}
		printf("threads=%d total=%ld\n", n, total);
		return 0;
	}
	if (!strcmp(s, "fork")) {
		pid_t pid;
		int st;

		printf("parent add=%d\n", add(1, 2));
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			add(100, 200); /* inherits the probe's breakpoint */
			execl("/bin/echo", "echo", "child-exec", (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &st, 0);
		printf("child status=%d\n", WEXITSTATUS(st));
		printf("parent add=%d\n", add(3, 4));
		return 0;
	}
	if (!strcmp(s, "tail")) {
		printf("tail=%d\n", tail_caller(4));
		return 0;
	}
	if (!strcmp(s, "exit")) {
		add(5, 5);
		exit_inside(argc > 1 ? atoi(argv[1]) : 7);
	}
	if (!strcmp(s, "ppid")) { /* three library calls */
		int ok = 1;

		for (int i = 0; i < 3; i++)
			ok &= getppid() > 0;
		printf("ppid=%d\n", ok);
		return 0;
	}
	if (!strcmp(s, "ppid_many")) { /* a hot library function */
		int ok = 1;

		for (int i = 0; i < 300000; i++)
			ok &= getppid() > 0;
		printf("ppid_many=%d\n", ok);
		return 0;
	}
	if (!strcmp(s, "thread_exec_self") && argc > 1) {
		pthread_t th;

		printf("main\n");
		pthread_create(&th, NULL, exec_self_thread, argv[1]);
		pthread_join(th, NULL);
		return 1; /* not reached */
	}
	if (!strcmp(s, "thread_exec")) {
		pthread_t th;

		printf("main\n");
		fflush(stdout);
		pthread_create(&th, NULL, exec_thread, (void *)5L);
		pthread_join(th, NULL);
		return 1; /* not reached: the thread's exec replaces the process */
	}
	if (!strcmp(s, "loop")) {
		long n = argc > 1 ? atol(argv[1]) : 1000000;
		long sum = 0;

		for (long i = 0; i < n; i++)
			sum += add((int)i, 1);
		printf("loop sum=%ld\n", sum);
		return 0;
	}
	if (!strcmp(s, "steady")) { /* outer(i) every ~2 us until killed */
		printf("steady %d\n", (int)getpid());
		fflush(stdout);
		for (long i = 0;; i++) {
			struct timespec t0, t;

			clock_gettime(CLOCK_MONOTONIC, &t0);
			outer((int)i);
			do
				clock_gettime(CLOCK_MONOTONIC, &t);
			while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 2000);
		}
	}
	if (!strcmp(s, "until-usr1")) { /* add() flat out until SIGUSR1; how many */
		static volatile sig_atomic_t stop;
		struct sigaction sa = { .sa_handler = on_usr1 };
		long n = 0, sum = 0;

		usr1_flag = &stop;
		sigaction(SIGUSR1, &sa, NULL);
		printf("counting %d\n", (int)getpid());
		fflush(stdout);
		while (!stop) {
			sum += add((int)n, 1);
			n++;
		}
		printf("counted n=%ld sum=%ld\n", n, sum);
		return 0;
	}
	if (!strcmp(s, "loop-wait")) { /* a burst, then alive until stdin says */
		long n = argc > 1 ? atol(argv[1]) : 1000000;
		long sum = 0;
		char line[8];

		for (long i = 0; i < n; i++)
			sum += add((int)i, 1);
		printf("looped sum=%ld\n", sum);
		fflush(stdout);
		return fgets(line, sizeof(line), stdin) ? 0 : 3;
	}
	fprintf(stderr, "calls: unknown scenario %s\n", s);
	return 2;
}

int main(int argc, char **argv)
{
	char line[64];

	if (argc < 2) {
		fprintf(stderr, "usage: calls [--wait] SCENARIO [ARGS]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "--wait")) {
		printf("ready %d\n", getpid());
		if (!fgets(line, sizeof(line), stdin))
			return 3;
		return run(argc - 2, argv + 2);
	}
	return run(argc - 1, argv + 1);
}
