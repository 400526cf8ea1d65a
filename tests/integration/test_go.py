"""Go programs (tests/targets/gowork.go): eight goroutines whose stacks
grow (and are copied) while traced calls are pending, moving between
threads.  Every call is one record, paired per goroutine, with arguments
and the result read from Go's registers, the string argument as text, and
the program unchanged."""
import signal
import subprocess

from cmonlib import (check, eq, parse_json_lines, read_text, run, summary, target, trace,
                     trace_bg)
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


def pending_rows(rows):
    return sorted((r["func"], r["status"], dict(r["args"])["i"], r["depth"]) for r in rows)


def test_go_calls_pending_at_exit_are_noreturn():
    """Five goroutines blocked in main.block when the program exits: five
    `noreturn` records, as a C thread's pending calls are.  Frames on a
    goroutine's stack (keyed by its g, not a thread) were let go unwritten
    and uncounted: "5 calls, 0 written, 0 lost"."""
    res = trace(["main.block"], launch=[target("gopending"), "block", "5"], fmt="json")
    eq((res.code, res.stdout), (0, "blocked 5\n"), "exit status and output (%s)"
       % res.stderr.strip())
    eq(pending_rows(res.rows), [("main.block", "noreturn", i, 0) for i in range(5)],
       "(func, status, i, depth) of each record")
    eq(res.summary()["table"]["main.block"], (5, 5, 0), "main.block calls, written, lost")


def test_go_calls_pending_at_detach_are_noreturn():
    """-p: the trace ends (SIGINT) while five goroutines wait in
    main.block: each is written `noreturn`, as pending calls of the
    process's threads are."""
    p = subprocess.Popen([target("gopending"), "block", "5", "wait"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        eq(p.stdout.readline(), "ready %d\n" % p.pid, "target's first line")
        # --raw: no typed captures, whose verification takes long here
        bg = trace_bg(["main.block"], ["-p", str(p.pid)], fmt="json", extra=["--raw"])
        try:
            bg.wait_attached()
            p.stdin.write("\n")
            p.stdin.flush()
            eq(p.stdout.readline(), "blocked 5\n", "target's second line")
            bg.signal(signal.SIGINT)
            eq(bg.wait(), 0, "cmon's exit status (%s)" % bg.stderr.strip())
        finally:
            bg.kill()
        rows = parse_json_lines(read_text(bg.out_path))
        eq(sorted((r["func"], r["status"], r["arg0"], r["depth"]) for r in rows),
           [("main.block", "noreturn", i, 0) for i in range(5)],
           "(func, status, i, depth) of each record")
        eq(summary(bg.stderr)["table"]["main.block"], (5, 5, 0), "main.block calls, written, lost")
    finally:
        p.kill()
        p.communicate()


def test_go_morestack_traced_too():
    """runtime.morestack* traced beside a function whose stack grows: the
    function restarted by newstack is the same call, not a second one
    (main.deep had a `noreturn` record more per growth), and morestack,
    which never returns (newstack restarts its caller on the grown stack),
    is written at its entry and keeps no frame (main.deep(100) was written
    at depth 1, under the morestack that grew main.main's stack).
    """
    n = 100
    res = trace(["main.deep", "runtime.morestack*"],
                launch=[target("gopending"), "deep", str(n)], fmt="json")
    eq((res.code, res.stdout), (0, "%d\n" % (n * (n + 1) // 2)), "exit status and output (%s)"
       % res.stderr.strip())
    deep = [(dict(r["args"])["d"], r["status"], r["depth"], r["ret"])
            for r in res.rows if r["func"] == "main.deep"]
    eq(sorted(deep), [(d, "ok", n - d, d * (d + 1) // 2) for d in range(n + 1)],
       "main.deep's records: (d, status, depth, result)")
    table = res.summary()["table"]
    grown = table["runtime.morestack.abi0"][0]
    check(grown > 0, "the stack grew (morestack calls: %d)" % grown)
    eq((table["main.deep"], table["runtime.morestack.abi0"], table["runtime.morestack_noctxt.abi0"]),
       ((n + 1, n + 1, 0), (grown, grown, 0), (grown, grown, 0)),
       "calls, written, lost of main.deep, morestack, morestack_noctxt")
    st = sorted((r["func"], r["status"]) for r in res.rows if "morestack" in r["func"])
    eq(st, sorted([("runtime.morestack.abi0", "never-returns")] * grown +
                  [("runtime.morestack_noctxt.abi0", "never-returns")] * grown),
       "morestack's records: it never returns (newstack restarts its caller)")
