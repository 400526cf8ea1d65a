"""Running on a fleet (examples/fleet): the systemd unit and the Kubernetes
DaemonSet give the agent exactly the capabilities it uses, no more; the
agent run with exactly those counts calls and ends holding only the five
it keeps; one fewer is a one-line error, not an agent serving nothing."""
import os
import re
import shutil
import subprocess
import time

from agentlib import Agent, run_target, value
from cmonlib import CMON, ROOT, Skip, assert_no_leak, bpf_snapshot, check, eq, run, target, tmpfile

FLEET = os.path.join(ROOT, "examples", "fleet")
UNIT = os.path.join(FLEET, "cmon-agent.service")
KEPT_CAPS = "000000c000280004"  # bpf, perfmon, sys_admin, sys_ptrace, dac_read_search


def unit_settings():
    out = {}
    for line in open(UNIT):
        line = line.strip()
        if line and not line.startswith(("#", "[")) and "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


def unit_caps():
    return unit_settings()["CapabilityBoundingSet"].split()


def setpriv_prefix(caps):
    if not shutil.which("setpriv"):
        raise Skip("setpriv (util-linux) is not installed")
    names = ",".join("+" + c[len("CAP_"):].lower() for c in caps)
    return ["setpriv", "--bounding-set=-all," + names, "--inh-caps=-all", "--no-new-privs"]


def spec_for(app):
    spec = tmpfile("fleet.yaml")
    with open(spec, "w") as f:
        f.write("probes:\n  - name: adds\n    target: %s\n    func: add\n"
                "    instrument: count\n" % app)
    return spec


def test_fleet_unit_caps_suffice():
    before = bpf_snapshot()
    caps = unit_caps()
    eq(sorted(caps), sorted(["CAP_BPF", "CAP_PERFMON", "CAP_SYS_ADMIN", "CAP_SYS_PTRACE",
                             "CAP_DAC_READ_SEARCH", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"]),
       "the unit's capabilities")
    eq(unit_settings().get("NoNewPrivileges"), "yes", "NoNewPrivileges")
    app = target("calls")
    a = Agent(spec_for(app), prefix=setpriv_prefix(caps)).wait_ready()
    try:
        a.wait_probes({"adds": "applied"})
        run_target(app, "loop", 100)
        a.wait_metric("cmon_adds_calls_total", 100, probe="adds")
        with open("/proc/%d/status" % a.pid) as f:
            st = dict(l.split(":", 1) for l in f if ":" in l)
        eq((st["CapEff"].strip(), st["CapPrm"].strip(), st["CapBnd"].strip()),
           (KEPT_CAPS, KEPT_CAPS, KEPT_CAPS), "what the agent holds after its first apply")
        check("warning" not in a.stderr, "no warning: %s" % a.stderr)
    finally:
        eq(a.stop(), 0, "agent exit status")
    assert_no_leak(before)


def test_fleet_one_cap_fewer():
    """Without CAP_SETUID its HTTP threads cannot become nobody: a one-line
    error and a nonzero exit, nothing attached (before, it said "ready"
    and refused every connection)."""
    before = bpf_snapshot()
    caps = [c for c in unit_caps() if c != "CAP_SETUID"]
    code, _, err = run(setpriv_prefix(caps) + [CMON, "agent", "--spec", spec_for(target("calls")),
                                               "--listen", "127.0.0.1:0"], timeout=60)
    check(code != 0, "exit status %d" % code)
    lines = [l for l in err.splitlines() if not l.startswith("cmon: probe cost")]
    eq(lines, ["cmon: the HTTP threads run as nobody: CAP_SETUID and CAP_SETGID are needed to "
               "become it (and CAP_SETPCAP to empty the bounding set), or --keep-privileges"],
       "the error")
    assert_no_leak(before)


def test_fleet_unit_verifies():
    if not shutil.which("systemd-analyze"):
        raise Skip("systemd-analyze is not installed")
    path = tmpfile("cmon-agent.service")
    with open(UNIT) as f:
        text = f.read().replace("/usr/local/bin/cmon", CMON)
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True,
                       timeout=60)
    mine = [l for l in p.stderr.splitlines() if "cmon-agent.service" in l]
    eq(mine, [], "systemd-analyze verify says nothing of the unit")


def test_fleet_daemonset():
    try:
        import yaml
    except ImportError:
        raise Skip("python3-yaml is not installed")
    with open(os.path.join(FLEET, "cmon-agent-daemonset.yaml")) as f:
        ds = yaml.safe_load(f)
    eq(ds["kind"], "DaemonSet", "kind")
    pod = ds["spec"]["template"]["spec"]
    eq(pod.get("hostPID"), True, "hostPID: the host's processes")
    c = pod["containers"][0]
    sc = c["securityContext"]
    eq(sc.get("privileged"), False, "not privileged")
    eq(sc.get("allowPrivilegeEscalation"), False, "no privilege escalation")
    eq(sc["capabilities"]["drop"], ["ALL"], "everything dropped")
    eq(sorted("CAP_" + x for x in sc["capabilities"]["add"]), sorted(unit_caps()),
       "the same capabilities as the systemd unit")
    eq(ds["spec"]["selector"]["matchLabels"], ds["spec"]["template"]["metadata"]["labels"],
       "the selector matches the pods")
    cmd = c["command"]
    eq(cmd[:2], ["/usr/local/bin/cmon", "agent"], "runs the agent")
    spec = cmd[cmd.index("--spec") + 1]
    port = int(cmd[cmd.index("--listen") + 1].rsplit(":", 1)[1])
    eq([p["containerPort"] for p in c["ports"]], [port], "the port it listens on")
    eq(str(port), ds["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"],
       "the port Prometheus scrapes")
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in pod["volumes"]}
    eq(sorted(mounts), sorted(vols), "every mount has its volume")
    check(any(spec.startswith(m["mountPath"] + "/") and "configMap" in vols[n]
              for n, m in mounts.items()), "the spec comes from a ConfigMap: %s" % spec)
    eq(mounts["host"]["readOnly"], True, "the host's files read-only")
    # The example spec is one the agent takes.
    code, out, err = run([CMON, "agent", "--check", "--spec",
                          os.path.join(FLEET, "probes.yaml")])
    eq((code, out.splitlines()[-2:]),
       (0, ["%s: budget: the probes may cost 1%% of one CPU" % os.path.join(FLEET, "probes.yaml"),
            "2 probes, 0 invalid"]), "cmon agent --check: %s" % err)
