"""Programs that switch stacks: a ucontext generator (tests/targets/coro.c)
whose coroutine stack lies above the frames that switch to it (an array in
main's frame) or below the main stack (a static array).  Untraced it prints
three values and exits 3; traced, it must do exactly that, and every call
pairs with its return on the stack it runs on."""
from cmonlib import check, eq, run, target, trace
from test_profile import by_func, final_rows, parse_profile_json, profile

CORO_OUT = "value 10\nvalue 20\nvalue 30\n"


def test_coroutine_generator_pairs_per_stack():
    for where in ("frame", "static"):
        code, out, _ = run([target("coro"), where])
        eq((code, out), (3, CORO_OUT), "%s: untraced run" % where)
        res = trace(["next_value", "produce"], launch=[target("coro"), where])
        eq(res.code, 3, "%s: cmon exits with the program's status (%s)" % (where, res.stderr.strip()))
        eq(res.stdout, CORO_OUT, "%s: program output" % where)
        eq([(r["func"], r["ret"], r["status"], r["depth"]) for r in res.rows],
           [("next_value", 10, "ok", 0), ("produce", 11, "ok", 0),
            ("next_value", 20, "ok", 0), ("produce", 21, "ok", 0),
            ("next_value", 30, "ok", 0), ("produce", 31, "ok", 0),
            ("next_value", -1, "ok", 0)],
           "%s: records in return order (func, ret, status, depth)" % where)
        eq([r["arg0"] for r in res.rows if r["func"] == "produce"], [10, 20, 30],
           "%s: produce's arguments" % where)
        eq(res.summary()["lost"], 0, "%s: events lost" % where)


def test_coroutine_generator_profile():
    code, out, err, text = profile(["next_value", "produce"], launch=[target("coro")])
    eq((code, out), (3, CORO_OUT), "exit status and output (%s)" % err.strip())
    fin = by_func(final_rows(parse_profile_json(text)))
    eq((fin["next_value"]["calls"], fin["next_value"]["returns"], fin["next_value"]["noreturn"]),
       (4, 4, 0), "next_value calls, returns, noreturn")
    eq((fin["produce"]["calls"], fin["produce"]["returns"], fin["produce"]["noreturn"]),
       (3, 3, 0), "produce calls, returns, noreturn")
    check(fin["produce"]["lost"] == 0, "nothing lost")
