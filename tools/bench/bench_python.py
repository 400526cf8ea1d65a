#!/usr/bin/env python3
"""--py's cost: fib(25) (242,785 Python calls) in Debian's python3.11, as
the program times itself (tests/targets/py/worker.py fib 25): untraced;
with cmon attached but fib not selected (--py nosuch: every Python call
still passes the eval_frame hook and the evaluator's entry and return
probes, which find the code object refused); and with every fib call
traced (--py fib, records to a file).  Median of BENCH_RUNS runs,
configurations interleaved.  Prints Markdown.  A measurement, not a test.

    OUT=build ./tools/bench/bench_python.py     (root)
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("OUT", "build")
CMON = os.path.join(ROOT, OUT, "cmon") if not os.path.isabs(OUT) else os.path.join(OUT, "cmon")
PY = "/usr/bin/python3.11"
WORKER = os.path.join(ROOT, "tests", "targets", "py", "worker.py")
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
N = 25
CALLS = 242785  # fib(25)'s calls


def timed(prefix):
    p = subprocess.run(prefix + [PY, WORKER, "fib", str(N)], capture_output=True, text=True)
    m = re.search(r"fib \d+ = \d+ in ([0-9.]+) s", p.stdout)
    if p.returncode not in (0, 3) or not m:  # 3: cmon lost records (reported)
        sys.exit("bench_python: run failed (%d): %s %s" % (p.returncode, p.stdout, p.stderr))
    return float(m.group(1)), p.stderr


def main():
    if os.geteuid() != 0:
        sys.exit("bench_python: needs root")
    if not os.access(PY, os.X_OK):
        sys.exit("bench_python: %s not installed" % PY)
    out = tempfile.mktemp(prefix="cmon-bench-py-", suffix=".csv")
    configs = {
        "untraced": [],
        "attached, fib not traced": [CMON, "trace", "-q", "-o", "/dev/null", "--py", "nosuch",
                                     "--"],
        "fib traced": [CMON, "trace", "-F", "csv", "-o", out, "--ringbuf-size", "64", "--py",
                       "fib", "--"],
    }
    times = {k: [] for k in configs}
    lost = "?"
    for _ in range(RUNS):
        for k, prefix in configs.items():
            t, err = timed(prefix)
            times[k].append(t)
            m = re.search(r"events lost: (\d+)", err)
            if k == "fib traced" and m:
                lost = m.group(1)
    rows = open(out).read().count("\n") - 1 if os.path.exists(out) else -1
    if os.path.exists(out):
        os.unlink(out)
    base = statistics.median(times["untraced"])
    print("## Python functions (--py): fib(%d), %d calls, median of %d runs\n" % (N, CALLS, RUNS))
    print("| configuration | time | per call | vs untraced |")
    print("|---|---:|---:|---:|")
    for k in configs:
        t = statistics.median(times[k])
        print("| %s | %.3f s | %.0f ns | %+.0f %% (%+.0f ns a call) |"
              % (k, t, t / CALLS * 1e9, (t / base - 1) * 100, (t - base) / CALLS * 1e9))
    print("\nrecords written in the last traced run: %d of %d calls (lost, counted: %s)"
          % (rows, CALLS, lost))
    traced = (statistics.median(times["fib traced"]) - base) / CALLS * 1e6
    attached = (statistics.median(times["attached, fib not traced"]) / base - 1) * 100
    print("\n| goal | target | measured | met |")
    print("|---|---:|---:|:-:|")
    print("| a traced Python call's added cost | <= 2 us | %.2f us | %s |"
          % (traced, "yes" if traced <= 2 else "no"))
    print("| untraced Python calls' slowdown while attached | <= 15 %% | %.0f %% | %s |"
          % (attached, "yes" if attached <= 15 else "no"))


main()
