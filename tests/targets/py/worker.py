# A Python process for cmon's --py tests (-p, threads, restore).
#   worker.py threads N   two threads, each calling work(k, i) N times
#   worker.py wait        "ready PID", then per stdin line one command:
#                         "eval" prints interp->eval_frame, "vc" the
#                         functions sent through cmon's vectorcall entry
#                         (3.12+; "-" before), "run" calls
#                         step(i) for i in 0..4, "block" calls blocked("b"),
#                         which returns the next line, "quit" exits
#   worker.py fib N       fib(N), timed: "fib N = V in S s"
#   worker.py spin        "ready PID", then two threads call fib(12) until a
#                         line on stdin, checking each value: "spin ok" or
#                         "spin BAD"
import ctypes
import sys
import threading
import time


def work(k, i):
    return k * 1000 + i


def step(i):
    return i * i


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def blocked(tag):
    print("blocked %s" % tag, flush=True)
    return sys.stdin.readline().strip()


def eval_frame():
    api = ctypes.pythonapi
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    interp = api.PyInterpreterState_Get()
    at = {11: 1424, 12: 1744, 13: 8472}[sys.version_info[1]]
    return ctypes.c_void_p.from_address(interp + at).value or 0


def vectorcalls():
    """3.12+: which of step, fib, work have a vectorcall other than a
    function's own (cmon sent them through its entry)."""
    if sys.version_info[1] < 12:
        return "-"
    at = 128  # PyFunctionObject.vectorcall

    def own():
        pass

    mine = ctypes.c_void_p.from_address(id(own) + at).value
    moved = [f.__name__ for f in (step, fib, work)
             if ctypes.c_void_p.from_address(id(f) + at).value != mine]
    return ",".join(moved) or "none"


def threads(n):
    def body(k):
        for i in range(n):
            work(k, i)

    ts = [threading.Thread(target=body, args=(k,)) for k in (1, 2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("threads done")


def wait():
    print("ready %d" % threading.get_native_id(), flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "eval":
            print("eval %#x" % eval_frame(), flush=True)
        elif cmd == "vc":
            print("vc %s" % vectorcalls(), flush=True)
        elif cmd == "run":
            print("run %d" % sum(step(i) for i in range(5)), flush=True)
        elif cmd == "block":
            print("unblocked %s" % blocked("b"), flush=True)
        elif cmd == "quit":
            break


def spin():
    bad = []
    stop = []

    def body():
        while not stop:
            if fib(12) != 144:
                bad.append(1)

    ts = [threading.Thread(target=body) for _ in range(2)]
    print("ready %d" % threading.get_native_id(), flush=True)
    for t in ts:
        t.start()
    sys.stdin.readline()
    stop.append(1)
    for t in ts:
        t.join()
    print("spin BAD" if bad else "spin ok", flush=True)


def main():
    if sys.argv[1] == "threads":
        threads(int(sys.argv[2]))
    elif sys.argv[1] == "wait":
        wait()
    elif sys.argv[1] == "spin":
        spin()
    elif sys.argv[1] == "fib":
        n = int(sys.argv[2])
        t = time.perf_counter()
        v = fib(n)
        print("fib %d = %d in %.6f s" % (n, v, time.perf_counter() - t), flush=True)


main()
