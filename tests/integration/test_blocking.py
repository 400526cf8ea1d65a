"""--blocking-timeout: a record that finds the ring buffer full makes the
traced thread wait (spinning) for room instead of being dropped
(bpf/events.bpf.h, room_wait).  A consumer made slow (no spool, its output
a pipe read slowly) loses records without the mode and none with it; a
stopped cmon costs the program one timeout, then records are dropped and
counted as without the mode."""
import json
import os
import re
import signal
import subprocess
import time

from cmonlib import (CMON, HANG, Background, WaitTarget, check, cmon, eq, parse_json_lines,
                     read_text, run, summary, target, tmpfile, trace_bg)
from test_attach import loop_out, trace_with_cmon_stopped

N = 30000
# A wait gives up when cmon has not freed room for this long: on a shared
# 2-CPU machine (other tests, emulated guests) cmon's own CPU was taken
# from it for more than 50 ms at times (one batch of 16 lost in ~1 run of
# 5 at a load of 11), so the tests that must lose nothing allow the most.
KEEP_TIMEOUT = "1s"


def _waits(stderr):
    """(times, ms) of the summary's "waited for room" line."""
    m = re.search(r"^cmon: waited for room: (\d+) times, (\d+) ms$", stderr, re.M)
    check(m, "no 'waited for room' line in: %s" % stderr)
    return int(m.group(1)), int(m.group(2))


def _slow_run(extra, spool=True):
    """`trace --func add` of N flat-out calls, a 1 MiB ring, the ring's
    reader made slower than the program (200 us a record, 5,000 a second:
    the spool's thread, or with SPOOL false the thread that also types and
    writes).
    Returns (exit status, rows, stderr)."""
    t = WaitTarget(["loop", str(N)])
    env = dict(os.environ, CMON_TEST_SLOW_CONSUMER_US="200")
    if not spool:
        env["CMON_NO_SPOOL"] = "1"
    path = tmpfile("blocking-%d.json" % time.monotonic_ns())
    # The waiting thread holds its CPU (no preemption in the kernel here):
    # a consumer woken on that CPU would wait behind it for the whole
    # timeout, so each keeps a CPU of its own, as the docs advise.
    os.sched_setaffinity(t.pid, {0})
    bg = Background([], cmd=["taskset", "-c", "1", CMON, "trace", "-F", "json", "-o", path,
                              "-p", str(t.pid), "--func", "add", "--ringbuf-size", "1", "-v"]
                    + extra, env=env)
    try:
        bg.wait_attached()
        t.release()
        eq(t.finish(HANG), (0, loop_out(N)), "the program's own output and status")
        code = bg.wait()
        return code, parse_json_lines(read_text(path)), bg.stderr
    finally:
        bg.kill()
        t.kill()


def _check_lost(code, rows, stderr):
    s = summary(stderr)
    eq(code, 3, "exit status with records lost (%s)" % stderr.strip())
    check(s["lost"] > 0, "records lost: %s" % s["lost"])
    eq(s["written"], len(rows), "events written = rows")
    eq(s["written"] + s["lost"], N, "written + lost = calls")
    check("waited for room" not in stderr, "no wait line without the mode: %s" % stderr)


def _check_kept(code, rows, stderr):
    s = summary(stderr)
    eq((code, s["lost"], s["written"]), (0, 0, N), "status, lost, written (%s)" % stderr.strip())
    eq([(r["arg0"], r["ret"]) for r in rows], [(i, i + 1) for i in range(N)],
       "every call, in order, with its own return")
    times, ms = _waits(stderr)
    check(times > 0, "the program waited for room: %d times, %d ms" % (times, ms))


def test_slow_consumer_loses_records_without_blocking():
    _check_lost(*_slow_run([]))


def test_blocking_timeout_keeps_every_record():
    _check_kept(*_slow_run(["--blocking-timeout", KEEP_TIMEOUT]))


def test_slow_consumer_unspooled_loses_records_without_blocking():
    _check_lost(*_slow_run([], spool=False))


def test_blocking_timeout_keeps_every_record_unspooled():
    """No spool: the thread that reads the ring also types and writes; with
    the mode it is not staged, so the consumer frees room a record at a
    time."""
    _check_kept(*_slow_run(["--blocking-timeout", KEEP_TIMEOUT], spool=False))


def test_blocking_timeout_capture_keeps_every_call():
    """cmon capture: the store holds every call of the flat-out loop."""
    t = WaitTarget(["loop", str(N)])
    store = tmpfile("blocking-store-%d" % time.monotonic_ns())
    os.sched_setaffinity(t.pid, {0})
    bg = Background([], cmd=["taskset", "-c", "1", CMON, "capture", "-o", store, "-p", str(t.pid),
                             "--func", "add", "--ringbuf-size", "1", "--blocking-timeout", KEEP_TIMEOUT],
                    env=dict(os.environ, CMON_TEST_SLOW_CONSUMER_US="200"))
    try:
        bg.wait_attached()
        t.release()
        eq(t.finish(HANG), (0, loop_out(N)), "the program's own output and status")
        code = bg.wait()
        s = summary(bg.stderr)
        eq((code, s["lost"], s["written"]), (0, 0, N),
           "status, lost, written (%s)" % bg.stderr.strip())
        check(_waits(bg.stderr)[0] > 0, "the program waited for room")
        code, out, err = cmon(["export", store, "-F", "json", "-o", store + "-json"])
        eq(code, 0, "export: %s" % err)
        calls = [json.loads(line) for line in read_text(store + "-json/add.jsonl").splitlines()]
        eq([(c["args"]["a"], c["retval"]) for c in calls], [(i, i + 1) for i in range(N)],
           "every call in the store, with its own return")
    finally:
        bg.kill()
        t.kill()


def _spool_full_run(extra):
    """`trace -F json --func add` of N flat-out calls to stdout, a pipe the
    test reads slowly (16 KiB every 2 ms, ~8 MB/s: a tenth of the
    program's rate); the spool keeps at most 1 MiB in memory and nothing
    on disk (a test hook), the ring 1 MiB: the spool fills, its reader then
    waits for room for a ring's worth (~0.3 s of this writer: within the
    timeout) and the ring fills.  (exit status, rows, stderr)."""
    import threading
    t = WaitTarget(["loop", str(N)])
    os.sched_setaffinity(t.pid, {0})
    bg = Background([], cmd=["taskset", "-c", "1", CMON, "trace", "-F", "json", "-p", str(t.pid),
                             "--func", "add", "--ringbuf-size", "1", "-v"] + extra,
                    stdout=subprocess.PIPE, env=dict(os.environ, CMON_TEST_SPOOL_DISK_MAX="1"))
    chunks = []

    def slow_reader():
        while True:
            b = bg.p.stdout.read1(16384)
            if not b:
                return
            chunks.append(b)
            time.sleep(0.002)

    reader = threading.Thread(target=slow_reader)
    reader.start()
    try:
        bg.wait_attached()
        t.release()
        eq(t.finish(HANG), (0, loop_out(N)), "the program's own output and status")
        code = bg.wait()
        reader.join()
        return code, parse_json_lines(b"".join(chunks).decode()), bg.stderr
    finally:
        bg.kill()
        t.kill()
        reader.join()


def test_spool_full_loses_records_without_blocking():
    code, rows, err = _spool_full_run([])
    _check_lost(code, rows, err)
    check("spooled:" in err, "the spool was used: %s" % err)


def test_spool_full_blocking_timeout_keeps_every_record():
    """A spool full (its file's quota used) stops its reader; the ring
    fills; with the mode the program waits for room: every record, in
    order."""
    code, rows, err = _spool_full_run(["--blocking-timeout", KEEP_TIMEOUT])
    _check_kept(code, rows, err)
    check("spooled:" in err, "the spool was used: %s" % err)


PY_N = 20000
# (on CPU 0: cmon keeps CPU 1, as the waiting thread spins on its own)
PY_WORK = ("import os\nos.sched_setaffinity(0, {0})\ndef work(x):\n    return x * 2\n"
           "for i in range(%d):\n    work(i)\nprint('ok')\n" % PY_N)


def _profile_py_slow(extra):
    """`profile --py work` of PY_N calls, the ring's reader made slow (200 us
    a record).  (exit status, work's JSON row, stderr)."""
    code, out, err = run(["taskset", "-c", "1", CMON, "profile", "-F", "json", "--py", "work"] +
                         extra + ["--", "/usr/bin/python3.11", "-c", PY_WORK],
                         env=dict(os.environ, CMON_TEST_SLOW_CONSUMER_US="200"))
    check(out.startswith("ok\n"), "the program's output first: %r" % out[:200])
    rows = [json.loads(line) for line in out[3:].splitlines()]
    eq([r["func"] for r in rows], ["work"], "one function")
    return code, rows[0], err


def test_profile_py_slow_consumer_loses_calls_without_blocking():
    code, row, err = _profile_py_slow([])
    eq(code, 3, "exit status with calls lost (%s)" % err.strip())
    check(row["calls"] < PY_N, "calls counted: %d of %d" % (row["calls"], PY_N))
    check("waited for room" not in err, "no wait line without the mode: %s" % err)


def test_profile_py_blocking_timeout_counts_every_call():
    """profile --py with --blocking-timeout: the calls that found the ring
    full wait for room; every one is counted (before: the option was
    trace's and capture's only)."""
    code, row, err = _profile_py_slow(["--blocking-timeout", KEEP_TIMEOUT])
    eq((code, row["calls"], row["returns"], row["lost"]), (0, PY_N, PY_N, 0),
       "status, calls, returns, lost (%s)" % err.strip())
    check(_waits(err)[0] > 0, "the program waited for room: %s" % err)


def test_profile_blocking_timeout_needs_py():
    code, out, err = cmon(["profile", "--func", "add", "--blocking-timeout", "1s", "--",
                           target("argc")])
    eq(code, 2, "exit status (a usage error)")
    eq(err.strip().count("\n"), 0, "one line: %r" % err)
    check("--blocking-timeout is for --py" in err, err)


def test_blocking_timeout_gives_up_on_a_stopped_cmon():
    """cmon stopped while the program runs: the program still finishes (a
    wait that sees the consumer not move for its whole timeout marks it,
    and records are dropped at once until it moves); after SIGCONT the
    losses are counted as without the mode."""
    n = 60000
    t = WaitTarget(["loop", str(n)])
    try:
        bg, rows, s = trace_with_cmon_stopped(t, n, ["--blocking-timeout", "50ms", "-v"])
        times, ms = _waits(bg.stderr)
        m = re.search(r"waits given up: (\d+) .*records not made to wait: (\d+)", bg.stderr)
        check(m, "no -v line on the waits: %s" % bg.stderr)
        given_up, skipped = int(m.group(1)), int(m.group(2))
        # Every wait ended without room, and after the first that saw cmon
        # stopped none waited: the rest were dropped at once.  Without
        # that mark every batch waited its 50 ms (thousands of waits: the
        # program took minutes where it takes a second).
        eq(given_up, times, "waits given up = waits")
        check(1 <= times < 10 and skipped > 0,
              "waits %d (%d ms), records not made to wait %d" % (times, ms, skipped))
    finally:
        t.kill()


def test_blocking_timeout_values():
    for good in ("0", "500us", "10ms", "1s"):
        code, out, err = cmon(["trace", "-q", "-F", "json", "--func", "add",
                               "--blocking-timeout", good, "--", target("calls"), "loop", "3"])
        eq((code, out.count('"func":"add"'), loop_out(3) in out), (0, 3, True),
           "--blocking-timeout %s: status, records, the program's output (%s)" % (good, err))
    for bad in ("10", "1.5ms", "2s", "-1ms", "ms", "10m"):
        code, out, err = cmon(["trace", "--func", "add", "--blocking-timeout", bad, "--",
                               "/bin/true"])
        eq(code, 2, "exit status for --blocking-timeout %s (%s)" % (bad, err))
        eq(len(err.strip().splitlines()), 1, "one error line: %r" % err)
        check("--blocking-timeout" in err, "the error names the option: %r" % err)
