"""cmon break --func F: the process stops when F is entered (SIGSTOP sent
by the probe), cmon prints the call and its stack, and resumes it on a line
of stdin, after --resume-after, or on a signal; it is never left stopped
(tests/targets/watch.c: `calls N` runs tick(i, "tick") for i < N, prints
"tick i" each time, then "sum S", and exits with 3)."""
import os
import re
import resource
import signal
import subprocess
import time

from cmonlib import (HANG, CMON, WaitTarget, check, cmon, eq, read_text, run, stderr_lines, target,
                     tmpfile, kill_quietly)

CALLS3_OUT = "tick 0\ntick 1\ntick 2\nsum 6\n"


def _state(pid):
    """The state letter of every thread of PID."""
    states = set()
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
            states.add(f.read().rsplit(")", 1)[1].split()[0])
    return states


def _no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Break:
    """`cmon break ARGS` in the background, stdin a pipe, stderr in a file."""

    def __init__(self, args):
        self.err_path = tmpfile("break-%d.err" % time.monotonic_ns())
        with open(self.err_path, "wb") as err:
            self.p = subprocess.Popen([CMON, "break"] + args, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=err,
                                      preexec_fn=_no_core)

    @property
    def stderr(self):
        return read_text(self.err_path)

    def wait_for(self, needle, timeout=HANG):
        end = time.monotonic() + timeout
        while needle not in self.stderr:
            if self.p.poll() is not None or time.monotonic() > end:
                raise AssertionError("no %r: %s" % (needle, self.stderr))
            time.sleep(0.01)

    def stopped_pid(self, n):
        self.wait_for("cmon: stop %d: process " % n)
        m = re.search(r"cmon: stop %d: process (\d+) stopped in tick, thread (\d+)" % n,
                      self.stderr)
        check(m, self.stderr)
        return int(m.group(1))

    def resume(self):
        self.p.stdin.write(b"\n")
        self.p.stdin.flush()

    def finish(self, timeout=HANG):
        out, _ = self.p.communicate(timeout=timeout)
        return self.p.returncode, out.decode()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def test_break_launch_stops_prints_and_resumes():
    untraced = run([target("watch"), "calls", "3"])
    eq(untraced[:2], (3, CALLS3_OUT), "untraced run")
    b = Break(["--func", "tick", "--", target("watch"), "calls", "3"])
    try:
        pid = b.stopped_pid(1)
        eq(_state(pid), {"T"}, "every thread stopped while cmon waits")
        time.sleep(0.2)
        eq(_state(pid), {"T"}, "still stopped")
        err = b.stderr
        check(re.search(r"^\S+ \d+/\d+ +- +- tick\(i=0, name=\"tick\"\)$", err, re.M), err)
        stack = [l.split()[1] for l in err.splitlines() if l.startswith("    at ")]
        check(len(stack) == 3 and stack[0] == "tick+0x0" and stack[1].startswith("main+0x")
              and stack[2].startswith("0x"), "tick, main once, libc: %s" % err)
        check(re.search(r"at pc 0x[0-9a-f]+ \(probe \+1\)", err),
              "stopped after the probed push %%rbp: %s" % err)
        b.resume()
        code, out = b.finish()
        eq((code, out), (3, CALLS3_OUT), "the program's stdout and status, as untraced")
        check("cmon: hits: 1, stops: 1" in b.stderr, "probes gone after the last stop: %s" % b.stderr)
    finally:
        b.kill()


def test_break_count_two():
    b = Break(["--count", "2", "--func", "tick", "--", target("watch"), "calls", "3"])
    try:
        pid = b.stopped_pid(1)
        eq(_state(pid), {"T"}, "first stop")
        b.resume()
        eq(b.stopped_pid(2), pid, "second stop, same process")
        eq(_state(pid), {"T"}, "second stop")
        check('tick(i=1, name="tick")' in b.stderr, b.stderr)
        b.resume()
        eq(b.finish(), (3, CALLS3_OUT), "status and output")
        check("cmon: stop 3:" not in b.stderr, "no third stop: %s" % b.stderr)
    finally:
        b.kill()


def test_break_resume_after():
    t0 = time.monotonic()
    code, out, err = cmon(["break", "--func", "tick", "--resume-after", "0.2", "--",
                           target("watch"), "calls", "3"], input="")
    took = time.monotonic() - t0
    eq((code, out), (3, CALLS3_OUT), "status and output (%s)" % err)
    check("cmon: stop 1: process " in err and "resuming after --resume-after" in err, err)
    check(took >= 0.2, "stopped at least 0.2 s: %.3f" % took)


def test_break_if_stops_only_where_it_holds():
    """--if in the kernel: tick(0) and tick(1) run on, tick(2) stops."""
    code, out, err = cmon(["break", "--func", "tick", "--if", "i == 2", "--resume-after", "0",
                           "--", target("watch"), "calls", "3"], input="")
    eq((code, out), (3, CALLS3_OUT), "status and output (%s)" % err)
    check('tick(i=2, name="tick")' in err, err)
    check('tick(i=0,' not in err and 'tick(i=1,' not in err,
          "no stop where it does not hold: %s" % err)
    eq(err.count("cmon: stop "), 1, "one stop: %s" % err)


def test_break_sigterm_leaves_it_running():
    b = Break(["--func", "tick", "--", target("watch"), "calls", "3"])
    try:
        pid = b.stopped_pid(1)
        eq(_state(pid), {"T"}, "stopped")
        b.p.send_signal(signal.SIGTERM)
        # The program inherited cmon's stdout: EOF comes when it exits too.
        code, out = b.finish()
        eq(out, CALLS3_OUT, "the program went on to its end after cmon's SIGTERM")
        check("cmon: resumed process %d" % pid in b.stderr, b.stderr)
    finally:
        b.kill()
        kill_quietly(pid)


def test_break_crash_of_cmon_resumes():
    """cmon dying of a fatal signal (SIGQUIT here, as a crash would) still
    resumes the process it stopped."""
    b = Break(["--func", "tick", "--", target("watch"), "calls", "3"])
    try:
        pid = b.stopped_pid(1)
        eq(_state(pid), {"T"}, "stopped")
        b.p.send_signal(signal.SIGQUIT)
        code, out = b.finish()
        eq(code, -signal.SIGQUIT, "cmon died of the signal")
        eq(out, CALLS3_OUT, "the program went on to its end")
    finally:
        b.kill()
        kill_quietly(pid)


def test_break_pid_of_running_program():
    t = WaitTarget(["calls", "3"], binary="watch")
    b = Break(["-p", str(t.pid), "--func", "tick"])
    try:
        b.wait_for("cmon: attached ")
        t.release()
        eq(b.stopped_pid(1), t.pid, "the stopped process")
        eq(_state(t.pid), {"T"}, "stopped")
        b.resume()
        eq(t.finish(), (3, CALLS3_OUT), "status and output")
        eq(b.finish()[0], 0, "cmon ends with the process: %s" % b.stderr)
    finally:
        b.kill()
        t.kill()


def test_break_errors():
    code, out, err = cmon(["break", "--func", "nosuch", "--", target("watch"), "calls", "1"])
    eq(code, 1, "unknown function")
    eq(out, "", "the program did not run")
    eq(len(stderr_lines(err)), 1, err)
    check(err.startswith("cmon: ") and "nosuch" in err, err)
    code, _, err = cmon(["break", "--func", "tick", "--if", "i >", "--", target("watch")])
    eq(code, 2, "a malformed --if")
    eq(len(stderr_lines(err)), 1, err)
    code, _, err = cmon(["break", "--func", "tick", "--binary", target("watch")])
    eq(code, 2, "--binary is not for break")
    code, _, err = cmon(["break", "--func", "tick", "--count", "0", "--", target("watch")])
    eq(code, 2, "--count 0")


def test_break_pid_count_ends_after_the_last_stop():
    """break -p PID --count 2: cmon ends once the second stop is resumed; the
    program runs on, untraced and not stopped (it used to wait for its
    end)."""
    t = WaitTarget(["loop"], binary="watch")
    b = Break(["-p", str(t.pid), "--func", "tick", "--count", "2"])
    try:
        b.wait_for("cmon: attached ")
        t.release()
        eq(b.stopped_pid(1), t.pid, "first stop")
        b.resume()
        eq(b.stopped_pid(2), t.pid, "second stop")
        b.resume()
        eq(b.finish()[0], 0, "cmon ends after its last stop: %s" % b.stderr)
        check("cmon: stop 3:" not in b.stderr, "no third stop: %s" % b.stderr)
        check(t.alive(), "the program runs on")
        eq(_state(t.pid) & {"T", "t"}, set(), "not left stopped")
    finally:
        b.kill()
        t.kill()
