"""`cmon profile`: per-function aggregates computed in the kernel, checked
against programs whose calls are known (tests/targets/sleeper.c, calls.c)."""
import csv
import io
import json
import os
import signal
import subprocess
import time

from cmonlib import (HANG, MiB, Background, WaitTarget, assert_no_leak, bpf_snapshot, check, cmon,
                     eq, read_text, stderr_lines, target, tmpfile)

PROFILE_CSV = ["schema", "report", "elapsed_s", "final", "func", "module", "pid", "calls", "returns",
               "noreturn", "lost", "total_ns", "min_ns", "mean_ns", "p50_ns", "p90_ns",
               "p99_ns", "p999_ns", "max_ns", "rss_growth_bytes", "arg_hist",
               "arg_out_of_range", "filtered", "latency_spread_ns", "ts_ns"]
PROFILE_JSON = ["schema", "report", "elapsed_s", "final", "func", "module", "pid", "calls", "returns",
                "noreturn", "lost", "total_ns", "min_ns", "mean_ns", "p50_ns", "p90_ns",
                "p99_ns", "p999_ns", "max_ns", "rss_growth_bytes", "arg_hist",
                "latency_spread_ns", "ts_ns"]
LAT_KEYS = ["min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"]


# ---------------------------------------------------------------- helpers

def parse_profile_json(text):
    """JSON Lines of `cmon profile -F json`: every line one object with the
    documented keys in order."""
    check(text.endswith("\n"), "JSON output does not end with a newline: %r" % text[-80:])
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            pairs = json.loads(line, object_pairs_hook=lambda p: p)
        except ValueError as e:
            raise AssertionError("JSON line %d does not parse (%s): %r" % (n, e, line))
        eq([k for k, _ in pairs], PROFILE_JSON, "JSON line %d keys" % n)
        out.append(json.loads(line))
    return out


def final_rows(rows):
    fin = [r for r in rows if r["final"]]
    check(fin, "no final report in %r" % rows[-3:])
    last = max(r["report"] for r in rows)
    eq({r["report"] for r in fin}, {last}, "the final report is the last")
    return fin


def by_func(rows):
    res = {}
    for r in rows:
        check(r["func"] not in res, "two rows for %s in one report" % r["func"])
        res[r["func"]] = r
    return res


def profile(funcs, launch=None, extra=(), fmt="json", timeout=HANG, input=None):
    """`cmon profile -F FMT -o FILE --func F... EXTRA [-- LAUNCH...]`:
    (exit status, the program's stdout, cmon's stderr, the report text)."""
    path = tmpfile("profile.%s" % fmt)
    if os.path.exists(path):
        os.unlink(path)
    args = ["profile", "-F", fmt, "-o", path]
    for f in funcs:
        args += ["--func", f]
    args += list(extra)
    if launch:
        args += ["--"] + list(launch)
    code, out, err = cmon(args, timeout=timeout, input=input)
    text = read_text(path) if os.path.exists(path) else None
    return code, out, err, text


def check_latency_order(r):
    """min <= p50 <= p90 <= p99 <= p99.9 <= max, and the mean within."""
    vals = [r[k] for k in LAT_KEYS]
    check(all(isinstance(v, int) for v in vals), "latencies are integers: %r" % vals)
    eq(vals, sorted(vals), "%s: min <= p50 <= p90 <= p99 <= p99.9 <= max" % r["func"])
    check(r["min_ns"] <= r["mean_ns"] <= r["max_ns"], "%s: min <= mean <= max: %r"
          % (r["func"], r))
    eq(r["mean_ns"], r["total_ns"] // r["returns"], "%s: mean = total / returns" % r["func"])
    check(r["total_ns"] >= r["max_ns"], "%s: total >= max" % r["func"])


def log2_buckets(values):
    """The log2 histogram cmon must report: [(low, high, count)] for the
    non-empty buckets (0; then [2^(k-1), 2^k - 1])."""
    counts = {}
    for v in values:
        k = v.bit_length()
        counts[k] = counts.get(k, 0) + 1
    return [(0 if k == 0 else 1 << (k - 1), 0 if k == 0 else (1 << k) - 1, c)
            for k, c in sorted(counts.items())]


def hist_of(row):
    h = row["arg_hist"]
    check(h is not None, "no arg_hist in %r" % row)
    return [(b["low"], b["high"], b["count"]) for b in h["buckets"]], h


def sleeper_stats(stdout):
    """The durations the sleeper measured around its naps (ns)."""
    line = [l for l in stdout.splitlines() if l.startswith("naps ")]
    eq(len(line), 1, "the sleeper's naps line in %r" % stdout)
    return {k: int(v) for k, v in (w.split("=") for w in line[0].split()[1:])}


# ---------------------------------------------------------------- counts

def test_profile_exact_counts():
    n = 1000
    before = bpf_snapshot()
    code, out, err, text = profile(["count_me", "nap"], launch=[target("sleeper"), "count", str(n)])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    eq(out, "count n=%d sum=%d\n" % (n, n * (n + 1) // 2), "program output")
    rows = parse_profile_json(text)
    fin = by_func(final_rows(rows))
    # nap was never called: no row for it.
    eq(sorted(fin), ["count_me"], "functions with calls")
    r = fin["count_me"]
    eq((r["calls"], r["returns"], r["noreturn"], r["lost"]), (n, n, 0, 0),
       "count_me calls, returns, noreturn, lost")
    eq((r["module"], r["pid"]), ("sleeper", None), "module and pid")
    check_latency_order(r)
    # The function's own time (the probes' cost subtracted): a one-line
    # function's fastest call can read 0, its slowest cannot.
    check(r["max_ns"] > 0 and r["max_ns"] < 10**9, "count_me latency plausible: %r" % r)
    check(isinstance(r["rss_growth_bytes"], int), "rss_growth_bytes is a number")
    eq(r["arg_hist"], None, "no argument histogram unless asked")
    check("cmon: attached 4 probes" in err and "(2 functions)" in err, "attach line: %r" % err)
    check("%d calls counted" % n in err, "summary line: %r" % err)
    assert_no_leak(before)


def test_profile_returns_past_the_kernels_uretprobe_depth():
    """nest(100) makes 101 nested calls and every one returns, but the
    kernel installs at most 64 nested uretprobes a thread: the 37 deepest
    returns are not seen.  They are lost (with their cause), not calls that
    never returned; --return-probe insn sees them all."""
    for extra, want in [((), (101, 64, 0, 37)), (("--return-probe", "insn"), (101, 101, 0, 0))]:
        code, out, err, text = profile(["nest"], launch=[target(), "deep", "100"],
                                       extra=extra)
        eq(out, "nest=100\n", "program output")
        r = by_func(final_rows(parse_profile_json(text)))["nest"]
        eq((r["calls"], r["returns"], r["noreturn"], r["lost"]), want,
           "nest %s: calls, returns, noreturn, lost" % " ".join(extra))
        if want[3]:
            eq(code, 3, "losses: exit 3 (%s)" % err)
            check("37 whose return was nested past the kernel's 64 uretprobes" in err,
                  "the cause said: %r" % err)
        else:
            eq(code, 0, "exit status (%s)" % err)


def test_profile_nap_percentiles():
    """100 x 1 ms, 100 x 2 ms, 50 x 5 ms: percentiles within 2 % (the bucket
    bound) plus scheduling slack of the durations the program measured."""
    code, out, err, text = profile(["nap"], launch=[target("sleeper"), "naps"],
                                   extra=["--hist", "arg0"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    m = sleeper_stats(out)
    eq(m["n"], 250, "naps made")
    r = by_func(final_rows(parse_profile_json(text)))["nap"]
    eq((r["calls"], r["returns"], r["noreturn"], r["lost"]), (250, 250, 0, 0),
       "nap calls, returns, noreturn, lost")
    check_latency_order(r)
    # The program's own clock brackets the probes: a few us more than cmon's.
    slack = 100000
    for key, mk in (("p50_ns", "p50"), ("p90_ns", "p90"), ("p99_ns", "p99")):
        bound = 0.02 * m[mk] + slack
        check(abs(r[key] - m[mk]) <= bound, "%s %d vs measured %d (bound %d)"
              % (key, r[key], m[mk], bound))
    for key, mk in (("min_ns", "min"), ("max_ns", "max")):
        check(m[mk] - 2 * slack <= r[key] <= m[mk], "%s %d vs measured %d" % (key, r[key], m[mk]))
    # The known groups: the median is a 2 ms nap, p90 a 5 ms one, each at
    # least that long (how much longer is the machine's load).
    check(2000000 <= r["p50_ns"], "p50 in the 2 ms group: %d" % r["p50_ns"])
    check(5000000 <= r["p90_ns"], "p90 in the 5 ms group: %d" % r["p90_ns"])
    check(1000000 <= r["min_ns"], "min in the 1 ms group: %d" % r["min_ns"])
    total = r["total_ns"]
    check(100 * 1e6 + 100 * 2e6 + 50 * 5e6 <= total, "total %d ns" % total)
    # nap(usec)'s argument: 1000, 2000, 5000 in exact log2 buckets.
    buckets, h = hist_of(r)
    eq(buckets, [(512, 1023, 100), (1024, 2047, 100), (4096, 8191, 50)], "arg0 log2 buckets")
    eq((h["arg"], h["scale"], h["out_of_range"]), (0, "log2", 0), "histogram settings")


def test_profile_hist_log2_exact():
    n = 1000
    code, out, err, text = profile(["count_me"], launch=[target("sleeper"), "count", str(n)],
                                   extra=["--hist", "0"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    r = by_func(final_rows(parse_profile_json(text)))["count_me"]
    buckets, _ = hist_of(r)
    want = log2_buckets(range(n))
    eq(buckets[:3], [(0, 0, 1), (1, 1, 1), (2, 3, 2)], "first log2 buckets")
    eq(buckets, want, "count_me(i) for i in 0..%d: log2 buckets" % (n - 1))
    eq(buckets[-1], (512, 1023, n - 512), "last bucket")
    eq(sum(c for _, _, c in buckets), n, "every call in a bucket")


def test_profile_hist_linear():
    n = 100
    code, out, err, text = profile(["count_me"], launch=[target("sleeper"), "count", str(n)],
                                   extra=["--hist", "arg0", "--hist-linear", "10,50,10"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    r = by_func(final_rows(parse_profile_json(text)))["count_me"]
    buckets, h = hist_of(r)
    eq(buckets, [(10, 19, 10), (20, 29, 10), (30, 39, 10), (40, 49, 10)], "linear buckets")
    # 0..9 below MIN, 50..99 at or past MAX.
    eq((h["scale"], h["out_of_range"]), ("linear", 60), "out of range")


def test_profile_text_table():
    code, out, err, text = profile(["count_me"], launch=[target("sleeper"), "count", "321"],
                                   fmt="text", extra=["--hist", "0"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    lines = text.splitlines()
    check(lines[0].startswith("cmon profile: ") and "elapsed" in lines[0] and "final" in lines[0],
          "header line: %r" % lines[0])
    eq(lines[1].split()[:4], ["FUNCTION", "CALLS", "TOTAL", "MEAN"], "column heads")
    row = lines[2].split()
    eq(row[:2], ["count_me", "321"], "count_me's row")
    check(any(l.split()[:4] == ["256", "..", "511", "65"] for l in lines),
          "histogram line for [256, 511] (321 - 256 = 65 values): %r" % lines)


# ---------------------------------------------------------------- formats

def test_profile_csv():
    n = 50
    t0 = time.time_ns()
    code, out, err, text = profile(["count_me"], launch=[target("sleeper"), "count", str(n)],
                                   fmt="csv", extra=["--hist", "0", "--no-mem"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    check(text.endswith("\r\n"), "CSV ends with CRLF")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    eq(rows[0], PROFILE_CSV, "CSV header")
    eq(len(rows), 2, "one data row")
    r = dict(zip(PROFILE_CSV, rows[1]))
    eq((r["report"], r["final"], r["func"], r["module"], r["pid"]),
       ("1", "1", "count_me", "sleeper", ""), "report, final, func, module, pid")
    eq((int(r["calls"]), int(r["returns"]), int(r["noreturn"]), int(r["lost"])),
       (n, n, 0, 0), "counts")
    float(r["elapsed_s"])
    vals = [int(r[k]) for k in LAT_KEYS]
    eq(vals, sorted(vals), "latency order")
    eq(r["rss_growth_bytes"], "", "--no-mem: no RSS growth")
    want = ";".join("%d..%d=%d" % b for b in log2_buckets(range(n)))
    eq(r["arg_hist"], want, "arg_hist")
    eq(r["arg_out_of_range"], "0", "arg_out_of_range")
    eq(r["filtered"], "", "no --if: nothing filtered, the column empty")
    # the report's wall-clock time, as trace's ts_ns (a report is not
    # taken before the command started, nor after it ended)
    check(t0 <= int(r["ts_ns"]) <= time.time_ns(), "ts_ns %s in [%d, now]" % (r["ts_ns"], t0))


def test_profile_interval_reports():
    """--interval: cumulative reports while the program runs, then the final one."""
    code, out, err, text = profile(["nap", "count_me"],
                                   launch=[target("sleeper"), "loop", "100", "25"],
                                   extra=["--interval", "0.5"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    eq(out, "loop n=25 count_me=1\n", "program output")
    rows = parse_profile_json(text)
    reports = sorted({r["report"] for r in rows})
    eq(reports, list(range(1, len(reports) + 1)), "reports numbered from 1")
    check(len(reports) >= 4, "at least 4 reports over 2.5 s: %r" % reports)
    naps = [r for r in rows if r["func"] == "nap"]
    eq([r["report"] for r in naps], reports, "nap in every report")
    calls = [r["calls"] for r in naps]
    eq(calls, sorted(calls), "cumulative: calls never decrease")
    elapsed = [r["elapsed_s"] for r in naps]
    eq(elapsed, sorted(elapsed), "elapsed time grows")
    eq([r["final"] for r in naps], [False] * (len(naps) - 1) + [True], "only the last is final")
    check(calls[0] < 25, "the first report came while the program ran: %r" % calls)
    fin = by_func(final_rows(rows))
    eq((fin["nap"]["calls"], fin["nap"]["returns"], fin["count_me"]["calls"]), (25, 25, 1),
       "final counts")
    check(90e6 <= fin["nap"]["p50_ns"] <= 120e6, "p50 of 100 ms naps: %d" % fin["nap"]["p50_ns"])


def test_profile_interval_text():
    code, out, err, text = profile(["nap"], launch=[target("sleeper"), "loop", "100", "12"],
                                   fmt="text", extra=["--interval", "0.3"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    heads = [l for l in text.splitlines() if l.startswith("cmon profile: ")]
    check(len(heads) >= 3, "several tables: %r" % heads)
    check(heads[-1].endswith("(final)"), "the last table is the final one: %r" % heads[-1])
    check(not any(h.endswith("(final)") for h in heads[:-1]), "only one final table")


# ---------------------------------------------------------------- processes

def test_profile_per_pid_two_processes():
    a = WaitTarget(["count", "300"], binary="sleeper")
    b = WaitTarget(["count", "700"], binary="sleeper")
    path = tmpfile("perpid.json")
    try:
        bg = Background(["profile", "--per-pid", "-F", "json", "-o", path, "--func", "count_me",
                         "--hist", "0", "-p", str(a.pid), "-p", str(b.pid)])
        bg.wait_attached()
        a.release()
        b.release()
        eq(a.finish()[0], 0, "first target")
        eq(b.finish()[0], 0, "second target")
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
    finally:
        a.kill()
        b.kill()
    rows = final_rows(parse_profile_json(read_text(path)))
    got = sorted((r["pid"], r["func"], r["calls"], r["returns"], r["lost"]) for r in rows)
    eq(got, sorted([(a.pid, "count_me", 300, 300, 0), (b.pid, "count_me", 700, 700, 0)]),
       "one row per process")
    for r in rows:
        buckets, _ = hist_of(r)
        eq(buckets, log2_buckets(range(r["calls"])), "pid %d's histogram" % r["pid"])


def test_profile_binary_mode():
    """--binary: every process running the file, started after attach."""
    path = tmpfile("binary.json")
    bg = Background(["profile", "--per-pid", "-F", "json", "-o", path, "--func", "count_me",
                     "--binary", target("sleeper")])
    try:
        bg.wait_attached()
        pids = []
        for n in (40, 60):
            t = WaitTarget(["count", str(n)], binary="sleeper")
            pids.append(t.pid)
            t.release()
            eq(t.finish()[0], 0, "target exit status")
        bg.signal(signal.SIGTERM)
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
    finally:
        bg.kill()
    rows = final_rows(parse_profile_json(read_text(path)))
    eq(sorted((r["pid"], r["calls"], r["returns"]) for r in rows),
       [(pids[0], 40, 40), (pids[1], 60, 60)], "one row per process run")


def test_profile_thousands_of_functions():
    """4,000 functions called twice each (two runs of the program): every one
    of the 8,000 calls counted, none lost (the maps are sized for what was
    attached: 2,709 were lost, blamed on causes that did not apply)."""
    path = tmpfile("many.json")
    many = target("many")
    bg = Background(["profile", "-F", "json", "-o", path, "--func", "many_*", "--binary", many])
    try:
        bg.wait_attached()
        for _ in range(2):
            p = subprocess.run([many], capture_output=True, text=True, timeout=HANG)
            eq((p.returncode, p.stdout), (0, "calls=4000 sum=%d\n" % (2 * sum(range(4000)) + 4000)),
               "target output")
        bg.signal(signal.SIGTERM)
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
    finally:
        bg.kill()
    rows = final_rows(parse_profile_json(read_text(path)))
    got = {r["func"]: (r["calls"], r["returns"], r["noreturn"], r["lost"]) for r in rows}
    eq(len(got), 4000, "functions with a row")
    eq(sorted(set(got.values())), [(2, 2, 0, 0)], "calls, returns, noreturn, lost of each")
    check("not recorded" not in bg.stderr, "no loss reported: %r" % bg.stderr[-500:])


def test_profile_attach_running_sigint():
    """-p of a running process; SIGINT ends cmon with a final report, exit 0."""
    before = bpf_snapshot()
    t = WaitTarget(["loop", "20", "1000"], binary="sleeper")
    path = tmpfile("sigint.json")
    try:
        bg = Background(["profile", "-F", "json", "-o", path, "--func", "nap", "-p", str(t.pid),
                         "--interval", "0.1"])
        bg.wait_attached()
        t.release()
        # Until a report counts naps (a hang guard, not a speed).
        end = time.monotonic() + HANG
        while time.monotonic() < end and not any(
                '"func":"nap"' in l and '"calls":0,' not in l
                for l in (read_text(path).splitlines() if os.path.exists(path) else [])):
            time.sleep(0.05)
        bg.signal(signal.SIGINT)
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
        check(t.alive(), "the target runs on after cmon ended")
    finally:
        t.kill()
    r = by_func(final_rows(parse_profile_json(read_text(path))))["nap"]
    check(r["calls"] >= 1, "naps counted: %d" % r["calls"])
    check(r["returns"] in (r["calls"], r["calls"] - 1), "returns %d of %d calls"
          % (r["returns"], r["calls"]))
    # A 20 ms nap lasts at least 20 ms (its bucket's 2 % aside); how much
    # longer is this machine's load.
    check(r["p50_ns"] >= 19e6, "p50 of 20 ms naps: %d" % r["p50_ns"])
    assert_no_leak(before)


def test_profile_duration():
    """--duration ends cmon while the process runs on."""
    t = WaitTarget(["loop", "10", "1000"], binary="sleeper")
    try:
        bg = Background(["profile", "-F", "json", "-o", tmpfile("d.json"), "--func", "nap",
                         "-p", str(t.pid), "--duration", "0.6"])
        bg.wait_attached()
        t.release()
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
        check(t.alive(), "the target runs on")
    finally:
        t.kill()
    r = by_func(final_rows(parse_profile_json(read_text(tmpfile("d.json")))))["nap"]
    check(20 <= r["calls"] <= 70, "about 60 naps of 10 ms in 0.6 s: %d" % r["calls"])


# ---------------------------------------------------------------- returns

def test_profile_noreturn_longjmp_and_recursion():
    code, out, err, text = profile(["jumper", "add", "fact"], launch=[target(), "longjmp"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    fin = by_func(final_rows(parse_profile_json(text)))
    eq((fin["jumper"]["calls"], fin["jumper"]["returns"], fin["jumper"]["noreturn"]), (1, 0, 1),
       "jumper longjmps out: calls, returns, noreturn")
    eq(fin["jumper"]["p50_ns"], None, "no latency without a return")
    eq((fin["add"]["calls"], fin["add"]["returns"], fin["add"]["noreturn"]), (1, 1, 0), "add")

    code, out, err, text = profile(["fact"], launch=[target(), "recurse"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    r = by_func(final_rows(parse_profile_json(text)))["fact"]
    eq((r["calls"], r["returns"], r["noreturn"], r["lost"]), (5, 5, 0, 0), "fact(5) recursion")
    check_latency_order(r)


def test_profile_tail_call_pairs_like_trace():
    """tail_caller(4) tail-calls tail_target(5): in every return mode both
    returned once (the caller through its callee's return); with
    uretprobes the caller was counted as never returning."""
    for mode in ("auto", "uretprobe", "insn"):
        code, out, err, text = profile(["tail_caller", "tail_target"],
                                       launch=[target(), "tail"],
                                       extra=["--return-probe", mode])
        eq((code, out), (0, "tail=15\n"), "%s: exit status and output (%s)" % (mode, err))
        fin = by_func(final_rows(parse_profile_json(text)))
        for f in ("tail_caller", "tail_target"):
            eq((fin[f]["calls"], fin[f]["returns"], fin[f]["noreturn"]), (1, 1, 0),
               "%s: %s calls, returns, noreturn" % (mode, f))


def test_profile_cxx_exceptions():
    """Returns observed on ret instructions (C++): exceptions unwinding
    through a call make it noreturn, and the program survives."""
    code, out, err, text = profile(["risky", "shapes::Widget::poke"],
                                   launch=[target("cxx_throw")])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    eq(out, "sum=309 caught=3\n", "program output")
    fin = by_func(final_rows(parse_profile_json(text)))
    for name in ("risky(int)", "shapes::Widget::poke(int)"):
        r = fin[name]
        eq((r["calls"], r["returns"], r["noreturn"], r["lost"]), (6, 3, 3, 0), name)
        check_latency_order(r)


def test_profile_exit_inside_and_status():
    """A process that exits inside a call: the call is noreturn, and cmon
    exits with the program's status."""
    code, out, err, text = profile(["exit_inside", "add"], launch=[target(), "exit", "7"])
    eq(code, 7, "cmon exits with the program's status (%s)" % err.strip())
    fin = by_func(final_rows(parse_profile_json(text)))
    eq((fin["exit_inside"]["calls"], fin["exit_inside"]["returns"],
        fin["exit_inside"]["noreturn"]), (1, 0, 1), "exit_inside")
    eq((fin["add"]["calls"], fin["add"]["returns"]), (1, 1), "add")


def test_profile_rss_growth():
    code, out, err, text = profile(["grow"], launch=[target(), "grow", "64"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    r = by_func(final_rows(parse_profile_json(text)))["grow"]
    g = r["rss_growth_bytes"]
    check(64 * MiB <= g <= 65 * MiB, "grow(64) grows RSS by 64 MiB: %d" % g)
    code, out, err, text = profile(["grow"], launch=[target(), "grow", "8"], extra=["--no-mem"])
    eq(code, 0, "cmon exit status (%s)" % err.strip())
    eq(by_func(final_rows(parse_profile_json(text)))["grow"]["rss_growth_bytes"], None,
       "--no-mem: null")


# ---------------------------------------------------------------- bad input

def test_profile_bad_input():
    cases = [
        (["profile", "--", target("sleeper"), "count", "1"], 2, "--func"),
        (["profile", "--func", "count_me"], 2, "target"),
        (["profile", "-p", "4194000", "--func", "count_me"], 1, "no such process"),
        (["profile", "--func", "no_such_function_xyz", "--", target("sleeper"), "count", "1"], 1,
         "no_such_function_xyz"),
        (["profile", "--hist", "9", "--func", "count_me", "--", target("sleeper")], 2, "--hist"),
        (["profile", "--no-return", "--func", "count_me", "--", target("sleeper")], 2,
         "--no-return"),
    ]
    before = bpf_snapshot()
    for args, status, needle in cases:
        code, out, err = cmon(args, timeout=HANG)
        lines = stderr_lines(err)
        eq(len(lines), 1, "stderr lines of cmon %s: %r" % (" ".join(args), lines))
        check(needle.lower() in lines[0].lower(), "%r not in %r" % (needle, lines[0]))
        check(lines[0].startswith("cmon: "), "message starts with 'cmon: ': %r" % lines[0])
        eq(code, status, "exit status of cmon %s" % " ".join(args))
        eq(out, "", "stdout of cmon %s (nothing ran)" % " ".join(args))
    assert_no_leak(before)


def test_profile_figures_below_the_probe_spread_are_bounds():
    """add() takes a few ns, less than the probes' cost varies: its MIN read
    "0ns" as if measured.  A figure within the calibration's spread of
    nothing is shown as a bound ("<120ns"); JSON and CSV rows carry that
    spread (latency_spread_ns): a figure below it is not a measurement.
    20,000 calls: a busy machine stretches most calls' probe costs, and the
    fastest of many is the one that shows the function's own few ns."""
    code, out, err, text = profile(["add"], launch=[target(), "loop", "20000"])
    eq((code, out), (0, "loop sum=200010000\n"), "exit status and output (%s)" % err)
    r = by_func(final_rows(parse_profile_json(text)))["add"]
    eq(r["calls"], 20000, "calls")
    check(r["latency_spread_ns"] > 0, "the calibration's spread: %r" % r)
    check(r["min_ns"] < r["latency_spread_ns"], "a 3-ns function's min is within it: %r" % r)
    code, out, err, text = profile(["add"], launch=[target(), "loop", "20000"], fmt="text")
    eq(code, 0, "exit status (%s)" % err)
    row = [l for l in text.splitlines() if l.startswith("add ")]
    eq(len(row), 1, "the add row: %r" % text)
    cells = row[0].split()
    mn = cells[4]  # FUNCTION CALLS TOTAL MEAN MIN
    check(mn.startswith("<"), "MIN is a bound, not a measured 0: %r" % row[0])
