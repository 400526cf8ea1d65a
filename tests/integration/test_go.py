"""Go programs (tests/targets/gowork.go): eight goroutines whose stacks
grow (and are copied) while traced calls are pending, moving between
threads.  Every call is one record, paired per goroutine, with arguments
and the result read from Go's registers, the string argument as text, and
the program unchanged."""
from cmonlib import check, eq, run, target, trace
from test_profile import by_func, final_rows, parse_profile_json, profile

GO_OUT = "[138 141 144 147 150 153 156 159]\n15\n"
CALLS = 8 * 3 * 41  # goroutines x rounds x (depth 40 .. 0)


def test_go_goroutines_pair_with_growing_stacks():
    code, out, _ = run([target("gowork")])
    eq((code, out), (0, GO_OUT), "untraced run")
    res = trace(["main.work"], launch=[target("gowork")], fmt="json")
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, GO_OUT, "program output")
    eq(len(res.rows), CALLS, "records: one per call")
    eq(res.summary()["lost"], 0, "events lost")
    for r in res.rows:
        r["args"] = dict(r["args"])  # the parser keeps nested objects as pairs
    bad = [r for r in res.rows
           if (r["status"], r["ret"], r["args"]["name"], r["depth"]) !=
           ("ok", 6 + r["args"]["id"] + r["args"]["depth"], "gopher", 40 - r["args"]["depth"])]
    eq(bad[:3], [], "records whose status, result, string or goroutine depth is off")
    # arg0.. are Go's registers: rax = id, rbx = depth, rcx/rdi = the string.
    check(all((r["arg0"], r["arg1"], r["arg3"]) == (r["args"]["id"], r["args"]["depth"], 6)
              for r in res.rows), "raw arguments from Go's registers")
    per_goroutine = {}
    for r in res.rows:
        per_goroutine[r["args"]["id"]] = per_goroutine.get(r["args"]["id"], 0) + 1
    eq(per_goroutine, {g: 3 * 41 for g in range(8)}, "calls per goroutine")


def test_go_profile_counts_every_call():
    code, out, err, text = profile(["main.work"], launch=[target("gowork")])
    eq((code, out), (0, GO_OUT), "exit status and output (%s)" % err.strip())
    fin = by_func(final_rows(parse_profile_json(text)))
    r = fin["main.work"]
    eq((r["calls"], r["returns"], r["noreturn"], r["lost"]), (CALLS, CALLS, 0, 0),
       "calls, returns, noreturn, lost")


def test_go_line_locals():
    """--locals at a line of a Go function: its parameters read where the
    line runs, every (goroutine, depth) once a round.  Go writes no
    .debug_aranges: the line's compilation unit was not found and every
    record had no values."""
    line = 17  # buf[depth%256] = byte(id)
    res = trace([], launch=[target("gowork")], fmt="json",
                extra=["--line", "gowork.go:%d" % line, "--locals"])
    eq((res.code, res.stdout), (0, GO_OUT), "exit status and output (%s)" % res.stderr.strip())
    eq({r["func"] for r in res.rows}, {"gowork.go:%d (main.work)" % line}, "the line")
    seen = {}
    for r in res.rows:
        a = dict(r["args"])
        seen[(a["id"], a["depth"])] = seen.get((a["id"], a["depth"]), 0) + 1
    eq(seen, {(g, d): 3 for g in range(8) for d in range(41)}, "(id, depth) at each run")


def test_go_slice_shown_as_its_elements():
    res = trace(["main.sum"], launch=[target("gowork")], fmt="json")
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, GO_OUT, "program output")
    eq([(dict(r["args"]), r["ret"]) for r in res.rows], [({"xs": [4, 5, 6]}, 15)],
       "sum([]int{4, 5, 6}): the slice's elements, and its result")
