# A Python process for cmon's --py tests of -p --follow: "ready PID", then
# per stdin line one command: "fork" forks a child calling step(i) for i
# in 0..4 from its first instruction ("fork 30": its exit status, their
# sum), "quit" exits.
import os
import sys
import threading


def step(i):
    return i * i


if __name__ == "__main__":
    print("ready %d" % threading.get_native_id(), flush=True)
    for line in sys.stdin:
        if line.strip() == "fork":
            pid = os.fork()
            if pid == 0:
                os._exit(sum(step(i) for i in range(5)))
            print("fork %d" % os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
        elif line.strip() == "quit":
            break
