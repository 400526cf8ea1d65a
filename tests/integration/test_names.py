"""Names and values a user reads: aliases by their public name, glibc's
transparent union as the pointer it is, a library dlopen()ed by a path of
the program's own named by its file name."""
import os
import re

from cmonlib import check, cmon, eq, parse_json_lines, target, tmpfile


def traced(funcs, args, cwd=None, extra=(), binary="names"):
    """`cmon trace -F json` of tests/targets/BINARY ARGS: (program output, records)."""
    path = tmpfile("names.json")
    if os.path.exists(path):
        os.unlink(path)
    cmd = ["trace", "-q", "-F", "json", "-o", path] + list(extra)
    for f in funcs:
        cmd += ["--func", f]
    code, out, err = cmon(cmd + ["--", target(binary)] + list(args), cwd=cwd)
    eq((code, err), (0, ""), "cmon %s" % " ".join(cmd))
    with open(path) as f:
        return out, parse_json_lines(f.read())


def test_alias_shows_public_name():
    """glibc's free is also cfree and __libc_free (one address): a glob
    names it free, as a user searches for it; every alias selects it."""
    for pattern, shown in (("libc:*free", "free"), ("libc:__libc_free", "__libc_free"),
                           ("libc:cfree", "cfree"), ("libc:free", "free")):
        out, recs = traced([pattern], ["alias"])
        freed = [int(p, 16) for p in re.findall(r"free (0x[0-9a-f]+)", out)]
        eq(len(freed), 3, "the program's frees")
        mine = [(r["func"], r["arg0"]) for r in recs if r["arg0"] in freed]
        eq(mine, [(shown, p) for p in freed], "the three frees, traced by %s" % pattern)
        eq(sorted({r["func"] for r in recs} & {"free", "cfree", "__libc_free"}), [shown],
           "free's names in the records of %s" % pattern)


def test_transparent_union_shows_the_pointer():
    """GCC writes glibc's __SOCKADDR_ARG (accept4's address) as a union of
    8 bytes with no members: shown as the pointer it is passed as, not {}."""
    out, recs = traced(["take_addr"], ["union"])
    m = re.match(r"take_addr (0x[0-9a-f]+) 21\n", out)
    check(m, "program output %r" % out)
    eq([(r["args"], r["retval"]) for r in recs],
       [({"fd": 3, "addr": m.group(1), "len": recs[0]["args"]["len"]}, 21)],
       "take_addr's arguments")


def test_dlopen_library_named_by_file_name():
    """dlopen("./libnames_dl.so"): --func 'libnames_dl.so:*' (or the short
    'libnames_dl:') finds the file the program will open; it used to fail
    with "No such file"."""
    for pattern in ("libnames_dl.so:*", "libnames_dl:dl_twice", "./libnames_dl.so:*"):
        out, recs = traced([pattern], ["dlopen"], cwd=os.path.dirname(target("names")))
        eq(out, "dl_twice 8 42\n", "program output")
        eq(sorted((r["func"], r["args"]["x"], r["retval"]) for r in recs if r["func"] == "dl_twice"),
           [("dl_twice", 4, 8), ("dl_twice", 21, 42)],
           "dl_twice's calls, traced by %s" % pattern)


def test_cxx_names_in_tree():
    """-F tree writes a C++ call as name(values): the demangled name's own
    parameter list gives way to the values (it printed `catch_exc(int)(i=1)`
    and `answer()()`); the closing line's comment keeps the whole name."""
    code, out, err = cmon(["trace", "-q", "-F", "tree", "--func", "answer", "--func", "catch_exc",
                           "--func", "thrower", "--", target("names_cxx")])
    eq((code, err), (0, ""), "cmon trace -F tree")
    calls = [l.split("| ", 1)[1].strip() for l in out.splitlines() if "| " in l]
    eq(sorted(calls), ["answer() = 42;", "catch_exc(i=1) = -1;", "thrower(i=1); // noreturn"],
       "the tree's calls")


def test_crt_stubs_without_warnings():
    """`PROG:*` over a C++ program (returns found on return instructions):
    crt's sizeless stubs (_init, frame_dummy, ...) span to the next function,
    so they are traced like any other, with no warning about each."""
    out, recs = traced(["names_cxx:*"], [], binary="names_cxx")
    eq(out, "answer=42 caught=-1\n", "program output")
    funcs = {r["func"]: r["status"] for r in recs}
    for stub in ("_init", "register_tm_clones", "__do_global_dtors_aux", "deregister_tm_clones",
                 "_fini"):
        eq(funcs.get(stub), "ok", "%s traced to its return" % stub)
    eq([(r["func"], r["retval"]) for r in recs if r["func"] in ("answer()", "catch_exc(int)")],
       [("catch_exc(int)", -1), ("answer()", 42)], "the program's own calls")
