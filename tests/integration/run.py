#!/usr/bin/python3
"""Runs cmon's integration tests.

    python3 tests/integration/run.py [-v] [--exact] [NAME...]

Every function test_* of tests/integration/test_*.py is one test (a NAME
argument keeps the tests whose name contains it; with --exact, whose name
is NAME or MODULE.NAME).  Each runs in its own
process group with a timeout; whatever it leaves running is killed after it.
One line per test on stdout, then each skipped test with its reason, the
duration, and "N passed, N failed, N skipped"; the exit status is 1 if any
failed.  A test names the host features it needs (cmonlib.needs, or a
module's NEEDS list): where `cmon host` says one is missing, it is skipped
with the host's reason.  Failure tracebacks go to stderr with -v, and
always to $CMON_IT_LOG (default $OUT/integration.log).

Environment: OUT (build folder, default "build"), CMON (default $OUT/cmon),
CMON_IT_TIMEOUT (seconds per test, default 1800: only a guard against a
hang; a test waits for conditions, never for a speed, and passes on a busy
2-CPU machine), CMON_IT_LOG (default $OUT/integration.log: two suites run
side by side, from two clones, keep their own), CMON_IT_SUFFIX (appended to
each test's name: tests/kernels/run.sh's "@KERNEL").
"""
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep the source tree clean


def discover():
    tests = []
    for fn in sorted(os.listdir(HERE)):
        if not (fn.startswith("test_") and fn.endswith(".py")):
            continue
        mod = importlib.import_module(fn[:-3])
        for name, obj in vars(mod).items():
            if name.startswith("test_") and callable(obj):
                tests.append((mod.__name__, name))
    return tests


def run_one(modname, funcname, result_path):
    """In the test's own process: run it and write the verdict as JSON."""
    import cmonlib
    verdict = {"status": "ok", "reason": "", "detail": ""}
    try:
        if os.geteuid() != 0:
            raise cmonlib.Skip("needs root (probes really attach)")
        mod = importlib.import_module(modname)
        fn = getattr(mod, funcname)
        cmonlib.need(*(tuple(getattr(mod, "NEEDS", ())) + tuple(getattr(fn, "needs", ()))))
        fn()
    except cmonlib.Skip as e:
        verdict = {"status": "skip", "reason": str(e), "detail": ""}
    except BaseException as e:  # noqa: a test may raise anything
        msg = str(e) if isinstance(e, AssertionError) else "%s: %s" % (type(e).__name__, e)
        msg = " ".join(msg.split()) or type(e).__name__
        if len(msg) > 400:
            msg = msg[:400] + "..."
        verdict = {"status": "fail", "reason": msg, "detail": traceback.format_exc()}
    with open(result_path, "w") as f:
        json.dump(verdict, f)


def duration(s):
    return "%dm%02ds" % (s // 60, s % 60)


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def main(argv):
    if len(argv) == 4 and argv[0] == "--one":
        run_one(argv[1], argv[2], argv[3])
        return 0
    verbose = "-v" in argv
    names = [a for a in argv if not a.startswith("-")]
    timeout = float(os.environ.get("CMON_IT_TIMEOUT", "1800"))
    import cmonlib
    log_path = os.path.abspath(os.environ.get("CMON_IT_LOG",
                                              os.path.join(cmonlib.OUT, "integration.log")))
    tests = discover()
    counts = {}
    for _, f in tests:
        counts[f] = counts.get(f, 0) + 1
    if names and "--exact" in argv:
        tests = [t for t in tests if any(n == t[1] or n == "%s.%s" % t for n in names)]
        missing = [n for n in names if not any(n == t[1] or n == "%s.%s" % t for t in tests)]
        if missing:
            sys.stderr.write("no such test: %s\n" % " ".join(missing))
            return 2
    elif names:
        tests = [t for t in tests if any(n in t[1] or n in "%s.%s" % t for n in names)]
    suffix = os.environ.get("CMON_IT_SUFFIX", "")

    passed = failed = skipped = 0
    skips = []
    suite_start = time.monotonic()
    # What the host can do, asked once (each test reads it: cmonlib.host).
    host_json = tempfile.NamedTemporaryFile(prefix="cmon-host-", suffix=".json", delete=False)
    res = subprocess.run([os.environ.get("CMON") or os.path.join(os.environ.get("OUT", "build"),
                                                                   "cmon"), "host", "--json"],
                         stdout=host_json, stderr=subprocess.PIPE, text=True)
    host_json.close()
    if res.returncode == 0:
        os.environ["CMON_HOST_JSON"] = host_json.name
    else:
        sys.stderr.write("cmon host --json failed: %s\n" % res.stderr.strip())
    log = open(log_path, "w")
    for modname, funcname in tests:
        label = (funcname if counts[funcname] == 1 else "%s.%s" % (modname, funcname)) + suffix
        tmp = tempfile.mkdtemp(prefix="cmon-it-")
        result_path = os.path.join(tmp, ".result.json")
        out_path = os.path.join(tmp, ".output")
        env = dict(os.environ, CMON_IT_TMP=tmp, PYTHONDONTWRITEBYTECODE="1")
        start = time.monotonic()
        with open(out_path, "wb") as out:
            child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--one",
                                      modname, funcname, result_path],
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                     env=env, cwd=os.getcwd(), start_new_session=True)
            try:
                child.wait(timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
            kill_group(child.pid)  # the test's leftovers (and itself on timeout)
            child.wait()
        elapsed = time.monotonic() - start
        try:
            with open(result_path) as f:
                verdict = json.load(f)
        except (OSError, ValueError):
            verdict = None
        with open(out_path, "rb") as f:
            output = f.read().decode(errors="replace")
        shutil.rmtree(tmp, ignore_errors=True)
        if timed_out:
            verdict = {"status": "fail", "reason": "timed out after %gs" % timeout,
                       "detail": output}
        elif verdict is None:
            last = output.strip().splitlines()[-1:] or [""]
            verdict = {"status": "fail", "reason": "test process died (exit %s) %s"
                       % (child.returncode, last[0]), "detail": output}
        if verdict["status"] == "ok":
            passed += 1
            print("ok   %s (%.1fs)" % (label, elapsed), flush=True)
        elif verdict["status"] == "skip":
            skipped += 1
            skips.append((label, verdict["reason"]))
            print("skip %s: %s" % (label, verdict["reason"]), flush=True)
        else:
            failed += 1
            print("FAIL %s: %s" % (label, verdict["reason"]), flush=True)
            detail = "==== %s\n%s\n%s\n" % (label, verdict["detail"], output)
            log.write(detail)
            log.flush()
            if verbose:
                sys.stderr.write(detail)
    log.close()
    os.unlink(host_json.name)
    if failed:
        sys.stderr.write("failure details: %s\n" % log_path)
    for label, reason in skips:
        print("skipped %s: %s" % (label, reason))
    print("integration tests took %s" % duration(time.monotonic() - suite_start))
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
