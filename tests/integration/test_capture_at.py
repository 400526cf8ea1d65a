"""--capture-at entry|return|both (tests/targets/mutate.c): what pointer
parameters point to, read at the call, again at the return, or both with
what changed: deposit() moves an account's balance 100 -> 110 -> 130,
fill() writes "hello" into an empty buffer, peek() changes nothing."""
from cmonlib import cmon, eq, target, trace

OUT = "ann#7 balance=130 buf=hello peek=130\n"
FUNCS = ["deposit", "fill", "peek"]


def acct(balance):
    return {"id": 7, "balance": balance, "owner": "ann"}


def typed(res):
    eq(res.code, 0, "cmon exit status (%s)" % res.stderr.strip())
    eq(res.stdout, OUT, "program output")
    out = []
    for r in res.rows:
        args = {k: dict(v) if isinstance(v, list) else v for k, v in dict(r["args"]).items()}
        at_ret = r.get("at_return")
        if at_ret is not None:
            at_ret = {k: dict(v) if isinstance(v, list) else v for k, v in dict(at_ret).items()}
        changed = dict(r["changed"]) if r.get("changed") is not None else None
        out.append((r["func"], args, at_ret, changed))
    return out


def test_capture_at_entry_return_both():
    got = typed(trace(FUNCS, launch=[target("mutate")], fmt="json"))
    eq(got, [("deposit", {"a": acct(100), "amount": 10}, None, None),
             ("deposit", {"a": acct(110), "amount": 20}, None, None),
             ("fill", {"buf": "", "n": 16}, None, None),
             ("peek", {"a": acct(130)}, None, None)], "default: at the call")
    got = typed(trace(FUNCS, launch=[target("mutate")], fmt="json",
                      extra=["--capture-at", "return"]))
    eq(got, [("deposit", {"a": acct(110), "amount": 10}, None, None),
             ("deposit", {"a": acct(130), "amount": 20}, None, None),
             ("fill", {"buf": "hello", "n": 16}, None, None),
             ("peek", {"a": acct(130)}, None, None)], "return: the final values")
    got = typed(trace(FUNCS, launch=[target("mutate")], fmt="json",
                      extra=["--capture-at", "both"]))
    eq(got, [("deposit", {"a": acct(100), "amount": 10}, {"a": acct(110)},
              {"a->balance": [100, 110]}),
             ("deposit", {"a": acct(110), "amount": 20}, {"a": acct(130)},
              {"a->balance": [110, 130]}),
             ("fill", {"buf": "", "n": 16}, {"buf": "hello"}, {"buf": ["", "hello"]}),
             ("peek", {"a": acct(130)}, {"a": acct(130)}, {})],
       "both: at the call, at the return, what changed")
    res = trace(["deposit"], launch=[target("mutate")], fmt="text",
                extra=["--capture-at", "both"])
    eq(res.code, 0, "text: exit status (%s)" % res.stderr.strip())
    eq(res.text.count('changed={"a->balance":[100,110]}'), 1, "text: the change shown")


def test_capture_at_usage():
    code, _, err = cmon(["trace", "--capture-at", "later", "--func", "deposit", "--",
                         target("mutate")])
    eq((code, err), (2, "cmon: trace: --capture-at 'later': expected entry, return or both\n"),
       "a bad --capture-at")
