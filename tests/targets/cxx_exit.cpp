// cxx_exit.cpp: pthread_exit() from inside traced C++ frames.  glibc ends
// the thread with a forced unwind (_Unwind_ForcedUnwind, as a Rust panic
// unwinds), which runs the destructors of the frames it passes: a kernel
// uretprobe on one of them would stop the unwinder there and skip them.
#include <cstdio>
#include <pthread.h>

struct Guard {
	int id;
	~Guard() { std::printf("guard %d released\n", id); }
};

__attribute__((noinline)) int leave(int id)
{
	Guard g{id * 10};
	if (id % 2)
		pthread_exit(nullptr); /* unwinds through leave and worker */
	return id;
}

__attribute__((noinline)) int worker(int id)
{
	Guard g{id};
	return leave(id) + 1;
}

static void *run(void *arg)
{
	std::printf("worker %d returned %d\n", (int)(long)arg, worker((int)(long)arg));
	return nullptr;
}

int main()
{
	for (long id = 1; id <= 2; id++) {
		pthread_t t;

		pthread_create(&t, nullptr, run, (void *)id);
		pthread_join(t, nullptr);
	}
	std::printf("done\n");
	return 0;
}
