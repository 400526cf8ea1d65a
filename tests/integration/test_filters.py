"""--if EXPR and --on-change EXPR: decided in the kernel, exact records
(tests/targets/filters.c: `ints` calls pick(a, 10 * a) for a = 0..9,
returning a * a; `reqs` handle(&req) with methods GET POST GET PUT GET POST
and len 1..6; `change` level(v) for 1 1 2 2 2 3; `sleep` nap(ms) for
1 30 2 40 ms)."""
import csv
import json
import shutil

from agentlib import Agent, count_probe, run_target, series, value, write_spec
from cmonlib import (assert_no_leak, bpf_snapshot, check, cmon, eq, read_text, stderr_lines,
                     summary, target, tmpfile, trace)

SUM_INTS = "sum 285\n"


def _if(func, expr, mode, tgt="filters", extra=()):
    res = trace([func], launch=[target(tgt), mode], extra=["--if", expr] + list(extra))
    eq(res.code, 0, "exit status of --if %r (%s)" % (expr, res.stderr))
    return res


def _a(res):
    return [r["arg0"] for r in res.rows or []]


def test_if_each_comparison_exact():
    for expr, want in [("a >= 7", [7, 8, 9]), ("a > 7", [8, 9]), ("a < 2", [0, 1]),
                       ("a <= 2", [0, 1, 2]), ("a == 4", [4]),
                       ("a != 4", [0, 1, 2, 3, 5, 6, 7, 8, 9]),
                       ("b == 50", [5]), ("a >= -1", list(range(10))), ("a", list(range(1, 10))),
                       ("a == 0x3", [3])]:
        res = _if("pick", expr, "ints")
        eq(res.stdout, SUM_INTS, "program output unchanged")
        eq(_a(res), want, "records of --if %r" % expr)


def test_if_logic_and_parentheses():
    for expr, want in [("a > 2 && a < 5", [3, 4]), ("a == 1 || a == 8", [1, 8]),
                       ("!(a < 8)", [8, 9]), ("!a", [0]),
                       ("(a == 1 || a == 2) && b != 20", [1]),
                       ("a == 1 || a == 2 && b != 20", [1]),
                       ("!(a == 1 || a == 2) && a < 4", [0, 3])]:
        eq(_a(_if("pick", expr, "ints")), want, "records of --if %r" % expr)


def test_if_ret_and_summary_count():
    res = _if("pick", "ret > 40", "ints")
    eq([(r["arg0"], r["ret"]) for r in res.rows], [(7, 49), (8, 64), (9, 81)], "ret > 40")
    eq(summary(res.stderr)["table"]["pick"], (10, 3, 0), "calls, written, lost")
    check("cmon: 7 calls filtered out by --if" in res.stderr, res.stderr)
    check("(7 filtered)" in res.stderr, res.stderr)


def test_if_latency_of_sleeping_calls():
    res = _if("nap", "latency_ns > 20000000", "sleep")
    eq([r["arg0"] for r in res.rows], [30, 40], "the two naps longer than 20 ms")
    check(all(r["latency_ns"] > 20000000 for r in res.rows), res.text)
    eq(summary(res.stderr)["table"]["nap"], (4, 2, 0), "calls, written, lost")


def test_if_struct_members_and_strings():
    res = _if("handle", "r->len > 5", "reqs")
    eq([r["ret"] for r in res.rows], [6], "r->len > 5")
    res = _if("handle", 'r->method == "GET"', "reqs")
    eq([r["ret"] for r in res.rows], [1, 3, 5], "the GET requests")
    eq([r["args"]["r"]["method"] for r in res.rows], ["GET"] * 3,
       "their typed method")
    res = _if("handle", 'r->method != "GET" && r->hdr.kind == 2', "reqs")
    eq([r["ret"] for r in res.rows], [6], "not GET (POST, PUT, POST), hdr.kind 2 (i % 3 == 2)")
    res = _if("handle", 'r->hdr.flags >= 300 && r->tag == "t4"', "reqs")
    eq([r["ret"] for r in res.rows], [5], "a member of a member, a char array")
    res = _if("handle", 'r->method == "GE"', "reqs")
    eq(res.rows or [], [], "a prefix is not equal")


def test_if_return_condition_keeps_captures_paired():
    """Decided at the return, after the entry capture was written: the
    calls kept still carry their own captured struct."""
    res = trace(["handle"], launch=[target("filters"), "reqs"], fmt="json",
                extra=["--if", "ret > 4"])
    eq(res.code, 0, res.stderr)
    rows = [json.loads(line) for line in res.text.splitlines()]
    eq([(r["ret"], r["args"]["r"]["len"], r["args"]["r"]["tag"]) for r in rows],
       [(5, 5, "t4"), (6, 6, "t5")], "records with their own captures")


def test_if_arg_without_dwarf():
    res = _if("pick", "arg0 >= 7 && arg1 != 80", "ints", tgt="filters_nodwarf")
    eq(_a(res), [7, 9], "raw registers")
    code, out, err = cmon(["trace", "--func", "pick", "--if", "a >= 7", "--",
                           target("filters_nodwarf"), "ints"])
    eq(code, 2, "a name without DWARF")
    eq(stderr_lines(err), ["cmon: --if: 'a': pick has no DWARF (name arguments arg0..arg5) "
                           "at column 1: a >= 7"], "the message")
    eq(out, "", "the program never ran")


def test_if_with_no_return():
    res = trace(["pick"], launch=[target("filters"), "ints"],
                extra=["--no-return", "--if", "a >= 8"])
    eq(_a(res), [8, 9], "decided at the entry")
    code, _, err = cmon(["trace", "--no-return", "--func", "pick", "--if", "ret > 1", "--",
                         target("filters"), "ints"])
    eq(code, 2, "ret without returns")
    check("ret and latency_ns need the return" in err, err)


def test_on_change():
    res = trace(["level"], launch=[target("filters"), "change"], extra=["--on-change", "v"])
    eq(res.code, 0, res.stderr)
    eq(_a(res), [1, 2, 3], "1 1 2 2 2 3 -> 1 2 3")
    eq(summary(res.stderr)["table"]["level"], (6, 3, 0), "calls, written, lost")
    check("cmon: 3 calls unchanged (--on-change)" in res.stderr, res.stderr)
    res = trace(["pick"], launch=[target("filters"), "ints"],
                extra=["--on-change", "a > 4", "--if", "a != 2"])
    eq(_a(res), [0, 5], "--if first, then the change of a > 4")


def test_malformed_and_unknown_are_usage_errors():
    cases = [("a > (b", "cmon: --if: expected ')' at column 7: a > (b"),
             ("a >", "cmon: --if: expected a value, found the end at column 4: a >"),
             ("a = 3", "cmon: --if: '=' is not a comparison (use '==') at column 3: a = 3"),
             ("a > 1)", "cmon: --if: unbalanced ')' at column 6: a > 1)"),
             ('a == "x', "cmon: --if: expected '\"' at column 8: a == \"x"),
             ("a b", "cmon: --if: expected an operator at column 3: a b"),
             ("nosuch > 1", "cmon: --if: pick has no parameter 'nosuch' at column 1: "
                            "nosuch > 1"),
             ('a == "GET"', "cmon: --if: not a string (a char * or a char array) at "
                            "column 1: a == \"GET\""),
             ("a->x > 1", "cmon: --if: '->x': not a pointer to a struct at column 4: "
                          "a->x > 1")]
    before = bpf_snapshot()
    for expr, line in cases:
        code, out, err = cmon(["trace", "--func", "pick", "--if", expr, "--",
                               target("filters"), "ints"])
        eq(code, 2, "exit status of --if %r" % expr)
        eq(stderr_lines(err), [line], "the one error line of %r" % expr)
        eq(out, "", "the program never ran")
    code, out, err = cmon(["trace", "--usdt", "demo:tick", "--if", "arg0 > 1", "--",
                           target("usdt"), ])
    eq(code, 2, "a USDT site")
    eq(stderr_lines(err), ["cmon: --if: demo:tick is a USDT probe or a source line: --if "
                           "applies to functions (--func) only"], "not silently unfiltered")
    assert_no_leak(before)


def test_profile_if_counts():
    path = tmpfile("filters-profile.json")
    code, _, err = cmon(["profile", "-F", "json", "-o", path, "--func", "pick", "--if",
                         "a >= 7", "--", target("filters"), "ints"])
    eq(code, 0, err)
    rows = [json.loads(l) for l in open(path) if l.strip()]
    pick = [r for r in rows if r["func"] == "pick"][-1]
    eq((pick["calls"], pick["filtered"]), (3, 7), "pick: 3 counted, 7 filtered")
    check("cmon: 7 calls filtered out by --if" in err, err)
    # CSV and the text table count them per function too (only JSON did).
    csv_path = tmpfile("filters-profile.csv")
    code, _, err = cmon(["profile", "-F", "csv", "-o", csv_path, "--func", "pick", "--if",
                         "a >= 7", "--", target("filters"), "ints"])
    eq(code, 0, err)
    rows = list(csv.DictReader(open(csv_path, newline="")))
    pick = [r for r in rows if r["func"] == "pick"][-1]
    eq((pick["calls"], pick["filtered"]), ("3", "7"), "CSV pick: 3 counted, 7 filtered")
    code, out, err = cmon(["profile", "--func", "pick", "--if", "a >= 7", "--",
                           target("filters"), "ints"])
    eq(code, 0, err)
    table = [l.split() for l in out.splitlines()]
    head = [l for l in table if l and l[0] == "FUNCTION"][0]
    row = [l for l in table if l and l[0] == "pick"][0]
    eq(head[-1], "FILTERED", "text: a FILTERED column with --if: %r" % head)
    eq((row[1], row[-1]), ("3", "7"), "text pick: 3 counted, 7 filtered")
    # A name one of the functions lacks: the error names it.
    code, _, err = cmon(["profile", "--func", "pick", "--func", "nap", "--if", "a >= 7",
                         "--", target("filters"), "ints"])
    eq(code, 2, "a name nap does not have")
    eq(stderr_lines(err), ["cmon: --if: nap has no parameter 'a' at column 1: a >= 7"], err)
    code, _, err = cmon(["profile", "-F", "json", "-o", path, "--func", "nap", "--if",
                         "latency_ns > 20000000", "--", target("filters"), "sleep"])
    eq(code, 0, err)
    rows = [json.loads(l) for l in open(path) if l.strip()]
    nap = [r for r in rows if r["func"] == "nap"][-1]
    eq((nap["calls"], nap["filtered"]), (2, 2), "nap: the 2 long naps counted")
    check(nap["min_ns"] > 20000000, "the short naps are not in the latencies: %r" % nap)


def test_agent_if():
    """The agent's `if:`: counts and log records of the calls it keeps;
    a condition that does not parse or fit is the probe's own error."""
    app = target("filters")
    spec = tmpfile("filters-probes.yaml")
    log = tmpfile("filters-if.jsonl")
    write_spec(spec, [
        count_probe("big", app, func="pick", **{"if": "a >= 7"}),
        count_probe("all", app, func="pick"),
        {"name": "gets", "target": app, "func": "handle", "instrument": "log",
         "if": 'r->method == "GET"', "log": {"path": log}},
        count_probe("slow", app, func="pick", **{"if": "latency_ns > 1000000000"}),
        count_probe("bad", app, func="pick", **{"if": "a > (b"}),
        count_probe("noname", app, func="pick", **{"if": "nosuch == 1"}),
    ])
    a = Agent(spec).wait_ready()
    try:
        probes = a.wait_probes({"big": "applied", "all": "applied", "gets": "applied",
                                "slow": "applied", "bad": "error", "noname": "error"})
        check(probes["bad"]["error"].endswith(": 'if': expected ')' at column 7: a > (b"),
              "the parse error: %r" % probes["bad"]["error"])
        check("pick has no parameter 'nosuch'" in probes["noname"]["error"],
              probes["noname"]["error"])
        eq(run_target(app, "ints"), SUM_INTS, "target output")
        eq(run_target(app, "reqs"), "sum 21\n", "target output")
        a.wait_metric("cmon_all_calls_total", 10, probe="all")
        a.wait_metric("cmon_agent_log_records_total", 3, probe="gets")
        m = a.metrics()
        eq(value(m, "cmon_big_calls_total", probe="big"), 3, "a >= 7: 3 of 10")
        eq(value(m, "cmon_slow_calls_total", probe="slow"), 0, "none slower than 1 s")
        eq(value(m, "cmon_agent_calls_filtered_total", probe="big"), 7, "7 left out")
        eq(value(m, "cmon_agent_calls_filtered_total", probe="slow"), 10, "all left out")
        eq(value(m, "cmon_agent_calls_filtered_total", probe="gets"), 3, "3 not GET")
        eq(series(m, "cmon_agent_calls_filtered_total", probe="all"), {},
           "no such series without if:")
        # hits: every entry, whatever the instrument (a log probe counted
        # them before its if:, a count probe after)
        eq([value(m, "cmon_agent_probe_hits_total", probe=p) for p in ("big", "all", "slow",
                                                                        "gets")],
           [10, 10, 10, 6], "hits of each probe")
    finally:
        eq(a.stop(), 0, "agent exit status")
    rows = [json.loads(line) for line in read_text(log).splitlines()]
    eq([r["ret"] for r in rows], [1, 3, 5], "the GET calls logged (len 1, 3, 5)")


def test_if_on_a_call_that_never_returns():
    """jumper(7) longjmps out (tests/targets/calls.c): a condition on its
    arguments keeps it (written as noreturn); one on its latency cannot
    hold, and it is counted as filtered, never written."""
    res = trace(["jumper"], launch=[target("calls"), "longjmp"], extra=["--if", "x == 7"])
    eq(res.code, 0, res.stderr)
    eq([(r["arg0"], r["status"]) for r in res.rows], [(7, "noreturn")], "kept at the entry")
    res = trace(["jumper"], launch=[target("calls"), "longjmp"],
                extra=["--if", "latency_ns >= 0"])
    eq(res.code, 0, res.stderr)
    eq(res.rows or [], [], "no return: no latency to hold")
    eq(summary(res.stderr)["table"]["jumper"], (1, 0, 0), "calls, written, lost")
    check("cmon: 1 calls filtered out by --if" in res.stderr, res.stderr)


def test_on_change_of_ret_and_capture():
    """--on-change on the return value (decided at the return), and --if in
    `cmon capture`: the store keeps only the calls --if kept."""
    res = trace(["pick"], launch=[target("filters"), "ints"],
                extra=["--on-change", "ret > 10"])
    eq(_a(res), [0, 4], "ret = a*a crosses 10 once: the first call and a = 4")
    eq(summary(res.stderr)["table"]["pick"], (10, 2, 0), "calls, written, lost")
    store = tmpfile("filters-store")
    shutil.rmtree(store, ignore_errors=True)
    shutil.rmtree(store + "-json", ignore_errors=True)
    code, out, err = cmon(["capture", "-o", store, "--func", "handle", "--if",
                           'r->method == "POST"', "--", target("filters"), "reqs"])
    eq(code, 0, err)
    code, out, err = cmon(["export", store, "-F", "json", "-o", store + "-json"])
    eq(code, 0, err)
    rows = [json.loads(l) for l in read_text(store + "-json/handle.jsonl").splitlines()]
    eq([(r["retval"], r["args"]["r"]["method"], r["args"]["r"]["tag"]) for r in rows],
       [(2, "POST", "t1"), (6, "POST", "t5")], "the two POST calls stored, with their struct")


def test_never_returning_typed_and_if_refused_at_once():
    """A function that never returns (libc's exit: no return
    instruction), arguments read from memory (handle's struct req) and
    --if (or --on-change) together made the entry program too large for
    the verifier: it refused it with E2BIG after 5 minutes ("cannot load the BPF programs:
    Argument list too long").  Any two of them load.  Now one line at once,
    naming them, and nothing attached."""
    before = bpf_snapshot()
    for opt, expr in (("--if", "arg0 != 12345"), ("--on-change", "arg0")):
        code, out, err = cmon(["trace", "--func", "handle", "--func", "libc.so.6:exit", opt,
                               expr, "-F", "json", "-o", tmpfile("fits.json"), "--",
                               target("filters"), "reqs"])
        eq((code, out), (1, ""), "%s: exit status and the program's output (%s)" % (opt, err))
        eq(err.strip().splitlines(),
           ["cmon: too large for the kernel's verifier together: exit never returns, handle's "
            "arguments are read from memory and handle has --if/--on-change (--exclude "
            "'exit', or trace them in two runs)"], "%s: one error line" % opt)
    assert_no_leak(before)
