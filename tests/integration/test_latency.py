"""Latencies are the function's own: the probe's own cost (trap, single-step
or emulation of the displaced instruction, return trap) is measured per site
class at start and subtracted (tests/targets/busy.c: a ~5 us busy function
behind a single-stepped, an emulated, a CET (endbr64; push) and a 5-byte-nop
entry point).  What compares timings with an untraced run holds only on a
quiet machine: `make bench` runs those (quiet_machine())."""
import json
import re
import statistics

from cmonlib import check, cmon, quiet_machine, eq, parse_json_lines, run, target, tmpfile, trace, read_text

FUNCS = ["busy_ss", "busy_fp", "busy_cet", "busy_nop5"]
CALLS = 300
TOLERANCE = 0.10  # the goal: p50 within 10 % of the untraced time
ATTEMPTS = 3      # a shared machine: single-stepping has bursts 25 % slower
PROBE_SHARE = 0.25  # or: at most a quarter of the probe's own cost left in


def untraced_p50():
    """Each entry point's median call time, as the program itself measured
    it untraced: the function's own time."""
    code, out, err = run([target("busy"), str(CALLS)])
    check(code == 0, "busy failed: %r" % err)
    p50 = {}
    for line in out.splitlines():
        name, val = line.split()
        p50[name] = int(val.split("=")[1])
    check(sorted(p50) == sorted(FUNCS), "busy printed %r" % out)
    return p50


def off_by(got, want):
    return abs(got - want) / want


def traced_p50(extra=()):
    res = trace(["busy_*"], launch=[target("busy"), str(CALLS)], extra=extra)
    check(res.code == 0, "cmon trace failed: %r" % res)
    p50 = {}
    for f in FUNCS:
        lat = [r["latency_ns"] for r in res.rows if r["func"] == f and r["status"] == "ok"]
        check(len(lat) == CALLS, "%s: %d records, not %d" % (f, len(lat), CALLS))
        p50[f] = statistics.median(lat)
    return p50


def profiled():
    """`cmon profile` of busy: each function's final row."""
    path = tmpfile("profile.json")
    code, _, err = cmon(["profile", "-F", "json", "-o", path, "--func", "busy_*", "--",
                         target("busy"), str(CALLS)])
    check(code == 0, "cmon profile failed: %r" % err)
    rows = [json.loads(l) for l in read_text(path).splitlines()]
    fin = {r["func"]: r for r in rows if r["final"]}
    for f in FUNCS:
        check(fin[f]["returns"] == CALLS, "%s: %r returns" % (f, fin[f]["returns"]))
    return fin


def profiled_p50():
    fin = profiled()
    return {f: fin[f]["p50_ns"] for f in FUNCS}


def within_tolerance(measure):
    """Every entry point's p50 within TOLERANCE of its untraced p50, or
    within PROBE_SHARE of what the probe itself costs a call there (`cmon
    list`'s NS/HIT, measured on this host), in one of ATTEMPTS side-by-side
    measurements (each one whole: untraced, then traced).  The correction
    is what is tested: the probe's cost taken out.  How close it comes is
    a measurement (make bench's latency section, goal within 10 %): where
    single-stepping costs ~15 us and varies by a quarter under load, a
    5 us function cannot be held to 0.5 us by a test."""
    seen = []
    hit = list_ns_per_hit()
    for _ in range(ATTEMPTS):
        want = untraced_p50()
        got = measure()
        bad = {f: (got[f], want[f]) for f in FUNCS
               if abs(got[f] - want[f]) > max(TOLERANCE * want[f], PROBE_SHARE * hit[f])}
        if not bad:
            return
        seen.append(bad)
    raise AssertionError("p50 not within %d %% of the untraced time nor within %d %% of the "
                         "probe's cost (traced, untraced; NS/HIT %r) in %d attempts: %r" %
                         (TOLERANCE * 100, PROBE_SHARE * 100, hit, ATTEMPTS, seen))


def test_latency_own_uretprobe():
    quiet_machine()
    within_tolerance(lambda: traced_p50(["--return-probe", "uretprobe"]))


def test_latency_own_ret_insn():
    quiet_machine()
    within_tolerance(lambda: traced_p50(["--return-probe", "insn"]))


def test_latency_own_profile():
    quiet_machine()
    within_tolerance(profiled_p50)


def test_latency_profile_buckets_own_time():
    """profile buckets each call's own latency (the probe's cost taken out
    in the kernel, before bucketing), so a percentile is resolved at the
    function's scale: a ~5 us call lands in [4096, 8192) ns, 128 ns wide,
    and p50 is one of its midpoints (4096 + 128 k + 63: hist__bucket_mid),
    or the min or max it is clamped to.  Bucketing the raw latency (19 us
    behind a single-step: 512 ns wide) and subtracting after gives
    whatever the bias leaves.  The single-step's cost drifts by microseconds
    under load between cmon's calibration and the calls: a run whose p50
    left [4096, 8192) is measured again (ATTEMPTS); in range, the bucket
    must be the function's own."""
    quiet_machine()
    seen = []
    for _ in range(ATTEMPTS):
        fin = profiled()
        off = {f: fin[f]["p50_ns"] for f in FUNCS if not 4096 <= fin[f]["p50_ns"] < 8192}
        if off:
            seen.append(off)
            continue
        for f in FUNCS:
            p50, lo, hi = fin[f]["p50_ns"], fin[f]["min_ns"], fin[f]["max_ns"]
            check((p50 - 4096) % 128 == 63 or p50 in (lo, hi),
                  "%s: p50 %d ns is neither a midpoint of its own 128 ns bucket nor the "
                  "min %d or max %d" % (f, p50, lo, hi))
        return
    raise AssertionError("p50 not a ~5 us call in %d attempts: %r" % (ATTEMPTS, seen))


def wrap_untraced_p50():
    code, out, err = run([target("busy"), "wrap", str(CALLS)])
    check(code == 0 and out.startswith("wrap_fp p50="), "busy wrap: %r %r" % (out, err))
    return int(out.split("=")[1])


def wrap_profiled_p50(extra=()):
    path = tmpfile("wrap.json")
    code, _, err = cmon(["profile", "-F", "json", "-o", path, "--func", "wrap_fp", "--func",
                         "busy_ss"] + list(extra) + ["--", target("busy"), "wrap", str(CALLS)])
    check(code == 0, "cmon profile failed: %r" % err)
    fin = {r["func"]: r for r in map(json.loads, read_text(path).splitlines()) if r["final"]}
    eq((fin["wrap_fp"]["returns"], fin["busy_ss"]["returns"]), (CALLS, CALLS), "returns")
    return fin["wrap_fp"]["p50_ns"]


def test_latency_profile_callee_probes_taken_out():
    """In profile (and the agent), a caller's latency is its own only
    without its traced callees' probes: wrap_fp (emulated) calls busy_ss
    (single-stepped, ~15 us of probes a call here), both profiled.
    wrap_fp's p50 was its ~5 us plus busy_ss's probes (22 us); each traced
    callee's probe cost, as a caller times it (calibrated), now goes out of
    its caller's latency in the kernel.  --raw-latency keeps it all in.
    (trace's records keep their callees' probes: their spans nest on a
    timeline.)"""
    quiet_machine()
    step = list_ns_per_hit()["busy_ss"]  # what busy_ss's entry probe costs a call
    seen = []
    for _ in range(ATTEMPTS):
        want, got = wrap_untraced_p50(), wrap_profiled_p50()
        if abs(got - want) <= max(TOLERANCE * want, PROBE_SHARE * step):
            break
        seen.append((got, want))
    else:
        raise AssertionError("wrap_fp p50 not within %d %% of its untraced time nor within "
                             "%d %% of busy_ss's probe cost (%d ns) in %d attempts: %r" %
                             (TOLERANCE * 100, PROBE_SHARE * 100, step, ATTEMPTS, seen))
    raw = wrap_profiled_p50(["--raw-latency"])
    check(raw > want + step // 2, "--raw-latency: wrap_fp p50 %d keeps busy_ss's probes "
          "(untraced %d, a single-step ~%d)" % (raw, want, step))


def test_latency_raw_keeps_probe_cost():
    """--raw-latency: the measured interval, the probe's cost left in: above
    the function's own time on every site."""
    quiet_machine()
    want = untraced_p50()
    raw = traced_p50(["--raw-latency", "--return-probe", "uretprobe"])
    for f in FUNCS:
        check(raw[f] > want[f], "%s: raw p50 %d not above untraced %d" % (f, raw[f], want[f]))


def test_latency_single_step_timed_from_step_probe():
    """A single-stepped entry (busy_ss: `lea` then `push %rbp`) is timed from
    the step probe cmon puts on the push: the single-step (~15 us here, and
    varying by microseconds call to call) is not in the measured interval at
    all, so busy_ss's raw latency is busy_fp's (an emulated entry), not
    busy_fp's plus the single-step, with either return mechanism."""
    code, out, err = cmon(["list", "busy_*", "--", target("busy")])
    from_ = {l.split()[0]: l.split()[-1] for l in out.splitlines()[1:5]}
    eq(from_, {"busy_ss": "+3", "busy_fp": "entry", "busy_cet": "entry", "busy_nop5": "entry"},
       "list: TIMED FROM (busy_ss: the push after its 3-byte lea)")
    quiet_machine()  # the rest compares timings
    hit = list_ns_per_hit()
    check(hit["busy_ss"] > 4 * hit["busy_fp"], "single-stepping costs more: %r" % hit)
    for how in ("uretprobe", "insn"):
        raw = traced_p50(["--raw-latency", "--return-probe", how])
        check(abs(raw["busy_ss"] - raw["busy_fp"]) < hit["busy_ss"] / 4,
              "%s: raw p50 busy_ss %d vs busy_fp %d: the single-step (NS/HIT %d) is in "
              "the latency" % (how, raw["busy_ss"], raw["busy_fp"], hit["busy_ss"]))


def list_ns_per_hit():
    code, out, err = cmon(["list", "busy_*", "--", target("busy")])
    check(code == 0, "cmon list failed: %r" % err)
    lines = out.splitlines()
    check("on this host" in lines[-1], "list footer: %r" % lines[-1])
    res = {}
    for line in lines[1:]:
        if not line.strip():
            break
        # Columns are separated by 2+ spaces (INSTRUCTION and RETURN hold
        # single ones); NS/HIT is the eighth.
        w = re.split(r"\s{2,}", line.strip())
        res[w[0]] = int(w[7])
    return res


def test_list_cost_measured_on_this_host():
    """`cmon list` shows each site class's cost as measured on this host: the
    single-stepped entry's NS/HIT is what a call to busy_ss really pays for
    an entry probe (its p50 traced with --no-return less its p50 untraced)."""
    quiet_machine()
    seen = []
    for _ in range(ATTEMPTS):
        hit = list_ns_per_hit()
        want = untraced_p50()
        code, out, err = cmon(["trace", "--no-return", "-F", "json", "-o", tmpfile("e.csv"),
                               "--func", "busy_ss", "--", target("busy"), str(CALLS)])
        check(code == 0, "cmon trace failed: %r" % err)
        paid = int(out.split("busy_ss p50=")[1].split()[0]) - want["busy_ss"]
        check(hit["busy_ss"] > hit["busy_fp"], "single-step costs more than emulated: %r" % hit)
        if abs(hit["busy_ss"] - paid) <= 0.35 * paid:
            return
        seen.append((hit["busy_ss"], paid))
    raise AssertionError("NS/HIT of the single-stepped site vs what a call paid: %r" % seen)


def test_spans_of_a_single_stepped_entry_nest():
    """nest_outer's entry is single-stepped with no step probe (TIMED FROM
    entry); it calls nest_inner (emulated).  The single-step's cost is
    taken out of its latency: its span began at the entry probe and so was
    cut short at its end, where nest_inner's span then stuck out (55 of
    100 in one program).  It begins that much later instead, so spans end
    where the calls did: inner's end before outer's, every call."""
    res = trace(["nest_*"], launch=[target("busy"), "nest", "50"], fmt="json")
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    outer = sorted((r for r in res.rows if r["func"] == "nest_outer"), key=lambda r: r["ts_ns"])
    inner = sorted((r for r in res.rows if r["func"] == "nest_inner"), key=lambda r: r["ts_ns"])
    eq((len(outer), len(inner)), (50, 50), "records")
    late = [(o["ts_ns"] + o["latency_ns"], i["ts_ns"] + i["latency_ns"])
            for o, i in zip(outer, inner) if i["ts_ns"] + i["latency_ns"] > o["ts_ns"] + o["latency_ns"]]
    eq(late, [], "inner ends after outer (outer end, inner end)")


def test_latency_below_the_probe_spread_is_a_bound():
    """add() takes a few ns, less than the probes' cost varies from call to
    call: its calls' latencies (less the calibrated cost) read 0 as if
    measured.  Where what is left is within the calibration's spread, the
    record says the call took less than a bound: `latency_lt_ns` (JSON, CSV),
    "<1.2us" (text); latency_ns stays the estimate."""
    res = trace(["add"], launch=[target(), "loop", "1000"], fmt="json")
    eq((res.code, res.stdout), (0, "loop sum=500500\n"), "exit status, output (%s)" % res.stderr)
    ok = [r for r in res.rows if r["status"] == "ok"]
    eq(len(ok), 1000, "calls")
    bounded = [r for r in ok if r["latency_lt_ns"] is not None]
    eq([r for r in ok if r["latency_ns"] == 0 and r["latency_lt_ns"] is None], [],
       "a latency of 0 given as a measurement")
    eq([r for r in bounded if not r["latency_ns"] < r["latency_lt_ns"]], [],
       "the bound is above the estimate")
    res = trace(["add"], launch=[target(), "loop", "1000"], fmt="text")
    rows = [l for l in res.text.splitlines()[1:] if " add(" in l]
    eq(len(rows), 1000, "text rows")
    eq([l for l in rows if re.search(r"\s0ns\s", l)], [], "text: 0ns given as a measurement")
    check(all(re.search(r"\s(?:<)?[0-9.]+(?:ns|us|ms|s)\s", l) for l in rows),
          "text: a latency or a bound such as <1.2us in each row: %r" % rows[:3])
