"""Kernels without uprobe_multi links: cmon falls back to one perf-event
uprobe per address.  CMON_NO_UPROBE_MULTI=1 forces that path here, and the
same exact values must come out of it."""
import os

from cmonlib import (RECURSE_OUT, bpf_snapshot, assert_no_leak, check, eq, only, target,
                     trace)


def with_fallback(fn):
    os.environ["CMON_NO_UPROBE_MULTI"] = "1"
    try:
        return fn()
    finally:
        del os.environ["CMON_NO_UPROBE_MULTI"]


def test_fallback_recursion_values():
    before = bpf_snapshot()
    res = with_fallback(lambda: trace(["fact", "outer", "middle", "leaf"],
                                      launch=[target(), "recurse"], extra=["-v"]))
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    check("attaching perf-event uprobes" in res.stderr,
          "the fallback was taken: %r" % res.stderr[-500:])
    eq(res.stdout, RECURSE_OUT, "program output")
    fact = only(res.rows, "fact")
    eq([(r["arg0"], r["ret"], r["depth"]) for r in fact],
       [(1, 1, 4), (2, 2, 3), (3, 6, 2), (4, 24, 1), (5, 120, 0)], "fact records")
    eq([(r["func"], r["ret"], r["depth"]) for r in res.rows if r["func"] != "fact"],
       [("leaf", 11, 2), ("middle", 22, 1), ("outer", 25, 0)], "nested records")
    assert_no_leak(before)


def test_fallback_cxx_exception():
    res = with_fallback(lambda: trace(["risky"], launch=[target("cxx_throw")]))
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, "sum=309 caught=3\n", "program output")
    eq([(r["arg0"], r["status"], r["ret"]) for r in res.rows],
       [(0, "ok", 101), (1, "noreturn", None), (2, "ok", 103), (3, "noreturn", None),
        (4, "ok", 105), (5, "noreturn", None)], "risky records")
