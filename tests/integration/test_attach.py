"""Attaching to running processes (-p), to a binary (--binary), and stopping
cmon from outside (SIGINT, SIGKILL, --duration)."""
import os
import re
import signal
import subprocess
import time

from cmonlib import (HANG, CALLS_OUT, Background, MiB, WaitTarget, parse_csv, assert_gone, assert_no_leak, bpf_snapshot,
                     check, cmon, eq, held_by, host, parse_json_lines, proc_status, read_text, summary, target,
                     tmpfile, trace_bg)
from test_launch import CALLS_FUNCS, check_calls_rows

LOOP_BIG = 1000000000  # about 1 s untraced: it outlives cmon


def loop_out(n):
    return "loop sum=%d\n" % (n * (n + 1) // 2)


def test_attach_pid():
    before = bpf_snapshot()
    t = WaitTarget(["calls"])
    try:
        bg = trace_bg(CALLS_FUNCS, ["-p", str(t.pid)])
        bg.wait_attached()
        held = held_by(bg.pid)
        links = sorted(i for k, i in held if k == "link")
        mine = [v for k, v in bpf_snapshot().items() if k in held and k[0] == "link"]
        # The link kind is the host's: uprobe_multi where the kernel has it
        # (cmon host's "uprobe_multi"), else one perf-event uprobe per probe.
        kind = "uprobe_multi" if host()["features"]["uprobe_multi"]["have"] else "perf_event"
        probes = [v[0] for v in mine if v[0].split()[0] in ("uprobe_multi", "perf_event")]
        check(len(links) >= 2 and probes and all(p.startswith(kind + " ") for p in probes),
              "cmon holds its %s links while it traces: %r" % (kind, mine))
        t.release()
        code, out = t.finish()
        eq((code, out), (0, CALLS_OUT), "target exit status and output")
        # cmon sees the process go and ends by itself.
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
        rows = parse_json_lines(read_text(bg.out_path))
        eq(check_calls_rows(rows), t.pid, "pid of the records")
        s = summary(bg.stderr)
        eq((s["written"], s["lost"]), (4, 0), "events written and lost")
    finally:
        t.kill()
    assert_gone(held, what="after cmon ended, its links and programs")
    assert_no_leak(before)


def test_attach_two_pids():
    a, b = WaitTarget(["calls"]), WaitTarget(["recurse"])
    try:
        bg = trace_bg(["add", "six", "negate", "fact"], ["-p", str(a.pid), "-p", str(b.pid)])
        bg.wait_attached()
        a.release()
        eq(a.finish(), (0, CALLS_OUT), "first target")
        time.sleep(0.2)
        check(bg.p.poll() is None, "cmon ended while a traced process still runs")
        b.release()
        eq(b.finish(), (0, "fact=120\nouter=25\n"), "second target")
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
        rows = parse_json_lines(read_text(bg.out_path))
        check_calls_rows([r for r in rows if r["pid"] == a.pid])
        facts = [r for r in rows if r["pid"] == b.pid]
        eq(sorted((r["arg0"], r["ret"], r["depth"]) for r in facts),
           [(1, 1, 4), (2, 2, 3), (3, 6, 2), (4, 24, 1), (5, 120, 0)], "fact records")
        eq(len(rows), 9, "records from both processes")
    finally:
        a.kill()
        b.kill()


def test_attach_rss_matches_proc():
    t = WaitTarget(["grow", "64"])
    try:
        bg = trace_bg(["grow"], ["-p", str(t.pid)])
        bg.wait_attached()
        rss, vms = proc_status(t.pid, "VmRSS"), proc_status(t.pid, "VmSize")
        t.release()
        eq(t.finish(), (0, "grow=ok\n"), "target")
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
        rows = parse_json_lines(read_text(bg.out_path))
        eq([(r["func"], r["arg0"], r["status"]) for r in rows], [("grow", 64, "ok")], "records")
        r = rows[0]
        check(abs(r["rss_entry"] - rss) <= MiB, "rss_entry %d vs VmRSS %d before the call"
              % (r["rss_entry"], rss))
        check(abs(r["vms_entry"] - vms) <= MiB, "vms_entry %d vs VmSize %d before the call"
              % (r["vms_entry"], vms))
        drss = r["rss_exit"] - r["rss_entry"]
        check(abs(drss - 64 * MiB) <= 64 * MiB * 5 // 100, "RSS grew by %d, not 64 MiB" % drss)
        check(r["vms_exit"] - r["vms_entry"] >= 64 * MiB, "VMS grew by less than 64 MiB")
    finally:
        t.kill()


def test_binary_mode_pie():
    before = bpf_snapshot()
    bg = trace_bg(["add"], ["--binary", target("calls_pie")])
    try:
        bg.wait_attached()
        pids = []
        for _ in range(2):
            p = subprocess.Popen([target("calls_pie"), "calls"], stdout=subprocess.PIPE)
            out = p.communicate(timeout=HANG)[0].decode()
            eq((p.returncode, out), (0, CALLS_OUT), "calls_pie run")
            pids.append(p.pid)
        # Another binary with the same function is not traced.
        p = subprocess.run([target("calls"), "calls"], capture_output=True, text=True,
                           timeout=HANG)
        eq(p.stdout, CALLS_OUT, "calls run")
        time.sleep(0.1)
        check(bg.p.poll() is None, "--binary mode ends only when told")
        bg.signal(signal.SIGINT)
        eq(bg.wait(HANG), 0, "cmon exit status after SIGINT (%s)" % bg.stderr.strip())
    finally:
        bg.kill()
    rows = parse_json_lines(read_text(bg.out_path))
    by_pid = {}
    for r in rows:
        by_pid.setdefault(r["pid"], []).append(r)
    eq(sorted(by_pid), sorted(pids), "processes traced (the 2 runs of calls_pie)")
    for pid, rs in by_pid.items():
        eq([(r["arg0"], r["arg1"], r["ret"], r["status"], r["comm"], r["module"])
            for r in rs],
           [(2, 3, 5, "ok", "calls_pie", "calls_pie"),
            (4294967289, 4, 4294967293, "ok", "calls_pie", "calls_pie")],
           "add records of pid %d" % pid)
    assert_no_leak(before)


def test_binary_mode_stripped_program_libraries():
    """A stripped executable (no .symtab, nothing of its own in .dynsym) is a
    --binary target for the functions of its libraries: its processes' calls
    to libc's write, typed from libc's DWARF, not those of another program
    calling it (cmon refused it: "no symbol table").  One of its own
    functions: one line, stripped."""
    before = bpf_snapshot()
    exe = target("calls_stripped")
    bg = trace_bg(["libc.so.6:write"], ["--binary", exe], fmt="csv")
    try:
        bg.wait_attached()
        pids = []
        for _ in range(2):
            p = subprocess.Popen([exe, "calls"], stdout=subprocess.PIPE)
            out = p.communicate(timeout=30)[0].decode()
            eq((p.returncode, out), (0, CALLS_OUT), "calls_stripped run")
            pids.append(p.pid)
        p = subprocess.run([target("calls"), "calls"], capture_output=True, text=True,
                           timeout=30)
        eq(p.stdout, CALLS_OUT, "calls run")
        time.sleep(0.1)
        bg.signal(signal.SIGINT)
        eq(bg.wait(HANG), 0, "cmon exit status after SIGINT (%s)" % bg.stderr.strip())
    finally:
        bg.kill()
    rows = parse_csv(read_text(bg.out_path))
    # one line a write: calls makes stdout line-buffered
    eq(sorted((r["pid"], r["func"], r["module"], r["comm"], r["typed"]["args.fd"],
               r["typed"]["args.nbytes"], r["ret"], r["status"]) for r in rows),
       sorted((pid, "write", "libc.so.6", "calls_stripped", "1", str(len(line) + 1),
               len(line) + 1, "ok") for pid in pids for line in CALLS_OUT.splitlines()),
       "write records: 4 a run of calls_stripped, none of calls")
    assert_no_leak(before)
    code, out, err = cmon(["trace", "--binary", exe, "--func", "add"])
    eq((code, out, err), (1, "", "cmon: no function matches 'add' in %s: %s has no symbol "
                                 "table (stripped)\n" % (exe, exe)), "its own function")


def test_binary_stripped_library_function():
    """--binary on a stripped program (every distribution binary is) with a
    function of its libraries: probed in libc, recorded for the processes
    running that program only (it was refused: "no symbol table")."""
    before = bpf_snapshot()
    bg = trace_bg(["libc:printf"], ["--binary", target("calls_stripped")], fmt="csv")
    try:
        bg.wait_attached()
        p = subprocess.run([target("calls_stripped"), "calls"], capture_output=True, text=True,
                           timeout=HANG)
        eq((p.returncode, p.stdout), (0, CALLS_OUT), "calls_stripped run")
        # The same libc function in another program: not this binary's.
        eq(subprocess.run([target("calls"), "calls"], capture_output=True, text=True,
                          timeout=HANG).stdout, CALLS_OUT, "calls run")
        bg.signal(signal.SIGINT)
        eq(bg.wait(HANG), 0, "cmon exit status after SIGINT (%s)" % bg.stderr.strip())
    finally:
        bg.kill()
    rows = parse_csv(read_text(bg.out_path))
    eq([(r["func"], r["comm"], r["module"], r["status"]) for r in rows],
       [("printf", "calls_stripped", "libc.so.6", "ok")] * 4, "printf records")
    assert_no_leak(before)


def test_duration_without_calls():
    t = WaitTarget(["calls"])
    try:
        start = time.monotonic()
        bg = trace_bg(["add"], ["-p", str(t.pid)], extra=["--duration", "1"])
        bg.wait_attached()
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
        took = time.monotonic() - start
        check(took >= 1.0, "--duration 1 ended after %.2fs" % took)  # no upper bound: a busy machine
        eq(parse_json_lines(read_text(bg.out_path)), [], "records")
        check(t.alive(), "the target survives cmon")
        t.release()
        eq(t.finish(), (0, CALLS_OUT), "target after cmon left")
    finally:
        t.kill()


def test_sigint_detaches_cleanly():
    before = bpf_snapshot()
    t = WaitTarget(["loop", str(LOOP_BIG)])
    try:
        bg = trace_bg(["add"], ["-p", str(t.pid)])
        bg.wait_attached()
        t.release()
        time.sleep(0.5)
        check(t.alive(), "target still in its loop")
        bg.signal(signal.SIGINT)
        code = bg.wait(HANG)
        check(code in (0, 3), "cmon exit status %d after SIGINT (%s)" % (code, bg.stderr))
        # The target runs on, untraced, to its own correct end.
        eq(t.finish(HANG), (0, loop_out(LOOP_BIG)), "target after cmon left")
        text = read_text(bg.out_path)
        rows = parse_json_lines(text)  # checks every row has 20 fields and the final newline
        check(len(rows) > 0, "records before SIGINT")
        # Each call recorded once: add(i, 1) for i = 0..N-1; only the last
        # (in flight when the probes went away) may lack its return.
        seen = {}
        for r in rows:
            if r["arg0"] in seen:
                first = seen[r["arg0"]]
                raise AssertionError(
                    "call add(%d, 1) recorded twice: status %s ret %s, then status %s ret %s"
                    % (r["arg0"], first["status"], first["ret"], r["status"], r["ret"]))
            seen[r["arg0"]] = r
        eq(sorted(seen), list(range(len(rows))), "calls recorded (a prefix of the loop)")
        last = len(rows) - 1
        for i, r in seen.items():
            if i == last and r["status"] == "noreturn":
                eq(r["ret"], None, "ret of the call in flight")
                continue
            eq((r["arg1"], r["ret"], r["status"]), (1, i + 1, "ok"), "add(%d, 1)" % i)
        s = summary(bg.stderr)
        eq(s["written"], len(rows), "events written = rows in the file")
        check(s["written"] <= s["table"]["add"][0], "more records (%d) than calls (%d)"
              % (s["written"], s["table"]["add"][0]))
        if code == 0:
            eq(s["lost"], 0, "events lost with exit status 0")
    finally:
        t.kill()
    assert_no_leak(before)


def test_sigkill_releases_probes():
    before = bpf_snapshot()
    t = WaitTarget(["loop", "2000000"])
    try:
        bg = trace_bg(["add"], ["-p", str(t.pid)])
        bg.wait_attached()
        t.release()
        time.sleep(0.3)
        check(t.alive(), "target still in its loop")
        held = held_by(bg.pid)
        check(any(k == "link" for k, _ in held), "cmon holds links: %r" % held)
        bg.signal(signal.SIGKILL)
        eq(bg.wait(HANG), -signal.SIGKILL, "cmon killed")
        eq(t.finish(HANG), (0, loop_out(2000000)), "target after cmon was killed")
    finally:
        t.kill()
    assert_gone(held, what="a SIGKILLed cmon's links and programs")
    assert_no_leak(before, timeout=HANG, what="a SIGKILLed cmon")


def trace_with_cmon_stopped(t, n, extra=()):
    """cmon (-p T, a 1 MiB ring buffer, EXTRA) stopped while target T makes
    its N calls of add, continued once T ended: its exit status says
    records were lost, some were kept, and every call is counted written
    or lost, per function too.  (background cmon, its rows, its summary)"""
    bg = trace_bg(["add"], ["-p", str(t.pid)], extra=["--ringbuf-size", "1"] + list(extra))
    bg.wait_attached()
    bg.signal(signal.SIGSTOP)
    try:
        t.release()
        eq(t.finish(HANG), (0, loop_out(n)), "target")
    finally:
        bg.signal(signal.SIGCONT)
    code = bg.wait(HANG)
    rows = parse_json_lines(read_text(bg.out_path))
    s = summary(bg.stderr)
    eq(code, 3, "cmon exit status when events were lost (%s)" % bg.stderr.strip())
    check(0 < len(rows) < n, "some records kept: %d" % len(rows))
    eq(s["written"], len(rows), "events written = rows")
    eq(s["written"] + s["lost"], n, "written + lost = calls")
    eq(s["table"]["add"], (n, len(rows), n - len(rows)), "per-function table")
    return bg, rows, s


def test_events_lost_exit_status():
    # cmon is stopped while the target fills a 1 MiB ring buffer: the rest
    # is lost, counted, and the exit status says so.
    n = 60000
    t = WaitTarget(["loop", str(n)])
    try:
        bg, rows, s = trace_with_cmon_stopped(t, n)
        # What was kept is exact and in call order, and it begins with the
        # first calls, unbroken until the ring buffer filled.  A few later
        # calls may follow the gap: with per-CPU staging, a thread that
        # moved CPU leaves a partial batch that the ring never refused,
        # swept when cmon runs again (CI saw 0..6702 then 59999).
        kept = [(r["arg0"], r["ret"]) for r in rows]
        for a, ret in kept:
            eq(ret, a + 1, "call %d's own return" % a)
        check(all(x[0] < y[0] for x, y in zip(kept, kept[1:])),
              "kept records in call order")
        # The beginning is kept whole: the calls lost are the ones made
        # once the ring buffer was full.  A thread that moves CPU has its
        # partial staging batch sent as it leaves (sched_migrate_task),
        # not left to go out with its later records and be lost whole.
        # Only a few later records may follow the gap: single records that
        # fitted where a batch did not, and the partial batches swept when
        # cmon runs again (CI saw 0..6702 then 59999).
        prefix = next((i for i, (a, _) in enumerate(kept) if a != i), len(kept))
        check(len(kept) - prefix < 16 * os.cpu_count(),
              "the beginning kept whole: %d of %d records, then %r"
              % (prefix, len(kept), kept[prefix:prefix + 4]))
    finally:
        t.kill()


def _wakeups(stderr):
    """(polls that slept, forced wakeups) from -v's summary line."""
    m = re.search(r"the consumer slept (\d+) times; the buffer filling woke it (\d+) times",
                  stderr)
    check(m, "no wakeup line in: %s" % stderr)
    return int(m.group(1)), int(m.group(2))


def test_sleeping_consumer_woken_by_a_filling_buffer():
    """cmon here polls every 6 s: a burst past an eighth of the buffer
    wakes it (the programs force a wakeup while it sleeps) long before its
    timer would."""
    n = 20000
    t = WaitTarget(["loop-wait", str(n)])
    try:
        bg = trace_bg(["add"], ["-p", str(t.pid)],
                      extra=["--poll-ms", "6000", "-v"])
        bg.wait_attached()
        time.sleep(0.3)  # asleep on the empty buffer by now
        t.release()
        eq(t.p.stdout.readline().decode().strip(), "looped sum=%d" % (n * (n + 1) // 2),
           "target's burst")
        # What stays behind until the timer: less than the threshold (4 MiB
        # / 8 of 152-byte records) plus a partial batch per CPU.  The burst
        # fits the 4 MiB buffer: nothing is lost, woken or not.
        # (Written while the target waits: by the wakeup, or at the latest
        # by the 6 s timer; that the wakeup came is -v's count below, not
        # a time this busy machine may miss.)
        want = n - 3500 - 16 * os.cpu_count()
        deadline, rows = time.monotonic() + HANG, 0
        while time.monotonic() < deadline:
            rows = max(len(read_text(bg.out_path).splitlines()) - 1, 0)
            if rows >= want:
                break
            time.sleep(0.05)
        check(rows >= want, "%d of %d records written while the target waits" % (rows, n))
        t.release()
        eq(t.finish(), (0, ""), "target")
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
        rows = parse_json_lines(read_text(bg.out_path))
        eq([(r["arg0"], r["ret"]) for r in rows], [(i, i + 1) for i in range(n)], "records")
        sleeps, woken = _wakeups(bg.stderr)
        check(sleeps >= 1 and woken >= 1, "slept %d, woken %d" % (sleeps, woken))
    finally:
        t.kill()


def test_consumer_reads_a_buffer_filled_before_its_first_poll():
    """Records are sent without a wakeup (one is forced only while cmon
    sleeps on an empty buffer), and epoll reports a ring buffer only after a
    wakeup: a buffer that already held records at cmon's first poll (here
    attached to a program calling all along) was not reported, no wakeup
    ever came to a reader that never caught up, and every poll waited out
    its timer with the buffer full (at full rate a third of the records
    kept).  A poll now reads a buffer that holds records without waiting.
    calls_fp's outer (it starts with push %rbp: emulated, cheap) every ~2 us,
    --poll-ms 1000: every call of the second traced."""
    p = subprocess.Popen([target("calls_fp"), "steady"], stdout=subprocess.PIPE)
    try:
        eq(p.stdout.readline().decode().split()[0], "steady", "target ready")
        # Unstaged first: each record goes to the buffer as it is made, so
        # the buffer surely holds some at the first poll (staged, only a
        # full batch of 16 does).
        for env in ({"CMON_NO_STAGING": "1"}, {}):
            out = tmpfile("steady%d.csv" % len(env))
            code, _, err = cmon(["trace", "-p", str(p.pid), "--func", "outer", "--poll-ms",
                                 "1000", "--duration", "1", "-F", "json", "-o", out],
                                env=dict(os.environ, **env))
            eq(code, 0, "cmon %r exit status (3: records lost) (%s)"
               % (env, err.strip()[-300:]))
            rows = parse_json_lines(read_text(out))
            check(len(rows) > 0, "calls recorded")  # how many a second: the machine's speed
            # (calls entered while the links were attached, and the one in
            # flight at detach, have no return)
            first = rows[0]["arg0"]
            bad = [(i, r["arg0"], r["ret"]) for i, r in enumerate(rows)
                   if r["arg0"] != first + i or
                   (r["ret"] is not None and r["ret"] != 2 * (first + i) + 5)][:3]
            eq(bad, [], "%r: calls in order without a gap (index, arg0, ret)" % env)
            no_ret = sum(r["ret"] is None for r in rows)
            check(no_ret < 100, "%r: %d calls without a return" % (env, no_ret))
    finally:
        p.kill()
        p.wait()


def test_busy_consumer_is_not_woken():
    """A consumer that is reading (here blocked writing to a pipe nobody
    reads yet) is sent no wakeup: each was an IRQ-work self-interrupt on
    the traced thread's CPU, every 64 records while the buffer stayed past
    an eighth (hundreds a buffer; a third of the traced thread's time on a
    5-byte nop here)."""
    n = 200000
    t = WaitTarget(["loop", str(n)])
    try:
        bg = Background(["trace", "-v", "-F", "json", "-p", str(t.pid), "--func", "add"],
                        stdout=subprocess.PIPE)
        bg.wait_attached()
        t.release()
        eq(t.finish(HANG), (0, loop_out(n)), "target")
        out = bg.p.stdout.read()  # only now: cmon was blocked on the pipe
        code = bg.wait(HANG)
        s = summary(bg.stderr)
        eq(code, 3 if s["lost"] else 0, "cmon exit status (%s)" % bg.stderr.strip())
        eq(s["written"] + s["lost"], n, "written + lost = calls")
        eq(len(out.decode().splitlines()), s["written"], "rows (JSON Lines: no header) = written")
        sleeps, woken = _wakeups(bg.stderr)
        check(woken <= 4 * sleeps + 4, "woken %d times for %d sleeps" % (woken, sleeps))
    finally:
        t.kill()


def test_attach_loads_python_programs_only_for_py():
    """A trace without --py does not load the Python evaluator's programs:
    their verification is the longest of the set (~0.45 s here), which
    every trace paid before (attach of 1,000 functions 437 -> 888 ms)."""
    t = WaitTarget(["calls"])
    try:
        bg = trace_bg(CALLS_FUNCS, ["-p", str(t.pid)])
        bg.wait_attached()
        held = held_by(bg.pid)
        names = sorted(v[0].split()[-1] for k, v in bpf_snapshot().items()
                       if k in held and k[0] == "prog")
        check("cmon_entry" in names, "cmon_entry loaded: %r" % names)
        check(not [n for n in names if n.startswith("cmon_py_")],
              "no Python program loaded without --py: %r" % names)
        t.release()
        eq(t.finish(), (0, CALLS_OUT), "target exit status and output")
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr.strip())
    finally:
        t.kill()
