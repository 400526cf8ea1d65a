"""What a user reads back from a capture store (issue 7): untyped functions
keep their registers, exports carry every --capture, `cmon show` prints
arrays as numbers and strings as text."""
import csv
import io
import json
import os
import re

from cmonlib import check, cmon, eq, funcs_args, run, target, tmpfile
from test_capture import show as _show

S_TEXT = 'hi "q"\n\u00e9\u00ff'   # greet's s in typed.c (its \xff as U+00FF)
BUF13_HEX = "68690a00ff0102030405060780"
V1 = [1, -2, 3, 40000, -5]
V2 = [7, 8, 9]


def _capture(binary, out, funcs, captures):
    cmd = ["capture", "-o", out] + funcs_args(funcs)
    for c in captures:
        cmd += ["--capture", c]
    code, stdout, err = cmon(cmd + ["--", target(binary), "all"])
    eq(code, 0, "cmon %s: exit status (%s)" % (" ".join(cmd), err.strip()))
    check("events lost: 0" in err, "events lost: %r" % err)
    m = re.search(r"^cmon: capturing to (.+)$", err, re.M)
    check(m, "no 'capturing to' line in %r" % err)
    return m.group(1)


def _has(lines, wants, what):
    for w in wants:
        check(w in lines, "%s: %r not in:\n%s" % (what, w, "\n".join(lines)))


def _tables(store, fmt):
    out_dir = tmpfile("tables-" + fmt + "-" + os.path.basename(store))
    code, _, err = cmon(["export", store, "-F", fmt, "-o", out_dir])
    eq(code, 0, "cmon export -F %s (%s)" % (fmt, err.strip()))

    def table(func):
        path = os.path.join(out_dir, func + (".csv" if fmt == "csv" else ".jsonl"))
        with open(path, newline="") as f:
            text = f.read()
        if fmt == "csv":
            rows = list(csv.reader(io.StringIO(text, newline="")))
            return [dict(zip(rows[0], r)) for r in rows[1:]], rows[0]
        recs = [_flat(json.loads(l)) for l in text.splitlines()]
        return recs, list(recs[0].keys()) if recs else []
    return table


def _flat(rec):
    """A JSON record with its parameters and captures named as CSV names
    them (args.NAME, captures.NAME), in the record's order."""
    out = {}
    for k, v in rec.items():
        if k in ("args", "captures"):
            out.update(("%s.%s" % (k, n), x) for n, x in v.items())
        else:
            out[k] = v
    return out


def test_capture_untyped_keeps_registers():
    """A function without DWARF keeps arg0..arg5 and the return register in
    the store, as trace shows them; its captures are kept too."""
    store = _capture("typed_nodwarf", tmpfile("nodwarf"), ["greet", "sum_buf"],
                     ["s=arg0:str", "data=arg0:arg1"])
    code, out, err = cmon(["ls", store])
    eq(code, 0, "cmon ls (%s)" % err.strip())
    sig = "long greet(long arg0, long arg1, long arg2, long arg3, long arg4, long arg5)"
    check(re.search(r"^greet\s+typed_nodwarf\s+1\s+%s  \[untyped: raw registers\]$"
                    % re.escape(sig), out, re.M), "greet's raw signature in:\n%s" % out)
    lines = _show(store, "greet", 1)
    _has(lines, ["arguments  6", "  arg1 (long) = 0", "ret        (long) 10",
                 '  s  |S1 [10] = "hi \\"q\\"\\n\u00e9\\u00ff"'], "show greet 1")
    check(any(re.match(r"  arg0 \(long\) = [1-9][0-9]+$", l) for l in lines),
          "greet's arg0 (a pointer) in:\n%s" % "\n".join(lines))
    lines = _show(store, "sum_buf", 1)
    _has(lines, ["arguments  6", "  arg1 (long) = 13", "ret        (long) 630",
                 "  data  |u1 [13]  13 bytes",
                 "    hex  68 69 0a 00 ff 01 02 03 04 05 06 07 80"], "show sum_buf 1")
    for fmt in ("csv", "json"):
        rows, head = _tables(store, fmt)("sum_buf")
        cols = ["arg0", "arg1", "arg2", "arg3", "arg4", "arg5"]
        eq(head[7:13], cols, "sum_buf %s columns" % fmt)
        eq(len(rows), 1, "sum_buf %s rows" % fmt)
        r = rows[0]
        want = {"ret": 630, "arg1": 13, "captures.data": BUF13_HEX}
        if fmt == "csv":
            want = {k: str(v) for k, v in want.items()}
        eq({k: r[k] for k in want}, want, "sum_buf %s row" % fmt)


def test_export_includes_captures():
    """`cmon export -F csv|json`: one column per --capture: a :str capture as
    text, an array as a JSON array, bytes as hex."""
    store = _capture("typed_O2", tmpfile("caps"), ["greet", "sum_buf", "sum_ints"],
                     ["text=s:str", "data=buf:len", "v=values[n]"])
    for fmt in ("csv", "json"):
        table = _tables(store, fmt)
        # trace's names (args.NAME, captures.NAME), in CSV after its 16
        # columns (JSON: trace's nesting, "args" then "retval", "captures")
        a, c = "args.", "captures."

        def named(head):
            at = 16 if fmt == "csv" else 0
            return [h for h in head[at:] if h.startswith((a, c))]
        at = 0
        rows, head = table("greet")
        head = named(head)
        eq(head[at:at + 3], [a + "s", a + "none", c + "text"], "greet %s columns" % fmt)
        eq(rows[0][c + "text"], S_TEXT, "greet text (%s)" % fmt)
        rows, head = table("sum_buf")
        head = named(head)
        eq(head[at:at + 3], [a + "buf", a + "len", c + "data"], "sum_buf %s columns" % fmt)
        eq(rows[0][c + "data"], BUF13_HEX, "sum_buf data (%s)" % fmt)
        rows, head = table("sum_ints")
        head = named(head)
        eq(head[at:at + 3], [a + "values", a + "n", c + "v"], "sum_ints %s columns" % fmt)
        got = [r[c + "v"] if fmt == "json" else json.loads(r[c + "v"]) for r in rows]
        eq(got, [V1, V2], "sum_ints v (%s)" % fmt)


def test_export_chrome_includes_captures():
    """`cmon export STORE -F chrome` carries the --capture values as
    "captures" in each event's args, as `trace -F chrome` does (they were
    left out); a capture the call does not have (a NULL pointer) is null."""
    caps = ["text=s:str", "data=buf:len", "v=values[n]", "nil=none:str"]
    funcs = ["greet", "sum_buf", "sum_ints"]
    store = _capture("typed_O2", tmpfile("chromecaps"), funcs, caps)
    out = tmpfile("chromecaps.json")
    code, _, err = cmon(["export", store, "-F", "chrome", "-o", out])
    eq(code, 0, "cmon export -F chrome (%s)" % err.strip())
    with open(out) as f:
        exported = [e for e in json.load(f) if e["ph"] == "X"]
    path = tmpfile("chromecaps-trace.json")
    cmd = ["trace", "-q", "-F", "chrome", "-o", path] + funcs_args(funcs)
    for c in caps:
        cmd += ["--capture", c]
    code, _, err = cmon(cmd + ["--", target("typed_O2"), "all"])
    eq(code, 0, "cmon trace -F chrome (%s)" % err.strip())
    with open(path) as f:
        traced = [e for e in json.load(f) if e["ph"] == "X"]

    def captures(events):   # (the pointers differ from run to run)
        return sorted((e["name"], json.dumps(e["args"].get("captures"), sort_keys=True))
                      for e in events)
    eq(captures(exported), captures(traced), "export's chrome captures are trace's")
    by_name = {}
    for e in exported:
        by_name.setdefault(e["name"], []).append(e["args"].get("captures"))
    eq(by_name["greet"], [{"text": S_TEXT, "nil": None}], "greet's captures")
    eq(by_name["sum_buf"], [{"data": BUF13_HEX}], "sum_buf's captures")
    eq(sorted(c["v"] for c in by_name["sum_ints"]), sorted([V1, V2]), "sum_ints' captures")


def test_show_arrays_as_numbers():
    """`cmon show`: arrays as numbers with their dtype, strings as text, hex
    only for raw bytes."""
    store = _capture("typed_O2", tmpfile("showarr"), ["greet", "sum_buf", "sum_ints"],
                     ["text=s:str", "data=buf:len", "v=values[n]"])
    _has(_show(store, "sum_ints", 1), ["  v  <i4 [5] = [1, -2, 3, 40000, -5]"], "show sum_ints 1")
    _has(_show(store, "sum_ints", 2), ["  v  <i4 [3] = [7, 8, 9]"], "show sum_ints 2")
    _has(_show(store, "greet", 1), ['  text  |S1 [10] = "hi \\"q\\"\\n\u00e9\\u00ff"'],
         "show greet 1")
    _has(_show(store, "sum_buf", 1), ["  data  |u1 [13]  13 bytes",
                                      "    hex  68 69 0a 00 ff 01 02 03 04 05 06 07 80"],
         "show sum_buf 1")


def _build_id(path):
    code, out, _ = run(["readelf", "-n", path])
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(code == 0 and m, "readelf -n %s: %r" % (path, out))
    return m.group(1)


def test_store_build_id_of_every_file():
    """The store records the build-id of the executable even when it has no
    symbols (a stripped program tracing libc), and of every traced file."""
    out = tmpfile("bid")
    code, _, err = cmon(["capture", "-o", out, "--func", "libc.so.6:printf", "--",
                         target("calls_stripped"), "calls"])
    eq(code, 0, "cmon capture (%s)" % err.strip())
    code, text, err = cmon(["ls", out])
    eq(code, 0, "cmon ls (%s)" % err.strip())
    lines = text.splitlines()
    _has(lines, ["build-id    %s" % _build_id(target("calls_stripped"))], "cmon ls")
    m = re.search(r"^files       ([0-9a-f]+)\s+(\S*libc\.so\.6)$", text, re.M)
    check(m, "no files line for libc in:\n%s" % text)
    eq(m.group(1), _build_id(m.group(2)), "libc's build-id")


def test_ls_signature_valid_c():
    """Signatures print as C declarations: a pointer to arrays is
    `const double (*mat)[2]`, not `const double (*)[2] mat`."""
    store = _capture("typed_O0", tmpfile("sigc"), ["trace2", "greet"], [])
    code, out, err = cmon(["ls", store])
    eq(code, 0, "cmon ls (%s)" % err.strip())
    for rx in [r"^trace2\s+typed_O0\s+1\s+double trace2\(const double \(\*mat\)\[2\], int n\)$",
               r"^greet\s+typed_O0\s+1\s+size_t greet\(const char \*s, const char \*none\)$"]:
        check(re.search(rx, out, re.M), "no line matching %r in:\n%s" % (rx, out))


def test_truncated_at_max_strlen():
    """A cut string is flagged in "truncated" at the largest --strlen and
    --capture-max too; a string of exactly that length is whole."""
    max_strlen, max_capture = 262143, 262144
    for n, want_trunc in [(max_strlen, None), (max_strlen + 1, ["s"]),
                          (max_capture + 1, ["s", "t"])]:
        path = tmpfile("long-%d.json" % n)
        code, out, err = cmon(["trace", "-q", "-F", "json", "-o", path, "--func", "greet",
                               "--strlen", str(max_strlen), "--capture", "t=s:str",
                               "--capture-max", str(max_capture), "--",
                               target("typed_O0"), "long", str(n)])
        eq(code, 0, "cmon trace (%s)" % err.strip())
        eq(out, "long len=%d\n" % n, "program output")
        with open(path) as f:
            recs = [json.loads(l) for l in f]
        eq(len(recs), 1, "records")
        r = recs[0]
        eq((len(r["args"]["s"]), len(r["captures"]["t"]), r.get("truncated")),
           (min(n, max_strlen), min(n, max_capture), want_trunc), "string of %d" % n)
        check(set(r["args"]["s"]) == {"x"}, "s is all 'x'")


def test_cut_capture_stored_with_the_shape_kept():
    """A capture cut at --capture-max is stored with the shape of what was
    kept (and truncated): libcmon checks that a blob's shape fits its bytes,
    so a cut capture must read back whole, as its kept elements."""
    store = tmpfile("cut-shape")
    code, _, err = cmon(["capture", "-q", "-o", store, "--func", "sum_ints", "--capture",
                         "v=values[n]", "--capture-max", "8", "--",
                         target("typed_O2"), "all"])
    eq(code, 0, "capture (%s)" % err.strip())
    lines = _show(store, "sum_ints", 1)
    check("  v  <i4 [2] = [1, -2]  (truncated)" in lines, "\n".join(lines))
    out_dir = tmpfile("cut-shape-calls")
    code, _, err = cmon(["export", store, "--per-call", out_dir])
    eq(code, 0, "export (%s)" % err.strip())
    with open(os.path.join(out_dir, "sum_ints", "1", "args.json")) as f:
        a = json.load(f)
    eq([(b["name"], b["dtype"], b["shape"], b["truncated"], b["bytes"]) for b in a["blobs"]],
       [("v", "<i4", [2], True, 8)], "the cut capture's blob")
    store2 = tmpfile("cut-shape-str")
    code, _, err = cmon(["capture", "-q", "-o", store2, "--func", "greet", "--capture",
                         "t=s:str", "--capture-max", "4", "--", target("typed_O2"), "all"])
    eq(code, 0, "capture (%s)" % err.strip())
    out_dir = tmpfile("cut-shape-str-calls")
    code, _, err = cmon(["export", store2, "--per-call", out_dir])
    eq(code, 0, "export (%s)" % err.strip())
    with open(os.path.join(out_dir, "greet", "1", "args.json")) as f:
        a = json.load(f)
    eq([(b["name"], b["dtype"], b["shape"], b["truncated"], b["bytes"]) for b in a["blobs"]],
       [("t", "|S1", [4], True, 4)], "the cut string capture's blob")


def _hist(funcs, hist, extra=(), binary="calls", args=("calls",)):
    from test_profile import by_func, final_rows, hist_of, parse_profile_json, profile
    code, out, err, text = profile(funcs, launch=[target(binary)] + list(args),
                                   extra=["--hist", hist] + list(extra))
    eq(code, 0, "cmon profile --hist %s (%s)" % (hist, err.strip()))
    rows = by_func(final_rows(parse_profile_json(text)))
    return {f: hist_of(r) for f, r in rows.items()}


def test_profile_hist_sign_and_width():
    """--hist reads an argument at its DWARF type: add(-7, 4)'s int a is -7,
    in range of --hist-linear -10,10,1; by position, by name, and ret."""
    lin = ["--hist-linear", "-10,10,1"]
    for spec in ("0", "arg0", "a"):
        buckets, h = _hist(["add"], spec, lin)["add"]
        eq(buckets, [(-7, -7, 1), (2, 2, 1)], "add --hist %s: a is 2 then -7" % spec)
        eq((h["out_of_range"], h["type"], h["value"]), (0, "int", spec), "--hist %s" % spec)
    buckets, h = _hist(["add"], "ret", lin)["add"]
    eq(buckets, [(-3, -3, 1), (5, 5, 1)], "add --hist ret: 5 then -3")
    eq((h["arg"], h["out_of_range"]), (None, 0), "--hist ret settings")
    # log2 buckets hold values >= 0: the -7 is out of range, not 2^32 - 7.
    buckets, h = _hist(["add"], "a")["add"]
    eq((buckets, h["out_of_range"]), ([(2, 3, 1)], 1), "add --hist a, log2: 2, and -7 out")


def test_profile_hist_errors():
    """A name no traced function has, or one functions disagree on, is one
    error line and exit 1 (bad input); a malformed one exit 2 (usage)."""
    for funcs, hist, needle, status in [(["add"], "nosuch", "add has no such parameter", 1),
                                        (["add", "negate"], "ret", "differ", 1),
                                        (["add"], "9x", "invalid --hist", 2)]:
        args = ["profile"] + funcs_args(funcs) + ["--hist", hist, "--", target("calls"),
                                                   "calls"]
        code, out, err = cmon(args)
        lines = [l for l in err.splitlines() if l]
        eq(len(lines), 1, "one error line for --hist %s: %r" % (hist, lines))
        check(needle in lines[0], "%r in %r" % (needle, lines[0]))
        eq(code, status, "exit status for --hist %s" % hist)


def test_agent_arg_sign_name_and_ret():
    """The agent's `arg` reads the argument at its C type (as --hist): add's
    int a = -7 is <= 0, not 4294967289; `arg: a` and `arg: ret` work."""
    from agentlib import Agent, run_target, value, write_spec
    app = target("calls")
    spec = tmpfile("argspec.yaml")
    write_spec(spec, [
        {"name": "byname", "target": app, "func": "add", "instrument": "arg", "arg": "a"},
        {"name": "bynum", "target": app, "func": "add", "instrument": "arg", "arg": 0},
        {"name": "byret", "target": app, "func": "add", "instrument": "arg", "arg": "ret"},
    ])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"byname": "applied", "bynum": "applied", "byret": "applied"})
        run_target(app, "calls")   # add(2, 3) = 5, add(-7, 4) = -3
        m = a.metrics()
        for probe in ("byname", "bynum"):
            metric = "cmon_%s_arg_bucket" % probe
            got = [value(m, metric, probe=probe, le=le) for le in ("0", "1", "3", "4294967295")]
            eq(got, [1, 1, 2, 2], "%s buckets le=0,1,3,2^32-1 (a = 2 and -7)" % probe)
            eq(value(m, "cmon_%s_arg_count" % probe, probe=probe), 2, "%s count" % probe)
        got = [value(m, "cmon_byret_arg_bucket", probe="byret", le=le) for le in ("0", "3", "7")]
        eq(got, [1, 1, 2], "byret buckets le=0,3,7 (ret = 5 and -3)")
    finally:
        eq(a.stop(), 0, "agent exit status")
    code, out, err = cmon(["agent", "--check", "--spec", spec])
    eq(code, 0, "cmon agent --check (%s)" % err.strip())


def _trace_json(binary, funcs, extra=()):
    path = tmpfile("trace-%s.json" % binary)
    if os.path.exists(path):
        os.unlink(path)
    code, out, err = cmon(["trace", "-F", "json", "-o", path] + funcs_args(funcs) + list(extra)
                          + ["--", target(binary), "all"])
    eq(code, 0, "cmon trace (%s)" % err.strip())
    check(out.startswith("all total="), "program output: %r" % out)
    with open(path) as f:
        return [json.loads(l) for l in f], err


def test_floats_at_O0_every_return_mode():
    """-O0: every double parameter is read where the prologue stored it (the
    entry probe moves past the prologue), and returns still pair with their
    calls, recursion included, in every --return-probe mode."""
    for mode in ("auto", "uretprobe", "insn"):
        recs, err = _trace_json("typed_O0", ["scale", "halve"], ["--return-probe", mode])
        got = [(r["func"], r["status"], r["depth"], r["args"]) for r in recs]
        eq(got, [("scale", "ok", 0, {"x": 1.5, "n": 3}),
                 ("halve", "ok", 2, {"x": 2, "n": 0}),
                 ("halve", "ok", 1, {"x": 4, "n": 1}),
                 ("halve", "ok", 0, {"x": 8, "n": 2})], "--return-probe %s records" % mode)
        check(all(isinstance(r["latency_ns"], int) and r["latency_ns"] > 0 for r in recs),
              "latencies (%s): %r" % (mode, [r["latency_ns"] for r in recs]))
        check("events lost: 0" in err, "events lost (%s): %r" % (mode, err))
        # The double return values are in xmm0: counted in the summary.
        check("values unavailable: 4 " in err, "summary counts the 4 returns: %r" % err)


def test_floats_at_O2_unavailable_and_counted():
    """-O2: a double parameter stays in xmm0: the honest marker, counted in
    the summary."""
    recs, err = _trace_json("typed_O2", ["scale"])
    eq([r["args"] for r in recs], [{"x": "<unavailable: float in xmm0>", "n": 3}], "scale args")
    check("cmon: values unavailable: 2 (" in err, "summary counts x and the return: %r" % err)


def test_capture_errors_one_line():
    """A malformed --capture is one error line and exit 2 (usage), before
    anything is attached (it was two contradicting lines and exit 1); a
    name no traced function has is one line and exit 1 (bad input)."""
    for spec, needle, status in [("x", "expected NAME=PTR:LEN", 2),
                                 ("x=", "expected an argument name after '='", 2),
                                 ("=arg0:str", "bad name ''", 2),
                                 ("x=arg0:", "bad count ''", 2),
                                 ("x=arg0[", "expected NAME=PTR[COUNT]", 2),
                                 ("x=nosuch:str", "no traced function has the arguments", 1)]:
        for cmd in ("trace", "capture"):
            code, out, err = cmon([cmd, "--capture", spec, "--func", "add", "--",
                                   target("calls"), "calls"])
            lines = [l for l in err.splitlines() if l]
            eq(len(lines), 1, "%s --capture %s: one error line: %r" % (cmd, spec, lines))
            check(needle in lines[0], "%r in %r" % (needle, lines[0]))
            eq(code, status, "%s --capture %s: exit status" % (cmd, spec))


# A run's own values: the same calls in two runs differ in them.
_PER_RUN = {"ts_ns", "pid", "tid", "latency_ns", "latency_lt_ns", "rss_entry", "rss_exit",
            "vms_entry", "vms_exit"}
_REGISTERS = {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "ret"}


def _addresses_masked(v):
    """V with its pointers (a run's addresses, "0x...") as "0x"."""
    if isinstance(v, dict):
        return {k: _addresses_masked(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_addresses_masked(x) for x in v]
    return "0x" if isinstance(v, str) and re.match(r"0x[0-9a-f]+$", v) else v


def test_export_json_is_trace_json():
    """`export -F json` of a store writes trace -F json's lines: the same
    keys in the same order (args {NAME: value} nested, retval, captures;
    it wrote bare names, arg_n, and its own "n") and the same values for
    the same calls, plus "call", the call's number in the store.  The
    registers (arg0..arg5, ret) are null: a store keeps typed values, not
    registers; depth is null (a store keeps no nesting)."""
    funcs = ["eight", "chars", "greet", "nested", "paint", "sum_ints"]
    cap = ["--capture", "v=values[n]"]
    folder = os.path.dirname(tmpfile("x"))
    code, _, err = cmon(["trace", "-q", "-F", "json", "-o", os.path.join(folder, "tj.%f.jsonl")]
                        + funcs_args(funcs) + cap + ["--", target("typed_O2"), "all"])
    eq((code, err), (0, ""), "trace: exit status and stderr")
    store, out = tmpfile("tj-store"), tmpfile("tj-export")
    code, _, err = cmon(["capture", "-q", "-o", store] + funcs_args(funcs) + cap
                        + ["--", target("typed_O2"), "all"])
    eq(code, 0, "capture (%s)" % err)
    code, _, err = cmon(["export", store, "-F", "json", "-o", out])
    eq(code, 0, "export (%s)" % err)
    for f in funcs:
        with open(os.path.join(folder, "tj.%s.jsonl" % f)) as t:
            traced = [json.loads(l) for l in t]
        with open(os.path.join(out, f + ".jsonl")) as e:
            exported = [json.loads(l) for l in e]
        eq(len(exported), len(traced), "%s: calls" % f)
        check(traced, "%s: no calls traced" % f)
        for n, (t, e) in enumerate(zip(traced, exported), 1):
            eq(list(e), list(t) + ["call"], "%s call %d: the keys" % (f, n))
            same = [k for k in t if k not in _PER_RUN | _REGISTERS | {"depth"}]
            eq({k: _addresses_masked(e[k]) for k in same},
               {k: _addresses_masked(t[k]) for k in same}, "%s call %d: the values" % (f, n))
            eq(({k: e[k] for k in _REGISTERS}, e["depth"], e["call"]),
               ({k: None for k in _REGISTERS}, None, n), "%s call %d: registers, depth, call"
               % (f, n))
    with open(os.path.join(out, "sum_ints.jsonl")) as e:
        eq([(r["args"]["n"], r["retval"], r["captures"]) for r in map(json.loads, e)],
           [(5, 39997, {"v": V1}), (3, 24, {"v": V2})], "sum_ints' values")
