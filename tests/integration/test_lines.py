"""--line FILE:LINE: one record each time a source line runs, from the
DWARF line table, at -O0 and -O2 (tests/targets/lines.c: line 18 runs
once per walk() call); the nearest lines with code when a line has none;
cmon list --lines."""
from cmonlib import check, cmon, eq, target, trace


def test_line_runs_counted_exactly():
    for binary in ("lines", "lines_O2"):
        res = trace([], launch=[target(binary), "5"], extra=["--line", "lines.c:18"])
        eq(res.code, 0, "%s: exit status (%s)" % (binary, res.stderr))
        eq(res.stdout, "total=30\n", "%s: program output" % binary)
        eq([(r["func"], r["status"], r["module"], r["ret"], r["latency_ns"]) for r in res.rows],
           [("lines.c:18 (walk)", "line", binary, None, None)] * 5,
           "%s: one record each time line 18 ran" % binary)
        check(all(r["rss_entry"] > 0 for r in res.rows), "RSS at the line")
        # A path suffix names the same file.
        res = trace([], launch=[target(binary), "3"],
                    extra=["--line", "targets/lines.c:18"])
        eq(len(res.rows), 3, "%s: path suffix" % binary)


def test_line_errors_name_nearest_code():
    code, _, err = cmon(["trace", "--line", "lines.c:2", "--", target("lines"), "1"])
    eq(code, 1, "no code at a comment line")
    eq(err.strip().splitlines(), ["cmon: --line lines.c:2: no code at line 2; the nearest line "
                                  "with code is 15"], "one line naming the nearest")
    code, _, err = cmon(["trace", "--line", "lines.c:21", "--", target("lines"), "1"])
    eq(err.strip(), "cmon: --line lines.c:21: no code at line 21; the nearest lines with code "
       "are 20 and 23", "between two functions")
    code, _, err = cmon(["trace", "--line", "nosuch.c:3", "--", target("lines"), "1"])
    eq((code, err.strip()), (1, "cmon: --line nosuch.c:3: no DWARF line table names nosuch.c"),
       "unknown file")
    for bad in ("lines.c", "lines.c:0", "lines.c:x", ":18"):
        code, _, err = cmon(["trace", "--line", bad, "--", target("lines"), "1"])
        eq(code, 2, "--line %s: a usage error (%s)" % (bad, err))
        check("expected FILE:LINE" in err, err)


def test_list_lines():
    code, out, err = cmon(["list", "--lines", "walk", "--", target("lines")])
    eq(code, 0, "exit status (%s)" % err)
    got = [l.split()[-2] for l in out.splitlines()[1:]]
    eq(got, ["lines.c:15", "lines.c:16", "lines.c:18", "lines.c:19", "lines.c:20"],
       "walk's lines of code at -O0")
