"""`cmon capture` end to end on tests/targets/typed.c (-O2): capture into a
store, then read it back with `cmon ls`, `cmon show` and `cmon export`."""
import csv
import io
import json
import os
import re
import signal
import socket
import stat
import struct
import time

from cmonlib import (HANG, Background, Skip, check, cmon, eq, funcs_args, run, stderr_lines, target,
                     tmpfile)

BINARY = "typed_O2"
PYTHON = "/usr/bin/python3"
FUNCS = ["sum_ints", "greet", "nested", "sum_buf", "wides", "chars", "make_pt"]
CAPTURES = ["--capture", "v=values[n]", "--capture", "data=buf:len"]
BUF13 = bytes([0x68, 0x69, 0x0a, 0x00, 0xff, 1, 2, 3, 4, 5, 6, 7, 0x80])
V1 = [1, -2, 3, 40000, -5]
V2 = [7, 8, 9]
NESTED_O = {"id": 7, "in": {"x": -3, "y": 40000}, "name": "outer-name",
            "vals": [1, -2, 3, 2147483647]}
SIGNATURES = {
    "sum_ints": ("long int", [("values", "const int32_t *"), ("n", "int")]),
    "greet": ("size_t", [("s", "const char *"), ("none", "const char *")]),
    "nested": ("long int", [("o", "const struct outer *")]),
    "sum_buf": ("long int", [("buf", "const uint8_t *"), ("len", "size_t")]),
    "wides": ("long int", [("i64", "int64_t"), ("u64", "uint64_t"), ("neg", "int32_t"),
                           ("max", "int64_t")]),
    "chars": ("int", [("c", "char"), ("nul", "char"), ("hi", "char"), ("t", "_Bool"),
                      ("f", "_Bool"), ("col", "enum color")]),
    "make_pt": ("struct pt", [("x", "long int"), ("y", "long int")]),
}
CALLS = {"sum_ints": 2, "greet": 1, "nested": 1, "sum_buf": 1, "wides": 1, "chars": 1,
         "make_pt": 1}


def capture(out, funcs=FUNCS, extra=CAPTURES, args=("all",)):
    """`cmon capture ... -o OUT -- typed_O2 ARGS`: the store folder it names."""
    cmd = ["capture", "-o", out] + funcs_args(funcs) + list(extra)
    code, stdout, err = cmon(cmd + ["--", target(BINARY)] + list(args))
    eq(code, 0, "cmon %s: exit status (%s)" % (" ".join(cmd), err.strip()))
    check(stdout.startswith("all total="), "program output: %r" % stdout)
    m = re.search(r"^cmon: capturing to (.+)$", err, re.M)
    check(m, "no 'capturing to' line in %r" % err)
    check("events lost: 0" in err, "events lost: %r" % err)
    return m.group(1)


def show(path, func, n):
    code, out, err = cmon(["show", path, func, str(n)])
    eq(code, 0, "cmon show %s %d (%s)" % (func, n, err.strip()))
    return out.splitlines()


def has_lines(lines, wants, what):
    for w in wants:
        if isinstance(w, re.Pattern):
            check(any(w.match(l) for l in lines), "%s: no line matching %r in:\n%s"
                  % (what, w.pattern, "\n".join(lines)))
        else:
            check(w in lines, "%s: %r not in:\n%s" % (what, w, "\n".join(lines)))


def walk_modes(top):
    for d, dirs, files in os.walk(top):
        eq(stat.S_IMODE(os.lstat(d).st_mode), 0o700, "mode of folder %s" % d)
        for fn in files:
            p = os.path.join(d, fn)
            eq(stat.S_IMODE(os.lstat(p).st_mode), 0o600, "mode of file %s" % p)


def test_capture_roundtrip():
    store = capture(tmpfile("run"))
    eq(store, tmpfile("run"), "store folder")
    walk_modes(store)
    eq(os.listdir(store), ["calls.db"], "a closed store is one file")

    # ls: functions, call counts, parameter names and types.
    code, out, err = cmon(["ls", store])
    eq(code, 0, "cmon ls (%s)" % err.strip())
    eq(err, "", "cmon ls stderr")
    lines = out.splitlines()
    wants = ["%d functions, %d calls" % (len(CALLS), sum(CALLS.values())), "1 process",
             "target      %s" % target(BINARY)]
    for func, (ret, params) in SIGNATURES.items():
        sig = "%s %s(%s)" % (ret, func, ", ".join(
            t + ("" if t.endswith("*") else " ") + n for n, t in params))
        wants.append(re.compile(r"%s\s+%s\s+%d\s+%s$" % (re.escape(func), BINARY, CALLS[func],
                                                        re.escape(sig))))
    has_lines(lines, wants, "cmon ls")
    check(not any("not closed" in l for l in lines), "a closed store: %s" % out)

    # show: every argument as name (type) = value.
    has_lines(show(store, "sum_ints", 1), [
        "sum_ints  call 1 of 2  (%s)" % BINARY,
        "status     ok",
        "arguments  2",
        re.compile(r'  values \(const int32_t \*\) = "0x[0-9a-f]+"$'),
        "  n (int) = 5",
        "ret        (long int) 39997",
        "blobs      1",
        "  v  <i4 [5] = [1, -2, 3, 40000, -5]",
    ], "show sum_ints 1")
    has_lines(show(store, "sum_ints", 2), [
        "sum_ints  call 2 of 2  (%s)" % BINARY, "  n (int) = 3", "ret        (long int) 24",
        "  v  <i4 [3] = [7, 8, 9]"], "show sum_ints 2")
    has_lines(show(store, "greet", 1), [
        '  s (const char *) = "hi \\"q\\"\\n\u00e9\\u00ff"',
        "  none (const char *) = null",
        "ret        (size_t) 10",
        "blobs      0"], "show greet 1")
    has_lines(show(store, "nested", 1), [
        '  o (const struct outer *) = {"id":7,"in":{"x":-3,"y":40000},"name":"outer-name",'
        '"vals":[1,-2,3,2147483647]}',
        "ret        (long int) 2147523663"], "show nested 1")
    has_lines(show(store, "sum_buf", 1), [
        re.compile(r'  buf \(const uint8_t \*\) = "0x[0-9a-f]+"$'),
        "  len (size_t) = 13",
        "ret        (long int) 630",
        "  data  |u1 [13]  13 bytes",
        "    hex  68 69 0a 00 ff 01 02 03 04 05 06 07 80"], "show sum_buf 1")
    has_lines(show(store, "wides", 1), [
        "  i64 (int64_t) = -9223372036854775808",
        "  u64 (uint64_t) = 18446744073709551615",
        "  neg (int32_t) = -7",
        "  max (int64_t) = 9223372036854775807",
        "ret        (long int) 9223372036854775801"], "show wides 1")
    has_lines(show(store, "chars", 1), [
        '  c (char) = "a"', '  nul (char) = "\\u0000"', '  hi (char) = "\\u00ff"',
        "  t (_Bool) = true", "  f (_Bool) = false", '  col (enum color) = "GREEN"'],
        "show chars 1")
    has_lines(show(store, "make_pt", 1), [
        "  x (long int) = 21", "  y (long int) = -41",
        'ret        (struct pt) {"x":42,"y":-42}'], "show make_pt 1")

    export_per_call(store)
    export_csv(store)

    # A second capture to the same -o: never overwritten, DIR-1.
    second = capture(tmpfile("run"), funcs=["greet"], extra=[])
    eq(second, tmpfile("run") + "-1", "second store folder")
    walk_modes(second)
    code, out, err = cmon(["ls", second])
    eq(code, 0, "cmon ls of the second store (%s)" % err.strip())
    check("1 functions, 1 calls" in out.splitlines() or "1 function, 1 call" in out.splitlines(),
          "second store: %s" % out)
    code, out, err = cmon(["ls", store])
    check(re.search(r"^sum_ints\s+%s\s+2\s" % BINARY, out, re.M), "first store intact: %s" % out)


def export_per_call(store):
    out_dir = tmpfile("percall")
    code, out, err = cmon(["export", store, "--per-call", out_dir])
    eq(code, 0, "cmon export --per-call (%s)" % err.strip())
    eq(err, "cmon: exported %d calls of %d functions to %s\n"
       % (sum(CALLS.values()), len(CALLS), out_dir), "export stderr")
    walk_modes(out_dir)
    with open(os.path.join(out_dir, "index.json")) as f:
        index = json.load(f)
    eq([(e["name"], e["calls"]) for e in index["functions"]], list(CALLS.items()),
       "index.json functions")

    def args_json(func, n):
        with open(os.path.join(out_dir, func, str(n), "args.json")) as f:
            return json.load(f)

    for func, (ret, params) in SIGNATURES.items():
        a = args_json(func, 1)
        eq([(p["name"], p["type"]) for p in a["params"]], params, "%s params" % func)
        eq((a["func"], a["module"], a["n"], a["status"], a["ret_type"]),
           (func, BINARY, 1, "ok", ret), "%s args.json" % func)
    a = args_json("sum_ints", 1)
    check(re.match(r"^0x[0-9a-f]+$", a["args"]["values"]), "values: %r" % a["args"])
    eq((a["args"]["n"], a["ret"]), (5, 39997), "sum_ints 1 n, ret")
    eq([(b["name"], b["dtype"], b["shape"], b["truncated"], b["bytes"]) for b in a["blobs"]],
       [("v", "<i4", [5], False, 20)], "sum_ints 1 blobs")
    with open(os.path.join(out_dir, "sum_ints", "1", a["blobs"][0]["bin"]), "rb") as f:
        eq(f.read(), struct.pack("<5i", *V1), "sum_ints 1 %s" % a["blobs"][0]["bin"])
    eq(args_json("sum_ints", 2)["args"]["n"], 3, "sum_ints 2 n")
    a = args_json("sum_buf", 1)
    eq(a["args"]["len"], 13, "sum_buf len")
    eq([(b["name"], b["dtype"], b["shape"], b["bin"]) for b in a["blobs"]],
       [("data", "|u1", [13], "arg_data.bin")], "sum_buf blobs")
    with open(os.path.join(out_dir, "sum_buf", "1", "arg_data.bin"), "rb") as f:
        eq(f.read(), BUF13, "sum_buf arg_data.bin")
    eq(args_json("greet", 1)["args"], {"s": 'hi "q"\n\u00e9\u00ff', "none": None}, "greet args")
    eq(args_json("greet", 1)["blobs"], [], "greet blobs")
    a = args_json("nested", 1)
    eq(a["args"], {"o": NESTED_O}, "nested args")
    eq([(b["name"], b["dtype"], b["shape"]) for b in a["blobs"]], [("o->vals", "<i4", [4])],
       "nested blobs (a numeric array inside a value)")
    nested_npy = a["blobs"][0]["npy"]
    eq(args_json("wides", 1)["args"], {"i64": -9223372036854775808,
                                       "u64": 18446744073709551615, "neg": -7,
                                       "max": 9223372036854775807}, "wides args")
    eq(args_json("make_pt", 1)["ret"], {"x": 42, "y": -42}, "make_pt ret")

    # The arrays as numpy reads them.
    code, _, err = run([PYTHON, "-c", "import numpy"])
    if code != 0:
        raise Skip("python3-numpy not installed: %s" % err.strip().splitlines()[-1:])
    script = r"""
import json, sys, numpy as np
res = {}
for rel in sys.argv[2:]:
    a = np.load(sys.argv[1] + "/" + rel, allow_pickle=False)
    res[rel] = [str(a.dtype), list(a.shape), a.tolist()]
print(json.dumps(res))
"""
    rels = ["sum_ints/1/arg_v.npy", "sum_ints/2/arg_v.npy", "sum_buf/1/arg_data.npy",
            "nested/1/" + nested_npy]
    code, out, err = run([PYTHON, "-c", script, out_dir] + rels)
    eq(code, 0, "numpy.load (%s)" % err.strip())
    res = json.loads(out)
    eq(res[rels[0]], ["int32", [5], V1], "sum_ints 1 v as numpy")
    eq(res[rels[1]], ["int32", [3], V2], "sum_ints 2 v as numpy")
    eq(res[rels[2]], ["uint8", [13], list(BUF13)], "sum_buf data as numpy")
    eq(res[rels[3]], ["int32", [4], NESTED_O["vals"]], "nested o->vals as numpy")


def export_csv(store):
    out_dir = tmpfile("tables")
    code, out, err = cmon(["export", store, "-F", "csv", "-o", out_dir])
    eq(code, 0, "cmon export -F csv (%s)" % err.strip())
    walk_modes(out_dir)
    eq(sorted(os.listdir(out_dir)), sorted(["index.json"] + [f + ".csv" for f in CALLS]),
       "CSV files")

    def table(func):
        with open(os.path.join(out_dir, func + ".csv"), newline="") as f:
            text = f.read()
        check(text.endswith("\r\n"), "%s.csv ends with CRLF" % func)
        rows = list(csv.reader(io.StringIO(text, newline="")))
        # the files' version first (test_schema), then trace's columns
        eq({r[0] for r in rows[1:]} | {rows[0][0]}, {"schema", "1"}, "%s.csv schema" % func)
        return [r[1:] for r in rows]

    # trace -F csv's columns (as -o 'x.%f.csv' writes them), then "call"
    head = ["ts_ns", "pid", "tid", "comm", "func", "depth", "ret", "latency_ns",
            "latency_lt_ns", "rss_entry", "rss_exit", "vms_entry", "vms_exit", "status", "module"]
    tail = ["truncated", "faults", "unavailable", "call"]
    rows = table("sum_ints")
    eq(rows[0], head + ["args.values", "args.n", "captures.v"] + tail, "sum_ints.csv header")
    eq([(r[-1], r[4], r[13], r[6], r[16], r[17]) for r in rows[1:]],
       [("1", "sum_ints", "ok", "39997", "5", "[1,-2,3,40000,-5]"),
        ("2", "sum_ints", "ok", "24", "3", "[7,8,9]")],
       "sum_ints rows (the capture v as a JSON array)")
    check(all(re.match(r"^0x[0-9a-f]+$", r[15]) for r in rows[1:]), "values column: %r" % rows)
    rows = table("greet")
    eq(rows[0], head + ["args.s", "args.none"] + tail, "greet.csv header")
    eq(rows[1][6] + "|" + rows[1][15] + "|" + rows[1][16], '10|hi "q"\n\u00e9\u00ff|',
       "greet row (ret, s, none)")
    rows = table("wides")
    eq(rows[1][6:7] + rows[1][15:19], ["9223372036854775801", "-9223372036854775808",
                                       "18446744073709551615", "-7", "9223372036854775807"],
       "wides row (ret, then the arguments)")
    rows = table("nested")
    eq(rows[0][15:20], ["args.o.id", "args.o.in.x", "args.o.in.y", "args.o.name", "args.o.vals"],
       "nested's struct members, a column each")
    eq(rows[1][15:20], [str(NESTED_O["id"]), str(NESTED_O["in"]["x"]), str(NESTED_O["in"]["y"]),
                        NESTED_O["name"], json.dumps(NESTED_O["vals"], separators=(",", ":"))],
       "nested o's members")
    eq(len(rows), 2, "nested rows")


def test_capture_meta():
    """What makes a store trustworthy later: the target, its build-id, the
    command line, the host."""
    store = capture(tmpfile("meta"), funcs=["greet"], extra=[])
    code, out, _ = run(["readelf", "-n", target(BINARY)])
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(code == 0 and m, "readelf -n %s: %r" % (target(BINARY), out))
    code, out, err = cmon(["ls", store])
    eq(code, 0, "cmon ls (%s)" % err.strip())
    lines = out.splitlines()
    has_lines(lines, ["target      %s" % target(BINARY),
                      "host        %s" % socket.gethostname(),
                      re.compile(r"command     .*capture -o %s --func greet -- %s all$"
                                 % (re.escape(tmpfile("meta")), re.escape(target(BINARY))))],
              "cmon ls")
    has_lines(lines, ["build-id    %s" % m.group(1)], "cmon ls (the target's GNU build-id)")


def test_capture_sigkill():
    """cmon killed by SIGKILL during a capture: the store still opens, with
    the calls committed until then (at least once a second)."""
    t = Background([], cmd=[target(BINARY), "loop", "0"])
    try:
        time.sleep(0.05)
        check(t.p.poll() is None, "typed loop exited: %s" % t.stderr)
        out = tmpfile("killed")
        bg = Background(["capture", "-p", str(t.pid), "-o", out, "--func", "sum_buf",
                         "--capture", "data=buf:len"])
        bg.wait_attached()
        # Until a commit holds calls (one a second at least; waited for,
        # not timed: a hang guard only).
        end, kept = time.monotonic() + HANG, 0
        while time.monotonic() < end and not kept:
            code, text, _ = cmon(["ls", out])
            m = re.search(r"^sum_buf\s+%s\s+(\d+)\s" % BINARY, text, re.M) if code == 0 else None
            kept = int(m.group(1)) if m else 0
            time.sleep(0.1)
        bg.signal(signal.SIGKILL)
        eq(bg.wait(), -signal.SIGKILL, "cmon killed")
        check(t.p.poll() is None, "the target runs on after cmon's SIGKILL")
        code, text, err = cmon(["ls", out])
        eq(code, 0, "cmon ls of a killed capture (%s)" % err.strip())
        check("not closed" in text, "ls says the store was not closed:\n%s" % text)
        m = re.search(r"^sum_buf\s+%s\s+(\d+)\s" % BINARY, text, re.M)
        check(m, "no sum_buf line in:\n%s" % text)
        n = int(m.group(1))
        # What a commit held before the kill is kept (the calls after it
        # may be lost).
        check(n >= kept > 0, "%d calls kept, %d committed before the kill" % (n, kept))
        lines = show(out, "sum_buf", n)
        has_lines(lines, ["sum_buf  call %d of %d  (%s)" % (n, n, BINARY),
                          "  len (size_t) = 64", "  data  |u1 [64]  64 bytes"],
                  "show sum_buf %d of a killed capture" % n)
        code, _, err = cmon(["export", out, "-F", "json", "-o", tmpfile("killed-json")])
        eq(code, 0, "export of a killed capture (%s)" % err.strip())
        with open(os.path.join(tmpfile("killed-json"), "sum_buf.jsonl")) as f:
            recs = [json.loads(l) for l in f]
        eq(len(recs), n, "exported records")
        eq([r["call"] for r in recs], list(range(1, n + 1)), "call numbers")
        check(all(r["args"]["len"] == 64 and r["retval"] >= sum(range(1, 64)) for r in recs),
              "len and ret of every call")
        lines = [l for l in stderr_lines(bg.stderr) if "capturing to" in l]
        eq(lines, ["cmon: capturing to %s" % out], "capture's stderr")
    finally:
        t.kill()


def test_export_column_names_unique():
    """A capture is written capture_<name> when its name is a fixed column
    (n); another capture named capture_n made two columns of one name
    (parsers keep one).  The second is capture_n_2."""
    store = tmpfile("dupcols")
    code, _, err = cmon(["capture", "-q", "-o", store, "--func", "sum_buf", "--capture",
                         "n=buf:len", "--capture", "capture_n=buf:len", "--",
                         target("typed_O2"), "loop", "2"])
    eq(code, 0, "capture (%s)" % err)
    out = tmpfile("dupcols-out")
    code, _, err = cmon(["export", "-F", "csv", "-o", out, store])
    eq(code, 0, "export (%s)" % err)
    with open(os.path.join(out, "sum_buf.csv")) as f:
        head = next(csv.reader(f))
    eq(len(head), len(set(head)), "unique column names: %r" % head)
    check("captures.n" in head and "captures.capture_n" in head, "both captures: %r" % head)


def test_store_keeps_truncated_and_unreadable():
    """A string cut at --strlen and a pointer that could not be read are
    noted in the store (calls.notes, libcmon's notes_json): a value read
    back null was ambiguous with a NULL pointer, and a cut string looked
    whole.  cmon show says which."""
    store = tmpfile("notes")
    code, _, err = cmon(["capture", "-q", "-o", store, "--func", "greet", "--",
                         target("typed_O2"), "long", "70000"])
    eq(code, 0, "capture (%s)" % err)
    code, out, err = cmon(["show", store, "greet", "1"])
    eq(code, 0, "show (%s)" % err)
    eq([l for l in out.splitlines() if l.startswith(("truncated", "unreadable"))],
       ["truncated  s"], "the long string is noted as cut")
    cold = tmpfile("notes-cold")
    store2 = tmpfile("notes2")
    code, _, err = cmon(["capture", "-q", "-o", store2, "--no-fault-in", "--func", "cold_str",
                         "--", target("typed_O2"), "cold", cold])
    eq(code, 0, "capture --no-fault-in (%s)" % err)
    code, out, err = cmon(["show", store2, "cold_str", "1"])
    eq(code, 0, "show (%s)" % err)
    check("  s (const char *) = null" in out, out)
    eq([l for l in out.splitlines() if l.startswith(("truncated", "unreadable"))],
       ["unreadable s"], "the unreadable string is noted")


def _export_all(store, name):
    """`cmon export STORE` as csv, json and --per-call: {fmt: folder}."""
    dirs = {}
    for fmt, args in (("csv", ["-F", "csv", "-o"]), ("json", ["-F", "json", "-o"]),
                      ("per-call", ["--per-call"])):
        dirs[fmt] = tmpfile("%s-%s" % (name, fmt))
        code, _, err = cmon(["export", store] + args + [dirs[fmt]])
        eq(code, 0, "export %s (%s)" % (fmt, err))
    return dirs


def _notes_of(dirs, func):
    """Each format's (truncated, faults) of FUNC's call 1, as lists."""
    with open(os.path.join(dirs["csv"], func + ".csv"), newline="") as f:
        rows = list(csv.reader(f))
    eq(rows[0][-4:], ["truncated", "faults", "unavailable", "call"], "CSV's last columns")
    cells = rows[1][-4:-2]  # as trace writes them: "s; t"
    got = {"csv": tuple(c.split("; ") if c else [] for c in cells),
           "csv-cells-empty": tuple(c == "" for c in cells)}
    with open(os.path.join(dirs["json"], func + ".jsonl")) as f:
        rec = json.loads(f.readline())
    got["json"] = (rec.get("truncated", []), rec.get("faults", []))  # as trace: when any
    with open(os.path.join(dirs["per-call"], func, "1", "args.json")) as f:
        rec = json.load(f)
    got["per-call"] = (rec["truncated"], rec["faults"])
    return got


def test_export_keeps_truncated_and_unreadable():
    """`cmon export -F csv|json` and --per-call's args.json carry the store's
    notes: a string cut at --strlen and a capture cut at --capture-max (in
    "truncated"), a pointer that could not be read (in "faults").  They were
    left out: a cut string looked whole, an unreadable pointer like NULL."""
    store = tmpfile("xnotes")
    code, _, err = cmon(["capture", "-q", "-o", store, "--func", "greet", "--capture",
                         "t=s:str", "--", target("typed_O2"), "long", "70000"])
    eq(code, 0, "capture (%s)" % err)
    got = _notes_of(_export_all(store, "xnotes"), "greet")
    for fmt in ("csv", "json", "per-call"):
        eq(got[fmt], (["s", "t"], []), "greet's notes (%s)" % fmt)
    eq(got["csv-cells-empty"], (False, True), "CSV: faults empty when none")
    cold = tmpfile("xnotes-cold")
    store2 = tmpfile("xnotes2")
    code, _, err = cmon(["capture", "-q", "-o", store2, "--no-fault-in", "--func", "cold_str",
                         "--", target("typed_O2"), "cold", cold])
    eq(code, 0, "capture --no-fault-in (%s)" % err)
    dirs = _export_all(store2, "xnotes2")
    got = _notes_of(dirs, "cold_str")
    for fmt in ("csv", "json", "per-call"):
        eq(got[fmt], ([], ["s"]), "cold_str's notes (%s)" % fmt)
    with open(os.path.join(dirs["per-call"], "cold_str", "1", "args.json")) as f:
        eq(json.load(f)["args"], {"s": None}, "the unreadable s")
    # Without notes: nothing listed.
    store3 = tmpfile("xnotes3")
    code, _, err = cmon(["capture", "-q", "-o", store3, "--func", "cold_str", "--",
                         target("typed_O2"), "cold", tmpfile("xnotes-cold3")])
    eq(code, 0, "capture (%s)" % err)
    got = _notes_of(_export_all(store3, "xnotes3"), "cold_str")
    for fmt in ("csv", "json", "per-call"):
        eq(got[fmt], ([], []), "cold_str's notes, read whole (%s)" % fmt)
    eq(got["csv-cells-empty"], (True, True), "CSV: both empty")


def test_export_csv_cells_are_trace_cells():
    """Export CSV's cells are trace CSV's: a string is its text, a NULL
    pointer (or one not read) an empty cell, told apart by the faults
    column when it could not be read; JSON keeps null and "" apart."""
    store = tmpfile("nullstr")
    # typed long 0: greet("", NULL); t reads the NULL, u the "".
    code, _, err = cmon(["capture", "-q", "-o", store, "--func", "greet", "--capture",
                         "t=none:str", "--capture", "u=s:str", "--", target("typed_O2"),
                         "long", "0"])
    eq(code, 0, "capture (%s)" % err)
    out_dir = tmpfile("nullstr-csv")
    code, _, err = cmon(["export", store, "-F", "csv", "-o", out_dir])
    eq(code, 0, "export (%s)" % err)
    with open(os.path.join(out_dir, "greet.csv"), newline="") as f:
        (r,) = list(csv.DictReader(f))
    eq({k: r[k] for k in ("ret", "args.s", "args.none", "captures.t", "captures.u", "faults")},
       {"ret": "0", "args.s": "", "args.none": "", "captures.t": "", "captures.u": "",
        "faults": "t"}, "greet(\"\", NULL) in CSV")
    code, _, err = cmon(["export", store, "-F", "json", "-o", out_dir + "-json"])
    eq(code, 0, "export (%s)" % err)
    with open(os.path.join(out_dir + "-json", "greet.jsonl")) as f:
        rec = json.loads(f.readline())
    eq((rec["args"]["s"], rec["args"]["none"]), ("", None), "JSON: \"\" and null")


def test_store_written_before_notes_reads():
    """A store written before calls.notes existed (the column dropped here)
    still reads: show prints its calls, without notes."""
    import sqlite3
    import shutil
    store = tmpfile("old-notes")
    code, _, err = cmon(["capture", "-q", "-o", store, "--func", "greet", "--",
                         target("typed_O2"), "long", "70000"])
    eq(code, 0, "capture (%s)" % err)
    db = sqlite3.connect(os.path.join(store, "calls.db"))
    db.execute("ALTER TABLE calls DROP COLUMN notes")
    db.commit()
    db.close()
    code, out, err = cmon(["show", store, "greet", "1"])
    eq(code, 0, "show an older store (%s)" % err)
    check("ret        (size_t) 70000" in out, out)
    check("truncated" not in out, out)
    # Its exports do not claim that nothing was cut: the notes are null
    # (unknown), and a warning says why.
    dirs = {}
    for fmt, args in (("csv", ["-F", "csv", "-o"]), ("json", ["-F", "json", "-o"]),
                      ("per-call", ["--per-call"])):
        dirs[fmt] = tmpfile("old-notes-%s" % fmt)
        code, _, err = cmon(["export", store] + args + [dirs[fmt]])
        eq(code, 0, "export %s of an older store (%s)" % (fmt, err))
        lines = stderr_lines(err)
        eq(len(lines), 2, "export %s stderr: %r" % (fmt, lines))
        check(lines[0].startswith("cmon: warning: ") and "are unknown (null in JSON, empty in CSV)"
              in lines[0],
              "warning: %r" % lines[0])
    with open(os.path.join(dirs["csv"], "greet.csv"), newline="") as f:
        row = list(csv.DictReader(f))[0]
    eq((row["truncated"], row["faults"]), ("", ""), "CSV notes of an older store (said unknown)")
    with open(os.path.join(dirs["json"], "greet.jsonl")) as f:
        rec = json.loads(f.readline())
    eq((rec["truncated"], rec["faults"]), (None, None), "JSON notes of an older store")
    with open(os.path.join(dirs["per-call"], "greet", "1", "args.json")) as f:
        rec = json.load(f)
    eq((rec["truncated"], rec["faults"]), (None, None), "args.json notes of an older store")


def test_capture_of_rows_is_one_array():
    """trace2(const double (*mat)[2], int n): --capture rows=mat[n] is n
    rows of 2 doubles, one <f8 [n, 2] array.  It was stored as n opaque
    16-byte records (|V16 [2], hex in CSV, no .npy) plus a blob per row."""
    store = tmpfile("rows")
    code, _, err = cmon(["capture", "-q", "-o", store, "--func", "trace2", "--capture",
                         "rows=mat[n]", "--", target("typed_O2"), "all"])
    eq(code, 0, "capture (%s)" % err)
    code, out, err = cmon(["show", store, "trace2", "1"])
    eq(code, 0, "show (%s)" % err)
    blobs = out[out.index("blobs"):].splitlines()
    eq(blobs, ["blobs      1", "  rows  <f8 [2, 2] = [[1.5, 2], [3, 4.25]]"], "one array")
    out_dir = tmpfile("rows-csv")
    code, _, err = cmon(["export", "-F", "csv", "-o", out_dir, store])
    eq(code, 0, "export (%s)" % err)
    with open(os.path.join(out_dir, "trace2.csv")) as f:
        row = list(csv.DictReader(f))[0]
    eq(json.loads(row["captures.rows"]), [[1.5, 2], [3, 4.25]], "the CSV cell: a JSON array")


def test_show_lists_calls_slowest_first():
    """cmon show RUN FUNC (no call number): every call of FUNC, slowest
    first, a line each: its number, latency, RSS growth and arguments."""
    store = tmpfile("slowest")
    code, _, err = cmon(["capture", "-q", "-o", store, "--func", "nap", "--",
                         target("sleeper"), "naps"])
    eq(code, 0, "capture (%s)" % err)
    code, out, err = cmon(["show", store, "nap"])
    eq((code, err), (0, ""), "exit status and stderr")
    lines = out.splitlines()
    eq(lines[0].split(), ["call", "latency_ns", "rss_growth", "args"], "header")
    eq(lines[-1], "250 calls of nap; `cmon show RUN nap N` shows call N whole", "the count")
    rows = [l.split(None, 3) for l in lines[1:-1]]
    lat = [int(r[1]) for r in rows]
    eq(lat, sorted(lat, reverse=True), "slowest first")
    eq(sorted(int(r[0]) for r in rows), list(range(1, 251)), "every call once")
    # a line's arguments are its call's
    code, one, _ = cmon(["show", store, "nap", rows[0][0]])
    eq(code, 0, "show the slowest call")
    usec = json.loads(rows[0][3])["usec"]
    check(re.search(r"^  usec \(long int\) = %d$" % usec, one, re.M), one)
