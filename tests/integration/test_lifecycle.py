"""Process lifecycle: a launched program is traced from its exec (the
launcher's own calls in the child before it are cmon's, and were recorded
as a program's: close(3) by "cmon"); a thread that calls exec has its
pending call reported with its own pid, tid and comm (it was reported
under the new program's name and the leader's tid)."""
import json
import os

from cmonlib import check, cmon, eq, read_text, target, tmpfile, trace


def test_launcher_calls_not_recorded():
    res = trace(["libc.so.6:close"], launch=[target(), "calls"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq([(r["comm"], r["func"]) for r in res.rows], [], "no close() by the launcher")
    check("close                                       0            0" in res.stderr,
          res.stderr)
    path = tmpfile("lc-profile.json")
    code, _, err = cmon(["profile", "-F", "json", "-o", path, "--func", "libc.so.6:close",
                         "--", target(), "calls"])
    eq(code, 0, "profile exit status (%s)" % err)
    fin = [json.loads(l) for l in read_text(path).splitlines()]
    eq([(r["func"], r["calls"]) for r in fin if r["final"]], [],
       "profile counts no launcher call (a function never called has no row)")
    check("cmon: 0 calls counted" in err, err)


def test_thread_exec_identity():
    res = trace(["exec_from_thread"], launch=[target(), "thread_exec"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq(res.stdout, "main\nexec-from-thread\n", "program output")
    eq(len(res.rows), 1, "records")
    r = res.rows[0]
    eq((r["func"], r["arg0"], r["status"], r["comm"]), ("exec_from_thread", 5, "noreturn",
                                                       "calls"),
       "the call as it was made (func, arg0, status, comm)")
    check(r["tid"] != r["pid"], "the calling thread's own tid (%d), not the leader's (%d)"
          % (r["tid"], r["pid"]))
