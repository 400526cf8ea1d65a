"""USDT probes (--usdt [FILE:]PROVIDER:NAME): one record per firing with
the arguments its note specifies (registers, memory, signs and widths),
semaphores raised through the kernel's reference counter while attached
and back to 0 after (tests/targets/usdt.c), and the probes of Debian's
/usr/bin/python3.11 itself (gc__start, guarded by a semaphore)."""
import subprocess

from cmonlib import CMON, check, cmon, eq, parse_csv, read_text, target, tmpfile, trace


def test_usdt_args_and_semaphore_launched():
    res = trace([], launch=[target("usdt"), "4"], extra=["--usdt", "demo:*"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    # The semaphore is up while cmon is attached: the guarded probe fires.
    eq(res.stdout, "guarded=4\n", "program output under cmon")
    got = [(r["func"], r["arg0"], r["arg1"], r["arg2"], r["arg3"], r["status"], r["ret"],
            r["depth"]) for r in res.rows]
    want = []
    for i in range(4):
        # arg3 is 8@: unsigned 64-bit (it was written as -1 - i)
        want.append(("demo:tick", i, -5 - i, 1234567890123 + i, 2 ** 64 - 1 - i, "usdt", None,
                     None))
        want.append(("demo:guarded", 100 + i, 0, 0, 0, "usdt", None, None))
    # Constants at their width and sign: the note says 1@$-6 for 250.
    want.append(("demo:consts", 250, 65000, 4000000000, -5, "usdt", None, None))
    eq(got, want, "records (func, arg0..3, status, ret, depth)")
    check("demo:tick" in res.stderr and "demo:guarded" in res.stderr, res.stderr)


def test_usdt_unsigned_arg_in_views():
    """An 8@ (unsigned 64-bit) argument reads as unsigned in -F tree and -F
    chrome too, as in CSV/JSON: demo:tick's arg3 is UINT64_MAX - i, not -1 - i."""
    import json
    res = trace([], launch=[target("usdt"), "2"], extra=["--usdt", "demo:tick"], fmt="tree")
    eq(res.code, 0, "tree exit status (%s)" % res.stderr)
    calls = [l.split("| ", 1)[1] for l in res.text.splitlines() if "demo:tick(" in l]
    eq(calls, ["demo:tick(%d, %d, %d, %d, 0, 0);" % (i, -5 - i, 1234567890123 + i, 2 ** 64 - 1 - i)
               for i in range(2)], "tree lines:\n%s" % res.text)
    res = trace([], launch=[target("usdt"), "2"], extra=["--usdt", "demo:tick"], fmt="chrome")
    eq(res.code, 0, "chrome exit status (%s)" % res.stderr)
    xs = [e for e in json.loads(res.text) if e["ph"] == "X"]
    eq([e["args"] for e in xs],
       [{"arg0": i, "arg1": -5 - i, "arg2": 1234567890123 + i, "arg3": 2 ** 64 - 1 - i,
         "arg4": 0, "arg5": 0} for i in range(2)], "chrome args")


def test_usdt_semaphore_lowered_after_detach():
    """-p: the semaphore is raised only while cmon runs, by the kernel: after
    cmon exits the process sees 0 and its guarded probe stays quiet."""
    p = subprocess.Popen([target("usdt"), "--wait", "3"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid = int(p.stdout.readline().split()[1])
        code, _, err = cmon(["trace", "-p", str(pid), "--usdt", "usdt:demo:guarded",
                             "--duration", "0.5"])
        eq(code, 0, "cmon exit status (%s)" % err)
        p.stdin.write("\n")
        p.stdin.flush()
        eq(p.stdout.readline(), "guarded=0\n", "nothing traces: the guard is off")
        eq(p.stdout.readline(), "ready\n", "second stop")
        p.stdin.write("\n")
        p.stdin.flush()
        eq(p.stdout.readline(), "semaphore=0\n", "the semaphore after cmon exited")
    finally:
        p.kill()
        p.wait()


def test_usdt_list_and_errors():
    code, out, err = cmon(["list", "--usdt", "demo:*", "--", target("usdt")])
    eq(code, 0, "list exit status (%s)" % err)
    rows = {l.split()[0]: l.split() for l in out.splitlines() if l.startswith("demo:")}
    eq(sorted(rows), ["demo:consts", "demo:guarded", "demo:tick"], "probes listed")
    eq([a.split("@")[0] for a in rows["demo:consts"][-4:]], ["1", "2", "4", "-1"],
       "consts' argument specs: constants, unsigned but the last")
    eq([a.split("@")[0] for a in rows["demo:tick"][-4:]], ["-4", "-4", "-8", "8"],
       "tick's argument specs: sizes, the last unsigned")
    check(rows["demo:guarded"][4] != "0", "guarded has a semaphore: %r" % rows["demo:guarded"])
    code, _, err = cmon(["trace", "--usdt", "demo:nosuch", "--", target("usdt")])
    eq(code, 1, "no match: exit 1")
    eq(err.strip().splitlines(), ["cmon: no USDT probe matches 'demo:nosuch' in 3 objects"],
       "one error line")
    code, _, err = cmon(["trace", "--usdt", "demo:", "--", target("usdt")])
    eq(code, 2, "malformed: a usage error (%s)" % err)
    check("expected [FILE:]PROVIDER:NAME" in err, err)


def test_usdt_python_gc_start():
    """python:gc__start is guarded by a semaphore in CPython 3.11: it fires
    only because cmon raised it; gc.collect(1) five times gives five
    records with generation 1."""
    script = "import gc; gc.disable(); [gc.collect(1) for _ in range(5)]; print('ok')"
    res = trace([], launch=["/usr/bin/python3.11", "-c", script],
                extra=["--usdt", "python:gc__start"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, "ok\n", "program output")
    eq([r["arg0"] for r in res.rows if r["arg0"] == 1], [1] * 5, "gc__start(1) records")
    check(all(r["func"] == "python:gc__start" and r["status"] == "usdt" for r in res.rows),
          "only gc__start records")


def test_usdt_profile_counts():
    """cmon profile --usdt counts each site's firings (no latency: no return)."""
    import json
    path = tmpfile("usdt-profile.json")
    code, out, err = cmon(["profile", "-F", "json", "-o", path, "--usdt", "demo:*", "--",
                           target("usdt"), "6"])
    eq((code, out), (0, "guarded=6\n"), "exit status and output (%s)" % err)
    fin = {r["func"]: r for r in (json.loads(l) for l in read_text(path).splitlines())
           if r["final"]}
    eq({f: (r["calls"], r["returns"], r["p50_ns"]) for f, r in fin.items()},
       {"demo:tick": (6, 0, None), "demo:guarded": (6, 0, None), "demo:consts": (1, 0, None)},
       "counts per site")


def test_usdt_argument_histograms():
    """A USDT site's argument bucketed by its number, at the width and sign
    its note says (-4@%eax: int32): profile --hist and the agent's arg
    instrument (they were left empty, and --check said ok).  demo:tick
    fires with (i, -5 - i, ...) for i < 10."""
    import json
    import os
    import shutil
    from agentlib import Agent, run_target, value, write_spec
    path = tmpfile("usdt-hist.json")
    code, out, err = cmon(["profile", "-F", "json", "-o", path, "--usdt", "demo:tick",
                           "--hist", "0", "--", target("usdt"), "10"])
    eq(code, 0, "profile --hist 0 (%s)" % err)
    fin = [json.loads(l) for l in read_text(path).splitlines() if '"final":true' in l][0]
    eq(fin["arg_hist"]["type"], "int32 (USDT)", "its type, from the note")
    eq([(b["low"], b["high"], b["count"]) for b in fin["arg_hist"]["buckets"]],
       [(0, 0, 1), (1, 1, 1), (2, 3, 2), (4, 7, 4), (8, 15, 2)], "arg0 = 0..9, log2")
    code, out, err = cmon(["profile", "-F", "json", "-o", path, "--usdt", "demo:tick",
                           "--hist", "1", "--hist-linear", "-20,0,5", "--", target("usdt"),
                           "10"])
    eq(code, 0, "profile --hist 1 (%s)" % err)
    fin = [json.loads(l) for l in read_text(path).splitlines() if '"final":true' in l][0]
    eq([(b["low"], b["high"], b["count"]) for b in fin["arg_hist"]["buckets"]],
       [(-15, -11, 4), (-10, -6, 5), (-5, -1, 1)], "arg1 = -5..-14, signed, linear")
    # with a function in the set (main: --hist 1 is its raw register), the
    # site's argument is still read at its note's width and sign
    # (log2 buckets: its negative values out of range, not huge unsigned ones)
    code, out, err = cmon(["profile", "-F", "json", "-o", path, "--usdt", "demo:tick",
                           "--func", "main", "--hist", "1", "--", target("usdt"), "10"])
    eq(code, 0, "profile --usdt --func main --hist 1 (%s)" % err)
    fin = [json.loads(l) for l in read_text(path).splitlines()
           if '"final":true' in l and '"demo:tick"' in l][0]
    eq(([b["count"] for b in fin["arg_hist"]["buckets"]], fin["arg_hist"]["out_of_range"]),
       ([], 10), "arg1 = -5..-14 with a function in the set: negative, out of log2's range")
    for spec, why in (("ret", "give its argument's number"), ("5", "fewer arguments")):
        code, out, err = cmon(["profile", "--usdt", "demo:tick", "--hist", spec, "--",
                               target("usdt"), "3"])
        eq((code, len(err.splitlines())), (1, 1), "--hist %s: one line (%s)" % (spec, err))
        check(why in err, err)

    app = tmpfile("usdt-hist-app")
    shutil.copy(target("usdt"), app)
    os.chmod(app, 0o755)
    spec = tmpfile("usdt-hist.yaml")
    write_spec(spec, [{"name": "uarg", "target": app, "usdt": "demo:tick",
                       "instrument": "arg", "arg": 0}])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"uarg": "applied"})
        run_target(app, 10)
        m = a.metrics()
        eq([value(m, "cmon_uarg_arg_bucket", probe="uarg", function="demo:tick", le=le)
            for le in ("0", "1", "3", "7", "15", "+Inf")], [1, 2, 4, 8, 10, 10],
           "agent: arg0's cumulative buckets")
    finally:
        a.stop()


def test_usdt_what_is_not_measured_is_refused():
    """A USDT site has no return: the agent's latency instrument and an 'if'
    on a site are refused with one line (--check too), not left empty."""
    from agentlib import write_spec
    for extra, what in (({"instrument": "latency"}, "no return to time"),
                        ({"instrument": "count", "if": "arg0 > 1"}, "'if' applies")):
        spec = tmpfile("usdt-bad.yaml")
        probe = {"name": "u", "target": target("usdt"), "usdt": "demo:tick",
                 "instrument": "count"}
        probe.update(extra)
        write_spec(spec, [probe])
        code, out, err = cmon(["agent", "--check", "--spec", spec])
        eq((code, out.splitlines()[-1]), (1, "1 probe, 1 invalid"), "--check %r" % extra)
        check(what in out + err, "%r: %r %r" % (extra, out, err))


def test_usdt_agent_count():
    """The agent's `usdt:` key: a count probe on a USDT site."""
    import os
    import shutil
    from agentlib import Agent, run_target, value, write_spec
    app = tmpfile("usdt-app")
    shutil.copy(target("usdt"), app)
    os.chmod(app, 0o755)
    spec = tmpfile("usdt.yaml")
    write_spec(spec, [{"name": "ticks", "target": app, "usdt": "demo:tick",
                       "instrument": "count"}])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"ticks": "applied"})
        eq(run_target(app, 7), "guarded=0\n", "target output (only tick is attached)")
        eq(value(a.metrics(), "cmon_ticks_calls_total", probe="ticks", function="demo:tick"), 7,
           "demo:tick fired 7 times")
    finally:
        a.stop()
