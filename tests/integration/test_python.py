"""--py PATTERN: Python functions of a CPython 3.11 process (Debian's
/usr/bin/python3.11), launched or attached with -p: one record per call
with the qualified name, file:line, arguments by name rendered by type,
the return value or the exception, in every format; recursion, threads;
interp->eval_frame restored when cmon ends (tests/targets/py/)."""
import json
import os
import re
import signal
import subprocess
import time

from cmonlib import (ROOT, Background, Skip, check, cmon, eq, parse_json_lines, run,
                     read_text, summary, tmpfile, trace)

PY = "/usr/bin/python3.11"
CALLS = os.path.join(ROOT, "tests", "targets", "py", "calls.py")
WORKER = os.path.join(ROOT, "tests", "targets", "py", "worker.py")
CALLS_OUT = "55\n4.5\nhello\ncaught\n3\n[100] {'a': 1}\n"


def _need_python():
    if not os.access(PY, os.X_OK):
        raise Skip("%s is not installed (tools/install-deps.sh test)" % PY)


def _json(text):
    """JSON Lines checked by cmonlib (keys, order), as plain dicts."""
    parse_json_lines(text)
    return [json.loads(line) for line in text.splitlines()]


def _py(patterns, argv, fmt="json", extra=()):
    _need_python()
    args = list(extra)
    for p in patterns:
        args += ["--py", p]
    res = trace([], launch=[PY] + argv, extra=args, fmt=fmt)
    if fmt == "json" and res.text is not None:
        res.rows = _json(res.text)
    return res


def _calls(res, func):
    return [r for r in res.rows if r["func"] == func]


def test_python_values_and_output():
    res = _py(["fib", "Shape.*", "kinds", "boom", "catcher", "gen"], [CALLS])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, CALLS_OUT, "the program's output, unchanged")
    code, out, err = run([PY, CALLS])
    eq((code, out, err), (0, res.stdout, ""), "byte for byte what it prints untraced")
    fib = _calls(res, "fib")
    eq(len(fib), 177, "fib(10) makes 177 calls")
    top = [r for r in fib if r["args"] == {"n": 10}]
    eq(len(top), 1, "one fib(10)")
    eq(top[0]["retval"], 55, "fib(10) returns 55")
    eq(sorted(r["retval"] for r in fib if r["args"] == {"n": 2}), [1] * 34, "fib(2) x34 = 1")
    check(all(r["status"] == "ok" for r in fib), "every fib returned")
    depths = {r["args"]["n"]: r["depth"] for r in fib if r["args"]["n"] >= 9}
    eq(depths[9] - depths[10], 1, "fib(9) one below fib(10)")
    eq(top[0]["module"], CALLS + ":5", "file:first line (def fib)")

    area = _calls(res, "Shape.area")
    eq([(r["args"], r["retval"]) for r in area],
       [({"self": "<Shape>", "w": 3, "h": 1.5}, 4.5)], "Shape.area(3, h=1.5)")
    kinds = _calls(res, "kinds")
    eq([(r["args"], r["retval"]) for r in kinds],
       [({"i": -42, "f": 2.5, "s": "hello", "b": True, "none": None, "raw": "b'ab\\x00c'"},
         "hello")], "int, float, str, bool, None, bytes")
    boom = _calls(res, "boom")
    eq([(r["args"], r["status"], r["retval"]) for r in boom], [({"x": 7}, "exception", None)],
       "boom raised")
    check(boom[0]["latency_ns"] > 0, "an exception still has a latency")
    eq([(r["status"], r["retval"]) for r in _calls(res, "catcher")], [("ok", "caught")],
       "catcher caught it")
    eq([(r["status"], r["retval"]) for r in _calls(res, "gen")],
       [("ok", "<generator>"), ("yield", None), ("yield", None), ("yield", None), ("ok", None)],
       "a generator: made, 3 yields, then done")
    s = summary(res.stderr)
    eq(s["lost"], 0, "nothing lost")
    eq(s["written"], len(res.rows), "written = records")
    filtered = int(re.search(r"python calls filtered: (\d+)", res.stderr).group(1))
    calls, written, lost = s["table"]["_PyEval_EvalFrameDefault"]
    eq(calls, written + filtered + lost, "every call counted: written, filtered or lost")


def test_python_ints_beyond_64_bits():
    """64-bit ints exactly (-2**63 too: it was taken for a big one), larger
    ones by sign and size in bits (they showed CPython's count of 30-bit
    digits, as if decimal)."""
    res = _py(["ints"], [os.path.join(ROOT, "tests", "targets", "py", "ints.py")])
    eq((res.code, res.stdout), (0, "ok\n"), "exit status and output (%s)" % res.stderr)
    eq([(r["args"], r["retval"]) for r in _calls(res, "ints")],
       [({"a": 2 ** 63 - 1, "b": -2 ** 63, "c": "<int 64 bits>", "d": "<int -64 bits>",
          "e": "<int -101 bits>"}, "<int 101 bits>")], "ints at and beyond 64 bits")


def test_python_text_and_csv():
    res = _py(["kinds", "fib"], [CALLS], fmt="text")
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    lines = [l for l in res.text.splitlines() if " kinds " in l]
    eq(len(lines), 1, "one kinds row")
    check(lines[0].endswith('i=-42 f=2.5 s="hello" b=True none=None raw="b\'ab\\\\x00c\'"'),
          lines[0])
    check('"hello"' in lines[0].split(" kinds ")[1].split()[0], "RET column: %s" % lines[0])
    res = _py(["fib"], [CALLS], fmt="csv")
    eq(len(res.rows), 177, "177 CSV rows")
    top = [r for r in res.rows if r["typed"]["args"] == '{"n":10}']
    eq([t["ret"] for t in top], [55], "CSV args and ret columns")


def test_python_patterns():
    res = _py(["calls.*"], [CALLS])
    funcs = {r["func"] for r in res.rows}
    check({"fib", "kinds", "Shape.area", "main", "<module>"} <= funcs, funcs)
    check(not any(r["module"].startswith("<frozen") for r in res.rows), "module glob only")
    res = _py(["calls.py:Shape.area", "nosuch.py:fib"], [CALLS])
    eq({r["func"] for r in res.rows}, {"Shape.area"}, "FILE:qualname")
    res = _py(["S*.ar?a"], [CALLS])
    eq([r["func"] for r in res.rows], ["Shape.area"], "glob on the qualname")


def test_python_threads():
    res = _py(["work"], [WORKER, "threads", "1000"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, "threads done\n", "output")
    per_tid = {}
    for r in res.rows:
        per_tid.setdefault(r["tid"], []).append(r)
    eq(sorted(len(v) for v in per_tid.values()), [1000, 1000], "1000 calls on each thread")
    for rows in per_tid.values():
        k = rows[0]["args"]["k"]
        eq(sorted(r["retval"] for r in rows), [k * 1000 + i for i in range(1000)],
           "each thread's values")
    eq(summary(res.stderr)["lost"], 0, "nothing lost")


class _Worker:
    def __init__(self):
        _need_python()
        self.p = subprocess.Popen([PY, WORKER, "wait"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.pid = int(self.p.stdout.readline().split()[1])

    def cmd(self, c):
        self.p.stdin.write(c + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def quit(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        eq(self.p.wait(10), 0, "worker exit status")


def _attach(pid, out, extra=()):
    bg = Background(["trace", "-F", "json", "-o", out, "--py", "step", "-p", str(pid)]
                    + list(extra))
    bg.wait_attached()
    return bg


def test_python_attach_and_restore():
    for sig in (signal.SIGINT, signal.SIGTERM):
        w = _Worker()
        try:
            eq(w.cmd("eval"), "eval 0x0", "no hook before cmon")
            out = tmpfile("py-attach.json")
            bg = _attach(w.pid, out)
            hooked = w.cmd("eval")
            check(hooked != "eval 0x0", "the hook is set while cmon runs")
            eq(w.cmd("run"), "run 30", "output while traced")
            time.sleep(0.1)
            bg.signal(sig)
            eq(bg.wait(), 0, "cmon's exit status (%s)" % bg.stderr)
            eq(w.cmd("eval"), "eval 0x0", "eval_frame restored after %s" % sig.name)
            eq(w.cmd("run"), "run 30", "output after detach")
            rows = _json(read_text(out))
            eq([(r["args"], r["retval"]) for r in rows],
               [({"i": i}, i * i) for i in range(5)], "step(0..4) while attached")
        finally:
            if w.p.poll() is None:
                w.quit()


def test_python_restore_keeps_foreign_value():
    """cmon puts back only its own value: the hook is the process's again
    once cmon is gone, whatever happened meanwhile (here: nothing)."""
    w = _Worker()
    try:
        bg = _attach(w.pid, tmpfile("py-attach2.json"))
        bg.signal(signal.SIGINT)
        eq(bg.wait(), 0, "cmon's exit status")
        eq(w.cmd("eval"), "eval 0x0", "restored")
        # attach again: the hook can be set again
        bg = _attach(w.pid, tmpfile("py-attach3.json"))
        check(w.cmd("eval") != "eval 0x0", "set again")
        bg.signal(signal.SIGINT)
        bg.wait()
        eq(w.cmd("eval"), "eval 0x0", "restored again")
    finally:
        w.quit()


def test_python_unsupported():
    code, _, err = cmon(["trace", "--py", "foo", "--", "/bin/true"])
    eq(code, 1, "not an interpreter")
    eq(err.strip(), "cmon: --py: /bin/true is not a CPython 3.11 interpreter "
                    "(no _PyEval_EvalFrameDefault symbol)", "one line naming what was found")
    code, _, err = cmon(["trace", "--py", "foo", "--binary", "/bin/true"])
    eq(code, 1, "--binary is refused")
    check("--py needs the interpreter's process" in err, err)
    code, _, err = cmon(["trace", "--py", "", "--", "/bin/true"])
    eq(code, 2, "an empty pattern is a usage error")


def test_python_capture_store():
    """cmon capture --py: one store function per Python function (made at
    its first call), the calls with their args and values."""
    import sqlite3
    _need_python()
    d = tmpfile("py-store")
    code, out, err = cmon(["capture", "-q", "--py", "fib", "--py", "kinds", "--py", "boom",
                           "-o", d, "--", PY, CALLS])
    eq(code, 0, "exit status (%s)" % err)
    eq(out, CALLS_OUT, "output")
    db = sqlite3.connect(os.path.join(d, "calls.db"))
    funcs = {name: (fid, module) for fid, name, module in
             db.execute("select id, name, module from functions")}
    eq(sorted(funcs), ["boom", "fib", "kinds"], "store functions")
    eq(funcs["fib"][1], CALLS + ":5", "module: file:line")
    eq(db.execute("select count(*) from calls where func_id=?", (funcs["fib"][0],)).fetchone()[0],
       177, "fib calls")
    eq(db.execute("select ret from calls where func_id=? and args=?",
                  (funcs["fib"][0], '{"n":10}')).fetchall(), [("55",)], "fib(10) = 55")
    eq(db.execute("select status, ret, args from calls where func_id=?",
                  (funcs["boom"][0],)).fetchall(), [("exception", None, '{"x":7}')], "boom")
    row = db.execute("select args, ret from calls where func_id=?", (funcs["kinds"][0],)).fetchone()
    eq(json.loads(row[0]), {"i": -42, "f": 2.5, "s": "hello", "b": True, "none": None,
                            "raw": "b'ab\\x00c'"}, "kinds args")
    eq(json.loads(row[1]), "hello", "kinds ret")


def test_python_deep_recursion_counted():
    """Deeper than 64 nested Python calls: the kernel places no more return
    probes, cmon keeps no more frames; those calls are counted lost, the
    rest pair exactly."""
    script = tmpfile("deep.py")
    with open(script, "w") as f:
        f.write("def leaf(x):\n    return x + 1\n"
                "def deep(n):\n    return leaf(n) if n == 0 else deep(n - 1)\n"
                "print(deep(100))\n")
    res = _py(["deep", "leaf"], [script])
    eq(res.code, 3, "exit status 3: calls were lost (%s)" % res.stderr)
    eq(res.stdout, "1\n", "output")
    rows = res.rows
    check(all(r["status"] == "ok" for r in rows), "every record paired")
    ns = sorted(r["args"]["n"] for r in rows)
    eq(ns, list(range(100 - len(ns) + 1, 101)), "the outermost calls, consecutive")
    eq([r["retval"] for r in rows], [1] * len(rows), "each returned deep(0)'s value")
    table = summary(res.stderr)["table"]["_PyEval_EvalFrameDefault"]
    eq(table[2], 102 - len(rows), "the others counted lost (%s)" % res.stderr)
    check("nested deeper than 64" in res.stderr, res.stderr)


def test_python_pending_at_detach():
    """A call still running when cmon ends is written as noreturn, with its
    arguments; the program goes on (and returns from it) unchanged."""
    w = _Worker()
    try:
        out = tmpfile("py-pending.json")
        bg = Background(["trace", "-F", "json", "-o", out, "--py", "blocked", "-p", str(w.pid)])
        bg.wait_attached()
        eq(w.cmd("block"), "blocked b", "inside blocked()")
        time.sleep(0.1)
        bg.signal(signal.SIGINT)
        eq(bg.wait(), 0, "cmon's exit status (%s)" % bg.stderr)
        eq(w.cmd("go"), "unblocked go", "blocked() returned after cmon left")
        rows = _json(read_text(out))
        eq([(r["func"], r["status"], r["args"], r["comm"]) for r in rows],
           [("blocked", "noreturn", {"tag": "b"}, "python3.11")], "the pending call")
        eq(w.cmd("eval"), "eval 0x0", "restored")
    finally:
        if w.p.poll() is None:
            w.quit()


def test_python_profile():
    """cmon profile --py: per Python function, calls and latencies summed
    (in user space), in text and JSON."""
    _need_python()
    code, out, err = cmon(["profile", "-F", "json", "--py", "fib", "--py", "boom", "--", PY, CALLS])
    eq(code, 0, "exit status (%s)" % err)
    check(out.startswith(CALLS_OUT), "the program's output first: %r" % out)
    rows = {r["func"]: r for r in (json.loads(l) for l in out[len(CALLS_OUT):].splitlines())}
    eq(sorted(rows), ["boom", "fib"], "functions")
    fib = rows["fib"]
    eq((fib["calls"], fib["returns"], fib["noreturn"], fib["lost"]), (177, 177, 0, 0), "fib counts")
    eq(fib["module"], CALLS + ":5", "file:line")
    check(0 < fib["min_ns"] <= fib["p50_ns"] <= fib["max_ns"] <= fib["total_ns"], fib)
    eq(rows["boom"]["calls"], 1, "boom")
    check("cmon: 178 calls counted" in err, err)
    code, _, err = cmon(["profile", "--py", "fib", "--func", "main", "--", PY, CALLS])
    eq(code, 1, "--py with --func")
    eq(err.strip(), "cmon: profile --py: Python functions only (no --func, --usdt, --line, "
                    "--hist), of -p PID or -- CMD", "one line")


def test_python_attach_detach_while_running():
    """Attach and detach five times while two threads call Python flat out:
    the hook is written with every thread paused, the program runs on
    with correct values, and its exit is its own."""
    _need_python()
    p = subprocess.Popen([PY, WORKER, "spin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    pid = int(p.stdout.readline().split()[1])
    try:
        for i in range(5):
            out = tmpfile("py-spin-%d.csv" % i)
            bg = Background(["trace", "-F", "csv", "-o", out, "--py", "fib", "-p", str(pid),
                             "--max-events", "2000"])
            bg.wait_attached()
            code = bg.wait()
            check(code in (0, 3), "cmon's exit status %d (%s)" % (code, bg.stderr))
            rows = [l for l in read_text(out).splitlines()[1:]]
            eq(len(rows), 2000, "--max-events 2000 records")
        p.stdin.write("stop\n")
        p.stdin.flush()
        eq(p.stdout.readline().strip(), "spin ok", "every fib(12) right")
        eq(p.wait(20), 0, "the program's exit status")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def _file_offset(path, sym):
    """The file offset of dynamic symbol SYM of ELF file PATH (nm, readelf)."""
    _, out, _ = run(["nm", "-D", path])
    addr = next(int(l.split()[0], 16) for l in out.splitlines() if l.endswith(" " + sym))
    _, out, _ = run(["readelf", "-lW", path])
    for l in out.splitlines():
        w = l.split()
        if w and w[0] == "LOAD":
            off, vaddr, filesz = int(w[1], 16), int(w[2], 16), int(w[4], 16)
            if vaddr <= addr < vaddr + filesz:
                return addr - vaddr + off
    raise AssertionError("%s not in a LOAD segment of %s" % (sym, path))


def test_python_other_version_refused():
    """An interpreter whose Py_Version says 3.12 (a copy of python3.11 with
    those 4 bytes changed): refused, naming the version found; nothing
    runs untraced (the launched copy never starts)."""
    _need_python()
    copy = tmpfile("python3.12-fake")
    with open(PY, "rb") as f:
        data = bytearray(f.read())
    at = _file_offset(PY, "Py_Version")
    eq(data[at + 3], 3, "Py_Version's major byte")
    eq(data[at + 2], 11, "Py_Version's minor byte")
    data[at + 2] = 12
    with open(copy, "wb") as f:
        f.write(data)
    os.chmod(copy, 0o755)
    marker = tmpfile("ran")
    code, _, err = cmon(["trace", "--py", "f", "--", copy, "-c",
                         "open(%r, 'w').write('x')" % marker])
    eq(code, 1, "refused")
    eq(err.strip(), "cmon: --py: %s is CPython 3.12, not 3.11 (the only version supported)"
       % copy, "one line")
    check(not os.path.exists(marker), "the program did not run")


def test_python_not_python_pid():
    p = subprocess.Popen(["sleep", "30"])
    try:
        code, _, err = cmon(["trace", "--py", "f", "-p", str(p.pid)])
        eq(code, 1, "refused")
        check(err.startswith("cmon: --py: ") and "is not a CPython 3.11 interpreter "
              "(no _PyEval_EvalFrameDefault symbol)" in err and err.count("\n") == 1, err)
        check(p.poll() is None, "sleep untouched")
    finally:
        p.kill()
        p.wait()


def test_python_views():
    """The tree and chrome views take Python calls: exceptions marked, the
    values as the table shows them."""
    res = _py(["Shape.area", "catcher", "boom", "kinds"], [CALLS], fmt="tree")
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    text = res.text
    check('Shape.area(self="<Shape>", w=3, h=1.5) = 4.5;' in text, text)
    check("|   boom(x=7); // exception\n" in text, text)
    check('} = "caught"; // catcher' in text, text)
    check('kinds(i=-42, f=2.5, s="hello", b=True, none=None, raw=' in text, text)
    res = _py(["boom"], [CALLS], fmt="chrome")
    ev = [e for e in json.loads(res.text) if e.get("name") == "boom"]
    eq([(e["cat"], e["ph"], e["args"]) for e in ev], [("exception", "X", {"args": {"x": 7}})],
       "boom as a complete event marked exception")
    check(ev[0]["dur"] > 0, "with its duration")


def test_python_agent():
    """The agent's `py:` (with `pid:`): Python calls as metrics, the hook
    set while the probe is applied and restored when the spec drops it."""
    from agentlib import Agent, value, write_spec
    w = _Worker()
    a = None
    try:
        spec = tmpfile("py-agent.yaml")
        write_spec(spec, [{"name": "pysteps", "target": PY, "pid": w.pid, "py": ["step"],
                           "instrument": "latency"}])
        a = Agent(spec).wait_ready()
        a.wait_probes({"pysteps": "applied"})
        check(w.cmd("eval") != "eval 0x0", "hook set")
        eq(w.cmd("run"), "run 30", "output")
        eq(w.cmd("run"), "run 30", "output")
        a.wait_metric("cmon_pysteps_seconds_count", 10, function="step")
        m = a.metrics()
        eq(value(m, "cmon_pysteps_seconds_bucket", function="step", le="+Inf"), 10.0, "+Inf")
        check(0 < value(m, "cmon_pysteps_seconds_sum", function="step") < 0.01, "sum")
        # dropped from the spec: detached, restored
        write_spec(spec, [{"name": "other", "target": PY, "pid": w.pid, "py": ["nosuch"],
                           "instrument": "count"}])
        a.wait_probes({"other": "applied"})
        check(w.cmd("eval") != "eval 0x0", "set by the new probe")
        eq(a.stop(), 0, "the agent's exit status")
        a = None
        eq(w.cmd("eval"), "eval 0x0", "restored when the agent stopped")
    finally:
        if a:
            a.kill()
        if w.p.poll() is None:
            w.quit()


def test_python_agent_spec_errors():
    from agentlib import Agent, write_spec
    spec = tmpfile("py-agent-bad.yaml")
    write_spec(spec, [
        {"name": "nopid", "target": PY, "py": ["f"], "instrument": "count"},
        {"name": "mixed", "target": PY, "pid": 1, "py": ["f"], "func": "g",
         "instrument": "count"},
        {"name": "arg", "target": PY, "pid": 1, "py": ["f"], "instrument": "arg", "arg": 0},
    ])
    a = Agent(spec).wait_ready()
    try:
        got = a.wait_probes({"nopid": "error", "mixed": "error", "arg": "error"})
        eq(got["nopid"]["error"].split(": ", 1)[1], "'py' needs 'pid' (the interpreter's process; 'target' its "
                                  "executable)", "nopid")
        eq(got["mixed"]["error"].split(": ", 1)[1], "'py' takes Python functions alone: no 'func' or 'usdt'",
           "mixed")
        eq(got["arg"]["error"].split(": ", 1)[1], "'py' takes instrument count or latency", "arg")
    finally:
        a.stop()


def test_python_two_cmons():
    """Two cmons on one interpreter: the first to end restores the pointer,
    the other sets it again (and says calls may have gone unseen); the
    last one restores it."""
    w = _Worker()
    try:
        a = _attach(w.pid, tmpfile("py-two-a.json"))
        b = _attach(w.pid, tmpfile("py-two-b.json"))
        a.signal(signal.SIGINT)
        eq(a.wait(), 0, "first cmon")
        end = time.monotonic() + 5
        while "hook was cleared" not in b.stderr and time.monotonic() < end:
            time.sleep(0.02)
        check("its eval_frame hook was cleared (another cmon ended?): set again" in b.stderr,
              b.stderr)
        check(w.cmd("eval") != "eval 0x0", "set again by the second")
        eq(w.cmd("run"), "run 30", "output")
        b.signal(signal.SIGINT)
        eq(b.wait(), 0, "second cmon")
        eq(w.cmd("eval"), "eval 0x0", "restored by the last")
        rows = _json(read_text(tmpfile("py-two-b.json")))
        eq([r["retval"] for r in rows], [0, 1, 4, 9, 16], "the second cmon saw the calls")
    finally:
        if w.p.poll() is None:
            w.quit()


def test_python_with_c_functions():
    """--py and --func together: C functions of the interpreter and Python
    functions in one trace, the C one's record ending after the Python
    calls it ran (_PyRun_SimpleFileObject runs the script)."""
    res = _py(["kinds"], [CALLS], extra=["--func", "_PyRun_SimpleFileObject"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq([(r["func"], r["status"]) for r in res.rows],
       [("kinds", "ok"), ("_PyRun_SimpleFileObject", "ok")], "both, in order of return")
    eq(res.rows[1]["ret"], 0, "_PyRun_SimpleFileObject returned 0")
    run_ = res.rows[1]
    check(run_["ts_ns"] < res.rows[0]["ts_ns"] and
          res.rows[0]["ts_ns"] < run_["ts_ns"] + run_["latency_ns"], "kinds ran inside it")
