"""Hostile input, signals and shared paths (issue 23): nothing a user, an
editor or another user of the machine puts in cmon's way crashes it,
leaves a target stopped, takes over a socket or grows without bound."""
import json
import os
import signal

from agentlib import Agent, count_probe, run_target, value, write_spec
from cmonlib import CMON, check, eq, run, target, tmpfile


def _deep_spec(path, app, expr):
    """A spec of a plain counting probe and one whose `if:` is EXPR."""
    with open(path + ".tmp", "w") as f:
        f.write("probes:\n"
                "  - name: ok\n    target: %s\n    func: add\n    instrument: count\n"
                "  - name: deep\n    target: %s\n    func: add\n    instrument: count\n"
                "    if: %s\n" % (app, app, json.dumps(expr)))
    os.rename(path + ".tmp", path)


def test_deep_expression_refused_cli_check_and_running_agent():
    """30,000 '(' or 100,000 '!' in --if / if: overflowed the recursive
    parser (exit 139): cmon trace, cmon-agent --check and a running agent
    whose spec is replaced now say one line and go on."""
    app = target("calls")
    parens = "(" * 30000 + "a" + ")" * 30000
    nots = "!" * 100000 + "a"
    for expr in (parens, nots):
        code, out, err = run([CMON, "trace", "--func", "add", "--if", expr, "--", app, "loop",
                              "1"])
        eq((code, err), (2, "cmon: --if: nested deeper than 64 levels at column 65: %s...\n"
                         % expr[:200]), "trace --if of %d bytes" % len(expr))
    spec = tmpfile("deep-if.yaml")
    _deep_spec(spec, app, parens)
    code, out, err = run([CMON, "agent", "--check", "--spec", spec])
    eq((code, out.splitlines()),
       (1, ["%s: ok: ok (count on %s)" % (spec, app),
            "%s: deep: line 10: 'if': nested deeper than 64 levels at column 65: %s..."
            % (spec, parens[:200]), "2 probes, 1 invalid"]), "cmon agent --check")

    write_spec(spec, [count_probe("ok", app)])
    a = Agent(spec).wait_ready()
    try:
        a.wait_probes({"ok": "applied"})
        _deep_spec(spec, app, nots)
        probes = a.wait_probes({"ok": "applied", "deep": "error"})
        eq(probes["deep"]["error"], "line 10: 'if': nested deeper than 64 levels at column 65: "
           "%s..." % nots[:200], "the deep probe's error")
        eq(run_target(app, "loop", 100), "loop sum=5050\n", "target output")
        eq(value(a.metrics(), "cmon_ok_calls_total", probe="ok"), 100, "the kept probe counts")
        check(a.p.poll() is None, "the agent runs")
    finally:
        eq(a.stop(), 0, "agent exit status (%s)" % a.stderr[-500:])
