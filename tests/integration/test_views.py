"""Whole-run views of a trace (-F chrome, -F tree, -F folded) on
tests/targets/calls.c, whose calls are known exactly: recurse runs fact(5)
(fact(5) > fact(4) > ... > fact(1)) then outer(10) > middle(10) > leaf(10);
threads N M runs work(t, i) M times on each of N threads; longjmp leaves
jumper(7) by longjmp, then calls add(1, 1)."""
import json
import re

from cmonlib import RECURSE_OUT, LONGJMP_OUT, check, eq, target, trace

RECURSE_FUNCS = ["fact", "outer", "middle", "leaf"]
# (depth, func, args, return) in entry order
RECURSE_TREE = [(0, "fact", "n=5", "120"), (1, "fact", "n=4", "24"), (2, "fact", "n=3", "6"),
                (3, "fact", "n=2", "2"), (4, "fact", "n=1", "1"),
                (0, "outer", "x=10", "25"), (1, "middle", "x=10", "22"), (2, "leaf", "x=10", "11")]

TREE_LINE = re.compile(r"^( {10}|(?: *<?[0-9.]+ (?:us|ms| s)| +noreturn)) \[ *(\d+)\] \| ( *)(.*)$")


NOTES = re.compile(r"^(.*?) ?((?:captures|changed|truncated|faults)=.*)?$")


def parse_tree(text):
    """[(tid, depth, func, args, ret-or-None, duration-or-None, notes)] in line
    order; closing lines fill in the return, duration and notes (what ends
    the line that ends the call: "truncated=[...] ...") of the call they
    close."""
    lines = text.splitlines()
    eq(lines[0], "# DURATION     TID     FUNCTION", "tree header")
    calls, open_ = [], []
    for line in lines[1:]:
        if line.startswith("#"):
            continue
        m = TREE_LINE.match(line)
        check(m, "tree line does not parse: %r" % line)
        dur, tid, indent, body = m.group(1).strip(), int(m.group(2)), len(m.group(3)), m.group(4)
        check(indent % 2 == 0, "odd indent: %r" % line)
        depth = indent // 2
        if body.startswith("// at "):
            # --stack: a frame of the call whose line came last, one level in
            eq(depth, calls[-1]["depth"] + 1, "frame line indent: %r" % line)
            eq(m.group(1).strip(), "", "a frame line has no duration: %r" % line)
            calls[-1]["stack"].append(body[len("// at "):])
            continue
        if body.startswith("}"):
            c = open_.pop()
            eq(depth, c["depth"], "closing brace depth of %s" % c["func"])
            m2 = re.match(r"^\}(?: = (.*?))?; // (.*)$", body)
            check(m2, "closing line: %r" % line)
            func, notes = NOTES.match(m2.group(2)).groups()
            eq(func, c["func"], "closing comment")
            c["ret"], c["dur"], c["notes"] = m2.group(1), dur, notes
            continue
        m2 = re.match(r"^(\w+)\((.*?)\)(?: \{| = (.*?);(?: // (.*))?|;(?: // (.*))?)$", body)
        check(m2, "call line: %r" % line)
        comment = m2.group(4) or m2.group(5) or ""
        notes = NOTES.match(comment).group(2)
        c = {"tid": tid, "depth": depth, "func": m2.group(1), "args": m2.group(2),
             "ret": m2.group(3), "dur": dur or None, "notes": notes, "stack": []}
        calls.append(c)
        if body.endswith("{"):
            check(dur == "", "an opening line has no duration: %r" % line)
            open_.append(c)
    eq(open_, [], "blocks left open")
    return calls


def test_tree_nesting_matches_program():
    r = trace(RECURSE_FUNCS, [target(), "recurse"], fmt="tree")
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    eq(r.stdout, RECURSE_OUT, "program output")
    calls = parse_tree(r.text)
    eq([(c["depth"], c["func"], c["args"], c["ret"]) for c in calls], RECURSE_TREE,
       "tree (depth, func, args, return):\n%s" % r.text)
    for c in calls:
        check(c["dur"] and c["dur"].endswith("us"), "duration of %r" % c)
    # a caller lasts longer than its callee
    durs = [float(c["dur"].split()[0]) for c in calls[:5]]
    eq(durs, sorted(durs, reverse=True), "fact durations shrink with depth")


def test_tree_call_that_never_returns_in_place():
    """A function that never returns normally (fail: only longjmps) is
    printed where it was called, its callee under it; it was printed
    alone above its caller's block."""
    r = trace(["guarded", "fail", "leaf"], [target(), "fail"], fmt="tree")
    eq((r.code, r.stdout), (0, "guarded=101\n"), "exit status and output (%s)" % r.stderr)
    lines = r.text.splitlines()
    eq(lines[0], "# DURATION     TID     FUNCTION", "tree header")
    body = []
    for line in lines[1:]:
        m = TREE_LINE.match(line)
        check(m, "tree line does not parse: %r" % line)
        body.append(m.group(3) + m.group(4))
    eq(body, ["guarded(x=7) {", "  fail(x=7) {", "    leaf(x=7) = 8;",
              "  }; // fail, never returns", "  leaf(x=100) = 101;", "} = 101; // guarded"],
       "the tree:\n%s" % r.text)


def test_tree_threads_grouped():
    r = trace(["work"], [target(), "threads", "3", "4"], fmt="tree")
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    calls = parse_tree(r.text)
    eq(len(calls), 12, "calls in the tree")
    per_tid = {}
    for c in calls:
        eq(c["depth"], 0, "work calls nest in nothing traced")
        per_tid.setdefault(c["tid"], []).append(c)
    eq(len(per_tid), 3, "threads")
    for tid, cs in per_tid.items():
        t = int(re.match(r"thread=(\d+)", cs[0]["args"]).group(1))
        eq([c["args"] for c in cs], ["thread=%d, i=%d" % (t, i) for i in range(4)],
           "thread %d calls in entry order" % tid)
        eq([c["ret"] for c in cs], [str(t * 1000 + i) for i in range(4)], "returns")


def test_tree_hold_bound_cuts_with_note():
    import os
    os.environ["CMON_VIEW_HOLD_MAX"] = "3"
    try:
        r = trace(RECURSE_FUNCS, [target(), "recurse"], fmt="tree")
    finally:
        del os.environ["CMON_VIEW_HOLD_MAX"]
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    notes = [l for l in r.text.splitlines() if l.startswith("# note: thread ")]
    eq(len(notes), 1, "one cut note (fact 1..3 held, then printed):\n%s" % r.text)
    check("held 3 calls" in notes[0], notes[0])
    calls = parse_tree(r.text)
    # every call is still there once, with its own arguments and return
    eq(sorted((c["func"], c["args"], c["ret"]) for c in calls),
       sorted((f, a, ret) for _, f, a, ret in RECURSE_TREE), "calls after a cut")


def test_tree_marks_truncated_and_faults():
    """The line that ends a call says which of its values are not what the
    program held: a string cut at --strlen (it looked whole), a pointer the
    probe could not read (its null looked like a NULL pointer's)."""
    for binary in ("typed_O0", "typed_O2"):
        r = trace(["greet"], [target(binary), "long", "99"], extra=["--strlen", "20"],
                  fmt="tree")
        eq(r.code, 0, "exit status (%s)" % r.stderr)
        calls = parse_tree(r.text)
        eq([(c["func"], c["args"], c["ret"], c["notes"]) for c in calls],
           [("greet", 's="%s", none=null' % ("x" * 20), "99", 'truncated=["s"]')],
           "%s: greet cut at --strlen 20:\n%s" % (binary, r.text))
        r = trace(["badptr"], [target(binary), "bad"], fmt="tree")
        eq(r.code, 0, "exit status (%s)" % r.stderr)
        calls = parse_tree(r.text)
        eq([(c["args"], c["ret"], c["notes"]) for c in calls],
           [("s=null, o=null", "2", 'faults=["s","o"]'), ("s=null, o=null", "0", None)],
           "%s: unreadable pointers, then real NULLs:\n%s" % (binary, r.text))


def test_tree_captures_and_changes():
    """--capture values (cut at --capture-max: marked) and --capture-at
    both's changes end the call's line, as the text table shows them; the
    tree dropped them."""
    for binary in ("typed_O0", "typed_O2"):
        r = trace(["sum_ints", "sum_buf"], [target(binary), "all"],
                  extra=["--capture", "v=values[n]", "--capture", "data=buf:len",
                         "--capture-max", "12"], fmt="tree")
        eq(r.code, 0, "exit status (%s)" % r.stderr)
        eq([(c["func"], c["ret"], c["notes"]) for c in parse_tree(r.text)],
           [("sum_buf", "630",
             'captures={"data":"68690a00ff01020304050607"} truncated=["data"]'),
            ("sum_ints", "39997", 'captures={"v":[1,-2,3]} truncated=["v"]'),
            ("sum_ints", "24", 'captures={"v":[7,8,9]}')],  # 12 bytes: whole
           "%s: captures in the tree:\n%s" % (binary, r.text))
    r = trace(["deposit", "fill", "peek"], [target("mutate")], extra=["--capture-at", "both"],
              fmt="tree")
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    eq([(c["func"], c["notes"]) for c in parse_tree(r.text)],
       [("deposit", 'changed={"a->balance":[100,110]}'),
        ("deposit", 'changed={"a->balance":[110,130]}'),
        ("fill", 'changed={"buf":["","hello"]}'), ("peek", None)],
       "--capture-at both in the tree:\n%s" % r.text)


def test_tree_and_chrome_show_stack():
    """--stack: the tree lists each call's frames under its first line
    ("// at FRAME"), chrome puts them in the event's args as "stack", as
    -F json does.  Both dropped them without a word."""
    r = trace(["outer", "middle", "leaf"], [target("calls_fp"), "recurse"], fmt="tree",
              extra=["--stack"])
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    calls = parse_tree(r.text)
    # frames in calls_fp itself (libc's below main may show as an address)
    eq([(c["depth"], c["func"], [f.split("+")[0] for f in c["stack"] if "(calls_fp)" in f])
        for c in calls],
       [(0, "outer", ["outer", "run", "main"]), (1, "middle", ["middle", "outer", "run", "main"]),
        (2, "leaf", ["leaf", "middle", "outer", "run", "main"])],
       "tree frames:\n%s" % r.text)
    eq(calls[2]["stack"][0], "leaf+0x0 (calls_fp)", "the function itself, at its entry")
    eq([c["ret"] for c in calls], ["25", "22", "11"], "returns on the closing lines")
    xs = _chrome_calls(["leaf"], [target("calls_fp"), "recurse"], ["--stack"])
    eq(len(xs), 1, "one leaf event")
    st = xs[0]["args"]["stack"]
    eq([f.split("+")[0] for f in st[:5]], ["leaf", "middle", "outer", "run", "main"],
       "chrome: innermost first: %r" % st)
    eq(st[0], "leaf+0x0 (calls_fp)", "chrome: the function itself")
    check("stack" not in _chrome_calls(["leaf"], [target("calls_fp"), "recurse"])[0]["args"],
          "no stack without --stack")


def test_folded_stacks_by_self_time():
    # Raw latencies: a leaf's own time after the probe's cost is taken out
    # can be 0 ns, and a stack of weight 0 is not written.
    r = trace(RECURSE_FUNCS, [target(), "recurse"], fmt="folded", extra=["--raw-latency"])
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    stacks = {}
    for line in r.text.splitlines():
        stack, w = line.rsplit(" ", 1)
        stacks[stack] = int(w)
    want = ["calls;fact", "calls;fact;fact", "calls;fact;fact;fact", "calls;fact;fact;fact;fact",
            "calls;fact;fact;fact;fact;fact", "calls;outer", "calls;outer;middle",
            "calls;outer;middle;leaf"]
    eq(sorted(stacks), want, "stacks")
    eq(list(stacks), want, "sorted by stack")
    for s, w in stacks.items():
        check(0 < w < 10**9, "self ns of %s: %d" % (s, w))


def load_chrome(text):
    check(text.endswith("\n]\n"), "chrome file ends with ]: %r" % text[-20:])
    events = json.loads(text)
    check(isinstance(events, list), "chrome trace is a JSON array")
    return events


def test_chrome_events_match_calls():
    r = trace(RECURSE_FUNCS + ["add"], [target(), "recurse"], fmt="chrome")
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    events = load_chrome(r.text)
    xs = [e for e in events if e["ph"] == "X"]
    got = sorted((e["name"], json.dumps(e["args"], sort_keys=True)) for e in xs)
    want = sorted((f, json.dumps({"args": {a.split("=")[0]: int(a.split("=")[1])},
                                  "return": int(ret)}, sort_keys=True))
                  for _, f, a, ret in RECURSE_TREE)
    eq(got, want, "X events (name, args)")
    pids = {e["pid"] for e in xs}
    eq(len(pids), 1, "one process")
    pid = pids.pop()
    for e in xs:
        eq(e["cat"], "ok", "cat of %s" % e["name"])
        eq(e["tid"], pid, "tid (single-threaded)")
        # dur is the function's own time: a one-line fact(1) can read 0
        check(e["dur"] >= 0 and e["ts"] > 1.6e15, "ts/dur in us: %r" % e)
    # nesting by time: every fact(n) lies inside fact(n+1)
    facts = {e["args"]["args"]["n"]: e for e in xs if e["name"] == "fact"}
    for n in range(1, 5):
        inner, outer = facts[n], facts[n + 1]
        check(outer["ts"] <= inner["ts"] and
              inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 0.001,
              "fact(%d) inside fact(%d)" % (n, n + 1))
    meta = [(e["name"], e["args"]["name"]) for e in events if e["ph"] == "M"]
    eq(meta, [("process_name", "calls"), ("thread_name", "calls")], "metadata events")
    counters = [e for e in events if e["ph"] == "C"]
    check(counters, "memory counters")
    for e in counters:
        eq(e["name"], "memory", "counter name")
        eq(e["pid"], pid, "counter pid")
        check(e["args"]["rss"] > 100000 and e["args"]["vms"] >= e["args"]["rss"],
              "rss/vms: %r" % e)


def test_chrome_noreturn_marked():
    r = trace(["jumper", "add"], [target(), "longjmp"], fmt="chrome")
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    eq(r.stdout, LONGJMP_OUT, "program output")
    xs = [e for e in load_chrome(r.text) if e["ph"] == "X"]
    eq(sorted((e["name"], e["cat"], e["dur"], json.dumps(e["args"], sort_keys=True))
              for e in xs),
       [("add", "ok", xs[[e["name"] for e in xs].index("add")]["dur"],
         json.dumps({"args": {"a": 1, "b": 1}, "return": 2}, sort_keys=True)),
        ("jumper", "noreturn", 0, json.dumps({"args": {"x": 7}}))], "events")


def test_chrome_param_named_like_a_key():
    """A parameter named "captures" (typed.c's clash(int captures, v, n)),
    traced with --capture: the parameters are nested under "args", so
    neither they nor cmon's "captures" and "return" are lost to a duplicate
    key (JSON readers keep the last)."""
    for binary in ("typed_O0", "typed_O2"):
        r = trace(["clash"], [target(binary), "clash"], extra=["--capture", "w=v[n]"],
                  fmt="chrome")
        eq(r.code, 0, "%s exit status (%s)" % (binary, r.stderr))
        dup = []

        def pairs(kv):
            keys = [k for k, _ in kv]
            dup.extend(k for k in set(keys) if keys.count(k) > 1)
            return dict(kv)
        xs = [e for e in json.loads(r.text, object_pairs_hook=pairs) if e["ph"] == "X"]
        eq(dup, [], "%s: duplicate keys in %r" % (binary, r.text))
        a = xs[0]["args"]
        eq(len(xs), 1, "%s: one clash event" % binary)
        eq((a["args"]["captures"], a["args"]["n"], a["captures"], a["return"]),
           (99, 3, {"w": [4, 5, 6]}, 114), "%s: clash args" % binary)


def _chrome_calls(funcs, launch, extra=()):
    r = trace(funcs, launch, extra=list(extra), fmt="chrome")
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    return [e for e in load_chrome(r.text) if e["ph"] == "X"]


def test_chrome_marks_truncated_and_faults():
    """Beside "captures": "truncated" (a string cut at --strlen, a capture
    cut at --capture-max) and "faults" (a pointer the probe could not read:
    null, but not a NULL pointer), as -F json has them.  They were lost."""
    for binary in ("typed_O0", "typed_O2"):
        (e,) = _chrome_calls(["greet"], [target(binary), "long", "99"], ["--strlen", "20"])
        eq(e["args"], {"args": {"s": "x" * 20, "none": None}, "return": 99,
                       "truncated": ["s"]}, "%s: greet cut at --strlen 20" % binary)
        xs = _chrome_calls(["badptr"], [target(binary), "bad"])
        eq([e["args"] for e in xs],
           [{"args": {"s": None, "o": None}, "return": 2, "faults": ["s", "o"]},
            {"args": {"s": None, "o": None}, "return": 0}],
           "%s: unreadable pointers, then real NULLs" % binary)
        (e,) = _chrome_calls(["sum_buf"], [target(binary), "all"],
                             ["--capture", "data=buf:len", "--capture-max", "8"])
        eq((e["args"]["captures"], e["args"]["truncated"]),
           ({"data": "68690a00ff010203"}, ["data"]), "%s: a capture cut at 8 bytes" % binary)


def test_chrome_capture_at_both():
    """--capture-at both: the event's args hold "at_return" and "changed"
    as -F json has them (they were dropped)."""
    acct = {"id": 7, "owner": "ann"}
    xs = _chrome_calls(["deposit", "fill", "peek"], [target("mutate")], ["--capture-at", "both"])
    eq([(e["name"], e["args"]) for e in xs],
       [("deposit", {"args": {"a": dict(acct, balance=100), "amount": 10}, "return": 110,
                     "at_return": {"a": dict(acct, balance=110)},
                     "changed": {"a->balance": [100, 110]}}),
        ("deposit", {"args": {"a": dict(acct, balance=110), "amount": 20}, "return": 130,
                     "at_return": {"a": dict(acct, balance=130)},
                     "changed": {"a->balance": [110, 130]}}),
        ("fill", {"args": {"buf": "", "n": 16}, "return": 5, "at_return": {"buf": "hello"},
                  "changed": {"buf": ["", "hello"]}}),
        ("peek", {"args": {"a": dict(acct, balance=130)}, "return": 130,
                  "at_return": {"a": dict(acct, balance=130)}, "changed": {}})],
       "events of mutate")


def test_chrome_threads_named_and_counted():
    r = trace(["work"], [target(), "threads", "3", "5"], fmt="chrome")
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    events = load_chrome(r.text)
    xs = [e for e in events if e["ph"] == "X"]
    eq(len(xs), 15, "X events")
    tids = {e["tid"] for e in xs}
    eq(len(tids), 3, "threads")
    names = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name"]
    eq(sorted(e["tid"] for e in names), sorted(tids), "one thread_name per thread")
    eq(sorted(e["args"]["args"]["i"] for e in xs), sorted(list(range(5)) * 3), "i arguments")


def test_view_format_refused_by_profile():
    from cmonlib import cmon
    code, out, err = cmon(["profile", "-F", "tree", "--func", "add", "--", target(), "calls"])
    eq(code, 2, "exit status")
    check("unknown format 'tree'" in err and len(err.strip().splitlines()) == 1, err)


def _capture(name, funcs, launch):
    from cmonlib import cmon, funcs_args, tmpfile
    # Raw latencies: folded weights (self time) stay > 0 for leaves.
    code, out, err = cmon(["capture", "--raw-latency", "-o", tmpfile(name)] + funcs_args(funcs)
                          + ["--"] + launch)
    eq(code, 0, "capture exit status (%s)" % err)
    return re.search(r"^cmon: capturing to (.+)$", err, re.M).group(1)


def _export(store, fmt, extra=()):
    from cmonlib import cmon, read_text, tmpfile
    path = tmpfile("export.%s" % fmt)
    code, out, err = cmon(["export", store] + list(extra) + ["-o", path] +
                          ([] if extra else ["-F", fmt]))
    eq(code, 0, "export exit status (%s)" % err)
    check("cmon: exported " in err, err)
    return read_text(path)


def test_export_tree_folded_chrome_from_store():
    store = _capture("run", RECURSE_FUNCS, [target(), "recurse"])
    calls = parse_tree(_export(store, "tree"))
    eq([(c["depth"], c["func"], c["args"], c["ret"]) for c in calls], RECURSE_TREE,
       "exported tree")
    folded = [l.rsplit(" ", 1)[0] for l in _export(store, "folded").splitlines()]
    eq(folded, ["calls;fact", "calls;fact;fact", "calls;fact;fact;fact",
                "calls;fact;fact;fact;fact", "calls;fact;fact;fact;fact;fact", "calls;outer",
                "calls;outer;middle", "calls;outer;middle;leaf"], "exported folded stacks")
    events = load_chrome(_export(store, "chrome", ["--chrome"]))
    xs = [e for e in events if e["ph"] == "X"]
    got = sorted((e["name"], json.dumps(e["args"], sort_keys=True)) for e in xs)
    want = sorted((f, json.dumps({"args": {a.split("=")[0]: int(a.split("=")[1])},
                                  "return": int(ret)}, sort_keys=True))
                  for _, f, a, ret in RECURSE_TREE)
    eq(got, want, "exported chrome X events")


def test_export_views_mark_truncated_and_faults():
    """An exported tree and chrome mark the values the store notes as cut
    or unreadable, as trace's views do (they were dropped from stores)."""
    from cmonlib import cmon, tmpfile
    for scenario, funcs, extra, notes, key in [
            (["long", "99"], ["greet"], ["--strlen", "20"], ['truncated=["s"]'], "truncated"),
            (["bad"], ["badptr"], [], ['faults=["s","o"]', None], "faults")]:
        path = tmpfile("marks-%s" % scenario[0])
        code, _, err = cmon(["capture", "-q", "-o", path] + extra +
                            [a for f in funcs for a in ("--func", f)] +
                            ["--", target("typed_O2")] + scenario)
        eq(code, 0, "capture exit status (%s)" % err)
        calls = parse_tree(_export(path, "tree"))
        eq([c["notes"] for c in calls], notes, "exported tree of %s" % funcs[0])
        xs = [e for e in load_chrome(_export(path, "chrome", ["--chrome"])) if e["ph"] == "X"]
        eq([e["args"].get(key) for e in xs],
           [json.loads(n.split("=", 1)[1]) if n else None for n in notes],
           "exported chrome of %s" % funcs[0])


def test_export_tree_noreturn_is_a_leaf():
    store = _capture("lj", ["jumper", "add"], [target(), "longjmp"])
    calls = parse_tree(_export(store, "tree"))
    eq([(c["depth"], c["func"], c["args"], c["ret"], c["dur"]) for c in calls],
       [(0, "jumper", "x=7", None, "noreturn"), (0, "add", "a=1, b=1", "2", calls[1]["dur"])],
       "tree of a longjmp")


def test_folded_says_which_calls_have_no_weight():
    """Folded stacks are weighted by time: a call with no latency (longjmp'd,
    noreturn, --no-return) weighs nothing.  That was silent (an empty output,
    exit 0, "events written: 6"): one line says how many and why, and
    --no-return -F folded, which can only write nothing, is refused."""
    from cmonlib import CALLS_OUT, cmon, stderr_lines, tmpfile
    r = trace(["jumper", "add"], [target(), "longjmp"], fmt="folded", extra=["--raw-latency"])
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    eq(r.stdout, LONGJMP_OUT, "program output")
    eq([l.rsplit(" ", 1)[0] for l in r.text.splitlines()], ["calls;add"], "stacks")
    eq([l for l in stderr_lines(r.stderr) if "folded" in l],
       ["cmon: warning: folded: 1 of 2 calls had no latency, so no weight of their own in "
        "the stacks (1 noreturn)"], "the longjmp'd call said")
    code, out, err = cmon(["trace", "-F", "folded", "--no-return", "--func", "add", "--",
                           target(), "calls"])
    eq((code, out, stderr_lines(err)),
       (2, "", ["cmon: trace: -F folded weighs stacks by the calls' time, which --no-return "
                "does not measure: it would write nothing"]), "--no-return -F folded refused")
    # A store of entries only (capture --no-return): export -F folded says so.
    code, out, err = cmon(["capture", "--no-return", "-o", tmpfile("entries"), "--func", "add",
                           "--", target(), "calls"])
    eq((code, out), (0, CALLS_OUT), "capture exit status (%s)" % err)
    store = re.search(r"^cmon: capturing to (.+)$", err, re.M).group(1)
    path = tmpfile("entries.folded")
    code, out, err = cmon(["export", store, "-F", "folded", "-o", path])
    eq(code, 0, "export exit status (%s)" % err)
    eq(open(path).read(), "", "no stack has a weight")
    check("cmon: warning: folded: 2 of 2 calls had no latency, so no weight of their own in "
          "the stacks (2 entry)" in stderr_lines(err), err)


def test_views_of_a_json_trace():
    """A trace written as JSON Lines turned into each view later, by cmon
    export (it said "not a cmon store"): the nesting from the calls' times,
    the typed arguments and returns."""
    from cmonlib import cmon, tmpfile
    r = trace(RECURSE_FUNCS, [target(), "recurse"], fmt="json", extra=["--raw-latency"])
    eq(r.code, 0, "exit status (%s)" % r.stderr)
    path = tmpfile("recurse.jsonl")
    with open(path, "w") as f:
        f.write(r.text)
    code, out, err = cmon(["export", path, "-F", "tree"])
    eq((code, err), (0, "cmon: exported 8 calls to stdout\n"), "export -F tree")
    eq([(c["depth"], c["func"], c["args"], c["ret"]) for c in parse_tree(out)], RECURSE_TREE,
       "tree (depth, func, args, return):\n%s" % out)
    code, out, err = cmon(["export", path, "-F", "folded"])
    eq(code, 0, "export -F folded (%s)" % err)
    eq([l.rsplit(" ", 1)[0] for l in out.splitlines()],
       ["calls;fact", "calls;fact;fact", "calls;fact;fact;fact", "calls;fact;fact;fact;fact",
        "calls;fact;fact;fact;fact;fact", "calls;outer", "calls;outer;middle",
        "calls;outer;middle;leaf"], "folded stacks")
    code, out, err = cmon(["export", path, "-F", "chrome"])
    eq(code, 0, "export -F chrome (%s)" % err)
    events = [e for e in load_chrome(out) if e["ph"] == "X"]
    eq(sorted((e["name"], e["args"]["return"]) for e in events),
       sorted((f, int(ret)) for _, f, _, ret in RECURSE_TREE), "chrome events")
    # a line that is no call of cmon's
    with open(path, "a") as f:
        f.write('{"hello": 1}\n')
    code, out, err = cmon(["export", path, "-F", "tree"])
    eq((code, err), (1, "cmon: export: %s: line 9 is not a call of `cmon trace -F json`\n"
                     % path), "a foreign line")
