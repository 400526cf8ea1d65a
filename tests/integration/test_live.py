"""Records reach a pipe and a file as they are drained, while the program
runs (they sat in a 1 MiB buffer until cmon exited); a run that fails
before it starts leaves no output file behind, and an existing one as it
was (tests/targets/sleeper.c: `hold MS` naps, waits for a line on stdin,
naps again)."""
import json
import os
import select
import subprocess
import time

from cmonlib import CMON, HANG, check, cmon, eq, read_text, target, tmpfile

NAP_MS = 10


def _hold(args, stdout):
    """cmon ARGS launching `sleeper hold NAP_MS`: the program naps, then
    waits for a line on stdin (cmon's, which it inherits) before its second
    nap; a record seen before that line was written while it ran."""
    return subprocess.Popen([CMON] + args + ["--", target("sleeper"), "hold", str(NAP_MS)],
                            stdin=subprocess.PIPE, stdout=stdout, stderr=subprocess.PIPE)


def _release(p):
    p.stdin.write(b"\n")
    p.stdin.flush()
    out, err = p.communicate(timeout=HANG)
    eq(p.returncode, 0, "exit status (%s)" % err.decode())
    return out


def test_json_reaches_a_pipe_while_running():
    """The first nap's record comes through the pipe while the program
    waits: it sat in a 1 MiB buffer until cmon exited."""
    p = _hold(["trace", "-F", "json", "--func", "nap"], subprocess.PIPE)
    try:
        # Held, the program cannot end: without a record now, none comes
        # before the line (HANG only bounds the wait for a hang).
        ready, _, _ = select.select([p.stdout], [], [], HANG)
        check(ready, "no record while the program waited")
        line = p.stdout.readline()
        check(p.poll() is None, "cmon had exited: the record came at the end")
        rec = json.loads(line)
        eq((rec["func"], rec["arg0"], rec["status"]), ("nap", NAP_MS * 1000, "ok"),
           "first record")
        rest = _release(p)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # The program's own output shares the pipe (its stdout is cmon's).
    eq([l for l in rest.decode().splitlines() if not l.startswith("{")], ["hold done"],
       "the program's output")
    eq(len([l for l in rest.decode().splitlines() if l.startswith("{")]), 1, "the second nap")


def test_csv_reaches_a_file_while_running():
    path = tmpfile("live.csv")
    p = _hold(["trace", "-F", "csv", "-o", path, "--func", "nap"], subprocess.DEVNULL)
    try:
        lines = []
        end = time.monotonic() + HANG  # a hang guard: the record comes or cmon ends
        while time.monotonic() < end and p.poll() is None:
            lines = read_text(path).splitlines() if os.path.exists(path) else []
            if len(lines) >= 2:
                break
            time.sleep(0.05)
        check(p.poll() is None, "cmon had exited: the record came at the end")
        first = dict(zip(lines[0].split(","), lines[1].split(",")))
        eq((first["func"], first["depth"], first["args.usec"]), ("nap", "0", str(NAP_MS * 1000)),
           "first record (func, depth, its parameter)")
        _release(p)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    eq(len(read_text(path).splitlines()), 3, "header and both naps")


def test_failed_run_leaves_no_file():
    path = tmpfile("never.csv")
    code, _, err = cmon(["trace", "-F", "csv", "-o", path, "--func", "no_such_function", "--",
                         target("sleeper"), "count", "1"])
    eq(code, 1, "exit status (%s)" % err)
    check(not os.path.exists(path), "a failed run left %s behind" % path)
    # A file that was there stays as it was: it is emptied only when the
    # trace starts.
    with open(path, "w") as f:
        f.write("keep\n")
    code, _, err = cmon(["profile", "-o", path, "--func", "no_such_function", "--",
                         target("sleeper"), "count", "1"])
    eq(code, 1, "profile exit status (%s)" % err)
    eq(read_text(path), "keep\n", "an existing file after a failed run")


def _summary(err, funcs=("add",)):
    """The summary's events written / not written, and the calls of FUNCS."""
    got = {}
    for line in err.splitlines():
        for key in ("events written", "events not written"):
            if line.startswith("cmon: %s: " % key):
                got[key] = int(line.split(": ")[2].split()[0])
        words = line.split()
        if len(words) == 5 and words[1] in funcs:
            got["calls"] = got.get("calls", 0) + int(words[2])
    return got


def test_full_disk_counts_what_was_written():
    """A 64 KiB filesystem fills up mid-trace: the summary's 'written' is the
    number of whole records in the file (it counted records handed to a
    buffer that never reached the disk), the rest are 'not written', and
    the exit status is 1."""
    import tempfile
    mnt = tempfile.mkdtemp(dir=os.path.dirname(tmpfile("x")))
    subprocess.check_call(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt])
    try:
        path = os.path.join(mnt, "out.csv")
        code, _, err = cmon(["trace", "-F", "csv", "-o", path, "--func", "add", "--",
                             target(), "loop", "5000"])
        eq(code, 1, "exit status (%s)" % err)
        check("No space left on device" in err, err)
        with open(path, "rb") as f:
            data = f.read()
        whole = data.count(b"\r\n") - 1  # the header
        s = _summary(err)
        check(whole > 100, "records in the file: %d" % whole)
        eq(s["events written"], whole, "written = whole records in the file")
        eq(s["events written"] + s["events not written"], s["calls"],
           "every call written or counted as not written: %r" % s)
    finally:
        subprocess.call(["umount", mnt])
    code, _, err = cmon(["trace", "-F", "csv", "-o", "/dev/full", "--func", "add", "--",
                         target(), "loop", "1000"])
    eq(code, 1, "/dev/full: exit status")
    s = _summary(err)
    eq(s["events written"], 0, "/dev/full: nothing written: %r" % s)
    eq(s["events not written"], s["calls"], "/dev/full: every call not written")


def test_full_disk_process_counts_add_up():
    """--follow's records per process after the output failed: they stopped
    counting (a record drained after the failure was refused before it was
    counted), so the processes held fewer records than were produced.  They
    count every record, said to be written or not."""
    import re
    import tempfile
    for out in ("/dev/full", None):
        mnt = None
        if out is None:
            mnt = tempfile.mkdtemp(dir=os.path.dirname(tmpfile("x")))
            subprocess.check_call(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt])
            out = os.path.join(mnt, "out.csv")
        try:
            code, _, err = cmon(["trace", "--follow", "-F", "csv", "-o", out, "--func", "add",
                                 "--", target(), "loop", "5000"])
        finally:
            if mnt:
                subprocess.call(["umount", mnt])
        eq(code, 1, "%s: exit status (%s)" % (out, err))
        s = _summary(err)
        procs = re.findall(r"^cmon:   process \d+ \(calls\): (\d+) records( \(written or not\))?$",
                           err, re.M)
        eq(len(procs), 1, "%s: one process line: %r" % (out, err))
        eq(int(procs[0][0]), s["calls"], "%s: the process's records are every call: %r"
           % (out, err))
        eq(s["events written"] + s["events not written"], s["calls"],
           "%s: every call written or counted as not written: %r" % (out, s))
        check(procs[0][1], "%s: said to be written or not: %r" % (out, err))


def test_full_disk_store_counts_what_was_committed():
    """A capture store on a filesystem that fills up: 'written' is the calls
    the store holds (it counted calls in a batch not committed yet, and a
    store that filled before its first commit held no functions at all),
    the rest are 'not written', the error names the store and the cause,
    and the exit status is 1."""
    import sqlite3
    import tempfile
    mnt = tempfile.mkdtemp(dir=os.path.dirname(tmpfile("x")))
    subprocess.check_call(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", mnt])
    try:
        store = os.path.join(mnt, "run")
        code, _, err = cmon(["capture", "-o", store, "--func", "sum_buf", "--func", "sum_ints",
                             "--capture", "data=buf:len", "--", target("typed_O2"), "loop",
                             "4000"])
        eq(code, 1, "exit status (%s)" % err)
        check("capture store %s: No space left on device" % store in err, err)
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(store, "calls.db"), uri=True)
        held = db.execute("SELECT count(*) FROM calls").fetchone()[0]
        funcs = sorted(r[0] for r in db.execute("SELECT name FROM functions"))
        db.close()
        got = _summary(err, ("sum_buf", "sum_ints"))
        check(held > 100, "calls in the store: %d" % held)
        eq(got["events written"], held, "written = the calls the store holds")
        eq(got["events written"] + got["events not written"], got["calls"],
           "every call written or counted as not written: %r" % got)
        eq(funcs, ["sum_buf", "sum_ints"], "the store names its functions")
    finally:
        subprocess.call(["umount", mnt])


def _waiting(n, env):
    """`calls --wait loop N`: blocked until a line on stdin, then N add()s."""
    from cmonlib import target as tg
    p = subprocess.Popen([tg(), "--wait", "loop", str(n)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, **env))
    line = p.stdout.readline().decode()
    check(line.startswith("ready "), "target did not print ready: %r" % line)
    return p


def _run_both(args, a, b):
    """cmon ARGS -p A -p B in the background, attached before both run,
    finished after: the Background, its exit status checked."""
    from cmonlib import Background
    bg = Background(args + ["-p", str(a.pid), "-p", str(b.pid)])
    try:
        bg.wait_attached()
        for p in (a, b):
            p.stdin.write(b"\n")
            p.stdin.flush()
            p.communicate(timeout=HANG)
        eq(bg.wait(HANG), 0, "exit status (%s)" % bg.stderr)
    finally:
        bg.kill()
        for p in (a, b):
            if p.poll() is None:
                p.kill()
    return bg


def test_one_file_per_process():
    """-o 'out.%p.r%r.csv': one file per process, named by its pid and its
    rank from the environment (PMI_RANK, RANK...), each with exactly that
    process's records; '%%' is a '%'; an unknown field is a usage error."""
    from cmonlib import parse_csv
    a = _waiting(3, {"PMI_RANK": "7"})
    b = _waiting(5, {"RANK": "2", "OMPI_COMM_WORLD_RANK": "4"})
    tmpl = os.path.join(os.path.dirname(tmpfile("x")), "out.%p.r%r.100%%.csv")
    bg = _run_both(["trace", "-F", "csv", "-o", tmpl, "--func", "add"], a, b)
    check("events written: 8 (2 files, one per process)" in bg.stderr, bg.stderr)
    # OMPI_COMM_WORLD_RANK is believed before RANK.
    for p, n, rank in ((a, 3, "7"), (b, 5, "4")):
        path = tmpl.replace("%p", str(p.pid)).replace("%r", rank).replace("%%", "%")
        rows = parse_csv(read_text(path))
        eq([(r["pid"], r["func"], int(r["typed"]["args.a"])) for r in rows],
           [(p.pid, "add", i) for i in range(n)], "records in %s" % path)
    code, _, err = cmon(["trace", "-o", "out.%q", "--func", "add", "-p", "1"])
    eq(code, 2, "an unknown field: usage error (%s)" % err)
    check("'%q' at 5 is not a field" in err, err)


def test_one_store_per_process():
    """cmon capture -o 'run.%p.r%r': one store per process, each with that
    process's calls only."""
    a = _waiting(3, {"SLURM_PROCID": "5"})
    b = _waiting(4, {})
    tmpl = os.path.join(os.path.dirname(tmpfile("x")), "run.%p.r%r")
    bg = _run_both(["capture", "-o", tmpl, "--func", "add"], a, b)
    for p, n, rank in ((a, 3, "5"), (b, 4, "norank")):
        store = tmpl.replace("%p", str(p.pid)).replace("%r", rank)
        check("cmon: capturing to %s\n" % store in bg.stderr, bg.stderr)
        code, out, err = cmon(["export", store, "-F", "json", "-o", store + "-json"])
        eq(code, 0, "export of %s (%s)" % (store, err))
        rows = [json.loads(l) for l in read_text(os.path.join(store + "-json", "add.jsonl"))
                .splitlines()]
        eq([(r["pid"], r["args"]["a"]) for r in rows], [(p.pid, i) for i in range(n)],
           "calls in %s" % store)


def test_store_on_a_nearly_full_disk_says_why():
    """A store created where only a few KiB are left: SQLite fails to
    extend its -shm file, an I/O error whose cause is ENOSPC; cmon said
    'Input/output error'.  One line, the cause, exit 1, nothing traced."""
    import tempfile
    mnt = tempfile.mkdtemp(dir=os.path.dirname(tmpfile("x")))
    subprocess.check_call(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", mnt])
    try:
        for kib in (268, 284):
            with open(os.path.join(mnt, "fill"), "wb") as f:
                f.write(b"\0" * (kib * 1024))
            code, out, err = cmon(["capture", "-o", os.path.join(mnt, "r%d" % kib), "--func",
                                   "add", "--", target(), "calls"])
            eq((code, out), (1, ""), "exit status, nothing run (%s)" % err)
            eq(len(err.splitlines()), 1, "one line: %r" % err)
            check("No space left on device" in err, "%d KiB used: %r" % (kib, err))
            os.unlink(os.path.join(mnt, "fill"))
    finally:
        subprocess.call(["umount", mnt])


def test_store_full_at_its_last_commit_says_why():
    """A run short enough that all its calls are in the batch committed at
    the end, on a disk with room for the store but not for them: the error
    gave '(closing it)' for SQLite's cause (the writer was freed before
    the line was written)."""
    import tempfile
    mnt = tempfile.mkdtemp(dir=os.path.dirname(tmpfile("x")))
    subprocess.check_call(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt])
    try:
        with open(os.path.join(mnt, "fill"), "wb") as f:
            f.write(b"\0" * ((1024 - 128) * 1024))
        store = os.path.join(mnt, "run")
        code, _, err = cmon(["capture", "-o", store, "--func", "add", "--", target(), "loop",
                             "5000"])
        eq(code, 1, "exit status (%s)" % err)
        check("capture store %s: No space left on device (database or disk is full)" % store
              in err, err)
        s = _summary(err)
        eq(s["events written"] + s["events not written"], s["calls"],
           "every call written or counted as not written: %r" % s)
    finally:
        subprocess.call(["umount", mnt])
