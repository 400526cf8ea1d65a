"""--focus FUNC: calls are recorded only while the thread is inside FUNC
(any depth, recursion counted, abandoned frames let go), --max-depth N
below it; decided in the kernel (tests/targets/calls.c: recurse runs
fact(5) then outer(10) -> middle -> leaf; longjmp jumps out of jumper)."""
from cmonlib import RECURSE_OUT, check, cmon, eq, target, trace


def _rows(res):
    return [(r["func"], r["arg0"], r["depth"]) for r in res.rows]


def test_focus_records_only_inside():
    res = trace(["fact", "middle", "leaf"], launch=[target(), "recurse"],
                extra=["--focus", "outer"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, RECURSE_OUT, "program output")
    # outer is probed for the focus only (not named by --func): no record,
    # and its frame counts in the depth.
    eq(_rows(res), [("leaf", 10, 2), ("middle", 10, 1)], "records inside outer")
    check("fact                                        0            0          0  "
          "(5 outside --focus)" in res.stderr, res.stderr)
    check("cmon: outer " not in res.stderr, "outer is not a traced function: %s" % res.stderr)


def test_focus_recursion_and_max_depth():
    res = trace(["fact"], launch=[target(), "recurse"], extra=["--focus", "fact"])
    eq(_rows(res), [("fact", n, 5 - n) for n in range(1, 6)], "every fact inside fact")
    res = trace(["fact"], launch=[target(), "recurse"],
                extra=["--focus", "fact", "--max-depth", "2"])
    eq(_rows(res), [("fact", 3, 2), ("fact", 4, 1), ("fact", 5, 0)],
       "fact at most 2 below the outermost fact")
    # the 2 deeper calls are counted, not gone from the summary
    check("(2 outside --focus or below --max-depth)" in res.stderr, res.stderr)
    res = trace(["leaf"], launch=[target(), "recurse"], extra=["--focus", "fact"])
    eq(_rows(res), [], "leaf is never inside fact")


def test_focus_let_go_by_longjmp():
    """jumper longjmps out: its frame is abandoned, the thread is no longer
    in the focus, and add(1, 1) after the jump is not recorded."""
    res = trace(["add", "jumper"], launch=[target(), "longjmp"], extra=["--focus", "jumper"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq([(r["func"], r["status"]) for r in res.rows], [("jumper", "noreturn")],
       "jumper only, add outside")


def test_focus_usage_errors():
    for extra, needle in [(["--max-depth", "2"], "--max-depth counts below a --focus"),
                          (["--focus", "fact", "--no-return"], "--focus needs returns"),
                          (["--focus", "fact", "--max-depth", "x"], "invalid --max-depth")]:
        code, _, err = cmon(["trace", "--func", "fact"] + extra + ["--", target(), "recurse"])
        eq(code, 2, "%r: usage error" % extra)
        check(needle in err, "%r in %r" % (needle, err))
    code, _, err = cmon(["trace", "--func", "fact", "--focus", "nosuch", "--", target(),
                         "recurse"])
    eq(code, 1, "a focus that matches nothing")
    check("no function matches 'nosuch'" in err, err)


def test_profile_focus_counts_only_inside():
    """cmon profile --focus / --max-depth: the same decision in the kernel,
    counted instead of recorded; focus-only functions have no row."""
    from test_profile import by_func, final_rows, parse_profile_json, profile

    for extra, want in [(["--focus", "outer"], {"middle": 1, "leaf": 1}),
                        (["--focus", "fact"], {"fact": 5}),
                        (["--focus", "fact", "--max-depth", "2"], {"fact": 3})]:
        code, out, err, text = profile(["fact", "middle", "leaf"], launch=[target(), "recurse"],
                                       extra=extra)
        eq((code, out), (0, RECURSE_OUT), "%r: exit status and output (%s)" % (extra, err))
        fin = by_func(final_rows(parse_profile_json(text)))
        eq({f: r["calls"] for f, r in fin.items() if r["calls"]}, want, "%r: calls" % extra)
        check(all(r["calls"] == r["returns"] and not r["noreturn"] for r in fin.values()),
              "%r: every counted call returned: %r" % (extra, fin))
        check("outer" not in fin, "%r: outer is probed for the focus only" % extra)
    code, _, err = cmon(["profile", "--func", "fact", "--max-depth", "2", "--", target(),
                         "recurse"])
    eq(code, 2, "--max-depth without --focus")
