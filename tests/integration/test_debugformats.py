"""Typed arguments, lines, locals and globals from the shapes production
debug info comes in (tests/targets/typed.c, lines.c, watch.c built in each
in tests/targets/targets.mk): the values must be those of the plain -g
build (test_typed.py, test_lines.py, test_watch.py)."""
import json

from cmonlib import check, cmon, eq, funcs_args, read_text, target, tmpfile


def typed_records(binary, funcs, args=("all",)):
    """`cmon trace -F json` of BINARY ARGS: {func: [record, ...]}."""
    path = tmpfile("fmt-%s.json" % binary)
    code, _, err = cmon(["trace", "-q", "-F", "json", "-o", path] + funcs_args(funcs) +
                        ["--", target(binary)] + list(args))
    eq(code, 0, "cmon trace %s: exit status (%s)" % (binary, err.strip()))
    eq(err, "", "%s: stderr" % binary)
    recs = {}
    for line in read_text(path).splitlines():
        r = json.loads(line)
        recs.setdefault(r["func"], []).append(r)
    return recs


def test_clang_dwarf4_pieces_computed_from_a_register():
    """clang -gdwarf-4 -O2 describes small_byval's struct (in rdi, rsi) as
    pieces, b being `breg5 0; constu 32; shr; stack_value; piece 2`: the
    shift was dropped when a piece followed DW_OP_stack_value, and b read
    a's bytes (-5).  c is an empty piece in clang's own description."""
    recs = typed_records("typed_clang4", ["small_byval"])
    eq([(r["args"], r["retval"]) for r in recs["small_byval"]],
       [({"s": {"a": -5, "b": 300, "c": "<unavailable: optimized out>",
                "d": -1234567890123}}, -1234567889578)], "small_byval's struct")


def check_all_typed(binary):
    """`typed all` traced: every argument and return exactly as test_typed.py
    has them for the plain -O2 build."""
    import test_typed
    test_typed.SCALE_ARGS.setdefault(binary, test_typed.SCALE_ARGS["typed_O2"])
    text, _ = test_typed.trace_typed(binary, test_typed.ALL_FUNCS)
    test_typed.check_all(test_typed.json_records(text), binary)


def test_type_units():
    """-fdebug-types-section puts structs and enums in type units: the CU
    keeps a declaration whose DW_AT_signature names the definition.  The
    declaration was taken for the type: enums showed as numbers, structs
    by value as {}, struct pointers as bare addresses."""
    for binary in ("typed_types4", "typed_types5"):
        check_all_typed(binary)
