"""`cmon agent`: probes from a spec applied while it runs, Prometheus
metrics, lifespans, restarted and replaced targets, privileges, and a real
Prometheus server scraping it."""
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request

from agentlib import (Agent, count_probe, parse_metrics, proc_status_field, run_target, series,
                      value, write_spec)
from cmonlib import (HANG, CMON, ROOT, Skip, assert_no_leak, bpf_snapshot, check, eq, held_by,
                     parse_json_lines, read_text, run, target, tmpfile, WaitTarget)

# CAP_DAC_READ_SEARCH (2), CAP_SYS_PTRACE (19), CAP_SYS_ADMIN (21),
# CAP_PERFMON (38), CAP_BPF (39).
KEPT_CAPS = "000000c000280004"


def loop(path, n):
    """`calls loop N`: N calls of add(i, 1)."""
    eq(run_target(path, "loop", n), "loop sum=%d\n" % (n * (n + 1) // 2), "target output")


def calls_copy(name="app", source="calls"):
    """A private copy of a target: the test may replace it."""
    path = tmpfile(name)
    shutil.copy2(target(source), path)
    return path


def test_agent_reload_keeps_counting():
    before = bpf_snapshot()
    app = target("calls")
    spec = tmpfile("probes.yaml")
    write_spec(spec, [
        count_probe("adds", app, labels={"service": "calls \"test\""}),
        {"name": "add_lat", "target": app, "func": "add", "instrument": "latency"},
        count_probe("broken", app, func="no_such_function"),
    ])
    a = Agent(spec).wait_ready()
    try:
        probes = a.wait_probes({"adds": "applied", "add_lat": "applied", "broken": "error"})
        eq(probes["broken"]["error"],
           "no function matches 'no_such_function' in %s (searched 1 object)" % app,
           "error of the invalid probe")
        eq((probes["adds"]["functions"], probes["adds"]["hits"]), (1, 0), "adds before calls")
        loop(app, 1000)
        m = a.metrics()
        eq(value(m, "cmon_adds_calls_total", probe="adds", function="add"), 1000, "count")
        eq(series(m, "cmon_adds_calls_total")[(("function", "add"), ("probe", "adds"),
                                                ("service", 'calls "test"'))], 1000,
           "count series with its constant label (escaped)")
        eq(value(m, "cmon_add_lat_seconds_count", probe="add_lat"), 1000, "latency count")
        eq(value(m, "cmon_add_lat_seconds_bucket", probe="add_lat", le="+Inf"), 1000, "+Inf")
        eq(value(m, "cmon_add_lat_seconds_bucket", probe="add_lat", le="10"), 1000, "le=10")
        # add() is a few instructions: its own time (the probes' cost taken
        # out) is a few ns a call plus the calibration's error, and may sum
        # to 0; never negative.  How close to 0 is a timing (make bench's
        # quiet-machine checks hold the correction).
        lat_sum = value(m, "cmon_add_lat_seconds_sum", probe="add_lat")
        check(lat_sum >= 0, "latency sum %r for 1000 calls of add()" % lat_sum)
        eq(value(m, "cmon_probe_state", probe="broken", state="error"), 1, "broken: error")
        eq(value(m, "cmon_probe_state", probe="broken", state="applied"), 0, "broken: not applied")
        eq(value(m, "cmon_probe_state", probe="adds", state="applied"), 1, "adds: applied")
        eq(len(series(m, "cmon_probe_info", probe="broken",
                      error=probes["broken"]["error"])), 1, "the error in cmon_probe_info")
        eq(value(m, "cmon_agent_probe_hits_total", probe="adds"), 1000, "hits")
        eq(value(m, "cmon_agent_events_lost_total", probe="adds"), 0, "lost")
        eq(value(m, "cmon_agent_attach_errors_total"), 1, "attach errors")
        eq(value(m, "cmon_agent_spec_reloads_total", result="ok"), 1, "reloads")
        eq(value(m, "cmon_agent_series"), len(m), "cmon_agent_series counts every series")
        check(value(m, "cmon_agent_bpf_runs_total", probe="adds") >= 1000, "BPF runs counted")
        check(value(m, "cmon_agent_bpf_run_time_seconds_total", probe="adds") > 0,
              "BPF run time counted (BPF_ENABLE_STATS)")

        # Privileges after the first apply.
        eq(proc_status_field(a.pid, "CapEff"), KEPT_CAPS, "effective capabilities")
        eq(proc_status_field(a.pid, "CapPrm"), KEPT_CAPS, "permitted capabilities")
        eq(proc_status_field(a.pid, "CapBnd"), KEPT_CAPS, "bounding set")
        eq(proc_status_field(a.pid, "NoNewPrivs"), "1", "no_new_privs")
        # Capabilities are per thread: the threads that read clients' bytes
        # (started before the drop) hold nothing at all and run as nobody;
        # no thread holds more than the kept five.  Before, the HTTP
        # thread kept every capability of root.
        threads = {}
        for tid in os.listdir("/proc/%d/task" % a.pid):
            with open("/proc/%d/task/%s/status" % (a.pid, tid)) as f:
                st = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
            threads.setdefault(st["Name"], []).append(st)
        for name in ("cmon-http", "cmon-watchdog"):
            eq(len(threads.get(name, [])), 1, "one %s thread in %r" % (name, sorted(threads)))
            st = threads[name][0]
            eq((st["Uid"].split(), st["Gid"].split(), st["Groups"].strip(), st["CapEff"],
                st["CapPrm"], st["NoNewPrivs"]),
               (["65534"] * 4, ["65534"] * 4, "", "0" * 16, "0" * 16, "1"),
               "%s: uid, gid, groups, capabilities" % name)
        for name, sts in threads.items():
            for st in sts:
                check(int(st["CapEff"], 16) & ~int(KEPT_CAPS, 16) == 0,
                      "thread %s holds capabilities %s" % (name, st["CapEff"]))

        # Edit: add an argument histogram, drop the latency probe; the
        # counter goes on from 1000.  Written as JSON this time.
        write_spec(spec, [
            count_probe("adds", app, labels={"service": "calls \"test\""}),
            count_probe("broken", app, func="no_such_function"),
            {"name": "add_arg", "target": app, "func": "add", "instrument": "arg", "arg": 1},
        ], as_json=True)
        a.wait_probes({"adds": "applied", "broken": "error", "add_arg": "applied"})
        loop(app, 500)
        m = a.metrics()
        eq(value(m, "cmon_adds_calls_total", probe="adds"), 1500, "count after the reload")
        eq(series(m, "cmon_add_lat_seconds_count"), {}, "the removed probe's series")
        eq(series(m, "cmon_probe_state", probe="add_lat"), {}, "the removed probe's state")
        eq(value(m, "cmon_add_arg_arg_count", probe="add_arg"), 500, "new probe counts")
        eq(value(m, "cmon_add_arg_arg_bucket", probe="add_arg", le="0"), 0, "arg le=0")
        eq(value(m, "cmon_add_arg_arg_bucket", probe="add_arg", le="1"), 500, "arg le=1")
        eq(value(m, "cmon_agent_spec_reloads_total", result="ok"), 2, "reloads")

        # A spec that does not parse leaves everything running.
        with open(spec + ".tmp", "w") as f:
            f.write("probes: [\n")
        os.rename(spec + ".tmp", spec)
        a.wait_metric("cmon_agent_spec_reloads_total", 1, result="error")
        loop(app, 10)
        eq(value(a.metrics(), "cmon_adds_calls_total", probe="adds"), 1510, "after a bad edit")
        eq(a.probes()["adds"]["state"], "applied", "adds after a bad edit")

        # SIGHUP forces a reload (and retries probes in error).
        write_spec(spec, [count_probe("adds", app, labels={"service": "calls \"test\""})])
        a.wait_probes({"adds": "applied"})
        a.signal(signal.SIGHUP)
        a.wait_metric("cmon_agent_spec_reloads_total", 4, result="ok")
        eq(value(a.metrics(), "cmon_adds_calls_total", probe="adds"), 1510, "after SIGHUP")

        code, out, err = run([CMON, "agent", "--status", "--listen", a.addr])
        eq(code, 0, "cmon agent --status exit status (%s)" % err)
        rows = [l.split() for l in out.splitlines() if l.startswith("adds ")]
        eq([(r[0], r[1], r[2], r[3]) for r in rows], [("adds", "applied", "1", "1510")],
           "status table row")
        check("cap_bpf,cap_perfmon,cap_sys_admin,cap_sys_ptrace,cap_dac_read_search" in out,
              "status shows the kept capabilities: %s" % out)
    finally:
        code = a.stop()
    eq(code, 0, "agent exit status after SIGTERM (%s)" % a.stderr[-1000:])
    assert_no_leak(before, what="the agent")


def test_agent_reload_under_calls_counts_each_once():
    """Calls running flat out while the spec changes: the probes sharing a
    profiler are attached again with the new one, which goes on before the
    old one goes.  Every call is counted once: none twice in the overlap
    (thousands were), none missed in a gap."""
    app = calls_copy("app-reload")
    spec = tmpfile("probes-reload.yaml")
    write_spec(spec, [count_probe("adds", app)])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"adds": "applied"})
        p = subprocess.Popen([app, "until-usr1"], stdout=subprocess.PIPE, text=True)
        try:
            eq(p.stdout.readline(), "counting %d\n" % p.pid, "target started")
            end = time.monotonic() + 10
            while time.monotonic() < end and value(a.metrics(), "cmon_agent_probe_hits_total",
                                                   probe="adds") < 1000:
                time.sleep(0.02)
            # Two reloads while it calls: a probe joins the share, then goes.
            for n, probes in ((2, [count_probe("adds", app), count_probe("negs", app, "negate")]),
                              (3, [count_probe("adds", app)])):
                write_spec(spec, probes)
                a.wait_metric("cmon_agent_spec_reloads_total", n, result="ok")
                a.wait_probes({q["name"]: "applied" for q in probes})
                time.sleep(0.1)
            reattached = a.probes()["adds"]
        finally:
            p.send_signal(signal.SIGUSR1)
            out, _ = p.communicate(timeout=HANG)
        eq(p.returncode, 0, "target exit status")
        made = int(out.split()[1].split("=")[1])
        check(made > 1000, "calls made: %d" % made)
        a.wait_metric("cmon_adds_calls_total", made, probe="adds", function="add", timeout=HANG)
        time.sleep(0.3)  # anything counted late would show now
        eq(value(a.metrics(), "cmon_adds_calls_total", probe="adds", function="add"), made,
           "calls counted across two reloads (%r)" % reattached)
    finally:
        eq(a.stop(), 0, "agent exit status")


def test_agent_exposition_promtool():
    promtool = shutil.which("promtool")
    if not promtool:
        raise Skip("promtool not installed (Debian package prometheus)")
    app = target("calls")
    spec = tmpfile("probes.yaml")
    write_spec(spec, [
        count_probe("c", app, func="add", labels={"team": "a\\b\nc"}),
        {"name": "lat", "target": app, "func": ["add", "six", "negate"],
         "instrument": "latency", "per_pid": True, "max_pids": 4},
        {"name": "argh", "target": app, "func": "add", "instrument": "arg", "arg": 0},
        count_probe("bad", "/nonexistent/app"),
    ])
    a = Agent(spec).wait_ready()
    try:
        run_target(app, "calls")
        text = a.metrics_text()
        p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=HANG)
        eq((p.returncode, p.stdout + p.stderr), (0, ""), "promtool check metrics")
        m = parse_metrics(text)
        eq(series(m, "cmon_c_calls_total")[(("function", "add"), ("probe", "c"),
                                            ("team", "a\\b\nc"))], 2, "escaped label value")
        pid_series = series(m, "cmon_lat_seconds_count", probe="lat")
        eq(sorted(dict(l)["function"] for l in pid_series), ["add", "negate", "six"],
           "one series per function of the pid")
        # Every call is counted or counted as lost, never dropped silently
        # (an entry loses its per-thread storage when the kernel's per-CPU
        # task-storage lock is busy: rare, but it happened in a CI run).
        lost = value(m, "cmon_agent_events_lost_total", probe="lat") or 0
        eq(sum(pid_series.values()) + lost, 4, "calls of the latency probe, counted or lost "
           "(%r, lost %r)" % (pid_series, lost))
        # Histogram bucket order and consistency, per series.
        for labels, count in series(m, "cmon_argh_arg_count").items():
            les = [(float(dict(l)["le"]), v) for l, v in
                   series(m, "cmon_argh_arg_bucket", **dict(labels)).items()]
            les.sort()
            eq(les[-1], (float("inf"), count), "+Inf bucket is the count")
            check(all(les[i][1] <= les[i + 1][1] for i in range(len(les) - 1)),
                  "cumulative buckets")
            eq(len(les), 65, "arg buckets: 2^k - 1 for k < 64, and +Inf")
        eq(a.probes()["bad"]["error"], "/nonexistent/app: No such file or directory",
           "missing target")
    finally:
        eq(a.stop(), 0, "agent exit status")


def my_cgroup2_dir():
    """The cgroup v2 directory of this process (and of what it starts)."""
    root = None
    with open("/proc/self/mounts") as f:
        for line in f:
            w = line.split()
            if len(w) > 2 and w[2] == "cgroup2":
                root = w[1]
                break
    if root is None:
        return None
    with open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return os.path.normpath(root + "/" + line[3:].strip())
    return None


def test_agent_filters():
    app = target("calls")
    spec = tmpfile("probes.yaml")
    cg = my_cgroup2_dir()
    if cg is None:
        raise Skip("no cgroup v2 hierarchy mounted")
    log = tmpfile("filtered.jsonl")
    write_spec(spec, [
        count_probe("mine", app, process="calls"),
        count_probe("theirs", app, process="someone_else"),
        count_probe("in_cg", app, cgroup=cg),
        {"name": "log_mine", "target": app, "func": "add", "instrument": "log",
         "process": "calls", "log": {"path": log}},
        {"name": "log_other", "target": app, "func": "add", "instrument": "log",
         "process": "someone_else", "log": {"path": log + ".other"}},
        # The log filters in the kernel too (it was refused a cgroup).
        {"name": "log_cg", "target": app, "func": "add", "instrument": "log", "cgroup": cg,
         "log": {"path": log + ".cg"}},
        {"name": "log_pid", "target": app, "func": "add", "instrument": "log", "pid": 1,
         "log": {"path": log + ".pid"}},
    ])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"mine": "applied", "theirs": "applied", "in_cg": "applied",
                       "log_mine": "applied", "log_other": "applied", "log_cg": "applied",
                       "log_pid": "applied"})
        loop(app, 40)
        a.wait_metric("cmon_agent_log_records_total", 40, probe="log_mine")
        a.wait_metric("cmon_agent_log_records_total", 40, probe="log_cg")
        m = a.metrics()
        eq(value(m, "cmon_mine_calls_total", probe="mine"), 40, "comm filter: matching")
        eq(value(m, "cmon_theirs_calls_total", probe="theirs"), 0, "comm filter: not matching")
        eq(value(m, "cmon_in_cg_calls_total", probe="in_cg"), 40, "cgroup filter")
        eq(value(m, "cmon_agent_log_records_total", probe="log_other"), 0, "log comm filter")
    finally:
        eq(a.stop(), 0, "agent exit status")
    eq(len(parse_json_lines(read_text(log))), 40, "records of the comm-filtered log")
    eq(read_text(log + ".other"), "", "records of another comm")
    eq(len(parse_json_lines(read_text(log + ".cg"))), 40, "records of the cgroup-filtered log")
    eq(read_text(log + ".pid"), "", "records of another pid")


def test_agent_lifespan_expiry():
    before = bpf_snapshot()
    app = target("calls")
    spec = tmpfile("probes.yaml")
    # Its own process filter: not sharing a profiler with "lasting", so its
    # links are its own (test_agent_many_probes_share covers a shared one).
    write_spec(spec, [count_probe("brief", app, lifespan="2s", process="calls"),
                      count_probe("lasting", app)])
    a = Agent(spec).wait_ready()
    try:
        st = a.wait_probes({"brief": "applied", "lasting": "applied"})
        check(st["brief"]["expires_at"] is not None, "an expiry time is shown")
        links = {k for k in held_by(a.pid) if k[0] == "link"}
        loop(app, 100)
        a.wait_metric("cmon_probe_state", 1, timeout=HANG, probe="brief", state="expired")
        held = {k for k in held_by(a.pid) if k[0] == "link"}
        check(len(held) < len(links), "the expired probe's links are gone (%d of %d left)"
              % (len(held), len(links)))
        loop(app, 50)
        m = a.metrics()
        eq(value(m, "cmon_brief_calls_total", probe="brief"), 100,
           "expired: kept at its last value, later calls not counted")
        eq(value(m, "cmon_lasting_calls_total", probe="lasting"), 150, "the other probe")
        eq(value(m, "cmon_probe_state", probe="brief", state="applied"), 0, "not applied")
        st = a.probes()["brief"]
        eq((st["state"], st["functions"]), ("expired", 0), "status of the expired probe")
        check(st["expired_at"] is not None, "expired_at shown")
        # Editing the probe renews it.
        write_spec(spec, [count_probe("brief", app, lifespan="1h", process="calls"),
                          count_probe("lasting", app)])
        a.wait_probes({"brief": "applied", "lasting": "applied"})
        loop(app, 10)
        eq(value(a.metrics(), "cmon_brief_calls_total", probe="brief"), 10, "renewed probe")
    finally:
        eq(a.stop(), 0, "agent exit status")
    assert_no_leak(before, what="the agent")


def test_agent_target_restarted():
    app = target("calls")
    spec = tmpfile("probes.yaml")
    write_spec(spec, [count_probe("total", app),
                      count_probe("perpid", app, per_pid=True, max_pids=2)])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"total": "applied", "perpid": "applied"})
        # The target exits and starts again four times: every new process
        # of the binary is counted, and the pid labels stay capped.
        for n in (100, 200, 300, 400):
            loop(app, n)
            time.sleep(0.3)  # a scrape between restarts labels the live ones
            a.metrics()
        m = a.metrics()
        eq(value(m, "cmon_total_calls_total", probe="total"), 1000, "counts add up")
        per = series(m, "cmon_perpid_calls_total", probe="perpid")
        eq(sum(per.values()), 1000, "per-pid series add up")
        check(len(per) <= 3, "at most max_pids + 1 series: %r" % per)
        pids = [dict(l)["pid"] for l in per]
        check(all(p == "other" or p.isdigit() for p in pids), "pid labels: %r" % pids)
        check(value(m, "cmon_agent_pid_labels", probe="perpid") <= 2, "labelled pids capped")
        # Exited processes give their label back: all of it ends in "other".
        a.wait_metric("cmon_perpid_calls_total", 1000, timeout=HANG, probe="perpid", pid="other")
    finally:
        eq(a.stop(), 0, "agent exit status")


def test_agent_binary_replaced():
    app = calls_copy("app")
    spec = tmpfile("probes.yaml")
    write_spec(spec, [count_probe("adds", app),
                      {"name": "lat", "target": app, "func": "add", "instrument": "latency"}])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"adds": "applied", "lat": "applied"})
        loop(app, 100)
        # A new version arrives the way package managers install it: a new
        # file renamed over the old one (another inode).
        shutil.copy2(target("calls_pie"), app + ".new")
        os.rename(app + ".new", app)
        a.wait_metric("cmon_agent_probe_reattached_total", 1, timeout=HANG, probe="adds")
        a.wait_metric("cmon_agent_probe_reattached_total", 1, timeout=HANG, probe="lat")
        loop(app, 50)
        m = a.metrics()
        eq(value(m, "cmon_adds_calls_total", probe="adds"), 150, "old and new version's calls")
        eq(value(m, "cmon_lat_seconds_count", probe="lat"), 150, "latency count carried over")
        eq(value(m, "cmon_lat_seconds_bucket", probe="lat", le="+Inf"), 150, "+Inf carried")
        eq(value(m, "cmon_agent_probe_hits_total", probe="adds"), 150, "hits carried over")
    finally:
        eq(a.stop(), 0, "agent exit status")


def test_agent_log_rotation():
    app = target("calls")
    spec = tmpfile("probes.yaml")
    log = tmpfile("calls.jsonl")
    write_spec(spec, [{"name": "trail", "target": app, "func": ["add", "six"],
                       "instrument": "log", "process": "calls",
                       "log": {"path": log, "max_bytes": 4096, "keep": 50}}])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"trail": "applied"})
        run_target(app, "calls")
        loop(app, 100)
        a.wait_metric("cmon_agent_log_records_total", 103, probe="trail")
    finally:
        eq(a.stop(), 0, "agent exit status")
    files = sorted(f for f in os.listdir(os.path.dirname(log)) if f.startswith("calls.jsonl"))
    check(len(files) > 5, "rotated into several files: %r" % files)
    rows = []
    for f in files:
        path = os.path.join(os.path.dirname(log), f)
        check(os.path.getsize(path) < 4096 + 1024, "%s is about max_bytes" % f)
        rows += parse_json_lines(read_text(path))
    eq(len(rows), 103, "records in all files")
    six = [r for r in rows if r["func"] == "six"]
    eq([(r["arg0"], r["arg5"], r["ret"], r["status"]) for r in six], [(1, 6, 91, "ok")],
       "the six() record")
    looped = [r for r in rows if r["func"] == "add" and r["arg1"] == 1]
    eq(sorted(r["arg0"] for r in looped), list(range(100)), "add(i, 1) records of the loop")


def test_agent_status_processes_and_files():
    """/status and --status: each probe's files and the processes mapping
    them that its filters let count."""
    app = target("calls")
    t1 = WaitTarget(["calls"])
    t2 = WaitTarget(["calls"])
    spec = tmpfile("probes-status.yaml")
    write_spec(spec, [count_probe("all", app), count_probe("one", app, pid=t1.pid),
                      count_probe("nobody", app, process="nosuchcomm"),
                      {"name": "broken", "target": app, "func": "nosuchfunc",
                       "instrument": "count"}])
    a = Agent(spec).wait_ready()
    try:
        got = a.wait_probes({"all": "applied", "one": "applied", "nobody": "applied",
                             "broken": "error"})
        all_pids = sorted(p["pid"] for p in got["all"]["processes"])
        eq(got["all"]["files"], [app], "files of all")
        eq(all_pids, sorted([t1.pid, t2.pid]), "processes of all")
        eq([p["comm"] for p in got["all"]["processes"]], ["calls", "calls"], "their comm")
        eq((got["one"]["files"], got["one"]["processes"]),
           ([app], [{"pid": t1.pid, "comm": "calls"}]), "files and processes of one")
        eq((got["nobody"]["files"], got["nobody"]["processes"]), ([app], []), "nobody")
        eq((got["broken"]["files"], got["broken"]["processes"]), ([], []), "broken")
        code, out, err = run([CMON, "agent", "--status", "--listen", a.addr])
        eq(code, 0, "--status exit status (%s)" % err)
        lines = out.splitlines()
        i = next(k for k, l in enumerate(lines) if l.startswith("one "))
        eq(lines[i + 1:i + 3], ["  files: %s" % app, "  processes: %d (calls)" % t1.pid],
           "--status lines of one")
        i = next(k for k, l in enumerate(lines) if l.startswith("nobody "))
        eq(lines[i + 1:i + 3], ["  files: %s" % app, "  processes: none now"], "of nobody")
    finally:
        eq(a.stop(), 0, "agent exit status")
        for t in (t1, t2):
            t.release()
            t.finish()


def calls_by_probe(metrics):
    """{probe: (function, value)} of every cmon_<probe>_calls_total sample."""
    out = {}
    for (name, labels), v in metrics.items():
        l = dict(labels)
        if name == "cmon_%s_calls_total" % l.get("probe"):
            check(l["probe"] not in out, "one series per probe: %r" % (labels,))
            out[l["probe"]] = (l["function"], v)
    return out


def test_agent_many_probes_share():
    """4,000 probes, one function each, on one program share one profiler:
    all applied, each counts exactly its function's calls, with few file
    descriptors and < 100 MB of memory (one profiler each: ~14 descriptors
    and ~120 KB a probe, 3,000 failed with "Too many open files").  Removing
    half of them leaves the other half counting on."""
    many = target("many")
    spec = tmpfile("probes-many.yaml")
    names = ["m%04d" % i for i in range(4000)]
    with open(spec + ".tmp", "w") as f:
        f.write("probes:\n")
        for i, n in enumerate(names):
            f.write("  - {name: %s, target: %s, func: many_%04d, instrument: count}\n"
                    % (n, many, i))
    os.rename(spec + ".tmp", spec)
    a = Agent(spec).wait_ready(timeout=HANG)
    try:
        st = a.probes()
        eq(sorted(set(p["state"] for p in st.values())), ["applied"], "every probe applied")
        eq(len(st), 4000, "probes")
        fds = len(os.listdir("/proc/%d/fd" % a.pid))
        check(fds < 100, "the agent holds %d file descriptors" % fds)
        eq(run_target(many), "calls=4000 sum=16000000\n", "target output")
        a.wait_metric("cmon_agent_probe_hits_total", 1, probe="m3999")
        eq(calls_by_probe(a.metrics()), {n: ("many_%04d" % i, 1) for i, n in enumerate(names)},
           "each probe's function and count")
        rss_kb = int(proc_status_field(a.pid, "VmRSS").split()[0])
        check(rss_kb < 100 * 1024, "agent RSS %d kB" % rss_kb)
        # Half of them go: the share is attached again for the rest, whose
        # counts carry over.
        with open(spec + ".tmp", "w") as f:
            f.write("probes:\n")
            for i, n in enumerate(names[:2000]):
                f.write("  - {name: %s, target: %s, func: many_%04d, instrument: count}\n"
                        % (n, many, i))
        os.rename(spec + ".tmp", spec)
        a.wait_metric("cmon_agent_spec_reloads_total", 2, timeout=HANG, result="ok")
        eq(len(a.probes()), 2000, "probes after the edit")
        eq(run_target(many), "calls=4000 sum=16000000\n", "target output")
        a.wait_metric("cmon_agent_probe_hits_total", 2, probe="m1999")
        eq(calls_by_probe(a.metrics()),
           {n: ("many_%04d" % i, 2) for i, n in enumerate(names[:2000])},
           "each remaining probe's function and count after the edit")
    finally:
        eq(a.stop(timeout=HANG), 0, "agent exit status")


def test_agent_function_label_cap():
    """A glob over 4,000 functions, each called once: the first max_functions
    called get a function label, the others are summed into
    function="other", and how many were is a metric."""
    many = target("many")
    spec = tmpfile("probes-fcap.yaml")
    write_spec(spec, [count_probe("capped", many, func="many_*", max_functions=10),
                      count_probe("default", many, func="many_*"),
                      {"name": "slow", "target": many, "func": "many_*", "instrument": "latency",
                       "max_functions": 5}])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"capped": "applied", "default": "applied", "slow": "applied"})
        m = a.metrics()
        eq(series(m, "cmon_capped_calls_total"), {}, "no series before a call (past the cap)")
        eq(run_target(many), "calls=4000 sum=16000000\n", "target output")
        a.wait_metric("cmon_agent_probe_hits_total", 4000, probe="capped")
        a.wait_metric("cmon_agent_probe_hits_total", 4000, probe="slow")
        m = a.metrics()
        for probe, cap in (("capped", 10), ("default", 200)):
            got = {dict(l)["function"]: v
                   for l, v in series(m, "cmon_%s_calls_total" % probe).items()}
            eq(len(got), cap + 1, "%s: series" % probe)
            eq(got["other"], 4000 - cap, "%s: calls summed into other" % probe)
            eq(sorted(v for f, v in got.items() if f != "other"), [1] * cap,
               "%s: labelled functions' calls" % probe)
            eq(value(m, "cmon_agent_function_labels", probe=probe), cap, "%s: labels" % probe)
            eq(value(m, "cmon_agent_functions_other", probe=probe), 4000 - cap,
               "%s: functions in other" % probe)
        got = {dict(l)["function"]: v
               for l, v in series(m, "cmon_slow_seconds_count").items()}
        eq((len(got), got["other"]), (6, 3995), "latency histograms: 5 functions and other")
        check(len(a.metrics_text()) < 200000, "exposition size")
    finally:
        eq(a.stop(), 0, "agent exit status")


def test_agent_log_never_redirected():
    """A log path that is a symbolic link, a hard link, or sits in a folder
    other users can write (not sticky), or in a sticky one but owned by
    another user, is refused with its reason; nothing is written through the
    links; a private folder works."""
    app = target("calls")
    base = tmpfile("logsafety")
    os.mkdir(base)
    victim = os.path.join(base, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    sticky = os.path.join(base, "sticky")
    os.mkdir(sticky)
    os.chmod(sticky, 0o1777)
    os.symlink(victim, os.path.join(sticky, "link.jsonl"))
    os.link(victim, os.path.join(sticky, "hard.jsonl"))
    theirs = os.path.join(sticky, "theirs.jsonl")
    with open(theirs, "w"):
        pass
    os.chown(theirs, 65534, 65534)
    open_dir = os.path.join(base, "open")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o777)
    os.symlink(base, os.path.join(base, "dirlink"))
    private = os.path.join(base, "private")
    os.mkdir(private, 0o755)

    def log_probe(name, path):
        return {"name": name, "target": app, "func": "add", "instrument": "log",
                "log": {"path": path}}

    spec = tmpfile("probes-logsafety.yaml")
    write_spec(spec, [log_probe("symlink", os.path.join(sticky, "link.jsonl")),
                      log_probe("hardlink", os.path.join(sticky, "hard.jsonl")),
                      log_probe("theirs", theirs),
                      log_probe("open", os.path.join(open_dir, "x.jsonl")),
                      log_probe("dirlink", os.path.join(base, "dirlink", "x.jsonl")),
                      log_probe("sticky", os.path.join(sticky, "mine.jsonl")),
                      log_probe("private", os.path.join(private, "x.jsonl"))])
    a = Agent(spec).wait_ready()
    try:
        got = a.wait_probes({"symlink": "error", "hardlink": "error", "theirs": "error",
                             "open": "error", "dirlink": "error", "sticky": "applied",
                             "private": "applied"})
        errors = {n: p["error"] for n, p in got.items() if p["state"] == "error"}
        eq(errors, {
            "symlink": "log %s/link.jsonl: a symbolic link (not followed)" % sticky,
            "hardlink": "log %s/hard.jsonl: has 2 hard links: not written" % sticky,
            "theirs": "log %s: belongs to uid 65534, in a folder other users can write" % theirs,
            "open": "log %s/x.jsonl: folder %s is writable by other users and not sticky"
                    % (open_dir, open_dir),
            "dirlink": "log %s/dirlink/x.jsonl: folder %s/dirlink: not a folder (or a symbolic "
                       "link)" % (base, base),
        }, "why each log was refused")
        loop(app, 5)
        a.wait_metric("cmon_agent_log_records_total", 5, probe="private")
        a.wait_metric("cmon_agent_log_records_total", 5, probe="sticky")
    finally:
        eq(a.stop(), 0, "agent exit status")
    eq(read_text(victim), "precious\n", "the link target is untouched")
    eq(sorted(os.listdir(open_dir)), [], "nothing created in the open folder")
    eq(len(parse_json_lines(read_text(os.path.join(private, "x.jsonl")))), 5, "private log")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def prometheus_binary():
    exe = shutil.which("prometheus")
    if exe:
        return exe
    # `make test` installs it (tools/install-deps.sh test); try once here too.
    script = os.path.join(ROOT, "tools", "install-deps.sh")
    try:
        subprocess.run([script, "test"], capture_output=True, timeout=HANG)
    except subprocess.TimeoutExpired:
        pass
    exe = shutil.which("prometheus")
    if not exe:
        raise Skip("the prometheus package cannot be installed here")
    return exe


def query(port, q):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
    with urllib.request.urlopen(url, timeout=HANG) as r:
        doc = json.loads(r.read().decode())
    check(doc.get("status") == "success", "query %s: %r" % (q, doc))
    return doc["data"]["result"]


class Prometheus:
    """A real Prometheus server scraping ADDR every second."""

    def __init__(self, addr, name="prometheus"):
        exe = prometheus_binary()
        self.port = free_port()
        self.log_path = tmpfile(name + ".log")
        cfg = tmpfile(name + ".yml")
        with open(cfg, "w") as f:
            f.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                    "scrape_configs:\n"
                    "  - job_name: cmon\n"
                    "    static_configs: [{targets: ['%s']}]\n" % addr)
        with open(self.log_path, "wb") as log:
            self.p = subprocess.Popen([exe, "--config.file=" + cfg,
                                       "--storage.tsdb.path=" + tmpfile(name + "-data"),
                                       "--web.listen-address=127.0.0.1:%d" % self.port],
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def query(self, q):
        return query(self.port, q)

    def wait_for(self, q, timeout=HANG):
        """Until query Q has a result; returns it."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            check(self.p.poll() is None, "prometheus exited: %s" % read_text(self.log_path)[-2000:])
            try:
                result = self.query(q)
            except OSError:
                result = None  # not listening yet
            if result:
                return result
            time.sleep(0.5)
        raise AssertionError("prometheus has no %s after %d s: %s"
                             % (q, timeout, read_text(self.log_path)[-2000:]))

    def stop(self):
        self.p.terminate()
        try:
            self.p.wait(HANG)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def test_agent_scraped_by_prometheus():
    app = target("calls")
    spec = tmpfile("probes.yaml")
    write_spec(spec, [count_probe("scraped", app, labels={"service": "calls"}),
                      {"name": "slow", "target": app, "func": "add", "instrument": "latency"}])
    a = Agent(spec).wait_ready()
    prom = None
    try:
        a.wait_probes({"scraped": "applied", "slow": "applied"})
        loop(app, 777)
        prom = Prometheus(a.addr)
        result = prom.wait_for('cmon_scraped_calls_total{probe="scraped",function="add",'
                               'service="calls"}')
        eq(len(result), 1, "one series")
        eq(result[0]["metric"]["job"], "cmon", "job label")
        eq(result[0]["value"][1], "777", "value Prometheus scraped")
        eq(prom.query('up{job="cmon"}')[0]["value"][1], "1", "up")
        r = prom.query('cmon_slow_seconds_count{probe="slow"}')
        eq([x["value"][1] for x in r], ["777"], "histogram count")
        r = prom.query('cmon_probe_state{probe="slow",state="applied"}')
        eq([x["value"][1] for x in r], ["1"], "probe state")
    finally:
        if prom is not None:
            prom.stop()
        eq(a.stop(), 0, "agent exit status")


class Attack:
    """Hostile local clients of ADDR ("host:port"), each reconnecting 0.2 s
    after the agent closes it: HELD connections that never send a byte (from
    20 loopback addresses 127.0.1.x), and SLOW ones (from 127.0.2.1) that
    send a request line, then one header line every 2 s, never ending it."""

    def __init__(self, addr, held=500, slow=16):
        import selectors
        import threading
        host, port = addr.rsplit(":", 1)
        self.dest = (host, int(port))
        self.sel = selectors.DefaultSelector()
        self.stop_flag = False
        self.max_open = 0
        self.closed_by_agent = 0
        self.kinds = ["held"] * held + ["slow"] * slow
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def connect(self, i):
        kind = self.kinds[i]
        src = "127.0.1.%d" % (1 + i % 20) if kind == "held" else "127.0.2.1"
        s = socket.socket()
        s.bind((src, 0))
        s.settimeout(2)
        try:
            s.connect(self.dest)
        except OSError:
            s.close()
            return None
        s.setblocking(False)
        if kind == "slow":
            s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        self.sel.register(s, 1, i)  # EVENT_READ: the agent closed it
        return s

    def run(self):
        socks = {}
        reconnect = {i: 0.0 for i in range(len(self.kinds))}
        next_drip = time.monotonic() + 2
        while not self.stop_flag:
            now = time.monotonic()
            for i, at in list(reconnect.items()):
                if at <= now:
                    s = self.connect(i)
                    if s is not None:
                        socks[i] = s
                        del reconnect[i]
                    else:
                        reconnect[i] = now + 0.2
            self.max_open = max(self.max_open, len(socks))
            if now >= next_drip:
                next_drip = now + 2
                for i, s in socks.items():
                    if self.kinds[i] == "slow":
                        try:
                            s.send(b"X-Slow: 1\r\n")
                        except OSError:
                            pass
            for key, _ in self.sel.select(timeout=0.1):
                i = key.data
                try:
                    data = key.fileobj.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    self.sel.unregister(key.fileobj)
                    key.fileobj.close()
                    del socks[i]
                    self.closed_by_agent += 1
                    reconnect[i] = time.monotonic() + 0.2
        for s in socks.values():
            s.close()

    def stop(self):
        self.stop_flag = True
        self.thread.join(10)


def test_agent_scraped_under_hostile_clients():
    """500 held connections and 16 slowloris clients, all reconnecting when
    dropped, do not keep a real Prometheus from scraping: every scrape it
    makes succeeds (how many a second is no assertion on a busy machine)."""
    app = target("calls")
    spec = tmpfile("probes-hostile.yaml")
    write_spec(spec, [count_probe("hostile", app)])
    a = Agent(spec).wait_ready()
    prom = attack = None
    try:
        a.wait_probes({"hostile": "applied"})
        loop(app, 321)
        attack = Attack(a.addr)
        time.sleep(3)  # every attacker connected (and the slow ones sent headers)
        prom = Prometheus(a.addr, "prometheus-hostile")
        prom.wait_for('cmon_hostile_calls_total{probe="hostile"}')
        # Eight scrapes under attack, however long a busy machine takes to
        # make them (Prometheus came after the attackers: all its scrapes are
        # under attack), and not one failed.
        prom.wait_for('count_over_time(up{job="cmon"}[1h]) >= 8')
        up = prom.query('min_over_time(up{job="cmon"}[1h])')
        eq(up[0]["value"][1], "1", "every scrape under attack succeeded")
        r = prom.query('cmon_hostile_calls_total{probe="hostile"}')
        eq([x["value"][1] for x in r], ["321"], "value scraped under attack")
        check(attack.max_open >= 400, "attackers held %d connections at once" % attack.max_open)
        m = a.metrics()
        check(value(m, "cmon_agent_http_connections_closed_total", reason="timeout") >= 16,
              "slow clients timed out")
        check(value(m, "cmon_agent_http_connections_closed_total", reason="evicted") >= 1,
              "held clients evicted")
        check(attack.closed_by_agent >= 16, "the agent closed attackers' connections")
    finally:
        if attack is not None:
            attack.stop()
        if prom is not None:
            prom.stop()
        eq(a.stop(), 0, "agent exit status")


def test_agent_deep_spec_and_status():
    """A spec of 100,000 '[' is refused at once: a reload of it neither
    keeps the agent from answering nor from stopping at SIGTERM; --status
    refuses a 100,000-deep answer at once too."""
    import http.server
    import threading
    spec = tmpfile("deep.yaml")
    write_spec(spec, [count_probe("shallow", target("calls"))])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"shallow": "applied"})
        tmp = spec + ".tmp"
        with open(tmp, "w") as f:
            f.write("probes: " + "[" * 100000 + "\n")
        os.rename(tmp, spec)
        a.wait_metric("cmon_agent_spec_reloads_total", 1, timeout=HANG, result="error")
        eq(a.probes()["shallow"]["state"], "applied", "the running probe stays")
        check("nested more than 64 levels deep" in a.stderr, "reload error: %r" % a.stderr[-500:])
        # Another deep file, and SIGTERM right after it: the agent stops.
        with open(tmp, "w") as f:
            f.write("{\"probes\": " + "[" * 100000 + "\n")
        os.rename(tmp, spec)
        a.signal(signal.SIGTERM)
        eq(a.p.wait(HANG), 0, "agent exit status after SIGTERM during a deep reload")
    finally:
        a.kill()

    deep = ("{\"agent\": " + "[" * 100000).encode()

    class Deep(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(deep)))
            self.end_headers()
            self.wfile.write(deep)

        def log_message(self, *args):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Deep)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        addr = "127.0.0.1:%d" % srv.server_address[1]
        code, out, err = run([CMON, "agent", "--status", "--listen", addr], timeout=HANG)
        eq((code, err), (1, "cmon: http://%s/status: not a cmon agent's status\n" % addr),
           "--status on a deep answer")
    finally:
        srv.shutdown()


def test_agent_usage_errors():
    code, out, err = run([CMON, "agent"])
    eq((code, err), (2, "cmon: --spec FILE is needed (or --status)\n"), "no spec")
    code, out, err = run([CMON, "agent", "--spec", "/nonexistent.yaml"])
    eq((code, err), (1, "cmon: /nonexistent.yaml: No such file or directory\n"), "missing spec")
    bad = tmpfile("bad.yaml")
    with open(bad, "w") as f:
        f.write("probes: 3\n")
    code, out, err = run([CMON, "agent", "--spec", bad])
    eq((code, err), (1, "cmon: %s: line 1: 'probes' must be a list\n" % bad), "unusable spec")
    code, out, err = run([CMON, "agent", "--status", "--listen", "127.0.0.1:%d" % free_port()])
    eq(code, 1, "--status with no agent")
    check(err.startswith("cmon: no agent at 127.0.0.1:"), "--status error: %r" % err)
    good = tmpfile("good.yaml")
    write_spec(good, [count_probe("x", target("calls")), {"name": "y"}])
    code, out, err = run([CMON, "agent", "--check", "--spec", good])
    eq((code, out.splitlines()[-1]), (1, "2 probes, 1 invalid"), "--check")
    fifo = tmpfile("spec.fifo")
    os.mkfifo(fifo)
    code, out, err = run([CMON, "agent", "--check", "--spec", fifo], timeout=HANG)
    eq((code, err), (1, "cmon: %s: not a regular file\n" % fifo), "--check --spec FIFO")


def test_agent_stripped_target_library_function():
    """A stripped executable is a target for its libraries' functions: its
    processes' writes counted, not another program's (the probe was in
    error: "no symbol table")."""
    app = target("calls_stripped")
    spec = tmpfile("stripped.yaml")
    write_spec(spec, [count_probe("w", app, func="libc.so.6:write")])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"w": "applied"})
        for n in (5, 6, 7):
            loop(app, n)  # one line: one write
        loop(target("calls"), 8)
        a.wait_metric("cmon_w_calls_total", 3, probe="w")
    finally:
        eq(a.stop(), 0, "agent exit status")


def test_agent_host_programs_counted():
    """The programs a probe keeps that the host's events run (cmon_migrate:
    every thread moved between CPUs on the host; exec and fork) have their
    own series and --status line: their cost is not the calls'."""
    if len(os.sched_getaffinity(0)) < 2:
        raise Skip("one CPU: no thread can be moved between CPUs")
    cpus = sorted(os.sched_getaffinity(0))[:2]
    app = target("calls")
    spec = tmpfile("probes-host.yaml")
    log = tmpfile("host.jsonl")
    write_spec(spec, [{"name": "trail", "target": app, "func": "add", "instrument": "log",
                       "log": {"path": log}}])
    a = Agent(spec).wait_ready()
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        a.wait_probes({"trail": "applied"})
        runs = {}
        for _ in range(100):  # a series that is there counts at the first round
            # Each change of affinity moves the running loop to the other CPU.
            for cpu in cpus * 5:
                os.sched_setaffinity(busy.pid, {cpu})
                time.sleep(0.01)
            runs = series(a.metrics(), "cmon_agent_bpf_host_program_runs_total", probe="trail")
            if runs.get((("probe", "trail"), ("program", "cmon_migrate")), 0) > 0:
                break
        check(runs.get((("probe", "trail"), ("program", "cmon_migrate")), 0) > 0,
              "cmon_migrate's runs counted: %r" % runs)
        secs = series(a.metrics(), "cmon_agent_bpf_host_program_run_time_seconds_total",
                      probe="trail", program="cmon_migrate")
        eq(len(secs), 1, "cmon_migrate's run time series")
        check(next(iter(secs.values())) > 0, "its run time counted: %r" % secs)
        # Not counted as the probe's calls' programs.
        progs = a.probes()["trail"]["host_programs"]
        check("cmon_migrate" in [p["name"] for p in progs], "/status host_programs: %r" % progs)
        code, out, err = run([CMON, "agent", "--status", "--listen", a.addr])
        eq(code, 0, "cmon agent --status exit status (%s)" % err)
        check("  host programs:" in out and " cmon_migrate " in out,
              "--status names cmon_migrate: %s" % out)
    finally:
        busy.kill()
        busy.wait()
        eq(a.stop(), 0, "agent exit status")
