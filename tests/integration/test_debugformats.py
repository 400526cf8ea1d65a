"""Typed arguments, lines, locals and globals from the shapes production
debug info comes in (tests/targets/typed.c, lines.c, watch.c built in each
in tests/targets/targets.mk): the values must be those of the plain -g
build (test_typed.py, test_lines.py, test_watch.py)."""
import json
import os

from cmonlib import (HERE, Skip, assert_no_leak, bpf_snapshot, check, cmon, eq, funcs_args,
                     read_text, target, tmpfile, trace)


def typed_records(binary, funcs, args=("all",)):
    """`cmon trace -F json` of BINARY ARGS: {func: [record, ...]}."""
    path = tmpfile("fmt-%s.json" % binary)
    code, _, err = cmon(["trace", "-q", "-F", "json", "-o", path] + funcs_args(funcs) +
                        ["--", target(binary)] + list(args))
    eq(code, 0, "cmon trace %s: exit status (%s)" % (binary, err.strip()))
    eq(err, "", "%s: stderr" % binary)
    recs = {}
    for line in read_text(path).splitlines():
        r = json.loads(line)
        recs.setdefault(r["func"], []).append(r)
    return recs


def check_all_typed(binary):
    """`typed all` traced: every argument and return exactly as test_typed.py
    has them for the plain -O2 build."""
    import test_typed
    test_typed.SCALE_ARGS.setdefault(binary, test_typed.SCALE_ARGS["typed_O2"])
    text, _ = test_typed.trace_typed(binary, test_typed.ALL_FUNCS)
    test_typed.check_all(test_typed.json_records(text), binary)


def test_type_units():
    """-fdebug-types-section puts structs and enums in type units: the CU
    keeps a declaration whose DW_AT_signature names the definition.  The
    declaration was taken for the type: enums showed as numbers, structs
    by value as {}, struct pointers as bare addresses."""
    for binary in ("typed_types4", "typed_types5"):
        check_all_typed(binary)


def test_split_dwarf():
    """-gsplit-dwarf: the program's skeleton unit has ranges and lines only,
    the DIEs are in the .dwo; each unit is read as its split unit.  Typed
    arguments, --locals and a global's type were silently missing."""
    import test_lines
    import test_watch
    check_all_typed("typed_split")
    line = test_lines.line_of("marker: once per walk")
    res = trace([], launch=[target("lines_split"), "5"], fmt="json",
                extra=["--line", "lines.c:%d" % line, "--locals"])
    eq((res.code, res.stdout), (0, "total=30\n"), "lines_split: exit status (%s)" % res.stderr)
    eq([dict(r["args"]) for r in res.rows], [{"i": i, "sq": i * i} for i in range(5)],
       "lines_split: the locals at each run")
    code, out, err, rows = test_watch._json(["--watch", "counter"], binary="watch_split")
    eq((code, out), (0, "counter 50\n"), "watch_split: exit status (%s)" % err)
    eq([(r["old"], r["new"], r["func"], r["line"]) for r in rows if r.get("kind") == "watch"],
       test_watch._writes(), "watch_split: old, new (typed: long), writer and line")


def test_split_dwarf_without_its_dwo():
    """The .dwo gone: the values are raw, and one line says why (it was
    silent)."""
    binary = target("typed_split_nodwo")
    path = tmpfile("fmt-nodwo.json")
    code, out, err = cmon(["trace", "-q", "-F", "json", "-o", path, "--func", "paint",
                           "--", binary, "all"])
    eq(code, 0, "exit status (%s)" % err)
    # DW_AT_dwo_name as the build wrote it: relative to DW_AT_comp_dir
    # (the source tree) when $(OUT) is
    dwo = binary + "-typed.dwo"
    msg = ("cmon: warning: %s: split DWARF (-gsplit-dwarf) whose %s was not found: its "
           "functions untyped, its lines without locals\n")
    check(err in (msg % (binary, dwo),
                  msg % (binary, os.path.relpath(dwo, os.path.dirname(os.path.dirname(HERE))))),
          "the warning: %r" % err)
    eq([("args" in r, r["arg0"], r["arg1"]) for r in map(json.loads, read_text(path).splitlines())],
       [(False, 2, 6)], "paint(BLUE, 6) untyped")


def test_minidebuginfo_symbols():
    """A stripped program whose local function symbols are in .gnu_debugdata
    (MiniDebugInfo, xz): its functions were not found ("no function
    matches").  They are probed now, untyped (no DWARF)."""
    binary = target("typed_minidebug")
    path = tmpfile("fmt-mini.json")
    code, out, err = cmon(["trace", "-q", "-F", "json", "-o", path, "--func", "paint",
                           "--func", "widths", "--", binary, "all"])
    eq(code, 0, "exit status (%s)" % err)
    eq([(r["func"], "args" in r, r["arg0"], r["arg1"], r["ret"])
        for r in map(json.loads, read_text(path).splitlines())],
       [("widths", False, -128 & 0xffffffff, 255, 2147516541), ("paint", False, 2, 6, 26)],
       "widths and paint, raw registers")
    code, out, err = cmon(["list", "paint", "--", binary])
    eq(code, 0, "list (%s)" % err)
    check(out.splitlines()[1].split()[:2] == ["paint", "typed_minidebug"], out)


def test_dwz_shared_file():
    """dwz -m: the types both programs have are in the file that
    .gnu_debugaltlink names (DW_FORM_GNU_ref_alt): every value as plain.
    That file gone: the arguments were null, silently; one warning names
    the missing file now."""
    if not os.path.exists(target("typed_dwz")):
        raise Skip("dwz not installed")
    check_all_typed("typed_dwz")
    binary = target("typed_dwz_noalt")
    path = tmpfile("fmt-noalt.json")
    code, out, err = cmon(["trace", "-q", "-F", "json", "-o", path, "--func", "paint",
                           "--line", "typed.c:%d" % typed_line("(int)c * 10"), "--", binary,
                           "all"])
    eq((code, err), (0, "cmon: warning: %s: its DWARF (dwz) refers to "
                        "/nonexistent/.dwz/typed.debug (.gnu_debugaltlink), which was not "
                        "found: the types and names kept there are missing\n" % binary),
       "exit status and one warning")


def typed_line(text):
    with open(os.path.join(os.path.dirname(HERE), "targets", "typed.c")) as f:
        for n, l in enumerate(f, 1):
            if text in l:
                return n
    raise AssertionError("no %r in typed.c" % text)


def test_stripped_program_dynsym_functions():
    """A stripped executable that exports its functions (-rdynamic): the
    ones its .dynsym names are probed, raw (no DWARF), as in the unstripped
    build."""
    before = bpf_snapshot()
    binary = target("calls_stripped_dynsym")
    out = tmpfile("dynsym.json")
    code, _, err = cmon(["trace", "-F", "json", "-o", out, "--func", "add", "--func", "negate",
                         "--", binary, "calls"])
    eq(code, 0, "cmon trace (%s)" % err.strip())
    recs = [json.loads(l) for l in read_text(out).splitlines()]
    eq([(r["func"], r["module"], r["arg0"], r["arg1"], r["ret"], r["status"], "args" in r)
        for r in recs],
       [("add", "calls_stripped_dynsym", 2, 3, 5, "ok", False),
        ("add", "calls_stripped_dynsym", 2**32 - 7, 4, 2**32 - 3, "ok", False),
        ("negate", "calls_stripped_dynsym", 1234567890123, recs[2]["arg1"], -1234567890123,
         "ok", False)], "records")
    assert_no_leak(before)


def test_fully_stripped_program_fails_in_one_line():
    """No .symtab, no .gnu_debugdata, no DWARF: one line saying the program
    is stripped (it said only "no function matches" when the program was
    launched, its libraries searched), exit 1, no probe left."""
    before = bpf_snapshot()
    binary = target("calls_stripped")
    code, out, err = cmon(["trace", "--func", "add", "--", binary, "calls"])
    eq((code, out, err), (1, "", "cmon: no function matches 'add' in %s and its libraries "
                                 "(searched 3 objects): %s has no symbol table (stripped)\n"
                          % (binary, binary)), "exit status and the error")
    assert_no_leak(before)
