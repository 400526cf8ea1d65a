"""The capture store's reading commands: `cmon ls`, `cmon show`, `cmon export`,
on a store written by $OUT/tests/store_fill (tests/unit/store_fill.c: the
values below are the ones it writes)."""
import csv
import io
import json
import os
import re
import stat
import subprocess

from cmonlib import COLUMNS, HANG, OUT, Skip, check, cmon, eq, run, stderr_lines, tmpfile

STORE_FILL = os.path.join(OUT, "tests", "store_fill")
PYTHON = "/usr/bin/python3"


def _fill(name="run"):
    check(os.access(STORE_FILL, os.X_OK), "%s not built (make unit)" % STORE_FILL)
    code, out, err = run([STORE_FILL, tmpfile(name)])
    eq(code, 0, "store_fill exit status (%s)" % err.strip())
    return out.strip()


def _one_error(args, status, needle, timeout=HANG):
    code, out, err = cmon(args, timeout=timeout)
    lines = stderr_lines(err)
    eq(len(lines), 1, "stderr lines of cmon %s: %r" % (" ".join(args), lines))
    check(lines[0].startswith("cmon: "), "message starts with 'cmon: ': %r" % lines[0])
    check(needle in lines[0], "%r not in %r" % (needle, lines[0]))
    eq(code, status, "exit status of cmon %s" % " ".join(args))


def test_store_never_overwritten():
    first = _fill("run")
    second = _fill("run")
    eq(first, tmpfile("run"), "first store folder")
    eq(second, tmpfile("run-1"), "second store folder")
    eq(stat.S_IMODE(os.stat(first).st_mode), 0o700, "store folder mode")
    eq(stat.S_IMODE(os.stat(os.path.join(first, "calls.db")).st_mode), 0o600, "calls.db mode")


def test_store_ls():
    path = _fill()
    code, out, err = cmon(["ls", path])
    eq(code, 0, "exit status (%s)" % err)
    eq(err, "", "stderr")
    lines = out.splitlines()
    for want in ["command     cmon capture -p 100 --func parse_* -o run",
                 "target      /usr/bin/app",
                 "build-id    0123456789abcdef0123456789abcdef01234567",
                 "host        testhost",
                 "format      1 (cmon 0.1.0)",
                 "duration    5.000 s",
                 "            events_lost = 0",
                 "5 functions, 8 calls",
                 "2 processes"]:
        check(want in lines, "%r not in cmon ls output:\n%s" % (want, out))
    rows = {
        "parse_request": r"parse_request\s+app\s+3\s+int parse_request\(const char \*buf, "
                         r"size_t len, int flags\)$",
        "sum_array": r"sum_array\s+libm2\.so\s+2\s+int sum_array\(const int32_t \*values, int n\)$",
        "resize": r"ns::Widget::resize\(int, int\)\s+app\s+1\s+void ns::Widget::resize\("
                  r"ns::Widget \*this, int w, int h\)$",
        "raw_fn": r"raw_fn\s+app\s+1\s+raw_fn\(u64 arg0, u64 arg1\)\s+\[untyped: raw registers\]$",
        "pid 100": r"100\s+app\s+6\s+2023-11-1[45] ",
        "pid 200": r"200\s+worker\s+2\s+",
    }
    for what, rx in rows.items():
        check(any(re.match(rx, l) for l in lines), "no line for %s in:\n%s" % (what, out))


def test_store_show():
    path = _fill()
    code, out, err = cmon(["show", path, "parse_request", "2"])
    eq(code, 0, "exit status (%s)" % err)
    lines = out.splitlines()
    eq(lines[0], "parse_request  call 2 of 3  (app)", "first line")
    for want in ["pid        200 (worker)",
                 "tid        201",
                 "latency    2500 ns",
                 "status     ok",
                 "arguments  3",
                 '  buf (const char *) = "a,b \\"q\\"\\nline2"',
                 "  len (size_t) = 18446744073709551615",
                 "  flags (int) = 2147483647",
                 "ret        (int) -22",
                 "blobs      1",
                 "  buf  |u1 [13]  13 bytes",
                 "    hex  61 2c 62 20 22 71 22 0a 6c 69 6e 65 32",
                 '    text a,b "q".line2']:
        check(want in lines, "%r not in cmon show output:\n%s" % (want, out))
    check(any(l.startswith("time       2023-11-1") and l.endswith("(1700000000000002000)")
              for l in lines), "time line in:\n%s" % out)
    # A call that never returned, with a truncated buffer.
    code, out, err = cmon(["show", path, "parse_request", "3"])
    eq(code, 0, "exit status (%s)" % err)
    for want in ["status     noreturn", "latency    -", "ret        (int) -",
                 "rss        12288 (12.0 KiB) at entry",
                 "  buf  |u1 [8]  8 bytes (truncated)"]:
        check(want in out.splitlines(), "%r not in:\n%s" % (want, out))
    # C++ names, MODULE:NAME.
    code, out, err = cmon(["show", path, "ns::Widget::resize(int, int)", "1"])
    eq(code, 0, "exit status (%s)" % err)
    check("  matrix  <f8 [2, 3] = [[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]]" in out.splitlines(), out)
    code, out, err = cmon(["show", path, "libm2.so:sum_array", "2"])
    eq(code, 0, "exit status (%s)" % err)
    check("ret        (int) 24" in out.splitlines(), out)


def test_store_errors():
    path = _fill()
    _one_error(["show", path, "no_such_fn", "1"], 1, "no_such_fn")
    _one_error(["show", path, "parse_request", "4"], 1, "no call 4")
    _one_error(["show", path, "parse_request", "0"], 1, "no call 0")
    _one_error(["show", path, "parse_request", "x"], 2, "'x'")
    _one_error(["show", path], 2, "usage")
    _one_error(["ls", tmpfile("missing")], 1, "No such file")
    _one_error(["export", path], 2, "--per-call")
    _one_error(["export", path, "-F", "xml"], 2, "xml")
    rnd = tmpfile("random.db")
    with open(rnd, "wb") as f:
        f.write(os.urandom(8192))
    _one_error(["ls", rnd], 1, "not a cmon store")
    _one_error(["show", rnd, "f", "1"], 1, "not a cmon store")
    empty = tmpfile("empty.db")
    open(empty, "wb").close()
    _one_error(["ls", empty], 1, "empty file")
    with open(os.path.join(path, "calls.db"), "rb") as f:
        data = f.read()
    cut = tmpfile("cut.db")
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    _one_error(["ls", cut], 1, "truncated")
    _one_error(["export", cut, "--per-call", tmpfile("cut-out")], 1, "truncated")
    check(not os.path.exists(tmpfile("cut-out")), "export of a bad store made its folder")


def _sql(path, sql):
    """Run SQL on the store at PATH (damage it, as a disk or a hand could)."""
    import sqlite3
    db = sqlite3.connect(os.path.join(path, "calls.db"))
    try:
        db.executescript(sql)
        db.commit()
    finally:
        db.close()


def test_store_blob_shape_must_fit_its_data():
    """A blob whose shape disagrees with its bytes (parse_request's call 3
    holds 8 bytes of |u1) is a corrupted store: show and export refuse it in
    one line; it was shown as 100 elements over 8 bytes, and libcmon gave a
    shape a client would index out of bounds."""
    for shape in ("[100]", "[4294967296,4294967296]", "[2]"):
        path = _fill("shape")
        _sql(path, "UPDATE blobs SET shape = '%s' WHERE call_id = (SELECT c.id FROM calls c"
                   " JOIN functions f ON f.id = c.func_id WHERE f.name = 'parse_request'"
                   " AND c.n = 3)" % shape)
        _one_error(["show", path, "parse_request", "3"], 1, "store is corrupted")
        _one_error(["show", path, "parse_request", "3"], 1, "buffer 'buf' has shape '%s'" % shape)
        _one_error(["export", path, "-F", "json", "-o", tmpfile("shape-json")], 1,
                   "store is corrupted")
        _one_error(["export", path, "--per-call", tmpfile("shape-calls")], 1,
                   "store is corrupted")
        code, out, err = cmon(["show", path, "parse_request", "2"])
        eq(code, 0, "the other calls still read (%s)" % err)


def test_store_numbering_gap_or_repeat_refused():
    """A store whose call numbers have a gap (a call moved to another
    function) or a repeat (the unique index dropped) is corrupted: every
    reader refuses it in one line.  export, stats and report read the calls
    through libcmon's iterator, which skipped or merged them and exited 0
    while show refused."""
    other = _fill("numbering-ok")
    damage = {"gap": ("UPDATE calls SET func_id = 99 WHERE id = 1", "call 1 is missing"),
              "repeat": ("DROP INDEX calls_func_n; UPDATE calls SET n = 1 WHERE id = 2",
                         "call 1 comes again")}
    for name, (sql, needle) in damage.items():
        path = _fill("numbering-" + name)
        _sql(path, sql)
        for args in (["export", path, "-F", "csv", "-o", tmpfile(name + "-csv")],
                     ["export", path, "-F", "json", "-o", tmpfile(name + "-json")],
                     ["export", path, "--per-call", tmpfile(name + "-calls")],
                     ["export", path, "-F", "chrome", "-o", tmpfile(name + ".json")],
                     ["export", path, "-F", "tree", "-o", tmpfile(name + ".txt")],
                     ["stats", path, other],
                     ["report", path, "-o", tmpfile(name + ".html")]):
            _one_error(args, 1, "store is corrupted")
            _one_error(args, 1, needle)


def test_store_fifo_refused_not_waited_on():
    """A FIFO as calls.db or as one of SQLite's side files (-journal, -wal,
    -shm): ls, show, rm and libcmon's open waited forever on it (SQLite
    opens a hot journal, a WAL); now each refuses in one line."""
    for side in ("calls.db-journal", "calls.db-wal", "calls.db-shm", "calls.db"):
        path = _fill("fifo")
        if side == "calls.db":
            os.unlink(os.path.join(path, side))
        os.mkfifo(os.path.join(path, side))
        for args in (["ls", path], ["show", path, "parse_request", "1"],
                     ["export", path, "-F", "csv", "-o", tmpfile("fifo-out")]):
            _one_error(args, 1, "%s is a FIFO, not a regular file" % side, timeout=HANG)
        _one_error(["rm", path], 1, "%s is a FIFO" % side, timeout=HANG)
        check(os.path.exists(os.path.join(path, side)), "rm removed nothing")
        code, out, err = cmon(["ls", os.path.dirname(path)], timeout=HANG)
        eq(code, 0, "ls of the folder of stores (%s)" % err)


def test_store_ls_folder_names_damaged_stores():
    """`cmon ls DIR` names a store folder it cannot read (a truncated or an
    empty calls.db) as damaged, with the reason; they were counted among
    "other entries, not stores", where a user would not look for them."""
    d = tmpfile("damaged-runs")
    os.mkdir(d)
    good, cut, empty = (_fill(os.path.join(d, n)) for n in ("good", "cut", "empty"))
    with open(os.path.join(cut, "calls.db"), "rb") as f:
        data = f.read()
    with open(os.path.join(cut, "calls.db"), "wb") as f:
        f.write(data[:len(data) // 2])
    open(os.path.join(empty, "calls.db"), "wb").close()
    os.mkdir(os.path.join(d, "notes"))
    code, out, err = cmon(["ls", d])
    eq((code, err), (0, ""), "exit status and stderr")
    lines = out.splitlines()
    eq(len(lines), 5, "header, three folders, summary:\n%s" % out)
    check(re.match(r"^cut\s+damaged: store is truncated \(\d+ bytes; its header says \d+\)$",
                   lines[1]), lines[1])
    check(re.match(r"^empty\s+damaged: not a cmon store \(empty file\)$", lines[2]), lines[2])
    check(lines[3].startswith("good ") and "cmon capture" in lines[3], lines[3])
    eq(lines[4], "1 store, 2 damaged (1 other entry, not stores)", "summary")


def _walk_modes(top):
    for d, dirs, files in os.walk(top):
        eq(stat.S_IMODE(os.lstat(d).st_mode), 0o700, "mode of folder %s" % d)
        for fn in files:
            p = os.path.join(d, fn)
            eq(stat.S_IMODE(os.lstat(p).st_mode), 0o600, "mode of file %s" % p)


def test_store_export_per_call():
    path = _fill()
    out_dir = tmpfile("out")
    code, out, err = cmon(["export", path, "--per-call", out_dir])
    eq(code, 0, "exit status (%s)" % err)
    eq(err, "cmon: exported 8 calls of 5 functions to %s\n" % out_dir, "stderr")
    _walk_modes(out_dir)
    with open(os.path.join(out_dir, "index.json")) as f:
        index = json.load(f)
    eq(index["format"], "per-call", "index format")
    dirs = {e["name"]: e["path"] for e in index["functions"]}
    eq(dirs, {"parse_request": "parse_request", "sum_array": "sum_array",
              "ns::Widget::resize(int, int)": "ns__Widget__resize_int__int_",
              "kill_proc": "kill_proc", "raw_fn": "raw_fn"}, "index.json folders")
    eq(sorted(os.listdir(os.path.join(out_dir, "parse_request"))), ["1", "2", "3"], "calls")
    call2 = os.path.join(out_dir, "parse_request", "2")
    eq(sorted(os.listdir(call2)), ["arg_buf.bin", "arg_buf.npy", "args.json"], "call 2 files")
    with open(os.path.join(call2, "args.json")) as f:
        a = json.load(f)
    eq(a["args"], {"buf": 'a,b "q"\nline2', "len": 18446744073709551615,
                   "flags": 2147483647}, "args")
    eq([(p["name"], p["type"]) for p in a["params"]],
       [("buf", "const char *"), ("len", "size_t"), ("flags", "int")], "params")
    for k, v in {"func": "parse_request", "module": "app", "n": 2, "pid": 200, "tid": 201,
                 "comm": "worker", "ts_ns": 1700000000000002000, "latency_ns": 2500,
                 "status": "ok", "ret": -22, "ret_type": "int", "rss_entry": 8192,
                 "vms_exit": 200000}.items():
        eq(a[k], v, "args.json %s" % k)
    eq(a["blobs"], [{"name": "buf", "dtype": "|u1", "shape": [13], "truncated": False,
                     "bytes": 13, "bin": "arg_buf.bin", "npy": "arg_buf.npy",
                     "npy_shape": [13]}], "blobs")
    with open(os.path.join(call2, "arg_buf.bin"), "rb") as f:
        eq(f.read(), b'a,b "q"\nline2', "arg_buf.bin")
    with open(os.path.join(out_dir, "parse_request", "3", "args.json")) as f:
        a = json.load(f)
    eq((a["status"], a["ret"], a["latency_ns"], a["rss_exit"]), ("noreturn", None, None, None),
       "call 3")
    eq(a["blobs"][0]["truncated"], True, "call 3 truncated")
    eq(a["blobs"][0]["npy_shape"], [8], "call 3 npy shape (the bytes there)")
    eq(sorted(os.listdir(os.path.join(out_dir, "raw_fn", "1"))), ["args.json"], "raw_fn files")
    # Never overwritten: a second export goes next to the first.
    code, out, err = cmon(["export", path, "--per-call", out_dir])
    eq(code, 0, "exit status (%s)" % err)
    check(err.endswith(" to %s-1\n" % out_dir), "second export: %r" % err)


def test_store_export_symlink():
    path = _fill()
    victim = tmpfile("victim")
    os.mkdir(victim)
    link = tmpfile("link")
    os.symlink(victim, link)
    code, out, err = cmon(["export", path, "--per-call", link])
    eq(code, 0, "exit status (%s)" % err)
    check(err.endswith(" to %s-1\n" % link), "export went to: %r" % err)
    eq(os.listdir(victim), [], "the symlink's target")
    check(os.path.islink(link), "the link is still a link")


def test_store_export_npy():
    code, _, err = run([PYTHON, "-c", "import numpy"])
    if code != 0:
        raise Skip("python3-numpy not installed (apt-get install python3-numpy): %s"
                   % err.strip().splitlines()[-1:])
    path = _fill()
    out_dir = tmpfile("npy")
    code, out, err = cmon(["export", path, "--per-call", out_dir])
    eq(code, 0, "exit status (%s)" % err)
    script = r"""
import json, sys, numpy as np
top = sys.argv[1]
res = {}
for key, rel in [("v1", "sum_array/1/arg_values.npy"), ("v2", "sum_array/2/arg_values.npy"),
                 ("m", "ns__Widget__resize_int__int_/1/arg_matrix.npy"),
                 ("b1", "parse_request/1/arg_buf.npy"), ("b3", "parse_request/3/arg_buf.npy")]:
    a = np.load(top + "/" + rel, allow_pickle=False)
    res[key] = [str(a.dtype), list(a.shape), a.tolist()]
print(json.dumps(res))
"""
    code, out, err = run([PYTHON, "-c", script, out_dir])
    eq(code, 0, "numpy.load (%s)" % err.strip())
    res = json.loads(out)
    eq(res["v1"], ["int32", [5], [1, -2, 3, 40000, -5]], "sum_array call 1 values")
    eq(res["v2"], ["int32", [3], [7, 8, 9]], "sum_array call 2 values")
    eq(res["m"], ["float64", [2, 3], [[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]]], "matrix")
    eq(res["b1"], ["uint8", [6], list(b"GET /a")], "buf call 1")
    eq(res["b3"], ["uint8", [8], list(b"ABCDEFGH")], "truncated buf call 3")


def test_store_export_csv_json():
    path = _fill()
    out_dir = tmpfile("tables")
    code, out, err = cmon(["export", path, "-F", "csv", "-o", out_dir])
    eq(code, 0, "exit status (%s)" % err)
    _walk_modes(out_dir)
    eq(sorted(os.listdir(out_dir)), ["index.json", "kill_proc.csv",
                                     "ns__Widget__resize_int__int_.csv", "parse_request.csv",
                                     "raw_fn.csv", "sum_array.csv"], "files")
    with open(os.path.join(out_dir, "parse_request.csv"), newline="") as f:
        text = f.read()
    check(text.endswith("\r\n"), "CSV ends with CRLF")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    # trace -F csv's columns (-o 'x.%f.csv'), and the call's number in the store
    eq(rows[0], ["schema", "ts_ns", "pid", "tid", "comm", "func", "depth", "ret", "latency_ns",
                 "latency_lt_ns", "rss_entry", "rss_exit", "vms_entry", "vms_exit", "status",
                 "module", "args.buf", "args.len", "args.flags", "truncated", "faults",
                 "unavailable", "call"], "header")
    eq(rows[1], ["1", "1700000000000001000", "100", "101", "app", "parse_request", "", "0", "1500",
                 "", "4096", "8192", "100000", "100000", "ok", "app", "GET /a", "6", "-1",
                 "", "", "", "1"], "row 1")
    eq(rows[2][16:19], ['a,b "q"\nline2', "18446744073709551615", "2147483647"], "row 2 args")
    eq(rows[3][7:9] + rows[3][14:15], ["", "", "noreturn"], "row 3 ret, latency, status")
    eq(len(rows), 4, "rows")
    with open(os.path.join(out_dir, "kill_proc.csv"), newline="") as f:
        rows = list(csv.reader(f))
    eq(rows[0][16:18], ["args.pid", "args.sig"], "a parameter named pid gets its own column")
    eq(rows[1][2], "100", "pid column")
    eq(rows[1][16:18], ["4242", "9"], "kill_proc args")
    # JSON Lines, default folder RUN-json.
    code, out, err = cmon(["export", path, "-F", "json"])
    eq(code, 0, "exit status (%s)" % err)
    jdir = path + "-json"
    check(err.endswith(" to %s\n" % jdir), "default folder: %r" % err)
    with open(os.path.join(jdir, "parse_request.jsonl")) as f:
        recs = [json.loads(l) for l in f]
    eq(len(recs), 3, "records")
    eq(recs[1]["args"]["len"], 18446744073709551615, "64-bit value")
    eq(recs[1]["args"]["buf"], 'a,b "q"\nline2', "string value")
    eq((recs[2]["latency_ns"], recs[2]["status"]), (None, "noreturn"), "noreturn latency")
    # trace -F json's keys (the registers null: a store keeps typed values),
    # and the call's number in the store
    eq(list(recs[0].keys()), COLUMNS + ["args", "retval", "call"], "keys")
    eq(list(recs[0]["args"]), ["buf", "len", "flags"], "parameters")
    eq(("truncated" in recs[0], "faults" in recs[0]), (False, False), "no notes")


def test_store_export_on_a_full_disk_says_why():
    """Exporting to a full disk: the tables' writes fail in stdio's buffer
    and again at the close, which said 'Input/output error' for the cause."""
    import tempfile
    path = _fill()
    mnt = tempfile.mkdtemp(dir=os.path.dirname(tmpfile("x")))
    subprocess.check_call(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt])
    try:
        fd = os.open(os.path.join(mnt, "fill"), os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        os.close(fd)
        for fmt in ("csv", "json"):
            _one_error(["export", path, "-F", fmt, "-o", os.path.join(mnt, fmt)], 1,
                       "No space left on device")
    finally:
        subprocess.call(["umount", mnt])
