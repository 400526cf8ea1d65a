"""Launch mode (`cmon trace ... -- CMD`): the values calls.c computes."""
import os
import signal
import subprocess
import time

from cmonlib import (HANG, on_a_terminal, CALLS_OUT, CMON, LONGJMP_OUT, MiB, RECURSE_OUT, U64, check, eq,
                     held_by, only, parse_json_lines, read_text, run, target, text_rows, trace, u32)

CALLS_FUNCS = ["add", "six", "negate"]

# (func, leading args, ret) of `calls calls`, in call order.
CALLS_EXPECTED = [
    ("add", (2, 3), 5),
    ("add", (u32(-7), 4), u32(-3)),  # raw registers: an int is zero-extended
    ("six", (1, 2, 3, 4, 5, 6), 91),
    ("negate", (1234567890123,), -1234567890123),
]


def check_calls_rows(rows, pids=None, comm="calls", module="calls", status="ok"):
    """The 4 records of `calls calls` for one process; returns its pid."""
    eq(len(rows), 4, "number of records")
    pid = rows[0]["pid"]
    if pids is not None:
        check(pid in pids, "pid %r is not one of %r" % (pid, pids))
    now = time.time_ns()
    prev_ts = 0
    for r, (func, args, ret) in zip(rows, CALLS_EXPECTED):
        what = "%s record %r" % (func, r)
        eq(r["func"], func, "func (records in call order)")
        eq(tuple(r["arg%d" % i] for i in range(len(args))), args, "args of " + what)
        eq(r["pid"], pid, "pid (all records from one process)")
        eq(r["tid"], pid, "tid of a single-threaded program")
        eq(r["comm"], comm, "comm")
        eq(r["module"], module, "module")
        eq(r["status"], status, "status of " + what)
        if status == "ok":
            eq(r["ret"], ret, "ret of " + what)
            eq(r["depth"], 0, "depth of " + what)
            # The function's own time (the probes' cost subtracted): a
            # one-line function can read 0.
            check(0 <= r["latency_ns"] < 10**9, "latency_ns out of range: " + what)
            check(r["rss_exit"] > 0 and r["vms_exit"] >= r["rss_exit"],
                  "rss/vms at exit: " + what)
        else:
            for k in ("ret", "latency_ns", "rss_exit", "vms_exit", "depth"):
                eq(r[k], None, "%s of an entry-only record %r" % (k, r))
        check(r["rss_entry"] > 0 and r["vms_entry"] >= r["rss_entry"],
              "rss/vms at entry: " + what)
        # ts_ns is wall-clock time of the entry, in call order.
        check(abs(r["ts_ns"] - now) < 120 * 10**9, "ts_ns %d is not near now (%d)"
              % (r["ts_ns"], now))
        check(r["ts_ns"] > prev_ts, "ts_ns not increasing: " + what)
        prev_ts = r["ts_ns"]
    return pid


def check_clean_summary(res, expected_table, functions=None):
    s = res.summary()
    eq(s["functions"], functions or len(expected_table), "functions in the 'attached' line")
    eq(s["written"], sum(v[1] for v in expected_table.values()), "events written")
    eq(s["lost"], 0, "events lost")
    eq(s["table"], expected_table, "per-function table")


def test_launch_csv():
    code, untraced, _ = run([target(), "calls"])
    eq((code, untraced), (0, CALLS_OUT), "untraced run of calls")
    # --raw: the registers are the values, arg0..arg5 (the CSV of typed
    # values is test_csv.py's)
    res = trace(CALLS_FUNCS, launch=[target(), "calls"], fmt="csv", extra=["--raw"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, untraced, "program output")
    check_calls_rows(res.rows)
    check_clean_summary(res, {"add": (2, 2, 0), "six": (1, 1, 0), "negate": (1, 1, 0)})
    check(res.text.startswith("schema,ts_ns,pid,"), "CSV starts with its header")


def test_launch_json():
    res = trace(CALLS_FUNCS, launch=[target(), "calls"], fmt="json")
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, CALLS_OUT, "program output")
    for r in res.rows:
        for k, v in r.items():
            if k in ("comm", "func", "status", "module"):
                check(isinstance(v, str), "%s is not a string in %r" % (k, r))
            elif k == "latency_lt_ns":  # a bound, when latency_ns is not a measurement
                check(v is None or (type(v) is int and v > r["latency_ns"]),
                      "%s is neither null nor a bound in %r" % (k, r))
            elif k not in ("args", "retval"):
                check(type(v) is int, "%s is not an integer in %r" % (k, r))
    check_calls_rows(res.rows)
    # The target has DWARF: parameters by name, values by type (an int -7
    # is -7, not its 64-bit register), the return value typed too.
    typed = [(r["func"], dict(r["args"]), r["retval"]) for r in res.rows]
    eq(typed, [("add", {"a": 2, "b": 3}, 5), ("add", {"a": -7, "b": 4}, -3),
               ("six", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6}, 91),
               ("negate", {"v": 1234567890123}, -1234567890123)], "typed args and retval")

    # A call that never returns: null where CSV is empty.
    res = trace(["jumper", "add"], launch=[target(), "longjmp"], fmt="json")
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, LONGJMP_OUT, "program output")
    j = only(res.rows, "jumper")
    eq(len(j), 1, "jumper records")
    eq((j[0]["arg0"], j[0]["status"], j[0]["depth"]), (7, "noreturn", 0), "jumper record")
    for k in ("ret", "latency_ns", "rss_exit", "vms_exit"):
        eq(j[0][k], None, "%s of a noreturn record" % k)
    check(j[0]["rss_entry"] > 0, "rss_entry of a noreturn record is set")


def test_recursion_depth():
    # Raw latencies: nesting is checked on the clock as the probes saw it
    # (the function's own time has the probes' cost taken out).
    res = trace(["fact", "outer", "middle", "leaf"], launch=[target(), "recurse"],
                extra=["--raw-latency"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, RECURSE_OUT, "program output")
    eq(len(res.rows), 8, "records")
    facts = sorted(only(res.rows, "fact"), key=lambda r: -r["arg0"])
    eq([r["arg0"] for r in facts], [5, 4, 3, 2, 1], "fact arguments")
    eq([r["ret"] for r in facts], [120, 24, 6, 2, 1], "fact(n) returns n!")
    eq([r["depth"] for r in facts], [0, 1, 2, 3, 4], "fact depth = 5 - n")
    for outer_call, inner in zip(facts, facts[1:]):
        # The inner call starts after and ends before its caller.
        check(outer_call["ts_ns"] < inner["ts_ns"], "fact(%d) starts after fact(%d)"
              % (inner["arg0"], outer_call["arg0"]))
        check(inner["ts_ns"] + inner["latency_ns"] <=
              outer_call["ts_ns"] + outer_call["latency_ns"],
              "fact(%d) ends before fact(%d)" % (inner["arg0"], outer_call["arg0"]))
    got = {r["func"]: (r["arg0"], r["depth"], r["ret"], r["status"]) for r in res.rows
           if r["func"] != "fact"}
    eq(got, {"outer": (10, 0, 25, "ok"), "middle": (10, 1, 22, "ok"),
             "leaf": (10, 2, 11, "ok")}, "outer/middle/leaf (arg0, depth, ret, status)")
    # Records are written as calls return: innermost first.
    eq([r["func"] for r in res.rows],
       ["fact"] * 5 + ["leaf", "middle", "outer"], "record order")
    check(len({r["pid"] for r in res.rows}) == 1, "one process")


def test_rss_grow_launch():
    res = trace(["grow"], launch=[target(), "grow", "64"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, "grow=ok\n", "program output")
    eq(len(res.rows), 1, "records")
    r = res.rows[0]
    eq((r["arg0"], r["status"]), (64, "ok"), "grow(64)")
    check(r["ret"] not in (None, 0, U64, -1), "grow returned a mapping: %r" % r["ret"])
    drss = r["rss_exit"] - r["rss_entry"]
    check(abs(drss - 64 * MiB) <= 64 * MiB * 5 // 100,
          "RSS grew by %d bytes, not 64 MiB +-5%%" % drss)
    dvms = r["vms_exit"] - r["vms_entry"]
    check(64 * MiB <= dvms < 66 * MiB, "VMS grew by %d bytes, not 64 MiB" % dvms)


def test_longjmp():
    res = trace(["jumper", "add"], launch=[target(), "longjmp"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, LONGJMP_OUT, "program output")
    eq([r["func"] for r in res.rows], ["jumper", "add"], "records")
    j, a = res.rows
    eq((j["arg0"], j["status"], j["ret"], j["latency_ns"], j["depth"]),
       (7, "noreturn", None, None, 0), "jumper(7) (arg0, status, ret, latency, depth)")
    # add runs after the jump: the abandoned jumper frame must not nest it.
    eq((a["arg0"], a["arg1"], a["ret"], a["status"], a["depth"]), (1, 1, 2, "ok", 0),
       "add(1,1) after the jump (arg0, arg1, ret, status, depth)")


def test_exit_inside_traced_function():
    res = trace(["exit_inside", "add"], launch=[target(), "exit", "9"])
    eq(res.code, 9, "cmon exit status = program's (%s)" % res.stderr.strip())
    eq(res.stdout, "", "program output")
    # exit_inside has no ret: it never returns normally, so it has no exit
    # probe and its record is written at its entry.
    eq([r["func"] for r in res.rows], ["add", "exit_inside"], "records")
    a, e = res.rows
    eq((a["arg0"], a["arg1"], a["ret"], a["status"]), (5, 5, 10, "ok"), "add(5,5)")
    eq((e["arg0"], e["status"], e["ret"], e["depth"]), (9, "never-returns", None, 0),
       "exit_inside(9): no traced call pending under it")
    eq(res.summary()["lost"], 0, "events lost")


def test_never_returning_function_has_its_depth():
    """fail() leaves only by longjmp (no ret: it never returns normally, so
    its record is written at its entry): the record carries its depth, and
    its callee nests under it.  It had no depth, and leaf(7) was written
    at depth 1, beside it."""
    res = trace(["guarded", "fail", "leaf"], launch=[target(), "fail"], fmt="json")
    eq((res.code, res.stdout), (0, "guarded=101\n"), "exit status and output (%s)"
       % res.stderr.strip())
    got = [(r["func"], r["arg0"], r["status"], r["ret"], r["depth"])
           for r in sorted(res.rows, key=lambda r: r["ts_ns"])]
    eq(got, [("guarded", 7, "ok", 101, 0), ("fail", 7, "never-returns", None, 1),
             ("leaf", 7, "ok", 8, 2), ("leaf", 100, "ok", 101, 1)],
       "(func, arg0, status, ret, depth) in entry order")


def test_no_return():
    res = trace(CALLS_FUNCS, launch=[target(), "calls"], extra=["--no-return"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, CALLS_OUT, "program output")
    check_calls_rows(res.rows, status="entry")


def test_max_events():
    n = 100000
    res = trace(["add"], launch=[target(), "loop", str(n)], extra=["--max-events", "3"])
    # The program goes on untraced and must end with its own result.
    eq(res.stdout, "loop sum=%d\n" % (n * (n + 1) // 2), "program output")
    eq([(r["arg0"], r["arg1"], r["ret"], r["status"]) for r in res.rows],
       [(0, 1, 1, "ok"), (1, 1, 2, "ok"), (2, 1, 3, "ok")], "the first 3 add calls")
    eq(res.summary()["written"], 3, "events written")
    bad = [l for l in res.stderr.splitlines() if "ring buffer" in l or "error" in l.lower()]
    eq(bad, [], "error lines on stderr")
    eq(res.code, 0, "cmon exit status")


def test_text_format():
    """The text table: time, pid/tid, latency and dRSS in 47 columns, then
    the call as C writes it, typed from DWARF (name=value) or the six
    registers (--raw), and its return value."""
    res = trace(CALLS_FUNCS, launch=[target(), "calls"], fmt="text")
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq([l[47:] for l in res.text.splitlines()[1:]],
       ["add(a=2, b=3) = 5", "add(a=-7, b=4) = -3",
        "six(a=1, b=2, c=3, d=4, e=5, f=6) = 91",
        "negate(v=1234567890123) = -1234567890123"], "typed calls in text")
    # Raw mode: the six registers.
    res = trace(CALLS_FUNCS, launch=[target(), "calls"], fmt="text", extra=["--raw"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, CALLS_OUT, "program output")
    lines = res.text.splitlines()
    eq(len(lines), 5, "lines (header + one per call): %r" % lines)
    rows = text_rows(res.text)
    pids = set()
    for row, line, (func, args, ret) in zip(rows, lines[1:], CALLS_EXPECTED):
        eq(row["func"], func, "func in %r" % line)
        eq(row["pid"], row["tid"], "pid == tid in %r" % line)
        check(len(line[:47].rstrip()) <= 46 and line[46] == " ", "47 columns before the call")
        pids.add(row["pid"])
        # Numbers are decimal or hex; compare as 64-bit registers.
        check(row["rest"].startswith(" = "), "a return value in %r" % line)
        eq(int(row["rest"][3:], 0) & U64, ret & U64, "ret in %r" % line)
        got = tuple(int(x, 0) & U64 for x in row["args"].split(", ")[:len(args)])
        eq(got, tuple(a & U64 for a in args), "args in %r" % line)
    eq(len(pids), 1, "one pid")


def test_hostile_program_name():
    # comm and module come from the file name: CSV must quote, JSON escape.
    name = 'x,"y\\z q'
    path = os.path.join(os.environ["CMON_IT_TMP"], name)
    with open(target(), "rb") as src, open(path, "wb") as dst:
        dst.write(src.read())
    os.chmod(path, 0o755)
    for fmt in ("csv", "json"):
        # (--raw: the registers as arg0..arg5 in CSV too)
        res = trace(["add"], launch=[path, "loop", "2"], fmt=fmt, extra=["--raw"])
        eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
        eq(res.stdout, "loop sum=3\n", "program output")
        eq([(r["comm"], r["module"], r["arg0"], r["ret"]) for r in res.rows],
           [(name, name, 0, 1), (name, name, 1, 2)], "%s records" % fmt)


def test_shared_library_function():
    # getpid in libc: its return value is the pid the program prints.
    res = trace(["libc.so.6:getpid", "add"], launch=[target(), "--wait", "calls"],
                input="\n")
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    first, rest = res.stdout.split("\n", 1)
    check(first.startswith("ready "), "program output %r" % res.stdout)
    pid = int(first.split()[1])
    eq(rest, CALLS_OUT, "program output after ready")
    g = only(res.rows, "getpid")
    eq(len(g), 1, "getpid records")
    eq((g[0]["pid"], g[0]["ret"], g[0]["module"], g[0]["status"]),
       (pid, pid, "libc.so.6", "ok"), "getpid (pid, ret, module, status)")
    eq([(r["arg0"], r["arg1"], r["ret"], r["pid"]) for r in only(res.rows, "add")],
       [(2, 3, 5, pid), (u32(-7), 4, u32(-3), pid)], "add records")


def _launch_wait(extra=()):
    """cmon launching `calls --wait calls`: (cmon Popen, records path, program pid)."""
    path = os.path.join(os.environ["CMON_IT_TMP"], "wait.csv")
    p = subprocess.Popen([CMON, "trace", "-F", "json", "-o", path, "-q", "--func", "add"]
                         + list(extra) + ["--", target(), "--wait", "calls"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = p.stdout.readline().decode()
    check(line.startswith("ready "), "program's first line: %r" % line)
    return p, path, int(line.split()[1])


def test_launched_program_inherits_nothing():
    p, path, pid = _launch_wait()
    try:
        fds = {}
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                fds[int(fd)] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                pass
        # Only stdin/stdout/stderr: no BPF object, no pipe of cmon's.
        eq(sorted(fds), [0, 1, 2], "the launched program's open fds: %r" % fds)
        eq(held_by(pid), set(), "BPF objects held by the launched program")
        out, err = p.communicate(b"\n", timeout=HANG)
        eq(p.returncode, 0, "cmon exit status (%s)" % err.decode().strip())
        eq(out.decode(), CALLS_OUT, "program output")
        eq([(r["arg0"], r["ret"], r["pid"]) for r in parse_json_lines(read_text(path))],
           [(2, 5, pid), (u32(-7), u32(-3), pid)], "add records")
    finally:
        p.kill()
        p.communicate()


def test_launched_program_killed():
    # The program's death by a signal is cmon's exit status 128+N.
    p, path, pid = _launch_wait()
    try:
        os.kill(pid, signal.SIGTERM)
        out, err = p.communicate(timeout=HANG)
        eq(p.returncode, 128 + signal.SIGTERM, "cmon exit status (%s)" % err.decode().strip())
        eq(parse_json_lines(read_text(path)), [], "records")
    finally:
        p.kill()
        p.communicate()


def test_summary_lists_called_functions():
    """The end summary has a row per function called; the others are
    counted on one line, not listed as rows of zeros."""
    res = trace(CALLS_FUNCS + ["fact", "grow", "libc.so.6:strfry"], launch=[target(), "calls"])
    eq(res.code, 0, "exit status (%s)" % res.stderr.strip())
    check_clean_summary(res, {"add": (2, 2, 0), "six": (1, 1, 0), "negate": (1, 1, 0)},
                        functions=6)
    eq([l for l in res.stderr.splitlines() if "never called" in l],
       ["cmon: functions never called: 3"], "the others counted")
    res = trace(["fact", "grow"], launch=[target(), "calls"])
    eq(res.code, 0, "exit status (%s)" % res.stderr.strip())
    lines = res.stderr.splitlines()
    eq([l for l in lines if "never called" in l or l.startswith("cmon: function ")],
       ["cmon: functions never called: 2 (all of them)"], "no table, the count")


def test_text_colourson_a_terminal():
    """The text table on a terminal: its header and function names bold, a
    status where a return value goes yellow; none with NO_COLOR set, none
    in a file."""
    args = ["trace", "-q", "--func", "add", "--func", "jumper", "--", target(), "longjmp"]
    shown = on_a_terminal(args)
    check("\x1b[1mTIME " in shown and "CALL\x1b[22m" in shown, "bold header: %r" % shown)
    check("\x1b[1madd\x1b[22m" in shown and "\x1b[1mjumper\x1b[22m" in shown,
          "bold names: %r" % shown)
    check("\x1b[33m<noreturn>\x1b[39m" in shown, "the status in yellow: %r" % shown)
    shown = on_a_terminal(args, env=dict(os.environ, NO_COLOR="1"))
    check("\x1b[" not in shown, "NO_COLOR: no escape: %r" % shown)
    check("jumper" in shown, shown)
    res = trace(["add", "jumper"], launch=[target(), "longjmp"], fmt="text")
    check("\x1b[" not in res.text, "a file: no escape: %r" % res.text)
