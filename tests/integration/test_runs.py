"""Stores as a set: `cmon ls DIR` lists the stores of a folder, `cmon rm`
removes stores and refuses anything else (tests/unit/store_fill.c writes
the stores: command "cmon capture -p 100 --func parse_* -o run", 8 calls)."""
import os
import re

from cmonlib import OUT, check, cmon, eq, run, tmpfile

STORE_FILL = os.path.join(OUT, "tests", "store_fill")


def _fill(path):
    code, out, err = run([STORE_FILL, path])
    eq(code, 0, "store_fill (%s)" % err)
    return out.strip()


def test_ls_folder_of_stores():
    d = tmpfile("runs")
    os.mkdir(d)
    a, b = _fill(os.path.join(d, "run")), _fill(os.path.join(d, "run"))
    eq((os.path.basename(a), os.path.basename(b)), ("run", "run-1"), "store names")
    os.mkdir(os.path.join(d, "notes"))
    with open(os.path.join(d, "readme.txt"), "w") as f:
        f.write("x")
    code, out, err = cmon(["ls", d])
    eq((code, err), (0, ""), "exit status and stderr")
    lines = out.splitlines()
    check(re.match(r"^run\s+start\s+calls\s+size\s+command$", lines[0]), lines[0])
    eq(len(lines), 4, "header, two stores, summary:\n%s" % out)
    size = os.path.getsize(os.path.join(a, "calls.db"))
    for line, name in zip(lines[1:3], ["run", "run-1"]):
        m = re.match(r"^(\S+)\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} [+-]\d{4})\s+(\d+)\s+"
                     r"(.+?)\s\s(.*)$", line)
        check(m, "store line: %r" % line)
        eq(m.group(1), name, "run name")
        eq(m.group(3), "8", "calls")
        check(m.group(4).strip().endswith("KiB"), "size: %r" % m.group(4))
        eq(m.group(5), "cmon capture -p 100 --func parse_* -o run", "command")
    check(size > 0, "calls.db size")
    eq(lines[3], "2 stores (2 other entries, not stores)", "summary")


def _one_error(args, needle):
    code, out, err = cmon(args)
    eq(code, 1, "exit status of %r" % args)
    lines = err.strip().splitlines()
    eq(len(lines), 1, "one error line: %r" % err)
    check(needle in lines[0], "%r not in %r" % (needle, lines[0]))


def test_rm_removes_stores_and_refuses_the_rest():
    d = tmpfile("rm")
    os.mkdir(d)
    a, b = _fill(os.path.join(d, "run")), _fill(os.path.join(d, "run"))
    other = os.path.join(d, "other")
    os.mkdir(other)
    plain = os.path.join(d, "file.txt")
    with open(plain, "w") as f:
        f.write("x")
    link = os.path.join(d, "link")
    os.symlink(a, link)
    fake = os.path.join(d, "fake")
    os.mkdir(fake)
    with open(os.path.join(fake, "calls.db"), "w") as f:
        f.write("not sqlite at all, but long enough to look like a file" * 4)
    extra = _fill(os.path.join(d, "extra"))
    with open(os.path.join(extra, "mine.txt"), "w") as f:
        f.write("keep me")
    _one_error(["rm", a, other], "refusing %s: no calls.db" % other)
    _one_error(["rm", plain], "not a store folder")
    _one_error(["rm", link], "a symlink")
    _one_error(["rm", fake], "not a cmon store")
    _one_error(["rm", extra], "holds files that are not the store's")
    # rmdir(2) cannot remove "x/." or "x/..": the files went, the folder
    # stayed, and rm failed; a store named twice was removed, then failed.
    _one_error(["rm", a + "/."], "a path ending in . or ..")
    _one_error(["rm", os.path.join(a, "..") + "/"], "a path ending in . or ..")
    _one_error(["rm", a, b, a + "/"], "refusing %s/: named twice" % a)
    for f in ("calls.db",):
        check(os.path.exists(os.path.join(a, f)), "%s/%s removed by a refused rm" % (a, f))
    for p in (a, b, other, plain, link, fake, extra, os.path.join(extra, "mine.txt")):
        check(os.path.lexists(p), "%s was removed by a refused rm" % p)
    code, out, err = cmon(["rm", a, b])
    eq(code, 0, "rm exit status (%s)" % err)
    eq(err.splitlines(), ["cmon: removed %s" % a, "cmon: removed %s" % b], "stderr")
    check(not os.path.exists(a) and not os.path.exists(b), "stores removed")
    check(os.path.isdir(other) and os.path.lexists(link), "others kept")
    code, out, err = cmon(["rm"])
    eq(code, 2, "rm without arguments")
