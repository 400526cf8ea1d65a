# Children forked from a thread and an exec'd child for cmon's --py tests:
# a thread forks 5 children that call work(x) 10 times each from their
# first instruction after fork(); then a child forked by the main thread
# execs this interpreter again ("exec" argument), which calls work(x) 10
# times; prints the sum of what the forked children returned, and the
# exec'd child's sum.
import os
import sys
import threading


def work(x):
    return x * 2


def fork_some(pids):
    for i in range(5):
        pid = os.fork()
        if pid == 0:
            t = 0
            for x in range(10):
                t += work(10 * i + x)
            os._exit(t % 256)
        pids.append(pid)


if __name__ == "__main__":
    if sys.argv[1:] == ["exec"]:
        print(sum(work(x) for x in range(50, 60)), flush=True)
        sys.exit(0)
    pids = []
    th = threading.Thread(target=fork_some, args=(pids,))
    th.start()
    th.join()
    print(sum(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids), flush=True)
    pid = os.fork()
    if pid == 0:
        os.execv(sys.executable, [sys.executable, __file__, "exec"])
    os.waitpid(pid, 0)
