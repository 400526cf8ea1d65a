# Many short-lived children for cmon's --py tests: forkmany.py N forks N
# children one after another, child i calling work(i) once from its first
# instruction and exiting; prints how many exited with status 0.
import os
import sys


def work(x):
    return x * 2


if __name__ == "__main__":
    ok = 0
    for i in range(int(sys.argv[1])):
        pid = os.fork()
        if pid == 0:
            work(i)
            os._exit(0)
        ok += os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    print(ok)
