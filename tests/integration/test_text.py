"""The text table at an 80-100 column terminal: the fixed columns (time,
pid/tid, latency, dRSS) take 47, the call follows as C writes it; on a
terminal each row is cut at its width (the arguments first, the return
value kept), in a file or a pipe it is whole; strings are cut at
--text-strlen characters (32) in text only, JSON keeps what was captured."""
import os
import subprocess

from cmonlib import CMON, on_a_terminal, check, eq, target, text_row, text_rows, tmpfile, trace

NESTED = ('nested(o={"id":7,"in":{"x":-3,"y":40000},"name":"outer-name",'
          '"vals":[1,-2,3,2147483647]}) = 2147523663')


def _on_a_terminal(args, columns):
    """cmon ARGS with its stdout a terminal COLUMNS wide: the rows it shows."""
    shown = on_a_terminal(args, env=dict(os.environ, NO_COLOR="1"), columns=columns)
    return [l for l in shown.splitlines() if text_row(l)]


def test_text_rows_cut_at_the_terminal_width():
    """80 columns: nested's row (136 wide whole) keeps its return value,
    its argument cut and marked; 100 columns: more of it; a file: whole."""
    args = ["trace", "-q", "--func", "nested", "--func", "paint", "--",
            target("typed_O2"), "all"]
    rows = _on_a_terminal(args, 80)
    eq([r[47:] for r in rows], ['paint(c="BLUE", mix=6) = 26',
                                'nested(o={"id":7,"…) = 2147523663'], "80 columns")
    eq([len(r) for r in rows], [47 + 27, 80], "row widths")
    rows = _on_a_terminal(args, 100)
    eq(rows[1][47:], 'nested(o={"id":7,"in":{"x":-3,"y":4000…) = 2147523663', "100 columns")
    res = trace(["nested"], launch=[target("typed_O2"), "all"], fmt="text")
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    eq([l[47:] for l in res.text.splitlines()[1:]], [NESTED], "a file: whole")
    check(len(res.text.splitlines()[1]) > 120, "wider than a terminal")


def test_text_strings_cut_in_text_only():
    """A 99-byte string: 32 characters and "…" in text (--text-strlen N:
    N, 0: whole), the 99 in JSON."""
    launch = [target("typed_O2"), "long", "99"]
    for extra, shown in (([], "x" * 32 + "…"), (["--text-strlen", "5"], "xxxxx…"),
                         (["--text-strlen", "0"], "x" * 99)):
        res = trace(["greet"], launch=launch, fmt="text", extra=extra)
        eq(res.code, 0, "exit status (%s)" % res.stderr)
        eq([(r["func"], r["args"], r["rest"]) for r in text_rows(res.text)],
           [("greet", 's="%s", none=null' % shown, " = 99")], "text with %r" % extra)
    res = trace(["greet"], launch=launch, fmt="json")
    eq([r["args"]["s"] for r in res.rows], ["x" * 99], "JSON: the whole string")


def test_text_strlen_bad():
    code = subprocess.run([CMON, "trace", "--text-strlen", "x", "--func", "greet", "--",
                           target("typed_O2")], capture_output=True, text=True)
    eq((code.returncode, code.stderr), (2, "cmon: trace: invalid --text-strlen 'x'\n"),
       "a bad --text-strlen")
