"""Hostile input, signals and shared paths (issue 23): nothing a user, an
editor or another user of the machine puts in cmon's way crashes it,
leaves a target stopped, takes over a socket or grows without bound."""
import json
import os
import signal

from agentlib import Agent, count_probe, run_target, value, write_spec
from cmonlib import CMON, check, eq, run, target, tmpfile


def _deep_spec(path, app, expr):
    """A spec of a plain counting probe and one whose `if:` is EXPR."""
    with open(path + ".tmp", "w") as f:
        f.write("probes:\n"
                "  - name: ok\n    target: %s\n    func: add\n    instrument: count\n"
                "  - name: deep\n    target: %s\n    func: add\n    instrument: count\n"
                "    if: %s\n" % (app, app, json.dumps(expr)))
    os.rename(path + ".tmp", path)


def test_deep_expression_refused_cli_check_and_running_agent():
    """30,000 '(' or 100,000 '!' in --if / if: overflowed the recursive
    parser (exit 139): cmon trace, cmon-agent --check and a running agent
    whose spec is replaced now say one line and go on."""
    app = target("calls")
    parens = "(" * 30000 + "a" + ")" * 30000
    nots = "!" * 100000 + "a"
    for expr in (parens, nots):
        code, out, err = run([CMON, "trace", "--func", "add", "--if", expr, "--", app, "loop",
                              "1"])
        eq((code, err), (2, "cmon: --if: nested deeper than 64 levels at column 65: %s...\n"
                         % expr[:200]), "trace --if of %d bytes" % len(expr))
    spec = tmpfile("deep-if.yaml")
    _deep_spec(spec, app, parens)
    code, out, err = run([CMON, "agent", "--check", "--spec", spec])
    eq((code, out.splitlines()),
       (1, ["%s: ok: ok (count on %s)" % (spec, app),
            "%s: deep: line 10: 'if': nested deeper than 64 levels at column 65: %s..."
            % (spec, parens[:200]), "2 probes, 1 invalid"]), "cmon agent --check")

    write_spec(spec, [count_probe("ok", app)])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"ok": "applied"})
        _deep_spec(spec, app, nots)
        probes = a.wait_probes({"ok": "applied", "deep": "error"})
        eq(probes["deep"]["error"], "line 10: 'if': nested deeper than 64 levels at column 65: "
           "%s..." % nots[:200], "the deep probe's error")
        eq(run_target(app, "loop", 100), "loop sum=5050\n", "target output")
        eq(value(a.metrics(), "cmon_ok_calls_total", probe="ok"), 100, "the kept probe counts")
        check(a.p.poll() is None, "the agent runs")
    finally:
        eq(a.stop(), 0, "agent exit status (%s)" % a.stderr[-500:])



def _break_killed_by(sig):
    """cmon break dying of SIG, a signal it can catch, resumes the process
    it stopped first (only SIGKILL can leave it stopped): before, 12 such
    signals (USR1, ALRM, a real-time signal...) left it in state T."""
    from test_break import CALLS3_OUT, Break, _state
    from cmonlib import kill_quietly
    b = Break(["--func", "tick", "--", target("watch"), "calls", "3"])
    pid = None
    try:
        b.wait_for("cmon: stop 1: process ", timeout=120)  # a busy machine loads slowly
        pid = b.stopped_pid(1)
        eq(_state(pid), {"T"}, "stopped")
        b.p.send_signal(sig)
        code, out = b.finish()
        eq((code, out), (-sig, CALLS3_OUT),
           "cmon's status and the program's output after signal %d" % sig)
    finally:
        b.kill()
        if pid:
            kill_quietly(pid)


# One test a signal (each launches and stops a program).
for _name, _sig in [("usr1", signal.SIGUSR1), ("usr2", signal.SIGUSR2),
                    ("alrm", signal.SIGALRM), ("prof", signal.SIGPROF),
                    ("vtalrm", signal.SIGVTALRM), ("io", signal.SIGIO),
                    ("xcpu", signal.SIGXCPU), ("sys", signal.SIGSYS),
                    ("stkflt", getattr(signal, "SIGSTKFLT", 16)), ("pwr", signal.SIGPWR),
                    ("rtmin", signal.SIGRTMIN), ("rtmin7", signal.SIGRTMIN + 7),
                    ("rtmax", signal.SIGRTMAX)]:
    globals()["test_break_resumes_target_on_sig" + _name] = (
        lambda sig=_sig: _break_killed_by(sig))


def test_break_endless_cue_line_hears_sigterm():
    """A cue line that never ends (stdin /dev/zero) kept cmon break reading
    byte after byte, deaf to SIGTERM, its target stopped: now SIGTERM
    resumes the target and ends cmon."""
    import subprocess
    import time
    from test_break import CALLS3_OUT, _state
    from cmonlib import read_text, kill_quietly
    err_path = tmpfile("break-zero.err")
    out_path = tmpfile("break-zero.out")
    with open("/dev/zero", "rb") as zero, open(err_path, "wb") as err, \
            open(out_path, "wb") as out:
        p = subprocess.Popen([CMON, "break", "--func", "tick", "--", target("watch"), "calls",
                              "3"], stdin=zero, stdout=out, stderr=err)
    pid = None
    try:
        end = time.monotonic() + 60
        while "cmon: stop 1: process " not in read_text(err_path):
            check(p.poll() is None and time.monotonic() < end, read_text(err_path))
            time.sleep(0.02)
        pid = int(read_text(err_path).split("cmon: stop 1: process ")[1].split()[0])
        eq(_state(pid), {"T"}, "stopped")
        p.send_signal(signal.SIGTERM)
        code = p.wait(30)
        # cmon says it was interrupted (128+15) when the program runs on
        # after it; a program that ended first gives its own status.
        untraced = "cmon: Terminated: process %d goes on untraced\n" % pid
        eq(code, 143 if read_text(err_path).endswith(untraced) else 0,
           "cmon's status after SIGTERM (%s)" % read_text(err_path)[-300:])
        # The program, resumed, has its later stops resumed at once too.
        end = time.monotonic() + 30
        while read_text(out_path) != CALLS3_OUT and time.monotonic() < end:
            time.sleep(0.02)
        eq(read_text(out_path), CALLS3_OUT, "the program's output")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if pid:
            kill_quietly(pid)


def _umask0():
    os.umask(0)


def _mode(path):
    return os.lstat(path).st_mode


def test_stream_never_takes_a_listening_socket():
    """-o unix:PATH where another program listens: refused, and that
    program's socket stays (before, cmon unlinked it, bound its own and
    deleted the path at exit)."""
    import socket
    from cmonlib import tmpdir
    path = os.path.join(tmpdir(), "theirs.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind(path)
        srv.listen(1)
        code, out, err = run([CMON, "trace", "--func", "add", "-o", "unix:" + path, "--",
                              target("calls"), "loop", "3"])
        eq((code, err), (1, "cmon: cannot serve on %s: Address already in use\n" % path),
           "-o unix: on a live socket")
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(path)  # still theirs
        c.close()
        eq(srv.accept()[0].recv(1), b"", "their listener got the connection")
    finally:
        srv.close()
    # Left by an earlier run (nobody listens): replaced, and removed at the end.
    code, out, err = run([CMON, "trace", "--func", "add", "-o", "unix:" + path, "--",
                          target("calls"), "loop", "3"])
    eq(code, 0, "a stale socket is replaced (%s)" % err)
    check(not os.path.exists(path), "cmon's own socket removed at exit")


def test_stream_socket_private_and_only_its_own_removed():
    """Under umask 000 the live stream was connectable by every user; and a
    socket another program put at PATH during the run was deleted at exit."""
    import socket
    import subprocess
    import time
    from cmonlib import tmpdir, read_text
    path = os.path.join(tmpdir(), "mine.sock")
    err_path = tmpfile("private-stream.err")
    with open(err_path, "wb") as err:
        p = subprocess.Popen([CMON, "trace", "--func", "add", "-o", "unix:" + path, "--",
                              target("calls"), "--wait", "loop", "3"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=err, preexec_fn=_umask0)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        end = time.monotonic() + 120
        while not (os.path.exists(path) and "cmon: attached" in read_text(err_path)):
            check(p.poll() is None and time.monotonic() < end, read_text(err_path))
            time.sleep(0.02)
        eq(oct(_mode(path)), oct(0o140600), "the socket's mode under umask 000")
        # Another program takes the path over while cmon runs.
        os.unlink(path)
        srv.bind(path)
        srv.listen(1)
        p.communicate(b"go\n", timeout=120)
        eq(p.returncode, 0, "cmon exit status (%s)" % read_text(err_path))
        check(os.path.exists(path), "the other program's socket is left where it was")
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(path)
        c.close()
    finally:
        srv.close()
        if p.poll() is None:
            p.kill()
            p.wait()


def test_output_files_private_whatever_the_umask():
    """trace -o, -o with %p, stats -o and report -o made files every user
    could read under umask 000 (0644 under 022): they are 0600 now; a file
    that exists keeps its mode (that is how a user shares one)."""
    calls = target("calls")
    d = tmpfile("modes")
    os.mkdir(d)
    one = os.path.join(d, "t.csv")
    tmpl = os.path.join(d, "t-%p.json")
    code, out, err = run([CMON, "trace", "-q", "-F", "csv", "-o", one, "--func", "add", "--", calls,
                          "loop", "3"], preexec_fn=_umask0)
    eq(code, 0, "trace (%s)" % err)
    code, out, err = run([CMON, "trace", "-q", "-F", "json", "-o", tmpl, "--func", "add", "--",
                          calls, "loop", "3"], preexec_fn=_umask0)
    eq(code, 0, "trace %%p (%s)" % err)
    store = os.path.join(d, "run")
    code, out, err = run([CMON, "capture", "-q", "-o", store, "--func", "add", "--", calls,
                          "loop", "3"], preexec_fn=_umask0)
    eq(code, 0, "capture (%s)" % err)
    stats = os.path.join(d, "s.json")
    code, out, err = run([CMON, "stats", "-F", "json", "-o", stats, store, store],
                         preexec_fn=_umask0)
    eq(code, 0, "stats (%s)" % err)
    page = os.path.join(d, "r.html")
    code, out, err = run([CMON, "report", one, "-o", page], preexec_fn=_umask0)
    eq(code, 0, "report (%s)" % err)
    made = sorted(f for f in os.listdir(d) if f != "run")
    eq(len(made), 4, "files made: %r" % made)
    eq({f: oct(_mode(os.path.join(d, f)) & 0o777) for f in made},
       {f: oct(0o600) for f in made}, "modes of the files made under umask 000")
    # Shared on purpose: made first (or chmod'ed) with the mode wanted.
    for f in (one, page):
        os.chmod(f, 0o644)
    code, out, err = run([CMON, "trace", "-q", "-F", "csv", "-o", one, "--func", "add", "--", calls,
                          "loop", "3"], preexec_fn=_umask0)
    eq(code, 0, "trace again (%s)" % err)
    code, out, err = run([CMON, "report", one, "-o", page], preexec_fn=_umask0)
    eq(code, 0, "report again (%s)" % err)
    eq((oct(_mode(one) & 0o777), oct(_mode(page) & 0o777)), (oct(0o644), oct(0o644)),
       "a file that exists keeps its mode")


def test_binary_of_cmon_itself_never_records_its_own_process():
    """--binary of cmon's own file recorded cmon's own writes (278 calls in
    3 s, each write making more): the kernel side skips cmon's own
    process; another process running the same file is traced as any."""
    import subprocess
    import time
    from cmonlib import parse_csv, read_text
    out_path = tmpfile("self.csv")
    err_path = tmpfile("self.err")
    with open(err_path, "wb") as err:
        p = subprocess.Popen([CMON, "trace", "--binary", CMON, "--func", "libc.so.6:write",
                              "-F", "csv", "-o", out_path], stdout=subprocess.DEVNULL,
                             stderr=err)
    others = []
    try:
        end = time.monotonic() + 120
        while "cmon: attached" not in read_text(err_path):
            check(p.poll() is None and time.monotonic() < end, read_text(err_path))
            time.sleep(0.02)
        for _ in range(3):  # each writes its one error line
            q = subprocess.run([CMON, "ls", "/nonexistent-store"], capture_output=True)
            check(q.returncode != 0 and q.stderr, "cmon ls on nothing: %r" % q.stderr)
            others.append(q)
        time.sleep(0.5)  # cmon's own writes, had they been seen, would feed themselves
        p.send_signal(signal.SIGINT)
        p.wait(60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    rows = parse_csv(read_text(out_path))
    pids = [int(r["pid"]) for r in rows]
    eq(pids.count(p.pid), 0, "records of cmon's own process")
    check(len(set(pids)) == 3 and len(rows) >= 3,
          "the other cmon processes' writes are traced: %r" % pids)


def test_agent_never_counts_its_own_process():
    """A spec naming the agent's own binary, or libc's write with `process:
    cmon-agent`, made the agent count (and log) itself, each log record
    feeding the next: its own process is skipped in the kernel; another
    cmon-agent process is counted as any.  The agent runs from a copy
    named for this test: other users' cmon-agent processes on the machine
    (same name, other files) must not count here."""
    import shutil
    import subprocess
    name = "cmonag-%d" % (os.getpid() % 100000)  # a comm of at most 15 bytes
    agent_bin = tmpfile(name)
    shutil.copy2(os.path.join(os.path.dirname(CMON), "cmon-agent"), agent_bin)
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    spec = tmpfile("self-agent.yaml")
    log = tmpfile("self-agent.jsonl")
    write_spec(spec, [
        {"name": "parse", "target": agent_bin, "func": "agent_spec__parse",
         "instrument": "count"},
        {"name": "logw", "target": agent_bin, "func": "logsink__write", "instrument": "log",
         "log": {"path": log}},
        count_probe("writes", libc, func="write", process=name),
        count_probe("seed", target("calls"), instrument="log", log={"path": log + ".seed"}),
    ])
    a = Agent(spec, exe=agent_bin).wait_ready()
    try:
        a.wait_probes({"parse": "applied", "logw": "applied", "writes": "applied",
                       "seed": "applied"})
        a.signal(signal.SIGHUP)  # a reload: the agent parses its spec again
        a.wait_metric("cmon_agent_spec_reloads_total", 2, result="ok")
        eq(run_target(target("calls"), "loop", 20), "loop sum=210\n", "target output")
        a.wait_metric("cmon_agent_log_records_total", 20, probe="seed")
        m = a.metrics()
        eq((value(m, "cmon_parse_calls_total", probe="parse"),
            value(m, "cmon_agent_log_records_total", probe="logw"),
            value(m, "cmon_writes_calls_total", probe="writes")), (0, 0, 0),
           "the agent's own calls of its spec parser, its log writer and write()")
        # Another process of the same binary and name is counted.
        q = subprocess.run([agent_bin, "--check", "--spec", spec], capture_output=True,
                           text=True)
        eq(q.returncode, 0, "cmon-agent --check (%s)" % q.stderr)
        a.wait_metric("cmon_parse_calls_total", 1, probe="parse")
        check(value(a.metrics(), "cmon_writes_calls_total", probe="writes") >= 1,
              "the other cmon-agent's writes")
    finally:
        eq(a.stop(), 0, "agent exit status (%s)" % a.stderr[-500:])


def test_agent_log_that_cannot_rotate_stops_growing():
    """LOG.1/ and LOG.2/ made folders by another user in a sticky folder:
    every rotation failed and the file grew without bound (2.9 MB against
    4 KB) with two warnings a record.  It stops at its size, says so once,
    and every record it refuses is counted lost."""
    import time
    from cmonlib import tmpdir
    d = os.path.join(tmpdir(), "sticky")
    os.mkdir(d)
    os.chmod(d, 0o1777)
    log = os.path.join(d, "calls.jsonl")
    for n in (1, 2):
        os.mkdir("%s.%d" % (log, n))
        with open("%s.%d/theirs" % (log, n), "w") as f:
            f.write("x\n")
        os.chown("%s.%d/theirs" % (log, n), 65534, 65534)
        os.chown("%s.%d" % (log, n), 65534, 65534)
    spec = tmpfile("rotate-stuck.yaml")
    write_spec(spec, [{"name": "trail", "target": target("calls"), "func": "add",
                       "instrument": "log", "process": "calls",
                       "log": {"path": log, "max_bytes": 4096, "keep": 2}}])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"trail": "applied"})
        eq(run_target(target("calls"), "loop", 1000), "loop sum=500500\n", "target output")
        end = time.monotonic() + 30
        while True:
            m = a.metrics()
            written = value(m, "cmon_agent_log_records_total", probe="trail")
            lost = value(m, "cmon_agent_events_lost_total", probe="trail")
            if written + lost == 1000 or time.monotonic() > end:
                break
            time.sleep(0.05)
        eq(written + lost, 1000, "records written (%d) and lost (%d)" % (written, lost))
        check(0 < written < 100, "records written before the file was full: %d" % written)
    finally:
        eq(a.stop(), 0, "agent exit status")
    size = os.path.getsize(log)
    check(4096 <= size < 4096 + 1024, "the log stopped at about max_bytes: %d bytes" % size)
    eq(sorted(os.listdir(d)), ["calls.jsonl", "calls.jsonl.1", "calls.jsonl.2"], "files")
    said = [l for l in a.stderr.splitlines() if log in l]
    eq(len(said), 1, "one line about the log: %r" % said)
    eq(said[0], "cmon: warning: %s: cannot rename it to calls.jsonl.1: Is a directory: it "
       "cannot rotate and stops at its size (records are counted lost until it works again, tried "
       "every 10 s; said once)" % log, "what the agent said")


def test_agent_probe_refused_for_its_log_is_not_retried_forever():
    """A log probe refused for its path was applied again every 2 s ("target
    changed: trying again" while nothing changed: 3.5 % CPU for 8 probes).
    It is tried again when its target does change, not before."""
    import shutil
    import time
    from cmonlib import tmpdir
    d = os.path.join(tmpdir(), "open-to-all")
    os.mkdir(d)
    os.chmod(d, 0o777)  # writable by others, not sticky: refused
    app = tmpfile("app-refused")
    shutil.copy2(target("calls"), app)
    spec = tmpfile("refused-log.yaml")
    write_spec(spec, [{"name": "trail", "target": app, "func": "add", "instrument": "log",
                       "log": {"path": os.path.join(d, "x.jsonl")}}])
    a = Agent(spec).wait_ready()
    try:
        probes = a.wait_probes({"trail": "error"})
        eq(probes["trail"]["error"], "log %s/x.jsonl: folder %s is writable by other users "
           "and not sticky" % (d, d), "the refusal")
        time.sleep(5)  # two and a half target checks
        eq(value(a.metrics(), "cmon_agent_attach_errors_total"), 1, "attach errors after 5 s")
        eq(a.stderr.count("trying again"), 0, "retries while nothing changed")
        # The target replaced (a new file): tried again, once.
        shutil.copy2(target("calls"), app + ".new")
        os.rename(app + ".new", app)
        a.wait_metric("cmon_agent_attach_errors_total", 2, timeout=20)
        eq(a.stderr.count("changed: trying again"), 1, "one retry for the one change")
    finally:
        eq(a.stop(), 0, "agent exit status")


def test_profile_per_pid_burst_of_first_calls():
    """--per-pid, 4,000 functions each first called in a burst by two
    processes: 3,623 of 4,000 were lost (their per-CPU counters, ~10 KB on
    each CPU, could not be allocated without waiting).  Every call counted,
    one row per (function, process)."""
    import subprocess
    from cmonlib import Background, read_text
    from test_profile import final_rows, parse_profile_json
    path = tmpfile("burst.json")
    many = target("many")
    bg = Background(["profile", "--per-pid", "-F", "json", "-o", path, "--func", "many_*",
                     "--binary", many])
    pids = []
    try:
        bg.wait_attached()
        for _ in range(2):
            p = subprocess.Popen([many], stdout=subprocess.PIPE, text=True)
            out, _ = p.communicate(timeout=60)
            eq((p.returncode, out), (0, "calls=4000 sum=%d\n" % (2 * sum(range(4000)) + 4000)),
               "target output")
            pids.append(p.pid)
        bg.signal(signal.SIGTERM)
        eq(bg.wait(30), 0, "cmon exit status (%s)" % bg.stderr.strip())
    finally:
        bg.kill()
    rows = final_rows(parse_profile_json(read_text(path)))
    got = {}
    for r in rows:
        got.setdefault((r["calls"], r["returns"], r["noreturn"], r["lost"]), set()).add(r["pid"])
    eq(got, {(1, 1, 0, 0): set(pids)}, "calls, returns, noreturn, lost of each row, by pid")
    eq(len(rows), 8000, "rows: 4,000 functions x 2 processes")
    check("not recorded" not in bg.stderr, "no loss reported: %r" % bg.stderr[-500:])


def test_profile_per_pid_threads_counted_exactly():
    """Per-process counters are one for all CPUs: 4 threads calling work()
    at once on every CPU are counted exactly (atomic updates)."""
    from test_profile import final_rows, parse_profile_json, profile
    code, out, err, text = profile(["work"], launch=[target("calls"), "threads", "4", "20000"],
                                   extra=["--per-pid"])
    eq(code, 0, "cmon exit status (%s)" % err)
    rows = final_rows(parse_profile_json(text))
    eq([(r["func"], r["calls"], r["returns"], r["lost"]) for r in rows],
       [("work", 80000, 80000, 0)], "one row, every call")
    r = rows[0]
    check(0 <= r["min_ns"] <= r["p50_ns"] <= r["max_ns"], "min, p50, max: %r" % r)


def test_agent_per_pid_burst_of_first_calls():
    """An agent's per_pid probe on 100 functions first called in a burst:
    every series landed under pid="other" and events_lost contradicted
    counts that added up.  Each function's one call is under its process's
    pid, nothing lost."""
    import subprocess
    from agentlib import series
    many = target("many")
    spec = tmpfile("per-pid-burst.yaml")
    write_spec(spec, [count_probe("burst", many, func="many_00??", per_pid=True,
                                  max_functions=100)])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"burst": "applied"})
        p = subprocess.Popen([many], stdout=subprocess.PIPE, text=True)
        out, _ = p.communicate(timeout=60)
        eq(p.returncode, 0, "target status")
        a.wait_metric("cmon_agent_probe_hits_total", 100, probe="burst")
        m = a.metrics()
        got = {}
        for labels, v in series(m, "cmon_burst_calls_total").items():
            d = dict(labels)
            got.setdefault((d["pid"], v), set()).add(d["function"])
        eq({k: len(v) for k, v in got.items()}, {(str(p.pid), 1.0): 100},
           "series by (pid, count): how many functions")
        eq(value(m, "cmon_agent_events_lost_total", probe="burst"), 0, "events lost")
    finally:
        eq(a.stop(), 0, "agent exit status")


def test_hostile_store_schema_refused_and_values_bounded():
    """A store whose schema is not cmon's (a generated column computing
    printf('%.*c', 800000000, 'x'), a trigger, a view, an index on an
    expression) made show, export, report and stats take 2.3 GB and 16 s
    before failing: refused at open in one line.  A value larger than any
    cmon writes (20 MB) is refused where it is read; the rest still reads."""
    from test_store import _fill, _one_error, _sql
    gen = ("CREATE TABLE c2(id INTEGER PRIMARY KEY, func_id INTEGER NOT NULL,"
           " n INTEGER NOT NULL, pid INTEGER, tid INTEGER, ts_ns INTEGER, latency_ns INTEGER,"
           " status TEXT, ret TEXT, args TEXT GENERATED ALWAYS AS"
           " ('cheap') VIRTUAL, rss_entry INTEGER, rss_exit INTEGER,"
           " vms_entry INTEGER, vms_exit INTEGER, notes TEXT);"
           "INSERT INTO c2(id, func_id, n, pid, tid, ts_ns, latency_ns, status, ret, rss_entry,"
           " rss_exit, vms_entry, vms_exit, notes) SELECT id, func_id, n, pid, tid, ts_ns,"
           " latency_ns, status, ret, rss_entry, rss_exit, vms_entry, vms_exit, notes"
           " FROM calls;"
           "DROP TABLE calls; ALTER TABLE c2 RENAME TO calls;"
           "CREATE UNIQUE INDEX calls_func_n ON calls(func_id, n);"
           # (made cheap, then made hostile: SQLite computes it at the insert too)
           "PRAGMA writable_schema=ON;"
           "UPDATE sqlite_master SET sql = replace(sql, '''cheap''',"
           " 'printf(''%.*c'', 800000000, ''x'')') WHERE name = 'calls';")
    cases = [
        (gen, "not a cmon store (generated column calls.args: cmon's schema has none)"),
        ("CREATE TRIGGER t AFTER INSERT ON calls BEGIN SELECT 1; END;",
         "not a cmon store (a trigger named 't': cmon's schema has none)"),
        ("CREATE VIEW v AS SELECT printf('%.*c', 800000000, 'x');",
         "not a cmon store (a view named 'v': cmon's schema has none)"),
        ("CREATE INDEX ix ON calls(printf('%.*c', 100, 'x'));",
         "not a cmon store (index 'ix' on an expression: cmon's schema has none)"),
        ("CREATE INDEX ix ON calls(n) WHERE length(args) > 0;",
         "not a cmon store (index 'ix' on a WHERE clause: cmon's schema has none)"),
        ("CREATE TABLE extra(x);", "not a cmon store (a table named 'extra': cmon's schema"),
    ]
    for i, (sql, msg) in enumerate(cases):
        path = _fill("hostile")
        _sql(path, sql)
        _one_error(["show", path, "parse_request", "2"], 1, msg)
        if i:
            continue
        import sqlite3
        db = sqlite3.connect(os.path.join(path, "calls.db"))
        check("printf('%.*c', 800000000, 'x')" in db.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'calls'").fetchone()[0], "hostile schema")
        db.close()
        # Every reader opens a store the same way.
        for args in (["ls", path], ["export", path, "-F", "json", "-o", tmpfile("hostile.json")],
                     ["stats", path, path], ["report", path, "-o", tmpfile("hostile.html")]):
            _one_error(args, 1, msg)
    # One value far larger than cmon writes.
    path = _fill("huge")
    _sql(path, "UPDATE calls SET args = printf('%.*c', 20000000, 'x') WHERE n = 2 AND"
               " func_id = (SELECT id FROM functions WHERE name = 'parse_request')")
    _one_error(["show", path, "parse_request", "2"], 1, "string or blob too big")
    code, out, err = run([CMON, "show", path, "parse_request", "3"])
    eq(code, 0, "another call still reads (%s)" % err)


def _raw_http(addr, raw):
    import socket
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=10)
    try:
        s.sendall(raw)
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                return data
            data += b
    finally:
        s.close()


def test_agent_http_bad_length_answered_once_and_threads_hold_nothing():
    """A Content-Length that overflows (413) or does not parse (400) was
    answered with its header block twice (libmicrohttpd 0.9.75); the HTTP
    threads kept the whole inherited bounding set although the README says
    "no capability in any set"."""
    spec = tmpfile("http-small.yaml")
    write_spec(spec, [count_probe("x", target("calls"))])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"x": "applied"})
        big = _raw_http(a.addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
                                b"Content-Length: 99999999999999999999999\r\n\r\n")
        eq(big, b"HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n"
                b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 25\r\n\r\n"
                b"Content-Length too large\n", "the 413 answer, whole")
        bad = _raw_http(a.addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n")
        eq(bad, b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n"
                b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 31\r\n\r\n"
                b"Content-Length is not a number\n", "the 400 answer, whole")
        ok = _raw_http(a.addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        eq((ok.split(b"\r\n", 1)[0], ok.count(b"HTTP/1.1 ")), (b"HTTP/1.1 200 OK", 1),
           "a good request after them")
        caps = {}
        for tid in os.listdir("/proc/%d/task" % a.pid):
            with open("/proc/%d/task/%s/status" % (a.pid, tid)) as f:
                st = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
            if st["Name"] in ("cmon-http", "cmon-watchdog"):
                caps[st["Name"]] = (st["CapInh"], st["CapPrm"], st["CapEff"], st["CapBnd"],
                                    st["CapAmb"])
        eq(caps, {n: ("0" * 16,) * 5 for n in ("cmon-http", "cmon-watchdog")},
           "capability sets of the threads that read clients' bytes")
    finally:
        eq(a.stop(), 0, "agent exit status")


def test_big_endian_elf_named():
    """An ELF file marked big-endian was refused as "ELF file for machine
    15872" (x86-64's number read the other way round): named for what it
    is; a byte order that is neither is a corrupt header."""
    import struct
    from cmonlib import cmon
    src = open(target("argc"), "rb").read()
    be = bytearray(src)
    be[5] = 2                                   # EI_DATA = ELFDATA2MSB
    ppc = bytearray(be)
    ppc[18:20] = struct.pack(">H", 21)          # e_machine = EM_PPC64, big-endian
    bad = bytearray(src)
    bad[5] = 7
    for name, data, want in (("be", be, "big-endian ELF file: cmon traces x86-64 programs"),
                             ("ppc64be", ppc, "big-endian ppc64 ELF file: cmon traces x86-64 "
                                              "programs"),
                             ("baddata", bad, "corrupt ELF file (bad header)")):
        path = tmpfile(name)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o755)
        code, out, err = cmon(["trace", "--func", "twice", "--", path])
        eq((code, err), (1, "cmon: %s: %s\n" % (path, want)), "%s: exit status and error" % name)
