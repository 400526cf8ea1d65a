"""--capture-at entry|return|both (tests/targets/mutate.c): what pointer
parameters point to, read at the call, again at the return, or both with
what changed: deposit() moves an account's balance 100 -> 110 -> 130,
fill() writes "hello" into an empty buffer, peek() changes nothing."""
import json

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
    # CSV has them too, as the cells "at_return" and "changed".
    res = trace(["deposit"], launch=[target("mutate")], fmt="csv",
                extra=["--capture-at", "both"])
    eq(res.code, 0, "csv: exit status (%s)" % res.stderr.strip())
    eq([(json.loads(r["typed"]["at_return"])["a"]["balance"], json.loads(r["typed"]["changed"]))
        for r in res.rows], [(110, {"a->balance": [100, 110]}),
                             (130, {"a->balance": [110, 130]})], "csv: at_return and changed")
    res = trace(["deposit"], launch=[target("mutate")], fmt="text",
                extra=["--capture-at", "both"])
    eq(res.code, 0, "text: exit status (%s)" % res.stderr.strip())
    eq(res.text.count('changed={"a->balance":[100,110]}'), 1, "text: the change shown")


def test_capture_at_usage():
    code, _, err = cmon(["trace", "--capture-at", "later", "--func", "deposit", "--",
                         target("mutate")])
    eq((code, err), (2, "cmon: trace: --capture-at 'later': expected entry, return or both\n"),
       "a bad --capture-at")


def test_store_notes_are_the_entry_values():
    """--capture-at both keeps the entry's values in the store; what the
    read at the return found (fill()'s "hello", cut by --strlen 3) is not
    noted as if it were the stored value's (it showed buf = "" with
    'truncated buf').  trace's record still lists it."""
    import os
    from cmonlib import tmpfile
    store = tmpfile("at-both")
    code, _, err = cmon(["capture", "-q", "--func", "fill", "--capture-at", "both", "--strlen",
                         "3", "-o", store, "--", target("mutate")])
    eq(code, 0, "capture (%s)" % err)
    eq(err, "cmon: warning: --capture-at both: the store keeps the values at the call; "
            "at_return and changed are shown by trace only\n",
       "the store's limit is said, not left silent")
    code, out, err = cmon(["show", store, "fill", "1"])
    eq(code, 0, "show (%s)" % err)
    eq([l for l in out.splitlines() if l.startswith(("truncated", "unreadable"))], [],
       "no notes for the entry's values: %r" % out)
    res = trace(["fill"], launch=[target("mutate")], fmt="json",
                extra=["--capture-at", "both", "--strlen", "3"])
    eq([r.get("truncated") for r in res.rows], [["at_return.buf"]],
       "trace: the return's read was cut, and the path says which read")
