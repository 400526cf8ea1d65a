"""Children (issue 14): a launched program is traced whole, the processes
it forks included, each record with its own pid (--no-follow: the first
process only); -p PID --follow does the same for a running one.  cmon ends
when every followed process has exited.  tests/targets/forks.c: spawn()
forks, the child calls f(200..204), the parent f(100..102) after waiting
for it; a daemon (double fork + setsid) calls f(300..302) after its parent
exited; a child calls f(7) then execs /bin/true; a thread execs inside g(5)."""
import json
import os
import subprocess
import time

from cmonlib import (CMON, HANG, Background, WaitTarget, assert_no_leak, bpf_snapshot, check, cmon, eq,
                     parse_json_lines, read_text, run, target, tmpfile, trace, trace_bg)

FORK_OUT = "child sum 2020\nparent sum 606\n"


def _untraced(mode):
    # Reaped as soon as it exits (the daemon waits for that), its output
    # read to the end after (the daemon holds the pipe).
    p = subprocess.Popen([target("forks"), mode], stdout=subprocess.PIPE)
    try:
        eq(p.wait(HANG), 0, "untraced forks %s" % mode)
        return p.stdout.read().decode()
    finally:
        p.kill()
        p.stdout.close()


def _calls(rows, func="f"):
    return [(r["pid"], r["arg0"], r["ret"]) for r in rows if r["func"] == func]


def test_fork_parent_and_child():
    """Both processes' calls, each with its own pid, exact; spawn() was in
    progress at fork(): the parent's return is its one record (the child
    returns from a frame it inherited, not a call it made), whether returns
    are seen by uretprobes (the kernel copies pending ones to the child) or
    by probes on ret instructions."""
    eq(_untraced("fork"), FORK_OUT, "untraced output")
    for how in ("uretprobe", "insn"):
        _fork_parent_and_child(how)


def _fork_parent_and_child(how):
    before = bpf_snapshot()
    res = trace(["f", "spawn"], launch=[target("forks"), "fork"],
                extra=["--return-probe", how])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, FORK_OUT, "program output, byte-identical to untraced")
    spawns = [r for r in res.rows if r["func"] == "spawn"]
    eq(len(spawns), 1, "spawn records: %r" % spawns)
    parent, child = spawns[0]["pid"], spawns[0]["ret"]
    eq(spawns[0]["status"], "ok", "spawn returned")
    check(child > 0 and child != parent, "spawn returned the child's pid: %r" % spawns)
    eq(_calls(res.rows), [(child, 200 + i, 2 * (200 + i)) for i in range(5)] +
       [(parent, 100 + i, 2 * (100 + i)) for i in range(3)], "f per process, in order")
    eq({r["tid"] for r in res.rows if r["pid"] == child}, {child}, "the child's tid")
    eq(res.summary()["table"]["f"], (8, 8, 0), "f: calls, written, lost")
    check("cmon: children followed: 1\n" in res.stderr, res.stderr)
    check("cmon:   process %d (forks): 5 records\n" % child in res.stderr, res.stderr)
    check("cmon:   process %d (forks): 4 records\n" % parent in res.stderr, res.stderr)
    assert_no_leak(before)


def test_no_follow():
    res = trace(["f"], launch=[target("forks"), "fork"], extra=["--no-follow"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, FORK_OUT, "program output")
    eq([(r["arg0"]) for r in res.rows], [100, 101, 102], "the parent's calls only")
    check("children followed" not in res.stderr, res.stderr)


def test_daemon_traced_until_it_exits():
    """The launched program exits first; its grandchild (setsid) calls f
    once it has: cmon waits for it, and ends with the program's status."""
    out = _untraced("daemon")
    eq(out, "parent exits\ndaemon sum 1806\n", "untraced output")
    res = trace(["f"], launch=[target("forks"), "daemon"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, out, "program output")
    eq([(r["arg0"], r["ret"], r["status"]) for r in res.rows],
       [(300 + i, 600 + 2 * i, "ok") for i in range(3)], "the daemon's calls")
    check("cmon: children followed: 2\n" in res.stderr, res.stderr)
    check("forks exited; following the 1 process it left running" in res.stderr, res.stderr)
    eq(len({r["pid"] for r in res.rows}), 1, "one process")


def test_child_exec_not_misnamed():
    """The child's f(7) carries its pid and its name (forks), not those of
    /bin/true it execs; /bin/true is not traced (f is not in it)."""
    res = trace(["f"], launch=[target("forks"), "exec"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, "child status 0\n", "program output")
    rows = [(r["arg0"], r["comm"], r["status"]) for r in res.rows]
    eq(rows, [(7, "forks", "ok"), (8, "forks", "ok")], "f in child, then parent")
    check(res.rows[0]["pid"] != res.rows[1]["pid"], "two processes: %r" % res.rows)


def test_thread_exec_pending_call():
    """A second thread execs inside g: g never returns; its record has the
    thread's own tid and the old program's name, taken before the exec."""
    res = trace(["g"], launch=[target("forks"), "texec"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    check(res.stdout.startswith("thread "), res.stdout)
    tid = int(res.stdout.split()[1])
    eq([(r["func"], r["arg0"], r["tid"], r["comm"], r["status"]) for r in res.rows],
       [("g", 5, tid, "forks", "noreturn")], "g's record")
    check(res.rows[0]["pid"] != tid, "tid %d is not the process's pid" % tid)


def test_child_library_calls():
    """A library function (libc getppid): the child gets its own links
    (attached when cmon sees it; the child calls once cmon -v says they
    are in: an order, not a time they must be attached by)."""
    os.environ["FORKS_WAIT_LINE"] = "1"  # the child waits for a line (stdin is cmon's)
    bg = Background(["trace", "-v", "-F", "json", "-o", tmpfile("libc.csv"), "--func",
                     "libc.so.6:getppid", "--", target("forks"), "libc"],
                    stdout=subprocess.PIPE, stdin=subprocess.PIPE)
    try:
        end = time.monotonic() + HANG  # a hang guard
        while "its libraries' probes attached" not in bg.stderr and time.monotonic() < end:
            check(bg.p.poll() is None, "cmon ended: %s" % bg.stderr)
            time.sleep(0.05)
        out, _ = bg.p.communicate(b"\n", timeout=HANG)
    finally:
        bg.kill()
    eq(bg.p.returncode, 0, "exit status (%s)" % bg.stderr)
    eq(out.decode(), "child 3\nparent 2\n", "program output")
    rows = parse_json_lines(read_text(tmpfile("libc.csv")))
    pids = [r["pid"] for r in rows]
    check(len(set(pids)) == 2, "two processes: %r" % pids)
    child, parent = pids[0], pids[-1]
    eq(pids, [child] * 3 + [parent] * 2, "getppid per process")
    eq([r["ret"] for r in rows[:3]], [parent] * 3, "the child's getppid is the parent")


def test_fork_one_file_per_process():
    tmpl = os.path.join(os.path.dirname(tmpfile("x")), "forks.%p.csv")
    code, out, err = cmon(["trace", "-F", "json", "-o", tmpl, "--func", "f", "--",
                           target("forks"), "fork"])
    eq(code, 0, "exit status (%s)" % err)
    eq(out, FORK_OUT, "program output")
    check("events written: 8 (2 files, one per process)" in err, err)
    files = sorted(f for f in os.listdir(os.path.dirname(tmpl)) if f.startswith("forks."))
    eq(len(files), 2, "files: %r" % files)
    got = {}
    for name in files:
        rows = parse_json_lines(read_text(os.path.join(os.path.dirname(tmpl), name)))
        pid = int(name.split(".")[1])
        eq({r["pid"] for r in rows}, {pid}, "%s holds its own process's records" % name)
        got[len(rows)] = [r["arg0"] for r in rows]
    eq(got, {5: [200, 201, 202, 203, 204], 3: [100, 101, 102]}, "records per file")


def test_follow_running_process():
    """-p PID --follow: the child forked after attaching is traced; cmon
    ends by itself when both have exited.  Without --follow: the parent only."""
    for follow, want in ((True, 8), (False, 3)):
        t = WaitTarget(["fork"], binary="forks")
        bg = trace_bg(["f"], ["-p", str(t.pid)], extra=["--follow"] if follow else [])
        try:
            bg.wait_attached()
            t.release()
            code, out = t.finish()
            eq((code, out), (0, FORK_OUT), "target status and output")
            eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr)
            rows = parse_json_lines(read_text(bg.out_path))
            eq(len(rows), want, "records (follow=%s)" % follow)
            parent = [r["arg0"] for r in rows if r["pid"] == t.pid]
            eq(parent, [100, 101, 102], "the parent's calls")
            if follow:
                child = [r for r in rows if r["pid"] != t.pid]
                eq([r["arg0"] for r in child], [200 + i for i in range(5)], "the child's")
        finally:
            bg.kill()
            t.kill()


def test_profile_follows():
    path = tmpfile("prof.json")
    code, out, err = cmon(["profile", "-F", "json", "-o", path, "--per-pid", "--func", "f",
                           "--", target("forks"), "fork"])
    eq(code, 0, "exit status (%s)" % err)
    eq(out, FORK_OUT, "program output")
    rows = [json.loads(l) for l in read_text(path).splitlines()]
    fin = [r for r in rows if r["final"]]
    eq(sorted(r["calls"] for r in fin), [3, 5], "calls per process")
    eq(len({r["pid"] for r in fin}), 2, "two processes")
    check("cmon: children followed: 1\n" in err, err)


def test_follow_usage():
    code, _, err = cmon(["trace", "--func", "f", "--binary", target("forks"), "--follow"])
    eq(code, 2, "--follow with --binary: usage error (%s)" % err)
    check("--follow is for -p PID or -- CMD" in err, err)


def test_other_instance_not_recorded():
    """While following, the executable's links have no pid filter: another
    process running the same program traps too, is warned about, and none
    of its calls is recorded (the kernel-side followed set filters it)."""
    other = subprocess.Popen([target("sleeper"), "loop", "50", "200"], stdout=subprocess.PIPE)
    try:
        res = trace(["nap", "count_me"], launch=[target("sleeper"), "loop", "100", "5"])
        eq(res.code, 0, "exit status (%s)" % res.stderr)
        check("1 other process running %s traps on its probes too" % target("sleeper")
              in res.stderr, res.stderr)
        eq([(r["func"], r["arg0"]) for r in res.rows],
           [("nap", 100000)] * 5 + [("count_me", 0)], "the launched program's calls only")
        check(other.poll() is None, "the other instance ran throughout")
    finally:
        other.kill()
        other.communicate()


def test_idle_parent_names_its_children():
    """-p on a master whose workers (forked before cmon) make the calls: 0
    records, and cmon says so, naming them.  Its children are not "other
    processes" that trap for nothing: that warning is not given."""
    for follow in ([], ["--follow"]):
        t = WaitTarget(["master"], binary="forks")
        pid, w1, w2 = t.ready
        bg = trace_bg(["f"], ["-p", str(pid)], extra=follow)
        try:
            bg.wait_attached()
            t.release()
            code, out = t.finish()
            eq((code, sorted(out.splitlines())), (0, ["master done", "worker 0", "worker 1"]),
               "target status and output")
            eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr)
        finally:
            bg.kill()
            t.kill()
        eq(parse_json_lines(read_text(bg.out_path)), [], "records %s" % follow)
        warned = [l for l in bg.stderr.splitlines() if "warning" in l]
        eq(warned, ["cmon: warning: process %d (forks) made no traced call; 2 processes it "
                    "forked before cmon are not traced (--follow takes those forked from now "
                    "on): add -p %d -p %d" % (pid, w1, w2)], "warnings %s" % follow)


def test_other_instance_warned_only_with_a_probe_in_it():
    """-p --follow: a process running the same program traps on the probes
    in that program, and is warned about; with probes only in libc (linked
    per process) it traps on none: no warning (one used to be given)."""
    other = WaitTarget(["loop", "1", "1"], binary="sleeper")
    try:
        for func, warned in (("libc:nanosleep", False), ("nap", True)):
            t = WaitTarget(["loop", "1", "3"], binary="sleeper")
            bg = trace_bg([func], ["-p", str(t.pid), "--follow"])
            try:
                bg.wait_attached()
                t.release()
                eq(t.finish(HANG), (0, "loop n=3 count_me=1\n"), "target status and output")
                eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr)
            finally:
                bg.kill()
                t.kill()
            eq([r["func"] for r in parse_json_lines(read_text(bg.out_path))], [func.split(":")[-1]] * 3,
               "the traced process's calls")
            eq("1 other process running %s traps on its probes too" % target("sleeper")
               in bg.stderr, warned, "warned, with --func %s: %s" % (func, bg.stderr))
        check(other.alive(), "the other instance ran throughout")
    finally:
        other.kill()


def test_follow_running_daemon():
    """-p PID --follow on a program that daemonises: the process given
    exits first; cmon runs on until the daemon has exited too."""
    t = WaitTarget(["daemon"], binary="forks")
    bg = trace_bg(["f"], ["-p", str(t.pid), "--follow"])
    try:
        bg.wait_attached()
        t.release()
        code, out = t.finish()
        eq((code, out), (0, "parent exits\ndaemon sum 1806\n"), "target status and output")
        eq(bg.wait(HANG), 0, "cmon exit status (%s)" % bg.stderr)
        rows = parse_json_lines(read_text(bg.out_path))
        eq([r["arg0"] for r in rows], [300, 301, 302], "the daemon's calls")
        check(rows[0]["pid"] != t.pid, "the daemon's own pid")
        check("cmon: children followed: 2\n" in bg.stderr, bg.stderr)
    finally:
        bg.kill()
        t.kill()


def test_capture_store_per_child():
    """cmon capture -o 'run.%p': a store for the parent and one for the child."""
    tmpl = os.path.join(os.path.dirname(tmpfile("x")), "run.%p")
    code, out, err = cmon(["capture", "-o", tmpl, "--func", "f", "--", target("forks"), "fork"])
    eq(code, 0, "exit status (%s)" % err)
    eq(out, FORK_OUT, "program output")
    got = {}
    for line in err.splitlines():
        if line.startswith("cmon: capturing to "):
            store = line.split(" to ", 1)[1]
            code, _, e = cmon(["export", store, "-F", "json", "-o", store + "-json"])
            eq(code, 0, "export of %s (%s)" % (store, e))
            rows = [json.loads(l) for l in
                    read_text(os.path.join(store + "-json", "f.jsonl")).splitlines()]
            eq({r["pid"] for r in rows}, {int(store.rsplit(".", 1)[1])}, "pids in %s" % store)
            got[len(rows)] = [r["args"]["i"] for r in rows]
    eq(got, {5: [200, 201, 202, 203, 204], 3: [100, 101, 102]}, "calls per store")


def test_followed_map_walked_only_when_it_changes():
    """cmon asks after every poll whether the followed processes are still
    there.  Walking the BPF hash map of them costs a bucket a step over the
    whole table (8,192): at every poll that was a quarter of cmon's time
    with a program calling a traced function flat out.  The programs now
    count the map's changes and the walk happens only when the count moved:
    here the start and the exit, for 200 calls each woken alone (it was one
    walk a poll, 201)."""
    log = tmpfile("strace.txt")
    out = tmpfile("naps.csv")
    code, _, err = run(["strace", "-f", "-qq", "-e", "trace=bpf", "-o", log, CMON, "trace",
                        "--func", "nap", "-F", "json", "-o", out, "--",
                        target("sleeper"), "loop", "5", "200"])
    eq(code, 0, "exit status (%s)" % err)
    eq(len(parse_json_lines(read_text(out))), 200, "nap calls written")
    walks = read_text(log).count("BPF_MAP_GET_NEXT_KEY")
    check(walks <= 6, "map walk steps (a key found or the end), %d: expected a walk at the "
          "start and one at the exit, not one a poll" % walks)


def test_no_left_running_note_for_children_waited_for():
    """A shell that ran three children one after the other, each waited
    for, left nothing running.  Under a wide library glob (a child's links
    take long to attach) the count of followed processes was taken before
    the shell was reaped, and cmon said "sh exited; following the 2
    processes it left running" (the shell itself and a child it had
    already waited for)."""
    res = trace(["libc.so.6:*"], launch=["/bin/sh", "-c", "/bin/true; /bin/true; /bin/true"],
                extra=["--raw"], timeout=300)
    eq(res.code, 0, "exit status (%s)" % res.stderr[-400:])
    eq([l for l in res.stderr.splitlines() if "left running" in l], [],
       "notes of processes left running")
    eq(summary_forks(res.stderr), 3, "children followed")


def summary_forks(err):
    for line in err.splitlines():
        if line.startswith("cmon: children followed: "):
            return int(line.split(":")[2])
    return None


def test_focus_holds_in_a_child_forked_inside_it():
    """--focus forker: a child forked inside forker() is inside it too
    until it returns from it: its f(400..402) are recorded, its f(500)
    after the return is not, nor the parent's f(100..102) after forker.
    The child recorded nothing (its shadow stack started empty)."""
    res = trace(["f"], launch=[target("forks"), "focusfork"], extra=["--focus", "forker"])
    eq((res.code, res.stdout), (0, "child sum 2406\nparent sum 606\n"),
       "exit status and output (%s)" % res.stderr)
    child = {r["pid"] for r in res.rows}
    eq(len(child), 1, "one process's records: %r" % res.rows)
    eq([(r["arg0"], r["ret"], r["status"], r["depth"]) for r in res.rows],
       [(400 + i, 2 * (400 + i), "ok", 1) for i in range(3)],
       "the child's calls inside forker: (arg0, ret, status, depth)")
    eq(res.summary()["table"]["f"], (3, 3, 0), "f: calls, written, lost")


def summary_gone(err):
    for line in err.splitlines():
        if line.startswith("cmon: children gone before their library probes were attached: "):
            return int(line.split(":")[2].split()[0])
    return 0


def _ffs_children(rows):
    """{pid: [(arg0, ret)]} of the children's ffs calls."""
    got = {}
    for r in rows:
        if r["func"] == "ffs":
            got.setdefault(r["pid"], []).append((r["arg0"], r["ret"]))
    return got


def test_host_wide_probes_record_every_short_child():
    """--host-wide-probes: the library's links have no pid filter and
    exist before the program runs, the BPF side keeps the followed tree.
    8 children forked at once, child k calls ffs(1 << k) (= k + 1) and
    exits at once: all 8 calls recorded with their values (per-child links
    come too late for them), a warning says what every process pays, and
    no link of cmon's is left after it exits."""
    before = bpf_snapshot()
    res = trace(["libc.so.6:ffs"], launch=[target("forks"), "short", "8"],
                extra=["--host-wide-probes"])
    eq((res.code, res.stdout), (0, "short 8\n"), "exit status and output (%s)" % res.stderr)
    got = _ffs_children(res.rows)
    eq(sorted(v for calls in got.values() for v in calls), [(1 << k, k + 1) for k in range(8)],
       "ffs (arg0, ret) of the children")
    eq(sorted(len(calls) for calls in got.values()), [1] * 8, "one call in each of 8 processes")
    eq(summary_forks(res.stderr), 8, "children followed")
    eq(summary_gone(res.stderr), 0, "children gone before their probes")
    check("--host-wide-probes: 1 function in " in res.stderr and
          "probed for every process on this host" in res.stderr, res.stderr)
    assert_no_leak(before)


def test_short_children_counted_gone_without_host_wide():
    """Without --host-wide-probes a child's library links are its own,
    attached once cmon sees it (tens of ms to seconds under a wide glob):
    children that end first are counted, and the counts add up: children
    recorded + children gone before their probes == 8 followed (here,
    with ~60 ms to seconds a child's attach, usually none is recorded; the same
    run with --host-wide-probes records 8 of 8)."""
    res = trace(["libc.so.6:*"], launch=[target("forks"), "short", "8"], extra=["--raw"],
                timeout=300)
    eq((res.code, res.stdout), (0, "short 8\n"), "exit status and output (%s)" % res.stderr[-400:])
    got = _ffs_children(res.rows)
    for pid, calls in got.items():
        eq(len(calls), 1, "ffs calls of child %d" % pid)
        k = calls[0][1] - 1
        eq(calls[0], (1 << k, k + 1), "child %d's ffs (arg0, ret)" % pid)
    eq(summary_forks(res.stderr), 8, "children followed")
    gone = summary_gone(res.stderr)
    eq(len(got) + gone, 8, "children recorded (%d) + gone before their probes (%d)"
       % (len(got), gone))


def test_host_wide_probes_usage():
    code, _, err = cmon(["trace", "--func", "libc.so.6:ffs", "--host-wide-probes",
                         "--no-follow", "--", target("forks"), "short", "1"])
    eq(code, 2, "--host-wide-probes without following: usage error (%s)" % err)
    eq(err.strip().splitlines(), ["cmon: trace: --host-wide-probes is for following children "
                                  "(-- CMD, or -p PID --follow)"], "one error line")
