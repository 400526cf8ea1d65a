"""`cmon report`: one self-contained HTML page, checked in a real headless
Chromium: it renders, every chart is drawn, nothing is fetched from the
network (a proxy that records every connection, and a control page that
does fetch to show the proxy would see it), a screenshot is not blank."""
import os
import re
import shutil
import socket
import struct
import subprocess
import threading
import zlib

from test_diff import _capture
from cmonlib import HANG, Skip, check, cmon, eq, read_text, run, target, tmpdir, tmpfile

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=5000",
         # shared memory in /tmp, not /dev/shm: Chromium crashes (SIGTRAP) when
         # /dev/shm runs short, and Debian's launcher, meant to add this flag
         # then, fails its own test here ("[: ...: unexpected operator")
         "--disable-dev-shm-usage"]


# Chromium's own background requests (time, component updates, accounts;
# bookworm's Chromium 150 also www.google.com and android.clients.google.com),
# made whatever the page is, even with --disable-background-networking and
# --disable-component-update: not the page's.
BROWSER_OWN = re.compile(rb"^(GET|POST|CONNECT) (http://)?(clients2\.google\.com|"
                         rb"www\.google\.com|android\.clients\.google\.com|"
                         rb"update\.googleapis\.com|accounts\.google\.com|"
                         rb"[a-z0-9-]+\.gvt1\.com|optimizationguide-pa\.googleapis\.com|"
                         rb"content-autofill\.googleapis\.com|safebrowsing\.googleapis\.com)[:/]")


class Proxy:
    """Accepts connections on 127.0.0.1 and counts them (what a browser would
    fetch through --proxy-server)."""

    def __init__(self):
        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        self.s.listen(16)
        self.port = self.s.getsockname()[1]
        self.hits = []
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while True:
            try:
                c, _ = self.s.accept()
            except OSError:
                return
            c.settimeout(2)
            try:
                self.hits.append(c.recv(4096)[:200])
            except OSError:
                self.hits.append(b"?")
            c.close()

    def close(self):
        self.s.close()

    def page_hits(self):
        return [h for h in self.hits if not BROWSER_OWN.match(h)]


def chromium(page, *extra):
    if not CHROMIUM:
        raise Skip("chromium not installed")
    ud = os.path.join(tmpdir(), "chromium-%d" % len(os.listdir(tmpdir())))
    p = subprocess.run([CHROMIUM] + FLAGS + ["--user-data-dir=" + ud] + list(extra) +
                       ["file://" + page], capture_output=True, text=True, timeout=HANG)
    eq(p.returncode, 0, "chromium exit status (%s)" % p.stderr[-500:])
    return p.stdout


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            eq(depth, 8, "PNG bit depth")
            bpp = {2: 3, 6: 4}[ctype]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def make_sources():
    calls = target("calls")
    trace_csv = tmpfile("t.csv")
    code, _, err = cmon(["trace", "-q", "-F", "csv", "-o", trace_csv, "--func", "fact",
                         "--func", "outer", "--func", "middle", "--func", "leaf", "--",
                         calls, "recurse"])
    eq(code, 0, "trace (%s)" % err)
    trace_json = tmpfile("g.json")
    code, _, err = cmon(["trace", "-q", "-F", "json", "-o", trace_json, "--func", "grow", "--",
                         calls, "grow", "16"])
    eq(code, 0, "trace json (%s)" % err)
    prof = tmpfile("p.csv")
    code, _, err = cmon(["profile", "-q", "-F", "csv", "-o", prof, "--func", "add", "--",
                         calls, "loop", "1000"])
    eq(code, 0, "profile (%s)" % err)
    runs = []
    for name, d in (("n1", "0"), ("n2", "1e-4")):
        code, _, err = cmon(["capture", "-q", "-o", tmpfile(name), "--func", "compute_step",
                             "--", target("numeric"), d])
        eq(code, 0, "capture (%s)" % err)
        runs.append(tmpfile(name))
    stats = tmpfile("s.json")
    code, _, err = cmon(["stats", "-F", "json", "-o", stats] + runs)
    eq(code, 0, "stats (%s)" % err)
    return [trace_csv, trace_json, prof, stats, runs[0]]


def test_report_renders_offline_in_chromium():
    sources = make_sources()
    page = tmpfile("report.html")
    code, out, err = cmon(["report"] + sources + ["-o", page, "--title", "cmon <test>"])
    eq(code, 0, "report exit status (%s)" % err)
    html = read_text(page)
    check("<script src" not in html and "<link" not in html, "no external script or style")
    check("default-src 'none'" in html, "a CSP that forbids fetching")
    check("<title>cmon &lt;test&gt;</title>" in html, "escaped title")
    proxy = Proxy()
    try:
        dom = chromium(page, "--proxy-server=127.0.0.1:%d" % proxy.port,
                       "--proxy-bypass-list=<-loopback>", "--dump-dom")
        shot = tmpfile("report.png")
        chromium(page, "--proxy-server=127.0.0.1:%d" % proxy.port,
                 "--proxy-bypass-list=<-loopback>", "--window-size=1400,6000",
                 "--screenshot=" + shot)
    finally:
        proxy.close()
    eq(proxy.page_hits(), [], "requests the page made through the proxy")
    m = re.search(r'<body data-charts="(\d+)" data-rendered="yes">', dom)
    check(m, "the page's script ran to the end: %r" % dom[:300])
    # trace: 6 functions over time (fact, outer, middle, leaf, grow, compute_step),
    # distribution, calls/s, memory of 3 processes; profile: 1; stats: 1
    eq(int(m.group(1)), 6 + 1 + 1 + 3 + 1 + 1, "charts drawn")
    eq(len(re.findall(r"<canvas ", dom)), int(m.group(1)), "one canvas per chart")
    for want in [r"<td class=\"l\">fact</td><td>5</td>", r"<td class=\"l\">grow</td><td>1</td>",
                 r"<td class=\"l\">add</td><td>all</td><td>1000</td>",
                 r"<td class=\"l\">compute_step</td><td>1</td><td class=\"l\">s\.x</td>"
                 r"<td>2</td><td>3\.000050000</td>"]:
        check(re.search(want, dom), "%s not in the rendered page" % want)
    check("1000 equal time buckets" in dom, "the downsampling method is on the page")
    w, h, rows = png_pixels(shot)
    eq((w, h), (1400, 6000), "screenshot size (the whole page)")
    px = [p for r in rows[::4] for p in r[::4]]
    inked = sum(1 for p in px if min(p) < 200)
    colored = sum(1 for p in px if max(p) - min(p) > 60)
    check(inked > len(px) // 100, "screenshot has content: %d of %d pixels" % (inked, len(px)))
    check(colored > 500, "screenshot has colored chart pixels: %d" % colored)


def test_report_network_check_would_see_a_fetch():
    """The control: a page that does fetch is seen by the proxy."""
    page = tmpfile("fetch.html")
    with open(page, "w") as f:
        f.write('<html><body><img src="http://cmon-test.invalid/x.png"></body></html>')
    proxy = Proxy()
    try:
        chromium(page, "--proxy-server=127.0.0.1:%d" % proxy.port, "--dump-dom")
    finally:
        proxy.close()
    hits = proxy.page_hits()
    check(len(hits) == 1 and b"GET http://cmon-test.invalid/x.png" in hits[0],
          "proxy saw %r" % proxy.hits)


def test_report_errors():
    page = tmpfile("r.html")
    bad = tmpfile("bad.txt")
    with open(bad, "w") as f:
        f.write("hello\n")
    for args, status, needle in [
            (["report", bad, "-o", page], 1, "not a store, a trace or profile"),
            (["report", tmpfile("nope"), "-o", page], 1, "No such file"),
            (["report", bad], 2, "-o FILE.html")]:
        code, out, err = cmon(args)
        eq(code, status, "exit status of %r" % args)
        lines = err.strip().splitlines()
        eq(len(lines), 1, "one error line: %r" % err)
        check(needle in lines[0], "%r in %r" % (needle, lines[0]))
    check(not os.path.exists(page), "no page written on error")


def page_data(path):
    import json
    html = read_text(path)
    start = html.index('id="cmon-data">') + len('id="cmon-data">')
    return json.loads(html[start:html.index("</script>", start)])


def test_report_downsamples_keeping_extremes():
    import csv
    import io
    trace_csv = tmpfile("big.csv")
    code, _, err = cmon(["trace", "-q", "-F", "csv", "-o", trace_csv, "--func", "add", "--",
                         target("calls"), "loop", "20000"])
    eq(code, 0, "trace (%s)" % err)
    lat = [int(r["latency_ns"]) for r in csv.DictReader(io.StringIO(read_text(trace_csv),
                                                                     newline=""))]
    eq(len(lat), 20000, "calls traced")
    page = tmpfile("big.html")
    code, _, err = cmon(["report", trace_csv, "-o", page])
    eq(code, 0, "report (%s)" % err)
    d = page_data(page)
    eq(d["downsampled"], True, "said to be downsampled")
    t = d["trace"]
    row = t["table"][0]
    eq((row["func"], row["calls"], row["max_ns"]), ("add", 20000, max(lat)), "exact table")
    srt = sorted(lat)
    eq(row["p50_ns"], srt[9999], "exact p50")
    pts = t["latency_over_time"][0]["points"]
    check(100 < len(pts["v"]) <= 2000, "points kept: %d" % len(pts["v"]))
    check(abs(max(pts["v"]) - max(lat) / 1e3) < 1e-6 and abs(min(pts["v"]) - min(lat) / 1e3) < 1e-6,
          "the slowest and fastest calls survive downsampling")
    eq(pts["t"], sorted(pts["t"]), "points in time order")
    eq(sum(t["latency_hist"]["series"][0]["counts"]), 20000, "the distribution counts every call")
    eq(round(sum(t["rate"]["series"][0]["per_s"]) * t["rate"]["bucket_s"]), 20000,
       "calls per second count every call")


def test_report_from_profile_json_intervals():
    prof = tmpfile("p.jsonl")
    code, _, err = cmon(["profile", "-q", "-F", "json", "-o", prof, "--interval", "1", "--func",
                         "nap", "--", target("sleeper"), "loop", "200", "12"], timeout=HANG)
    eq(code, 0, "profile (%s)" % err)
    page = tmpfile("p.html")
    code, _, err = cmon(["report", prof, "-o", page])
    eq(code, 0, "report (%s)" % err)
    d = page_data(page)
    eq([(s["kind"], s["path"]) for s in d["sources"]], [("profile JSON", prof)], "sources")
    check("trace" not in d, "no calls, no call charts")
    final = d["profile"]["final"]
    eq([(r["func"], r["calls"], r["returns"]) for r in final], [("nap", 12, 12)], "final row")
    check(200e6 <= final[0]["p50_ns"] < 400e6, "p50 of a 200 ms nap: %r" % final[0]["p50_ns"])
    reports = d["profile"]["reports"]
    check(len(reports) >= 2, "interval reports kept: %d" % len(reports))
    eq(sorted(r["report"] for r in reports), list(range(1, len(reports) + 1)), "report numbers")


DUP_LIB = """__attribute__((noinline)) int dup(int x) { return x * 3; }
int lib_entry(int n) { int s = 0; for (int i = 0; i < n; i++) s += dup(i); return s; }
"""
DUP_PROG = """#include <stdio.h>
int lib_entry(int n);
static __attribute__((noinline)) int dup(int x) { return x + 1; }
int main(void) { int s = 0; for (int i = 0; i < 2; i++) s += dup(i);
                 printf("%d\\n", s + lib_entry(3)); return 0; }
"""


def dup_program():
    """prog with a static dup() (2 calls) linked to libdup.so with its own dup() (3 calls)."""
    if not shutil.which("cc"):
        raise Skip("no C compiler")
    d = os.path.join(tmpdir(), "dup")
    os.makedirs(d, exist_ok=True)
    for name, text in (("libdup.c", DUP_LIB), ("prog.c", DUP_PROG)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    for cmd in (["cc", "-g", "-O1", "-shared", "-fPIC", "-o", "libdup.so", "libdup.c"],
                ["cc", "-g", "-O1", "-o", "prog", "prog.c", "-L.", "-ldup",
                 "-Wl,-rpath,$ORIGIN"]):
        code, _, err = run(cmd, cwd=d)
        eq(code, 0, "%s (%s)" % (" ".join(cmd), err))
    return os.path.join(d, "prog")


def test_report_keeps_same_named_functions_of_two_modules_apart():
    """A program's static dup and a library's dup are two functions, named as
    cmon ls / stats / export name them (MODULE:NAME), from every kind of
    source that knows the module."""
    prog = dup_program()
    funcs = ["--func", "prog:dup", "--func", "libdup.so:dup"]
    want = [("libdup.so:dup", 3), ("prog:dup", 2)]
    store = tmpfile("dup-store")
    code, _, err = cmon(["capture", "-q", "-o", store] + funcs + ["--", prog])
    eq(code, 0, "capture (%s)" % err)
    code, out, err = cmon(["ls", store])
    check(re.search(r"^dup\s+prog\s+2\s", out, re.M) and
          re.search(r"^dup\s+libdup\.so\s+3\s", out, re.M), "ls keeps them apart: %s" % out)
    sources = [(store, "table")]
    for cmd, fmt, name, part in (("trace", "csv", "dup-t.csv", "table"),
                                 ("trace", "json", "dup-t.json", "table"),
                                 ("profile", "csv", "dup-p.csv", "final"),
                                 ("profile", "json", "dup-p.json", "final")):
        code, _, err = cmon([cmd, "-q", "-F", fmt, "-o", tmpfile(name)] + funcs + ["--", prog])
        eq(code, 0, "%s -F %s (%s)" % (cmd, fmt, err))
        sources.append((tmpfile(name), part))
    for src, part in sources:
        page = tmpfile("dup.html")
        code, _, err = cmon(["report", src, "-o", page])
        eq(code, 0, "report %s (%s)" % (src, err))
        d = page_data(page)
        sect = d["trace" if part == "table" else "profile"][part]
        eq(sorted((r["func"], r["calls"]) for r in sect), want, "rows of %s" % src)
        if part == "table":
            eq(sorted(f["func"] for f in d["trace"]["latency_over_time"]),
               [w[0] for w in want], "charted functions of %s" % src)
    # The same function from two sources is still one function.
    page = tmpfile("dup2.html")
    code, _, err = cmon(["report", store, tmpfile("dup-t.csv"), "-o", page])
    eq(code, 0, "report of two sources (%s)" % err)
    eq(sorted((r["func"], r["calls"]) for r in page_data(page)["trace"]["table"]),
       [("libdup.so:dup", 6), ("prog:dup", 4)], "rows of two sources")
    # A name in one module only keeps its bare name.
    one = tmpfile("dup-one.csv")
    code, _, err = cmon(["trace", "-q", "-F", "csv", "-o", one, "--func", "prog:dup", "--", prog])
    eq(code, 0, "trace (%s)" % err)
    code, _, err = cmon(["report", one, "-o", page])
    eq(code, 0, "report (%s)" % err)
    eq([(r["func"], r["calls"]) for r in page_data(page)["trace"]["table"]], [("dup", 2)],
       "a name in one module")


def test_report_refuses_foreign_json_lines():
    """A JSON object line is a trace record only with the record's keys, a
    profile row only with "report" and "func": any other object is refused
    as `[1,2,3]` or a foreign CSV are, and no page is written."""
    import json
    trace_json = tmpfile("ok.json")
    code, _, err = cmon(["trace", "-q", "-F", "json", "-o", trace_json, "--func", "grow", "--",
                         target("calls"), "grow", "4"])
    eq(code, 0, "trace json (%s)" % err)
    rec = json.loads(read_text(trace_json).splitlines()[0])
    page = tmpfile("foreign.html")
    cases = [('{"a":1}\n', "not a store, a trace or profile"),
             ("{}\n", "not a store, a trace or profile"),
             ("[1,2,3]\n", "not a store, a trace or profile"),
             ("a,b\n1,2\n", "not a store, a trace or profile")]
    for drop in ("ts_ns", "func"):
        cut = dict(rec)
        del cut[drop]
        cases.append((json.dumps(cut) + "\n", "not a store, a trace or profile"))
    cases.append((json.dumps(rec) + '\n{"a":1}\n', "line 2 is neither a trace record"))
    for i, (text, needle) in enumerate(cases):
        src = tmpfile("foreign-%d.json" % i)
        with open(src, "w") as f:
            f.write(text)
        code, out, err = cmon(["report", src, "-o", page])
        eq(code, 1, "exit status for %r (%s)" % (text, err))
        lines = err.strip().splitlines()
        eq(len(lines), 1, "one error line: %r" % err)
        check(needle in lines[0], "%r in %r" % (needle, lines[0]))
        check(not os.path.exists(page), "no page written for %r" % text)
    code, _, err = cmon(["report", trace_json, "-o", page])
    eq(code, 0, "the real trace is still read (%s)" % err)
    eq([(r["func"], r["calls"]) for r in page_data(page)["trace"]["table"]], [("grow", 1)],
       "the real trace's table")


def test_report_counts_a_source_given_twice_once():
    """The same store by three paths (folder, folder/, folder/calls.db) and the
    same file twice (and through a symlink) are read once, each repeat said in
    one warning line; a copy is another source."""
    calls = target("calls")
    store = tmpfile("twice")
    code, _, err = cmon(["capture", "-q", "-o", store, "--func", "fact", "--", calls, "recurse"])
    eq(code, 0, "capture (%s)" % err)
    csv_ = tmpfile("twice.csv")
    code, _, err = cmon(["trace", "-q", "-F", "csv", "-o", csv_, "--func", "grow", "--",
                         calls, "grow", "4"])
    eq(code, 0, "trace (%s)" % err)
    link = tmpfile("twice-link.csv")
    os.symlink(csv_, link)
    page = tmpfile("twice.html")
    rel = os.path.relpath(store)
    code, _, err = cmon(["report", store, store + "/", "./" + rel + "/calls.db", csv_, csv_,
                         link, "-o", page])
    eq(code, 0, "report (%s)" % err)
    warn = [l for l in err.splitlines() if "counted once" in l]
    eq(len(warn), 4, "one warning line per repeat: %r" % err)
    check("cmon: report of 2 sources written to " in err, "the sources read: %r" % err)
    check(all("again" in w for w in warn[:2]) and "store" in warn[0] and "store" in warn[1],
          "the store's repeats said: %r" % warn)
    d = page_data(page)
    eq([(s["path"], s["kind"]) for s in d["sources"]], [(store, "store"), (csv_, "trace CSV")],
       "sources read")
    eq(sorted((r["func"], r["calls"]) for r in d["trace"]["table"]), [("fact", 5), ("grow", 1)],
       "each call counted once")
    copy = tmpfile("twice-copy.csv")
    shutil.copyfile(csv_, copy)
    code, _, err = cmon(["report", csv_, copy, "-o", page])
    eq(code, 0, "report (%s)" % err)
    check("counted once" not in err, "no warning for a copy: %r" % err)
    eq([(r["func"], r["calls"]) for r in page_data(page)["trace"]["table"]], [("grow", 2)],
       "a copy is counted")


def test_report_of_a_long_csv():
    """A trace CSV in the long shape (a row per value: functions with other
    parameters share the table) is a trace CSV, each call counted once."""
    csv_ = tmpfile("long.csv")
    code, _, err = cmon(["trace", "-q", "-F", "csv", "-o", csv_, "--func", "fact", "--func",
                         "outer", "--", target("calls"), "recurse"])
    eq(code, 0, "trace (%s)" % err)
    check(read_text(csv_).startswith("schema,call,ts_ns,"), "the long shape")
    page = tmpfile("long.html")
    code, _, err = cmon(["report", csv_, "-o", page])
    eq(code, 0, "report (%s)" % err)
    d = page_data(page)
    eq([(s["path"], s["kind"]) for s in d["sources"]], [(csv_, "trace CSV")], "sources read")
    eq(sorted((r["func"], r["calls"]) for r in d["trace"]["table"]), [("fact", 5), ("outer", 1)],
       "each call counted once")


# Injected before report.js in a copy of the page: keeps every uPlot made,
# records every text drawn on a canvas with its box in canvas pixels (through
# the context's transform: rotated axis titles too), and after the charts are
# drawn writes, per chart, its canvas size, x range, texts, axis titles,
# legend text (no hover has happened) and how many pixels carry each series'
# colour, as JSON into <pre id="cmon-measure">.
MEASURE_JS = r"""
(function () {
  var U = window.uPlot, made = [], drawn = new Map();
  window.uPlot = function (o, d, t) { var u = new U(o, d, t); made.push(u); return u; };
  Object.keys(U).forEach(function (k) { window.uPlot[k] = U[k]; });
  var C = CanvasRenderingContext2D.prototype, fill = C.fillText, clear = C.clearRect;
  C.clearRect = function (x, y, w, h) {
    if (x <= 0 && y <= 0 && w >= this.canvas.width && h >= this.canvas.height)
      drawn.set(this.canvas, []);
    return clear.apply(this, arguments);
  };
  C.fillText = function (s, x, y) {
    var m = this.measureText(s), T = this.getTransform(), xs = [], ys = [];
    [[x - m.actualBoundingBoxLeft, y - m.actualBoundingBoxAscent],
     [x + m.actualBoundingBoxRight, y - m.actualBoundingBoxAscent],
     [x - m.actualBoundingBoxLeft, y + m.actualBoundingBoxDescent],
     [x + m.actualBoundingBoxRight, y + m.actualBoundingBoxDescent]].forEach(function (p) {
      xs.push(T.a * p[0] + T.c * p[1] + T.e);
      ys.push(T.b * p[0] + T.d * p[1] + T.f);
    });
    var l = drawn.get(this.canvas) || [];
    l.push({ text: String(s), box: [Math.min.apply(null, xs), Math.min.apply(null, ys),
                                    Math.max.apply(null, xs), Math.max.apply(null, ys)] });
    drawn.set(this.canvas, l);
    return fill.apply(this, arguments);
  };
  function rgb(c) {
    var e = document.createElement("canvas").getContext("2d");
    e.fillStyle = c;
    var h = e.fillStyle;
    return [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];
  }
  setTimeout(function () {
    var out = made.map(function (u) {
      var cv = u.root.querySelector("canvas"), ctx = cv.getContext("2d");
      var px = ctx.getImageData(0, 0, cv.width, cv.height).data;
      var series = u.series.slice(1).map(function (s) {
        var c = rgb(typeof s.stroke === "function" ? s.stroke(u, 1) : s.stroke), n = 0;
        for (var i = 0; i < px.length; i += 4)
          if (px[i + 3] > 200 && Math.abs(px[i] - c[0]) + Math.abs(px[i + 1] - c[1]) +
              Math.abs(px[i + 2] - c[2]) < 24) n++;
        var sum = 0;
        (u.data[u.series.indexOf(s)] || []).forEach(function (v) { sum += v || 0; });
        return { label: s.label, pixels: n, sum: sum };
      });
      return {
        title: u.root.querySelector(".u-title") ? u.root.querySelector(".u-title").textContent : "",
        width: cv.width, height: cv.height,
        x: [u.scales.x.min, u.scales.x.max],
        axis_titles: u.axes.map(function (a) { return a.label || ""; }),
        texts: drawn.get(cv) || [],
        legend: Array.prototype.map.call(u.root.querySelectorAll(".u-legend .u-value"),
                                         function (e) { return e.textContent; }),
        series: series
      };
    });
    var pre = document.createElement("pre");
    pre.id = "cmon-measure";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }, 300);
})();
"""


def measure_charts(page, dom_too=False):
    """Every chart of PAGE as drawn by headless Chromium (MEASURE_JS), and
    the DOM with DOM_TOO."""
    import html as html_
    import json
    text = read_text(page)
    at = text.rindex("<script>\n")  # the page's own script, after uPlot's
    probe = tmpfile(os.path.basename(page) + ".measure.html")
    with open(probe, "w") as f:
        f.write(text[:at] + "<script>\n" + MEASURE_JS + "</script>\n" + text[at:])
    dom = chromium(probe, "--dump-dom", "--window-size=1400,3000")
    m = re.search(r'<pre id="cmon-measure">(.*?)</pre>', dom, re.S)
    check(m, "the measuring script ran: %r" % dom[-300:])
    charts = json.loads(html_.unescape(m.group(1)))
    return (charts, dom) if dom_too else charts


def overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def chart_problems(c):
    """What is wrong with chart C as drawn (measure_charts): axis titles over
    tick labels, tick labels over each other, text outside the canvas, time ticks not increasing, a
    legend with placeholders before any hover, a series without a pixel of
    its colour."""
    problems = []
    titles = [t for t in c["texts"] if t["text"] in c["axis_titles"]]
    ticks = [t for t in c["texts"] if t["text"] not in c["axis_titles"]]
    eq(sorted(t["text"] for t in titles), sorted(a for a in c["axis_titles"] if a),
       "axis titles drawn in %r" % c["title"])
    check(ticks, "tick labels drawn in %r" % c["title"])
    problems += ["%r: axis title %r %r overlaps tick label %r %r" %
                 (c["title"], a["text"], a["box"], t["text"], t["box"])
                 for a in titles for t in ticks if overlap(a["box"], t["box"])]
    problems += ["%r: tick labels %r and %r overlap" % (c["title"], t["text"], u["text"])
                 for i, t in enumerate(ticks) for u in ticks[i + 1:]
                 if t["text"] and u["text"] and overlap(t["box"], u["box"])]
    problems += ["%r: %r %r outside the %dx%d canvas" %
                 (c["title"], t["text"], t["box"], c["width"], c["height"])
                 for t in c["texts"] if not (t["box"][0] >= 0 and t["box"][1] >= 0 and
                                             t["box"][2] <= c["width"] and
                                             t["box"][3] <= c["height"])]
    if "seconds since start" in c["axis_titles"]:
        # the x axis: the bottom row of tick labels, read left to right
        bottom = max(t["box"][1] for t in ticks)
        xs = sorted((t for t in ticks if abs(t["box"][1] - bottom) < 2),
                    key=lambda t: t["box"][0])
        vals = [float(t["text"].replace(",", "")) for t in xs]
        if len(vals) < 2 or any(a >= b for a, b in zip(vals, vals[1:])):
            problems.append("%r: time ticks not increasing: %r" %
                            (c["title"], [t["text"] for t in xs]))
    if not (c["legend"] and all(v.strip() and v.strip() != "--" for v in c["legend"])):
        problems.append("%r: legend before any hover: %r" % (c["title"], c["legend"]))
    problems += ["%r: series %r hidden: %d pixels of its colour" %
                 (c["title"], s["label"], s["pixels"]) for s in c["series"]
                 if s["pixels"] <= 20]
    return problems


def test_report_charts_measured_in_chromium():
    """The charts as drawn: axis titles clear of tick labels at large values
    (200 ms naps: 200,000 µs), every tick label inside its canvas (the last x
    tick too), the latency-over-time charts of one run on one time range,
    legends that say something before any hover, and equal series (outer,
    middle and leaf: one call each) each visible, also where two runs make
    slivers of one time axis."""
    calls_csv = tmpfile("m-calls.csv")
    code, _, err = cmon(["trace", "-q", "-F", "csv", "-o", calls_csv, "--func", "fact",
                         "--func", "outer", "--func", "middle", "--func", "leaf", "--",
                         target("calls"), "recurse"])
    eq(code, 0, "trace (%s)" % err)
    naps = tmpfile("m-naps.json")
    code, _, err = cmon(["trace", "-q", "-F", "json", "-o", naps, "--func", "nap", "--",
                         target("sleeper"), "loop", "200", "3"])
    eq(code, 0, "trace (%s)" % err)
    prof = tmpfile("m-prof.csv")
    code, _, err = cmon(["profile", "-q", "-F", "csv", "-o", prof, "--func", "nap", "--",
                         target("sleeper"), "loop", "200", "3"])
    eq(code, 0, "profile (%s)" % err)
    charts = []
    # the third: two runs on one time axis, each a sliver of it
    for name, sources in (("m-calls.html", [calls_csv]), ("m-naps.html", [naps, prof]),
                          ("m-both.html", [calls_csv, naps])):
        page = tmpfile(name)
        code, _, err = cmon(["report"] + sources + ["-o", page])
        eq(code, 0, "report (%s)" % err)
        got = measure_charts(page)
        check(got, "charts measured in %s" % name)
        charts.append(got)
    problems = []  # every chart's, said together
    for c in charts[0] + charts[1] + charts[2]:
        problems += chart_problems(c)
    over_time = [c for c in charts[0] if c["title"] in ("fact", "outer", "middle", "leaf")]
    eq(sorted(c["title"] for c in over_time), ["fact", "leaf", "middle", "outer"],
       "latency-over-time charts")
    if len({tuple(c["x"]) for c in over_time}) != 1:
        problems.append("not one time range for the run's charts: %r" %
                        [(c["title"], c["x"]) for c in over_time])
    check(not problems, "\n".join(problems))
    # the equal series are equal: one call each, in the same bucket
    per_s = {s["func"]: s["per_s"] for s in page_data(tmpfile("m-calls.html"))["trace"]["rate"]["series"]}
    check(per_s["outer"] == per_s["middle"] == per_s["leaf"], "equal series: %r" % per_s)
    rate = [c for c in charts[0] if c["title"].startswith("calls per second")]
    eq([sorted(s["label"] for s in c["series"]) for c in rate],
       [["fact", "leaf", "middle", "outer"]], "the calls-per-second chart's series")


def store_calls(store):
    """{function: (latencies sorted, calls, RSS growth)} and (first ts, last
    return) of a capture store, read from its SQLite file directly."""
    import sqlite3
    db = sqlite3.connect("file:%s/calls.db?mode=ro" % store, uri=True)
    funcs, t0, t1 = {}, None, None
    for name, ts, lat, r0, r1 in db.execute(
            "SELECT f.name, c.ts_ns, c.latency_ns, c.rss_entry, c.rss_exit FROM calls c "
            "JOIN functions f ON f.id = c.func_id ORDER BY c.id"):
        lats, calls, rss = funcs.get(name, ([], 0, 0))
        if lat is not None:
            lats.append(lat)
        if r0 is not None and r1 is not None:
            rss += r1 - r0
        funcs[name] = (lats, calls + 1, rss)
        t0 = ts if t0 is None else min(t0, ts)
        t1 = max(t1 or 0, ts + (lat or 0))
    db.close()
    return {k: (sorted(v[0]), v[1], v[2]) for k, v in funcs.items()}, (t1 - t0) / 1e9


def nearest_rank(v, p):
    import math
    k = math.ceil(p * len(v))
    return v[k - 1 if k else 0]


def js_ns(v):
    """report.js's ns(): how the page writes a duration."""
    if v < 1e3:
        return "%d ns" % v
    if v < 1e6:
        return "%.2f µs" % (v / 1e3)
    if v < 1e9:
        return "%.2f ms" % (v / 1e6)
    return "%.3f s" % (v / 1e9)


def test_report_diff_page_in_chromium():
    """`cmon report --diff A B`: cmon diff's figures (calls, p50/p90/p99 and
    RSS growth of A beside B, the change, the verdict in its words) as a
    table, exact against the stores' own calls, each function's latency
    distribution of A over B's, and each run's charts on its own time axis (both from 0, each as long as its run), measured in
    Chromium (sleeper: `loop MS N` naps MS ms N times, then count_me)."""
    a, b = _capture("cmp-a", 1, ["nap", "count_me"]), _capture("cmp-b", 3, ["nap"])
    code, text, err = cmon(["diff", a, b])
    eq(code, 0, "cmon diff (%s)" % err)
    said = [l.strip() for l in text.splitlines() if l.startswith("  ") and
            ("noise" in l or "only in" in l)]
    page = tmpfile("cmp.html")
    code, _, err = cmon(["report", "--diff", a, b, "-o", page])
    eq(code, 0, "report --diff (%s)" % err)
    eq(err, "cmon: comparison of %s and %s written to %s\n" % (a, b, page), "stderr")
    (fa, span_a), (fb, span_b) = store_calls(a), store_calls(b)
    eq((sorted(fa), sorted(fb)), (["count_me", "nap"], ["nap"]), "functions in the stores")
    d = page_data(page)
    rows = d["diff"]["rows"]
    eq([r["func"] for r in rows], ["nap", "count_me"], "rows: A's functions in A's order")
    for r in rows:
        for side, funcs in (("a", fa), ("b", fb)):
            if r["func"] not in funcs:
                eq(r[side], None, "%s absent from %s" % (r["func"], side))
                continue
            lats, calls, rss = funcs[r["func"]]
            eq(r[side], {"calls": calls, "returned": len(lats),
                         "p50_ns": nearest_rank(lats, 0.5), "p90_ns": nearest_rank(lats, 0.9),
                         "p99_ns": nearest_rank(lats, 0.99), "rss_growth_bytes": rss},
               "%s in %s" % (r["func"], side))
    nap = rows[0]
    for q in ("p50", "p90", "p99"):
        qa, qb = nap["a"][q + "_ns"], nap["b"][q + "_ns"]
        eq(nap["change_pct"][q], (qb - qa) * 100 / qa, "%s change" % q)
    check(nap["a"]["p50_ns"] >= 1000000 and nap["b"]["p50_ns"] >= 3000000, "naps take their time")
    eq((nap["verdict"], rows[1]["verdict"]), ("slower", "only_a"), "verdicts")
    eq([r["words"] for r in rows], said, "the verdicts in cmon diff's words")
    check(nap["p_value"] < 0.01, "p = %r" % nap["p_value"])

    charts, dom = measure_charts(page, dom_too=True)
    m = re.search(r'<tr data-verdict="slower">(.*?)</tr>', dom)
    check(m, "the comparison's nap row rendered")
    cells = re.findall(r"<td[^>]*>(.*?)</td>", m.group(1))
    pa, pb = nap["a"], nap["b"]
    want = ["nap", "20", "20"]
    for q in ("p50", "p90", "p99"):
        want += [js_ns(pa[q + "_ns"]), js_ns(pb[q + "_ns"]), "%+.0f%%" % nap["change_pct"][q]]
    want += ["%.1f KiB" % (pa["rss_growth_bytes"] / 1024), "%.1f KiB" % (pb["rss_growth_bytes"] / 1024),
             said[0]]
    eq(cells, want, "the nap row as rendered")
    check('<tr data-verdict="only_a"><td class="l">count_me</td><td>1</td><td>-</td>' in dom,
          "count_me only in A, rendered")
    dist = [c for c in charts if c["title"] == "nap: calls per latency bin, A and B"]
    eq([[(s["label"], s["sum"]) for s in c["series"]] for c in dist],
       [[("A", len(fa["nap"][0])), ("B", len(fb["nap"][0]))]],
       "nap's distributions, A's over B's, every returned call")
    naps = [c for c in charts if c["title"] == "nap"]
    eq([c["x"] for c in naps], [[0, span_a], [0, span_b]],
       "A's and B's latency charts each on its own time axis")
    problems = []
    for c in charts:
        problems += chart_problems(c)
    check(not problems, "\n".join(problems))


def test_report_diff_errors():
    page = tmpfile("cmp-bad.html")
    csv_ = tmpfile("cmp.csv")
    code, _, err = cmon(["trace", "-q", "-F", "csv", "-o", csv_, "--func", "grow", "--",
                         target("calls"), "grow", "4"])
    eq(code, 0, "trace (%s)" % err)
    for args, status, needle in [
            (["report", "--diff", csv_, "-o", page], 2, "--diff compares two capture stores"),
            (["report", "--diff", csv_, csv_, "-o", page], 1, csv_),
            (["report", "--diff", tmpfile("none-a"), tmpfile("none-b"), "-o", page], 1,
             "none-a")]:
        code, out, err = cmon(args)
        eq(code, status, "exit status of %r (%s)" % (args, err))
        lines = err.strip().splitlines()
        eq(len(lines), 1, "one error line: %r" % err)
        check(needle in lines[0], "%r in %r" % (needle, lines[0]))
    check(not os.path.exists(page), "no page written on error")


def test_report_of_two_stores_points_to_diff():
    """Two stores given to a plain report share one time axis and one table:
    the page says so and names --diff; a page of one store does not."""
    stores = []
    for name in ("two-a", "two-b"):
        path = tmpfile(name)
        code, _, err = cmon(["capture", "-q", "-o", path, "--func", "fact", "--",
                             target("calls"), "recurse"])
        eq(code, 0, "capture (%s)" % err)
        stores.append(path)
    hint = "2 capture stores here share one time axis and one table"
    for sources, said in ((stores, True), (stores[:1], False)):
        page = tmpfile("two.html")
        code, _, err = cmon(["report"] + sources + ["-o", page])
        eq(code, 0, "report (%s)" % err)
        dom = chromium(page, "--dump-dom")
        eq(hint in dom and "cmon report --diff A B" in dom, said, "the hint on a page of %d "
           "store(s)" % len(sources))
        eq([(r["func"], r["calls"]) for r in page_data(page)["trace"]["table"]],
           [("fact", 5 * len(sources))], "the calls added together")
