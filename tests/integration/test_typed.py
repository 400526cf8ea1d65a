"""Typed arguments from DWARF in `cmon trace` (-F json/csv/text), on
tests/targets/typed.c built with -g at -O0 and at -O2: the exact value of
every argument, --capture, --strlen, --deref, --raw, --no-fault-in."""
import csv
import io
import json
import os
import re

from cmonlib import (COLUMNS, LONG_COLUMNS, TYPED_COLUMNS, U64, check, cmon, eq, funcs_args, parse_csv, read_text, run,
                     target, text_rows, tmpfile, trace)

BUILDS = ["typed_O0", "typed_O2"]
TYPED_KEYS = ["args", "retval", "captures", "truncated", "faults"]
FLOAT_XMM0 = "<unavailable: float in xmm0>"
# A double parameter: at -O0 read from the frame slot the prologue stored it
# in (the entry probe moves past the prologue); at -O2 it stays in xmm0.
SCALE_ARGS = {"typed_O0": {"x": 1.5, "n": 3}, "typed_O2": {"x": FLOAT_XMM0, "n": 3}}
NESTED_O = {"id": 7, "in": {"x": -3, "y": 40000}, "name": "outer-name",
            "vals": [1, -2, 3, 2147483647]}


class Ptr:
    """A pointer shown as an address: "0x..." of raw argument register N."""

    def __init__(self, n):
        self.n = n

    def __repr__(self):
        return "Ptr(arg%d)" % self.n


# `typed all`, in call order: (func, args, retval).
ALL_EXPECTED = [
    ("widths", {"i8": -128, "u8": 255, "i16": -32768, "u16": 65535, "i32": -2147483648,
                "u32": 4294967295}, 2147516541),
    ("wides", {"i64": -9223372036854775808, "u64": 18446744073709551615, "neg": -7,
               "max": 9223372036854775807}, 9223372036854775801),
    ("chars", {"c": "a", "nul": "\u0000", "hi": "\u00ff", "t": True, "f": False,
               "col": "GREEN"}, 98),
    ("paint", {"c": "BLUE", "mix": 6}, 26),  # 6 is no enumerator: the number
    ("greet", {"s": 'hi "q"\n\u00e9\u00ff', "none": None}, 10),
    ("nested", {"o": NESTED_O}, 2147523663),
    ("small_byval", {"s": {"a": -5, "b": 300, "c": 250, "d": -1234567890123}},
     -1234567889578),
    ("big_byval", {"b": {"v": [1, 2, 3, -4], "tag": "bigtag", "last": -99}}, -91),
    # g and h are the 7th and 8th arguments: on the stack.
    ("eight", {"a": 1, "b": -2, "c": 3, "d": -4, "e": 5, "f": -6, "g": -7, "h": 0x123456789},
     4886718335),
    ("scale", {"x": FLOAT_XMM0, "n": 3}, FLOAT_XMM0),
    ("fbox_sum", {"b": {"d": 2.5, "f": -0.125, "i": 3}}, FLOAT_XMM0),
    ("sum_buf", {"buf": Ptr(0), "len": 13}, 630),
    ("sum_ints", {"values": Ptr(0), "n": 5}, 39997),
    ("sum_ints", {"values": Ptr(0), "n": 3}, 24),
    ("make_pt", {"x": 21, "y": -41}, {"x": 42, "y": -42}),
    ("color_name", {"c": "GREEN"}, "green"),
]
ALL_FUNCS = list(dict.fromkeys(f for f, _, _ in ALL_EXPECTED))

# The bytes sum_buf gets, and the arrays sum_ints gets.
BUF13 = bytes([0x68, 0x69, 0x0a, 0x00, 0xff, 1, 2, 3, 4, 5, 6, 7, 0x80])
V1 = [1, -2, 3, 40000, -5]
V2 = [7, 8, 9]


def untraced(binary, args=("all",)):
    code, out, err = run([target(binary)] + list(args))
    eq(code, 0, "untraced %s %s (%s)" % (binary, " ".join(args), err.strip()))
    return out


def trace_typed(binary, funcs, extra=(), fmt="json", args=("all",), quiet_check=True):
    """`cmon trace -F FMT -o FILE` launching BINARY ARGS: (records text, stderr).
    The program's own output must be what it prints untraced."""
    path = tmpfile("typed-%s.%s" % (binary, fmt))
    if os.path.exists(path):
        os.unlink(path)
    cmd = ["trace", "-q", "-F", fmt, "-o", path] + funcs_args(funcs) + list(extra)
    code, out, err = cmon(cmd + ["--", target(binary)] + list(args))
    eq(code, 0, "cmon %s: exit status (%s)" % (" ".join(cmd), err.strip()))
    if quiet_check:
        eq(err, "", "stderr of cmon %s" % " ".join(cmd))
    if args[0] != "cold":
        eq(out, untraced(binary, args), "program output under cmon")
    check(os.path.exists(path), "no records file %s" % path)
    return read_text(path), err


def json_records(text):
    """JSON Lines records: the 20 columns, then args, retval and any of
    captures, truncated, faults (in that order)."""
    recs = []
    check(text.endswith("\n"), "JSON output does not end with a newline")
    for n, line in enumerate(text.splitlines(), 1):
        try:
            r = json.loads(line)
        except ValueError as e:
            raise AssertionError("JSON line %d does not parse (%s): %r" % (n, e, line))
        keys = list(r.keys())
        eq(keys[:len(COLUMNS)], COLUMNS, "JSON line %d: the record's columns" % n)
        extra = keys[len(COLUMNS):]
        eq(extra, [k for k in TYPED_KEYS if k in extra], "JSON line %d: typed keys" % n)
        recs.append(r)
    return recs


def check_value(got, want, rec, what):
    if isinstance(want, Ptr):
        reg = rec["arg%d" % want.n] & U64
        eq(got, "0x%x" % reg, "%s (the address in arg%d)" % (what, want.n))
    else:
        eq(got, want, what)
        eq(type(got), type(want), "%s: JSON type" % what)


def check_all(recs, binary):
    eq([r["func"] for r in recs], [f for f, _, _ in ALL_EXPECTED], "%s records" % binary)
    for r, (func, args, ret) in zip(recs, ALL_EXPECTED):
        what = "%s %s" % (binary, func)
        if func == "scale":
            args = SCALE_ARGS[binary]
        eq(r["status"], "ok", "%s status" % what)
        check("args" in r, "%s: no \"args\" in %r" % (what, r))
        eq(list(r["args"].keys()), list(args.keys()), "%s parameter names, in order" % what)
        for name, want in args.items():
            check_value(r["args"][name], want, r, "%s arg %s" % (what, name))
        check_value(r["retval"], ret, r, "%s retval" % what)
        for k in ("captures", "truncated", "faults"):
            check(k not in r, "%s: unexpected %r in %r" % (what, k, r))


def _test_all(binary):
    text, _ = trace_typed(binary, ALL_FUNCS)
    recs = json_records(text)
    check_all(recs, binary)
    # The raw registers are still there, beside the typed values.
    e = [r for r in recs if r["func"] == "eight"][0]
    eq([e["arg%d" % i] for i in range(6)], [1, -2, 3, -4, 5, -6], "eight's raw registers")
    eq(e["ret"], 4886718335, "eight's raw ret")


def test_typed_json_O0():
    _test_all("typed_O0")


def test_typed_json_O2():
    _test_all("typed_O2")


def test_typed_csv():
    """CSV cells are native values: a string's own characters (no JSON
    quotes; the byte 0xff as U+00FF, as JSON reads it; a NUL left out), an
    enumerator by name, true/false, numbers; a NULL string empty; "ret" as
    the function's type; no arg0..arg5 (every function has DWARF).  Functions
    whose columns differ: the long shape by default (a row per value), the
    union of their columns with --csv wide."""
    want = {
        "chars": {"c": "a", "nul": "", "hi": "\u00ff", "t": "true", "f": "false",
                  "col": "GREEN"},
        "paint": {"c": "BLUE", "mix": "6"},
        "greet": {"s": 'hi "q"\n\u00e9\u00ff', "none": ""},
        "eight": {"a": "1", "b": "-2", "c": "3", "d": "-4", "e": "5", "f": "-6",
                  "g": "-7", "h": "4886718345"},
    }
    rets = {"chars": "98", "paint": "26", "greet": "10", "eight": "4886718335"}
    funcs = ["chars", "paint", "greet", "eight"]
    for binary in BUILDS:
        text, _ = trace_typed(binary, funcs, fmt="csv", extra=["--csv", "wide"])
        check(text.endswith("\r\n"), "CSV ends with CRLF")
        rows = list(csv.reader(io.StringIO(text, newline="")))
        # One column per parameter name, the union over the functions in
        # --func order (chars and paint share "c"; eight's c is the same column).
        names = ["c", "nul", "hi", "t", "f", "col", "mix", "s", "none", "a", "b", "d", "e",
                 "g", "h"]
        # Prefixed: eight's "c" or a parameter named "pid" cannot be taken
        # for a fixed column.  Then what JSON gives as keys: "truncated",
        # "faults", and "unavailable" (the values not there, empty here).
        eq(rows[0], TYPED_COLUMNS + ["args." + n for n in names] +
           ["truncated", "faults", "unavailable"], "%s CSV header" % binary)
        for fields in rows[1:]:
            eq(len(fields), len(rows[0]), "%s CSV fields in %r" % (binary, fields))
        recs = {}
        for fields in rows[1:]:
            rec = dict(zip(rows[0], fields))
            recs[rec["func"]] = rec
        eq(sorted(recs), sorted(funcs), "%s CSV records" % binary)
        for func, cells in want.items():
            got = {k: recs[func]["args." + k] for k in names
                   if recs[func]["args." + k] != "" or k in cells}
            eq(got, cells, "%s CSV cells of %s" % (binary, func))
        eq({f: recs[f]["ret"] for f in recs}, rets, "%s typed return column" % binary)
        # The long shape: a row per value, name and value
        text, _ = trace_typed(binary, funcs, fmt="csv")
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        eq(list(rows[0].keys()), LONG_COLUMNS, "%s long CSV header" % binary)
        got = {}
        for r in rows:
            got.setdefault(r["func"], {})[r["name"]] = r["value"]
        eq(got, {f: dict({"args." + k: v for k, v in want[f].items()}, ret=rets[f])
                 for f in funcs}, "%s long CSV values" % binary)
        eq(sorted({(r["func"], r["call"]) for r in rows}),
           sorted((f, str(n)) for n, f in enumerate(funcs, 1)), "%s calls numbered" % binary)


def test_typed_text():
    text, _ = trace_typed("typed_O2", ["paint", "greet", "nested", "eight", "scale"],
                          fmt="text")
    lines = text.splitlines()
    eq(len(lines), 6, "text lines (header + 5 calls): %r" % lines)
    want = {
        "paint": 'c="BLUE", mix=6',
        "greet": 's="hi \\"q\\"\\n\u00e9\\u00ff", none=null',
        "nested": 'o={"id":7,"in":{"x":-3,"y":40000},"name":"outer-name",'
                  '"vals":[1,-2,3,2147483647]}',
        "eight": "a=1, b=-2, c=3, d=-4, e=5, f=-6, g=-7, h=4886718345",
        "scale": 'x="%s", n=3' % FLOAT_XMM0,
    }
    for row in text_rows(text):
        func = row["func"]
        check(func in want, "unexpected function in %r" % row)
        eq(row["args"], want.pop(func), "text line of %s" % func)
    eq(want, {}, "functions without a text line")


def test_typed_text_long_return_value():
    """A typed return value too wide for the RET column is written after the
    arguments; the column used to show the raw rax (0x1000fffffffe, the two
    ints packed) as if it were the value."""
    for binary in BUILDS:
        text, _ = trace_typed(binary, ["wide_ret"], fmt="text", args=("wide", "-2"))
        lines = text.splitlines()
        eq(len(lines), 2, "%s: header and one row: %r" % (binary, lines))
        row = lines[1]
        check("0x1000fffffffe" not in row, "%s: raw rax shown: %r" % (binary, row))
        check(row.endswith('wide_ret(v=-2) = {"status_code_value_xyz":-2,'
                           '"bytes_transferred_total_count":4096}'),
              "%s: the value after the arguments: %r" % (binary, row))


def test_typed_text_marks():
    """The table says which values are not what the program held: a string
    cut at --strlen, a --capture cut at --capture-max (truncated=[...]), a
    pointer the probe could not read (faults=[...]).  They used to read as
    whole strings, and an unreadable pointer as a NULL one."""
    for binary in BUILDS:
        text, _ = trace_typed(binary, ["greet"], fmt="text", args=("long", "99"),
                              extra=["--strlen", "20"])
        row = text.splitlines()[1]
        check(row.endswith('(s="%s", none=null) = 99 truncated=["s"]' % ("x" * 20)),
              "%s: greet cut at --strlen 20: %r" % (binary, row))
        text, _ = trace_typed(binary, ["badptr"], fmt="text", args=("bad",))
        rows = text.splitlines()[1:]
        eq(len(rows), 2, "%s: two badptr rows: %r" % (binary, rows))
        check(rows[0].endswith('(s=null, o=null) = 2 faults=["s","o"]'),
              "%s: (char *)8 and (struct outer *)16: %r" % (binary, rows[0]))
        check(rows[1].endswith("(s=null, o=null) = 0"), "%s: real NULLs, no mark: %r" % (binary, rows[1]))
        text, _ = trace_typed(binary, ["sum_buf"], fmt="text",
                              extra=["--capture", "data=buf:len", "--capture-max", "8"])
        row = text.splitlines()[1]
        check(row.endswith(' len=13) = %d captures={"data":"%s"} truncated=["data"]'
                           % (sum(BUF13), BUF13[:8].hex())),
              "%s: a capture cut at --capture-max: %r" % (binary, row))


def test_typed_raw():
    text, _ = trace_typed("typed_O2", ["paint", "greet"], extra=["--raw"])
    recs = json_records(text)
    eq([r["func"] for r in recs], ["paint", "greet"], "records")
    for r in recs:
        eq(list(r.keys()), COLUMNS, "--raw: the plain record, no typed keys")
    eq((recs[0]["arg0"], recs[0]["arg1"], recs[0]["ret"]), (2, 6, 26), "paint's registers")
    text, _ = trace_typed("typed_O2", ["paint", "greet"], extra=["--raw"], fmt="csv")
    eq(text.split("\r\n", 1)[0], ",".join(COLUMNS), "--raw CSV header: the 20 columns only")
    eq([(r["func"], r["arg1"], r.get("typed", {})) for r in parse_csv(text)],
       [("paint", 6, {}), ("greet", 0, {})], "--raw CSV records")


def test_typed_capture_buf():
    for binary in BUILDS:
        text, _ = trace_typed(binary, ["sum_buf"], extra=["--capture", "data=buf:len"])
        (r,) = json_records(text)
        eq(r["captures"], {"data": BUF13.hex()}, "%s data=buf:len" % binary)
        check("truncated" not in r, "%s: nothing truncated: %r" % (binary, r))
        # len (13) > --capture-max: the first 8 bytes, listed in "truncated".
        text, _ = trace_typed(binary, ["sum_buf"],
                              extra=["--capture", "data=buf:len", "--capture-max", "8"])
        (r,) = json_records(text)
        eq(r["captures"], {"data": BUF13[:8].hex()}, "%s data=buf:len cut at 8" % binary)
        eq(r["truncated"], ["data"], "%s truncated" % binary)
        eq(r["args"]["len"], 13, "%s len" % binary)
        # An int array, its count in a register.
        text, _ = trace_typed(binary, ["sum_ints"], extra=["--capture", "v=values[n]"])
        recs = json_records(text)
        eq([x["captures"] for x in recs], [{"v": V1}, {"v": V2}], "%s v=values[n]" % binary)


def test_typed_csv_captures_and_notes():
    """CSV carries what JSON gives as keys: the captured bytes (they used to
    be dropped from CSV), and which values were cut or unreadable."""
    for binary in BUILDS:
        text, _ = trace_typed(binary, ["sum_buf"], fmt="csv",
                              extra=["--capture", "data=buf:len", "--capture-max", "8"])
        rows = list(csv.reader(io.StringIO(text, newline="")))
        eq(rows[0][-6:], ["args.buf", "args.len", "captures.data", "truncated", "faults",
                          "unavailable"], "%s CSV header with --capture" % binary)
        eq(len(rows), 2, "%s CSV rows" % binary)
        rec = dict(zip(rows[0], rows[1]))
        eq(rec["captures.data"], BUF13[:8].hex(), "%s captures cell" % binary)
        eq((rec["truncated"], rec["faults"]), ("data", ""),
           "%s truncated and faults cells" % binary)
    # A cut string parameter is listed in the same column.
    text, _ = trace_typed("typed_O2", ["greet"], fmt="csv", extra=["--strlen", "4"])
    rows = list(csv.reader(io.StringIO(text, newline="")))
    rec = dict(zip(rows[0], rows[1]))
    eq((rec["args.s"], rec["truncated"], rec["faults"]), ('hi "', "s", ""),
       "greet with --strlen 4, in CSV")


def test_typed_return_without_parameters():
    """A function with no parameters still has its typed return in every
    format: CSV's ret as the function's type (it read 4294967295)."""
    for binary in BUILDS:
        text, _ = trace_typed(binary, ["last_error"], fmt="csv")
        rows = list(csv.reader(io.StringIO(text, newline="")))
        eq(len(rows), 2, "%s CSV rows" % binary)
        rec = dict(zip(rows[0], rows[1]))
        eq(rec.get("ret"), "-1", "%s CSV ret of last_error (its type's)" % binary)
        text, _ = trace_typed(binary, ["last_error"], fmt="json")
        eq(json_records(text)[0]["retval"], -1, "%s JSON retval" % binary)
        text, _ = trace_typed(binary, ["last_error"], fmt="text")
        eq([(r["func"], r["args"], r["rest"]) for r in text_rows(text)],
           [("last_error", "", " = -1")], "%s text RET" % binary)


def test_typed_strlen():
    text, _ = trace_typed("typed_O2", ["greet", "nested"], extra=["--strlen", "4"])
    g, n = json_records(text)
    eq(g["args"], {"s": 'hi "', "none": None}, "greet with --strlen 4")
    eq(g["truncated"], ["s"], "greet truncated")
    eq(n["args"]["o"], dict(NESTED_O, name="oute"), "nested with --strlen 4")
    eq(n["truncated"], ["o->name"], "nested truncated")
    # One byte short of the string ("outer-name", 10 characters).
    text, _ = trace_typed("typed_O2", ["nested"], extra=["--strlen", "9"])
    (n,) = json_records(text)
    eq((n["args"]["o"]["name"], n["truncated"]), ("outer-nam", ["o->name"]), "--strlen 9")


def test_typed_strlen_exact():
    """A string of exactly --strlen characters is whole: not "truncated"."""
    for strlen in ("11", "10"):
        text, _ = trace_typed("typed_O2", ["nested"], extra=["--strlen", strlen])
        (n,) = json_records(text)
        eq(n["args"]["o"], NESTED_O, "nested with --strlen %s" % strlen)
        check("truncated" not in n, "--strlen %s: the 10-character o->name is not cut, but "
              "\"truncated\": %r" % (strlen, n.get("truncated")))


def test_typed_deref0():
    text, _ = trace_typed("typed_O0", ["nested", "fbox_sum"], extra=["--deref", "0"])
    recs = json_records(text)
    for r in recs:
        (name,) = r["args"]
        check_value(r["args"][name], Ptr(0), r, "%s with --deref 0" % r["func"])


def test_if_compares_a_string_not_resident_yet():
    """--if reads a string as the record does, faulting its page in: a
    string the program had not touched yet read as a fault and compared
    unequal to the very value the record showed (the call was dropped)."""
    for binary in BUILDS:
        path = tmpfile("cold-if-%s" % binary)
        text, _ = trace_typed(binary, ["cold_str"], args=["cold", path],
                              extra=["--if", 's == "a cold string, never touched"'])
        eq([r["args"] for r in json_records(text)], [{"s": "a cold string, never touched"}],
           "%s: the call kept" % binary)
        os.unlink(path)


def test_typed_fault_in():
    for binary in BUILDS:
        path = tmpfile("cold-%s" % binary)
        # Default: the probe may sleep, and faults the page in.
        text, _ = trace_typed(binary, ["cold_str"], args=["cold", path])
        (r,) = json_records(text)
        eq(r["args"], {"s": "a cold string, never touched"},
           "%s cold string (default)" % binary)
        eq(r["retval"], 28, "%s retval" % binary)
        check("faults" not in r, "%s: no fault by default: %r" % (binary, r))
        # --no-fault-in: a plain read of a page that is not resident fails.
        os.unlink(path)
        text, _ = trace_typed(binary, ["cold_str"], args=["cold", path],
                              extra=["--no-fault-in"])
        (r,) = json_records(text)
        eq(r["args"], {"s": None}, "%s cold string with --no-fault-in" % binary)
        eq(r["faults"], ["s"], "%s faults" % binary)
        eq(r["retval"], 28, "%s retval" % binary)


def test_typed_double_and_stack():
    """A double in xmm0 is a marker, in memory (or at -O0 in its frame slot)
    a number; 7th/8th arguments come from the stack (both builds)."""
    for binary in BUILDS:
        text, _ = trace_typed(binary, ["scale", "fbox_sum", "eight", "big_byval"])
        recs = {r["func"]: r for r in json_records(text)}
        eq(recs["scale"]["args"], SCALE_ARGS[binary], "%s scale" % binary)
        check(isinstance(recs["fbox_sum"]["args"]["b"]["d"], float), "d is a number")
        eq(recs["fbox_sum"]["args"]["b"], {"d": 2.5, "f": -0.125, "i": 3},
           "%s fbox_sum" % binary)
        eq((recs["eight"]["args"]["g"], recs["eight"]["args"]["h"]), (-7, 0x123456789),
           "%s eight's stack arguments" % binary)
        eq(recs["big_byval"]["args"]["b"]["last"], -99, "%s struct on the stack" % binary)
        check(re.match(r"^\d+$", str(recs["eight"]["latency_ns"])), "latency")


def test_void_has_no_return():
    """move_pt returns void: no value in text, CSV or JSON (rax holds
    whatever was left there), while the call itself is ok."""
    for binary in BUILDS:
        text, _ = trace_typed(binary, ["move_pt", "paint"], fmt="json")
        recs = {r["func"]: r for r in json_records(text)}
        m = recs["move_pt"]
        eq((m["status"], m["ret"], m["retval"], m["args"]["dx"]), ("ok", None, None, 3),
           "%s JSON move_pt (status, ret, retval, dx)" % binary)
        eq((recs["paint"]["ret"], recs["paint"]["retval"]), (26, 26), "%s JSON paint" % binary)
        text, _ = trace_typed(binary, ["move_pt"], fmt="csv")
        rows = list(csv.reader(io.StringIO(text, newline="")))
        rec = dict(zip(rows[0], rows[1]))
        eq((rec["status"], rec["ret"], rec["args.dx"]), ("ok", "", "3"),
           "%s CSV move_pt (status, ret, args.dx)" % binary)
        text, _ = trace_typed(binary, ["move_pt"], fmt="text")
        eq([(r["func"], r["rest"]) for r in text_rows(text)], [("move_pt", "")],
           "%s text: no return value for a void function" % binary)


def test_unnamed_parameters_never_take_a_name():
    """C23 unnamed parameters (tests/targets/unnamed.c, -std=gnu2x): un2(int
    param1, int) got "param1" for its second parameter too, so JSON had two
    "param1" keys and CSV one column holding 222 (111 lost).  An unnamed
    parameter is "#I" (its position from 0), which no C name can be."""
    res = trace(["un2", "un3"], launch=[target("unnamed")], fmt="json")
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, "un2=112 un3=42\n", "program output")
    for line in res.text.splitlines():
        pairs = json.loads(line, object_pairs_hook=lambda p: p)
        args = dict(pairs)["args"]
        keys = [k for k, _ in args]
        eq(len(keys), len(set(keys)), "no duplicate keys in %r" % args)
    got = {r["func"]: dict(r["args"]) for r in res.rows}
    eq(got, {"un2": {"param1": 111, "#1": 222}, "un3": {"#0": 7, "b": 21, "#2": 9}},
       "every parameter, the unnamed ones by position")
    res = trace(["un2", "un3"], launch=[target("unnamed")], fmt="csv", extra=["--csv", "wide"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    rows = list(csv.reader(io.StringIO(res.text, newline="")))
    eq(rows[0][len(TYPED_COLUMNS):], ["args.param1", "args.#1", "args.#0", "args.b", "args.#2",
                                      "truncated", "faults", "unavailable"], "CSV header")
    cells = {r["func"]: {k: v for k, v in r["typed"].items() if k.startswith("args.") and v}
             for r in res.rows}
    eq(cells, {"un2": {"args.param1": "111", "args.#1": "222"},
               "un3": {"args.#0": "7", "args.b": "21", "args.#2": "9"}},
       "CSV: one column each, 111 kept")
    res = trace(["un2"], launch=[target("unnamed")], fmt="text")
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    check("un2(param1=111, #1=222) = 112" in res.text, "text: %r" % res.text)


def test_struct_pieces_of_shifted_registers():
    """clang -gdwarf-4 -O2 passes struct small {int32 a; int16 b; uint8 c;
    long d} in rdi:rsi and describes s.b as "breg5 0; constu 32; shr;
    stack_value; piece 2": the shift was dropped when a DW_OP_piece followed
    DW_OP_stack_value, and b read as rdi's low half (-5, a's bits)."""
    text, _ = trace_typed("typed_clang_dwarf4", ["small_byval"])
    (r,) = json_records(text)
    eq((r["args"], r["retval"]), ({"s": SMALL_S}, -1234567889578), "small_byval")


def test_unused_parameters_of_a_clang_build_are_optimized_out():
    """clang -O2: main calls un2(111, 222) and un3(7, 21, 9) without
    setting the registers of the parameters the callees never use (LLVM's
    dead argument elimination), and DWARF gives those no location.  They
    were read from their ABI registers anyway: whatever was left there
    (un3's #0 showed un2's 111)."""
    res = trace(["un2", "un3"], launch=[target("unnamed_clang")], fmt="json")
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, "un2=112 un3=42\n", "program output")
    gone = "<unavailable: optimized out>"
    got = {r["func"]: (dict(r["args"]), r["retval"]) for r in res.rows}
    eq(got, {"un2": ({"param1": 111, "#1": gone}, 112),
             "un3": ({"#0": gone, "b": 21, "#2": gone}, 42)},
       "the used parameters' values, the unused ones optimized out")


def test_struct_pieces_converted_in_dwarf5():
    """clang's DWARF 5 truncates each member of a struct passed in
    registers with DW_OP_convert (breg5 0; constu 32; shr; convert u64;
    convert u16; stack_value; piece 2): the whole location was unsupported,
    and --locals said s was optimized out where its DWARF 4 twin read it.
    small_byval's return line runs twice a call (BARRIER's in between): at
    the first site a and b are in rdi (clang 14 leaves c's byte empty), at
    the second only c (rdi shifted by then) and d."""
    with open(os.path.join(os.path.dirname(__file__), "..", "targets", "typed.c")) as f:
        line = f.read().splitlines().index("\treturn s.a + s.b + s.c + s.d;") + 1
    gone = "<unavailable: optimized out>"
    for binary in ("typed_clang", "typed_clang_dwarf4"):
        text, _ = trace_typed(binary, [], extra=["--line", "typed.c:%d" % line, "--locals"])
        eq([r["args"] for r in json_records(text)],
           [{"s": {"a": -5, "b": 300, "c": gone, "d": -1234567890123}},
            {"s": {"a": gone, "b": gone, "c": 250, "d": -1234567890123}}],
           "%s: s at each run of the line" % binary)


SMALL_S = {"a": -5, "b": 300, "c": 250, "d": -1234567890123}


def test_entry_reads_what_dwarf_leaves_out_from_the_abi():
    """clang 14 describes small_byval's s at its entry with an empty piece
    for c's byte (rdi holds it there, bits 48..55).  At the entry the ABI
    location is exact: the bytes DWARF leaves out are read from it (c was
    "optimized out"); the --line test above keeps DWARF's word elsewhere."""
    for binary in ("typed_clang", "typed_clang_dwarf4"):
        text, _ = trace_typed(binary, ["small_byval"])
        (r,) = json_records(text)
        eq((r["args"], r["retval"]), ({"s": SMALL_S}, -1234567889578), "%s small_byval" % binary)


def test_entry_never_reads_a_part_the_caller_did_not_pass():
    """second_of(struct pt p) reads only p.y: clang -O2's caller sets rsi
    (22) and leaves rdi as it was, and DWARF gives p.x an empty piece.  An
    empty piece is read from the ABI location only where DWARF reads some
    other part of the same register (the callee uses it, so the caller
    passed all of it): p.x stays optimized out; gcc's caller passes both."""
    for binary, x in (("typed_clang", "<unavailable: optimized out>"), ("typed_O2", 11)):
        text, _ = trace_typed(binary, ["second_of"], args=("half",))
        (r,) = json_records(text)
        eq((r["args"], r["retval"]), ({"p": {"x": x, "y": 22}}, 22), "%s second_of" % binary)


def test_class_declared_here_defined_in_another_unit():
    """shop::Item's key function is in keyfunc_def.cpp, so g++ and clang
    describe the class there only; where bill() takes it, its type is a
    declaration (DW_AT_declaration), and both parameters were shown as bare
    addresses.  The definition is found in the other unit by its qualified
    name."""
    for binary, vptr in (("keyfunc", "_vptr.Item"), ("keyfunc_clang", "_vptr$Item")):
        res = trace(["bill"], launch=[target(binary)], fmt="json")
        eq((res.code, res.stdout), (0, "bill 1750\n"), "%s: exit status and output (%s)"
           % (binary, res.stderr))
        (r,) = [json.loads(l) for l in res.text.splitlines()]
        args = r["args"]
        for name in ("it", "other"):
            check(isinstance(args[name], dict) and re.match(r"^0x[0-9a-f]+$", args[name].get(vptr, "")),
                  "%s: %s is the class, its vtable pointer first: %r" % (binary, name, args[name]))
            args[name].pop(vptr)
        eq((args, r["retval"]), ({"it": {"id": 7, "price": 250}, "other": {"id": 8, "price": 1000},
                                  "n": 3}, 1750), "%s: bill's arguments and value" % binary)
