# A class's __init__ called at two call sites, warm before cmon attaches
# with -p (cmon's --py tests):
#   initloop.py   makes Point(i) and Sub(i) 5000 times each, then prints
#                 "ready PID"; per stdin line one command: "run N" makes
#                 N more of each at the same sites and prints "ran N inits K"
#                 (K: the __init__ calls it counted itself), "state" prints
#                 the two sites' instructions (CPython 3.13's specialized
#                 ones: `Class(...)` entering __init__ without a call) and
#                 Point's budget of version tags, "swap" gives Point a new
#                 method m and prints "swapped T", T the sum of 100 calls of
#                 it through a Sub (whose lookups of m were specialized
#                 before: they must see the new one), "quit" exits
import ctypes
import dis
import os
import sys

inits = 0


class Point:
    def __init__(self, x):
        global inits
        inits += 1
        self.x = x

    def m(self):
        return 1


class Sub(Point):
    pass


def make(n):
    total = 0
    for i in range(n):
        total += Point(i).x
        total += Sub(i).x
    return total


def calls(n, o):
    total = 0
    for i in range(n):
        total += o.m()
    return total


def state():
    sites, cls = [], None
    for i in dis.get_instructions(make, adaptive=True):
        if i.opname.startswith("LOAD_GLOBAL"):
            cls = i.argval
        elif i.opname.startswith("CALL") and cls in ("Point", "Sub"):
            sites.append(i.opname)
            cls = None
    used = ctypes.c_uint16.from_address(id(Point) + 410).value if sys.version_info >= (3, 13) else 0
    return "state %s used %d" % (" ".join(sites), used)


make(5000)
calls(5000, Sub(0))
swaps = 0
print("ready %d" % os.getpid(), flush=True)
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "run":
        before = inits
        make(int(cmd[1]))
        print("ran %s inits %d" % (cmd[1], inits - before), flush=True)
    elif cmd[0] == "state":
        print(state(), flush=True)
    elif cmd[0] == "swap":
        swaps += 1
        Point.m = eval("lambda self: %d" % (swaps + 1))
        print("swapped %d" % calls(100, Sub(0)), flush=True)
    elif cmd[0] == "quit":
        break
