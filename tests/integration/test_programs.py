"""Harder programs: C++ exceptions, threads, fork+exec, CET/PIE builds."""
import re

from cmonlib import (CALLS_OUT, CXX_OUT, FORK_OUT, RECURSE_OUT, Skip, check, cmon, eq, only,
                     run, target, trace, u32)
from test_launch import CALLS_FUNCS, check_calls_rows

POKE = "shapes::Widget::poke(int)"


def list_rows(args):
    """`cmon list ARGS`: {FUNCTION: {column: value}} (PROBE/INSTRUCTION/COST...)."""
    code, out, err = cmon(["list"] + list(args))
    eq(code, 0, "cmon list exit status (%s)" % err.strip())
    lines = out.splitlines()
    head = lines[0]
    eq(head.split()[:5], ["FUNCTION", "MODULE", "ADDRESS", "OFFSET", "PROBE"], "list header")
    res = {}
    for line in lines[1:]:
        if not line.strip():
            break
        fields = {}
        # Columns are separated by 2+ spaces; single spaces are inside
        # INSTRUCTION ("lea eax, [rdi + rsi]") and RETURN.
        w = re.split(r"\s{2,}", line.strip())
        fields["FUNCTION"], fields["MODULE"] = w[0], w[1]
        fields["ADDRESS"], fields["OFFSET"], fields["PROBE"] = w[2], w[3], w[4]
        fields["INSTRUCTION"], fields["COST"] = w[5], w[6]
        fields["NS/HIT"], fields["RET NS"], fields["RETURN"] = w[7], w[8], w[9]
        fields["TIMED FROM"] = w[10]
        res[fields["FUNCTION"]] = fields
    return res


def test_hot_cold_split_functions():
    """gcc moves a function's rare path into a part of its own (work.cold):
    the hot part begins with `js work.cold`, a jump out of its symbol.  It
    was taken for a tail call that ended every call there (no value, 0 ns),
    the cold part was traced as a function of its own (never returning),
    and the function lost its DWARF types (its DIE has two ranges, no
    low_pc).  Now the parts are one function: jumps between them stay
    inside, the cold part's ret is an exit (checked(-1) returns -1 from
    there), an exception thrown in it leaves the call unreturned."""
    res = trace(["work", "checked"], launch=[target("coldsplit")], fmt="json")
    eq(res.code, 0, "exit status (%s)" % res.stderr.strip())
    got = [(r["func"].split("(")[0], dict(r["args"]), r.get("retval"), r["status"])
           for r in res.rows]
    want = []
    for i in range(1, 5):
        n = i * 1000
        want.append(("checked", {"n": n, "tag": "t"}, sum(k ^ n for k in range(n)), "ok"))
        want.append(("work", {"n": n}, sum(k * (k ^ n) for k in range(n)), "ok"))
    want += [("work", {"n": -1}, None, "noreturn"),
             ("checked", {"n": -1, "tag": "neg"}, -1, "ok")]
    eq(got, want, "every call, typed, with its value")
    check(all(r["latency_ns"] > 0 for r in res.rows if r["status"] == "ok"), "timed")
    rows = list_rows(["work", "checked", "--", target("coldsplit")])
    eq(sorted(rows), ["checked(long, char const*)", "work(long)"], "no .cold function listed")
    check(all("a cold part" in r["RETURN"] for r in rows.values()), "list: %r" % rows)


def test_cxx_exception_ret_insn():
    res = trace(["risky", "shapes::Widget::poke"], launch=[target("cxx_throw")])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, CXX_OUT, "program output")
    eq(len(res.rows), 12, "records")
    risky = only(res.rows, "risky(int)")
    eq(len(risky), 6, "risky records")
    got = sorted((r["arg0"], r["status"], r["ret"], r["depth"]) for r in risky)
    eq(got, [(0, "ok", 101, 0), (1, "noreturn", None, 0), (2, "ok", 103, 0),
             (3, "noreturn", None, 0), (4, "ok", 105, 0), (5, "noreturn", None, 0)],
       "risky(x) (x, status, ret, depth)")
    poke = only(res.rows, POKE)
    eq(len(poke), 6, "poke records")
    # A member function: arg0 is `this` (one Widget on risky's stack), arg1 is x.
    got = sorted((r["arg1"], r["status"], r["ret"], r["depth"]) for r in poke)
    eq(got, [(0, "ok", 100, 1), (1, "noreturn", None, 1), (2, "ok", 102, 1),
             (3, "noreturn", None, 1), (4, "ok", 104, 1), (5, "noreturn", None, 1)],
       "poke(x) (x, status, ret, depth)")
    check(all(r["arg0"] > 4096 for r in poke), "poke's this pointer")
    eq({r["module"] for r in res.rows}, {"cxx_throw"}, "module")
    eq(res.summary()["lost"], 0, "events lost")

    # list tells how returns are observed: on ret instructions.
    rows = list_rows(["risky", "shapes::Widget::poke", "--", target("cxx_throw")])
    eq(sorted(rows), ["risky(int)", POKE], "listed functions")
    for name, r in rows.items():
        check(r["RETURN"].startswith("ret-insn"), "%s RETURN %r" % (name, r["RETURN"]))
        eq(r["MODULE"], "cxx_throw", "module of " + name)


def test_cxx_exception_insn_forced():
    res = trace(["risky"], launch=[target("cxx_throw")], extra=["--return-probe", "insn"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, CXX_OUT, "program output")
    eq(sorted((r["arg0"], r["status"], r["ret"]) for r in res.rows),
       [(0, "ok", 101), (1, "noreturn", None), (2, "ok", 103), (3, "noreturn", None),
        (4, "ok", 105), (5, "noreturn", None)], "risky(x) (x, status, ret)")


def test_threads():
    nthreads, per = 4, 2000
    res = trace(["work"], launch=[target(), "threads", str(nthreads), str(per)])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    total = sum(t * 1000 * per + per * (per - 1) // 2 for t in range(nthreads))
    eq(res.stdout, "threads=%d total=%d\n" % (nthreads, total), "program output")
    eq(len(res.rows), nthreads * per, "records")
    pid = res.rows[0]["pid"]
    by_tid = {}
    for r in res.rows:
        eq(r["pid"], pid, "pid")
        eq((r["status"], r["depth"]), ("ok", 0), "status and depth")
        eq(r["ret"], r["arg0"] * 1000 + r["arg1"], "work(t, i) = t*1000+i: %r" % r)
        by_tid.setdefault(r["tid"], []).append(r)
    eq(len(by_tid), nthreads, "distinct tids")
    check(pid not in by_tid, "work ran in threads, not in the main thread")
    ts = set()
    for tid, rs in by_tid.items():
        t = {r["arg0"] for r in rs}
        eq(len(t), 1, "thread %d: one arg0 (its thread index): %r" % (tid, sorted(t)[:8]))
        ts |= t
        eq(sorted(r["arg1"] for r in rs), list(range(per)), "thread %d: i values" % tid)
        # Per thread the records come in call order.
        eq([r["arg1"] for r in rs], list(range(per)), "thread %d: record order" % tid)
    eq(ts, set(range(nthreads)), "thread indexes")
    s = res.summary()
    eq((s["written"], s["lost"]), (nthreads * per, 0), "events written and lost")
    eq(s["table"], {"work": (nthreads * per, nthreads * per, 0)}, "per-function table")


def test_fork_child():
    """The child's add(100, 200) is followed by default (its own pid), not
    with --no-follow (issue 14; test_forks.py has the rest)."""
    res = trace(["add"], launch=[target(), "fork"], extra=["--no-follow"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, FORK_OUT, "program output")
    eq([(r["arg0"], r["arg1"], r["ret"], r["status"]) for r in res.rows],
       [(1, 2, 3, "ok"), (3, 4, 7, "ok")], "add records (parent only)")
    eq(len({r["pid"] for r in res.rows}), 1, "one pid")
    eq(res.rows[0]["pid"], res.rows[0]["tid"], "pid == tid")
    res = trace(["add"], launch=[target(), "fork"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, FORK_OUT, "program output")
    eq([(r["arg0"], r["arg1"], r["ret"], r["status"]) for r in res.rows],
       [(1, 2, 3, "ok"), (100, 200, 300, "ok"), (3, 4, 7, "ok")], "add records")
    parent, child = res.rows[0]["pid"], res.rows[1]["pid"]
    check(child != parent, "the child's own pid")
    eq([r["pid"] for r in res.rows], [parent, child, parent], "pids")
    eq(res.rows[1]["tid"], child, "the child's tid")


def test_cet_build():
    rows = list_rows(["--binary", target("calls_cet"), "add", "middle", "outer"])
    eq(sorted(rows), ["add", "middle", "outer"], "listed functions")
    # endbr64 is 4 bytes: the probe goes after it.
    for name in ("add", "middle", "outer"):
        eq(rows[name]["PROBE"], "+4", "PROBE of %s" % name)
        eq(rows[name]["ADDRESS"], rows[name]["OFFSET"], "a PIE lists file offsets")
    # middle and outer start `endbr64; push rbp`: the kernel emulates the push.
    for name in ("middle", "outer"):
        eq((rows[name]["INSTRUCTION"], rows[name]["COST"]), ("push rbp", "emulated"),
           "instruction and cost of %s" % name)
    # add is `endbr64; lea eax, [rdi + rsi]`: single-stepped.
    eq((rows["add"]["INSTRUCTION"], rows["add"]["COST"]),
       ("lea eax, [rdi + rsi]", "single-step"), "instruction and cost of add")

    res = trace(CALLS_FUNCS, launch=[target("calls_cet"), "calls"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, CALLS_OUT, "program output")
    check_calls_rows(res.rows, comm="calls_cet", module="calls_cet")

    res = trace(["fact", "outer", "middle", "leaf"], launch=[target("calls_cet"), "recurse"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, RECURSE_OUT, "program output")
    got = sorted((r["func"], r["arg0"], r["depth"], r["ret"]) for r in res.rows)
    eq(got, [("fact", 1, 4, 1), ("fact", 2, 3, 2), ("fact", 3, 2, 6), ("fact", 4, 1, 24),
             ("fact", 5, 0, 120), ("leaf", 10, 2, 11), ("middle", 10, 1, 22),
             ("outer", 10, 0, 25)], "records (func, arg0, depth, ret)")


def test_non_cet_probe_at_entry():
    rows = list_rows(["--binary", target("calls"), "add", "six"])
    for name in ("add", "six"):
        eq(rows[name]["PROBE"], "+0", "PROBE of %s" % name)
        eq(rows[name]["MODULE"], "calls", "module of %s" % name)
        eq(rows[name]["RETURN"], "uretprobe", "RETURN of %s" % name)
    # Non-PIE: the address is the link-time one, the offset the file's.
    eq(int(rows["add"]["ADDRESS"], 16) - int(rows["add"]["OFFSET"], 16), 0x400000,
       "non-PIE base")


def test_pie_launch():
    res = trace(CALLS_FUNCS, launch=[target("calls_pie"), "calls"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, CALLS_OUT, "program output")
    check_calls_rows(res.rows, comm="calls_pie", module="calls_pie")


def test_return_probe_modes():
    # Both ways of seeing returns give the same records for plain C.
    for mode in ("uretprobe", "insn"):
        res = trace(["fact", "outer", "middle", "leaf"], launch=[target(), "recurse"],
                    extra=["--return-probe", mode])
        eq(res.code, 0, "%s: cmon exit status (%s)" % (mode, res.stderr.strip()))
        eq(res.stdout, RECURSE_OUT, "%s: program output" % mode)
        eq([(r["func"], r["arg0"], r["depth"], r["ret"], r["status"]) for r in res.rows],
           [("fact", 1, 4, 1, "ok"), ("fact", 2, 3, 2, "ok"), ("fact", 3, 2, 6, "ok"),
            ("fact", 4, 1, 24, "ok"), ("fact", 5, 0, 120, "ok"), ("leaf", 10, 2, 11, "ok"),
            ("middle", 10, 1, 22, "ok"), ("outer", 10, 0, 25, "ok")],
           "%s: records (func, arg0, depth, ret, status)" % mode)
        res = trace(["jumper", "add"], launch=[target(), "longjmp"],
                    extra=["--return-probe", mode])
        eq(res.code, 0, "%s: cmon exit status (%s)" % (mode, res.stderr.strip()))
        eq([(r["func"], r["arg0"], r["depth"], r["ret"], r["status"]) for r in res.rows],
           [("jumper", 7, 0, None, "noreturn"), ("add", 1, 0, 2, "ok")],
           "%s: longjmp records" % mode)


def test_tail_call():
    # Needs the "tail" scenario in calls.c (tail_caller(4) jumps to
    # tail_target(5) = 15); skipped until the target has it.
    code, out, err = run([target(), "tail"])
    if code == 2 and "unknown scenario" in err:
        raise Skip("calls has no 'tail' scenario yet")
    eq((code, out), (0, "tail=15\n"), "untraced run")
    res = trace(["tail_caller", "tail_target"], launch=[target(), "tail"],
                extra=["--return-probe", "insn"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, "tail=15\n", "program output")
    got = {r["func"]: r for r in res.rows}
    eq(sorted(got), ["tail_caller", "tail_target"], "records")
    c, t = got["tail_caller"], got["tail_target"]
    eq((c["arg0"], c["status"], c["ret"], c["depth"]), (4, "tailcall", None, 0),
       "tail_caller (arg0, status, ret, depth)")
    check(c["latency_ns"] is not None and c["latency_ns"] > 0, "tail_caller latency")
    eq((t["arg0"], t["status"], t["ret"]), (5, "ok", 15), "tail_target (arg0, status, ret)")
    # With the default choice the caller did return (through its callee):
    # it must not be reported as a call that never returned.
    res = trace(["tail_caller", "tail_target"], launch=[target(), "tail"])
    eq(res.stdout, "tail=15\n", "program output (auto)")
    c = only(res.rows, "tail_caller")
    eq(len(c), 1, "tail_caller records (auto)")
    check(c[0]["status"] in ("tailcall", "ok"), "tail_caller status in auto mode: %s"
          % c[0]["status"])
    if c[0]["status"] == "ok":
        eq(c[0]["ret"], 15, "tail_caller ret (auto)")


def test_c_program_mapping_cxx_runtime_keeps_uretprobes():
    """A C program that maps libstdc++ through a dependency (redis through
    jemalloc) and OpenSSL's libcrypto (which imports makecontext for its
    async jobs): no exception can pass through its own C frames, so its
    returns are uretprobes (a single-stepped ret costs ~10x more); libc,
    built with exception tables, is observed on its ret instructions."""
    exe = target("calls_cxxrt")
    code, out, _ = run(["ldd", exe])
    check("libcrypto.so" in out, "calls_cxxrt maps libcrypto, as redis does: %s" % out)
    rows = list_rows(["add", "negate", "libc.so.6:qsort", "--", exe])
    eq(rows["add"]["RETURN"], "uretprobe", "add's return")
    eq(rows["negate"]["RETURN"], "uretprobe", "negate's return")
    check(rows["qsort"]["RETURN"].startswith("ret-insn"), "qsort's return %r" % rows["qsort"]["RETURN"])
    # What a return costs, measured here: a uretprobe well under a
    # single-stepped ret.
    check(0 < int(rows["add"]["RET NS"]) * 3 < int(rows["qsort"]["RET NS"]),
          "return costs: uretprobe %s ns, ret-insn %s ns" % (rows["add"]["RET NS"], rows["qsort"]["RET NS"]))
    res = trace(["add", "six", "negate"], launch=[exe, "calls"])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, CALLS_OUT, "program output")
    eq([(r["func"], r["ret"], r["status"]) for r in res.rows],
       [("add", 5, "ok"), ("add", 2**32 - 3, "ok"), ("six", 91, "ok"),
        ("negate", -1234567890123, "ok")], "records (func, ret, status)")


def test_cxx_exception_through_libc_qsort():
    """A comparator's exception unwinds through libc's qsort: the program
    is unchanged (a uretprobe on qsort would abort it), the calls the
    exception went through are noreturn, the others pair."""
    exe = target("cxx_qsort")
    code, out, err = run([exe])
    eq((code, out), (0, "ra=0 a=1,3,5,9 rb=-1\n"), "untraced run")
    res = trace(["sort_upto", "by_value", "libc.so.6:qsort"], launch=[exe])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, out, "program output")
    top = [(r["arg2"], r["ret"], r["status"]) for r in res.rows if r["func"].startswith("sort_upto")]
    eq(top, [(10, 0, "ok"), (6, 2**32 - 1, "ok")], "sort_upto (lim, ret, status)")
    cmp = [r for r in res.rows if r["func"] == "by_value"]
    eq([r["status"] for r in cmp].count("noreturn"), 1, "the comparator that threw")
    eq(res.summary()["lost"], 0, "events lost")


def test_cxx_forced_unwind_through_traced_frames():
    """pthread_exit() unwinds (as a Rust panic does) through traced C++
    frames and runs their destructors; a uretprobe there would stop the
    unwinder and skip "guard 1 released".  The program is unchanged."""
    exe = target("cxx_exit")
    code, out, err = run([exe])
    eq((code, out), (0, "guard 10 released\nguard 1 released\nguard 20 released\n"
                        "guard 2 released\nworker 2 returned 3\ndone\n"), "untraced run")
    res = trace(["worker", "leave"], launch=[exe])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, out, "program output")
    eq(sorted((r["func"], r["arg0"], r["status"], r["ret"]) for r in res.rows),
       [("leave(int)", 1, "noreturn", None), ("leave(int)", 2, "ok", 2),
        ("worker(int)", 1, "noreturn", None), ("worker(int)", 2, "ok", 3)],
       "records (func, id, status, ret)")


def test_trace_returns_past_the_kernels_uretprobe_depth():
    """trace: the 37 returns of nest(100) nested past the kernel's 64
    uretprobes are not seen; they are counted lost with their cause, not
    written as calls that never returned (noreturn)."""
    res = trace(["nest"], launch=[target(), "deep", "100"])
    eq(res.stdout, "nest=100\n", "program output")
    eq(res.code, 3, "losses: exit 3 (%s)" % res.stderr)
    eq(sorted((r["status"], r["ret"]) for r in res.rows),
       sorted(("ok", k) for k in range(37, 101)), "the 64 outer returns, with their values")
    check("(37 returns nested past the kernel's 64 uretprobes: --return-probe insn sees them)"
          in res.stderr, "the cause, per function: %r" % res.stderr)
    res = trace(["nest"], launch=[target(), "deep", "100"], extra=["--return-probe", "insn"])
    eq(res.code, 0, "insn: exit status (%s)" % res.stderr)
    eq(sorted(r["ret"] for r in res.rows), list(range(101)), "insn: every return")


def test_ifunc_traced_at_its_implementation():
    """strcmp is an IFUNC in glibc: `--func strcmp` was refused ("an IFUNC
    resolver, not the function").  cmon asks its own copy of the same libc
    which implementation the resolver picks on this host (a local symbol:
    named from the debug file) and probes that one under the name strcmp,
    past its first AVX instruction, which the kernel cannot probe."""
    res = trace(["strcmp"], launch=[target(), "strcmp", "abc", "abd"], fmt="json",
                extra=["--raw"])
    eq((res.code, res.stdout), (0, "strcmp=-1 memset=a\n"), "exit status and output (%s)"
       % res.stderr)
    calls, written, lost = res.summary()["table"]["strcmp"]
    check(calls > 0 and (calls, written, lost) == (calls, calls, 0),
          "strcmp: calls, written, lost: %r" % ((calls, written, lost),))
    last = max(res.rows, key=lambda r: r["ts_ns"])
    eq((last["func"], last["status"], u32(last["ret"]) - (1 << 32) if u32(last["ret"]) >> 31
        else u32(last["ret"])), ("strcmp", "ok", -1), "strcmp(\"abc\", \"abd\")")


def test_function_without_visible_exits_recorded_at_entry():
    """_Unwind_Resume (libgcc) leaves through an indirect jump cmon cannot
    follow, in a C++ program where a uretprobe is not safe: it was skipped,
    and named exactly it failed the whole run.  Its calls are recorded at
    their entry, status `entry`, at their depth (under guarded, whose
    landing pad calls it)."""
    res = trace(["_Unwind_Resume", "guarded"], launch=[target("cxx_cleanup")], fmt="json")
    eq((res.code, res.stdout), (0, "sum=9 caught=3 cleaned=6\n"),
       "exit status and output (%s)" % res.stderr)
    got = [(r["func"].split("(")[0], r["status"], r["depth"])
           for r in sorted(res.rows, key=lambda r: r["ts_ns"])]
    eq(got, [("guarded", "ok", 0), ("guarded", "noreturn", 0), ("_Unwind_Resume", "entry", 1)] * 3,
       "(func, status, depth) in entry order")
    check("_Unwind_Resume in " in res.stderr and "recorded at entry" in res.stderr,
          "the warning says how it is traced: %s" % res.stderr)
