"""examples/grafana-cmon-agent.json: a Grafana dashboard whose structure is
valid and whose queries name only metrics a real agent exposes (checked
against /metrics of an agent running count, latency and arg probes)."""
import json
import os
import re

from agentlib import Agent, run_target, write_spec
from cmonlib import ROOT, check, eq, target, tmpfile

DASH = os.path.join(ROOT, "examples", "grafana-cmon-agent.json")
PANEL_TYPES = {"timeseries", "heatmap", "table", "stat"}


def load():
    with open(DASH) as f:
        return json.load(f)


def test_grafana_dashboard_structure():
    d = load()
    for k in ("title", "uid", "panels", "templating", "schemaVersion", "time"):
        check(k in d, "dashboard has %r" % k)
    vars_ = {v["name"]: v for v in d["templating"]["list"]}
    eq(sorted(vars_), ["datasource", "probe"], "template variables")
    eq(vars_["datasource"]["type"], "datasource", "datasource variable")
    ids, cells = set(), set()
    for p in d["panels"]:
        check(p["id"] not in ids, "panel id %r unique" % p["id"])
        ids.add(p["id"])
        check(p["type"] in PANEL_TYPES, "panel type %r" % p["type"])
        check(p["title"], "panel title")
        g = p["gridPos"]
        check(0 <= g["x"] and g["x"] + g["w"] <= 24 and g["h"] > 0, "gridPos %r" % g)
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                check((x, y) not in cells, "panel %r overlaps another at %r" % (p["title"], (x, y)))
                cells.add((x, y))
        eq(p["datasource"]["uid"], "${datasource}", "panel datasource")
        check(p["targets"], "panel %r has queries" % p["title"])
        for t in p["targets"]:
            eq(t["datasource"]["uid"], "${datasource}", "target datasource")
            e = t["expr"]
            eq(e.count("(") , e.count(")"), "balanced parentheses in %r" % e)
            eq(e.count("{") - e.count("{{"), e.count("}") - e.count("}}"), "braces in %r" % e)
            for var in re.findall(r"\$(\w+)", e):
                check(var in vars_ or var.startswith("__"), "variable $%s defined" % var)


def test_grafana_metrics_exist_in_agent_exposition():
    app = target("calls")
    spec = tmpfile("probes.yaml")
    write_spec(spec, [
        {"name": "adds", "target": app, "func": "add", "instrument": "count"},
        {"name": "add_lat", "target": app, "func": "add", "instrument": "latency"},
        {"name": "add_arg", "target": app, "func": "add", "instrument": "arg", "arg": 0},
    ])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"adds": "applied", "add_lat": "applied", "add_arg": "applied"})
        run_target(app, "loop", 10)
        text = a.metrics_text()
    finally:
        a.stop()
    exposed = set(re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", text, re.M))
    used = set()
    for p in load()["panels"]:
        for t in p["targets"]:
            e = t["expr"]
            for rx in re.findall(r'__name__=~"([^"]+)"', e):
                m = [n for n in exposed if re.fullmatch(rx, n)]
                check(m, "no exposed metric matches %r (panel %r)" % (rx, p["title"]))
                used |= set(m)
            e = re.sub(r'__name__=~"[^"]+"', "", e)
            for name in re.findall(r"\b(cmon_[a-z0-9_]+)\b", e):
                check(name in exposed, "metric %s (panel %r) not in the agent's /metrics"
                      % (name, p["title"]))
                used.add(name)
    # a panel groups by labels its metric has (a "by (probe, function)" of
    # a metric without "function" drew one line per probe, labelled as if
    # per function)
    labels = {}
    for name, body in re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}", text, re.M):
        labels.setdefault(name, set()).update(re.findall(r'(\w+)="', body))
    for p in load()["panels"]:
        for t in p["targets"]:
            e = t["expr"]
            for by, inner in re.findall(r"by \(([^)]*)\) \((.*)", e):
                names = [n for rx in re.findall(r'__name__=~"([^"]+)"', inner)
                         for n in labels if re.fullmatch(rx, n)]
                names += re.findall(r"\b(cmon_[a-z0-9_]+)\b",
                                    re.sub(r'__name__=~"[^"]+"', "", inner))
                have = set().union(*(labels.get(n, set()) for n in names))
                for label in (l.strip() for l in by.split(",")):
                    check(label in have, "panel %r groups by %r, which %r lack"
                          % (p["title"], label, names))
    for want in ("cmon_agent_probe_hits_total", "cmon_add_lat_seconds_bucket",
                 "cmon_add_arg_arg_bucket", "cmon_probe_state", "cmon_agent_events_lost_total"):
        check(want in used, "the dashboard shows %s" % want)
