"""CSV for plotting, as it is: a trace CSV loaded by pandas.read_csv with no
cleanup has integer columns of integers, strings as their own text, a
struct's members as columns of their own, "ret" as the function's type,
and no arg0..arg5 where DWARF gives the parameters (-o %f: a file per
function).  pandas is Debian's python3-pandas, run by the Python that has it."""
import glob
import json
import os
import subprocess
import sys

from cmonlib import LONG_COLUMNS, Skip, check, cmon, eq, target, tmpfile

LOAD = r"""
import json, sys
import pandas as pd
out = {}
for path in sys.argv[1:]:
    df = pd.read_csv(path)
    out[path] = {"dtypes": {c: str(t) for c, t in df.dtypes.items()},
                 "rows": json.loads(df.to_json(orient="records"))}
print(json.dumps(out))
"""


def _pandas_python():
    for py in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(py) and subprocess.run([py, "-c", "import pandas"],
                                                 capture_output=True).returncode == 0:
            return py
    raise Skip("pandas is not installed (python3-pandas)")


def _load(paths):
    p = subprocess.run([_pandas_python(), "-c", LOAD] + list(paths), capture_output=True,
                       text=True, timeout=120)
    eq(p.returncode, 0, "pandas.read_csv (%s)" % p.stderr[-500:])
    return json.loads(p.stdout)


def test_csv_per_function_loads_typed():
    py = _pandas_python()
    folder = os.path.dirname(tmpfile("x"))
    for old in glob.glob(os.path.join(folder, "pd.*.csv")):
        os.unlink(old)
    code, _, err = cmon(["trace", "-q", "-F", "csv", "-o", os.path.join(folder, "pd.%f.csv"),
                         "--func", "eight", "--func", "chars", "--func", "greet",
                         "--func", "move_pt", "--func", "make_pt", "--",
                         target("typed_O2"), "all"])
    eq((code, err), (0, ""), "exit status and stderr")
    files = {os.path.basename(p).split(".")[1]: p
             for p in glob.glob(os.path.join(folder, "pd.*.csv"))}
    eq(sorted(files), ["chars", "eight", "greet", "make_pt", "move_pt"], "a file per function")
    got = _load(files.values())
    t = {f: got[p]["dtypes"] for f, p in files.items()}
    row = {f: got[p]["rows"] for f, p in files.items()}
    fixed = {"ts_ns": "int64", "pid": "int64", "tid": "int64", "comm": "object",
             "func": "object", "depth": "int64", "latency_ns": "int64", "rss_entry": "int64",
             "status": "object"}
    for f in files:
        eq({c: t[f][c] for c in fixed}, fixed, "%s: the fixed columns' dtypes" % f)
        check(not any(c.startswith("arg") and c[3:].isdigit() for c in t[f]),
              "%s: no register columns: %r" % (f, list(t[f])))
    # integers of every width and sign, ret as the function's (long) type
    eq({c: t["eight"][c] for c in ("args.a", "args.b", "args.h", "ret")},
       {"args.a": "int64", "args.b": "int64", "args.h": "int64", "ret": "int64"}, "eight")
    eq([(r["args.b"], r["args.h"], r["ret"]) for r in row["eight"]],
       [(-2, 4886718345, 4886718335)], "eight's values")
    # strings plain, bools as bools, an enumerator by name
    eq((t["chars"]["args.t"], t["chars"]["args.f"], t["chars"]["args.c"]),
       ("bool", "bool", "object"), "chars dtypes")
    eq([(r["args.c"], r["args.hi"], r["args.t"], r["args.col"]) for r in row["chars"]],
       [("a", "\u00ff", True, "GREEN")], "chars values")
    eq([(r["args.s"], r["args.none"]) for r in row["greet"]], [('hi "q"\n\u00e9\u00ff', None)],
       "greet: a string with quotes and a line end, as it is; NULL empty")
    # a struct's members, through a pointer and returned, columns of their own
    eq((t["move_pt"]["args.p.x"], t["move_pt"]["args.dx"]), ("int64", "int64"), "move_pt")
    eq([(r["args.p.x"], r["args.p.y"], r["args.dx"]) for r in row["move_pt"]],
       [(1, -42, 3)], "move_pt's point")
    eq([(r["ret.x"], r["ret.y"]) for r in row["make_pt"]], [(42, -42)],
       "make_pt's returned struct")


def test_csv_long_shape_loads():
    """Functions with other columns in one table: a row per value, whose
    call numbers and fixed columns stay integers."""
    path = tmpfile("pd-long.csv")
    code, _, err = cmon(["trace", "-q", "-F", "csv", "-o", path, "--func", "eight",
                         "--func", "greet", "--", target("typed_O2"), "all"])
    eq((code, err), (0, ""), "exit status and stderr")
    got = _load([path])[path]
    eq(list(got["dtypes"]), LONG_COLUMNS, "the long shape's columns")
    eq({c: got["dtypes"][c] for c in ("call", "ts_ns", "pid", "latency_ns")},
       {"call": "int64", "ts_ns": "int64", "pid": "int64", "latency_ns": "int64"}, "dtypes")
    eq(sorted((r["func"], r["name"]) for r in got["rows"] if r["func"] == "greet"),
       [("greet", "args.none"), ("greet", "args.s"), ("greet", "ret")], "greet's values")


def test_export_csv_is_trace_csv():
    """`export -F csv` of a store writes trace -F csv's table (-o 'x.%f.csv'):
    the same columns in the same order (args.NAME, a struct's members
    args.o.in.x, comm and func; it said n, arg_n, o as JSON), then "call",
    the call's number in the store; the same cells and pandas dtypes for
    the same calls."""
    _pandas_python()
    funcs = ["eight", "chars", "greet", "nested", "paint"]
    fargs = [a for f in funcs for a in ("--func", f)]
    folder = os.path.dirname(tmpfile("x"))
    for old in glob.glob(os.path.join(folder, "same.*.csv")):
        os.unlink(old)
    code, _, err = cmon(["trace", "-q", "-F", "csv", "-o", os.path.join(folder, "same.%f.csv")]
                        + fargs + ["--", target("typed_O2"), "all"])
    eq((code, err), (0, ""), "trace: exit status and stderr")
    store, out = tmpfile("same-store"), tmpfile("same-export")
    code, _, err = cmon(["capture", "-q", "-o", store] + fargs + ["--", target("typed_O2"), "all"])
    eq(code, 0, "capture (%s)" % err)
    code, _, err = cmon(["export", store, "-F", "csv", "-o", out])
    eq(code, 0, "export (%s)" % err)
    traced = {f: os.path.join(folder, "same.%s.csv" % f) for f in funcs}
    exported = {f: os.path.join(out, f + ".csv") for f in funcs}
    got = _load(list(traced.values()) + list(exported.values()))
    per_run = ("ts_ns", "pid", "tid", "latency_ns", "latency_lt_ns", "rss_entry", "rss_exit",
               "vms_entry", "vms_exit", "depth")
    for f in funcs:
        t, e = got[traced[f]], got[exported[f]]
        eq(list(e["dtypes"]), list(t["dtypes"]) + ["call"], "%s: the columns" % f)
        eq({c: d for c, d in e["dtypes"].items() if c not in per_run + ("call",)},
           {c: d for c, d in t["dtypes"].items() if c not in per_run}, "%s: the dtypes" % f)
        eq([{c: v for c, v in r.items() if c not in per_run + ("call",)} for r in e["rows"]],
           [{c: v for c, v in r.items() if c not in per_run} for r in t["rows"]],
           "%s: the cells" % f)
        eq([r["call"] for r in e["rows"]], list(range(1, len(e["rows"]) + 1)), "%s: call" % f)
    eq([r["args.o.in.y"] for r in got[exported["nested"]]["rows"]], [40000], "a member's column")
