# multiprocessing children for cmon's --py tests: work(x) called 200 times
# in two forked workers; prints its pid, then the sum.
import multiprocessing as mp
import os


def work(x):
    return x * 2


if __name__ == "__main__":
    mp.set_start_method("fork")
    print("parent %d" % os.getpid(), flush=True)
    with mp.Pool(2) as pool:
        print(sum(pool.map(work, range(200), chunksize=10)))
