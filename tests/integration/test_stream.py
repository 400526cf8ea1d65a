"""-o unix:PATH: records served live to every reader; a reader that does not
read is dropped and counted, and never holds the trace back.  The reader
that keeps up is examples/stream_reader.py itself."""
import os
import socket
import subprocess
import time

from cmonlib import HANG, CMON, ROOT, check, eq, target, tmpdir, tmpfile

EXAMPLE = os.path.join(ROOT, "examples", "stream_reader.py")
N = 200000


def _wait(cond, what, timeout=HANG):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting for %s" % what)


class _Trace:
    """cmon trace --func add -o unix:SOCK -- calls --wait loop N: the program
    waits for a line on stdin, so readers connect before any call."""

    def __init__(self, n):
        self.sock = os.path.join(tmpdir(), "cmon.sock")
        self.err_path = tmpfile("stream.err")
        with open(self.err_path, "wb") as err:
            self.p = subprocess.Popen([CMON, "trace", "--func", "add", "-o", "unix:" + self.sock,
                                       "--", target("calls"), "--wait", "loop", str(n)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        _wait(lambda: os.path.exists(self.sock) and
              b"cmon: attached" in open(self.err_path, "rb").read(), "the socket")

    def go(self):
        self.p.stdin.write(b"go\n")
        self.p.stdin.flush()
        out, _ = self.p.communicate(timeout=HANG)
        eq(self.p.returncode, 0, "cmon exit status (%s)" % self.stderr)
        check(out.startswith(b"ready ") and b"loop sum=" in out, "program output: %r" % out)

    @property
    def stderr(self):
        return open(self.err_path).read()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def _read_all(s, into):
    while True:
        b = s.recv(1 << 20)
        if not b:
            return
        into.append(b)


def test_stream_two_readers_slow_one_dropped():
    import json
    import threading
    tr = _Trace(N)
    fast = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        fast.connect(tr.sock)
        # the slow reader: connected, a small receive buffer, never reads
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.connect(tr.sock)
        chunks = []
        t = threading.Thread(target=_read_all, args=(fast, chunks))
        t.start()
        start = time.monotonic()
        tr.go()
        t.join(60)
        check(not t.is_alive(), "the fast reader saw the end of the stream")
    finally:
        tr.kill()
        fast.close()
        slow.close()
    err = tr.stderr
    check("cmon: stream %s: 2 readers served, 1 dropped (too slow)" % tr.sock in err,
          "stream summary: %r" % err[-600:])
    check("events lost: 0" in err, err[-400:])
    text = b"".join(chunks).decode()
    check(text.endswith("\n"), "whole lines")
    recs = [json.loads(l) for l in text.splitlines()]
    eq(len(recs), N, "records the fast reader got")
    eq([(r["func"], r["args"], r["retval"]) for r in recs[:3]],
       [("add", {"a": i, "b": 1}, i + 1) for i in range(3)], "first records")
    eq(sorted(r["args"]["a"] for r in recs), list(range(N)), "every call once")
    check(not os.path.exists(tr.sock), "socket file removed at the end")


def test_stream_example_reader():
    tr = _Trace(1000)
    ex = subprocess.Popen(["/usr/bin/python3", EXAMPLE, tr.sock], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    try:
        eq(ex.stderr.readline(), "# connected to %s\n" % tr.sock, "example's first line")
        tr.go()
        out, err = ex.communicate(timeout=HANG)
    finally:
        tr.kill()
        if ex.poll() is None:
            ex.kill()
    check("2 readers" not in tr.stderr and "1 reader served, 0 dropped" in tr.stderr,
          tr.stderr[-300:])
    lines = out.splitlines()
    eq(len(lines), 1000, "calls printed")
    pid = lines[0].split("/")[0]
    for i in (0, 999):
        check(lines[i].startswith("%s/%s add(a=%d, b=1) = %d [" % (pid, pid, i, i + 1)) and
              lines[i].endswith(" us]"), "line %d: %r" % (i, lines[i]))
    eq(err.strip().splitlines(), ["# add: 1000 calls"], "summary")


def test_stream_refuses_a_regular_file():
    path = tmpfile("not-a-socket")
    with open(path, "w") as f:
        f.write("keep")
    p = subprocess.run([CMON, "trace", "--func", "add", "-o", "unix:" + path, "--",
                        target("calls"), "calls"], capture_output=True, text=True, timeout=HANG)
    eq(p.returncode, 1, "exit status")
    eq(len(p.stderr.strip().splitlines()), 1, "one error line: %r" % p.stderr)
    check("cannot serve on %s" % path in p.stderr, p.stderr)
    eq(open(path).read(), "keep", "the file is left alone")


def test_stream_is_live():
    """A record reaches the reader while the trace still runs (sent after the
    drain that read it, not at the end): sleeper naps 200 ms 25 times."""
    import json
    import signal
    sock = os.path.join(tmpdir(), "live.sock")
    err_path = tmpfile("live.err")
    with open(err_path, "wb") as err:
        tr = subprocess.Popen([CMON, "trace", "--func", "nap", "-o", "unix:" + sock, "--",
                               target("sleeper"), "loop", "200", "25"],
                              stdout=subprocess.DEVNULL, stderr=err)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        _wait(lambda: os.path.exists(sock), "the socket")
        s.connect(sock)
        s.settimeout(3)
        got = b""
        while b"\n" not in got:
            got += s.recv(4096)
        check(tr.poll() is None, "the record came while the trace runs")
        rec = json.loads(got.split(b"\n")[0])
        eq((rec["func"], rec["args"]), ("nap", {"usec": 200000}), "first record")
        check(rec["latency_ns"] >= 200000000, "latency: %r" % rec["latency_ns"])
        tr.send_signal(signal.SIGINT)
        eq(tr.wait(HANG), 0, "cmon exit status after SIGINT (%s)" % open(err_path).read())
    finally:
        s.close()
        if tr.poll() is None:
            tr.kill()
            tr.wait()


def test_stream_reader_joining_mid_flood_gets_whole_lines():
    """Readers that connect while records pour out start at a line start
    (stdio hands the stream full buffers, which end inside a line)."""
    import json
    import threading
    tr = _Trace(N)
    readers = []
    try:
        tr.p.stdin.write(b"go\n")
        tr.p.stdin.flush()
        for _ in range(5):
            time.sleep(0.05)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(tr.sock)
            except OSError:
                break  # the trace ended already
            chunks = []
            t = threading.Thread(target=_read_all, args=(s, chunks))
            t.start()
            readers.append((s, t, chunks))
        out, _ = tr.p.communicate(timeout=HANG)
        eq(tr.p.returncode, 0, "cmon exit status (%s)" % tr.stderr)
    finally:
        tr.kill()
    check(readers, "readers connected during the run")
    got = 0
    for s, t, chunks in readers:
        t.join(30)
        s.close()
        text = b"".join(chunks).decode()
        if not text.endswith("\n"):  # a reader dropped as too slow ends cut
            check("dropped (too slow)" in tr.stderr and "0 dropped" not in tr.stderr,
                  "a cut stream only for a dropped reader")
            text = text[:text.rfind("\n") + 1]
        for n, line in enumerate(text.splitlines()):
            try:
                rec = json.loads(line)
            except ValueError:
                raise AssertionError("reader's line %d is not whole JSON: %r" % (n, line[:80]))
            eq(rec["func"], "add", "record")
        got += len(text.splitlines())
    check(got > 0, "the readers got records")
