"""Processes in containers, selected by cgroup (issue 25): a Debian root
filesystem made with debootstrap (tools/test-rootfs.sh, kept between
runs), processes started in it with unshare + chroot in cgroups made for
the test, and with Podman.  The traced program lives at a path that does
not exist on the host; a second container running the same program is
not traced; a process started after cmon is picked up; records carry
their cgroup."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

from cmonlib import (Skip, assert_no_leak, bpf_snapshot, check, cmon, eq,
                     kill_quietly, read_text, run, target, tmpdir, trace_bg)

PROG = "typed_O2"  # `typed loop 0`: sum_ints(v, 4) every ms, until killed


def cgroup2_root():
    """Where the cgroup v2 hierarchy is mounted (read from /proc/mounts)."""
    with open("/proc/mounts") as f:
        for line in f:
            w = line.split()
            if len(w) > 2 and w[2] == "cgroup2":
                return w[1]
    raise Skip("no cgroup v2 hierarchy mounted")


ROOTFS = os.environ.get("CMON_TEST_ROOTFS", "/var/cache/cmon-test/rootfs-bookworm")


def rootfs():
    """The cached Debian root filesystem (`make test` makes it before the
    tests run: debootstrap takes minutes, more than a test's time)."""
    if not os.access(os.path.join(ROOTFS, "bin", "sh"), os.X_OK):
        raise Skip("no Debian root filesystem at %s (tools/test-rootfs.sh makes it; make "
                   "test runs it)" % ROOTFS)
    return ROOTFS


class Lab:
    """A cgroup made for the test (children A, B ...), the test program at
    a path of the root filesystem the host does not have, and the
    processes started in them, all removed at the end."""

    def __init__(self, root):
        self.root = root
        self.cg = os.path.join(cgroup2_root(), "cmon-it-%d-%d" % (os.getpid(),
                                                                  time.monotonic_ns()))
        os.mkdir(self.cg)
        self.app_dir = "/opt/cmon-it-%d" % os.getpid()  # inside the container
        check(not os.path.exists(self.app_dir), "%s exists on the host" % self.app_dir)
        os.makedirs(root + self.app_dir)
        self.app = os.path.join(self.app_dir, PROG)
        shutil.copy(target(PROG), root + self.app)
        self.procs = []

    def group(self, name):
        path = os.path.join(self.cg, name)
        os.makedirs(path, exist_ok=True)
        return path

    def start(self, group, *args, prog=None):
        """`unshare -m chroot ROOT PROG ARGS` in cgroup GROUP (default: the
        test program, `loop 0`): its pid."""
        procs = os.path.join(self.group(group), "cgroup.procs")

        def enter():
            with open(procs, "w") as f:
                f.write(str(os.getpid()))

        prog = prog or self.app
        p = subprocess.Popen(["unshare", "-m", "chroot", self.root, prog] +
                             list(args or ("loop", "0")), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, preexec_fn=enter)
        self.procs.append(p)
        # unshare and chroot exec in place: the pid is the program's
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                if os.readlink("/proc/%d/exe" % p.pid).endswith(prog):
                    return p.pid
            except OSError:
                pass
            time.sleep(0.01)
        raise AssertionError("%s did not start in %s" % (prog, group))

    def close(self):
        for p in self.procs:
            kill_quietly(p.pid)
            p.wait()
        for d, subdirs, _ in sorted(os.walk(self.cg), key=lambda x: -len(x[0])):
            try:
                os.rmdir(d)
            except OSError:
                pass
        shutil.rmtree(self.root + self.app_dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def rel(path):
    return path[len(cgroup2_root()):] or "/"


def records(bg):
    return [json.loads(l) for l in read_text(bg.out_path).splitlines()]


def test_cgroup_chroot_only_its_processes_typed_and_labelled():
    """--cgroup A: the process in A's child cgroup (below it) is traced,
    typed from the program's DWARF read through /proc/PID/root, each record
    labelled with its own cgroup; the same program in B is not; a process
    started in A after cmon attached is picked up."""
    with Lab(rootfs()) as lab:
        first = lab.start("A/one")
        other = lab.start("B")
        before = bpf_snapshot()
        bg = trace_bg(["sum_ints"], ["--cgroup", lab.group("A")], fmt="json")
        try:
            bg.wait_attached(timeout=60)
            sleeper = lab.start("A/two", "60", prog="/bin/sleep")
            later = lab.start("A/two")
            end = time.monotonic() + 20
            while time.monotonic() < end and \
                    not (any(r["pid"] == later for r in records(bg)) and
                         "/bin/sleep, which" in bg.stderr):
                time.sleep(0.1)
            bg.signal(signal.SIGINT)
            eq(bg.wait(), 0, "exit status (%s)" % bg.stderr)
        finally:
            bg.kill()
        rows = records(bg)
        eq(sorted({r["pid"] for r in rows}), sorted([first, later]),
           "processes traced (B's %d is not)" % other)
        eq({(r["pid"], r["cgroup"]) for r in rows},
           {(first, rel(lab.group("A/one"))), (later, rel(lab.group("A/two")))},
           "each record's cgroup")
        eq({(r["args"]["n"], r["retval"]) for r in rows}, {(4, 100)},
           "sum_ints({1, 2, 3, 94}, 4) typed")
        check("cmon: process %d in cgroup %s runs %s/bin/sleep, which none of its processes "
              "ran when cmon started: it is not traced (run cmon again to cover it)\n"
              % (sleeper, rel(lab.group("A")), lab.root) in bg.stderr.replace("/usr/bin/", "/bin/"),
              "the process running another file: %r" % bg.stderr)
        assert_no_leak(before)


def test_cgroup_debug_file_in_the_container():
    """A stripped program whose debug file is only in the container's own
    /usr/lib/debug/.build-id (read through /proc/PID/root): typed; `cmon
    profile --cgroup` counts its calls only; `cmon capture --cgroup` keeps
    its calls, typed, and its cgroup (`cmon ls`, `show`, `export`)."""
    with Lab(rootfs()) as lab:
        dbg = os.path.join(tmpdir(), "typed.debug")
        full = lab.root + lab.app
        for cmd in (["objcopy", "--only-keep-debug", full, dbg], ["strip", "--strip-all", full]):
            code, _, err = run(cmd)
            eq(code, 0, "%s: %s" % (" ".join(cmd), err))
        code, out, _ = run(["readelf", "-n", full])
        bid = re.search(r"Build ID: ([0-9a-f]+)", out).group(1)
        at = "%s/usr/lib/debug/.build-id/%s/%s.debug" % (lab.root, bid[:2], bid[2:])
        os.makedirs(os.path.dirname(at), exist_ok=True)
        shutil.copy(dbg, at)
        try:
            pid = lab.start("A")
            lab.start("B")
            path = os.path.join(tmpdir(), "cg.json")
            code, out, err = cmon(["trace", "-q", "-F", "json", "-o", path, "--no-debuginfod",
                                   "--cgroup", lab.group("A"), "--func", "sum_ints",
                                   "--max-events", "3"], timeout=60)
            eq(code, 0, "exit status (%s)" % err)
            rows = [json.loads(l) for l in read_text(path).splitlines()]
            eq([(r["pid"], r["args"]["n"], r["retval"]) for r in rows], [(pid, 4, 100)] * 3,
               "typed from the container's debug file")
            code, out, err = cmon(["profile", "-F", "json", "--no-debuginfod", "--cgroup",
                                   lab.group("A"), "--func", "sum_ints", "--per-pid",
                                   "--duration", "1"], timeout=60)
            eq(code, 0, "profile: exit status (%s)" % err)
            check(re.search(r'"pid": ?%d\b' % pid, out) and out.count('"pid"') == 1,
                  "profile: only A's process: %s" % out[:600])
            store = os.path.join(tmpdir(), "cg-store")
            code, out, err = cmon(["capture", "-q", "-o", store, "--no-debuginfod", "--cgroup",
                                   lab.group("A"), "--func", "sum_ints", "--max-events", "2"],
                                  timeout=60)
            eq(code, 0, "capture: exit status (%s)" % err)
            code, out, err = cmon(["ls", store])
            eq(code, 0, "cmon ls: exit status (%s)" % err)
            procs = out[out.index("\n1 process\n"):].splitlines()[2:]
            eq([(l.split()[0], l.split()[1], l.split()[2], l.split()[-1]) for l in procs],
               [("PID", "COMM", "CALLS", "CGROUP"), (str(pid), PROG, "2", rel(lab.group("A")))],
               "cmon ls: the process's cgroup")
            check("long int sum_ints(const int32_t *values, int n)" in out,
                  "capture: typed from the container's debug file: %s" % out)
            code, out, err = cmon(["show", store, "sum_ints", "1"])
            eq(code, 0, "cmon show: exit status (%s)" % err)
            eq(out.splitlines()[1:3], ["pid        %d (%s)" % (pid, PROG),
                                       "cgroup     %s" % rel(lab.group("A"))],
               "cmon show: the call's process and its cgroup")
            code, _, err = cmon(["export", store, "-F", "json", "-o", store + "-json"])
            eq(code, 0, "cmon export -F json: exit status (%s)" % err)
            rows = [json.loads(l) for l in read_text(store + "-json/sum_ints.jsonl").splitlines()]
            eq([(r["call"], r["pid"], r["args"]["n"], r["retval"], r["cgroup"]) for r in rows],
               [(1, pid, 4, 100, rel(lab.group("A"))), (2, pid, 4, 100, rel(lab.group("A")))],
               "cmon export -F json: each call's cgroup")
            code, _, err = cmon(["export", store, "-F", "csv", "-o", store + "-csv"])
            eq(code, 0, "cmon export -F csv: exit status (%s)" % err)
            lines = read_text(store + "-csv/sum_ints.csv").splitlines()
            eq([(l.split(",")[-1], l.split(",")[-2]) for l in lines],
               [("call", "cgroup"), ("1", rel(lab.group("A"))), ("2", rel(lab.group("A")))],
               "cmon export -F csv: a cgroup column")
        finally:
            os.unlink(at)


def test_cgroup_and_container_bad_input():
    """A cgroup path that does not exist, a cgroup v1 directory, a file,
    a container id that matches none or two: one line, exit 1, no probe."""
    cg2 = cgroup2_root()
    before = bpf_snapshot()
    fake = os.path.join(cg2, "cmon-it-fake-%d" % os.getpid())
    v1 = None
    with open("/proc/mounts") as f:
        for line in f:
            w = line.split()
            if len(w) > 2 and w[2] == "cgroup":
                v1 = w[1]
                break
    os.mkdir(fake)
    try:
        for d in ("libpod-" + "abcd" + "1" * 60, "libpod-" + "abcd" + "2" * 60):
            os.mkdir(os.path.join(fake, d))
        cases = [
            (["--cgroup", "/nonexistent/cgroup"],
             "cmon: cgroup /nonexistent/cgroup: No such file or directory\n"),
            (["--cgroup", "/etc/hostname"],
             "cmon: cgroup /etc/hostname: not a directory (a cgroup v2 directory, such as "
             "%s/...)\n" % cg2),
            (["--cgroup", "/tmp"], "cmon: cgroup /tmp: not a cgroup v2 directory (the "
             "hierarchy is mounted at %s)\n" % cg2),
            (["--container", "feedfacefeedface"], "cmon: container feedfacefeedface: no "
             "container's cgroup matches (searched the cgroup v2 hierarchy at %s)\n" % cg2),
            (["--container", "abcd"], "cmon: container abcd: matches 2 containers "
             "(abcd11111111, abcd22222222): give more of its id\n"),
            (["--container", "ABCD"], "cmon: container ABCD: not a container id (4 to 64 "
             "lowercase hex digits)\n"),
        ]
        if v1:
            cases.append((["--cgroup", v1], "cmon: cgroup %s: a cgroup v1 directory: cmon "
                          "selects by cgroup v2, mounted here at %s\n" % (v1, cg2)))
        for args, want in cases:
            for cmd in ("trace", "profile"):
                code, out, err = cmon([cmd] + args + ["--func", "sum_ints"])
                eq((code, err), (1, want), "%s %s" % (cmd, " ".join(args)))
        code, _, err = cmon(["trace", "--cgroup", fake, "--follow", "--func", "x"])
        eq((code, err), (2, "cmon: trace: --cgroup takes no --follow (every process of the "
                            "cgroup is traced already)\n"), "--cgroup --follow")
    finally:
        for d in os.listdir(fake) if os.path.isdir(fake) else []:
            if os.path.isdir(os.path.join(fake, d)):
                os.rmdir(os.path.join(fake, d))
        os.rmdir(fake)
    assert_no_leak(before)


# ---------------------------------------------------------------- Podman

def podman(*args, timeout=120):
    return run(["podman", "--cgroup-manager=cgroupfs"] + list(args), timeout=timeout)


def podman_run(lab, parent):
    """The test program in a Podman container (--rootfs) under cgroup
    PARENT: its id."""
    code, out, err = podman("run", "-d", "--rm", "--runtime", "runc", "--network", "none",
                            "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
                            "--cgroup-parent", parent, "--rootfs", lab.root, lab.app, "loop", "0")
    if code:
        raise Skip("podman cannot run a container here: %s" % err.strip()[-300:])
    return out.strip().splitlines()[-1]


def container_pid(cid):
    code, out, err = podman("inspect", "--format", "{{.State.Pid}}", cid)
    eq(code, 0, "podman inspect: %s" % err)
    return int(out)


def test_podman_container_by_id_and_cgroup():
    """--container ID (a prefix of Podman's id): only that container's
    process, labelled with its cgroup (libpod-ID); another container of
    the same root filesystem is not traced; with --cgroup of their parent,
    a container started after cmon is picked up."""
    if not shutil.which("podman") or not shutil.which("runc"):
        raise Skip("no podman/runc (Debian packages podman runc conmon)")
    with Lab(rootfs()) as lab:
        parent = rel(lab.group("pods"))
        ids = []
        try:
            ids.append(podman_run(lab, parent))
            ids.append(podman_run(lab, rel(lab.group("others"))))
            first, second = (container_pid(i) for i in ids)
            path = os.path.join(tmpdir(), "ctr.json")
            code, out, err = cmon(["trace", "-q", "-F", "json", "-o", path, "--container",
                                   ids[0][:12], "--func", "sum_ints", "--max-events", "5"],
                                  timeout=60)
            eq(code, 0, "--container: exit status (%s)" % err)
            rows = [json.loads(l) for l in read_text(path).splitlines()]
            eq({(r["pid"], r["cgroup"], r["args"]["n"]) for r in rows},
               {(first, "%s/libpod-%s" % (parent, ids[0]), 4)},
               "only the named container (not %d), labelled" % second)
            bg = trace_bg(["sum_ints"], ["--cgroup", lab.group("pods")], fmt="json")
            try:
                bg.wait_attached(timeout=60)
                ids.append(podman_run(lab, parent))
                third = container_pid(ids[-1])
                end = time.monotonic() + 20
                while time.monotonic() < end and \
                        not any(r["pid"] == third for r in records(bg)):
                    time.sleep(0.1)
                bg.signal(signal.SIGINT)
                eq(bg.wait(), 0, "exit status (%s)" % bg.stderr)
            finally:
                bg.kill()
            eq({r["pid"] for r in records(bg)}, {first, third},
               "the parent's containers, the one started later too")
        finally:
            for i in ids:
                podman("rm", "-f", "-t", "0", i)


def test_agent_cgroup_label():
    """The agent's cgroup: counts the processes of the cgroup and below it
    (the program's file named as the host sees it), its series labelled
    with the cgroup; the same program elsewhere is not counted."""
    from agentlib import Agent, value, write_spec
    with Lab(rootfs()) as lab:
        spec = os.path.join(tmpdir(), "cg.yaml")
        write_spec(spec, [{"name": "cg", "target": lab.root + lab.app, "func": "sum_ints",
                           "instrument": "count", "cgroup": lab.group("A")}])
        a = Agent(spec).wait_ready()
        try:
            a.wait_probes({"cg": "applied"}, timeout=30)
            lab.start("A/x", "loop", "20")
            lab.start("B", "loop", "30")
            a.wait_metric("cmon_cg_calls_total", 20, timeout=30, probe="cg",
                          cgroup=rel(lab.group("A")))
        finally:
            eq(a.stop(), 0, "agent exit status")


def test_agent_cgroup_per_pid_labels_bounded():
    """per_pid with cgroup: each labelled process's series carries its own
    cgroup, bounded by max_pids as the pid labels are: with max_pids 1 and
    two processes below the cgroup, one pid with its cgroup and "other"
    with the named cgroup."""
    from agentlib import Agent, series, write_spec
    with Lab(rootfs()) as lab:
        spec = os.path.join(tmpdir(), "cg-perpid.yaml")
        write_spec(spec, [{"name": "cg", "target": lab.root + lab.app, "func": "sum_ints",
                           "instrument": "count", "cgroup": lab.group("A"), "per_pid": True,
                           "max_pids": 1}])
        a = Agent(spec).wait_ready()
        try:
            a.wait_probes({"cg": "applied"}, timeout=30)
            own = {lab.start("A/x"): rel(lab.group("A/x")),
                   lab.start("A/y"): rel(lab.group("A/y"))}
            end = time.monotonic() + 30
            got = set()
            while time.monotonic() < end:
                got = {(dict(l)["pid"], dict(l)["cgroup"])
                       for l in series(a.metrics(), "cmon_cg_calls_total", probe="cg")}
                if len(got) >= 2 and any(p == "other" for p, _ in got):
                    break
                time.sleep(0.1)
            labelled = [p for p, _ in got if p != "other"]
            eq(len(labelled), 1, "one process labelled (max_pids 1): %r" % got)
            eq(got, {(labelled[0], own.get(int(labelled[0]))), ("other", rel(lab.group("A")))},
               "pid and cgroup labels")
        finally:
            eq(a.stop(), 0, "agent exit status")
