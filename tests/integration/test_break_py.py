"""cmon break --py FUNC: a CPython process (3.11 to 3.13, each test once
per interpreter, see pythons.py) stops when a Python function is entered (its first call too: matched by name in the kernel), cmon prints
the call with its arguments by name and the Python stack (file:line of
each caller), and resumes it as break does for C
(tests/targets/py/breaks.py: outer(3) calls Grid().cell(i, i + 1), which
calls area(i, i + 1, label="cell"), for i < 3; then main calls
area(2.5, 4, "flat"); it prints "8" and "10.0" and exits with 7)."""
import os
import re
import signal
import subprocess
import time

from cmonlib import HANG, ROOT, check, cmon, eq, kill_quietly, run, stderr_lines, target
from test_break import Break, _state
from pythons import DEBIAN, PYTHONS, matrix
from test_python import CALLS, CALLS_OUT, PY, WORKER, _need_python, _Worker

BREAKS = os.path.join(ROOT, "tests", "targets", "py", "breaks.py")
BREAKS_OUT = "8\n10.0\n"


def _stops(err):
    """Each stop's record row (its ARGS) and its Python stack frames."""
    stops = []
    for block in re.split(r"\ncmon: stop \d+: [^\n]*", "\n" + err)[:-1]:
        rows = [l for l in block.splitlines() if re.match(r"\d\d:\d\d:\d\d\.\d+ ", l)]
        check(rows, "a record row before the stop: %s" % err)
        frames = [l[len("    at "):] for l in block.splitlines() if l.startswith("    at ")]
        stops.append((rows[-1], frames))
    return stops


def _frame(func, line):
    return "%s (%s:%d)" % (func, BREAKS, line)


AREA_FROM_CELL = [_frame("area", 6), _frame("Grid.cell", 12), _frame("outer", 18),
                  _frame("main", 23), _frame("<module>", 29)]


def _stops_at_first_call(py):
    """The first call of Grid.cell (its code object never seen before)
    stops: the process is stopped while cmon waits, with the call's
    arguments and its callers printed; Enter resumes it."""
    eq(run([py.path, BREAKS])[:2], (7, BREAKS_OUT), "untraced run")
    b = Break(["--py", "Grid.cell", "--", py.path, BREAKS])
    try:
        b.wait_for("cmon: stop 1: ")
        m = re.search(r"cmon: stop 1: process (\d+) stopped in Grid\.cell \(%s:11\), "
                      r"thread (\d+)" % re.escape(BREAKS), b.stderr)
        check(m, b.stderr)
        pid = int(m.group(1))
        eq(_state(pid), {"T"}, "every thread stopped while cmon waits")
        time.sleep(0.2)
        eq(_state(pid), {"T"}, "still stopped")
        (row, frames), = _stops(b.stderr)
        check(re.search(r" - +- Grid\.cell\(self=\"<Grid>\", x=0, y=1\)$", row),
              "qualname and arguments by name, the first call (x=0): %r" % row)
        eq(frames, [_frame("Grid.cell", 11), _frame("outer", 18), _frame("main", 23),
                    _frame("<module>", 29)],
           "the callee at its def line, each caller at the line of its call")
        b.resume()
        eq(b.finish(), (7, BREAKS_OUT), "the program's stdout and status, as untraced")
        check("cmon: hits: 1, stops: 1" in b.stderr, b.stderr)
    finally:
        b.kill()


matrix(globals(), "test_break_py_stops_at_first_call", _stops_at_first_call)


def _count_resume_after(py):
    """--count 3 --resume-after 0: area's three calls from Grid.cell stop,
    its fourth (from main) does not; output and status unchanged; a glob
    names it too."""
    code, out, err = cmon(["break", "--py", "ar?a", "--count", "3", "--resume-after", "0",
                           "--", py.path, BREAKS], input="")
    eq((code, out), (7, BREAKS_OUT), "status and output (%s)" % err)
    stops = _stops(err)
    eq(len(stops), 3, "three stops: %s" % err)
    for i, (row, frames) in enumerate(stops):
        check(re.search(r' - +- area\(w=%d, h=%d, label="cell"\)$' % (i, i + 1), row),
              "stop %d: area(%d, %d, label=\"cell\"): %r" % (i + 1, i, i + 1, row))
        eq(frames, AREA_FROM_CELL, "stop %d's Python stack" % (i + 1))
    check("w=2.5" not in err, "no fourth stop: %s" % err)
    check("cmon: hits: 3, stops: 3" in err, err)


matrix(globals(), "test_break_py_count_resume_after", _count_resume_after)


def _module_and_file_forms(py):
    """module.func and FILE:qualname name a function's first call too."""
    for pattern in ("breaks.outer", "py.breaks.outer", "targets.py.breaks.outer",
                    "py/breaks.py:outer", "breaks.py:outer", BREAKS + ":outer"):
        code, out, err = cmon(["break", "--py", pattern, "--resume-after", "0", "--",
                               py.path, BREAKS], input="")
        eq((code, out), (7, BREAKS_OUT), "%s: status and output (%s)" % (pattern, err))
        (row, frames), = _stops(err)
        check(row.endswith(" outer(n=3)"), "%s: outer(n=3): %r" % (pattern, row))
        eq(frames, [_frame("outer", 15), _frame("main", 23), _frame("<module>", 29)],
           "%s: the stack" % pattern)
    # not the file's module, not at a path boundary, not the qualname: no stop
    for pattern in ("other.outer", "reaks.outer", "s.py:outer", "breaks.py:oute",
                    "Grid.outer", "py:outer"):
        code, out, err = cmon(["break", "--py", pattern, "--resume-after", "0", "--",
                               py.path, BREAKS], input="")
        eq((code, out), (7, BREAKS_OUT), "%s: status and output (%s)" % (pattern, err))
        check("cmon: stop" not in err and "cmon: hits: 0, stops: 0" in err,
              "%s: no stop: %s" % (pattern, err))


matrix(globals(), "test_break_py_module_and_file_forms", _module_and_file_forms)


def _nothing_matches(py):
    """Nothing named: the program runs to its end unchanged; with the most
    forms the kernel takes (32: a name with 31 dots), too."""
    most = ".".join("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"[:32])
    for pattern in ("nosuch", most):
        code, out, err = cmon(["break", "--py", pattern, "--", py.path, BREAKS], input="")
        eq((code, out), (7, BREAKS_OUT), "the program ran to its end unchanged (%s)" % err)
        check("cmon: stop" not in err, err)
        check("cmon: hits: 0, stops: 0" in err, err)
        check("cmon: --py patterns that matched no function: %s\n" % pattern in err, err)
    code, out, err = cmon(["break", "--py", most + ".x", "--", py.path, BREAKS])
    eq((code, out), (1, ""), "33 forms: " + err)
    eq(len(stderr_lines(err)), 1, err)
    check("too many forms" in err, err)


matrix(globals(), "test_break_py_nothing_matches", _nothing_matches)


def test_break_py_errors():
    code, out, err = cmon(["break", "--py", "tick", "--", target("watch"), "calls", "1"])
    eq(code, 1, "not a Python interpreter")
    eq(out, "", "the program did not run")
    eq(stderr_lines(err), ["cmon: --py: %s: not a CPython interpreter (no _PyRuntime symbol)"
                           % target("watch")], err)
    code, out, err = cmon(["break", "--py", "ar[ab]a", "--", PY, BREAKS])
    eq((code, out), (2, ""), "a [set]: " + err)
    eq(len(stderr_lines(err)), 1, err)
    check("globs with '*' and '?' only" in err, err)
    code, out, err = cmon(["break", "--py", "area", "--if", "w == 1", "--", PY, BREAKS])
    eq((code, out), (2, ""), "--if with --py: " + err)
    eq(len(stderr_lines(err)), 1, err)
    check("--if is for --func" in err, err)
    code, out, err = cmon(["break", "--help"])
    eq(code, 0, "help")
    check(re.search(r"^      --py PATTERN +a Python function of a CPython 3\.11-3\.13", out, re.M)
          and "cmon break (-p PID | -- python3 ARGS...) --py FUNC" in out, out)


def _attach_sigint(py):
    """-p: a generator's call stops (its caller is the generator
    expression); SIGINT while it is stopped resumes it, and what cmon
    wrote is the process's own again."""
    w = _Worker(py)
    b = None
    try:
        eq(w.written(), w.pristine(), "nothing written before cmon")
        b = Break(["-p", str(w.pid), "--py", "step"])
        b.wait_for("cmon: attached ")
        check(w.written() != w.pristine(), "written while cmon runs")
        w.p.stdin.write("run\n")
        w.p.stdin.flush()
        b.wait_for("cmon: stop 1: ")
        eq(_state(w.pid), {"T"}, "stopped")
        (row, frames), = _stops(b.stderr)
        check(row.endswith(" step(i=0)"), "step(i=0): %r" % row)
        eq([f.split(" (")[0] for f in frames], ["step", "wait.<locals>.<genexpr>", "wait", "main",
                                                 "<module>"],
           "step, the generator expression, wait, main, the module")
        check(frames[1].endswith("%s:82)" % WORKER) and frames[2].endswith("%s:82)" % WORKER),
              "the generator and wait at the line of the call: %s" % frames)
        b.p.send_signal(signal.SIGINT)
        eq(w.p.stdout.readline().strip(), "run 30", "resumed: it went on")
        eq(b.finish()[0], 0, "cmon's status: %s" % b.stderr)
        check("cmon: resumed process %d" % w.pid in b.stderr, b.stderr)
        eq(w.written(), w.pristine(), "taken back")
        eq(w.cmd("run"), "run 30", "runs as before")
    finally:
        if b:
            b.kill()
            os.kill(w.pid, signal.SIGCONT)  # a SIGKILL'd cmon leaves it stopped
        if w.p.poll() is None:
            w.quit()


matrix(globals(), "test_break_py_attach_sigint_resumes_and_restores", _attach_sigint)


PARENT = r"""
import os, sys
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.dup2(r, 0)
    os.close(w)
    os.execv(sys.argv[1], [sys.argv[1], sys.argv[2], "wait"])
os.close(r)
print("child %d" % pid, flush=True)
sys.stdin.readline()
os.write(w, b"run\nrun\nquit\n")
stops = 0
while True:
    _, st = os.waitpid(pid, os.WUNTRACED)
    if not os.WIFSTOPPED(st):
        break
    stops += 1
print("stops %d exit %d" % (stops, os.waitstatus_to_exitcode(st)), flush=True)
"""


def _parent_sees_only_the_stops(py):
    """A parent waiting with WUNTRACED sees exactly the --count stops: no
    call of a function the pattern does not name stops the process, and
    what cmon writes into a running process is written in a ptrace stop,
    which the parent never sees."""
    parent = subprocess.Popen([py.path, "-c", PARENT, py.path, WORKER], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    b = None
    try:
        pid = int(parent.stdout.readline().split()[1])
        eq(parent.stdout.readline().split()[0], "ready", "the worker runs")
        # long enough stops that the parent waits on each before it goes on
        # (a stop resumed before the parent waited is not reported)
        b = Break(["-p", str(pid), "--py", "step", "--count", "2", "--resume-after", "0.3"])
        b.wait_for("cmon: attached ")
        parent.stdin.write("go\n")
        parent.stdin.flush()
        out, _ = parent.communicate(timeout=HANG)
        eq(out.splitlines(), ["run 30", "run 30", "stops 2 exit 0"],
           "two stops seen by the parent, output and status unchanged (%s)" % b.stderr)
        eq([row.split()[-1] for row, _ in _stops(b.stderr)], ["step(i=0)", "step(i=1)"],
           "the stops")
        eq(b.finish()[0], 0, "cmon ends with the process: %s" % b.stderr)
    finally:
        if b:
            b.kill()
        if parent.poll() is None:
            parent.kill()
            parent.wait()


matrix(globals(), "test_break_py_parent_sees_only_the_stops", _parent_sees_only_the_stops)


def test_break_py_sigterm_leaves_it_running():
    _need_python()
    b = Break(["--py", "area", "--", PY, BREAKS])
    pid = None
    try:
        b.wait_for("cmon: stop 1: ")
        pid = int(re.search(r"cmon: stop 1: process (\d+) stopped in area", b.stderr).group(1))
        eq(_state(pid), {"T"}, "stopped")
        b.p.send_signal(signal.SIGTERM)
        code, out = b.finish()
        eq(out, BREAKS_OUT, "the program went on to its end after cmon's SIGTERM")
        check("cmon: resumed process %d" % pid in b.stderr, b.stderr)
    finally:
        b.kill()
        if pid:
            kill_quietly(pid)


def _generator_resumes(py):
    """A generator stops at its call and at each resume (as trace --py
    records each; 3.12+ with --py-resumes), shown where it stands: its def
    line until it first runs, then the yield it resumes from (calls.py:
    gen(3) at line 29, `yield i` at 31, called from main at 39)."""
    code, out, err = cmon(["break", "--py", "gen", "--count", "4", "--resume-after", "0"] +
                          (["--py-resumes"] if py.vectorcall else []) +
                          ["--", py.path, CALLS], input="")
    eq((code, out), (0, CALLS_OUT), "status and output (%s)" % err)
    stops = _stops(err)
    eq([row.split()[-1] for row, _ in stops], ["gen(n=3)"] * 4, "gen(n=3) each time")
    eq([frames[0] for _, frames in stops],
       ["gen (%s:%d)" % (CALLS, line) for line in (29, 29, 31, 31)], "where gen stands")
    eq({tuple(frames[1:]) for _, frames in stops},
       {("main (%s:39)" % CALLS, "<module> (%s:45)" % CALLS)}, "its callers")


matrix(globals(), "test_break_py_generator_resumes", _generator_resumes)


def test_break_py_ctrl_c_leaves_the_program():
    """Ctrl-C on the terminal while cmon waits at a stop: cmon's alone (the
    program it launched has a process group of its own), which resumes the
    program and detaches; the program runs on to its own end (no
    KeyboardInterrupt), and cmon's status says it was interrupted (130)."""
    import pty
    import select
    from cmonlib import CMON
    _need_python()
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execv(CMON, [CMON, "break", "--py", "area", "--", PY, BREAKS])
        finally:
            os._exit(127)
    text = b""
    sent = False
    end = time.monotonic() + 30
    try:
        while time.monotonic() < end:
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # every writer of the terminal gone
                    break
                if not chunk:
                    break
                text += chunk
            if not sent and b"press Enter to resume" in text:
                time.sleep(0.2)
                os.write(fd, b"\x03")  # the terminal's Ctrl-C
                sent = True
        _, st = os.waitpid(pid, 0)
    finally:
        os.close(fd)
        kill_quietly(pid)
    out = text.decode(errors="replace").replace("\r\n", "\n")
    check(sent, "the stop was shown: %s" % out)
    eq(os.waitstatus_to_exitcode(st), 130, "cmon's status: interrupted (%s)" % out)
    m = re.search(r"cmon: Interrupt: process (\d+) goes on untraced\n", out)
    check(m, out)
    check("KeyboardInterrupt" not in out, "the program was not interrupted: %s" % out)
    # The program and cmon share the terminal: cmon's lines may come between
    # the program's, or between "10.0" and its newline.
    program = re.sub(r"cmon: [^\n]*\n", "", out.replace("^C", ""))
    check(re.search(r"^8\n10\.0$", program, re.M), "it ran on to its end: %s" % out)
