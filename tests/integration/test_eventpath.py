"""The event path under load: every record of threads calling as fast as
they can arrives, with a CPU hog competing for the CPUs (tests/targets/
busy.c `threads`: quick_fp starts with push %rbp, the cheapest probe, so the
records come as fast as they can)."""
import csv
import subprocess

from cmonlib import HANG, check, eq, target, trace

NTHREADS, PER = 4, 100000


def test_threads_flat_out_with_contention_lose_nothing():
    # A CPU hog: on 2 CPUs, 4 producing threads, the hog and the consumer.
    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        res = trace(["quick_fp"], launch=[target("busy"), "threads", str(NTHREADS), str(PER)],
                    timeout=HANG)
    finally:
        hog.kill()
        hog.wait()
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip()[-300:])
    s = res.summary()
    eq((s["written"], s["lost"]), (NTHREADS * PER, 0), "events written and lost")
    eq(s["table"], {"quick_fp": (NTHREADS * PER, NTHREADS * PER, 0)}, "per-function table")
    eq(len(res.rows), NTHREADS * PER, "records in the file")
    per_thread = {}
    for r in res.rows:
        eq(r["ret"], r["arg0"] + r["arg1"], "quick_fp(t, i) = t + i")
        per_thread.setdefault(r["arg0"], set()).add(r["arg1"])
    eq(sorted(per_thread), list(range(NTHREADS)), "thread indexes")
    for t, seen in per_thread.items():
        check(seen == set(range(PER)), "thread %d: %d distinct calls of %d" % (t, len(seen), PER))
