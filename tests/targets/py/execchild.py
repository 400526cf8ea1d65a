# A traced interpreter's children that run Python again, for cmon's --py
# tests: execchild.py calls work(1); runs itself through subprocess
# (work(2)), through a shell that forks it (work(3)), and in a forked child
# that calls work(4) and then execs it (work(5)); then calls work(6).
# `execchild.py wait`: all that once a line is read from stdin.
import os
import subprocess
import sys


def work(x):
    return x * 2


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "wait":
        sys.stdin.readline()
    elif len(sys.argv) > 1:
        work(int(sys.argv[1]))
        sys.exit(0)
    me = os.path.abspath(__file__)
    work(1)
    subprocess.run([sys.executable, me, "2"], check=True)
    subprocess.run("'%s' '%s' 3; true" % (sys.executable, me), shell=True, check=True)
    pid = os.fork()
    if pid == 0:
        work(4)
        os.execv(sys.executable, [sys.executable, me, "5"])
    os.waitpid(pid, 0)
    work(6)
    print("done")
