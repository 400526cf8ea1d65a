"""A Rust panic unwinding through a traced function: as with C++ exceptions,
a kernel uretprobe would make the unwinder abort the program, so cmon must
observe returns with probes on the function's ret instructions and leave
the program's output and exit status exactly as untraced."""
import os
import shutil
import subprocess

from cmonlib import HANG, CMON, Skip, check, eq, trace

HERE = os.path.dirname(os.path.abspath(__file__))


def rust_target(name="rust_panic", flags=(), suffix=""):
    rustc = shutil.which("rustc") or os.path.expanduser("~/.cargo/bin/rustc")
    if not os.path.exists(rustc):
        raise Skip("no rustc on this machine")
    out = os.path.join(os.environ["CMON_IT_TMP"], name + suffix)
    src = os.path.join(HERE, "..", "targets", name + ".rs")
    if os.path.exists(out):  # built by an earlier test of this run
        return out
    subprocess.run([rustc, "-C", "opt-level=1", "-g"] + list(flags) + ["-o", out, src],
                   check=True, capture_output=True, timeout=HANG)
    return out


def listed(pattern, exe):
    """The FUNCTION column of `cmon list PATTERN -- EXE`."""
    res = subprocess.run([CMON, "list", pattern, "--", exe], capture_output=True, text=True,
                         timeout=HANG)
    eq(res.returncode, 0, "cmon list %s: %s" % (pattern, res.stderr.strip()))
    lines = res.stdout.split("\n\n")[0].splitlines()[1:]
    return sorted(l.split()[0] for l in lines)


def test_rust_panic_through_traced_function():
    exe = rust_target()
    untraced = subprocess.run([exe], capture_output=True, text=True, timeout=HANG)
    eq((untraced.returncode, untraced.stdout), (0, "sum=306 caught=3\n"), "untraced run")
    res = trace(["risky"], launch=[exe])
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, untraced.stdout, "program output")
    eq([(r["arg0"], r["status"], r["ret"]) for r in res.rows],
       [(0, "ok", 100), (1, "noreturn", None), (2, "ok", 102), (3, "noreturn", None),
        (4, "ok", 104), (5, "noreturn", None)], "risky records")
    check("ret-insn" in subprocess.run([CMON, "list", "risky",
                                        "--", exe], capture_output=True, text=True).stdout,
          "cmon list shows return-instruction probes for a Rust program")


def test_rust_names_without_hash():
    """Rust legacy symbols are shown without their ::h<16 hex> hash, and
    both forms select the function."""
    import re
    exe = rust_target()
    nm = subprocess.run(["nm", exe], capture_output=True, text=True).stdout
    mangled = re.search(r"_ZN\w*1m5outer17h([0-9a-f]{16})E", nm)
    check(mangled, "m::outer has a legacy mangled name with a hash")
    for pattern in ("rust_panic::m::outer", "rust_panic::m::outer::h" + mangled.group(1)):
        res = trace([pattern], launch=[exe])
        eq(res.code, 0, "%s: %s" % (pattern, res.stderr[-300:]))
        eq([(r["func"], r["arg0"], r["ret"]) for r in res.rows],
           [(res.rows[0]["func"], 0, 0)], "one call of m::outer, named by %s" % pattern)
        name = res.rows[0]["func"]
        check(name.endswith("m::outer") and "::h" not in name, "shown without hash: %r" % name)
    listed = subprocess.run([CMON, "list", "rust_panic::m::outer", "--", exe],
                            capture_output=True, text=True).stdout
    check("m::outer" in listed and not re.search(r"outer::h[0-9a-f]{16}", listed),
          "cmon list shows it without hash: %r" % listed)


def plain(v):
    """JSON as cmonlib parses it (objects as lists of pairs) in dicts."""
    if isinstance(v, list) and all(isinstance(p, tuple) and len(p) == 2 for p in v) and v:
        return {k: plain(x) for k, x in v}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def test_rust_enums_show_their_variant():
    """Option, Result and a user enum (DWARF variant parts) show the variant
    their discriminant selects, with its fields; they used to show as {}.
    Passed by value, where Rust's ABI is not SysV's and DWARF gives no
    location at the entry, they are unavailable rather than misread."""
    exe = rust_target("rust_enums")
    out = "t=146 q=[Some(7), Some(45)]\n"
    eq(subprocess.run([exe], capture_output=True, text=True, timeout=HANG).stdout, out,
       "untraced run")
    res = trace(["look", "pick"], launch=[exe], fmt="json")
    eq((res.code, res.stdout), (0, out), "cmon exit status and program output (%s)" % res.stderr)
    look = [dict(r, args=plain(r["args"])) for r in res.rows if r["func"] == "look"]
    some_n = look[0]["args"]["p"]
    check(isinstance(some_n, dict) and some_n.get("Some", "").startswith("0x"),
          "Option<&u32> (a niche: no tag of its own) is Some(address): %r" % some_n)
    eq([(r["args"]["o"], r["args"]["r"], r["args"]["s"], r["args"]["p"] == "None", r["retval"])
        for r in look],
       [({"Some": 5}, {"Ok": -7}, {"Circle": 3}, False, 78),
        ("None", {"Err": 9}, {"Rect": {"w": 4, "h": 6}}, True, 33),
        ({"Some": 255}, {"Ok": 1}, {"Pair": [2, -300]}, True, 4294967254),
        ("None", {"Ok": 0}, "Empty", False, 77)], "look's enums by reference")
    # By value: rustc gives a's tag as rdi & 1 (DW_OP_and) and its payload
    # in sil; the return (al, dl) has no DWARF location: not guessed.
    opt = "<unavailable: optimized out>"
    eq([(plain(r["args"])["a"], plain(r["args"])["b"], r["retval"]) for r in res.rows
        if r["func"] == "pick"],
       [({"Some": 5}, "None", opt), ("None", {"Some": 300}, opt)],
       "pick: Option<u8> and Option<u32> by value; the return not guessed with SysV's rules")


NAMES_OUT = "t=131 kind=NotFound\n"
NAMES_FUNCS = ["<rust_names::Counter>::bump", "rust_names::describe", "rust_names::main",
               "rust_names::twice::<i32>", "rust_names::twice::<u8>"]


def test_rust_v0_names():
    """Rust's v0 mangling ("_R...", which rustc's own std uses) is
    demangled: listed and traced by name; a pattern written the legacy way
    (`crate::Type::method`, `crate::generic`) selects it too."""
    exe = rust_target("rust_names", ["-C", "symbol-mangling-version=v0"], "_v0")
    eq(listed("rust_names::*", exe), NAMES_FUNCS, "cmon list 'rust_names::*'")
    everything = listed("rust_names_v0:*", exe)
    eq([f for f in everything if f.startswith("_R")], [], "no name left mangled")
    # std's own names (v0 in rustup's std: std::sys::io::error::unix::...;
    # legacy in Debian bookworm's 1.63: std::sys::unix::...)
    check([f for f in everything if f.startswith("std::sys::") and
           f.endswith("::decode_error_kind")], "std's own names demangled too")
    res = trace(["rust_names::Counter::bump", "rust_names::twice"], launch=[exe], fmt="json")
    eq((res.code, res.stdout), (0, NAMES_OUT), "exit status and output (%s)" % res.stderr)
    eq([(r["func"], plain(r["args"]), r["retval"]) for r in res.rows],
       [("<rust_names::Counter>::bump", {"self": {"n": 1}, "by": 2}, 3),
        ("<rust_names::Counter>::bump", {"self": {"n": 3}, "by": 3}, 6),
        ("rust_names::twice::<u8>", {"x": 7}, 14),
        ("rust_names::twice::<i32>", {"x": -5}, -10)], "records by their v0 names")


def test_rust_llvm_suffix_names():
    """A legacy Rust name with LTO's `.llvm.NNNN` suffix is demangled (it
    used to stay mangled, outside every `crate::*` glob)."""
    exe = rust_target("rust_names", suffix="_legacy")
    nm = subprocess.run(["nm", exe], capture_output=True, text=True).stdout
    import re
    sym = re.search(r"_ZN10rust_names8describe17h[0-9a-f]{16}E", nm).group(0)
    lto = exe + "_llvm"
    subprocess.run(["objcopy", "--redefine-sym", "%s=%s.llvm.5550172826932545066" % (sym, sym),
                    exe, lto], check=True, timeout=HANG)
    eq(listed("rust_names::*", lto),
       ["rust_names::Counter::bump", "rust_names::describe", "rust_names::main",
        "rust_names::twice", "rust_names::twice"], "cmon list 'rust_names::*'")
    res = trace(["rust_names::describe"], launch=[lto], fmt="json")
    eq((res.code, res.stdout), (0, NAMES_OUT), "exit status and output (%s)" % res.stderr)
    eq([(r["func"], r["retval"]) for r in res.rows], [("rust_names::describe", 118)],
       "describe, by its demangled name")


def test_rust_str_and_path_text():
    """&str and &Path arguments show their text, as Go strings do (they
    used to show as {data_ptr, length})."""
    for flags, suffix in (([], "_legacy"), (["-C", "symbol-mangling-version=v0"], "_v0")):
        exe = rust_target("rust_names", flags, suffix)
        res = trace(["rust_names::describe"], launch=[exe], fmt="json")
        eq((res.code, res.stdout), (0, NAMES_OUT), "exit status and output (%s)" % res.stderr)
        eq([(plain(r["args"]), r["retval"]) for r in res.rows],
           [({"name": "h\u00e9llo", "path": "/tmp/x.txt"}, 118)], "describe's text arguments")
