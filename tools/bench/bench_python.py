#!/usr/bin/env python3
"""--py's cost per Python call, per CPython of this machine (Debian's
python3.11; pyenv's 3.11.7, 3.12.1, 3.13.0 when there): fib(25), 242,785
calls, as the program times itself (tests/targets/py/worker.py fib 25):

  - untraced;
  - cProfile (python -m cProfile: CPython's own profiler, every call);
  - cmon attached, fib not selected (--py nosuch): 3.11 routes every call
    through the evaluator's probe (a trap each); 3.12+ leaves the calls of
    functions not selected untouched (only the selected ones are sent
    through cmon's vectorcall entry), and --py-resumes puts 3.12+ back on
    the evaluator (to compare);
  - fib traced (--py fib, every record to a file).

Median of BENCH_RUNS runs, configurations interleaved.  Prints Markdown.
A measurement, not a test.

    OUT=build ./tools/bench/bench_python.py     (root)
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from pythons import PYTHONS  # noqa: E402  (the interpreters the tests know)

OUT = os.environ.get("OUT", "build")
CMON = os.path.join(ROOT, OUT, "cmon") if not os.path.isabs(OUT) else os.path.join(OUT, "cmon")
WORKER = os.path.join(ROOT, "tests", "targets", "py", "worker.py")
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
N = 25
CALLS = 242785  # fib(25)'s calls


def timed(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"fib \d+ = \d+ in ([0-9.]+) s", p.stdout)
    if p.returncode not in (0, 3) or not m:  # 3: cmon lost records (reported)
        sys.exit("bench_python: run failed (%d): %s %s %s" % (p.returncode, " ".join(cmd),
                                                              p.stdout, p.stderr))
    return float(m.group(1)), p.stderr


def configs(py, out):
    prog = [py.path, WORKER, "fib", str(N)]
    c = {
        "untraced": prog,
        "cProfile": [py.path, "-m", "cProfile", "-o", os.devnull, WORKER, "fib", str(N)],
        "unselected": [CMON, "trace", "-q", "-o", os.devnull, "--py", "nosuch", "--"] + prog,
    }
    if py.vectorcall:
        c["unselected, --py-resumes"] = [CMON, "trace", "-q", "-o", os.devnull, "--py-resumes",
                                         "--py", "nosuch", "--"] + prog
    c["traced"] = [CMON, "trace", "-F", "csv", "-o", out, "--ringbuf-size", "64", "--py", "fib",
                   "--"] + prog
    return c


def bench(py):
    out = tempfile.mktemp(prefix="cmon-bench-py-", suffix=".csv")
    cs = configs(py, out)
    times = {k: [] for k in cs}
    lost = "?"
    for _ in range(RUNS):
        for k, cmd in cs.items():
            t, err = timed(cmd)
            times[k].append(t)
            m = re.search(r"events lost: (\d+)", err)
            if k == "traced" and m:
                lost = m.group(1)
    rows = open(out).read().count("\n") - 1 if os.path.exists(out) else -1
    if os.path.exists(out):
        os.unlink(out)
    return {k: statistics.median(v) for k, v in times.items()}, rows, lost


def main():
    if os.geteuid() != 0:
        sys.exit("bench_python: needs root")
    found = [py for py in PYTHONS if os.access(py.path, os.X_OK)]
    if not found:
        sys.exit("bench_python: no CPython of %s here" % ", ".join(p.path for p in PYTHONS))
    print("## Python functions (--py): fib(%d), %d calls, median of %d runs\n" % (N, CALLS, RUNS))
    print("Per call, and added to an untraced call (how cmon sees the calls: 3.11 through the "
          "evaluator, a trap each; 3.12+ the selected functions alone, through cmon's "
          "vectorcall entry).\n")
    print("| CPython | untraced | cProfile | cmon, fib not selected | "
          "cmon, not selected, --py-resumes | cmon, fib traced | records |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    goals = []
    for py in found:
        med, rows, lost = bench(py)
        base = med["untraced"]

        def cell(k):
            if k not in med:
                return "-"
            t = med[k]
            return "%.0f ns (%+.0f ns, %+.0f %%)" % (t / CALLS * 1e9, (t - base) / CALLS * 1e9,
                                                   (t / base - 1) * 100)
        print("| %s (%s) | %.0f ns | %s | %s | %s | %s | %d of %d (lost %s) |"
              % (".".join(map(str, py.version)), py.tag, base / CALLS * 1e9, cell("cProfile"),
                 cell("unselected"), cell("unselected, --py-resumes"), cell("traced"), rows,
                 CALLS, lost))
        unsel = (med["unselected"] / base - 1) * 100
        traced = (med["traced"] - base) / CALLS * 1e6
        goals.append((py, unsel, traced))
    print("\n| goal | CPython | target | measured | met |")
    print("|---|---|---:|---:|:-:|")
    for py, unsel, traced in goals:
        if py.vectorcall:
            print("| calls not selected, while attached | %s | <= 15 %% | %+.0f %% | %s |"
                  % (py.tag, unsel, "yes" if unsel <= 15 else "no"))
        print("| a traced call's added cost | %s | <= 2 us | %.2f us | %s |"
              % (py.tag, traced, "yes" if traced <= 2 else "no"))


main()
