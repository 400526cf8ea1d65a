# Children alive at once for cmon's --py tests: forkwide.py N calls
# work(100), forks N children that each wait until all exist, call work(i)
# once and stay until the parent lets them go; prints how many exited
# with status 0.
import os
import sys


def work(x):
    return x * 2


if __name__ == "__main__":
    n = int(sys.argv[1])
    work(100)
    go_r, go_w = os.pipe()
    done_r, done_w = os.pipe()
    end_r, end_w = os.pipe()
    pids = []
    for i in range(n):
        pid = os.fork()
        if pid == 0:
            os.close(go_w)
            os.close(end_w)
            os.read(go_r, 1)
            work(i)
            os.write(done_w, b".")
            os.read(end_r, 1)  # end of file: the parent let go
            os._exit(0)
        pids.append(pid)
    os.write(go_w, b"." * n)
    for _ in range(n):
        os.read(done_r, 1)
    os.close(end_w)
    print(sum(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) == 0 for p in pids))
