/*
 * typed.c: a program whose typed arguments the integration tests know
 * exactly (test_typed.py, test_capture.py), built with -g at -O0 and -O2.
 *
 *   typed [--wait] all         every function below once (sum_ints twice)
 *   typed [--wait] cold FILE   cold_str() on a string in FILE, mapped and
 *                              never touched before the call (not resident)
 *   typed [--wait] long N      greet() on a string of N 'x'
 *   typed [--wait] wide V      wide_ret(V): a struct whose JSON is long
 *   typed [--wait] loop N      sum_buf + sum_ints N times, 1 ms apart
 *                              (N = 0: until killed)
 *   typed [--wait] clash       clash(99, {4, 5, 6}, 3): a parameter named
 *                              like a key -F chrome adds (test_views.py)
 *   typed [--wait] bad         badptr((char *)8, (struct outer *)16): two
 *                              pointers no probe can read, then
 *                              badptr(NULL, NULL): two real NULLs
 *   typed [--wait] half        second_of({11, 22}), which reads only p.y
 *
 * --wait prints "ready PID" and waits for a line on stdin first.
 *
 * Every function is noinline, noclone and global, and READS every argument
 * it is given: gcc's ipa-modref otherwise drops the caller's stores into
 * memory the callee never reads (the probe would see stale bytes), and
 * ipa-cp would call a constant-propagated clone instead of the symbol.
 * Strings are passed from writable memory the program has written (hence
 * resident), except cold_str's.  Results go to a volatile sink so no call is
 * removed as pure.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile long sink;

enum color { RED, GREEN, BLUE };

struct inner {
	int16_t x;
	uint32_t y;
};

struct outer {
	int id;
	struct inner in;
	const char *name;
	int vals[4];
};

/* 16 bytes, class INTEGER: rdi (a, b, c) and rsi (d). */
struct small {
	int32_t a;
	int16_t b;
	uint8_t c;
	long d;
};

/* 48 bytes: passed in memory, on the stack. */
struct big {
	long v[4];
	char tag[8];
	int32_t last;
};

struct fbox {
	double d;
	float f;
	int i;
};

/* Returned in rax:rdx. */
struct pt {
	long x;
	long y;
};

NOINLINE long widths(int8_t i8, uint8_t u8, int16_t i16, uint16_t u16, int32_t i32, uint32_t u32)
{
	BARRIER();
	return (long)i8 + u8 + i16 + u16 + i32 + u32;
}

NOINLINE long wides(int64_t i64, uint64_t u64, int32_t neg, int64_t max)
{
	BARRIER();
	return (long)(i64 ^ (int64_t)u64) + neg + (max & 1);
}

NOINLINE int chars(char c, char nul, char hi, bool t, bool f, enum color col)
{
	BARRIER();
	return c + nul + hi + t + f + (int)col;
}

NOINLINE int paint(enum color c, enum color mix)
{
	BARRIER();
	return (int)c * 10 + (int)mix;
}

NOINLINE size_t greet(const char *s, const char *none)
{
	BARRIER();
	return strlen(s) + (none ? strlen(none) : 0);
}

NOINLINE size_t cold_str(const char *s)
{
	BARRIER();
	return strlen(s);
}

NOINLINE long nested(const struct outer *o)
{
	BARRIER();
	return o->id + o->in.x + o->in.y + (long)strlen(o->name) + o->vals[0] + o->vals[1] +
	       o->vals[2] + o->vals[3];
}

NOINLINE long small_byval(struct small s)
{
	BARRIER();
	return s.a + s.b + s.c + s.d;
}

NOINLINE long big_byval(struct big b)
{
	BARRIER();
	return b.v[0] + b.v[1] + b.v[2] + b.v[3] + (long)strlen(b.tag) + b.last;
}

NOINLINE long eight(long a, long b, long c, long d, long e, long f, int g, long h)
{
	BARRIER();
	return a + b + c + d + e + f + g + h;
}

NOINLINE double scale(double x, int n)
{
	BARRIER();
	return x * n;
}

NOINLINE double fbox_sum(const struct fbox *b)
{
	BARRIER();
	return b->d + b->f + b->i;
}

/* Recursion with a double parameter: returns pair with their calls. */
NOINLINE double halve(double x, int n)
{
	BARRIER();
	return n > 0 ? halve(x / 2, n - 1) + 0.25 : x;
}

/* A pointer to arrays: its signature is "const double (*mat)[2]". */
NOINLINE double trace2(const double (*mat)[2], int n)
{
	double t = 0;

	BARRIER();
	for (int i = 0; i < n; i++)
		t += mat[i][i];
	return t;
}

NOINLINE long sum_buf(const uint8_t *buf, size_t len)
{
	long s = 0;

	BARRIER();
	for (size_t i = 0; i < len; i++)
		s += buf[i];
	return s;
}

NOINLINE long sum_ints(const int32_t *values, int n)
{
	long s = 0;

	BARRIER();
	for (int i = 0; i < n; i++)
		s += values[i];
	return s;
}

/* A parameter named "captures", the key -F chrome gives --capture values. */
NOINLINE int clash(int captures, const int32_t *v, int n)
{
	int s = captures;

	BARRIER();
	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

NOINLINE struct pt make_pt(long x, long y)
{
	struct pt p = { x * 2, y - 1 };

	BARRIER();
	return p;
}

/* void: no return value in any format (rax holds whatever was left). */
NOINLINE void move_pt(struct pt *p, long dx)
{
	BARRIER();
	p->x += dx;
}

/* No parameters, a typed return: -1 as an int, 4294967295 in rax's low half. */
NOINLINE int last_error(void)
{
	BARRIER();
	return -1;
}

static const char *const color_names[] = { "red", "green", "blue" };

NOINLINE const char *color_name(enum color c)
{
	BARRIER();
	return (unsigned)c < 3 ? color_names[c] : "?";
}

/* The bytes sum_buf gets in `all` (13 of them) and in `loop` (64). */
static const uint8_t buf13[13] = { 'h', 'i', '\n', 0, 0xff, 1, 2, 3, 4, 5, 6, 7, 0x80 };

static int run_all(void)
{
	char s[32], name[16];
	struct outer o = { 0 };
	struct small sm = { -5, 300, 250, -1234567890123L };
	struct big bg = { { 1, 2, 3, -4 }, "bigtag", -99 };
	struct fbox fb = { 2.5, -0.125f, 3 };
	uint8_t buf[13];
	int32_t v1[5] = { 1, -2, 3, 40000, -5 };
	int32_t v2[3] = { 7, 8, 9 };
	const double mat[2][2] = { { 1.5, 2 }, { 3, 4.25 } };
	struct pt p;
	long total = 0;
	double d;

	/* Writable copies: the pages are resident when the probes read them. */
	strcpy(s, "hi \"q\"\n\xc3\xa9\xff");
	strcpy(name, "outer-name");
	memcpy(buf, buf13, sizeof(buf));
	o.id = 7;
	o.in.x = -3;
	o.in.y = 40000;
	o.name = name;
	o.vals[0] = 1;
	o.vals[1] = -2;
	o.vals[2] = 3;
	o.vals[3] = 2147483647;
	for (int i = 0; i < 3; i++) /* touch color_name's strings */
		total += (long)strlen(color_names[i]);

	total += widths(-128, 255, -32768, 65535, INT32_MIN, UINT32_MAX);
	total += wides(INT64_MIN, UINT64_MAX, -7, INT64_MAX);
	total += chars('a', 0, (char)0xff, true, false, GREEN);
	total += paint(BLUE, (enum color)6);
	total += (long)greet(s, NULL);
	total += nested(&o);
	total += small_byval(sm);
	total += big_byval(bg);
	total += eight(1, -2, 3, -4, 5, -6, -7, 0x123456789L);
	d = scale(1.5, 3);
	d += fbox_sum(&fb);
	d += trace2(mat, 2);
	d += halve(8.0, 2);
	total += sum_buf(buf, sizeof(buf));
	total += sum_ints(v1, 5);
	total += sum_ints(v2, 3);
	p = make_pt(21, -41);
	total += p.x + p.y;
	total += (long)strlen(color_name(GREEN));
	p.x = 1;
	move_pt(&p, 3);
	total += p.x - 4; /* 0: the output stays as it was */
	total += last_error() + 1; /* 0 too */
	sink = total;
	printf("all total=%ld d=%g\n", total, d);
	return 0;
}

static int run_cold(const char *path)
{
	static const char text[] = "a cold string, never touched";
	char page[4096] = { 0 };
	const char *p;
	size_t n;
	int fd;

	memcpy(page, text, sizeof(text));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, page, sizeof(page)) != (ssize_t)sizeof(page)) {
		perror(path);
		return 1;
	}
	/* Private and read-only, never read before the call: no page table
	 * entry until something faults it in. */
	p = mmap(NULL, sizeof(page), PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	n = cold_str(p);
	printf("cold len=%zu\n", n);
	return 0;
}

static int run_loop(long n)
{
	uint8_t buf[64];
	int32_t v[4] = { 10, 20, 30, 40 };
	long total = 0;

	for (int i = 0; i < 64; i++)
		buf[i] = (uint8_t)i;
	for (long i = 0; n == 0 || i < n; i++) {
		buf[0] = (uint8_t)i;
		total += sum_buf(buf, sizeof(buf));
		total += sum_ints(v, 4);
		usleep(1000);
	}
	sink = total;
	printf("loop total=%ld\n", total);
	return 0;
}

/* A return value too wide for the text table's RET column. */
struct io_result {
	int status_code_value_xyz;
	int bytes_transferred_total_count;
};

NOINLINE struct io_result wide_ret(int v)
{
	struct io_result r = { v, 4096 };

	return r;
}

/* Compares its pointers, never follows them: the probe's reads of
 * (char *)8 and (struct outer *)16 fault, the program's do not happen. */
NOINLINE int badptr(const char *s, const struct outer *o)
{
	BARRIER();
	return (s != NULL) + (o != NULL);
}

/* Reads only p.y: clang -O2 callers leave p.x's register (rdi) unset. */
NOINLINE long second_of(struct pt p)
{
	BARRIER();
	return p.y;
}

/* greet() on a string of N 'x' (--strlen at its largest). */
static int run_long(long n)
{
	char *s = malloc((size_t)n + 1);

	if (!s)
		return 1;
	memset(s, 'x', (size_t)n);
	s[n] = '\0';
	printf("long len=%zu\n", greet(s, NULL));
	free(s);
	return 0;
}

static int run(int argc, char **argv)
{
	if (!strcmp(argv[0], "all"))
		return run_all();
	if (!strcmp(argv[0], "cold") && argc > 1)
		return run_cold(argv[1]);
	if (!strcmp(argv[0], "long") && argc > 1)
		return run_long(atol(argv[1]));
	if (!strcmp(argv[0], "wide") && argc > 1) {
		struct io_result r = wide_ret(atoi(argv[1]));

		printf("wide %d %d\n", r.status_code_value_xyz, r.bytes_transferred_total_count);
		return 0;
	}
	if (!strcmp(argv[0], "clash")) {
		static const int32_t v[3] = { 4, 5, 6 };

		return clash(99, v, 3) == 114 ? 0 : 1;
	}
	if (!strcmp(argv[0], "bad")) {
		int n = badptr((const char *)8, (const struct outer *)16);

		n += badptr(NULL, NULL);
		printf("bad %d\n", n);
		return 0;
	}
	if (!strcmp(argv[0], "half")) {
		struct pt p = { 11, 22 };

		printf("half %ld\n", second_of(p));
		return 0;
	}
	if (!strcmp(argv[0], "loop"))
		return run_loop(argc > 1 ? atol(argv[1]) : 0);
	fprintf(stderr, "typed: unknown scenario %s\n", argv[0]);
	return 2;
}

int main(int argc, char **argv)
{
	char line[64];

	if (argc < 2) {
		fprintf(stderr, "usage: typed [--wait] all | cold FILE | loop N\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "--wait")) {
		if (argc < 3)
			return 2;
		printf("ready %d\n", getpid());
		if (!fgets(line, sizeof(line), stdin))
			return 3;
		return run(argc - 2, argv + 2);
	}
	return run(argc - 1, argv + 1);
}
