"""Records into ClickHouse (-o clickhouse://, the agent's log: {clickhouse:}):
a real clickhouse-server per test (chlib.py), the table queried back."""
import json
import os
import re
import signal
import socket
import subprocess
import time

from agentlib import Agent, value, write_spec
from chlib import ClickHouse, DropReplyProxy
from cmonlib import (Background, bpf_snapshot, assert_no_leak, check, cmon, eq, stderr_lines,
                     summary, target)
from test_typed import ALL_EXPECTED, ALL_FUNCS, check_all

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "clickhouse")


def as_records(rows):
    """Table rows as the JSON writer's records (check_all reads those)."""
    recs = []
    for r in rows:
        rec = {"func": r["function"], "status": r["status"], "ret": r["ret"]}
        if r["args"]:
            rec["args"] = json.loads(r["args"])
        if r["retval"]:
            rec["retval"] = json.loads(r["retval"])
        for i, v in enumerate(r["regs"]):
            rec["arg%d" % i] = v
        recs.append(rec)
    return recs


def trace_to(ch, funcs, launch, url=None, extra=(), kind="trace"):
    args = [kind, "-o", url or ch.url()] + [a for f in funcs for a in ("--func", f)]
    return cmon(args + list(extra) + ["--"] + launch, timeout=120)


def test_clickhouse_typed_calls():
    """`typed all`: every call once, its typed arguments and return exact
    (as the JSON writer gives them), the raw registers, and who made it."""
    with ClickHouse() as ch:
        code, out, err = trace_to(ch, ALL_FUNCS, [target("typed_O2"), "all"])
        eq(code, 0, "exit status (%s)" % err)
        eq(summary(err)["written"], len(ALL_EXPECTED), "events written")
        rows = ch.rows("SELECT *, toUInt32(ts) AS ts_sec FROM cmon.calls ORDER BY ts_ns")
        eq(len(rows), len(ALL_EXPECTED), "rows in the table")
        check_all(as_records(rows), "typed_O2")
        pids = {r["pid"] for r in rows}
        eq(len(pids), 1, "one process")
        for r in rows:
            eq(r["host"], socket.gethostname(), "host")
            eq(r["comm"], "typed_O2", "comm")
            eq(r["module"], "typed_O2", "module")
            eq(r["tid"], r["pid"], "tid of a one-thread program")
            eq(r["sampled"], 1, "sampled: every call")
            eq(r["ts_sec"], r["ts_ns"] // 10**9, "ts is ts_ns in seconds")
            check(r["rss_entry"] > 0 and r["vms_entry"] >= r["rss_entry"], "memory of a call")
        e = [r for r in rows if r["function"] == "eight"][0]
        eq(e["regs"], [1, -2, 3, -4, 5, -6], "eight's raw registers")
        eq(e["ret"], 4886718335, "eight's raw return")
        eq(len({(r["batch"], r["seq"]) for r in rows}), len(rows), "(batch, seq) unique")
        # The table as made: MergeTree, per function and time.
        eng = ch.rows("SELECT engine, sorting_key, partition_key FROM system.tables "
                      "WHERE database = 'cmon' AND name = 'calls'")
        eq(eng, [{"engine": "MergeTree", "sorting_key": "function, ts",
                  "partition_key": "toYYYYMMDD(ts)"}], "the table cmon made")


def test_clickhouse_capture():
    """`cmon capture -o clickhouse://`: the captured values in a column."""
    with ClickHouse() as ch:
        code, out, err = trace_to(ch, ["sum_ints"], [target("typed_O2"), "all"], kind="capture",
                                  extra=["--capture", "v=values[n]"])
        eq(code, 0, "exit status (%s)" % err)
        rows = ch.rows("SELECT args, captures, retval FROM cmon.calls ORDER BY ts_ns")
        eq([json.loads(r["captures"]) for r in rows],
           [{"v": [1, -2, 3, 40000, -5]}, {"v": [7, 8, 9]}], "captures")
        eq([json.loads(r["retval"]) for r in rows], [39997, 24], "returns")


def loop_rows_exact(rows, n):
    """sum_buf of `typed loop N`, call k returns 2016 + k % 256: every call
    there once, in order, with its own value."""
    eq(len(rows), n, "rows")
    eq([r["retval"] for r in rows], [str(2016 + k % 256) for k in range(n)],
       "each call's return, in order")


def test_clickhouse_server_restarted():
    """The server killed mid-run and started again: no duplicate, no gap
    (every call in the table once), nothing counted lost."""
    n = 3000
    ch = ClickHouse().start()
    try:
        bg = Background(["trace", "-o", ch.url(flush_ms=100, linger_ms=100000),
                         "--func", "sum_buf", "--", target("typed_O2"), "loop", str(n)])
        end = time.monotonic() + 60
        while int(ch.query("SELECT count() FROM system.tables WHERE database = 'cmon'")) == 0 \
                or int(ch.query("SELECT count() FROM cmon.calls")) < 100:
            check(time.monotonic() < end and bg.p.poll() is None,
                  "rows did not arrive: %s" % bg.stderr)
            time.sleep(0.05)
        ch.stop(signal.SIGKILL)
        time.sleep(1)  # the program goes on calling; cmon holds the records
        ch.start()
        eq(bg.wait(120), 0, "exit status (%s)" % bg.stderr)
        err = bg.stderr
        check(re.search(r"clickhouse 127\.0\.0\.1:\d+/cmon\.calls: no answer", err),
              "the outage said once: %s" % err)
        eq(len(re.findall(r"no answer", err)), 1, "the outage said once: %s" % err)
        eq(summary(err)["written"], n, "events written")
        check("not written" not in err, "nothing lost: %s" % err)
        rows = ch.rows("SELECT retval FROM cmon.calls ORDER BY ts_ns")
        loop_rows_exact(rows, n)
    finally:
        ch.stop()


def test_clickhouse_unanswered_insert_not_repeated():
    """An INSERT the server took but whose answer never came (a proxy cuts
    it): cmon asks before sending it again, and the rows are there once."""
    with ClickHouse() as ch:
        proxy = DropReplyProxy(ch.http, drop_insert=2)
        url = "clickhouse://127.0.0.1:%d/cmon.calls?batch=100" % proxy.port
        code, out, err = trace_to(ch, ["sum_buf"], [target("typed_O2"), "loop", "500"], url=url)
        eq(code, 0, "exit status (%s)" % err)
        eq(proxy.dropped, 1, "answers the proxy cut")
        check(re.search(r"no answer \(Input/output error", err) or "no answer" in err,
              "the cut answer said: %s" % err)
        eq(summary(err)["written"], 500, "events written")
        loop_rows_exact(ch.rows("SELECT retval FROM cmon.calls ORDER BY ts_ns"), 500)
        proxy.close()


def test_clickhouse_server_gone_counted():
    """The server gone for good: what cmon held is counted as not written
    (exit 1), what the table has plus that is every call; a small buffer
    drops and counts the rest."""
    n = 2000
    ch = ClickHouse().start()
    try:
        bg = Background(["trace", "-o", ch.url(flush_ms=50, linger_ms=300, buffer="1M"),
                         "--func", "sum_buf", "--", target("typed_O2"), "loop", str(n)])
        end = time.monotonic() + 60
        while int(ch.query("SELECT count() FROM system.tables WHERE database = 'cmon'")) == 0 \
                or int(ch.query("SELECT count() FROM cmon.calls")) < 50:
            check(time.monotonic() < end and bg.p.poll() is None, "no rows: %s" % bg.stderr)
            time.sleep(0.05)
        ch.stop()
        code = bg.wait(120)
        err = bg.stderr
        ch.start()
        in_table = int(ch.query("SELECT count() FROM cmon.calls"))
        not_written = int(re.search(r"events not written: (\d+)", err).group(1))
        eq(summary(err)["written"], in_table, "written is what the table has")
        eq(in_table + not_written, n, "in the table + not written")
        check(re.search(r"clickhouse 127\.0\.0\.1:\d+/cmon\.calls: %d records not inserted"
                        % not_written, err), "the loss said: %s" % err)
        eq(code, 1, "exit status: the output failed (%s)" % err)
        uniq = int(ch.query("SELECT uniqExact(ts_ns) FROM cmon.calls"))
        eq(uniq, in_table, "no duplicate")
    finally:
        ch.stop()


def test_clickhouse_bad_input():
    """One line each, nothing attached: a URL that does not parse, nothing
    listening, a table whose columns do not fit, a server answering an
    error (an unknown user)."""
    before = bpf_snapshot()
    launch = [target("typed_O2"), "all"]
    code, out, err = cmon(["trace", "-o", "clickhouse://127.0.0.1:80/a.b.c", "--func", "greet",
                           "--"] + launch)
    eq((code, stderr_lines(err)),
       (2, ["cmon: trace: -o: bad ClickHouse URL: bad table name (letters, digits, _)"]),
       "bad URL")
    port = socket.socket()
    port.bind(("127.0.0.1", 0))  # bound, not listening: refused
    code, out, err = cmon(["trace", "-o", "clickhouse://127.0.0.1:%d/d.t" % port.getsockname()[1],
                           "--func", "greet", "--"] + launch)
    port.close()
    eq(code, 1, "nothing listening: exit status")
    eq(len(stderr_lines(err)), 1, "nothing listening: one line (%s)" % err)
    check(re.match(r"cmon: clickhouse 127\.0\.0\.1:\d+/d\.t: no answer \(Connection refused",
                   err), "nothing listening: %s" % err)
    with ClickHouse() as ch:
        ch.query("CREATE DATABASE IF NOT EXISTS cmon")
        ch.query("CREATE TABLE cmon.other (function String, latency_ns String, ts DateTime) "
                 "ENGINE = MergeTree ORDER BY ts")
        code, out, err = cmon(["trace", "-o", ch.url("cmon.other"), "--func", "greet", "--"]
                              + launch)
        eq((code, stderr_lines(err)),
           (1, ["cmon: clickhouse 127.0.0.1:%d/cmon.other: table cmon.other has no column host "
                "(String): it was not made by cmon" % ch.http]), "a foreign table")
        # a table with cmon's columns but one type changed
        code, out, err = trace_to(ch, ["greet"], launch, url=ch.url("cmon.mine"))
        eq(code, 0, "made cmon.mine (%s)" % err)
        ch.query("ALTER TABLE cmon.mine MODIFY COLUMN seq UInt64")
        code, out, err = cmon(["trace", "-o", ch.url("cmon.mine"), "--func", "greet", "--"]
                              + launch)
        eq((code, stderr_lines(err)),
           (1, ["cmon: clickhouse 127.0.0.1:%d/cmon.mine: table cmon.mine: column seq is "
                "UInt64, cmon writes UInt32" % ch.http]), "a column of another type")
        url = "clickhouse://nobody:pw@127.0.0.1:%d/cmon.calls" % ch.http
        code, out, err = cmon(["trace", "-o", url, "--func", "greet", "--"] + launch)
        eq(code, 1, "unknown user: exit status")
        eq(len(stderr_lines(err)), 1, "unknown user: one line (%s)" % err)
        check(re.match(r"cmon: clickhouse 127\.0\.0\.1:\d+/cmon\.calls: Code: 192, .*nobody",
                       err), "the server's answer: %s" % err)
        check("pw" not in err.replace("pw@", ""), "no password in %s" % err)
    assert_no_leak(before)


def test_clickhouse_examples():
    """examples/clickhouse/*.sql against the table: p99 of a function per
    host over the last hour, and the calls whose argument passed a bound,
    each checked against what Python computes from the rows."""
    with ClickHouse() as ch:
        code, out, err = trace_to(ch, ["sum_buf", "sum_ints"], [target("typed_O2"), "loop", "600"])
        eq(code, 0, "exit status (%s)" % err)
        sql = open(os.path.join(EXAMPLES, "p99_per_host.sql")).read()
        sql = sql.replace("{table}", "cmon.calls").replace("{function}", "sum_buf")
        got = ch.rows(sql.rstrip().rstrip(";"))
        lat = sorted(r["latency_ns"] for r in ch.rows(
            "SELECT latency_ns FROM cmon.calls WHERE function = 'sum_buf' AND status = 'ok'"))
        eq(len(lat), 600, "sum_buf calls")
        # quantile() is exact below 8192 values: linear between ranks
        pos = 0.99 * (len(lat) - 1)
        lo = int(pos)
        want = lat[lo] + (lat[min(lo + 1, len(lat) - 1)] - lat[lo]) * (pos - lo)
        eq(len(got), 1, "one host")
        eq(got[0]["host"], socket.gethostname(), "host")
        eq(got[0]["calls"], 600, "calls")
        check(abs(got[0]["p99_ns"] - want) <= 1, "p99 %r, Python %r" % (got[0]["p99_ns"], want))
        sql = open(os.path.join(EXAMPLES, "arg_exceeded.sql")).read()
        sql = (sql.replace("{table}", "cmon.calls").replace("{function}", "sum_buf")
               .replace("{arg}", "len").replace("{bound}", "32"))
        got = ch.rows(sql.rstrip().rstrip(";"))
        eq(len(got), 600, "sum_buf calls with len > 32 (every one: len is 64)")
        eq({r["value"] for r in got}, {64}, "len")
        sql = sql.replace("> 32", "> 64")
        eq(ch.rows(sql.rstrip().rstrip(";")), [], "calls with len > 64")


def test_clickhouse_agent_log():
    """The agent's log: {clickhouse: URL}: a quiet process's calls arrive
    without waiting for a batch to fill; counted in /metrics."""
    with ClickHouse() as ch:
        spec = os.path.join(os.path.dirname(ch.dir), "ch-spec-%d.yaml" % time.monotonic_ns())
        write_spec(spec, [{"name": "rec", "target": target("typed_O2"), "func": "sum_buf",
                           "instrument": "log", "log": {"clickhouse": ch.url()}}])
        agent = Agent(spec).wait_ready()
        try:
            agent.wait_probes({"rec": "applied"})
            p = subprocess.run([target("typed_O2"), "loop", "20"], capture_output=True)
            eq(p.returncode, 0, "target")
            end = time.monotonic() + 60
            while int(ch.query("SELECT count() FROM cmon.calls")) < 20:
                check(time.monotonic() < end, "rows did not arrive: %s" % agent.stderr[-1000:])
                time.sleep(0.1)
            # the agent's records are raw (no DWARF typing): the return register
            rows = ch.rows("SELECT ret, regs FROM cmon.calls ORDER BY ts_ns")
            eq([r["ret"] for r in rows], [2016 + k for k in range(20)], "each call's return")
            eq({r["regs"][1] for r in rows}, {64}, "len, the second argument")
            agent.wait_metric("cmon_agent_log_records_total", 20, probe="rec")
            m = agent.metrics()
            eq(value(m, "cmon_agent_clickhouse_up", probe="rec"), 1, "up")
            eq(value(m, "cmon_agent_clickhouse_dropped_total", probe="rec"), 0, "dropped")
            eq(value(m, "cmon_agent_clickhouse_pending_records", probe="rec"), 0, "pending")
        finally:
            agent.stop()
