"""The agent's overhead budget (`budget: 1%` in the spec): a hot function
over the budget is duty-cycled (its probes attached a fraction of the
time), a cold one stays whole and exact; what was shed is reported (the
calls seen, the attached fraction) and the count is scaled up to an
estimate, never silently short.  Values only: the target's own slowdown
is measured by `make bench`, not here."""
import json
import os
import re
import subprocess
import time

from agentlib import Agent, HANG, SLOW, run_target, series, value
from cmonlib import (assert_no_leak, bpf_snapshot, check, eq, read_text, run, Background, CMON,
                     target, tmpfile)

HOT_PER_MS = 20     # count_me calls a millisecond: 20000/s, over 1 % of a CPU traced
TICKS = 8000        # milliseconds; tick() every tenth: 800 calls, cheap
BUDGET = 0.01
# The estimate's spread here (a loaded 2-CPU VM, a 10 us single-stepped
# probe): 2 to 30 % low, the rate in a window being the rate under the
# probes; unscaled it would be ~85 % low.  The bench measures it quietly.
SCALE_TOLERANCE = 0.35


def log_rows(log):
    """The log's whole lines (the agent may be writing the last one)."""
    return [json.loads(l) for l in read_text(log).split("\n")[:-1]]


def settled_log(log, start, ticks, guard=HANG):
    """The log's rows once TICKS tick records past row START are in and no
    row came in for a second: the agent drains when the machine lets it
    (a fixed wait lost records' tail on a loaded machine)."""
    end, last = time.monotonic() + guard * SLOW, None
    while True:
        rows = log_rows(log)
        done = sum(1 for r in rows[start:] if r["func"] == "tick") >= ticks
        if (done and len(rows) == last) or time.monotonic() > end:
            return rows
        last = len(rows) if done else None
        time.sleep(1)


def settled_metrics(a, name, expected, **labels):
    """The metrics once NAME{LABELS} reached EXPECTED (a round of the agent
    past the target's end)."""
    a.wait_metric(name, expected, **labels)
    return a.metrics()


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def settled_cost(a, tries=20):
    """The metrics once every function's measured cost stayed the same over
    two reads 0.6 s apart (more than two rounds of the budget)."""
    last = None
    for _ in range(tries):
        m = a.metrics()
        now = series(m, "cmon_agent_call_cost_measured_seconds")
        if now == last:
            return m
        last = now
        time.sleep(0.6)
    check(False, "the measured costs kept changing: %r" % last)


def test_budget_duty_cycles_the_hot_function():
    before = bpf_snapshot()
    app = target("sleeper")
    spec = tmpfile("budget.yaml")
    write(spec, "budget: 1%%\nprobes:\n  - name: paced\n    target: %s\n"
          "    func: [count_me, tick]\n    instrument: count\n" % app)
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"paced": "applied"})
        total, cold = HOT_PER_MS * TICKS, TICKS // 10
        p = subprocess.Popen([app, "paced", str(HOT_PER_MS), str(TICKS)],
                             stdout=subprocess.PIPE, text=True)
        # While it runs: once count_me is cut, what the probes cost (as
        # the agent accounts it) stays within the budget at every scrape.
        costs, cut_seen = [], False
        while p.poll() is None:
            m = a.metrics()
            s = series(m, "cmon_agent_sampled", probe="paced", function="count_me")
            if s and next(iter(s.values())) < 1:
                cut_seen = True
            if cut_seen and series(m, "cmon_agent_overhead_ratio"):
                costs.append(value(m, "cmon_agent_overhead_ratio"))
            time.sleep(0.25)
        eq((p.returncode, p.stdout.read()), (0, "paced count_me=%d tick=%d\n" % (total, cold)),
           "target")
        check(cut_seen and costs, "count_me was cut while the target ran: %s"
              % a.stderr[-2000:])
        check(all(0 <= c <= BUDGET * 1.0001 for c in costs),
              "the probes' cost within the budget %r at every scrape: %r" % (BUDGET, costs))
        settled_metrics(a, "cmon_agent_calls_seen_total", cold, probe="paced", function="tick")
        # The target gone, its cost measured stays as it is once the
        # stretches read before it went are taken (a round or two).
        m = settled_cost(a)
        eq(value(m, "cmon_agent_budget_ratio"), BUDGET, "the budget exported")
        # The cold function: whole, every call counted.
        eq(value(m, "cmon_agent_sampled", probe="paced", function="tick"), 1, "tick whole")
        eq(value(m, "cmon_paced_calls_total", function="tick"), cold, "tick's exact count")
        eq(value(m, "cmon_agent_calls_seen_total", probe="paced", function="tick"), cold,
           "tick: every call seen")
        # The hot one: cut, what it shed said, its count an estimate.
        frac = value(m, "cmon_agent_sampled", probe="paced", function="count_me")
        check(0.001 <= frac < 1, "count_me duty-cycled: attached fraction %r" % frac)
        seen = value(m, "cmon_agent_calls_seen_total", probe="paced", function="count_me")
        check(0 < seen < total * 0.7, "count_me: %d of %d calls seen" % (seen, total))
        est = value(m, "cmon_paced_calls_total", function="count_me")
        check(abs(est - total) <= SCALE_TOLERANCE * total,
              "count_me scaled to %d, true count %d (seen %d, fraction %.4f)"
              % (est, total, seen, frac))
        per = series(m, "cmon_agent_function_overhead_ratio", probe="paced")
        eq(len(per), 2, "a cost per function")
        check(abs(sum(per.values()) - value(m, "cmon_agent_overhead_ratio")) < 1e-9,
              "the total is the functions' sum")
        # What a call costs: the host's calibration (the traps, as `cmon
        # list` measures them when it starts, and the BPF programs' run
        # time), and for count_me, cycled, as measured on the target's CPU
        # time.  Both are measurements of this host (5.5 to 8 us a call
        # here, either): the measured one is of the calibration's order.
        calib = value(m, "cmon_agent_call_cost_calibrated_seconds", probe="paced",
                      function="count_me") * 1e9
        check(calib > 0, "count_me calibrated %.0f ns a call" % calib)
        measured = value(m, "cmon_agent_call_cost_measured_seconds", probe="paced",
                         function="count_me") * 1e9
        check(calib / 4 <= measured <= calib * 8, "count_me measured %.0f ns a call (calibrated "
              "%.0f)" % (measured, calib))
        eq(series(m, "cmon_agent_call_cost_measured_seconds", function="tick"), {},
           "tick never detached: its cost not measured")
        err = a.stderr
        cut = re.findall(r"probe paced: count_me costs ([0-9.]+)% of a CPU whole, over the "
                         r"budget of 1%: attached ([0-9.]+)% of the time", err)
        check(cut, "the duty cycle logged: %s" % err[-2000:])
        check(float(cut[0][0]) > 1, "count_me's whole cost %s%% is over the budget" % cut[0][0])
        check("tick costs" not in err, "tick never cut: %s" % err[-2000:])
        # /status and --status say the same.
        st = a.status()["agent"]
        eq(st["budget"], BUDGET, "/status budget")
        duty = {d["function"]: d for d in st["duty"]}
        eq(sorted(duty), ["count_me", "tick"], "/status: the functions under the budget")
        eq((duty["tick"]["sampled"], duty["tick"]["seen"]), (1, cold), "/status: tick")
        eq(duty["tick"]["measured_call_ns"], None, "/status: tick's cost not measured")
        # (the calibrated cost has the BPF programs' mean run time in it,
        # which moves a little even with the target gone)
        eq(duty["count_me"]["measured_call_ns"], round(measured),
           "/status: count_me's measured cost as /metrics")
        check(abs(duty["count_me"]["call_ns"] - calib) <= 0.05 * calib,
              "/status: count_me's calibrated cost %r as /metrics %r"
              % (duty["count_me"]["call_ns"], calib))
        check(duty["count_me"]["sampled"] < 1 and 0 < duty["count_me"]["seen"] < total,
              "/status: count_me %r" % duty["count_me"])
        code, out, err = run([CMON, "agent", "--status", "--listen", a.addr])
        eq(code, 0, "cmon agent --status (%s)" % err)
        check(re.search(r"^budget 1\.00% of one CPU, the probes cost [0-9.]+% now$", out, re.M),
              "--status shows the budget: %s" % out)
        lines = [l for l in out.splitlines() if l.startswith("  duty-cycled ")]
        eq(len(lines), 1, "--status: one function duty-cycled: %s" % out)
        check(re.match(r"  duty-cycled paced/count_me: attached [0-9.]+% of the time, costs "
                       r"[0-9.]+%, [0-9]+ calls seen \(its counts are estimates\); a call costs "
                       + r"%d ns measured, [0-9]+ ns calibrated$" % round(measured),
                       lines[0]),
              "--status line %r (/status: %r)" % (lines[0], duty["count_me"]))
    finally:
        eq(a.stop(), 0, "agent exit status")
    assert_no_leak(before)


def test_budget_bad_values():
    app = target("sleeper")
    for text, msg in (("2", "a budget is a percentage of one CPU: 0.5%, 1%, 100%"),
                      ("150%", "a budget is at most 100 % (one CPU)"),
                      ("0%", "a budget of 0 % leaves no probe: more than 0 %")):
        before = bpf_snapshot()
        spec = tmpfile("bad-budget.yaml")
        write(spec, "budget: %s\nprobes:\n  - name: p\n    target: %s\n    func: tick\n"
              "    instrument: count\n" % (text, app))
        code, _, err = run([CMON, "agent", "--spec", spec, "--listen", "127.0.0.1:0"],
                           timeout=30)
        check(code != 0, "agent with budget %s exited %d" % (text, code))
        lines = [l for l in err.splitlines() if l.strip()]
        eq(len(lines), 1, "one error line for budget %s: %r" % (text, err))
        check(("line 1: budget: '%s': %s" % (text, msg)) in lines[0],
              "the error says why: %r" % lines[0])
        assert_no_leak(before)


def _profile_budget_run(funcs):
    """`cmon profile --budget 1%` of FUNCS on `sleeper paced`: its final
    JSON rows by function, and its stderr (the target's output checked)."""
    app = target("sleeper")
    args = [CMON, "profile", "--budget", "1%"]
    for f in funcs:
        args += ["--func", f]
    code, out, err = run(args + ["-F", "json", "--", app, "paced", str(HOT_PER_MS), str(TICKS)],
                         timeout=120)
    eq(code, 0, "cmon profile exit status: %s" % err)
    rows = {}
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            rows[r["func"]] = r
        else:
            eq(line, "paced count_me=%d tick=%d" % (HOT_PER_MS * TICKS, TICKS // 10),
               "target output")
    return rows, err


def test_profile_budget_under_traced_main():
    """The same with main traced too: a call pending all the run.  With a
    uretprobe on main (Linux 6.12+), detaching count_me at the end of its
    first window waited until main returned (every uprobe detach waits for
    a pending uretprobe whose thread keeps calling probed functions:
    probe/detach.h): count_me stayed as it was and its count came out as
    one window's, 10,000 of 160,000.  Under a budget the returns are seen
    at ret instructions where they can be."""
    before = bpf_snapshot()
    total, cold = HOT_PER_MS * TICKS, TICKS // 10
    rows, _ = _profile_budget_run(["count_me", "tick", "main"])
    eq((rows["main"]["calls"], rows["main"]["returns"]), (1, 1), "main's one call")
    eq((rows["tick"]["calls"], rows["tick"]["seen_calls"]), (cold, cold), "tick whole")
    c = rows["count_me"]
    check(c["sampled"] < 1, "count_me duty-cycled: %r" % c)
    check(abs(c["calls"] - total) <= SCALE_TOLERANCE * total,
          "count_me scaled to %d, true count %d" % (c["calls"], total))
    eq(c["returns"], c["seen_calls"], "latencies are those of the calls seen")
    assert_no_leak(before)


def test_profile_budget():
    """`cmon profile --budget 1%`: the same keeping as the agent's; the
    final JSON rows say what each function's count is (sampled, seen_calls)
    and stderr says what was shed."""
    before = bpf_snapshot()
    total, cold = HOT_PER_MS * TICKS, TICKS // 10
    rows, err = _profile_budget_run(["count_me", "tick"])
    t = rows["tick"]
    eq((t["calls"], t["seen_calls"], t["sampled"]), (cold, cold, 1), "tick whole and exact")
    c = rows["count_me"]
    check(0.001 <= c["sampled"] < 1, "count_me duty-cycled: %r" % c)
    check(0 < c["seen_calls"] < total * 0.7, "count_me: %d of %d seen" % (c["seen_calls"], total))
    check(abs(c["calls"] - total) <= SCALE_TOLERANCE * total,
          "count_me scaled to %d, true count %d" % (c["calls"], total))
    eq(c["returns"], c["seen_calls"], "latencies are those of the calls seen")
    m = re.search(r"^cmon: count_me: duty-cycled \(attached [0-9.]+% of the time at the end\): "
                  r"(\d+) calls seen, (\d+) estimated$", err, re.M)
    check(m, "what was shed said on stderr: %s" % err)
    eq((int(m.group(1)), int(m.group(2))), (c["seen_calls"], c["calls"]), "stderr and JSON agree")
    check("tick: duty-cycled" not in err, "tick not cut: %s" % err)
    # A budget that is not one: one line, the usage status.
    code, out, err = run([CMON, "profile", "--budget", "150%", "--func", "tick", "--",
                          target("sleeper"), "paced", "1", "1"])
    eq((code, err), (2, "cmon: profile: invalid --budget '150%': a budget is at most 100 % "
                        "(one CPU)\n"), "bad --budget")
    assert_no_leak(before)


def test_budget_log_probe():
    """A log probe under the budget: the hot function's records are a sample
    (each marked with its fraction), exactly the calls its probes saw
    whole; the cold one's are every call, unmarked."""
    before = bpf_snapshot()
    app = target("sleeper")
    spec, log = tmpfile("budget-log.yaml"), tmpfile("budget-log.jsonl")
    write(spec, "budget: 1%%\nprobes:\n  - name: calls\n    target: %s\n"
          "    func: [count_me, tick]\n    instrument: log\n    log: {path: %s, max_bytes: 1G}\n"
          % (app, log))
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"calls": "applied"})
        total, cold = HOT_PER_MS * TICKS, TICKS // 10
        eq(run_target(app, "paced", HOT_PER_MS, TICKS),
           "paced count_me=%d tick=%d\n" % (total, cold), "target output")
        rows = settled_log(log, 0, cold)
        m = settled_metrics(a, "cmon_agent_calls_seen_total",
                            sum(1 for r in rows if r["func"] == "count_me"),
                            probe="calls", function="count_me")
        eq(value(m, "cmon_agent_events_lost_total", probe="calls"), 0, "nothing lost")
        hot = [r for r in rows if r["func"] == "count_me"]
        ticks = [r for r in rows if r["func"] == "tick"]
        eq(len(ticks), cold, "a record for every tick() call")
        eq([r for r in ticks if "sampled" in r], [], "tick's records are not a sample")
        seen = value(m, "cmon_agent_calls_seen_total", probe="calls", function="count_me")
        eq(len(hot), seen, "a record for every count_me call seen whole")
        check(0 < seen < total * 0.7, "count_me: %d of %d calls seen" % (seen, total))
        marked = [r["sampled"] for r in hot if "sampled" in r]
        check(marked and all(0 < s < 1 for s in marked),
              "count_me's records after the cut carry their fraction: %d of %d"
              % (len(marked), len(hot)))
        check(value(m, "cmon_agent_sampled", probe="calls", function="count_me") < 1,
              "count_me duty-cycled")
        eq(value(m, "cmon_agent_sampled", probe="calls", function="tick"), 1, "tick whole")
        check(0 < value(m, "cmon_agent_overhead_ratio") <= BUDGET * 1.0001, "within the budget")
    finally:
        eq(a.stop(), 0, "agent exit status")
    assert_no_leak(before)


def _log_phase(a, app, log, start, ticks):
    """One paced run of APP; its records (the log's rows past START), and
    the row count after them."""
    eq(run_target(app, "paced", HOT_PER_MS, ticks),
       "paced count_me=%d tick=%d\n" % (HOT_PER_MS * ticks, ticks // 10), "target output")
    rows = settled_log(log, start, ticks // 10)
    return rows[start:], len(rows)


def test_budget_change_reaches_running_log_probe():
    """The budget changed by a spec reload reaches a running log probe:
    gone, every call of the next run is a record again, unmarked; back,
    the hot function is cut again; neither attaches it again."""
    before = bpf_snapshot()
    app = target("sleeper")
    spec, log = tmpfile("budget-change.yaml"), tmpfile("budget-change.jsonl")
    probe = ("probes:\n  - name: calls\n    target: %s\n    func: [count_me, tick]\n"
             "    instrument: log\n    log: {path: %s, max_bytes: 1G}\n" % (app, log))
    ticks = 3000
    total = HOT_PER_MS * ticks
    write(spec, "budget: 1%\n" + probe)
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"calls": "applied"})
        rows, n = _log_phase(a, app, log, 0, ticks)
        hot = [r for r in rows if r["func"] == "count_me"]
        check(len(hot) < total * 0.7 and any("sampled" in r for r in hot),
              "under 1 %%: count_me cut (%d of %d records)" % (len(hot), total))
        write(spec, probe)
        a.wait_metric("cmon_agent_spec_reloads_total", 2, result="ok")
        rows, n = _log_phase(a, app, log, n, ticks)
        hot = [r for r in rows if r["func"] == "count_me"]
        eq(len(hot), total, "no budget: a record for every count_me call")
        eq([r for r in rows if "sampled" in r], [], "no budget: no record is a sample")
        write(spec, "budget: 1%\n" + probe)
        a.wait_metric("cmon_agent_spec_reloads_total", 3, result="ok")
        rows, n = _log_phase(a, app, log, n, ticks)
        hot = [r for r in rows if r["func"] == "count_me"]
        check(len(hot) < total * 0.7 and any("sampled" in r for r in hot),
              "1 %% again: count_me cut (%d of %d records)" % (len(hot), total))
        m = a.metrics()
        eq(value(m, "cmon_agent_events_lost_total", probe="calls"), 0, "nothing lost")
        eq(value(m, "cmon_agent_probe_reattached_total", probe="calls"), 0, "never attached again")
        check("no budget: its functions attached all the time" in a.stderr,
              "the change logged: %s" % a.stderr[-2000:])
    finally:
        eq(a.stop(), 0, "agent exit status")
    assert_no_leak(before)


def test_budget_set_reaches_running_log_probe():
    """A budget set by a spec reload reaches a log probe made without one:
    attached again at once with its links split, its hot function cut."""
    before = bpf_snapshot()
    app = target("sleeper")
    spec, log = tmpfile("budget-set.yaml"), tmpfile("budget-set.jsonl")
    probe = ("probes:\n  - name: calls\n    target: %s\n    func: [count_me, tick]\n"
             "    instrument: log\n    log: {path: %s, max_bytes: 1G}\n" % (app, log))
    ticks = 3000
    total = HOT_PER_MS * ticks
    write(spec, probe)
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"calls": "applied"})
        rows, n = _log_phase(a, app, log, 0, ticks)
        eq(len([r for r in rows if r["func"] == "count_me"]), total, "no budget: every call")
        write(spec, "budget: 1%\n" + probe)
        a.wait_metric("cmon_agent_spec_reloads_total", 2, result="ok")
        a.wait_metric("cmon_agent_probe_reattached_total", 1, probe="calls")
        rows, n = _log_phase(a, app, log, n, ticks)
        hot = [r for r in rows if r["func"] == "count_me"]
        check(len(hot) < total * 0.7 and any("sampled" in r for r in hot),
              "under 1 %%: count_me cut (%d of %d records)" % (len(hot), total))
        eq(len([r for r in rows if r["func"] == "tick"]), ticks // 10, "tick: every call")
        check("probe calls: a budget was set: attaching again" in a.stderr,
              "the re-attach logged: %s" % a.stderr[-2000:])
    finally:
        eq(a.stop(), 0, "agent exit status")
    assert_no_leak(before)


def test_budget_shared_function_labelled_per_probe():
    """A duty-cycled function two probes name (one share, one set of
    probes): its budget metrics are labelled for each probe, the cost split
    between them (the probes' costs add up to the total)."""
    before = bpf_snapshot()
    app = target("sleeper")
    spec = tmpfile("budget-shared.yaml")
    write(spec, "budget: 1%%\nprobes:\n  - name: both\n    target: %s\n"
          "    func: [count_me, tick]\n    instrument: count\n"
          "  - name: hot\n    target: %s\n    func: count_me\n    instrument: count\n"
          % (app, app))
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"both": "applied", "hot": "applied"})
        ticks = 3000
        eq(run_target(app, "paced", HOT_PER_MS, ticks),
           "paced count_me=%d tick=%d\n" % (HOT_PER_MS * ticks, ticks // 10), "target output")
        m = settled_metrics(a, "cmon_agent_calls_seen_total", ticks // 10, probe="both",
                            function="tick")
        sampled = series(m, "cmon_agent_sampled")
        eq(sorted((l["probe"], l["function"]) for l in
                  (dict(k) for k in sampled)),
           [("both", "count_me"), ("both", "tick"), ("hot", "count_me")],
           "a series per probe and function: %r" % sampled)
        frac = value(m, "cmon_agent_sampled", probe="both", function="count_me")
        check(frac < 1, "count_me duty-cycled (%r)" % frac)
        eq(value(m, "cmon_agent_sampled", probe="hot", function="count_me"), frac,
           "the same fraction for both probes")
        seen = value(m, "cmon_agent_calls_seen_total", probe="both", function="count_me")
        eq(value(m, "cmon_agent_calls_seen_total", probe="hot", function="count_me"), seen,
           "the same calls seen for both probes")
        eq(value(m, "cmon_hot_calls_total", function="count_me"),
           value(m, "cmon_both_calls_total", function="count_me"), "the same estimate")
        per = series(m, "cmon_agent_function_overhead_ratio")
        eq(value(m, "cmon_agent_function_overhead_ratio", probe="hot", function="count_me"),
           value(m, "cmon_agent_function_overhead_ratio", probe="both", function="count_me"),
           "count_me's cost split evenly")
        check(abs(sum(per.values()) - value(m, "cmon_agent_overhead_ratio")) < 1e-9,
              "the total is the probes' sum: %r" % per)
    finally:
        eq(a.stop(), 0, "agent exit status")
    assert_no_leak(before)


def test_profile_budget_thread_exec():
    """A thread other than the main one execs a new program that calls a
    library function 300,000 times: its probes attached again for the new
    program are the budget's per-function ones, so the hot function is
    still duty-cycled (attached again whole beside them, every call was
    counted, some twice)."""
    before = bpf_snapshot()
    total = 300000
    bg = Background(["profile", "--budget", "1%", "--func", "libc.so.6:getppid", "-F", "json",
                     "--", target(), "thread_exec_self", "ppid_many"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        eq(bg.p.stdout.readline(), b"main\n", "first line")
        line = bg.p.stdout.readline().decode()
        check(line.startswith("ready "), "the new program's first line: %r" % line)
        pid = int(line.split()[1])
        note = "ran a new program from thread"
        while note not in bg.stderr:  # its probes are attached again
            check(bg.p.poll() is None, "cmon exited: %s" % bg.stderr)
            time.sleep(0.01)
        bg.p.stdin.write(b"\n")
        bg.p.stdin.close()
        out = bg.p.stdout.read().decode()
        eq(bg.wait(), 0, "exit status (%s)" % bg.stderr)
    finally:
        bg.kill()
    rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    eq([l for l in out.splitlines() if not l.startswith("{")], ["ppid_many=1"],
       "the new program's output")
    eq([r["func"] for r in rows], ["getppid"], "one row (pid %d)" % pid)
    r = rows[0]
    check(0.001 <= r["sampled"] < 1, "getppid duty-cycled: %r" % r)
    check(0 < r["seen_calls"] < total * 0.7, "getppid: %d of %d seen" % (r["seen_calls"], total))
    # (No bound on the estimate here: a loop of nothing but the call runs
    # 30 times slower while attached, its windows see that rate, and once
    # cut it may end before a window opens.)
    check(r["calls"] >= r["seen_calls"], "getppid's count an estimate: %r" % r)
    assert_no_leak(before)
