"""Call records are staged per CPU in the kernel and sent 16 at a time
(bpf/staging.bpf.h); user space puts them back in time order
(user/event/staging.c).  tests/targets/migrate.c moves each thread to the
next CPU before every call, so one thread's consecutive calls sit in
different CPUs' batches: they must still come out in the order they were
made, every one of them, with the right arguments."""
import collections

from cmonlib import check, eq, target, trace

CALLS = 3000
THREADS = 3


def _check_order(extra):
    res = trace(["move_step"], launch=[target("migrate"), str(CALLS), str(THREADS)], extra=extra)
    check(res.code == 0, "cmon trace failed: %r" % res)
    want = sum(t * 1000000 * CALLS + CALLS * (CALLS - 1) // 2 for t in range(THREADS))
    eq(res.stdout.strip(), str(want), "the program's output")
    seen = collections.defaultdict(list)
    for r in res.rows:
        eq(r["func"], "move_step", "function")
        seen[r["tid"]].append((int(r["arg0"]), int(r["arg1"])))
    eq(len(seen), THREADS, "threads")
    for tid, calls in seen.items():
        t = calls[0][0]
        eq(calls, [(t, i) for i in range(CALLS)], "thread %s: its calls in order" % tid)
    eq(sorted(c[0][0] for c in seen.values()), list(range(THREADS)), "thread numbers")
    # Across threads too: the records' times never go back.
    key = "ts_ns"
    times = [int(r[key]) + (int(r["latency_ns"]) if r.get("latency_ns") not in (None, "") else 0)
             for r in res.rows]
    eq(sum(1 for a, b in zip(times, times[1:]) if b < a - 1000000), 0,
       "records more than 1 ms out of time order")


def test_staged_records_in_call_order():
    _check_order([])


def test_staged_entry_records_in_call_order():
    _check_order(["--no-return"])


def test_staged_calls_keep_their_captures():
    """A call's capture (its string, read at entry) goes to the ring buffer
    as it is written while its call record waits in a CPU's batch: each
    record must still come back with its own string."""
    res = trace(["move_tagged"], launch=[target("migrate"), str(CALLS), str(THREADS)])
    check(res.code == 0, "cmon trace failed: %r" % res)
    seen = collections.defaultdict(list)
    for r in res.rows:
        t, i = int(r["arg0"]), int(r["arg1"])
        eq(r["args"]["tag"], "t%d.%d" % (t, i), "call (%d, %d): its own string" % (t, i))
        eq(int(r["ret"]), t + i, "call (%d, %d): its return" % (t, i))
        seen[r["tid"]].append((t, i))
    eq(len(seen), THREADS, "threads")
    for tid, calls in seen.items():
        eq(calls, [(calls[0][0], i) for i in range(CALLS)], "thread %s: its calls in order" % tid)
