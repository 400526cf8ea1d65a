// cxx_throw.cpp: exceptions unwinding through a traced function.  A kernel
// uretprobe on risky() would make the unwinder abort the program; cmon must
// leave its output and exit status exactly as they are untraced.
#include <cstdio>
#include <stdexcept>

namespace shapes {
struct Widget {
	int base;
	__attribute__((noinline)) int poke(int x);
};

__attribute__((noinline)) int Widget::poke(int x)
{
	if (x % 2)
		throw std::runtime_error("odd");
	return base + x;
}
} // namespace shapes

__attribute__((noinline)) int risky(int x)
{
	shapes::Widget w{100};
	return w.poke(x) + 1;
}

int main()
{
	int caught = 0, sum = 0;

	for (int i = 0; i < 6; i++) {
		try {
			sum += risky(i);
		} catch (const std::exception &) {
			caught++;
		}
	}
	std::printf("sum=%d caught=%d\n", sum, caught);
	return 0;
}
