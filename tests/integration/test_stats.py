"""`cmon stats` over capture stores of tests/targets/numeric.c run with inputs
that differ in a known digit: DELTA 0, 1e-4, 2e-4 added to s.x (3 + k) and to
vals[0] (1.0); everything else identical.  With the sample standard
deviation, std = 1e-4 exactly, so digits = -log10(1e-4 / mean)."""
import csv
import io
import json
import math
import os
import re

from cmonlib import check, cmon, eq, read_text, target, tmpfile

FUNC = "compute_step"


def capture(name, args=(), env=None):
    e = dict(os.environ)
    e.update(env or {})
    code, out, err = cmon(["capture", "-q", "-o", tmpfile(name), "--func", FUNC,
                           "--capture", "v=vals[n]", "--", target("numeric")] + list(args),
                          env=e)
    eq(code, 0, "capture exit status (%s)" % err)
    check(out.startswith("numeric total="), out)
    return tmpfile(name)


def three_runs():
    # the third run's delta comes from the environment
    return [capture("a", ["0"]), capture("b", ["1e-4"]),
            capture("c", env={"CMON_NUMERIC_DELTA": "2e-4"})]


def digits(mean):
    return -math.log10(1e-4 / mean)


def test_stats_digits_of_perturbed_inputs():
    runs = three_runs()
    code, out, err = cmon(["stats", "-F", "json"] + runs)
    eq(code, 0, "exit status (%s)" % err)
    eq(err, "", "stderr")
    doc = json.loads(out)
    eq(doc["runs"], runs, "runs")
    eq(doc["mismatches"], [], "mismatches")
    rows = {(v["call"], v["value"]): v for v in doc["values"]}
    # s.tag is above INT64_MAX: the parser refused the whole of s (s.x,
    # s.f, s.n went with it); it is compared as a double
    names = ["s.x", "s.f", "s.n", "s.tag", "n", "return", "v[0]", "v[1]", "v[2]"]
    eq(sorted(rows), sorted((c, n) for c in (1, 2, 3) for n in names), "rows")
    for k in range(3):
        x = rows[(k + 1, "s.x")]
        eq(x["runs"], 3, "runs")
        check(abs(x["mean"] - (3 + k + 1e-4)) < 1e-12, "mean of s.x: %r" % x)
        check(abs(x["std"] - 1e-4) < 1e-12, "std of s.x: %r" % x)
        eq((x["min"], x["max"]), (3 + k, 3 + k + 2e-4), "min/max of s.x")
        check(abs(x["sig_digits"] - digits(3 + k + 1e-4)) < 1e-3,
              "digits of s.x call %d: %r" % (k + 1, x))
        v0 = rows[(k + 1, "v[0]")]
        eq(v0["type"], "<f8", "captured element dtype")
        check(abs(v0["sig_digits"] - digits(1.0001)) < 1e-3, "digits of v[0]: %r" % v0)
        for n, want in [("s.f", 0.5 + k), ("s.n", 10 * k), ("n", 3), ("return", 10 * k + 3),
                        ("v[1]", 2), ("v[2]", 4 * (k + 1))]:
            r = rows[(k + 1, n)]
            eq((r["sig_digits"], r["mean"], r["std"], r["runs"]), ("all", want, 0, 3),
               "call %d %s" % (k + 1, n))
        # s.tag differs by 1 and 2 between runs: compared exactly (by its
        # bits), not as doubles (equal: they said "all"), and its spread
        # computed exactly (as doubles: std 0, digits at the cap)
        t = rows[(k + 1, "s.tag")]
        eq(t["runs"], 3, "call %d s.tag" % (k + 1))
        top = 2 ** 64 - 1 - k
        eq((t["min"], t["max"], t["std"]), (top - 2, top, 1), "call %d s.tag, exactly" % (k + 1))
        check(abs(t["sig_digits"] - math.log10(top - 1)) < 1e-3,
              "s.tag's digits: -log10(1 / mean): %r" % t)
        check(abs(t["mean"] - float(2 ** 64 - 1 - k)) < 1e5, "s.tag's mean: %r" % t)
    eq(rows[(1, "n")]["type"], "int", "parameter type")


def test_stats_text_csv_and_output_file():
    runs = three_runs()
    code, out, err = cmon(["stats"] + runs)
    eq(code, 0, "exit status (%s)" % err)
    lines = out.splitlines()
    eq(lines[0], "3 runs: %s" % " ".join(runs), "first line")
    check(re.match(r"^function\s+call\s+value\s+runs\s+mean\s+std\s+min\s+max\s+digits$",
                   lines[1]), lines[1])
    row = [l.split() for l in lines if l.split()[:3] == [FUNC, "2", "s.x"]]
    eq(len(row), 1, "text row of call 2 s.x")
    eq(row[0][3:], ["3", "4.0001", "0.0001", "4", "4.0002", "%.2f" % digits(4.0001)], "text row")
    path = tmpfile("stats.csv")
    code, out, err = cmon(["stats", "-F", "csv", "-o", path] + runs)
    eq((code, out), (0, ""), "csv to a file (%s)" % err)
    rows = list(csv.DictReader(io.StringIO(read_text(path), newline="")))
    eq(len(rows), 27, "csv rows")
    eq(list(rows[0]), ["schema", "function", "process", "call", "value", "type", "runs", "mean",
                       "std", "min", "max", "sig_digits"], "csv header")
    eq({r["schema"] for r in rows}, {"1"}, "the schema column")
    x = [r for r in rows if r["call"] == "3" and r["value"] == "v[0]"][0]
    eq(x["sig_digits"], "%.2f" % digits(1.0001), "csv digits")


def test_stats_reports_different_call_counts():
    a = capture("a", ["0"])
    b = capture("b", ["1e-4", "2"])
    code, out, err = cmon(["stats", "-F", "json", a, b])
    eq(code, 0, "exit status (%s)" % err)
    doc = json.loads(out)
    eq(doc["mismatches"], ["%s: 3 calls in run %s, 2 in run %s" % (FUNC, a, b)], "mismatches")
    check("runs differ: %s: 3 calls" % FUNC in err, "warning on stderr: %r" % err)
    third = [v for v in doc["values"] if v["call"] == 3]
    check(third and all(v["runs"] == 1 and v["sig_digits"] is None for v in third),
          "call 3 only in one run: %r" % third[:2])


def test_stats_usage_errors():
    a = capture("a", ["0"])
    for args, status in [(["stats", a], 2), (["stats", "-F", "xml", a, a], 2),
                         (["stats", a, tmpfile("nope")], 1)]:
        code, out, err = cmon(args)
        eq(code, status, "exit status of %r" % args)
        eq(len(err.strip().splitlines()), 1, "one error line: %r" % err)


def test_stats_matches_calls_per_process():
    """tests/unit/store_fill.c's store has two processes: pid 100 (first
    call first: p1) calls parse_request twice, pid 200 (p2) once, and raw_fn."""
    from cmonlib import OUT, run
    runs = []
    for name in ("f1", "f2"):
        code, out, err = run([os.path.join(OUT, "tests", "store_fill"), tmpfile(name)])
        eq(code, 0, "store_fill (%s)" % err)
        runs.append(out.strip())
    code, out, err = cmon(["stats", "-F", "json"] + runs)
    eq(code, 0, "exit status (%s)" % err)
    doc = json.loads(out)
    got = sorted((v["function"], v["process"], v["call"], v["value"], v["mean"], v["runs"],
                  v["sig_digits"]) for v in doc["values"] if v["function"] in
                 ("parse_request", "raw_fn") and not v["value"].startswith("buf["))
    want = [("parse_request", 1, 1, "flags", -1, 2, "all"),
            ("parse_request", 1, 1, "len", 6, 2, "all"),
            ("parse_request", 1, 1, "return", 0, 2, "all"),
            ("parse_request", 1, 2, "flags", 0, 2, "all"),
            ("parse_request", 1, 2, "len", 3, 2, "all"),
            ("parse_request", 2, 1, "flags", 2147483647, 2, "all"),
            ("parse_request", 2, 1, "len", float(2**64 - 1), 2, "all"),  # a uint64 > INT64_MAX
            ("parse_request", 2, 1, "return", -22, 2, "all"),
            ("raw_fn", 2, 1, "arg0", 1, 2, "all"),
            ("raw_fn", 2, 1, "arg1", -7, 2, "all"),
            ("raw_fn", 2, 1, "return", 42, 2, "all")]
    eq(got, sorted(want), "values matched per process ordinal and call")
    bufs = [v for v in doc["values"] if v["value"].startswith("buf[")]
    eq(len(bufs), 6 + 8 + 13, "elements of the captured byte buffers")
    sums = [v for v in doc["values"] if v["function"] == "sum_array" and v["value"] == "values[1]"]
    eq([(v["call"], v["mean"], v["type"]) for v in sums], [(1, -2, "<i4"), (2, 8, "<i4")],
       "captured buffer elements")


def test_stats_reports_different_signatures():
    a = capture("a", ["0"])
    code, out, err = cmon(["capture", "-q", "--raw", "-o", tmpfile("raw"), "--func", FUNC, "--",
                           target("numeric"), "0"])
    eq(code, 0, "raw capture (%s)" % err)
    b = capture("b", ["1e-4"])
    # the third run differs: not compared in any run, not even a against b
    code, out, err = cmon(["stats", "-F", "json", a, b, tmpfile("raw")])
    eq(code, 0, "exit status (%s)" % err)
    doc = json.loads(out)
    eq(doc["mismatches"], ["%s: signature differs in run %s (left out)" % (FUNC, tmpfile("raw"))],
       "mismatches")
    eq(doc["values"], [], "a function whose signature differs is not compared")
    # a function missing from a run is reported and compared where it exists
    code, out, err = cmon(["capture", "-q", "-o", tmpfile("two"), "--func", FUNC, "--func",
                           "main", "--capture", "v=vals[n]", "--", target("numeric"), "0"])
    eq(code, 0, "capture with main (%s)" % err)
    code, out, err = cmon(["stats", "-F", "json", a, tmpfile("two")])
    doc = json.loads(out)
    eq(doc["mismatches"], ["main: not in run %s" % a], "mismatches")
    runs = {}
    for v in doc["values"]:
        runs.setdefault(v["function"], set()).add(v["runs"])
    eq(runs, {FUNC: {2}, "main": {1}}, "runs per function")
