"""A Rust panic unwinding through a traced function: as with C++ exceptions,
a kernel uretprobe would make the unwinder abort the program, so cmon must
observe returns with probes on the function's ret instructions and leave
the program's output and exit status exactly as untraced."""
import os
import shutil
import subprocess

from cmonlib import CMON, Skip, check, eq, trace

HERE = os.path.dirname(os.path.abspath(__file__))


def rust_target():
    rustc = shutil.which("rustc") or os.path.expanduser("~/.cargo/bin/rustc")
    if not os.path.exists(rustc):
        raise Skip("no rustc on this machine")
    out = os.path.join(os.environ["CMON_IT_TMP"], "rust_panic")
    src = os.path.join(HERE, "..", "targets", "rust_panic.rs")
    subprocess.run([rustc, "-C", "opt-level=1", "-g", "-o", out, src], check=True,
                   capture_output=True, timeout=120)
    return out


def test_rust_panic_through_traced_function():
    exe = rust_target()
    untraced = subprocess.run([exe], capture_output=True, text=True, timeout=30)
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
