/* coro.c: a generator on a ucontext coroutine whose stack is an array in
 * main's frame (above the frames that switch to it), or with `static` a
 * static array (below the main stack).  produce() yields
 * the values 10, 20, 30 to next_value() by swapcontext.  A kernel
 * uretprobe on next_value is dropped when the coroutine's stack pointer
 * moves above it, and its return then crashes the program: cmon must
 * leave the output and the exit status (3) unchanged. */
#include <stdio.h>
#include <ucontext.h>

static ucontext_t main_ctx, gen_ctx;
static long current;
static int done;

__attribute__((noinline)) long produce(long v)
{
	current = v;
	swapcontext(&gen_ctx, &main_ctx); /* yield */
	return v + 1;
}

static void generator(void)
{
	for (long v = 10; v <= 30; v += 10)
		produce(v);
	done = 1;
}

__attribute__((noinline)) long next_value(void)
{
	swapcontext(&main_ctx, &gen_ctx); /* resume the generator */
	return done ? -1 : current;
}

static char static_stack[64 * 1024] __attribute__((aligned(16)));

int main(int argc, char **argv)
{
	char stack[64 * 1024] __attribute__((aligned(16)));
	int below = argc > 1 && argv[1][0] == 's';
	long v;

	getcontext(&gen_ctx);
	gen_ctx.uc_stack.ss_sp = below ? static_stack : stack;
	gen_ctx.uc_stack.ss_size = sizeof(stack);
	gen_ctx.uc_link = &main_ctx;
	makecontext(&gen_ctx, generator, 0);
	while ((v = next_value()) >= 0)
		printf("value %ld\n", v);
	return 3;
}
