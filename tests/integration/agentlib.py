"""Helpers for the `cmon agent` integration tests (standard library only):
start an agent on a free loopback port, write its spec the way editors do
(a new file renamed over the old), read /metrics and /status."""
import json
import os
import re
import signal
import subprocess
import time
import urllib.request

from cmonlib import HANG, CMON, SLOW, check, read_text, tmpdir

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def _unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def parse_metrics(text):
    """{(name, ((label, value), ...) sorted): float} of an exposition; fails on
    a line that is neither a comment nor a sample."""
    out = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        check(m, "exposition line %d is not a sample: %r" % (n, line))
        labels = tuple(sorted((k, _unescape(v)) for k, v in _LABEL.findall(m.group(3) or "")))
        key = (m.group(1), labels)
        check(key not in out, "series %r twice in the exposition" % (key,))
        out[key] = float(m.group(4))
    return out


def series(metrics, name, **labels):
    """The samples of NAME whose labels include LABELS: {labels dict as tuple: value}."""
    want = set(labels.items())
    return {l: v for (n, l), v in metrics.items() if n == name and want <= set(l)}


def value(metrics, name, **labels):
    """The one sample of NAME with LABELS (fails when there is none or several)."""
    s = series(metrics, name, **labels)
    check(len(s) == 1, "expected one %s%r, found %d: %r" % (name, labels, len(s), s))
    return next(iter(s.values()))


def write_spec(path, probes, as_json=False):
    """Write the spec like an editor: a new file renamed over the old one."""
    if as_json:
        text = json.dumps({"probes": probes}, indent=2) + "\n"
    else:
        lines = ["probes:"]
        for p in probes:
            first = True
            for k, v in p.items():
                lines.append("%s%s: %s" % ("  - " if first else "    ", k, json.dumps(v)))
                first = False
        text = "\n".join(lines) + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def count_probe(name, target, func="add", **extra):
    p = {"name": name, "target": target, "func": func, "instrument": "count"}
    p.update(extra)
    return p


class Agent:
    """`cmon agent --spec SPEC --listen 127.0.0.1:0`, stderr to a file; the
    port it got is read from its "ready" line."""

    def __init__(self, spec_path, extra=(), exe=None, prefix=()):
        """EXE: a cmon-agent executable to run instead of `cmon agent`.
        PREFIX: a command that execs the agent (setpriv ...): same pid."""
        self.err_path = os.path.join(tmpdir(), "agent-%d.err" % time.monotonic_ns())
        with open(self.err_path, "wb") as err:
            self.p = subprocess.Popen(list(prefix) + ([exe] if exe else [CMON, "agent"]) +
                                      ["--spec", spec_path, "--listen", "127.0.0.1:0"] +
                                      list(extra),
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=err)
        self.pid = self.p.pid
        self.addr = None

    @property
    def stderr(self):
        return read_text(self.err_path)

    def wait_ready(self, timeout=HANG):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = re.search(r"cmon: ready: serving http://([0-9.:]+)/metrics", self.stderr)
            if m:
                self.addr = m.group(1)
                return self
            if self.p.poll() is not None:
                raise AssertionError("cmon agent exited with %d before it was ready: %s"
                                     % (self.p.returncode, self.stderr.strip()))
            time.sleep(0.02)
        raise AssertionError("cmon agent not ready within %ss: %s" % (timeout, self.stderr))

    def get(self, path):
        with urllib.request.urlopen("http://%s%s" % (self.addr, path), timeout=HANG) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()

    def metrics_text(self):
        code, ctype, body = self.get("/metrics")
        check(code == 200, "/metrics answered %d" % code)
        check(ctype.startswith("text/plain; version=0.0.4"), "/metrics content type %r" % ctype)
        return body

    def metrics(self):
        return parse_metrics(self.metrics_text())

    def status(self):
        code, ctype, body = self.get("/status")
        check(code == 200 and ctype == "application/json", "/status: %d %s" % (code, ctype))
        return json.loads(body)

    def probes(self):
        return {p["name"]: p for p in self.status()["probes"]}

    def wait_probes(self, want, timeout=HANG):
        """Until the probes are exactly WANT ({name: state}); returns them."""
        end = time.monotonic() + timeout * SLOW
        got = None
        while time.monotonic() < end:
            got = self.probes()
            if {n: p["state"] for n, p in got.items()} == want:
                return got
            time.sleep(0.05)
        raise AssertionError("probes %r, expected %r; agent said: %s"
                             % ({n: p["state"] for n, p in got.items()}, want,
                                self.stderr[-2000:]))

    def wait_metric(self, name, expected, timeout=HANG, **labels):
        """Until the one sample NAME{LABELS} equals EXPECTED."""
        end = time.monotonic() + timeout * SLOW
        v = None
        while time.monotonic() < end:
            s = series(self.metrics(), name, **labels)
            v = next(iter(s.values())) if len(s) == 1 else s
            if v == expected:
                return
            time.sleep(0.05)
        raise AssertionError("%s%r is %r, expected %r" % (name, labels, v, expected))

    def signal(self, sig):
        self.p.send_signal(sig)

    def stop(self, timeout=HANG):
        """SIGTERM; returns the exit status."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout * SLOW)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError("cmon agent did not exit within %ss of SIGTERM" % timeout)

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def run_target(path, *args):
    """Run a target program to its end; returns its stdout."""
    p = subprocess.run([path] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=HANG)
    check(p.returncode == 0, "%s %s exited %d: %s" % (path, args, p.returncode, p.stderr))
    return p.stdout


def proc_status_field(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split(":", 1)[1].strip()
    raise AssertionError("no %s in /proc/%d/status" % (key, pid))
