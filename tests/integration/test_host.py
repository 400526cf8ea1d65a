"""cmon host: what this host can do, found out by trying; the refusals and
the tests' skips that rest on it."""
import ctypes
import json
import os
import subprocess
import sys

from cmonlib import (CMON, HERE, bpf_snapshot, assert_no_leak, check, cmon, eq, host,
                     stderr_lines, target)

FEATURES = ["btf", "uprobe_multi", "uprobe_session", "sleepable_uprobe", "rdonly_cast",
            "copy_from_user_str", "user_dynptr_reads", "sched_prepare_exec", "exec_fentry",
            "probe_write_user", "hw_breakpoint", "inherited_uprobes"]


class _PerfAttr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32),
                ("config", ctypes.c_uint64), ("sample_period", ctypes.c_uint64),
                ("sample_type", ctypes.c_uint64), ("read_format", ctypes.c_uint64),
                ("flags", ctypes.c_uint64), ("wakeup_events", ctypes.c_uint32),
                ("bp_type", ctypes.c_uint32), ("bp_addr", ctypes.c_uint64),
                ("bp_len", ctypes.c_uint64)]


def _breakpoint_count(writes):
    """A write breakpoint on a variable of this process, written WRITES
    times: its count (None when it cannot be opened)."""
    libc = ctypes.CDLL(None, use_errno=True)
    var = ctypes.c_long(0)
    a = _PerfAttr(type=5, size=ctypes.sizeof(_PerfAttr), bp_type=2,  # BREAKPOINT, W
                  bp_addr=ctypes.addressof(var), bp_len=8,
                  flags=(1 << 5) | (1 << 6))  # exclude_kernel, exclude_hv
    fd = libc.syscall(298, ctypes.byref(a), 0, -1, -1, 0)  # perf_event_open, x86-64
    if fd < 0:
        return None
    for _ in range(writes):
        var.value += 1
    count = os.read(fd, 8)
    os.close(fd)
    return int.from_bytes(count, "little")


def test_host_report_every_feature():
    """Every feature by name, yes or no with the probe's reason, the
    kernel's release, the probe costs; the JSON says the same."""
    code, out, err = cmon(["host", "--json"])
    eq((code, err), (0, ""), "exit status and stderr")
    h = json.loads(out)
    eq(h["kernel"], os.uname().release, "kernel release")
    eq(list(h["features"]), FEATURES, "the features, in order")
    for name, f in h["features"].items():
        check(isinstance(f["have"], bool) and f["serves"] and f["without"], (name, f))
        eq(f["why"] == "", f["have"], "%s: a reason exactly when missing" % name)
    check(h["features"]["btf"]["have"], "cmon runs here: the kernel has BTF")
    code, text, err = cmon(["host"])
    eq(code, 0, "text: exit status (%s)" % err)
    lines = text.splitlines()
    eq(lines[0].split(",")[0], "kernel " + os.uname().release, "first line")
    for name, f in h["features"].items():
        row = [l for l in lines if l.split()[1:2] == [name]]
        eq(len(row), 1, "one row for %s" % name)
        check(row[0].split()[0] == ("yes" if f["have"] else "no"), row)
    check(lines[-1].startswith("probe costs (measured now"), lines[-1])
    code, _, err = cmon(["host", "extra"])
    eq((code, stderr_lines(err)), (2, ["cmon: host: unexpected argument 'extra'"]), "usage")


def test_host_breakpoint_probe_agrees_with_a_real_write():
    """cmon's answer is what a breakpoint on this test's own variable,
    written four times, counts: 4 (fires) or 0 (opens, never fires)."""
    n = _breakpoint_count(4)
    have = host()["features"]["hw_breakpoint"]["have"]
    if n is None:
        eq(have, False, "no breakpoint opens here")
    else:
        check(n in (0, 4), "count %d" % n)
        eq(have, n == 4, "cmon says hw_breakpoint %s; a real one counted %d" % (have, n))


def test_watch_refused_where_breakpoints_never_fire():
    """--watch on a host whose breakpoints never fire said "0 writes" and
    exit 0: now one line saying why, before the program runs, nothing
    attached.  Where they fire, the host is told to behave as one where
    they do not (CMON_HOST_DENY), the same path."""
    env = dict(os.environ)
    if host()["features"]["hw_breakpoint"]["have"]:
        env["CMON_HOST_DENY"] = "hw_breakpoint"
    before = bpf_snapshot()
    res = subprocess.run([CMON, "trace", "--watch", "counter", "--", target("watch"), "writes"],
                         capture_output=True, text=True, env=env, timeout=60)
    eq(res.returncode, 1, "exit status (%s)" % res.stderr)
    eq(res.stdout, "", "the program did not run")
    lines = stderr_lines(res.stderr)
    eq(len(lines), 1, res.stderr)
    check(lines[0].startswith("cmon: --watch: hardware breakpoints do not work on this host ("),
          lines[0])
    assert_no_leak(before)


def test_skips_are_named_with_the_host_reason():
    """A test needing what the host lacks is skipped by name with the
    reason, listed again at the end, in "N passed, N failed, N skipped"."""
    env = dict(os.environ, CMON_HOST_DENY="hw_breakpoint",
               CMON_IT_LOG=os.path.join(os.environ.get("CMON_IT_TMP", "/tmp"), "inner.log"))
    env.pop("CMON_HOST_JSON", None)
    res = subprocess.run([sys.executable, os.path.join(HERE, "run.py"),
                          "test_watch_given_twice", "test_watch_errors"],
                         capture_output=True, text=True, env=env, timeout=300)
    eq(res.returncode, 0, "runner exit status (%s)" % res.stderr)
    lines = res.stdout.splitlines()
    why = "host has no hw_breakpoint (denied by CMON_HOST_DENY)"
    eq(lines[:2], ["skip test_watch_given_twice_reported_once: " + why,
                   "skip test_watch_errors: " + why], "one line per test")
    eq(lines[2:4], ["skipped test_watch_given_twice_reported_once: " + why,
                    "skipped test_watch_errors: " + why], "the skips again, at the end")
    check(lines[4].startswith("integration tests took "), lines[4])
    eq(lines[5:], ["0 passed, 0 failed, 2 skipped"], "the summary line")
