"""Stripped programs typed from debug info kept elsewhere (issue 25): a real
debuginfod (Debian's) on 127.0.0.1 over debug files split off the test
programs (objcopy --only-keep-debug; strip --strip-all), a private
/usr/lib/debug in a mount namespace of its own, and servers that fail: one
stopped, one serving another build's file, one serving a corrupt file, one
that never answers.  The values must be exactly the unstripped build's."""
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.request

from cmonlib import (CMON, Skip, check, cmon, eq, funcs_args, pty_drain, read_text, run, target, tmpdir)

DEBUGINFOD = shutil.which("debuginfod")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def split(binary, top, link=False):
    """BINARY's stripped copy TOP/bin/BINARY and its debug file
    TOP/srv/BINARY.debug (with LINK: the copy names it by .gnu_debuglink)."""
    for d in ("bin", "srv"):
        os.makedirs(os.path.join(top, d), exist_ok=True)
    exe, dbg = os.path.join(top, "bin", binary), os.path.join(top, "srv", binary + ".debug")
    for cmd in (["objcopy", "--only-keep-debug", target(binary), dbg],
                ["strip", "--strip-all", "-o", exe, target(binary)]):
        code, _, err = run(cmd)
        eq(code, 0, "%s: %s" % (" ".join(cmd), err))
    if link:
        code, _, err = run(["objcopy", "--add-gnu-debuglink=" + dbg, exe])
        eq(code, 0, "objcopy --add-gnu-debuglink: %s" % err)
    return exe, dbg


def build_id(path):
    code, out, _ = run(["readelf", "-n", path])
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(code == 0 and m, "no build ID in %s" % path)
    return m.group(1)


class Debuginfod:
    """`debuginfod -p PORT -F DIR -d DB`, ready once it has scanned N files."""

    def __init__(self, srv, n_files):
        if not DEBUGINFOD:
            raise Skip("no debuginfod server (Debian package debuginfod)")
        for _ in range(5):
            if self.start(srv):
                break
        end = time.monotonic() + 30
        while time.monotonic() < end:
            check(self.p.poll() is None, "debuginfod exited: %s" % read_text(self.log.name))
            try:
                with urllib.request.urlopen(self.url + "/metrics", timeout=2) as r:
                    m = re.search(r'^scanned_files_total\{source="file"\} (\d+)',
                                  r.read().decode(), re.M)
                    if m and int(m.group(1)) >= n_files:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError("debuginfod did not scan %d files: %s"
                             % (n_files, read_text(self.log.name)))

    def start(self, srv):
        """Started on a free port; False when another process took the port
        between our finding it free and debuginfod binding it."""
        self.port = free_port()
        self.db = os.path.join(tmpdir(), "debuginfod-%d.sqlite" % self.port)
        self.log = open(os.path.join(tmpdir(), "debuginfod-%d.log" % self.port), "wb")
        self.p = subprocess.Popen([DEBUGINFOD, "-p", str(self.port), "-F", srv, "-d", self.db],
                                  stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        self.url = "http://127.0.0.1:%d" % self.port
        end = time.monotonic() + 30
        while time.monotonic() < end and self.p.poll() is None:
            try:
                with urllib.request.urlopen(self.url + "/metrics", timeout=2):
                    return True
            except OSError:
                time.sleep(0.1)
        if self.p.poll() is not None and "Address already in use" in read_text(self.log.name):
            self.log.close()
            return False
        return True

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            self.p.wait(10)
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class FakeServer:
    """A debuginfod impostor: every /buildid/... answered with BODY (bytes),
    or never answered (HANG)."""

    def __init__(self, body=None, hang=False):
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.asked.append(self.path)
                if hang:
                    outer.release.wait(60)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.asked = []
        self.release = threading.Event()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def env_for(url, cache, **more):
    e = dict(os.environ, DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=cache)
    e.update(more)
    return e


def fetch_lines(path, url):
    """What cmon says when it fetches PATH's debug info (stderr not a tty)."""
    return [("cmon: %s: fetching its debug info from debuginfod (%s)" % (path, url)),
            re.compile(r"cmon: %s: debug info fetched \(\d+ KiB\)$" % re.escape(path))]


def match_lines(err, wants, what):
    lines = [l for l in err.splitlines() if l.strip()]
    eq(len(lines), len(wants), "%s: %r" % (what, err))
    for l, w in zip(lines, wants):
        check(w.match(l) if hasattr(w, "match") else l == w, "%s: %r, expected %r" % (what, l, w))


def trace_json(args, env, what):
    path = os.path.join(tmpdir(), "dinfod-%d.json" % time.monotonic_ns())
    code, out, err = cmon(["trace", "-q", "-F", "json", "-o", path] + args, env=env)
    rows = [json.loads(l) for l in read_text(path).splitlines()] if os.path.exists(path) else []
    return code, out, err, rows


def stripped_typed(binary):
    """BINARY stripped, its debug file only on a local debuginfod: every
    argument and return exactly as the -g build gives them; the fetch said
    once, a second run served from the cache without a word."""
    import test_typed
    top = os.path.join(tmpdir(), "dinfod-" + binary)
    exe = split(binary, top)[0]
    cache = os.path.join(top, "cache")
    test_typed.SCALE_ARGS.setdefault(binary, test_typed.SCALE_ARGS["typed_O2"])
    with Debuginfod(os.path.join(top, "srv"), 1) as srv:
        env = env_for(srv.url, cache)
        for run_no in (1, 2):
            path = os.path.join(tmpdir(), "dinfod-%s-%d.json" % (binary, run_no))
            funcs = test_typed.ALL_FUNCS if run_no == 1 else ["paint"]
            code, out, err = cmon(["trace", "-q", "-F", "json", "-o", path] +
                                  funcs_args(funcs) + ["--", exe, "all"], env=env)
            eq(code, 0, "%s: exit status (%s)" % (binary, err))
            eq(out, test_typed.untraced(binary), "%s: the program's output" % binary)
            match_lines(err, fetch_lines(exe, srv.url) if run_no == 1 else [],
                        "%s run %d: stderr" % (binary, run_no))
            if run_no == 1:
                test_typed.check_all(test_typed.json_records(read_text(path)), binary)
            else:
                eq([r["args"] for r in test_typed.json_records(read_text(path))],
                   [{"c": "BLUE", "mix": 6}], "%s: from the cache, typed" % binary)
    return exe, cache


def test_debuginfod_stripped_O2_typed_as_unstripped():
    exe, cache = stripped_typed("typed_O2")
    # --no-debuginfod: local places only, where the stripped program has
    # no symbols (its cache is another's)
    code, _, err = cmon(["trace", "--no-debuginfod", "--func", "paint", "--", exe, "all"],
                        env=env_for("http://127.0.0.1:1", cache + "2"))
    eq((code, err.count("\n")), (1, 1), "--no-debuginfod: one error line (%r)" % err)
    check("has no symbol table (stripped)" in err and "fetching" not in err, err)


def test_debuginfod_stripped_O0_typed_as_unstripped():
    stripped_typed("typed_O0")


def test_debuginfod_capture():
    """DWARF fetched from debuginfod serves --capture (with --if on a
    parameter)."""
    top = os.path.join(tmpdir(), "dinfod-capture")
    typed, _ = split("typed_O2", top)
    with Debuginfod(os.path.join(top, "srv"), 1) as srv:
        env = env_for(srv.url, os.path.join(top, "cache"))
        code, _, err, rows = trace_json(["--func", "sum_ints", "--capture", "v=values[n]",
                                         "--if", "n == 3", "--", typed, "all"], env, "capture")
        eq(code, 0, "--capture: exit status (%s)" % err)
        eq([(r["args"]["n"], r["captures"]["v"]) for r in rows], [(3, [7, 8, 9])],
           "sum_ints if n == 3 (not the call with 5): values[n]")


def test_debuginfod_if_on_members():
    """DWARF fetched from debuginfod serves --if on a struct's members
    (apart from --capture: the two runs together outlast a test's 60 s on
    a busy machine)."""
    top = os.path.join(tmpdir(), "dinfod-if")
    typed, _ = split("typed_O2", top)
    with Debuginfod(os.path.join(top, "srv"), 1) as srv:
        env = env_for(srv.url, os.path.join(top, "cache"))
        code, _, err, rows = trace_json(["--func", "nested", "--if", "o->id == 7 && "
                                         "o->in.y == 40000", "--", typed,
                                         "all"], env, "--if")
        eq((code, [r["args"]["o"]["name"] for r in rows]), (0, ["outer-name"]),
           "--if on members (%s)" % err)


def test_debuginfod_lines_locals_watch_list():
    """DWARF fetched from debuginfod serves --line with --locals, --watch
    NAME (the writers named from the debug file's symbols) and `cmon
    list`, which names where it came from."""
    import test_lines
    import test_watch
    top = os.path.join(tmpdir(), "dinfod-lines")
    lines, _ = split("lines", top)
    watch, _ = split("watch", top)
    with Debuginfod(os.path.join(top, "srv"), 2) as srv:
        env = env_for(srv.url, os.path.join(top, "cache"))
        line = test_lines.line_of("marker: once per walk")
        code, out, err, rows = trace_json(["--line", "lines.c:%d" % line, "--locals", "--",
                                           lines, "5"], env, "--line")
        eq((code, out), (0, "total=30\n"), "--line: exit status (%s)" % err)
        eq([dict(r["args"]) for r in rows], [{"i": i, "sq": i * i} for i in range(5)],
           "--locals at each run of the line")
        code, out, err, rows = trace_json(["--watch", "counter", "--", watch, "writes"], env,
                                          "--watch")
        eq((code, out), (0, "counter 50\n"), "--watch: exit status (%s)" % err)
        eq([(r["old"], r["new"], r["func"], r["line"]) for r in rows if r.get("kind") == "watch"],
           test_watch._writes(), "--watch: old, new, writer and line")
        code, out, err = cmon(["list", "--lines", "walk", "--", lines], env=env)
        eq(code, 0, "cmon list --lines: exit status (%s)" % err)
        check(re.search(r"^walk +lines\.c:%d " % (test_lines.line_of("NOINLINE long walk") + 1),
                        out, re.M) and "lines.c:%d " % line in out, "list --lines: %r" % out)
        code, out, err = cmon(["list", "--func", "walk", "--", lines], env=env)
        eq(code, 0, "cmon list: exit status (%s)" % err)
        dbg = os.path.join(top, "cache", build_id(lines), "debuginfo")
        check("symbols from %s (debuginfod)\n" % dbg in out, "list: symbols' source: %r" % out)
        check("DWARF from %s (debuginfod %s)\n" % (dbg, srv.url) in out,
              "list: DWARF's source: %r" % out)


def test_debug_root_build_id_and_debuglink():
    """A private /usr/lib/debug (bound over it in a mount namespace of its
    own): .build-id/xx/rest.debug, then .gnu_debuglink beside the file and
    under the root; another build's file at the build-ID path or beside
    it is never used (one warning each), nor, for files without a build
    ID, a debug file whose CRC is not the link's."""
    if not shutil.which("unshare"):
        raise Skip("no unshare")
    top = os.path.join(tmpdir(), "debugroot")
    exe, dbg = split("typed_O2", top, link=True)
    other_dbg = split("typed_O0", os.path.join(top, "other"))[1]
    root = os.path.join(top, "root")
    bid = build_id(exe)
    at_bid = os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug")
    beside = os.path.join(os.path.dirname(exe), os.path.basename(dbg))
    under = os.path.join(root, os.path.dirname(exe).lstrip("/"), os.path.basename(dbg))
    for d in (at_bid, under):
        os.makedirs(os.path.dirname(d))

    def traced(what, binary=exe):
        # (a host without any -dbgsym package has no /usr/lib/debug yet)
        script = "mkdir -p /usr/lib/debug && mount --bind %s /usr/lib/debug && exec %s" % (
            root, " ".join([CMON, "trace", "-q", "-F", "json", "--func", "paint",
                            "--no-debuginfod", "--", binary, "all"]))
        code, out, err = run(["unshare", "-m", "sh", "-c", script])
        eq(code, 0, "%s: exit status (%s)" % (what, err))
        eq([r["args"] for r in map(json.loads, out.splitlines()[1:])],
           [{"c": "BLUE", "mix": 6}], "%s: paint typed" % what)
        return err

    def wrong(path):
        return ("cmon: warning: %s: %s is not its debug file (its build ID is another file's): "
                "not used\n" % (exe, path))

    os.rename(dbg, at_bid)
    eq(traced("by build ID"), "", "by build ID: stderr")
    os.rename(at_bid, beside)
    shutil.copy(other_dbg, at_bid)
    # (named as cmon sees them: the root bound over /usr/lib/debug)
    seen_at_bid = "/usr/lib/debug" + at_bid[len(root):]
    eq(traced("beside it"), wrong(seen_at_bid), "beside it: the wrong file said once")
    os.rename(beside, under)
    shutil.copy(other_dbg, beside)
    eq(traced("under the root"), wrong(seen_at_bid) + wrong(beside), "under the root: stderr")
    # No build IDs: the link's CRC decides
    for path in (at_bid, beside, under):
        os.unlink(path)
    nobid, nobid_dbg = os.path.join(top, "nobid"), os.path.join(top, "nobid.debug")
    for src, dst in ((target("typed_O2"), nobid + ".full"), (other_dbg, nobid + ".other")):
        code, _, err = run(["objcopy", "--remove-section", ".note.gnu.build-id", src, dst])
        eq(code, 0, "objcopy: %s" % err)
    for cmd in (["objcopy", "--only-keep-debug", nobid + ".full", nobid_dbg],
                ["strip", "--strip-debug", "-o", nobid, nobid + ".full"],
                ["objcopy", "--add-gnu-debuglink=" + nobid_dbg, nobid]):
        code, _, err = run(cmd)
        eq(code, 0, "%s: %s" % (" ".join(cmd), err))
    os.makedirs(os.path.join(top, ".debug"))
    os.rename(nobid_dbg, os.path.join(top, ".debug", "nobid.debug"))  # DIR/.debug/NAME
    shutil.copy(nobid + ".other", nobid_dbg)  # DIR/NAME: another CRC
    eq(traced("by CRC", nobid), "cmon: warning: %s: %s is not its debug file (its CRC is not "
       "the one .gnu_debuglink names): not used\n" % (nobid, nobid_dbg), "by CRC: stderr")


def untyped_case(url, env_more=(), what=""):
    """typed_O2 without its DWARF (symbols kept: strip --strip-debug), its
    debug info asked of URL: exit 0, raw values, stderr."""
    top = os.path.join(tmpdir(), "untyped-%d" % time.monotonic_ns())
    os.makedirs(top)
    exe = os.path.join(top, "typed_O2")
    code, _, err = run(["strip", "--strip-debug", "-o", exe, target("typed_O2")])
    eq(code, 0, "strip --strip-debug: %s" % err)
    env = env_for(url, os.path.join(top, "cache"), **dict(env_more))
    code, out, err, rows = trace_json(["--func", "paint", "--", exe, "all"], env, what)
    eq(code, 0, "%s: exit status (%s)" % (what, err))
    eq([("args" in r, r["arg0"], r["arg1"]) for r in rows], [(False, 2, 6)],
       "%s: paint(BLUE, 6) untyped" % what)
    return exe, build_id(exe), err


def test_debuginfod_failures_one_warning_then_untyped():
    """The server stopped, the build ID on no server, another build's file
    served, a corrupt file served, a server that never answers (after
    DEBUGINFOD_TIMEOUT): one warning naming the file, the trace goes on
    untyped."""
    port = free_port()  # nothing listens there
    exe, bid, err = untyped_case("http://127.0.0.1:%d" % port, what="stopped")
    eq(err.splitlines()[1:], ["cmon: warning: %s: its debug info (build-id %s) could not be "
                              "fetched from http://127.0.0.1:%d: Connection refused: untyped"
                              % (exe, bid, port)], "server stopped: stderr")
    top = os.path.join(tmpdir(), "dinfod-empty")
    os.makedirs(os.path.join(top, "srv"), exist_ok=True)
    split("typed_O0", top)
    with Debuginfod(os.path.join(top, "srv"), 1) as srv:
        exe, bid, err = untyped_case(srv.url, what="unknown build ID")
        eq(err.splitlines()[1:], ["cmon: warning: %s: no debuginfod server has its debug info "
                                  "(build-id %s): untyped" % (exe, bid)],
           "no server has it: stderr")
    with open(os.path.join(top, "srv", "typed_O0.debug"), "rb") as f:
        other = f.read()
    for body, why in ((other, "its build ID is another file's"),
                      (b"\x7fELF" + b"\0" * 60 + b"garbage" * 100, "not an ELF file"),
                      (other[:4096], "not an ELF file")):
        with FakeServer(body=body) as fake:
            exe, bid, err = untyped_case(fake.url, what=why)
            check(fake.asked == ["/buildid/%s/debuginfo" % bid], "asked: %r" % fake.asked)
            lines = err.splitlines()
            eq(len(lines), 3, "%s: stderr %r" % (why, err))
            check(re.fullmatch(r"cmon: warning: %s: the debug file debuginfod served \(.*/%s/"
                               r"debuginfo\) is not used: (%s|it has no \.debug_info): untyped"
                               % (re.escape(exe), bid, re.escape(why)), lines[2]),
                  "%s: %r" % (why, lines[2]))
    with FakeServer(hang=True) as fake:
        t0 = time.monotonic()
        exe, bid, err = untyped_case(fake.url, env_more={"DEBUGINFOD_TIMEOUT": "2"},
                                     what="hangs")
        check(time.monotonic() - t0 < 40, "the hanging server held cmon %.0f s"
              % (time.monotonic() - t0))
        lines = err.splitlines()
        eq(len(lines), 2, "hangs: stderr %r" % err)
        check(lines[1].startswith("cmon: warning: %s: its debug info (build-id %s) could not "
                                  "be fetched from %s: " % (exe, bid, fake.url))
              and lines[1].endswith(": untyped"), lines[1])


def test_agent_fetches_in_the_background():
    """The agent on a stripped program: while debuginfod holds the fetch,
    /metrics and /status answer and the probes say they wait for it; the
    fetch failing is their error; with the debug file served they are
    applied, and count and histogram the parameter by its DWARF name."""
    from agentlib import Agent, run_target, series, value, write_spec
    top = os.path.join(tmpdir(), "dinfod-agent")
    exe, _ = split("typed_O2", top)
    spec = os.path.join(top, "spec.yaml")
    write_spec(spec, [
        {"name": "sums", "target": exe, "func": "sum_ints", "instrument": "count"},
        {"name": "sum_n", "target": exe, "func": "sum_ints", "instrument": "arg", "arg": "n"},
    ])
    with FakeServer(hang=True) as fake:
        os.environ.update(env_for(fake.url, os.path.join(top, "cache-hang")))
        a = Agent(spec).wait_ready()
        try:
            end = time.monotonic() + 20
            while not fake.asked and time.monotonic() < end:
                time.sleep(0.05)
            eq(fake.asked, ["/buildid/%s/debuginfo" % build_id(exe)], "the one fetch")
            # the server holds it: everything answers meanwhile
            probes = a.probes()
            eq({n: p["state"] for n, p in probes.items()}, {"sums": "error", "sum_n": "error"},
               "states while fetching")
            for n, p in probes.items():
                check(p["error"].endswith("(its debug info is being fetched from debuginfod: "
                                          "tried again when it arrives)"), "%s: %r" % (n, p))
            eq(value(a.metrics(), "cmon_probe_state", probe="sums", state="error"), 1,
               "a scrape while fetching")
            fake.release.set()  # an empty answer: the fetch fails
            end = time.monotonic() + 20
            while time.monotonic() < end and "being fetched" in a.probes()["sums"]["error"]:
                time.sleep(0.05)
            err = a.probes()["sums"]["error"]
            check("no symbol table (stripped)" in err and "being fetched" not in err, err)
        finally:
            eq(a.stop(), 0, "agent exit status")
    with Debuginfod(os.path.join(top, "srv"), 1) as srv:
        os.environ.update(env_for(srv.url, os.path.join(top, "cache")))
        a = Agent(spec).wait_ready()
        try:
            a.wait_probes({"sums": "applied", "sum_n": "applied"}, timeout=30)
            run_target(exe, "loop", 3)
            m = a.metrics()
            eq(value(m, "cmon_sums_calls_total", probe="sums"), 3, "sum_ints calls")
            eq(value(m, "cmon_sum_n_arg_count", probe="sum_n"), 3, "n histogrammed")
            eq({dict(l)["le"]: v for l, v in series(m, "cmon_sum_n_arg_bucket").items()
                if dict(l)["le"] in ("3", "7", "+Inf")}, {"3": 0, "7": 3, "+Inf": 3},
               "n = 4 each call")
        finally:
            eq(a.stop(), 0, "agent exit status")


def test_debuginfod_progress_on_a_terminal():
    """On a terminal, a download is one line redrawn in place (what is
    asked, then how much of it came from where), erased when done, then
    the one line that says what came."""
    import pty
    top = os.path.join(tmpdir(), "dinfod-tty")
    exe, dbg = split("calls", top)
    with Debuginfod(os.path.join(top, "srv"), 1) as srv:
        master, slave = pty.openpty()
        p = subprocess.Popen([CMON, "list", "--func", "add", "--", exe], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=slave,
                             env=env_for(srv.url, os.path.join(top, "cache")))
        os.close(slave)
        err = pty_drain(master)
        out = p.stdout.read().decode()
        eq(p.wait(60), 0, "cmon list: exit status (%r)" % err)
    check(re.search(r"^add +calls ", out, re.M), "cmon list: %r" % out)
    text = err.decode().replace("\r\n", "\n")
    kib = os.path.getsize(dbg) / 1024.0
    url = "%s/buildid/%s/debuginfo" % (srv.url, build_id(exe))
    draws = text.split("\r\033[K")
    eq(draws[0], "", "stderr starts with a line drawn in place: %r" % text)
    asking = "cmon: %s: asking debuginfod (%s) for its debug info" % (exe, srv.url)
    amount = re.compile(r"cmon: %s: debug info from %s: (\d+) of %.0f KiB$"
                        % (re.escape(exe), re.escape(url), kib))
    n_ask = 1
    while n_ask < len(draws) and draws[n_ask] == asking:
        n_ask += 1
    check(n_ask > 1, "first: what is asked: %r" % text)
    got = [amount.match(d) for d in draws[n_ask:-1]]
    check(got and all(got), "then how much came: %r" % draws[n_ask:])
    eq(got[-1].group(1), "%.0f" % kib, "the last amount: all of it")
    eq(draws[-1], "cmon: %s: debug info fetched (%.0f KiB)\n" % (exe, kib),
       "the line erased, then what came: %r" % text)
