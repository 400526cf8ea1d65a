"""The build as a new user meets it: plain `make` builds build/libcmon.a
as the README says, and on a machine missing a build package it names the
package and `make deps` instead of failing in the compiler (it said
"bpf/bpf_helpers.h not found")."""
import os
import subprocess

from cmonlib import check, eq, tmpfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_make_builds_libcmon():
    out = os.path.dirname(tmpfile("x"))
    p = subprocess.run(["make", "-n", "OUT=" + out], cwd=ROOT, capture_output=True, text=True)
    eq(p.returncode, 0, "make -n (%s)" % p.stderr)
    check("%s/libcmon.a" % out in p.stdout, "plain make builds libcmon.a")


def test_make_names_missing_packages():
    bindir = os.path.join(os.path.dirname(tmpfile("x")), "fakebin")
    os.makedirs(bindir, exist_ok=True)
    # dpkg-query as on a machine without libbpf-dev and clang.
    with open(os.path.join(bindir, "dpkg-query"), "w") as f:
        f.write('#!/bin/sh\nfor a; do p=$a; done\n'
                'case "$p" in libbpf-dev|clang) exit 1;; esac\n'
                'printf "install ok installed"\n')
    os.chmod(os.path.join(bindir, "dpkg-query"), 0o755)
    out = os.path.join(os.path.dirname(tmpfile("x")), "fresh")
    p = subprocess.run(["make", "OUT=" + out], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, PATH=bindir + ":" + os.environ["PATH"]))
    check(p.returncode != 0, "make succeeded without libbpf-dev")
    lines = [l for l in p.stderr.splitlines() if l.startswith("cmon:")]
    eq(lines, ["cmon: missing build packages: clang libbpf-dev; `make deps` installs them "
               "(as root)"], "the message")
    check(not os.path.exists(os.path.join(out, "bpf")), "nothing compiled")


def test_make_demo_builds_what_it_needs():
    """`make demo` as the first command on a fresh machine: cmon and the
    program it traces, not the test targets (tests/targets/usdt.c needs
    <sys/sdt.h>, a test package: the demo failed there)."""
    out = os.path.join(os.path.dirname(tmpfile("x")), "demo-fresh")
    p = subprocess.run(["make", "-n", "demo", "OUT=" + out], cwd=ROOT, capture_output=True,
                       text=True)
    eq(p.returncode, 0, "make -n demo (%s)" % p.stderr)
    check("tools/demo/kvstore.c" in p.stdout and "%s/cmon" % out in p.stdout,
          "make demo builds cmon and the demo program")
    eq([l for l in p.stdout.splitlines() if "tests/targets/" in l], [],
       "make demo compiles no test target")


def test_trace_carries_no_tls_stack():
    """cmon itself links no HTTP or TLS library: libdebuginfod (which brings
    libcurl and GnuTLS, ~10 MB of a trace's RSS) is opened only when a
    download is needed; the agent's HTTP server lives in cmon-agent."""
    from cmonlib import CMON
    p = subprocess.run(["ldd", CMON], capture_output=True, text=True)
    eq(p.returncode, 0, "ldd cmon (%s)" % p.stderr)
    libs = sorted(l.split()[0] for l in p.stdout.splitlines() if l.strip())
    for bad in ("libcurl", "libgnutls", "libdebuginfod", "libmicrohttpd"):
        check(not any(l.startswith(bad) for l in libs), "cmon links %s: %r" % (bad, libs))
