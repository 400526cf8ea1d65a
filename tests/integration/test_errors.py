"""Bad input: one line on stderr, the documented exit status, nothing left
attached, and a launched program never runs untraced."""
import os
import shutil

from cmonlib import (HANG, CALLS_OUT, CMON, Skip, assert_no_leak, bpf_snapshot, check, cmon, eq,
                     run, stderr_lines, target, text_rows, tmpfile)


def _text_file():
    path = tmpfile("notelf")
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho not an ELF\n")
    os.chmod(path, 0o755)
    return path


# name: (args, exit status, text the one stderr line must contain)
CASES = {
    "no_such_pid": (lambda: ["trace", "-p", "4194000", "--func", "add"], 1,
                    "no such process"),
    "no_such_function": (lambda: ["trace", "--func", "no_such_function_xyz", "--",
                                  target(), "calls"], 1, "no_such_function_xyz"),
    # a slip of the keyboard: the nearest name offered
    "misspelled_function": (lambda: ["trace", "--func", "negat", "--", target(), "calls"], 1,
                            "did you mean negate?"),
    # the program's output would be rows of the table
    "csv_on_stdout_with_program": (lambda: ["trace", "-F", "csv", "--func", "add", "--",
                                           target(), "calls"], 2,
                                   "would hold the program's own output too: write the table "
                                   "with -o FILE"),
    "no_such_function_list": (lambda: ["list", "--binary", target(), "no_such_function_xyz"],
                              1, "no_such_function_xyz"),
    "binary_not_elf": (lambda: ["trace", "--binary", _text_file(), "--func", "add"], 1,
                       "not an ELF file"),
    "binary_stripped": (lambda: ["trace", "--binary", target("calls_stripped"), "--func",
                                 "add"], 1, "stripped"),
    "unwritable_output": (lambda: ["trace", "-o", "/proc/nope/x", "--func", "add", "--",
                                   target(), "calls"], 1, "/proc/nope/x"),
    "no_function_given": (lambda: ["trace", "--", target(), "calls"], 2, "--func"),
    "two_targets": (lambda: ["trace", "-p", str(os.getpid()), "--binary", target(),
                             "--func", "add"], 2, "target"),
    "unknown_option": (lambda: ["trace", "--bogus", "--func", "add", "--", target(),
                                "calls"], 2, "--bogus"),
    "format_xml": (lambda: ["trace", "-F", "xml", "--func", "add", "--", target(), "calls"],
                   2, "xml"),
    # one line: the capture's own reason, not also "no traced function..."
    "capture_named_like_a_parameter": (lambda: ["capture", "--func", "sum_buf", "--capture",
                                                "buf=buf:len", "-o", tmpfile("capx"), "--",
                                                target("typed_O2"), "loop", "2"], 1,
                                       "the name is a parameter of sum_buf"),
    "return_probe_foo": (lambda: ["trace", "--return-probe", "foo", "--func", "add", "--",
                                  target(), "calls"], 2, "foo"),
    "zero_max_events": (lambda: ["trace", "--max-events", "0", "--func", "add", "--",
                                 target(), "calls"], 2, "--max-events"),
    "no_such_program": (lambda: ["trace", "--func", "add", "--", "/nonexistent/prog"], 1,
                        "/nonexistent/prog"),
    "unknown_command": (lambda: ["bogus"], 2, "bogus"),
    # What the user typed is quoted escaped: still one line, no raw escape
    # sequence reaching the terminal.
    "expression_with_control_chars": (lambda: ["trace", "--if", "arg0 =\n= 1\x1b[31m",
                                               "--func", "add", "--", target(), "calls"],
                                      2, "arg0 =\\n= 1\\x1b[31m"),
    "function_with_newline": (lambda: ["trace", "--func", "no_such\nfunction", "--",
                                       target(), "calls"], 1, "no_such\\nfunction"),
}


def _make(name, args_fn, status, needle):
    def test():
        before = bpf_snapshot()
        args = args_fn()
        code, out, err = cmon(args, timeout=HANG)
        lines = stderr_lines(err)
        eq(len(lines), 1, "stderr lines of cmon %s: %r" % (" ".join(args), lines))
        check(needle.lower() in lines[0].lower(), "%r not in %r" % (needle, lines[0]))
        check(lines[0].startswith("cmon: "), "message starts with 'cmon: ': %r" % lines[0])
        eq(code, status, "exit status of cmon %s" % " ".join(args))
        # Nothing was run: a launched program must not have printed a thing.
        eq(out, "", "stdout")
        assert_no_leak(before)
    test.__name__ = "test_bad_" + name
    return test


for _name, (_args, _status, _needle) in CASES.items():
    globals()["test_bad_" + _name] = _make(_name, _args, _status, _needle)


def test_bad_not_root():
    # setpriv drops to nobody with no capabilities.
    setpriv = shutil.which("setpriv")
    if not setpriv:
        raise Skip("setpriv not installed")
    before = bpf_snapshot()
    cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", CMON, "trace",
           "--func", "add", "--", target(), "calls"]
    code, out, err = run(cmd, timeout=HANG, cwd="/")
    if code in (126, 127) and "cmon:" not in err:
        raise Skip("nobody cannot run %s: %s" % (CMON, err.strip()))
    lines = stderr_lines(err)
    eq(len(lines), 1, "stderr lines: %r" % lines)
    check("permission denied" in lines[0].lower(), "'permission denied' in %r" % lines[0])
    eq(code, 1, "exit status")
    eq(out, "", "stdout (the program must not run)")
    assert_no_leak(before)


def test_bad_ambiguous_name():
    # _dl_catch_error is defined by both libc and ld.so.
    for obj in ("libc.so.6", "ld-linux-x86-64.so.2"):
        code, _, _ = cmon(["list", "%s:_dl_catch_error" % obj, "--", target()])
        if code != 0:
            raise Skip("%s has no _dl_catch_error here" % obj)
    before = bpf_snapshot()
    code, out, err = cmon(["trace", "--func", "_dl_catch_error", "--", target(), "calls"])
    lines = stderr_lines(err)
    eq(len(lines), 1, "stderr lines: %r" % lines)
    for obj in ("libc.so.6", "ld-linux-x86-64.so.2"):
        check(obj in lines[0], "%s named in %r" % (obj, lines[0]))
    eq(code, 1, "exit status")
    eq(out, "", "stdout (the program must not run)")
    assert_no_leak(before)
    # A glob may match in several objects; a qualified name picks one.
    code, out, err = cmon(["list", "_dl_catch_e*", "--", target()])
    eq(code, 0, "list of a glob across objects (%s)" % err.strip())
    mods = sorted(l.split()[1] for l in out.splitlines()[1:] if l.startswith("_dl_catch_e"))
    eq(mods, ["ld-linux-x86-64.so.2"] * 2 + ["libc.so.6"] * 2, "modules of the glob")
    code, out, err = cmon(["list", "libc.so.6:_dl_catch_error", "--", target()])
    eq([l.split()[:2] for l in out.splitlines()[1:] if l.startswith("_dl")],
       [["_dl_catch_error", "libc.so.6"]], "qualified name")


def test_write_error():
    code, out, err = cmon(["trace", "-F", "csv", "-o", "/dev/full", "--func", "add", "--",
                           target(), "calls"])
    eq(out, CALLS_OUT, "program output (the program itself is unaffected)")
    check("No space left on device" in err, "write error reported: %r" % err)
    check("Operation not permitted" not in err, "misleading error: %r" % err)
    eq(code, 1, "exit status")


def test_thread_id_is_not_a_process():
    """-p with a thread's id (not its process's): the kernel attaches probes
    to processes, and cmon said the process 'exited while cmon was
    attaching'.  Now one line naming the process, nothing attached."""
    import threading
    import time
    tid, stop = [], threading.Event()

    def sleeper():
        tid.append(threading.get_native_id())
        stop.wait(30)
    t = threading.Thread(target=sleeper)
    t.start()
    try:
        while not tid:
            time.sleep(0.01)
        before = bpf_snapshot()
        code, out, err = cmon(["trace", "-p", str(tid[0]), "--func", "add"])
        eq((code, stderr_lines(err)), (1, ["cmon: %d is a thread of process %d: give the "
                                          "process (-p %d)" % (tid[0], os.getpid(),
                                                               os.getpid())]),
           "exit status and the one line")
        assert_no_leak(before)
    finally:
        stop.set()
        t.join()


def test_did_you_mean():
    """A name a slip from a function's is offered (two letters swapped, one
    left out); a name far from every function, or a short one, gets no
    guess."""
    for func, said in [("color_nmae", "; did you mean color_name?"),
                       ("sum_bfu", "; did you mean sum_buf?"),
                       ("nosuchthing", ""), ("ad", "")]:
        code, out, err = cmon(["trace", "--binary", target("typed_O2"), "--func", func])
        eq((code, out, stderr_lines(err)),
           (1, "", ["cmon: no function matches '%s' in %s (searched 1 object)%s"
                    % (func, target("typed_O2"), said)]), func)


def test_ifunc_names_its_implementations():
    """An IFUNC's symbol is its resolver: the one error line names the
    implementations to trace (it was a warning, then "no function
    matches"), and they trace."""
    code, out, err = cmon(["trace", "--func", "twice", "--", target("ifunc")])
    lines = stderr_lines(err)
    eq((code, out, len(lines)), (1, "", 1), "exit status, stdout, one line: %r" % lines)
    check(lines[0].startswith("cmon: 'twice' in %s is an IFUNC: its symbol is the resolver, "
                              "not the function; trace its implementations: " % target("ifunc"))
          and lines[0].endswith(" (or '__twice_*')"), lines[0])
    eq(sorted(lines[0].split(": ")[-1].split(" (or")[0].split(", ")),
       ["__twice_plain", "__twice_shift"], "the implementations")
    code, out, err = cmon(["trace", "-q", "--func", "__twice_*", "--", target("ifunc")])
    eq((code, out.splitlines()[0]), (0, "twice=42"), "exit status and the program's line")
    eq([r["func"] for r in text_rows("\n".join(out.splitlines()[1:]))], ["__twice_shift"],
       "the one it picked")
