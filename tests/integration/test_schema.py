"""The schema version in the files cmon writes (docs/cmon-output.md,
Schema): a first column / key "schema" = 1 in trace, export and profile CSV
and JSON Lines, which pandas loads as it is (an int64 column, every other
column keeping its dtype); every reader of cmon's files (export, report)
reads files with it and without it (written before versions), and refuses
a newer one in one line."""
import csv
import json
import os
import subprocess

from cmonlib import cmon, eq, read_text, target, tmpfile
from test_csv import _pandas_python

LOAD = r"""
import json, sys
import pandas as pd
out = {}
for path in sys.argv[1:]:
    df = pd.read_json(path, lines=True) if path.endswith("l") else pd.read_csv(path)
    out[path] = {"columns": list(df.columns), "schema": str(df["schema"].dtype),
                 "values": sorted(set(int(v) for v in df["schema"])),
                 "dtypes": {c: str(t) for c, t in df.dtypes.items()}}
print(json.dumps(out))
"""


def _files():
    """{kind: path} of every kind of file: trace CSV (wide, long), trace
    JSON Lines, export CSV and JSON Lines of a store, profile CSV and JSON."""
    prog = [target("typed_O2"), "all"]
    funcs = ["--func", "eight", "--func", "greet"]
    out = {}
    for kind, fmt, extra in (("trace-wide.csv", "csv", ["--func", "eight"]),
                             ("trace-long.csv", "csv", funcs),
                             ("trace.jsonl", "json", funcs)):
        out[kind] = tmpfile("schema-" + kind)
        code, _, err = cmon(["trace", "-q", "-F", fmt, "-o", out[kind]] + extra + ["--"] + prog)
        eq((code, err), (0, ""), "trace %s" % kind)
    for kind, fmt in (("profile.csv", "csv"), ("profile.jsonl", "json")):
        out[kind] = tmpfile("schema-" + kind)
        code, _, err = cmon(["profile", "-q", "-F", fmt, "-o", out[kind]] + funcs + ["--"] + prog)
        eq((code, err), (0, ""), "profile %s" % kind)
    store = tmpfile("schema-store")
    code, _, err = cmon(["capture", "-q", "-o", store] + funcs + ["--"] + prog)
    eq(code, 0, "capture (%s)" % err)
    for fmt, suffix in (("csv", "csv"), ("json", "jsonl")):
        folder = tmpfile("schema-export-" + fmt)
        code, _, err = cmon(["export", store, "-F", fmt, "-o", folder])
        eq(code, 0, "export -F %s (%s)" % (fmt, err))
        out["export." + suffix] = os.path.join(folder, "eight." + suffix)
    return out


def test_schema_in_every_file_pandas_reads_it():
    py = _pandas_python()
    files = _files()
    for kind, path in files.items():
        text = read_text(path)
        first = "schema," if kind.endswith(".csv") else '{"schema":1,'
        eq(text[:len(first)], first, "%s: the version first" % kind)
    p = subprocess.run([py, "-c", LOAD] + list(files.values()), capture_output=True, text=True,
                       timeout=120)
    eq(p.returncode, 0, "pandas (%s)" % p.stderr[-500:])
    got = json.loads(p.stdout)
    for kind, path in files.items():
        eq((got[path]["columns"][0], got[path]["schema"], got[path]["values"]),
           ("schema", "int64", [1]), "%s: schema, an integer column of 1" % kind)
    # the other columns keep their dtypes (test_csv checks them without it)
    wide = got[files["trace-wide.csv"]]["dtypes"]
    eq({c: wide[c] for c in ("ts_ns", "pid", "func", "depth", "args.b", "args.h", "ret")},
       {"ts_ns": "int64", "pid": "int64", "func": "object", "depth": "int64",
        "args.b": "int64", "args.h": "int64", "ret": "int64"}, "trace CSV dtypes")
    prof = got[files["profile.csv"]]["dtypes"]
    eq({c: prof[c] for c in ("report", "func", "calls", "p50_ns")},
       {"report": "int64", "func": "object", "calls": "int64", "p50_ns": "int64"},
       "profile CSV dtypes")


def _rewritten(path, out, first):
    """PATH with its first CSV column (or its "schema":1 key) made FIRST(row
    number, cells or key text): None drops it."""
    if path.endswith(".csv"):
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        with open(out, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\r\n")
            for i, r in enumerate(rows):
                v = first(i, r[0])
                w.writerow(r[1:] if v is None else [v] + r[1:])
    else:
        with open(out, "w") as f:
            for l in read_text(path).splitlines(True):
                v = first(1, '"schema":1')
                f.write(l.replace('{"schema":1,', "{" if v is None else "{%s," % v, 1))
    return out


def _without_schema(path, out):
    """PATH as a file written before versions: no schema column / key."""
    return _rewritten(path, out, lambda i, v: None)


def _with_schema(path, out, v):
    return _rewritten(path, out, lambda i, old: old if i == 0 else
                      ('"schema":%s' % v if old.startswith('"') else str(v)))


def test_schema_readers_take_old_files_and_refuse_newer():
    files = _files()
    for kind in ("trace-wide.csv", "trace-long.csv", "trace.jsonl"):
        path = files[kind]
        code, tree, err = cmon(["export", path, "-F", "tree"])
        eq((code, err), (0, "cmon: exported %s to stdout\n"
                         % ("1 call" if kind == "trace-wide.csv" else "2 calls")), "export %s" % kind)
        old = _without_schema(path, tmpfile("schema-old-" + kind))
        eq(cmon(["export", old, "-F", "tree"]), (0, tree, err), "%s without schema" % kind)
        newer = _with_schema(path, tmpfile("schema-99-" + kind), 99)
        eq(cmon(["export", newer, "-F", "tree"]),
           (1, "", "cmon: export: %s: schema 99, newer than this cmon reads (1): read it "
            "with a newer cmon\n" % newer), "export of %s, schema 99" % kind)
        bad = _with_schema(path, tmpfile("schema-x-" + kind), '"1"' if "json" in kind else "x")
        code, out, err = cmon(["export", bad, "-F", "tree"])
        eq((code, out), (1, ""), "export of %s, a schema that is not a number" % kind)
        eq(err.count("\n"), 1, "one line: %r" % err)
    for kind in ("trace-wide.csv", "trace.jsonl", "profile.csv", "profile.jsonl"):
        path = files[kind]
        html = tmpfile("schema-report.html")
        code, _, err = cmon(["report", path, "-o", html])
        eq((code, err), (0, "cmon: report of 1 source written to %s\n" % html), "report %s" % kind)
        old = _without_schema(path, tmpfile("schema-old-" + kind))
        code, _, err = cmon(["report", old, "-o", html])
        eq((code, err), (0, "cmon: report of 1 source written to %s\n" % html),
           "report of %s without schema" % kind)
        newer = _with_schema(path, tmpfile("schema-99-" + kind), 99)
        eq(cmon(["report", newer, "-o", html]),
           (1, "", "cmon: report: %s: schema 99, newer than this cmon reads (1): read it "
            "with a newer cmon\n" % newer), "report of %s, schema 99" % kind)
    # a newer file whose columns this cmon does not know: refused as newer
    odd = tmpfile("schema-odd.csv")
    with open(odd, "w") as f:
        f.write("schema,when,what\r\n2,1,f\r\n")
    for cmd in (["export", odd, "-F", "tree"], ["report", odd, "-o", tmpfile("o.html")]):
        eq(cmon(cmd), (1, "", "cmon: %s: %s: schema 2, newer than this cmon reads (1): read it "
                       "with a newer cmon\n" % (cmd[0], odd)), "%s of a newer layout" % cmd[0])
