"""--line FILE:LINE: one record each time a source line runs, from the
DWARF line table, at -O0 and -O2 (tests/targets/lines.c: the "once per
walk" line runs once per walk() call); the nearest lines with code when a
line has none; cmon list --lines; --lines FUNC: every line of a function
with the time and RSS change until the thread's next line (the memset of
8 MiB shows +8 MiB)."""
import json
import re
import os

from cmonlib import check, cmon, eq, run, target, trace

SRC = os.path.join(os.path.dirname(__file__), "..", "targets", "lines.c")


def line_of(text):
    with open(SRC) as f:
        for n, l in enumerate(f, 1):
            if text in l:
                return n
    raise AssertionError("no %r in lines.c" % text)


def test_line_runs_counted_exactly():
    line = line_of("marker: once per walk")
    for binary in ("lines", "lines_O2"):
        res = trace([], launch=[target(binary), "5"], extra=["--line", "lines.c:%d" % line])
        eq(res.code, 0, "%s: exit status (%s)" % (binary, res.stderr))
        eq(res.stdout, "total=30\n", "%s: program output" % binary)
        eq([(r["func"], r["status"], r["module"], r["ret"], r["latency_ns"]) for r in res.rows],
           [("lines.c:%d (walk)" % line, "line", binary, None, None)] * 5,
           "%s: one record each time the line ran" % binary)
        check(all(r["rss_entry"] > 0 for r in res.rows), "RSS at the line")
        # A path suffix names the same file.
        res = trace([], launch=[target(binary), "3"],
                    extra=["--line", "targets/lines.c:%d" % line])
        eq(len(res.rows), 3, "%s: path suffix" % binary)


def test_line_of_one_line_function_counted_once_a_run():
    """triple() is one line: at -O0 its prologue, body and epilogue are three
    rows of the line table, and each row was a site (3 records a call, three
    identical rows in profile).  A run of rows of one line is one site."""
    line = line_of("marker: one-liner")
    for binary in ("lines", "lines_O2"):
        res = trace([], launch=[target(binary), "5"], extra=["--line", "lines.c:%d" % line])
        eq(res.code, 0, "%s: exit status (%s)" % (binary, res.stderr))
        eq([r["func"] for r in res.rows], ["lines.c:%d (triple)" % line] * 5,
           "%s: one record each time the line ran" % binary)


def test_every_listed_line_is_a_site():
    """Each line `cmon list --lines` shows for show_list() can be traced, at
    -O0, -O1 and -O2: at -O1 the fprintf line's one statement row follows a
    non-statement row of the same line, and the rule that keeps one site a
    run of rows took that row for a continuation (no code at the line).
    The fprintf line runs once a node."""
    show = line_of("marker: show line")
    for binary in ("lines", "lines_O1", "lines_O2"):
        code, out, err = cmon(["list", "--lines", "show_list", "--", target(binary)])
        eq(code, 0, "%s: list --lines (%s)" % (binary, err))
        listed = sorted({int(m) for m in re.findall(r"lines\.c:(\d+)", out)})
        check(show in listed, "%s: the fprintf line listed: %r" % (binary, listed))
        for line in listed:
            res = trace([], launch=[target(binary), "list"],
                        extra=["--line", "lines.c:%d" % line])
            eq(res.code, 0, "%s: --line lines.c:%d (%s)" % (binary, line, res.stderr))
        res = trace([], launch=[target(binary), "list"], extra=["--line", "lines.c:%d" % show])
        eq(len(res.rows), 3, "%s: the fprintf line ran 3 times" % binary)


def test_line_errors_name_nearest_code():
    code, _, err = cmon(["trace", "--line", "lines.c:2", "--", target("lines"), "1"])
    eq(code, 1, "no code at a comment line")
    walk = line_of("NOINLINE long walk")
    eq(err.strip(), "cmon: --line lines.c:2: no code at line 2; the nearest line with code "
       "is %d" % (walk + 1), "one line naming the nearest")
    code, _, err = cmon(["trace", "--line", "nosuch.c:3", "--", target("lines"), "1"])
    eq((code, err.strip()), (1, "cmon: --line nosuch.c:3: no DWARF line table names nosuch.c"),
       "unknown file")
    # 2^32 + 8: no int line number (it wrapped to line 8)
    for bad in ("lines.c", "lines.c:0", "lines.c:x", ":18", "lines.c:4294967304",
                "lines.c:18446744073709551623"):
        code, _, err = cmon(["trace", "--line", bad, "--", target("lines"), "1"])
        eq(code, 2, "--line %s: a usage error (%s)" % (bad, err))
        check("expected FILE:LINE" in err, err)


def test_list_lines():
    code, out, err = cmon(["list", "--lines", "walk", "--", target("lines")])
    eq(code, 0, "exit status (%s)" % err)
    w = line_of("NOINLINE long walk")
    got = [l.split()[-2] for l in out.splitlines()[1:]]
    eq(got, ["lines.c:%d" % n for n in (w + 1, w + 2, w + 4, w + 5, w + 6)],
       "walk's lines of code at -O0")


def test_lines_of_a_function_time_and_memory():
    touch = line_of("marker: touches")
    res = trace([], launch=[target("lines"), "grow"], fmt="json",
                extra=["--lines", "grow_lines"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, "grow=8388608\n", "program output")
    recs = [json.loads(l) for l in res.text.splitlines()]
    lines = [r for r in recs if r["status"] == "line"]
    check(all(r["func"].endswith("(grow_lines)") for r in lines), "lines of grow_lines only")
    touched = [r for r in lines if r["func"] == "lines.c:%d (grow_lines)" % touch]
    eq(len(touched), 1, "the memset line ran once")
    grew = touched[0]["rss_exit"] - touched[0]["rss_entry"]
    check(8 << 20 <= grew < (8 << 20) + (256 << 10), "the memset line grew RSS by 8 MiB: %d"
          % grew)
    check(all(r["latency_ns"] is not None for r in lines), "every line timed (the function's "
          "return closes the last)")
    order = [int(r["func"].split(":")[1].split()[0]) for r in lines]
    eq(order, sorted(order), "lines in the order they ran")
    fn = [r for r in recs if r["func"] == "grow_lines"]
    eq([(r["status"], r["ret"]) for r in fn], [("ok", 8388608)], "the function's own record")


def test_line_locals_typed_at_O0_and_O2():
    """--locals: the variables in scope where the line runs, read there:
    walk(i) at the "once per walk" line has i and sq = i * i; at -O2, i
    (clobbered by then: only its entry value is known) is said to be
    optimized out, sq is in a register."""
    line = line_of("marker: once per walk")
    for binary, want in (("lines", [{"i": i, "sq": i * i} for i in range(5)]),
                         ("lines_O2", [{"i": "<unavailable: optimized out>", "sq": i * i}
                                       for i in range(5)])):
        res = trace([], launch=[target(binary), "5"], fmt="json",
                    extra=["--line", "lines.c:%d" % line, "--locals"])
        eq(res.code, 0, "%s: exit status (%s)" % (binary, res.stderr))
        eq(res.stdout, "total=30\n", "%s: program output" % binary)
        eq([dict(r["args"]) for r in res.rows], want, "%s: the locals at each run" % binary)
    code, _, err = cmon(["trace", "--locals", "--func", "walk", "--", target("lines"), "1"])
    eq((code, err), (2, "cmon: trace: --locals reads the variables where a --line runs: "
                        "give --line\n"), "--locals without --line")


def test_line_locals_of_an_inlined_copy():
    """--locals inside an inlined copy reads the copy's own variables
    (scaled's v, w, r); libdw's scopes there end at the copy's abstract
    definition, and the line was left untyped (no values at all)."""
    line = line_of("marker: inlined")
    for binary in ("lines", "lines_O2"):
        res = trace([], launch=[target(binary), "inl"], fmt="json",
                    extra=["--line", "lines.c:%d" % line, "--locals"])
        eq((res.code, res.stdout), (0, "inl=32\n"), "%s: exit status and output (%s)"
           % (binary, res.stderr))
        eq([dict(r["args"]) for r in res.rows],
           [{"r": i * (i + 5), "w": i + 5, "v": i} for i in range(3)],
           "%s: scaled's locals at each run" % binary)


def test_line_has_no_arguments():
    """A line has no arguments: arg0..arg5 empty in CSV, null in JSON (they
    were 0).  With --locals they hold the argument registers where the line
    ran (the locals in registers are read from them): kept."""
    line = line_of("marker: once per walk")
    res = trace([], launch=[target("lines"), "3"], extra=["--line", "lines.c:%d" % line])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    args = ["arg%d" % i for i in range(6)]
    eq([[r[a] for a in args] for r in res.rows], [[None] * 6] * 3, "CSV: no arguments")
    res = trace([], launch=[target("lines"), "3"], fmt="json",
                extra=["--line", "lines.c:%d" % line])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq([[r[a] for a in args] for r in res.rows], [[None] * 6] * 3, "JSON: no arguments")
    # walk(long i): at -O0 the line runs with i (0, 1, 2) still in rdi.  (CSV
    # has the registers' columns only without DWARF typing: JSON here.)
    for fmt in ("json",):
        res = trace([], launch=[target("lines"), "3"], fmt=fmt,
                    extra=["--line", "lines.c:%d" % line, "--locals"])
        eq(res.code, 0, "exit status (%s)" % res.stderr)
        check(all(all(isinstance(r[a], int) for a in args) for r in res.rows),
              "%s --locals: the registers at the line: %r" % (fmt, res.rows))
        eq([r["arg0"] for r in res.rows], [0, 1, 2], "%s --locals: rdi holds i" % fmt)


def test_lines_of_a_build_without_aranges():
    """clang writes no .debug_aranges (nor does Go): the code
    address of a line or function found no compilation unit, so --lines
    and `list --lines` said "no DWARF line table" and --locals read
    nothing.  The CUs' own ranges answer now."""
    binary = target("lines_clang")
    code, out, _ = run(["readelf", "-S", binary])
    eq((code, ".debug_aranges" in out), (0, False), "the build has no .debug_aranges")
    line = line_of("marker: once per walk")
    code, out, err = cmon(["list", "--lines", "walk", "--", binary])
    eq(code, 0, "list --lines (%s)" % err)
    listed = [int(m) for m in re.findall(r"lines\.c:(\d+)", out)]
    check(line in listed, "the marker line listed: %r" % listed)
    res = trace([], launch=[binary, "5"], fmt="json",
                extra=["--line", "lines.c:%d" % line, "--locals"])
    eq((res.code, res.stdout), (0, "total=30\n"), "exit status and output (%s)" % res.stderr)
    eq([dict(r["args"]) for r in res.rows], [{"i": i, "sq": i * i} for i in range(5)],
       "the locals at each run")
    res = trace([], launch=[binary, "2"], fmt="json", extra=["--lines", "walk"])
    eq(res.code, 0, "--lines walk (%s)" % res.stderr)
    got = [r["func"] for r in res.rows if r["status"] == "line"]
    eq(got.count("lines.c:%d (walk)" % line), 2, "the marker line ran once a walk: %r" % got)
