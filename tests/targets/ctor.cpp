// ctor.cpp: a constructor emitted once under two names at one address
// (the Itanium ABI's complete-object C1 and base-object C2 constructors):
// naming either, or both, gives one probe (test_safety.py).
#include <cstdio>
#include <cstdlib>
#include <new>

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
	// Both constructed in zeroed storage, so each entry record's this->v (read
	// before the constructor sets it) is 0, not whatever the stack held.
	alignas(Widget) static unsigned char storage[sizeof(Widget)];
	Widget &w = *new (storage) Widget(argc + 20);
	Widget *h = new (std::calloc(1, sizeof(Widget))) Widget(atoi(argv[0]) + 5);

	std::printf("ctor %d %d\n", w.v, h->v);
	std::free(h);
	return 0;
}
