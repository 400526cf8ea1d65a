"""Tracing never changes the program: every function of a program, _start
included, traced in every return mode (tests/targets/argc.c)."""
import json
import os
import signal

from cmonlib import HANG, CMON, LONGJMP_OUT, check, cmon, eq, only, run, target, tmpfile, trace

MODES = ["auto", "uretprobe", "insn"]


def _untraced(prog, args):
    return run([prog] + args)


def _every_function_unchanged(name):
    prog = target(name)
    for args in (["x", "y"], ["x", "y", "z"]):
        want = _untraced(prog, args)
        for mode in MODES:
            r = trace(["%s:*" % name], launch=[prog] + args, fmt="json",
                      extra=["--return-probe", mode])
            eq((r.code, r.stdout), want[:2], "exit status and output of %s %s traced "
               "whole with --return-probe %s (%s)" % (name, " ".join(args), mode,
                                                       r.stderr[-300:]))
            start = only(r.rows, "_start")
            eq([(x["status"], x["ret"], x["latency_ns"]) for x in start],
               [("never-returns", None, None)], "_start's record (%s)" % mode)
            twice = only(r.rows, "twice")
            argc = len(args) + 1
            want_twice = [(argc,), (3,)] if argc > 3 else [(argc,)]
            eq(sorted((t["arg0"],) for t in twice), sorted(want_twice),
               "twice's arguments (%s)" % mode)
            eq(sorted(t["ret"] for t in twice), sorted(2 * a[0] for a in want_twice),
               "twice's returns (%s)" % mode)
            die = only(r.rows, "die")
            if argc > 3:
                eq([(d["status"], d["arg0"]) for d in die],
                   [("never-returns", 3)], "die's record (%s)" % mode)
            else:
                eq(die, [], "die not called")


def test_every_function_traced_leaves_program_unchanged_O2():
    _every_function_unchanged("argc")


def test_every_function_traced_leaves_program_unchanged_O0_cet():
    _every_function_unchanged("argc_O0")


def test_list_shows_functions_that_never_return():
    prog = target("argc")
    code, out, err = cmon(["list", "argc:*", "--", prog])
    eq(code, 0, "cmon list exit status (%s)" % err)
    rows = {l.split()[0]: l for l in out.splitlines() if l and not l.startswith("FUNCTION")}
    for f in ("_start", "die"):
        check("never-returns" in rows.get(f, ""), "%s's row says it never returns: %r"
              % (f, rows.get(f)))
    check("never-returns" not in rows["twice"], "twice returns: %r" % rows["twice"])


def test_indirect_tail_call_returns():
    """`return f(v)` through a pointer compiles to `jmp *%rax`: the function
    returns (it was taken for one that never does: status never-returns, no
    value, no latency).  With uretprobes every call returns its value.  On
    return instructions the jump is probed and ends the call when its target
    is outside the function (a tail call, as a direct one: no value): via_ptr
    has no other exit, either() has a ret too (v <= 1), and table()'s jump
    table jumps inside (its calls return their values)."""
    res = trace(["via_ptr"], launch=[target("tailptr"), "4"])
    eq((res.code, res.stdout), (0, "468\n"), "exit status and output (%s)" % res.stderr)
    eq([(r["arg1"], r["ret"], r["status"]) for r in res.rows],
       [(i, 2 * i, "ok") for i in range(4)], "every call returned twice its argument")
    check(all(r["latency_ns"] is not None for r in res.rows), "every call timed")
    code, out, err = cmon(["list", "via_ptr", "--", target("tailptr")])
    check("never-returns" not in out, "list: %r" % out)
    res = trace(["via_ptr", "either", "table"], launch=[target("tailptr"), "4"],
                extra=["--return-probe", "insn"])
    eq((res.code, res.stdout), (0, "468\n"), "insn: exit status and output (%s)" % res.stderr)
    got = {f: [(r["ret"], r["status"]) for r in res.rows if r["func"] == f]
           for f in ("via_ptr", "either", "table")}
    eq(got["via_ptr"], [(None, "tailcall")] * 4, "via_ptr: its jmp *%rax ends each call")
    eq(got["either"], [(100, "ok"), (101, "ok"), (None, "tailcall"), (None, "tailcall")],
       "either: its ret, or its tail call")
    eq(got["table"], [(18, "ok"), (90, "ok"), (48, "ok"), (59, "ok")],
       "table: the jump table's jump stays inside")


def test_conditional_tail_call_ends_the_call_only_when_taken():
    """cond_tail() is `test; jne twice; xor; ret`: the jne is an exit (a
    tail call) only when taken.  Its probe fires either way: the exit
    program reads the flags.  cond_tail(0) falls through and returns 0 (it
    was ended at the jne as a tail call, its ret then finding no frame)."""
    res = trace(["cond_tail"], launch=[target("tailptr"), "4"],
                extra=["--return-probe", "insn"])
    eq((res.code, res.stdout), (0, "468\n"), "exit status and output (%s)" % res.stderr)
    eq([(r["arg0"], r["status"], r["ret"]) for r in res.rows],
       [(0, "ok", 0), (1, "tailcall", None), (2, "tailcall", None), (3, "tailcall", None)],
       "the jne ends the call only when taken")


def test_lone_ret_function_on_its_ret():
    """hook() is a lone `ret`: on return instructions its entry and exit
    probes share an address, and the entry must run first.  The kernel runs
    an address's newest probe first; entries were attached first, so each
    exit closed the call before (20 ms of sleep: its latency) and the last
    call was left as never returning."""
    res = trace(["hook"], launch=[target("tailptr"), "4"], extra=["--return-probe", "insn"])
    eq((res.code, res.stdout), (0, "468\n"), "exit status and output (%s)" % res.stderr)
    eq([(r["arg0"], r["status"]) for r in res.rows], [(i, "ok") for i in range(4)],
       "every call returned")
    # Closed by the next call's exit probe, a call lasted until the next
    # one (20 ms of sleep between): each must end well before that.
    spans = [(r["ts_ns"], r["latency_ns"]) for r in res.rows]
    check(all(lat < (nxt - ts) / 2 for (ts, lat), (nxt, _) in zip(spans, spans[1:])),
          "a lone ret takes no time: %r" % spans)


def test_list_usage_matches_parsing():
    prog = target("argc")
    code, out, err = cmon(["list", "--", prog, "twice"])
    eq(code, 2, "patterns after the program: usage error")
    eq(len(err.strip().splitlines()), 1, "one line: %r" % err)
    check("before the program" in err, err)
    code, out, err = cmon(["list", "--help"])
    check("cmon list PATTERN... -- CMD" in out, "usage shows the accepted form: %r" % out)


def test_own_pid_refused():
    """cmon tracing its own pid would record its own writing forever."""
    code, out, err = run(["sh", "-c", 'exec "$0" trace -p $$ --func libc.so.6:write '
                          '--duration 2', CMON])
    eq(code, 1, "exit status (%s)" % err)
    eq(len(err.strip().splitlines()), 1, "one error line: %r" % err)
    check("is cmon itself" in err, err)


def test_duration_wins_over_a_self_feeding_storm():
    """--binary of cmon's own file with the stdio functions it writes with:
    every record written makes more calls to record.  The drain is bounded,
    so --duration (and signals) still end the trace."""
    import time
    path = tmpfile("storm.txt")
    try:
        code, out, err = run([CMON, "trace", "--binary", CMON, "--func", "libc.so.6:write",
                              "--func", "libc.so.6:_IO_*", "--duration", "1", "-o", path],
                             timeout=HANG)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    # (A drain that never ends would be a hang: run's guard fails it.)
    check(code in (0, 3), "exit status %d (%s)" % (code, err[-300:]))


def test_foreign_and_corrupt_elf_refused_by_name():
    """Another machine's ELF is never decoded as x86 and probed; a
    truncated file is corrupt, not stripped."""
    import struct
    src = open(target("argc"), "rb").read()
    cases = {
        "aarch64": (bytearray(src), "aarch64 ELF file"),
        "elf32": (bytearray(src), "32-bit ELF file"),
        "truncated": (bytearray(src[:-100]), "corrupt ELF file"),
        "half": (bytearray(src[:len(src) // 2]), "corrupt ELF file"),
    }
    cases["aarch64"][0][18:20] = struct.pack("<H", 183)  # e_machine = EM_AARCH64
    cases["elf32"][0][4] = 1                             # EI_CLASS = ELFCLASS32
    for name, (data, words) in cases.items():
        path = tmpfile(name)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o755)
        for args in (["trace", "--binary", path, "--func", "twice", "--duration", "1"],
                     ["trace", "--func", "twice", "--", path],
                     ["list", "twice", "--", path]):
            code, out, err = cmon(args)
            eq(code, 1, "%s: exit status of %s (%s)" % (name, args[:2], err))
            lines = err.strip().splitlines()
            eq(len(lines), 1, "%s: one error line: %r" % (name, err))
            check(words in lines[0] and "stripped" not in lines[0],
                  "%s: %r says %r" % (name, lines[0], words))


def test_exclusions():
    """--func '!PATTERN' and --exclude PATTERN remove what they match."""
    prog = target("argc")
    r = trace(["argc:*", "!_*"], launch=[prog, "a", "b"],
              extra=["--exclude", "argc:*tm_clones", "--exclude", "frame_dummy"])
    eq(r.code, 0, "exit status (%s)" % r.stderr[-300:])
    eq(sorted(x["func"] for x in r.rows), ["main", "twice"], "functions traced")
    code, out, err = cmon(["list", "argc:*", "!_*", "--", prog])
    eq(code, 0, err)
    listed = [l.split()[0] for l in out.splitlines()[1:] if l.strip() and not l[0].isdigit()]
    eq(sorted(listed), sorted(["main", "deregister_tm_clones", "register_tm_clones",
                               "frame_dummy", "twice", "die"]), "functions listed")
    code, out, err = cmon(["profile", "-F", "json", "--func", "argc:*", "--exclude", "_*",
                           "--exclude", "*tm_clones", "--exclude", "frame_dummy",
                           "--", prog, "a", "b"])
    eq(code, 0, err[-300:])
    import json
    funcs = {json.loads(l)["func"] for l in out.splitlines() if l.startswith("{")}
    check(funcs <= {"main", "twice", "die"} and {"main", "twice"} <= funcs,
          "profiled functions: %r" % funcs)
    code, out, err = cmon(["trace", "--func", "argc:*", "--exclude", "argc:*", "--", prog])
    eq(code, 1, "everything excluded")
    check("is excluded" in err and len(err.strip().splitlines()) == 1, err)


def test_inlined_everywhere_names_its_callers():
    prog = target("inlined")
    code, out, err = cmon(["trace", "--func", "sq", "--", prog])
    eq(code, 1, "exit status (%s)" % err)
    lines = err.strip().splitlines()
    eq(len(lines), 1, "one error line: %r" % err)
    check("inlined everywhere" in lines[0] and "DW_AT_inline" in lines[0], lines[0])
    callers = lines[0].rsplit(": ", 1)[1]
    eq(sorted(callers.split(", ")), ["a", "b"], "callers named")


def test_binary_replaced_on_disk_is_said():
    """--binary FILE: the links cover FILE's inode; when another file takes
    its place, cmon says so once on stderr (processes started from it run
    untraced) and the calls of the old file stay recorded."""
    import shutil
    import time
    from cmonlib import Background
    path = os.path.join(os.path.dirname(tmpfile("x")), "replaced")
    shutil.copy(target("argc"), path)
    out = tmpfile("replaced.csv")
    bg = Background(["trace", "-F", "json", "-o", out, "--binary", path, "--func", "twice"])
    try:
        bg.wait_attached()
        eq(run([path, "a"])[1], "argc=2 argv1=a t=4\n", "old file's output")
        shutil.copy(path, path + ".new")
        os.rename(path + ".new", path)
        end = time.monotonic() + HANG  # a hang guard: cmon says it, or fails here
        while "replaced or removed" not in bg.stderr and time.monotonic() < end:
            time.sleep(0.05)
        eq(run([path, "a", "b"])[1], "argc=3 argv1=a t=6\n", "new file's output")
        bg.signal(signal.SIGINT)
        eq(bg.wait(HANG), 0, "exit status (%s)" % bg.stderr)
    finally:
        bg.kill()
    said = [l for l in bg.stderr.splitlines() if "replaced or removed" in l]
    eq(len(said), 1, "said once: %r" % bg.stderr)
    from cmonlib import parse_json_lines, read_text
    eq([r["arg0"] for r in parse_json_lines(read_text(out))], [2], "the old file's call recorded")


def test_two_names_one_address():
    """Widget::Widget(int) is _ZN6WidgetC1Ei and _ZN6WidgetC2Ei at one
    address: naming both (or either) is one probe and every call once; it
    failed with "cannot be probed safely (see the warning above)"."""
    want = [("Widget::Widget(int)", '{"this":{"v":0},"x":21}'),
            ("Widget::Widget(int)", '{"this":{"v":0},"x":5}')]
    for funcs in (["_ZN6WidgetC1Ei", "_ZN6WidgetC2Ei"], ["_ZN6WidgetC2Ei"],
                  ["Widget::Widget(int)", "_ZN6WidgetC1Ei"]):
        res = trace(funcs, launch=[target("ctor")], fmt="json")
        eq(res.code, 0, "%r: exit status (%s)" % (funcs, res.stderr.strip()))
        eq(res.stdout, "ctor 42 10\n", "%r: program output" % funcs)
        recs = [json.loads(l) for l in res.text.splitlines()]
        eq([(r["func"], json.dumps(r["args"], separators=(",", ":"))) for r in recs], want,
           "%r: records" % funcs)
        check("1 function" in res.stderr, "%r: one probe: %r" % (funcs, res.stderr))


def test_clone_parameter_not_passed_is_optimized_out():
    """gcc's IPA-SRA passes sra() p->b instead of p (a clone,
    sra.constprop.0.isra.0): p's location is DW_OP_GNU_parameter_ref, the
    caller's value.  It was read from the register the ABI gives it (where
    p->b is): a pointer that faulted, 'p: null'.  It is optimized out, and
    the others keep their own locations."""
    res = trace(["tailptr:sra*"], launch=[target("tailptr"), "3"], fmt="json")
    eq((res.code, res.stdout), (0, "382\n"), "exit status and output (%s)" % res.stderr)
    eq([(dict(r["args"]), r["retval"], "faults" in r) for r in res.rows],
       [({"k": i, "p": "<unavailable: optimized out>"}, 2 * i, False) for i in range(3)],
       "p optimized out, k and the value exact")


def test_loop_back_to_the_entry_is_one_call():
    """count_down() jumps back to its own first instruction n times (gcc -Os
    makes loops so): each jump hit the entry probe, and was counted as a
    call of its own (18 calls for 3, and as many noreturn on ret
    instructions).  An entry at the slot of the function's own pending call
    is that call going on: 4 calls, each returning n, in every mode and in
    profile."""
    for how in ("uretprobe", "insn"):
        res = trace(["count_down"], launch=[target("tailptr"), "4"],
                    extra=["--return-probe", how])
        eq((res.code, res.stdout), (0, "468\n"), "%s: exit status and output (%s)"
           % (how, res.stderr))
        eq([(r["arg0"], r["ret"], r["status"]) for r in res.rows],
           [(i, i, "ok") for i in range(4)], "%s: one call each, returning n" % how)
    path = tmpfile("count_down.json")
    code, out, err = cmon(["profile", "-F", "json", "-o", path, "--func", "count_down", "--",
                           target("tailptr"), "4"])
    eq(code, 0, "profile (%s)" % err)
    fin = [json.loads(l) for l in open(path) if '"final":true' in l][0]
    eq((fin["calls"], fin["returns"], fin["noreturn"]), (4, 4, 0), "profile counts")


def test_setjmp_and_vfork_traced_safely():
    """Functions that return twice: setjmp saved the uretprobe's trampoline
    as the place longjmp returns to, and the program died of SIGILL there
    (exit 132); vfork's child returned through the parent's trampoline.
    Their returns are seen on their ret instructions."""
    for mode in ("auto", "uretprobe"):
        res = trace(["_setjmp", "jumper", "add"], launch=[target(), "longjmp"], fmt="json",
                    extra=["--return-probe", mode])
        eq((res.code, res.stdout), (0, LONGJMP_OUT), "exit status and output (%s): %s"
           % (mode, res.stderr[-300:]))
        eq([(r["func"], r["status"]) for r in res.rows if r["func"] != "_setjmp"],
           [("jumper", "noreturn"), ("add", "ok")], "jumper and add (%s)" % mode)
        res = trace(["vfork"], launch=[target(), "vfork"], fmt="json",
                    extra=["--return-probe", mode])
        eq((res.code, res.stdout), (0, "vfork=7\n"), "exit status and output with vfork "
           "traced (%s): %s" % (mode, res.stderr[-300:]))
        eq([r["func"] for r in res.rows], ["vfork"], "vfork's record (%s)" % mode)
