"""Helpers for cmon's integration tests (standard library only).

Paths come from the environment: OUT (build folder, default "build") and
CMON (default $OUT/cmon).  Each test runs in its own process (see run.py),
which gives it a scratch folder in CMON_IT_TMP.
"""
import csv
import io
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _build_dir():
    out = os.environ.get("OUT", "build")
    if os.path.isabs(out):
        return out
    if os.path.isdir(out):
        return os.path.abspath(out)
    return os.path.join(ROOT, out)


OUT = _build_dir()
# Every wait of these helpers is multiplied by this (tests/kernels/run.sh:
# an emulated guest is ~10-30x slower than its host).
SLOW = float(os.environ.get("CMON_IT_TIME_SCALE") or 1)
CMON = os.path.abspath(os.environ.get("CMON") or os.path.join(OUT, "cmon"))
TARGETS = os.path.join(OUT, "targets")

# "schema" first: the files' version (docs/cmon-output.md, Schema)
COLUMNS = ["schema", "ts_ns", "pid", "tid", "comm", "func", "depth", "arg0", "arg1", "arg2",
           "arg3", "arg4", "arg5", "ret", "latency_ns", "latency_lt_ns", "rss_entry", "rss_exit",
           "vms_entry", "vms_exit", "status", "module"]
STRING_COLUMNS = {"comm", "func", "status", "module"}
# CSV of typed values (DWARF): no registers, "ret" as the function's type
TYPED_COLUMNS = [c for c in COLUMNS if not (c.startswith("arg") and c[3:].isdigit())]
# the long CSV: a row per value
LONG_COLUMNS = ["schema", "call", "ts_ns", "pid", "tid", "comm", "func", "depth", "latency_ns",
                "latency_lt_ns", "rss_entry", "rss_exit", "vms_entry", "vms_exit", "status", "module", "name",
                "value"]
MiB = 1 << 20
# A bound that only guards against a hang: a test waits for a condition
# (cmon attached, a record written), never for a speed.  On a loaded 2-CPU
# machine attaching to libc (every process maps it) alone can take 30 s.
HANG = 600
U64 = (1 << 64) - 1

# What the untraced programs print (tests/targets/calls.c, cxx_throw.cpp).
CALLS_OUT = "add=5\nadd=-3\nsix=91\nnegate=-1234567890123\n"
RECURSE_OUT = "fact=120\nouter=25\n"
LONGJMP_OUT = "longjmp=7\nafter=2\n"
FORK_OUT = "parent add=3\nchild-exec\nchild status=0\nparent add=7\n"
CXX_OUT = "sum=309 caught=3\n"


class Skip(Exception):
    """Raised by a test that cannot run here (the runner reports it as skipped)."""


# ---------------------------------------------------------------- the host

_HOST = None


def host():
    """What this host can do, as `cmon host --json` says (run.py asks once a
    run and passes the file in CMON_HOST_JSON; CMON_HOST_DENY is honoured)."""
    global _HOST
    if _HOST is None:
        path = os.environ.get("CMON_HOST_JSON")
        if path and os.path.exists(path):
            with open(path) as f:
                _HOST = json.load(f)
        else:
            res = subprocess.run([CMON, "host", "--json"], capture_output=True, text=True,
                                 timeout=120)
            if res.returncode != 0:
                raise AssertionError("cmon host --json: %s" % res.stderr.strip())
            _HOST = json.loads(res.stdout)
    return _HOST


def need(*features):
    """Skip the calling test, by the feature's name and the host's reason,
    where this host lacks a feature (cmon host's names: hw_breakpoint, ...)."""
    feats = host()["features"]
    for name in features:
        f = feats[name]  # a KeyError names a feature cmon does not know
        if not f["have"]:
            raise Skip("host has no %s (%s)" % (name, f["why"]))


def needs(*features):
    """Decorator: the test needs these host features (checked by run.py before
    it runs, as need() would)."""
    def mark(fn):
        fn.needs = tuple(getattr(fn, "needs", ())) + features
        return fn
    return mark


# ---------------------------------------------------------------- asserts

def quiet_machine():
    """For a test whose figures hold only on a quiet machine (timings
    compared with an untraced run's): `make test` skips it by name, `make
    bench` runs it (tools/bench/bench_quiet.sh sets CMON_QUIET_MACHINE=1)."""
    if os.environ.get("CMON_QUIET_MACHINE") != "1":
        raise Skip("compares timings with an untraced run: needs a quiet machine "
                   "(make bench runs it)")


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def eq(actual, expected, what):
    if actual != expected:
        raise AssertionError("%s: expected %r, got %r" % (what, expected, actual))


def u32(v):
    """An `int` argument as the raw 64-bit register shows it (zero-extended)."""
    return v & 0xFFFFFFFF


# ---------------------------------------------------------------- paths

def tmpdir():
    d = os.environ.get("CMON_IT_TMP")
    if not d:
        d = tempfile.mkdtemp(prefix="cmon-it-")
        os.environ["CMON_IT_TMP"] = d
    return d


def tmpfile(name):
    return os.path.join(tmpdir(), name)


def target(name="calls"):
    path = os.path.join(TARGETS, name)
    check(os.access(path, os.X_OK), "target %s not built (make targets)" % path)
    return path


# ---------------------------------------------------------------- output parsing

def parse_csv(text):
    """Rows of cmon's wide CSV as dicts (ints for numeric columns, None for
    empty).

    Fails unless the header is COLUMNS (functions without DWARF: the
    registers arg0..arg5) or COLUMNS without them (typed values), then
    typed value columns, kept as text under "typed"; every row has as many
    fields as the header, and the text ends with a line end.  A typed "ret"
    is an int when it reads as one, else its text."""
    check(text != "", "CSV output is empty (no header)")
    check(text.endswith("\n"), "CSV does not end with a newline: %r" % text[-80:])
    rows = list(csv.reader(io.StringIO(text, newline="")))
    fixed = COLUMNS if rows[0][:len(COLUMNS)] == COLUMNS else TYPED_COLUMNS
    eq(rows[0][:len(fixed)], fixed, "CSV header")
    extra = rows[0][len(fixed):]
    out = []
    for n, fields in enumerate(rows[1:], 2):
        check(len(fields) == len(rows[0]),
              "CSV line %d has %d fields, not %d: %r" % (n, len(fields), len(rows[0]), fields))
        rec = {"typed": dict(zip(extra, fields[len(fixed):]))}
        for k, v in zip(fixed, fields):
            if k in STRING_COLUMNS:
                rec[k] = v
            elif v == "":
                rec[k] = None
            else:
                try:
                    rec[k] = int(v)
                except ValueError:
                    if k == "ret":
                        rec[k] = v
                        continue
                    raise AssertionError("CSV line %d: %s=%r is not an integer" % (n, k, v))
        out.append(rec)
    return out


def _no_repeated_key(pairs):
    """An object of JSON (its keys in order, as dicts keep them), a key
    given twice refused."""
    keys = [k for k, _ in pairs]
    check(len(set(keys)) == len(keys), "a key repeated: %r" % keys)
    return dict(pairs)


def parse_json_lines(text):
    """Records of cmon's JSON Lines output; each line must be one object whose
    keys start with COLUMNS, in order (typed "args", "retval"... may follow)."""
    out = []
    if text:
        check(text.endswith("\n"), "JSON output does not end with a newline")
    for n, line in enumerate(text.splitlines(), 1):
        try:
            rec = json.loads(line, object_pairs_hook=_no_repeated_key)
        except ValueError as e:
            raise AssertionError("JSON line %d does not parse (%s): %r" % (n, e, line))
        check(isinstance(rec, dict), "JSON line %d is not an object: %r" % (n, line))
        eq(list(rec)[:len(COLUMNS)], COLUMNS, "JSON line %d keys" % n)
        out.append(rec)
    return out


TEXT_HEADER = "TIME            PID/TID       LATENCY     dRSS CALL"
_TEXT_ROW = re.compile(r"(\d\d:\d\d:\d\d\.\d{6}) (\d+)/(\d+) +(\S+) +(\S+) ( *)"
                       r"([^(\s]+)(?:\((.*)\))?(.*)$")


def text_row(line):
    """A row of the text table as {time, pid, tid, latency, drss, indent,
    func, args (the text between the parentheses, None: none), rest (what
    follows them: " = RET", a status, notes)}; None: not a row."""
    m = _TEXT_ROW.match(line)
    if not m:
        return None
    keys = ("time", "pid", "tid", "latency", "drss", "indent", "func", "args", "rest")
    row = dict(zip(keys, m.groups()))
    row["pid"], row["tid"], row["indent"] = int(row["pid"]), int(row["tid"]), len(row["indent"])
    return row


def text_rows(text):
    """The rows of a text table (its header checked)."""
    lines = text.splitlines()
    assert lines and lines[0] == TEXT_HEADER, "text header: %r" % lines[:1]
    return [text_row(l) for l in lines[1:] if text_row(l)]


def read_text(path):
    with open(path, "r", encoding="utf-8", errors="surrogateescape", newline="") as f:
        return f.read()


def summary(stderr):
    """The numbers of cmon's stderr summary."""
    s = {"attached": None, "functions": None, "written": None, "lost": None, "table": {}}
    in_table = False
    for line in stderr.splitlines():
        if line.startswith("cmon: attached "):
            w = line.split()
            s["attached"] = int(w[2])
            s["functions"] = int(line.rsplit("(", 1)[1].split()[0])
        elif line.startswith("cmon: events written: "):
            s["written"] = int(line.split(":")[2])
        elif line.startswith("cmon: events lost: "):
            s["lost"] = int(line.split(":")[2])
        elif line.startswith("cmon: function ") and "calls" in line:
            in_table = True
        elif in_table:
            m = re.match(r"cmon: (.+?)\s+(\d+)\s+(\d+)\s+(\d+)(\s+\(.*\))?$", line)
            if m:
                s["table"][m.group(1)] = tuple(int(m.group(i)) for i in (2, 3, 4))
            else:
                in_table = False
    return s


def only(rows, func):
    return [r for r in rows if r["func"] == func]


# ---------------------------------------------------------------- running cmon

class Result:
    def __init__(self, code, stdout, stderr, text, rows):
        self.code = code
        self.stdout = stdout
        self.stderr = stderr
        self.text = text      # the records file, as written
        self.rows = rows      # parsed records (csv/json), else None

    def __repr__(self):
        return "Result(code=%r, stderr=%r)" % (self.code, self.stderr[-500:])

    def summary(self):
        return summary(self.stderr)


def run(cmd, timeout=HANG, input=None, **kw):
    """Run CMD; returns (exit code, stdout, stderr) as text."""
    try:
        p = subprocess.run(cmd, input=input, capture_output=True, timeout=timeout * SLOW,
                           text=True, errors="surrogateescape", **kw)
    except subprocess.TimeoutExpired:
        raise AssertionError("%s did not finish within %ss" % (" ".join(cmd), timeout * SLOW))
    return p.returncode, p.stdout, p.stderr


def cmon(args, timeout=HANG, input=None, **kw):
    return run([CMON] + list(args), timeout=timeout, input=input, **kw)


def funcs_args(funcs):
    out = []
    for f in funcs:
        out += ["--func", f]
    return out


def trace(funcs, launch=None, extra=(), fmt="json", timeout=HANG, input=None, env=None):
    """`cmon trace -F FMT -o FILE --func F... EXTRA [-- LAUNCH...]`: the records
    go to a file, so stdout is the launched program's own output."""
    path = tmpfile("records.%s" % fmt)
    if os.path.exists(path):
        os.unlink(path)
    args = ["trace", "-F", fmt, "-o", path] + funcs_args(funcs) + list(extra)
    if launch:
        args += ["--"] + list(launch)
    code, out, err = cmon(args, timeout=timeout, input=input,
                          env=dict(os.environ, **env) if env else None)
    text = read_text(path) if os.path.exists(path) else None
    rows = None
    if fmt == "csv" and text:
        rows = parse_csv(text)
    elif fmt == "json" and text is not None:
        rows = parse_json_lines(text)
    return Result(code, out, err, text, rows)


class Background:
    """cmon started in the background, its stderr in a file."""

    def __init__(self, args, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, cmd=None,
                 env=None):
        self.err_path = tempfile.mkstemp(prefix="cmon-stderr-", dir=tmpdir())[1]
        with open(self.err_path, "wb") as err:
            self.p = subprocess.Popen(cmd or ([CMON] + list(args)), stdout=stdout,
                                      stdin=stdin, stderr=err, env=env)
        self.pid = self.p.pid

    @property
    def stderr(self):
        return read_text(self.err_path)

    def wait_attached(self, timeout=HANG):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if "cmon: attached " in self.stderr:
                return
            if self.p.poll() is not None:
                raise AssertionError("cmon exited with %d before attaching: %s"
                                     % (self.p.returncode, self.stderr.strip()))
            time.sleep(0.01)
        raise AssertionError("cmon did not attach within %ss: %s" % (timeout, self.stderr))

    def signal(self, sig):
        self.p.send_signal(sig)

    def wait(self, timeout=HANG):
        try:
            return self.p.wait(timeout * SLOW)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError("cmon did not exit within %ss" % timeout)

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def trace_bg(funcs, targets, fmt="json", extra=()):
    """Start `cmon trace` in the background; records go to a file (.out_path)."""
    path = tmpfile("bg-%d.%s" % (time.monotonic_ns(), fmt))
    bg = Background(["trace", "-F", fmt, "-o", path] + list(targets) + funcs_args(funcs)
                    + list(extra))
    bg.out_path = path
    return bg


class WaitTarget:
    """`calls --wait SCENARIO ARGS`: started, printed "ready PID", blocked on
    stdin until release()."""

    def __init__(self, scenario, binary="calls"):
        self.p = subprocess.Popen([target(binary), "--wait"] + list(scenario),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        line = self.p.stdout.readline().decode()
        check(line.startswith("ready "), "target did not print ready: %r" % line)
        self.ready = [int(w) for w in line.split()[1:]]  # PID, and what the target adds
        self.pid = self.ready[0]
        eq(self.pid, self.p.pid, "pid printed by the target")

    def release(self):
        self.p.stdin.write(b"\n")
        self.p.stdin.flush()

    def alive(self):
        return self.p.poll() is None

    def finish(self, timeout=HANG):
        """Wait for the end; returns (exit status, rest of stdout).  Reaped
        as it exits, read to the end after: a daemon it leaves may hold the
        pipes, and wait for its parent's end (forks daemon)."""
        bufs = {}

        def drain(name, f):
            bufs[name] = f.read()
        readers = [threading.Thread(target=drain, args=(n, f), daemon=True)
                   for n, f in (("out", self.p.stdout), ("err", self.p.stderr))]
        for r in readers:
            r.start()
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError("target %d did not finish within %ss" % (self.pid, timeout))
        for r in readers:
            r.join(timeout)
        return self.p.returncode, bufs.get("out", b"").decode()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.communicate()


def proc_status(pid, key):
    """A field of /proc/PID/status in bytes (for kB fields)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                w = line.split()
                return int(w[1]) * 1024 if len(w) > 2 and w[2] == "kB" else int(w[1])
    raise AssertionError("no %s in /proc/%d/status" % (key, pid))


# ---------------------------------------------------------------- BPF objects

def _bpftool(*args):
    # A listing fails, saying nothing, when a link it found goes before it
    # reads it (other processes' probes come and go): asked again.
    for _ in range(5):
        code, out, err = run(["bpftool", "-j"] + list(args), timeout=HANG)
        if code == 0:
            return json.loads(out or "[]")
        time.sleep(0.05)
    check(False, "bpftool %s failed: %s" % (" ".join(args), err.strip()))


def bpf_snapshot():
    """cmon's BPF links and programs (program name cmon_*):
    {("link", id): (desc, prog id), ("prog", id): (desc, id)}.

    Links are listed before programs: a listed link's program is still
    loaded when the programs are listed."""
    links = _bpftool("link", "list")
    progs = _bpftool("prog", "show")
    names = {p["id"]: p.get("name", "") for p in progs}
    snap = {}
    for lk in links:
        name = names.get(lk.get("prog_id"), "")
        kind = lk.get("type")
        if kind == 12:
            kind = "uprobe_multi"
        if name.startswith("cmon_"):
            snap[("link", lk["id"])] = ("%s link %d (prog %s)" % (kind, lk["id"], name),
                                        lk.get("prog_id"))
    for pid, name in names.items():
        if name.startswith("cmon_"):
            snap[("prog", pid)] = ("prog %d %s" % (pid, name), pid)
    return snap


def cmon_links(snap):
    return [v[0] for k, v in snap.items() if k[0] == "link"]


def bpf_holders():
    """Which processes hold BPF links and programs open:
    {("link"|"prog", id): {pid, ...}} from every /proc/PID/fdinfo."""
    kinds = {"anon_inode:bpf_link": ("link", "link_id:"),
             "anon_inode:bpf-link": ("link", "link_id:"),
             "anon_inode:bpf-prog": ("prog", "prog_id:")}
    res = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir("/proc/%s/fd" % pid)
        except OSError:
            continue
        for fd in fds:
            try:
                kind, key = kinds[os.readlink("/proc/%s/fd/%s" % (pid, fd))]
                with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
                    for line in f:
                        if line.startswith(key):
                            res.setdefault((kind, int(line.split()[1])), set()).add(int(pid))
            except (OSError, KeyError, ValueError):
                continue
    return res


def _foreign(pids):
    """Do these processes all belong to another session than this test's?
    (run.py starts each test in a session of its own.)"""
    if not pids:
        return False
    me = os.getsid(0)
    for p in pids:
        try:
            if os.getsid(p) == me:
                return False
        except OSError:
            pass
    return True


def assert_no_leak(before, timeout=HANG, what="cmon"):
    """No cmon link or program created since BEFORE may remain (links are
    released when their fd closes, programs soon after).  Objects held open
    only by processes outside this test's session belong to somebody else
    (another cmon running on the machine) and are ignored."""
    end = time.monotonic() + timeout * SLOW
    while True:
        new = {k: v for k, v in bpf_snapshot().items() if k not in before}
        if new:
            holders = bpf_holders()
            foreign = {k for k in new if _foreign(holders.get(k))}
            # A program attached through somebody else's link is theirs too.
            foreign |= {("prog", v[1]) for k, v in new.items() if k in foreign}
            new = {k: v for k, v in new.items() if k not in foreign}
        if not new:
            return
        if time.monotonic() >= end:
            raise AssertionError("%s left BPF objects behind: %s"
                                 % (what, ", ".join(sorted(v[0] for v in new.values()))))
        time.sleep(0.05)


def assert_gone(keys, timeout=HANG, what="cmon's links and programs"):
    """The BPF objects KEYS (from held_by) must disappear within TIMEOUT."""
    end = time.monotonic() + timeout * SLOW
    while True:
        left = sorted(v[0] for k, v in bpf_snapshot().items() if k in keys)
        if not left:
            return
        if time.monotonic() > end:
            raise AssertionError("%s still exist %gs later: %s"
                                 % (what, timeout, ", ".join(left)))
        time.sleep(0.05)


def held_by(pid):
    """The BPF objects process PID holds open (from bpf_holders)."""
    return {k for k, v in bpf_holders().items() if pid in v}


def stderr_lines(err):
    return [l for l in err.splitlines() if l.strip()]


def kill_quietly(pid, sig=signal.SIGKILL):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def pty_drain(master):
    """All a pseudo-terminal's writers wrote, once the last one closed it
    (its reads then fail with EIO); MASTER closed."""
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the last writer closed it
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return seen


def on_a_terminal(args, env=None, columns=None):
    """cmon ARGS with its stdout a terminal (COLUMNS wide when given): what
    the terminal shows, once cmon exited 0."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    if columns:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    p = subprocess.Popen([CMON] + args, stdout=slave, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    seen = pty_drain(master)
    _, err = p.communicate(timeout=HANG * SLOW)
    eq(p.returncode, 0, "exit status (%s)" % err.decode())
    return seen.decode()
