"""trace --watch EXPR: hardware watchpoints (tests/targets/watch.c: main
writes counter = 10, 20, 30, 40 on the lines marked W1..W4, then a second
thread, created after attach, writes 50 on W5; small_u16 goes 7 -> 8)."""
import json
import os
import time

from cmonlib import (Background, WaitTarget, check, cmon, eq, read_text, run, stderr_lines,
                     target, tmpfile, HERE)

NEEDS = ["hw_breakpoint"]  # every test here makes breakpoints fire (cmon host)
SRC = os.path.join(os.path.dirname(HERE), "targets", "watch.c")


def _line(mark):
    with open(SRC) as f:
        for n, text in enumerate(f, 1):
            if "/* %s */" % mark in text:
                return n
    raise AssertionError("no %s in %s" % (mark, SRC))


def _writes():
    """(old, new, function, line) of the five writes, in order."""
    return [(1, 10, "main", _line("W1")), (10, 20, "main", _line("W2")),
            (20, 30, "main", _line("W3")), (30, 40, "main", _line("W4")),
            (40, 50, "writer", _line("W5"))]


def _symbol(binary, name):
    code, out, _ = run(["nm", target(binary)])
    eq(code, 0, "nm")
    for l in out.splitlines():
        w = l.split()
        if len(w) == 3 and w[2] == name:
            return int(w[0], 16)
    raise AssertionError("no %s in %s" % (name, binary))


def _json(extra, binary="watch", scenario="writes"):
    path = tmpfile("watch.json")
    code, out, err = cmon(["trace", "-F", "json", "-o", path] + extra +
                          ["--", target(binary), scenario])
    text = read_text(path) if os.path.exists(path) else ""
    check(text.endswith("\n") or not text, "JSON Lines end with a newline")
    return code, out, err, [json.loads(l) for l in text.splitlines()]


def test_watch_launched_pie_every_write_in_order():
    """PIE launched: the address is known at the exec stop, before main."""
    code, out, err, rows = _json(["--watch", "counter"])
    eq(code, 0, "exit status (%s)" % err)
    eq(out, "counter 50\n", "the program's own output")
    watch = [r for r in rows if r.get("kind") == "watch"]
    eq([(r["old"], r["new"], r["func"], r["line"]) for r in watch], _writes(),
       "old, new, writer and line of each write")
    check(all(r["file"].endswith("watch.c") and r["watch"] == "counter" and r["len"] == 8
              for r in watch), watch)
    pid = watch[0]["pid"]
    eq([r["tid"] == pid for r in watch], [True] * 4 + [False],
       "main thread, then the thread created later (inherited watchpoint)")
    check("cmon: watch counter" in err and ": 5 writes" in err, err)


def test_watch_lines_in_a_clang_build():
    """A clang build: its DWARF 5 gives the global's address as an index
    into .debug_addr (DW_OP_addrx), so the variable was not found and its
    values were raw hex; and it writes no .debug_aranges, so each write's
    source line was null (line 0)."""
    code, out, err, rows = _json(["--watch", "counter"], binary="watch_clang")
    eq((code, out), (0, "counter 50\n"), "exit status and output (%s)" % err)
    watch = [r for r in rows if r.get("kind") == "watch"]
    eq([(r["old"], r["new"], r["func"]) for r in watch], [w[:3] for w in _writes()],
       "old, new and writer of each write")
    check(all(r["file"].endswith("watch.c") for r in watch), watch)
    eq([r["line"] for r in watch], [w[3] for w in _writes()], "the line of each write")


def test_watch_given_twice_reported_once():
    """--watch counter twice watches it once: each write was reported twice
    (and counted as 10 of 10 seen).  Two names of the same bytes stay two
    watches (test_watch_pid_addr_len_and_symbol_csv)."""
    code, out, err, rows = _json(["--watch", "counter", "--watch", "counter"])
    eq(code, 0, "exit status (%s)" % err)
    watch = [r for r in rows if r.get("kind") == "watch"]
    eq([(r["old"], r["new"], r["func"], r["line"]) for r in watch], _writes(),
       "each write once")
    check("cmon: watching 1 address in process" in err, err)


def test_watch_text_and_second_global():
    code, out, err = cmon(["trace", "--watch", "counter", "--watch", "small_u16", "--",
                           target("watch"), "writes"])
    eq(code, 0, "exit status (%s)" % err)
    lines = [l for l in out.splitlines() if " WATCH " in l]
    eq(len(lines), 6, out)
    check(lines[2].split(" WATCH ")[1].startswith("small_u16 7 -> 8 in main+0x"), lines[2])
    check(lines[0].split(" WATCH ")[1].startswith("counter 1 -> 10 in main+0x"), lines[0])
    check(lines[0].endswith("(watch.c:%d)" % _line("W1")), lines[0])
    check(lines[5].split(" WATCH ")[1].startswith("counter 40 -> 50 in writer+0x"), lines[5])


def test_watch_pid_addr_len_and_symbol_csv():
    """-p of a running program; ADDR:LEN (raw hex) and SYMBOL+OFF."""
    addr = _symbol("watch_nopie", "counter")
    path = tmpfile("watch.csv")
    t = WaitTarget(["writes"], binary="watch_nopie")
    bg = Background(["trace", "-p", str(t.pid), "-F", "csv", "-o", path,
                     "--watch", "0x%x:8" % addr, "--watch", "counter+0"])
    try:
        end = time.monotonic() + 15
        while "cmon: watching 2 addresses" not in bg.stderr:
            check(time.monotonic() < end and bg.p.poll() is None, bg.stderr)
            time.sleep(0.02)
        t.release()
        code, out = t.finish()
        eq((code, out), (0, "counter 50\n"), "the program ran as untraced")
        eq(bg.wait(), 0, "cmon ends with the process (%s)" % bg.stderr)
    finally:
        bg.kill()
        t.kill()
    lines = read_text(path).splitlines()
    eq(lines[0], "schema,time_ns,pid,tid,comm,watch,addr,old,new,func,file,line,ip",
       "CSV header")
    rows = [l.split(",") for l in lines[1:]]
    eq({r[0] for r in rows}, {"1"}, "the schema column")
    for name in ("0x%x:8" % addr, "counter+0"):
        got = [(r[7], r[8], r[9], int(r[11])) for r in rows if r[5] == name]
        eq(got, [(hex(o), hex(n), f, l) for o, n, f, l in _writes()], name)
    check(all(r[6] == "0x%x" % addr for r in rows), rows)


def test_watch_types_signed_pointer_char():
    """Each global as its DWARF type says: an int's sign, a pointer in hex,
    a char as its number."""
    code, out, err, rows = _json(["--watch", "neg", "--watch", "ptr", "--watch", "letter"],
                                 binary="watch_nopie", scenario="types")
    eq((code, out), (0, "neg 7\n"), err)
    got = [(r["watch"], r["old"], r["new"], r["len"]) for r in rows]
    eq(got, [("neg", 0, -5, 4), ("ptr", "0x0", hex(_symbol("watch_nopie", "counter")), 8),
             ("letter", ord("z"), ord("A"), 1), ("neg", -5, 7, 4)], "in write order")
    check("cmon: watch neg" in err and "(int)" in err and "(pointer)" in err, err)


def test_watch_pid_thread_made_before_attach():
    """-p: a thread that exists at attach gets its own event."""
    path = tmpfile("early.json")
    t = WaitTarget(["early"], binary="watch")
    eq(len(os.listdir("/proc/%d/task" % t.pid)), 2, "two threads at attach")
    bg = Background(["trace", "-p", str(t.pid), "-F", "json", "-o", path, "--watch", "counter"])
    try:
        end = time.monotonic() + 15
        while "cmon: watching 1 address" not in bg.stderr:
            check(time.monotonic() < end and bg.p.poll() is None, bg.stderr)
            time.sleep(0.02)
        t.release()
        eq(t.finish(), (0, "counter 60\n"), "the program ran as untraced")
        eq(bg.wait(), 0, "cmon ends with the process (%s)" % bg.stderr)
    finally:
        bg.kill()
        t.kill()
    rows = [json.loads(l) for l in read_text(path).splitlines()]
    eq([(r["old"], r["new"], r["func"], r["line"], r["tid"] != r["pid"]) for r in rows],
       [(1, 60, "early_writer", _line("W6"), True)], "the early thread's write")


def test_watch_fork_and_exec():
    """A forked child is watched (inherited event; its first old value is
    unknown); once it execs, its addresses mean another program: not."""
    code, out, err, rows = _json(["--watch", "counter"], scenario="forkexec")
    eq((code, out), (0, "counter 50\ncounter 80\n"), err)
    eq(len({r["pid"] for r in rows}), 2, "two processes: %r" % rows)
    parent = rows[-1]["pid"]
    eq([(r["old"], r["new"], r["func"], r["line"], r["pid"] == parent) for r in rows],
       [(None, 70, "main", _line("W7"), False), (1, 80, "main", _line("W8"), True)],
       "the child's write before its exec, the parent's; nothing of the exec'd program")


def test_watch_with_func_json():
    code, out, err, rows = _json(["--watch", "counter", "--func", "writer"])
    eq(code, 0, "exit status (%s)" % err)
    eq([r["func"] for r in rows if r.get("kind") != "watch"], ["writer"], "the call record")
    eq(len([r for r in rows if r.get("kind") == "watch"]), 5, "the writes")


def test_watch_errors():
    code, out, err = cmon(["trace", "--watch", "nosuch", "--", target("watch"), "writes"])
    eq(code, 1, "unknown global")
    eq(out, "", "the program did not run")
    eq(len(stderr_lines(err)), 1, err)
    check(err.startswith("cmon: --watch 'nosuch': no global variable or symbol 'nosuch'"), err)

    # A malformed ADDR:LEN is a usage error (2), as malformed values are,
    # said before the program runs (it was 1)
    for bad in ("0x1003:4", "0x1000:3"):
        code, out, err = cmon(["trace", "--watch", bad, "--", target("watch"), "writes"])
        eq((code, out), (2, ""), "malformed ADDR:LEN %s" % bad)
        eq(stderr_lines(err), ["cmon: --watch '%s': expected ADDR:LEN (hex address, LEN 1, 2, "
                               "4 or 8, the address a multiple of LEN)" % bad], "one line")

    code, _, err = cmon(["trace", "--watch", "counter", "--binary", target("watch")])
    eq(code, 2, "--binary: no one process")
    check("--watch needs one process" in err, err)


def test_watch_out_of_debug_registers():
    """Five addresses: this kernel refuses the fifth hardware breakpoint of
    a thread (x86: 4 debug registers); nothing runs, nothing stays."""
    base = _symbol("watch_nopie", "counter")
    exprs = ["counter", "small_u16", "spare", "spare+8", "0x%x:4" % (base + 16)]
    args = ["trace"]
    for e in exprs:
        args += ["--watch", e]
    code, out, err = cmon(args + ["--", target("watch_nopie"), "writes"])
    eq(code, 1, "exit status (%s)" % err)
    eq(out, "", "the program was not run")
    eq(stderr_lines(err), ["cmon: --watch: no free hardware debug register (x86 has 4 per "
                           "thread; 5 watches asked)"], "one error line")
    # Four fit.
    code, out, err = cmon(args[:-2] + ["-o", tmpfile("four.txt"), "--",
                                       target("watch_nopie"), "writes"])
    eq((code, out), (0, "counter 50\n"), err)
    eq(len(read_text(tmpfile("four.txt")).splitlines()), 6, "five writes of counter, one of "
       "small_u16")
