"""--stack: each call's user stack, symbolized (tests/targets/calls.c:
outer -> middle -> leaf; calls_fp is built with frame pointers)."""
import json

from cmonlib import WaitTarget, check, eq, read_text, target, trace, trace_bg


def test_stack_names_the_callers():
    res = trace(["leaf"], launch=[target("calls_fp"), "recurse"], fmt="json", extra=["--stack"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    recs = [json.loads(l) for l in res.text.splitlines()]
    eq(len(recs), 1, "records")
    names = [f.split("+")[0] for f in recs[0]["stack"]]
    eq(names[:5], ["leaf", "middle", "outer", "run", "main"], "innermost first: %r"
       % recs[0]["stack"])
    check(recs[0]["stack"][0] == "leaf+0x0 (calls_fp)", "the function itself, at its entry")
    check(all("(calls_fp)" in f for f in recs[0]["stack"][:5]), "module named")
    res = trace(["leaf"], launch=[target("calls_fp"), "recurse"], fmt="text", extra=["--stack"])
    lines = res.text.splitlines()
    check("    at leaf+0x0 (calls_fp)" in lines, "text: the function's frame: %r" % lines)
    check(any(l.startswith("    at middle+") and l.endswith("(calls_fp)") for l in lines),
          "text: 'at' lines under the row: %r" % lines)


def test_stack_without_frame_pointers_says_so():
    """calls is built without frame pointers: the caller (from the return
    address) is known, the rest is said to be unknown."""
    res = trace(["leaf"], launch=[target("calls"), "recurse"], fmt="json", extra=["--stack"])
    recs = [json.loads(l) for l in res.text.splitlines()]
    st = recs[0]["stack"]
    eq([f.split("+")[0] for f in st[:2]], ["leaf", "middle"], "the function and its caller")
    eq(st[-1], "(callers above unknown: no frame pointers)", "said plainly: %r" % st)
    check("stack" not in json.loads(trace(["leaf"], launch=[target("calls"), "recurse"],
                                          fmt="json").text.splitlines()[0]),
          "no stack without --stack")


def test_stack_at_push_rbp_caller_once():
    """middle starts with `push %rbp`, where this kernel's unwinder itself
    adds the return address at [sp]: the caller is listed once."""
    res = trace(["middle"], launch=[target("calls_fp"), "recurse"], fmt="json",
                extra=["--stack"])
    eq(res.code, 0, "exit status (%s)" % res.stderr)
    st = json.loads(res.text.splitlines()[0])["stack"]
    eq([f.split("+")[0] for f in st[:4]], ["middle", "outer", "run", "main"],
       "innermost first, each once: %r" % st)


def test_stack_of_a_process_already_gone():
    """argc (PIE) exits within a millisecond, before cmon reads its
    mappings for the first stack: its frames were raw addresses.  The
    traced function's probe is where the first frame is, which places the
    executable: its frames are named anyway."""
    for _ in range(3):
        res = trace(["twice"], launch=[target("argc")], fmt="json", extra=["--stack"])
        eq(res.code, 0, "exit status (%s)" % res.stderr)
        st = json.loads(res.text.splitlines()[0])["stack"]
        eq(st[0], "twice+0x0 (argc)", "the function itself: %r" % st)
        eq(st[1].split("+")[0], "main", "its caller, in the same executable: %r" % st)


def test_stack_named_after_the_process_is_gone():
    """A short PIE program traced in libc, its records drained (--poll-ms
    500) after it exited: its mappings could not be read any more, and its
    callers were raw addresses.  The kernel says which file each frame is
    in at the call: they are named."""
    res = trace(["libc.so.6:getppid"], launch=[target("calls_pie_fp"), "ppid"], fmt="json",
                extra=["--stack", "--poll-ms", "500"])
    eq((res.code, res.stdout), (0, "ppid=1\n"), "exit status and output (%s)" % res.stderr)
    recs = [json.loads(l) for l in res.text.splitlines()]
    eq(len(recs), 3, "records")
    for r in recs:
        eq([f.split("+")[0] for f in r["stack"][:3]], ["getppid", "run", "main"],
           "innermost first: %r" % r["stack"])
        eq([f.split(" ")[-1] for f in r["stack"][:4]],
           ["(libc.so.6)", "(calls_pie_fp)", "(calls_pie_fp)", "(libc.so.6)"],
           "modules: %r" % r["stack"])


def test_stack_of_a_p_process_that_exited():
    """-p: the process exits right after its call, before its stack is
    named: its symbols were opened only then, through /proc/PID/root, and
    its frames were raw addresses ("0x401307 (calls_fp)")."""
    t = WaitTarget(["recurse"], binary="calls_fp")
    try:
        bg = trace_bg(["leaf"], ["-p", str(t.pid)], fmt="json", extra=["--stack"])
        try:
            bg.wait_attached()
            t.release()
            eq(t.finish(), (0, "fact=120\nouter=25\n"), "target's exit status and output")
            eq(bg.wait(), 0, "cmon's exit status (%s)" % bg.stderr)
        finally:
            bg.kill()
        recs = [json.loads(l) for l in read_text(bg.out_path).splitlines()]
        eq(len(recs), 1, "records")
        eq([f.split("+")[0] for f in recs[0]["stack"][:5]],
           ["leaf", "middle", "outer", "run", "main"], "named: %r" % recs[0]["stack"])
    finally:
        t.kill()
