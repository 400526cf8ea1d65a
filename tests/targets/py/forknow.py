# Forked children for cmon's --py tests: 20 children, each calling
# work(x) 10 times from its first instruction after fork(), then exiting;
# prints the sum of what they returned (as their exit statuses).
import os


def work(x):
    return x * 2


if __name__ == "__main__":
    pids = []
    for i in range(20):
        pid = os.fork()
        if pid == 0:
            t = 0
            for x in range(10):
                t += work(10 * i + x)
            os._exit(t % 256)
        pids.append(pid)
    print(sum(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids))
