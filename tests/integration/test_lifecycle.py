"""Process lifecycle: a launched program is traced from its exec (the
launcher's own calls in the child before it are cmon's, and were recorded
as a program's: close(3) by "cmon"); a thread that calls exec has its
pending call reported with its own pid, tid and comm (it was reported
under the new program's name and the leader's tid); cmon's own exit leaves
nothing behind in the kernel."""
import json
import os
import pty
import signal
import subprocess
import time

from cmonlib import (CMON, HANG, Background, Skip, assert_no_leak, bpf_snapshot, check, cmon, eq,
                     parse_csv, read_text, target, tmpfile, trace)


def test_launcher_calls_not_recorded():
    res = trace(["libc.so.6:close"], launch=[target(), "calls"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq([(r["comm"], r["func"]) for r in res.rows], [], "no close() by the launcher")
    check("cmon: functions never called: 1 (all of them)\n" in res.stderr, res.stderr)
    path = tmpfile("lc-profile.json")
    code, _, err = cmon(["profile", "-F", "json", "-o", path, "--func", "libc.so.6:close",
                         "--", target(), "calls"])
    eq(code, 0, "profile exit status (%s)" % err)
    fin = [json.loads(l) for l in read_text(path).splitlines()]
    eq([(r["func"], r["calls"]) for r in fin if r["final"]], [],
       "profile counts no launcher call (a function never called has no row)")
    check("cmon: 0 calls counted" in err, err)


def test_thread_exec_identity():
    res = trace(["exec_from_thread"], launch=[target(), "thread_exec"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, "main\nexec-from-thread\n", "program output")
    eq(len(res.rows), 1, "records")
    r = res.rows[0]
    eq((r["func"], r["arg0"], r["status"], r["comm"]), ("exec_from_thread", 5, "noreturn",
                                                       "calls"),
       "the call as it was made (func, arg0, status, comm)")
    check(r["tid"] != r["pid"], "the calling thread's own tid (%d), not the leader's (%d)"
          % (r["tid"], r["pid"]))


def kernel_log_mark():
    """Write a unique line to the kernel log; returns it."""
    mark = "cmon-test: mark %d %d" % (os.getpid(), time.monotonic_ns())
    try:
        with open("/dev/kmsg", "w") as f:
            f.write(mark + "\n")
    except OSError as e:
        raise Skip("cannot write the kernel log: %s" % e)
    return mark


def kernel_uprobe_leaks_since(mark):
    """The "leaking uprobe" warnings the kernel logged after MARK (counting
    from a mark: the log is a ring, old lines fall out of it)."""
    res = subprocess.run(["dmesg"], capture_output=True, text=True)
    if res.returncode != 0:
        raise Skip("cannot read the kernel log: %s" % res.stderr.strip())
    check(mark in res.stdout, "the mark is in the kernel log")
    return res.stdout.split(mark, 1)[1].count("failed to unregister, leaking uprobe")


def test_short_runs_leak_no_uprobe():
    """cmon measures its probes' cost on functions of its own text, and a
    thread releases those links so that the trace need not wait.  `cmon list`
    and short traces exit before it is done; the exit killed it in the middle
    of taking a uprobe out of cmon's text, and the kernel leaked that uprobe
    ("failed to unregister, leaking uprobe": 3-9 a run, pinned until
    reboot).  cmon's exit now waits for the release."""
    mark = kernel_log_mark()
    for _ in range(3):
        code, out, err = cmon(["list", "busy_*", "--", target("busy")])
        eq(code, 0, "cmon list exit status (%s)" % err)
        check("on this host" in out, "list measured the probes' cost: %r" % out[-300:])
        res = trace(["busy_fp"], launch=[target("busy"), "3"])
        eq(res.code, 0, "exit status (%s)" % res.stderr)
        eq(len(res.rows), 3, "busy_fp's calls")
    eq(kernel_uprobe_leaks_since(mark), 0, "uprobes the kernel leaked at cmon's exit")


def _ignoring_sigint():
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_sigint_while_starting_with_sigint_ignored():
    """A background job of a shell script starts with SIGINT ignored.  cmon
    handles SIGINT from its first step: one sent while the probes are being
    attached stops it once they are (it was lost: the trace ran on until a
    second one), and the program it launched is not run.  The program it
    does run gets the dispositions cmon was given back (SIGINT ignored, as
    untraced), not cmon's own."""
    from cmonlib import CMON
    import signal
    out = tmpfile("sigign.csv")
    p = subprocess.Popen([CMON, "trace", "--func", "add", "-F", "json", "-o", out, "--",
                          target("calls"), "loop", "100000000"], preexec_fn=_ignoring_sigint,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    try:
        p.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError("cmon ran on after a SIGINT sent while it was starting")
    eq(p.returncode, 0, "exit status")
    code, ps, _ = subprocess.run(["pgrep", "-f", "calls loop 100000000"], capture_output=True,
                                 text=True).returncode, None, None
    check(code != 0, "the launched program was not run")

    def sigign(cmd):
        r = subprocess.run(cmd, preexec_fn=_ignoring_sigint, capture_output=True, text=True)
        return [l for l in r.stdout.splitlines() if l.startswith("SigIgn:")]
    want = sigign(["/bin/grep", "SigIgn", "/proc/self/status"])
    got = sigign([CMON, "trace", "-q", "--func", "libc.so.6:exit", "-F", "json",
                  "-o", tmpfile("sigign2.csv"), "--", "/bin/grep", "SigIgn", "/proc/self/status"])
    check(want and int(want[0].split()[1], 16) & 2, "SIGINT ignored untraced: %r" % want)
    eq(got, want, "the dispositions of the launched program, traced and untraced")


def _read_until(fd, needles, timeout=600):
    """What the terminal FD shows until one of NEEDLES appears (or EOF)."""
    seen = b""
    end = time.monotonic() + timeout
    while not any(n.encode() in seen for n in needles) and time.monotonic() < end:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the last writer closed it
            break
        if not chunk:
            break
        seen += chunk
    return seen.decode(errors="replace")


def test_ctrl_c_while_loading():
    """A start-up that takes a while (2,000 typed functions: the kernel's
    verifier) says each step on a terminal, and Ctrl-C ends it at once: the
    launched program never runs, the output file cmon made is removed,
    nothing is left attached.  (It was silent, and a SIGINT waited for the
    loading to finish.)"""
    before = bpf_snapshot()
    out = tmpfile("loading.json")
    prog_out = tmpfile("loading.stdout")
    master, slave = pty.openpty()
    with open(prog_out, "wb") as po:
        p = subprocess.Popen([CMON, "trace", "-F", "json", "-o", out, "--func", "*", "--",
                              target("typed_O2"), "loop", "1000000"],
                             stdin=subprocess.DEVNULL, stdout=po, stderr=slave)
    os.close(slave)
    try:
        seen = _read_until(master, [" verifies them); Ctrl-C stops it", "cmon: attached "])
        check("cmon: starting (" in seen and "cmon: attached " not in seen,
              "no word of the start-up before the probes were in: %r" % seen)
        check("finding the functions, reading their DWARF" in seen or
              "loading the BPF programs of" in seen, seen)
        p.send_signal(signal.SIGINT)
        seen += _read_until(master, [])
        eq(p.wait(60), 0, "exit status after Ctrl-C")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
    check("cmon: interrupted while starting: nothing was traced" in seen, seen)
    check("cmon: attached " not in seen, "probes attached after the Ctrl-C: %r" % seen)
    eq(read_text(prog_out), "", "the program never ran")
    check(not os.path.exists(out), "the output file cmon made is removed")
    assert_no_leak(before)


def _ctrl_c_inside_outer_function(cmd):
    """CMD (trace or profile) on run_loop, a function that runs as long as
    the program, and on clock_nanosleep in libc, which it calls every
    millisecond: a return probe in each of two files.  Started with
    --wait so that run_loop is entered with its return probe pending.
    A Ctrl-C ends cmon while the program runs on, untraced; nothing stays
    attached.  Returns cmon's stderr."""
    before = bpf_snapshot()
    prog = subprocess.Popen([target("typed_O2"), "--wait", "loop", "0"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        line = prog.stdout.readline().decode()
        check(line.startswith("ready "), "the program's first line: %r" % line)
        bg = Background([cmd, "-p", str(prog.pid), "--func", "run_loop",
                         "--func", "libc.so.6:clock_nanosleep"])
        try:
            bg.wait_attached()
            prog.stdin.write(b"\n")
            prog.stdin.flush()
            time.sleep(0.5)  # inside run_loop, calling clock_nanosleep
            bg.signal(signal.SIGINT)
            try:
                status = bg.p.wait(HANG)
            except subprocess.TimeoutExpired:
                # stuck in an uninterruptible close: only the program's
                # end lets it go (killed first, or the kill below waits)
                prog.kill()
                raise AssertionError("cmon did not exit within %ss after Ctrl-C while "
                                     "run_loop ran: its detach waited for it to return"
                                     % HANG)
            eq(status, 0, "exit status after Ctrl-C (%s)" % bg.stderr)
        finally:
            if bg.p.poll() is None:
                prog.kill()
            bg.kill()
        check(prog.poll() is None, "the program ran on")
    finally:
        prog.kill()
        prog.wait()
    assert_no_leak(before)
    return bg.stderr


def test_ctrl_c_inside_traced_outer_function_trace():
    """Since Linux 6.12 every uprobe detach waits for the return probes
    pending in threads that keep calling traced functions (probe/detach.h):
    cmon closed its links one by one, entries first, and a Ctrl-C hung in
    an uninterruptible close until run_loop returned (the program's end).
    The return links now go first, together."""
    err = _ctrl_c_inside_outer_function("trace")
    rows = [l.split() for l in err.splitlines()]
    calls = {r[1]: int(r[2]) for r in rows if len(r) == 5 and r[0] == "cmon:" and r[2].isdigit()}
    eq(calls.get("run_loop"), 1, "run_loop's call, cut by the end (%s)" % err)
    check(calls.get("clock_nanosleep", 0) >= 1, "clock_nanosleep's calls (%s)" % err)


def test_ctrl_c_inside_traced_outer_function_profile():
    """The same for profile, whose report then counts clock_nanosleep's
    calls (the sleeps run_loop made while cmon was there)."""
    err = _ctrl_c_inside_outer_function("profile")
    check("cmon: interrupted while starting" not in err, err)


def test_profile_ctrl_c_any_moment_of_start_up():
    """A Ctrl-C at any moment of a long start-up (every function of a
    program and its libraries) ends profile with status 0 and nothing attached:
    before the probes are in, nothing is reported; after, the report so
    far.  (A signal landing just after set-up's own handling made it
    follow a profiler it never made: exit 139, at 0.2 s here.)"""
    before = bpf_snapshot()
    for delay in (0.05, 0.1, 0.2, 0.3, 0.5, 0.8):
        prog = subprocess.Popen([target("typed_O2"), "--wait", "loop", "0"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            prog.stdout.readline()
            prog.stdin.write(b"\n")
            prog.stdin.flush()
            p = subprocess.Popen([CMON, "profile", "-p", str(prog.pid), "--func", "*"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            time.sleep(delay)
            p.send_signal(signal.SIGINT)
            try:
                err = p.communicate(timeout=HANG)[1].decode(errors="replace")
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            eq(p.returncode, 0, "exit status after a Ctrl-C %.2f s in (%s)" % (delay, err))
            check(prog.poll() is None, "the program ran on (%.2f s)" % delay)
        finally:
            prog.kill()
            prog.wait()
    assert_no_leak(before)


def test_thread_exec_new_program_traced():
    """A thread other than the main one execs a new program (this one
    again, which waits for a line before it calls getppid() three times):
    the new program's library calls are recorded.  The process's
    pid-filtered links held the old leader (gone with its mm), and nothing
    of the new program was recorded."""
    out = tmpfile("texec.csv")
    bg = Background(["trace", "-F", "csv", "-o", out, "--func", "libc.so.6:getppid", "--",
                     target(), "thread_exec_self", "ppid"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        eq(bg.p.stdout.readline(), b"main\n", "first line")
        line = bg.p.stdout.readline().decode()
        check(line.startswith("ready "), "the new program's first line: %r" % line)
        pid = int(line.split()[1])
        note = ("cmon: warning: process %d ran a new program from thread " % pid)
        while note not in bg.stderr:  # its probes are attached again
            check(bg.p.poll() is None, "cmon exited: %s" % bg.stderr)
            time.sleep(0.01)
        bg.p.stdin.write(b"\n")
        bg.p.stdin.close()
        eq(bg.p.stdout.read(), b"ppid=1\n", "the new program's output")
        eq(bg.wait(), 0, "exit status (%s)" % bg.stderr)
    finally:
        bg.kill()
    rows = parse_csv(read_text(out))
    eq([(r["pid"], r["func"], r["status"]) for r in rows], [(pid, "getppid", "ok")] * 3,
       "the new program's calls (pid, func, status)")
