#!/usr/bin/env python3
"""The agent's overhead budget (issue 26): a target calling count_me() at a
known rate (tests/targets/sleeper paced K TICKS: K calls every millisecond
for TICKS ms, on an absolute clock) under three configurations, runs
interleaved: untraced; the agent counting count_me with its probes whole;
the agent with `budget: 1%`.  What the probes cost the target is its own
CPU time (utime + stime: a uprobe's trap is the target's) less the
untraced run's, over the run's wall time, as a share of one CPU.  Goals:
under the budget that cost is within the budget +-10 % of it, and the
agent's scaled count within 5 % of the true count.  Median of BENCH_RUNS
runs.  Each run has an untraced twin beside it (the same program copied
to another file, so not probed): the cost is also given against it, the
machine's load being the same for both.  Prints Markdown.  A
measurement, not a test.

    OUT=build ./tools/bench/bench_budget.py     (root)

BENCH_BUDGET_K (default 20) calls a millisecond, BENCH_BUDGET_TICKS
(default 10000: 10 s a run).
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("OUT", "build")
BUILD = OUT if os.path.isabs(OUT) else os.path.join(ROOT, OUT)
CMON = os.environ.get("CMON") or os.path.join(BUILD, "cmon")
TARGET = os.path.join(BUILD, "targets", "sleeper")
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
K = int(os.environ.get("BENCH_BUDGET_K", "20"))
TICKS = int(os.environ.get("BENCH_BUDGET_TICKS", "10000"))
BUDGET = 0.01


def run_target(twin):
    """(CPU seconds, wall seconds, the twin's CPU seconds) of one paced run,
    beside the same run of TWIN (a copy of the target: not probed)."""
    t0 = time.monotonic()
    ps = [subprocess.Popen([exe, "paced", str(K), str(TICKS)], stdout=subprocess.PIPE, text=True)
          for exe in (TARGET, twin)]
    cpu = []
    for p in ps:
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        if status != 0 or out != "paced count_me=%d tick=%d\n" % (K * TICKS, TICKS // 10):
            sys.exit("bench_budget: the target failed (%d): %r" % (status, out))
        cpu.append(ru.ru_utime + ru.ru_stime)
        if p is ps[0]:
            wall = time.monotonic() - t0
    return cpu[0], wall, cpu[1]


class Agent:
    def __init__(self, budget, tmp):
        spec = os.path.join(tmp, "spec.yaml")
        with open(spec, "w") as f:
            if budget:
                f.write("budget: %g%%\n" % (budget * 100))
            f.write("probes:\n  - name: hot\n    target: %s\n    func: count_me\n"
                    "    instrument: count\n" % TARGET)
        self.err = os.path.join(tmp, "agent.err")
        self.p = subprocess.Popen([CMON, "agent", "--spec", spec, "--listen", "127.0.0.1:0"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=open(self.err, "w"))
        end = time.monotonic() + 60
        while time.monotonic() < end:
            m = re.search(r"ready: serving http://([0-9.:]+)/metrics", open(self.err).read())
            if m:
                self.addr = m.group(1)
                return
            if self.p.poll() is not None:
                break
            time.sleep(0.05)
        sys.exit("bench_budget: the agent did not start: %s" % open(self.err).read()[-500:])

    def metric(self, name):
        with urllib.request.urlopen("http://%s/metrics" % self.addr, timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(name):
                    return float(line.rsplit(" ", 1)[1])
        return None

    def stop(self):
        self.p.terminate()
        self.p.wait(30)


def main():
    if os.geteuid() != 0:
        sys.exit("bench_budget: needs root")
    for f in (CMON, TARGET):
        if not os.access(f, os.X_OK):
            sys.exit("bench_budget: %s is not built" % f)
    true = K * TICKS
    cpu = {"none": [], "full": [], "budget": []}
    twin = {"none": [], "full": [], "budget": []}
    wall = {"full": [], "budget": []}
    est, seen = [], []
    with tempfile.TemporaryDirectory(prefix="cmon-bench-budget-") as tmp:
        # The untraced twin: the same program from another file, run beside
        # each run (the machine's load is the same for both, and its CPU
        # time varies with it more than the budget is).
        twin_exe = os.path.join(tmp, "sleeper-twin")
        with open(TARGET, "rb") as f, open(twin_exe, "wb") as g:
            g.write(f.read())
        os.chmod(twin_exe, 0o755)
        for i in range(RUNS):
            for conf in ("none", "full", "budget"):
                print("bench_budget: run %d/%d, %s" % (i + 1, RUNS, conf), file=sys.stderr)
                a = Agent(BUDGET if conf == "budget" else 0, tmp) if conf != "none" else None
                try:
                    c, w, tc = run_target(twin_exe)
                    cpu[conf].append(c)
                    twin[conf].append(tc)
                    if a:
                        wall[conf].append(w)
                    if conf == "budget":
                        time.sleep(1.5)  # a round of the agent past the end
                        est.append(a.metric('cmon_hot_calls_total{'))
                        seen.append(a.metric('cmon_agent_calls_seen_total{'))
                        print("bench_budget:   cost %.2f %% (less the last untraced run), "
                              "%.2f %% (less its twin), estimated %s, seen %s"
                              % ((c - cpu["none"][-1]) / w * 100, (c - tc) / w * 100,
                                 est[-1], seen[-1]), file=sys.stderr)
                finally:
                    if a:
                        a.stop()
    base = statistics.median(cpu["none"])
    cost = {c: (statistics.median(cpu[c]) - base) / statistics.median(wall[c])
            for c in ("full", "budget")}
    err = statistics.median([abs(e - true) / true for e in est if e is not None] or [float("nan")])
    print("## The overhead budget (agent, `budget: 1%`)")
    print()
    print("count_me() %d times a millisecond (%d calls in %.0f s), median of %d runs; cost: "
          "the target's CPU time less its untraced time, over the run, as a share of one CPU."
          % (K, true, TICKS / 1000, RUNS))
    print()
    cut = abs(cost["budget"] - BUDGET) <= 0.1 * BUDGET
    est_med = statistics.median(e for e in est if e is not None) if any(
        e is not None for e in est) else float("nan")
    print("| configuration | target CPU (s) | cost (% of a CPU) | goal | count | error | goal |")
    print("|---|---:|---:|---|---:|---:|---|")
    print("| untraced | %.3f | - | | %d (true) | | |" % (base, true))
    print("| agent, probes whole | %.3f | %.2f %% | | exact | 0 | |"
          % (statistics.median(cpu["full"]), cost["full"] * 100))
    print("| agent, budget 1%% | %.3f | %.2f %% | 0.9-1.1 %%: %s | %.0f estimated (%s seen) "
          "| %.1f %% | 5 %%: %s |"
          % (statistics.median(cpu["budget"]), cost["budget"] * 100, "PASS" if cut else "MISS",
             est_med, "%.0f" % statistics.median(s for s in seen if s is not None) if seen
             else "?", err * 100, "PASS" if err <= 0.05 else "MISS"))
    print()
    print("Per run (cost less that run's untraced CPU; estimate): %s."
          % "; ".join("%.2f %%, %s" % ((cpu["budget"][i] - cpu["none"][i]) / wall["budget"][i]
                                        * 100, "%.0f" % est[i] if est[i] is not None else "?")
                      for i in range(len(est))))
    # The same against the untraced twin run beside each run, less the two
    # copies' difference untraced (what is left of the machine's noise).
    paired = {c: [(cpu[c][i] - twin[c][i] - (cpu["none"][i] - twin["none"][i])) / wall[c][i]
                  for i in range(len(cpu[c]))] for c in ("full", "budget")}
    pb = statistics.median(paired["budget"])
    print()
    print("Paired with an untraced twin run beside each run: probes whole %.2f %%, budget 1%% "
          "%.2f %% (0.9-1.1 %%: %s); per run %s; untraced, the twins differ by %s s."
          % (statistics.median(paired["full"]) * 100, pb * 100,
             "PASS" if abs(pb - BUDGET) <= 0.1 * BUDGET else "MISS",
             ", ".join("%.2f %%" % (x * 100) for x in paired["budget"]),
             ", ".join("%+.3f" % (cpu["none"][i] - twin["none"][i]) for i in range(RUNS))))


if __name__ == "__main__":
    main()
