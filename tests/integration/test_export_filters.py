"""cmon export re-viewing a recording with filters: --func, --since/--until
and --if over a capture store, a JSON Lines trace and trace CSVs (long and
wide) of the same program
(fact(5) recursing, then outer(10) -> middle -> leaf), each asserting the
exact calls kept."""
import csv
import io
import json
import os
import re

from cmonlib import check, eq, target, trace
from test_views import RECURSE_FUNCS, RECURSE_TREE, parse_tree


def _trace_csv(funcs, launch, extra, name):
    """`cmon trace -F csv -o FILE` (cmonlib.trace checks the wide header):
    FILE and its text."""
    from cmonlib import cmon, funcs_args, read_text, tmpfile
    path = tmpfile(name)
    code, out, err = cmon(["trace", "-q", "-F", "csv", "-o", path] + funcs_args(funcs)
                          + list(extra) + ["--"] + launch)
    eq((code, err), (0, ""), "trace -F csv %s" % extra)
    return path, read_text(path)


def _recordings():
    """{kind: path} of the recurse run recorded as a store and as JSON Lines,
    and {kind: [(func, ts_ns)]} of their calls in entry order."""
    from cmonlib import cmon, funcs_args, read_text, tmpfile
    code, out, err = cmon(["capture", "--raw-latency", "-o", tmpfile("filters-run")]
                          + funcs_args(RECURSE_FUNCS) + ["--", target(), "recurse"])
    eq(code, 0, "capture exit status (%s)" % err)
    store = re.search(r"^cmon: capturing to (.+)$", err, re.M).group(1)
    r = trace(RECURSE_FUNCS, [target(), "recurse"], fmt="json", extra=["--raw-latency"])
    eq(r.code, 0, "trace exit status (%s)" % r.stderr)
    jsonl = tmpfile("filters.jsonl")
    with open(jsonl, "w") as f:
        f.write(r.text)
    times = {"jsonl": sorted((json.loads(l)["ts_ns"], json.loads(l)["func"])
                             for l in r.text.splitlines())}
    paths = {"store": store, "jsonl": jsonl}
    for kind, shape in (("csv-long", "long"), ("csv-wide", "wide")):
        paths[kind], text = _trace_csv(RECURSE_FUNCS, [target(), "recurse"],
                                       ["--raw-latency", "--csv", shape],
                                       "filters-%s.csv" % shape)
        times[kind] = sorted(set((int(row["ts_ns"]), row["func"])
                                 for row in csv.DictReader(io.StringIO(text))))
    tables = tmpfile("filters-tables")
    code, out, err = cmon(["export", store, "-F", "json", "-o", tables])
    eq(code, 0, "export -F json (%s)" % err)
    rows = []
    for f in RECURSE_FUNCS:
        for l in read_text("%s/%s.jsonl" % (tables, f)).splitlines():
            rows.append((json.loads(l)["ts_ns"], f))
    times["store"] = sorted(rows)
    return paths, times


def _tree(path, extra):
    from cmonlib import cmon
    code, out, err = cmon(["export", path, "-F", "tree"] + list(extra))
    eq(code, 0, "export %s (%s)" % (extra, err))
    calls = [(c["depth"], c["func"], c["args"], c["ret"]) for c in parse_tree(out)]
    eq(err, "cmon: exported %d call%s to stdout\n" % (len(calls), "" if len(calls) == 1 else "s"),
       "export %s: stderr" % extra)
    return calls


def _kept(*idx, depths=None):
    """RECURSE_TREE's calls IDX, at DEPTHS (a filtered tree nests the kept
    calls only)."""
    out = [RECURSE_TREE[i] for i in idx]
    if depths is not None:
        out = [(d,) + c[1:] for d, c in zip(depths, out)]
    return out


def test_export_func_filter_every_input():
    paths, _ = _recordings()
    eq(sorted(paths), ["csv-long", "csv-wide", "jsonl", "store"], "the inputs")
    for kind, path in paths.items():
        eq(_tree(path, []), RECURSE_TREE, "%s unfiltered" % kind)
        eq(_tree(path, ["--func", "fact"]), _kept(0, 1, 2, 3, 4), "%s --func fact" % kind)
        eq(_tree(path, ["--func", "*e*"]), _kept(5, 6, 7, depths=[0, 1, 2]),
           "%s --func '*e*'" % kind)
        eq(_tree(path, ["--func", "!fact"]), _kept(5, 6, 7), "%s --func '!fact'" % kind)
        eq(_tree(path, ["--func", "fact", "--func", "leaf"]),
           _kept(0, 1, 2, 3, 4, 7, depths=[0, 1, 2, 3, 4, 0]), "%s two --func" % kind)
        eq(_tree(path, ["--func", "nothing_*"]), [], "%s no function matches" % kind)


def test_export_if_filter_every_input():
    paths, _ = _recordings()
    for kind, path in paths.items():
        eq(_tree(path, ["--if", "n <= 2"]), _kept(3, 4, depths=[0, 1]), "%s n <= 2" % kind)
        eq(_tree(path, ["--if", "ret > 20"]), _kept(0, 1, 5, 6, depths=[0, 1, 0, 1]),
           "%s ret > 20" % kind)
        eq(_tree(path, ["--if", "x == 10 && ret == 11"]), _kept(7, depths=[0]),
           "%s x == 10 && ret == 11" % kind)
        eq(_tree(path, ["--if", "!(n == 5) && latency_ns > 0"]), _kept(1, 2, 3, 4, depths=[0, 1, 2, 3]),
           "%s a name fact alone has" % kind)
        eq(_tree(path, ["--if", "n == 3 || x == 10"]), _kept(2, 5, 6, 7, depths=[0, 0, 1, 2]),
           "%s n == 3 || x == 10" % kind)
        eq(_tree(path, ["--func", "fact", "--if", "ret == 24 || ret == 1"]),
           _kept(1, 4, depths=[0, 1]), "%s --func and --if" % kind)


def test_export_time_range_every_input():
    paths, times = _recordings()
    for kind, path in paths.items():
        ts = times[kind]
        eq([f for _, f in ts], ["fact"] * 5 + ["outer", "middle", "leaf"], "%s entry order" % kind)
        outer = ts[5][0]
        rel = "%.9f" % ((outer - ts[0][0]) / 1e9)
        eq(_tree(path, ["--since", rel]), _kept(5, 6, 7), "%s --since %s" % (kind, rel))
        eq(_tree(path, ["--until", rel]), _kept(0, 1, 2, 3, 4), "%s --until %s" % (kind, rel))
        eq(_tree(path, ["--since", "@%d" % ts[1][0], "--until", "@%d" % ts[7][0]]),
           _kept(1, 2, 3, 4, 5, 6, depths=[0, 1, 2, 3, 0, 1]), "%s absolute range" % kind)
        eq(_tree(path, ["--since", "0", "--until", "0"]), [], "%s an empty range" % kind)
        eq(_tree(path, ["--since", "0"]), RECURSE_TREE, "%s --since 0" % kind)


def test_export_filter_bad_values():
    from cmonlib import cmon, tmpfile
    paths, _ = _recordings()
    for kind, path in paths.items():
        for extra, msg in [
                (["--if", "n <"], "cmon: export: --if: expected a value, found the end at column 4: n <\n"),
                (["--if", "n == 1", "--if", "n == 2"],
                 "cmon: export: give --if once (join conditions with &&)\n"),
                (["--since", "soon"], "cmon: export: --since takes seconds after the first "
                 "call (1.5) or @TS_NS, not 'soon'\n"),
                (["--until", "@-5"], "cmon: export: --until takes seconds after the first "
                 "call (1.5) or @TS_NS, not '@-5'\n"),
                (["--since", "-1"], "cmon: export: --since takes seconds after the first "
                 "call (1.5) or @TS_NS, not '-1'\n")]:
            code, out, err = cmon(["export", path, "-F", "tree"] + extra)
            eq((code, out, err), (2, "", msg), "%s %s" % (kind, extra))
    code, out, err = cmon(["export", paths["store"], "--per-call", tmpfile("pc"), "--func", "fact"])
    eq((code, err), (2, "cmon: export: --func, --since, --until and --if choose the calls of "
                        "-F FMT, not of --per-call\n"), "a filter on --per-call")


def _table_rows(folder, fmt):
    """{func: [(n or x, retval)]} of the tables `export -F FMT` wrote to
    FOLDER (index.json names them), and the index's (name, calls)."""
    with open(os.path.join(folder, "index.json")) as f:
        index = json.load(f)
    out = {}
    for e in index["functions"]:
        with open(os.path.join(folder, e["path"]), newline="") as f:
            if fmt == "csv":
                rows = list(csv.DictReader(f))
                eq({r["schema"] for r in rows}, {"1"}, "%s: schema" % e["path"])
                got = [(int(r.get("args.n") or r.get("args.x")), int(r["ret"]), r["status"])
                       for r in rows]
            else:
                rows = [json.loads(l) for l in f]
                eq({r["schema"] for r in rows}, {1}, "%s: schema" % e["path"])
                got = [(list(r["args"].values())[0], r["retval"], r["status"]) for r in rows]
        out[e["name"]] = sorted(got)
    return out, [(e["name"], e["calls"]) for e in index["functions"]]


def test_export_tables_of_every_input_filtered():
    """`export -F csv|json` of a store, a JSON Lines trace and trace CSVs
    (long and wide), --func, --if and --since applied: a table per function
    kept, with exactly the calls kept (they were refused for a trace file,
    and a filter refused for every input)."""
    from cmonlib import cmon, tmpfile
    paths, times = _recordings()
    for kind, path in paths.items():
        ts = times[kind]
        rel = "%.9f" % ((ts[5][0] - ts[0][0]) / 1e9)  # outer's entry
        for fmt in ("csv", "json"):
            folder = tmpfile("tables-%s-%s" % (kind, fmt))
            code, _, err = cmon(["export", path, "-F", fmt, "-o", folder, "--func", "fact",
                                 "--if", "n <= 2 || ret == 120"])
            eq((code, err), (0, "cmon: exported 3 calls of 1 function to %s\n" % folder),
               "%s -F %s --func --if" % (kind, fmt))
            eq(_table_rows(folder, fmt), ({"fact": [(1, 1, "ok"), (2, 2, "ok"), (5, 120, "ok")]},
                                          [("fact", 3)]), "%s -F %s: fact's calls kept" % (kind, fmt))
            folder = tmpfile("tables-since-%s-%s" % (kind, fmt))
            code, _, err = cmon(["export", path, "-F", fmt, "-o", folder, "--since", rel])
            eq((code, err), (0, "cmon: exported 3 calls of 3 functions to %s\n" % folder),
               "%s -F %s --since" % (kind, fmt))
            rows, index = _table_rows(folder, fmt)
            eq(rows, {"outer": [(10, 25, "ok")], "middle": [(10, 22, "ok")],
                      "leaf": [(10, 11, "ok")]}, "%s -F %s --since: the calls" % (kind, fmt))
            eq(sorted(index), [("leaf", 1), ("middle", 1), ("outer", 1)],
               "%s -F %s --since: the index" % (kind, fmt))


def test_export_reads_a_trace_csv():
    """A CSV of `trace -F csv` is export input as JSON Lines is: typed values
    (a string with quotes and a line end, bools, an enumerator), the same
    view as the JSON Lines of the same run gives; a CSV that is not cmon's
    and a record that is not a call are one error line."""
    from cmonlib import cmon, tmpfile
    funcs = ["eight", "greet", "chars"]
    path, _ = _trace_csv(funcs, [target("typed_O2"), "all"], [], "typed.csv")
    calls = _tree(path, [])
    eq([(c[1], c[2], c[3]) for c in calls],
       [("chars", 'c="a", f=false, hi="\u00ff", t=true, col="GREEN"', "98"),
        ("greet", 's="hi \\"q\\"\\n\u00e9\u00ff"', "10"),
        ("eight", "a=1, b=-2, c=3, d=-4, e=5, f=-6, g=-7, h=4886718345", "4886718335")],
       "the calls of a trace CSV")
    eq([c[1] for c in _tree(path, ["--if", 'col == "GREEN" && t && !f'])], ["chars"],
       "--if over strings and bools")
    eq([c[1] for c in _tree(path, ["--if", "h == 4886718345 && b < 0"])], ["eight"],
       "--if over integers")
    eq([c[1] for c in _tree(path, ["--if", "s != 0"])], ["greet"], "a string is a set pointer")
    # the JSON Lines of the same calls: a string holding a NUL reads too
    r = trace(funcs, [target("typed_O2"), "all"], fmt="json")
    eq(r.code, 0, "trace -F json (%s)" % r.stderr)
    jsonl = tmpfile("typed.jsonl")
    with open(jsonl, "w") as f:
        f.write(r.text)
    eq([c[2] for c in _tree(jsonl, ["--func", "chars"])],
       ['c="a", nul="\\u0000", hi="\u00ff", t=true, f=false, col="GREEN"'],
       "chars from JSON Lines")
    for text, msg in [
            ("a,b\n1,2\n", "not a trace CSV of `cmon trace -F csv` (its header needs ts_ns, "
                            "tid and func)"),
            ("", "not a trace CSV of `cmon trace -F csv` (its header needs ts_ns, tid and func)"),
            ("ts_ns,tid,func\n1,2,f\nsoon,2,f\n",
             "record 3 is not a call of `cmon trace -F csv`"),
            ("ts_ns,tid,func\n1,2\n", "record 2 is not a call of `cmon trace -F csv`"),
            ('ts_ns,tid,func\n1,2,"f\n', "record 2 is not a call of `cmon trace -F csv`")]:
        bad = tmpfile("bad.csv")
        with open(bad, "w") as f:
            f.write(text)
        code, out, err = cmon(["export", bad, "-F", "tree"])
        eq((code, out, err), (1, "", "cmon: export: %s: %s\n" % (bad, msg)), "CSV %r" % text)


def test_export_text_view_filtered():
    """-F text: the calls as trace's text table, from every input, filtered
    (a kept call indented by the kept calls it is in)."""
    from cmonlib import cmon
    paths, _ = _recordings()
    for kind, path in paths.items():
        code, out, err = cmon(["export", path, "-F", "text", "--func", "!fact", "--if", "ret >= 22"])
        eq((code, err), (0, "cmon: exported 2 calls to stdout\n"), "%s -F text" % kind)
        lines = out.splitlines()
        eq(lines[0].split(), ["TIME", "PID/TID", "LATENCY", "dRSS", "CALL"], "%s header" % kind)
        eq([l.split(None, 4)[4] for l in lines[1:]], ["outer(x=10) = 25", "middle(x=10) = 22"],
           "%s calls" % kind)
        check(re.search(r"\S outer\(", lines[1]) and re.search(r"\S   middle\(", lines[2]),
              "%s: middle indented under outer:\n%s" % (kind, out))


def test_export_raw_csv_registers():
    """A trace CSV of --raw calls (arg0..arg5, no DWARF names), wide and
    long: the registers and the return as JSON Lines give them, --if over
    arg0..arg5."""
    from cmonlib import cmon
    for shape in ("wide", "long"):
        path, _ = _trace_csv(["fact", "leaf"], [target(), "recurse"],
                             ["--raw", "--csv", shape], "raw-%s.csv" % shape)
        code, out, err = cmon(["export", path, "-F", "tree", "--if", "arg0 == 3 || arg0 == 10"])
        eq((code, err), (0, "cmon: exported 2 calls to stdout\n"), "%s: --if arg0" % shape)
        calls = [(c["func"], c["args"].split(",")[0], c["ret"]) for c in parse_tree(out)]
        eq(calls, [("fact", "3", "6"), ("leaf", "10", "11")], "%s: the calls\n%s" % (shape, out))


def test_trace_csv_captures_round_trip():
    """A trace CSV whose captured string holds a line end, a comma and
    quotes (and whose s parameter a line end): export reads the captures.*,
    truncated and faults columns (it skipped them) into -F json, -F csv and
    the views, and the report reads the CSV with the same reader (its own
    split lines and lost the call at the quoted line end)."""
    from cmonlib import cmon, tmpfile
    from test_report import page_data
    src, _ = _trace_csv(["greet"], [target("typed_O2"), "all"],
                        ["--capture", "t=s:str", "--strlen", "4"], "caps-src.csv")
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    eq(len(rows), 2, "one call of greet")
    cap = 'a,b "q"\nline2'
    rows[1][head.index("captures.t")] = cap  # the string a program could have held
    path = tmpfile("caps.csv")
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\r\n").writerows(rows)
    want = {"s": rows[1][head.index("args.s")], "t": cap,
            "truncated": rows[1][head.index("truncated")]}
    eq(want["truncated"], "s", "--strlen 4 cut s")
    folder = tmpfile("caps-json")
    code, _, err = cmon(["export", path, "-F", "json", "-o", folder])
    eq((code, err), (0, "cmon: exported 1 call of 1 function to %s\n" % folder), "export -F json")
    rec = json.loads(read_text_(os.path.join(folder, "greet.jsonl")))
    eq((rec["args"]["s"], rec["captures"], rec["truncated"], rec["retval"]),
       (want["s"], {"t": cap}, ["s"], 10), "the JSON line")
    folder = tmpfile("caps-csv")
    code, _, err = cmon(["export", path, "-F", "csv", "-o", folder])
    eq((code, err), (0, "cmon: exported 1 call of 1 function to %s\n" % folder), "export -F csv")
    with open(os.path.join(folder, "greet.csv"), newline="") as f:
        (out,) = list(csv.DictReader(f))
    eq((out["args.s"], out["captures.t"], out["truncated"], out["ret"]),
       (want["s"], cap, "s", "10"), "the CSV row")
    code, tree, err = cmon(["export", path, "-F", "tree"])
    eq(code, 0, "export -F tree (%s)" % err)
    check('captures={"t":"a,b \\"q\\"\\nline2"} truncated=["s"]' in tree, tree)
    page = tmpfile("caps.html")
    code, _, err = cmon(["report", path, "-o", page])
    eq((code, err), (0, "cmon: report of 1 source written to %s\n" % page), "report")
    d = page_data(page)
    eq([(s["kind"], s["items"]) for s in d["sources"]], [("trace CSV", 1)], "the report's source")
    eq([(r["func"], r["calls"]) for r in d["trace"]["table"]], [("greet", 1)], "the report's table")
    # a trace killed while writing a record: the report leaves that record out
    cut = tmpfile("caps-cut.csv")
    text = read_text_(path)
    with open(cut, "w", newline="") as f:
        f.write(text + text[text.index("\r\n") + 2:][:60])
    code, _, err = cmon(["report", cut, "-o", page])
    eq((code, err), (0, "cmon: report of 1 source written to %s\n" % page), "report of a cut CSV")
    eq([(s["kind"], s["items"]) for s in page_data(page)["sources"]], [("trace CSV", 1)],
       "the cut record left out")


def read_text_(path):
    with open(path, newline="") as f:  # CSV: its CRLF kept
        return f.read()
