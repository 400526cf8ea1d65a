"""Records reach a pipe and a file as they are drained, while the program
runs (they sat in a 1 MiB buffer until cmon exited); a run that fails
before it starts leaves no output file behind, and an existing one as it
was (tests/targets/sleeper.c: `loop MS N` naps N times)."""
import json
import os
import select
import subprocess
import time

from cmonlib import CMON, check, cmon, eq, read_text, target, tmpfile

NAP_MS = 150
NAPS = 20  # 3 s: the first record must arrive long before the program ends


def _first_line_from_pipe(args):
    p = subprocess.Popen([CMON] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        start = time.monotonic()
        # The first nap ends NAP_MS after the start: its record within a
        # second (it took ~2 s, and the whole run for a file).
        ready, _, _ = select.select([p.stdout], [], [], 1.0)
        check(ready, "no record on the pipe within 1 s of the start")
        line = p.stdout.readline()
        waited = time.monotonic() - start
        check(p.poll() is None, "cmon had already exited: the record came at the end")
        return line.decode(), waited, p
    except BaseException:
        p.kill()
        p.wait()
        raise


def test_json_reaches_a_pipe_while_running():
    line, waited, p = _first_line_from_pipe(
        ["trace", "-F", "json", "--func", "nap", "--", target("sleeper"), "loop", str(NAP_MS),
         str(NAPS)])
    rec = json.loads(line)
    eq((rec["func"], rec["arg0"], rec["status"]), ("nap", NAP_MS * 1000, "ok"), "first record")
    rest, err = p.communicate(timeout=60)
    eq(p.returncode, 0, "exit status (%s)" % err.decode())
    # The program's own output shares the pipe (its stdout is cmon's).
    naps = [l for l in rest.decode().splitlines() if l.startswith("{")]
    eq(len(naps) + 1, NAPS, "every nap recorded")


def test_csv_reaches_a_file_while_running():
    path = tmpfile("live.csv")
    p = subprocess.Popen([CMON, "trace", "-F", "csv", "-o", path, "--func", "nap", "--",
                          target("sleeper"), "loop", str(NAP_MS), str(NAPS)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 1.0
        lines = []
        while time.monotonic() < deadline:
            lines = read_text(path).splitlines() if os.path.exists(path) else []
            if len(lines) >= 2:
                break
            time.sleep(0.05)
        check(len(lines) >= 2, "no record in the file within 1 s: %r" % lines)
        check(p.poll() is None, "cmon had already exited")
        eq(lines[1].split(",")[4:7], ["nap", "0", str(NAP_MS * 1000)],
           "first record (func, depth, arg0)")
    finally:
        _, err = p.communicate(timeout=60)
    eq(p.returncode, 0, "exit status (%s)" % err.decode())
    eq(len(read_text(path).splitlines()), NAPS + 1, "header and every nap")


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


def _summary(err):
    got = {}
    for line in err.splitlines():
        for key in ("events written", "events not written"):
            if line.startswith("cmon: %s: " % key):
                got[key] = int(line.split(": ")[2].split()[0])
        words = line.split()
        if len(words) == 5 and words[1] == "add":
            got["calls"] = int(words[2])
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
