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


def _obj(v):
    """A JSON value as parsed by cmonlib (objects as lists of pairs) with
    its objects as dicts."""
    if isinstance(v, list) and v and all(isinstance(p, tuple) for p in v):
        return {k: _obj(x) for k, x in v}
    if isinstance(v, list):
        return [_obj(x) for x in v]
    return v


CAPS = ["--capture", "ob=out:str", "--capture", "vv=vals[nv]", "--capture", "d=out:n",
        "--capture", "v3=vals[3]"]
INIT = {"ob": "INIT", "vv": [-1, -2, -3], "d": "494e4954000000000000", "v3": [-1, -2, -3]}
FINAL = {"ob": "abcdefghi", "vv": [100, 101, 102], "d": "61626364656667686900",
         "v3": [100, 101, 102]}


def test_captures_follow_capture_at():
    """--capture buffers are read when the parameters are: produce()
    overwrites "INIT" and {-1,-2,-3}; with return the captures are the
    final values (they stayed the entry's before), with both the entry's,
    and at_return/changed carry theirs too.  The counts (n, nv) are the
    call's: produce() clobbers n's register before it returns."""
    got = {}
    for at in ("entry", "return", "both"):
        res = trace(["produce"], launch=[target("mutate")], fmt="json",
                    extra=CAPS + ["--capture-at", at])
        eq(res.code, 0, "%s: exit status (%s)" % (at, res.stderr.strip()))
        eq(res.stdout, OUT, "%s: program output" % at)
        eq(len(res.rows), 1, "%s: one call" % at)
        r = res.rows[0]
        got[at] = (_obj(r["args"])["out"], _obj(r["captures"]), _obj(r.get("at_return")),
                   _obj(r.get("changed")))
    eq(got["entry"], ("INIT", INIT, None, None), "entry: the values at the call")
    eq(got["return"], ("abcdefghi", FINAL, None, None), "return: the final values")
    changed = {"out": ["INIT", "abcdefghi"], "ob": ["INIT", "abcdefghi"],
               "d": [INIT["d"], FINAL["d"]]}
    for i in range(3):
        changed["vv[%d]" % i] = [-1 - i, 100 + i]
        changed["v3[%d]" % i] = [-1 - i, 100 + i]
    eq(got["both"], ("INIT", INIT, dict(FINAL, out="abcdefghi"), changed),
       "both: at the call, at the return, what changed")


def test_store_captures_follow_capture_at():
    """The store keeps the captures as it keeps args: the final values with
    return, the entry's with both (and no blob of the return's read)."""
    from cmonlib import tmpfile
    want = {"return": ('"abcdefghi"', '"abcdefghi"', "[100, 101, 102]"),
            "both": ('"INIT"', '"INIT"', "[-1, -2, -3]")}
    for at, (arg, ob, vv) in want.items():
        store = tmpfile("capat-" + at)
        code, _, err = cmon(["capture", "-q", "--func", "produce", "--capture-at", at, "-o",
                             store] + CAPS[:4] + ["--", target("mutate")])
        eq(code, 0, "%s: capture (%s)" % (at, err))
        code, out, err = cmon(["show", store, "produce", "1"])
        eq(code, 0, "%s: show (%s)" % (at, err))
        lines = [l.split() for l in out.splitlines()]
        eq([l[-1] for l in lines if l[:1] == ["out"]], [arg], "%s: the argument" % at)
        eq([" ".join(l[3:]) for l in lines if l[:1] in (["ob"], ["vv"])],
           ["= " + ob, "= " + vv], "%s: the blobs: %r" % (at, out))
