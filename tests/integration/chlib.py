"""A private ClickHouse server for a test (Debian's clickhouse-server, as in
FACTS "ClickHouse"): its own folder, 127.0.0.1, free ports; queried over
its HTTP interface.  Standard library only."""
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from cmonlib import Skip, tmpdir

SERVER = shutil.which("clickhouse-server") or shutil.which("clickhouse")
CONFIG = "/etc/clickhouse-server/config.xml"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class ClickHouse:
    """start() / stop() / start() again on the same folder and ports."""

    def __init__(self, name="ch"):
        if not SERVER or not os.path.exists(CONFIG):
            raise Skip("no clickhouse-server (Debian package clickhouse-server)")
        self.dir = os.path.join(tmpdir(), "%s-%d" % (name, time.monotonic_ns()))
        for sub in ("data", "tmp", "uf", "fs"):
            os.makedirs(os.path.join(self.dir, sub))
        self.http = free_port()
        self.tcp = free_port()
        self.inter = free_port()
        self.p = None

    def url(self, table="cmon.calls", **opts):
        q = "&".join("%s=%s" % kv for kv in opts.items())
        return "clickhouse://127.0.0.1:%d/%s%s" % (self.http, table, "?" + q if q else "")

    def start(self, timeout=60):
        d = self.dir
        cmd = [SERVER] + (["server"] if SERVER.endswith("/clickhouse") else []) + [
            "--config-file=" + CONFIG, "--",
            "--path=%s/data/" % d, "--tmp_path=%s/tmp/" % d, "--user_files_path=%s/uf/" % d,
            "--format_schema_path=%s/fs/" % d, "--http_port=%d" % self.http,
            "--tcp_port=%d" % self.tcp, "--interserver_http_port=%d" % self.inter,
            "--listen_host=127.0.0.1", "--logger.log=%s/log" % d,
            "--logger.errorlog=%s/err" % d]
        self.out = open(os.path.join(d, "stdout"), "ab")
        self.p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.out,
                                  stderr=subprocess.STDOUT)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.p.poll() is not None:
                raise AssertionError("clickhouse-server exited with %d: %s" % (
                    self.p.returncode, open(os.path.join(d, "err"), errors="replace").read()[-2000:]
                    if os.path.exists(os.path.join(d, "err")) else ""))
            try:
                if self.query("SELECT 1").strip() == "1":
                    return self
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.1)
        raise AssertionError("clickhouse-server not up within %ss" % timeout)

    def stop(self, sig=signal.SIGTERM):
        if self.p and self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(60)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.p = None

    def query(self, sql, **settings):
        q = urllib.parse.urlencode(settings)
        req = urllib.request.Request("http://127.0.0.1:%d/%s" % (self.http, "?" + q if q else ""),
                                     data=sql.encode())
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read().decode()

    def rows(self, sql):
        """SQL's rows (JSONEachRow, 64-bit numbers unquoted) as dicts."""
        text = self.query(sql + " FORMAT JSONEachRow", output_format_json_quote_64bit_integers=0)
        return [json.loads(line) for line in text.splitlines() if line]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class DropReplyProxy:
    """A TCP proxy to the server that forwards everything, but answers the
    Nth INSERT it sees with a closed connection after the server took it:
    to the client, an INSERT that may or may not have landed."""

    def __init__(self, upstream_port, drop_insert=1):
        self.up = upstream_port
        self.drop = drop_insert
        self.inserts = 0
        self.dropped = 0
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    @staticmethod
    def _read_request(c):
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = c.recv(65536)
            if not chunk:
                return None
            buf += chunk
        head, body = buf.split(b"\r\n\r\n", 1)
        length = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                length = int(v.strip())
        while len(body) < length:
            chunk = c.recv(65536)
            if not chunk:
                return None
            body += chunk
        return head + b"\r\n\r\n" + body, head

    def _serve(self, c):
        u = socket.create_connection(("127.0.0.1", self.up))
        try:
            while True:
                req = self._read_request(c)
                if not req:
                    return
                data, head = req
                is_insert = b"INSERT" in urllib.parse.unquote_to_bytes(head.split(b"\r\n")[0])
                u.sendall(data)
                # one answer per request (ClickHouse sends Content-Length or chunks
                # and keeps the connection): read until the body is complete
                resp = self._read_response(u)
                if is_insert:
                    self.inserts += 1
                    if self.inserts == self.drop:
                        self.dropped += 1
                        return  # the server took it; the client hears nothing
                c.sendall(resp)
        except OSError:
            pass
        finally:
            c.close()
            u.close()

    @staticmethod
    def _read_response(u):
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = u.recv(65536)
            if not chunk:
                return buf
            buf += chunk
        head, body = buf.split(b"\r\n\r\n", 1)
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            headers[k.strip().lower()] = v.strip()
        if b"content-length" in headers:
            n = int(headers[b"content-length"])
            while len(body) < n:
                body += u.recv(65536)
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            while not body.endswith(b"0\r\n\r\n"):
                chunk = u.recv(65536)
                if not chunk:
                    break
                body += chunk
        return head + b"\r\n\r\n" + body

    def close(self):
        self.sock.close()
