// ctor.cpp: a constructor emitted once under two names at one address
// (the Itanium ABI's complete-object C1 and base-object C2 constructors):
// naming either, or both, gives one probe (test_safety.py).
#include <cstdio>
#include <cstdlib>

struct Widget {
	int v;
	Widget(int x);
};

__attribute__((noinline, noipa)) Widget::Widget(int x) : v(x * 2)
{
	asm volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	Widget w(argc + 20);
	Widget *h = new Widget(atoi(argv[0]) + 5);

	std::printf("ctor %d %d\n", w.v, h->v);
	delete h;
	return 0;
}
