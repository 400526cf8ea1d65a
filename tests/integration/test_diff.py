"""cmon diff A B: per function of two capture stores, calls, p50/p90/p99
latency and RSS growth of A beside B, and whether B's latencies differ
beyond the noise (the rank test), in words (tests/targets/sleeper.c:
`loop MS N` naps MS ms N times, then calls count_me once)."""
import re

from cmonlib import check, cmon, eq, target, tmpfile


def _capture(name, ms, funcs):
    path = tmpfile(name)
    args = ["capture", "-q", "-o", path]
    for f in funcs:
        args += ["--func", f]
    code, _, err = cmon(args + ["--", target("sleeper"), "loop", str(ms), "20"])
    eq(code, 0, "capture %s (%s)" % (name, err))
    return path


def _ms(text):
    m = re.match(r"([\d.]+)(ns|us|ms|s)$", text)
    check(m, "a duration: %r" % text)
    return float(m.group(1)) * {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3}[m.group(2)]


def test_diff_slower_and_unchanged():
    a = _capture("diff-a", 1, ["nap", "count_me"])
    b = _capture("diff-b", 3, ["nap"])
    code, out, err = cmon(["diff", a, b])
    eq((code, err), (0, ""), "exit status and stderr")
    lines = out.splitlines()
    eq(lines[0], "cmon diff: A %s, B %s" % (a, b), "heading")
    eq([l for l in lines if not l.startswith(" ")], lines[:1] + ["nap", "count_me"],
       "a block per function, A's order")
    nap = lines[2:lines.index("count_me")]
    eq(nap[0], "  calls       20 -> 20", "calls")
    eq([l.split()[0] for l in nap[1:4]], ["p50", "p90", "p99"], "quantile rows")
    # nap(1 ms) against nap(3 ms): a nap takes at least its time
    p50 = nap[1].split()
    check(1 <= _ms(p50[1]) < _ms(p50[3]) and _ms(p50[3]) >= 3, "p50 A -> B: %r" % nap[1])
    check(nap[4].startswith("  RSS "), nap[4])
    check(re.match(r"  slower in B, beyond the noise \(rank test over 40 calls: p = "
                   r"[\d.e-]+\)$", nap[5]), "the verdict: %r" % nap[5])
    eq(lines[lines.index("count_me") + 1:], ["  only in A (1 call)"], "a function A alone has")
    # A run against itself: every call ties with its twin
    code, out, err = cmon(["diff", b, b])
    eq(code, 0, "exit status (%s)" % err)
    eq(out.splitlines()[-1], "  no change beyond the noise (rank test over 40 calls: p = 1)",
       "the same run twice")


def test_diff_needs_two_stores():
    code, out, err = cmon(["diff", tmpfile("nothing")])
    eq((code, out), (2, ""), "exit status with one store")
    eq(err, "cmon: diff: give two capture stores, A and B (see cmon diff --help)\n", "stderr")
