/* report.js: draws the report from the JSON embedded in the page (model.c)
 * with uPlot.  No network: everything is in the page. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("cmon-data").textContent);
  var root = document.getElementById("content");
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                "#17becf"];
  var charts = 0;

  function el(tag, parent, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }
  function ns(v) {
    if (v === null || v === undefined || v < 0) return "-";
    if (v < 1e3) return v + " ns";
    if (v < 1e6) return (v / 1e3).toFixed(2) + " µs";
    if (v < 1e9) return (v / 1e6).toFixed(2) + " ms";
    return (v / 1e9).toFixed(3) + " s";
  }
  function bytes(v) {
    var a = Math.abs(v), s = v < 0 ? "-" : "";
    if (a < 1024) return v + " B";
    if (a < 1048576) return s + (a / 1024).toFixed(1) + " KiB";
    if (a < 1073741824) return s + (a / 1048576).toFixed(1) + " MiB";
    return s + (a / 1073741824).toFixed(2) + " GiB";
  }
  function table(parent, cols, rows) {
    var t = el("table", parent), tr = el("tr", el("thead", t)), tb = el("tbody", t);
    cols.forEach(function (c) { el("th", tr, c[0], c[2] ? "l" : ""); });
    rows.forEach(function (r) {
      var row = el("tr", tb);
      cols.forEach(function (c) { el("td", row, c[1](r), c[2] ? "l" : ""); });
    });
    return t;
  }
  /* The per-function columns of trace and profile tables. */
  var FUNC_COLS = [["calls", function (r) { return r.calls; }],
                 ["noreturn", function (r) { return r.noreturn; }],
                 ["total", function (r) { return ns(r.total_ns); }],
                 ["mean", function (r) { return ns(r.mean_ns); }],
                 ["p50", function (r) { return ns(r.p50_ns); }],
                 ["p90", function (r) { return ns(r.p90_ns); }],
                 ["p99", function (r) { return ns(r.p99_ns); }],
                 ["max", function (r) { return ns(r.max_ns); }],
                 ["RSS growth", function (r) { return bytes(r.rss_growth_bytes); }]];
  /* Series I of N lines is drawn (N - I) * DASH on, I * DASH off: where
   * equal series lie on each other, each shows in its own stretch of every
   * period (series N-1-k is the last drawn over stretch k). */
  var DASH = 4;
  function dash(i, n) { return i && n > 1 ? [(n - i) * DASH, i * DASH] : []; }
  function num(v) {
    if (v === null || v === undefined) return "-";
    var a = Math.abs(v);
    if (a >= 1e4 || a === Math.round(a)) return Math.round(v).toLocaleString("en-US");
    return v.toPrecision(a >= 1 ? 4 : 3);
  }
  /* An axis as wide (or tall) as its widest tick label: an axis title never
   * lies over large values. */
  function fitAxis(u, values, i, cycle) {
    var a = u.axes[i];
    if (cycle > 1 && a._size) return a._size;
    var font = Array.isArray(a.font) ? a.font[0] : a.font, w = 0;
    u.ctx.font = font;
    (values || []).forEach(function (v) {
      if (v !== null && v !== undefined) w = Math.max(w, u.ctx.measureText(String(v)).width);
    });
    w /= (window.devicePixelRatio || 1);
    if (a.side % 2 === 0) return 14 + a.ticks.size + a.gap + 8;  /* one line of text */
    return Math.ceil(w + a.ticks.size + a.gap + 6);
  }
  /* Right padding: half the last x tick label, so it is never cut off. */
  function padRight(u) {
    var a = u.axes[0], v = a && a._values, w = 0;
    if (v && v.length) {
      u.ctx.font = Array.isArray(a.font) ? a.font[0] : a.font;
      w = u.ctx.measureText(String(v[v.length - 1])).width / (window.devicePixelRatio || 1);
    }
    return Math.max(16, Math.ceil(w / 2) + 6);
  }
  /* Legend values before any hover: what the series holds (its range, or
   * what SUMMARY says), never uPlot's "--" placeholders. */
  function legendValue(fmt, summary) {
    return function (u, v, si, idx) {
      if (idx !== null && idx !== undefined) return v === null || v === undefined ? "-" : fmt(v);
      var d = (u.data[si] || []).filter(function (x) { return x !== null && x !== undefined; });
      if (!d.length) return "no data";
      if (summary && si > 0) return summary(d, u, si);
      var lo = Math.min.apply(null, d), hi = Math.max.apply(null, d);
      return si === 0 ? fmt(lo) + " to " + fmt(hi) : "max " + fmt(hi);
    };
  }
  function calls(n) { return num(n) + (n === 1 ? " call" : " calls"); }
  function chart(parent, title, opts, data) {
    var box = el("div", parent, null, "chart");
    opts.title = title;
    opts.width = opts.width || 560;
    opts.height = opts.height || 260;
    opts.padding = [null, padRight, null, null];
    opts.axes.forEach(function (a) { a.size = a.size || fitAxis; });
    opts.series.forEach(function (s) { s.value = s.value || legendValue(num, opts.summary); });
    delete opts.summary;
    var u = new uPlot(opts, data, box);
    charts++;
    return u;
  }
  function pointsOnly(label, i, size) {
    var c = COLORS[i % COLORS.length];
    return { label: label, stroke: c, fill: c, paths: function () { return null; },
             points: { show: true, size: size || 6, fill: c, stroke: c } };
  }
  /* A line; drawn as markers too where it has fewer than 3 points (a
   * line needs two), the earlier series' markers larger, so equal ones
   * show as rings. */
  function line(label, i, n, markers) {
    var c = COLORS[i % COLORS.length];
    return { label: label, stroke: c, width: 1.5, dash: dash(i, n),
             points: { show: !!markers, size: Math.max(5, 16 - 3 * i), fill: c, stroke: c } };
  }
  /* Whether a line over time needs markers: fewer than 3 points, or all
   * within a sliver of the run (a line there would be a dot or nothing). */
  function fewOrNarrow(t, span) {
    return t.length < 3 || (span > 0 && t[t.length - 1] - t[0] < span / 50);
  }
  /* Seconds with as many decimals as the ticks' step needs: a run of a
   * millisecond is not "0 0 0". */
  function secondsAxis() {
    return { label: "seconds since start", values: function (u, splits, ai, space, incr) {
      var dec = Math.min(9, Math.max(0, Math.ceil(-Math.log10(incr) - 1e-9)));
      return splits.map(function (v) { return v.toFixed(dec); });
    } };
  }
  /* Every chart over time of the run: one x range, the run's. */
  function runRange(span) {
    return function () { return [0, span > 0 ? span : 1]; };
  }
  function pos(v) { return v > 0 ? v : 1e-3; }

  var h = el("h1", root, D.title || "cmon report");
  var src = el("p", root, null, "note");
  src.textContent = "Sources: " + D.sources.map(function (s) {
    return s.path + " (" + s.kind + ", " + s.items + ")";
  }).join("; ");
  el("p", root, "How this page reduces large inputs: " + D.method +
     (D.downsampled ? " Some series here were downsampled." : " Nothing here needed it."),
     "note");

  var stores = D.sources.filter(function (s) { return s.kind === "store"; }).length;
  if (stores > 1 && !D.diff)
    el("p", root, stores + " capture stores here share one time axis and one table (their " +
       "calls added together); to compare two runs, each on its own time axis: " +
       "cmon report --diff A B -o FILE.html.", "note");

  /* A run's calls: table, latency over time, distribution, rate, memory. */
  function drawTrace(T, root, hd) {
    el(hd, root, "Functions");
    el("p", root, T.calls + " calls over " + T.span_s.toFixed(3) + " s.", "note");
    table(root, [["function", function (r) { return r.func; }, true]].concat(FUNC_COLS), T.table);

    el(hd, root, "Latency over time");
    T.latency_over_time.forEach(function (f, i) {
      chart(root, f.func, {
        scales: { x: { time: false, range: runRange(T.span_s) }, y: { distr: 3 } },
        axes: [secondsAxis(), { label: "latency (µs)" }],
        series: [{ label: "s" }, pointsOnly(f.func, i)]
      }, [f.points.t, f.points.v.map(pos)]);
    });

    el(hd, root, "Latency distribution");
    var H = T.latency_hist;
    if (H.edges_us.length) {
      chart(root, "calls per latency bin (10 bins per decade)", {
        width: 760,
        scales: { x: { time: false, distr: 3 } },
        axes: [{ label: "latency (µs, log)" }, { label: "calls" }],
        summary: function (d) { return calls(d.reduce(function (a, b) { return a + b; }, 0)); },
        series: [{ label: "µs" }].concat(H.series.map(function (s, i) {
          var o = line(s.func, i, H.series.length);
          o.paths = uPlot.paths.stepped({ align: 1 });
          return o;
        }))
      }, [H.edges_us].concat(H.series.map(function (s) { return s.counts; })));
    }

    el(hd, root, "Calls per second");
    chart(root, "calls per second (" + T.rate.bucket_s.toPrecision(3) + " s buckets)", {
      width: 760,
      scales: { x: { time: false, range: runRange(T.span_s) } },
      axes: [secondsAxis(), { label: "calls/s" }],
      summary: function (d) {
        return calls(Math.round(d.reduce(function (a, b) { return a + b; }, 0) * T.rate.bucket_s)) +
               ", peak " + num(Math.max.apply(null, d)) + "/s";
      },
      series: [{ label: "s" }].concat(T.rate.series.map(function (s, i) {
        return line(s.func, i, T.rate.series.length, T.rate.t.length < 3);
      }))
    }, [T.rate.t].concat(T.rate.series.map(function (s) { return s.per_s; })));

    el(hd, root, "Memory");
    T.memory.forEach(function (m) {
      var grown = T.growth.filter(function (g) { return g.pid === m.pid; });
      var data = uPlot.join([[m.rss.t, m.rss.v], [m.vms.t, m.vms.v],
                             [grown.map(function (g) { return g.t_s; }),
                              grown.map(function (g) { return g.rss_after_bytes / 1048576; })]]);
      chart(root, "process " + m.pid + ": RSS and VMS", {
        width: 760,
        scales: { x: { time: false, range: runRange(T.span_s) } },
        axes: [secondsAxis(), { label: "MiB" }],
        summary: function (d, u, si) {
          return si === 3 ? calls(d.length) : "max " + num(Math.max.apply(null, d)) + " MiB";
        },
        series: [{ label: "s" }, line("RSS", 0, 1, fewOrNarrow(m.rss.t, T.span_s)),
                 line("VMS", 2, 1, fewOrNarrow(m.vms.t, T.span_s)),
                 pointsOnly("calls that grew RSS most", 1)]
      }, data);
    });
    if (T.growth.length) {
      el(hd === "h2" ? "h3" : "h4", root, "The calls that grew RSS the most");
      table(root, [["function", function (r) { return r.func; }, true],
                   ["pid", function (r) { return r.pid; }],
                   ["at (s)", function (r) { return r.t_s.toFixed(6); }],
                   ["RSS growth", function (r) { return bytes(r.growth_bytes); }],
                   ["RSS after", function (r) { return bytes(r.rss_after_bytes); }]], T.growth);
    }
  }

  if (D.trace) drawTrace(D.trace, root, "h2");

  function pct(v) { return v === null || v === undefined ? "-" : (v >= 0 ? "+" : "") + v.toFixed(0) + "%"; }
  if (D.diff) {
    var X = D.diff;
    el("h2", root, "Comparison: A " + X.a_path + ", B " + X.b_path);
    el("p", root, "Per function: run A beside run B, the change, and whether B's latencies " +
       "differ from A's beyond the noise (the Mann-Whitney rank test over the calls, p below " +
       X.alpha + "), as cmon diff says it.", "note");
    function side(k, f) { return function (r) { return r[k] ? f(r[k]) : "-"; }; }
    var cols = [["function", function (r) { return r.func; }, true],
                ["calls A", side("a", function (s) { return s.calls; })],
                ["calls B", side("b", function (s) { return s.calls; })]];
    ["p50", "p90", "p99"].forEach(function (q) {
      cols.push([q + " A", side("a", function (s) { return ns(s[q + "_ns"]); })],
                [q + " B", side("b", function (s) { return ns(s[q + "_ns"]); })],
                [q + " change", function (r) { return pct(r.change_pct[q]); }]);
    });
    cols.push(["RSS growth A", side("a", function (s) { return bytes(s.rss_growth_bytes); })],
              ["RSS growth B", side("b", function (s) { return bytes(s.rss_growth_bytes); })],
              ["beyond the noise?", function (r) { return r.words; }, true]);
    var dt = table(root, cols, X.rows);
    dt.id = "comparison";
    X.rows.forEach(function (r, k) { dt.tBodies[0].rows[k].setAttribute("data-verdict", r.verdict); });
    /* Each function's latency distribution, A's over B's: the bins lie on
     * one grid (10 per decade) whatever the run. */
    var hists = [X.a, X.b].map(function (m) {
      var H = m.trace ? m.trace.latency_hist : null, by = {};
      if (H) H.series.forEach(function (s) { by[s.func] = [H.edges_us, s.counts]; });
      return by;
    });
    var both = X.rows.filter(function (r) { return hists[0][r.func] && hists[1][r.func]; });
    if (both.length) {
      el("h3", root, "Latency distribution, A beside B");
      both.forEach(function (r) {
        var data = uPlot.join([hists[0][r.func], hists[1][r.func]]);
        for (var k = 1; k < data.length; k++)
          data[k] = Array.prototype.map.call(data[k], function (v) { return v === null ? 0 : v; });
        /* only the bins of this function's calls (and the edge closing the last) */
        var lo = data[0].length, hi = 0;
        for (var j = 0; j < data[0].length; j++)
          if (data[1][j] || data[2][j]) { lo = Math.min(lo, j); hi = j; }
        data = data.map(function (col) { return Array.prototype.slice.call(col, lo, hi + 2); });
        chart(root, r.func + ": calls per latency bin, A and B", {
          scales: { x: { time: false, distr: 3 } },
          axes: [{ label: "latency (µs, log)" }, { label: "calls" }],
          summary: function (d) { return calls(d.reduce(function (x, y) { return x + y; }, 0)); },
          series: [{ label: "µs" }].concat(["A", "B"].map(function (n, i) {
            var o = line(n, i, 2);
            o.paths = uPlot.paths.stepped({ align: 1 });
            return o;
          }))
        }, data);
      });
    }
    [["A", X.a_path, X.a], ["B", X.b_path, X.b]].forEach(function (run) {
      el("h2", root, "Run " + run[0] + ": " + run[1]);
      if (run[2].trace) drawTrace(run[2].trace, root, "h3");
      else el("p", root, "No calls.", "note");
    });
  }

  if (D.profile) {
    var P = D.profile;
    el("h2", root, "Profile");
    table(root, [["function", function (r) { return r.func; }, true],
                 ["pid", function (r) { return r.pid >= 0 ? r.pid : "all"; }]].concat(FUNC_COLS),
          P.final);
    var idx = P.final.map(function (r, i) { return i; });
    chart(root, "latency percentiles per function", {
      width: 760,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [{ label: "function", values: function (u, vals) {
                 return vals.map(function (v) {
                   return P.final[v] && v === Math.round(v) ? P.final[v].func : "";
                 });
               } }, { label: "latency (µs, log)" }],
      series: [{ label: "function" }].concat(["p50_ns", "p90_ns", "p99_ns"].map(function (k, i) {
        /* largest first: equal percentiles show as rings */
        return pointsOnly(k.replace("_ns", ""), i, [14, 10, 6][i]);
      }))
    }, [idx].concat(["p50_ns", "p90_ns", "p99_ns"].map(function (k) {
      return P.final.map(function (r) { return pos(r[k] / 1e3); });
    })));
    var funcs = {};
    P.reports.forEach(function (r) { (funcs[r.func] = funcs[r.func] || []).push(r); });
    var names = Object.keys(funcs).slice(0, 8);
    if (P.reports.length > P.final.length) {
      var tables = names.map(function (n) {
        var rs = funcs[n], t = [], v = [];
        for (var i = 1; i < rs.length; i++) {
          var dt = rs[i].elapsed_s - rs[i - 1].elapsed_s;
          t.push(rs[i].elapsed_s);
          v.push(dt > 0 ? (rs[i].calls - rs[i - 1].calls) / dt : 0);
        }
        return [t, v];
      });
      chart(root, "calls per second between reports", {
        width: 760, scales: { x: { time: false } },
        axes: [secondsAxis(), { label: "calls/s" }],
        series: [{ label: "s" }].concat(names.map(function (n, i) {
          return line(n, i, names.length);
        }))
      }, uPlot.join(tables));
    }
  }

  if (D.stats) {
    D.stats.forEach(function (S, k) {
      el("h2", root, "Significant digits across runs" + (D.stats.length > 1 ? " (" + (k + 1) + ")" : ""));
      el("p", root, S.runs.length + " runs: " + S.runs.join(", ") +
         ". Digits: -log10(std/|mean|), capped at the type's precision; \"all\": identical " +
         "in every run (drawn at 17).", "note");
      if (S.mismatches.length)
        el("p", root, "Runs differ: " + S.mismatches.join("; "), "note");
      var byFunc = {};
      S.values.forEach(function (v) { (byFunc[v.function] = byFunc[v.function] || []).push(v); });
      Object.keys(byFunc).forEach(function (fn, i) {
        var vs = byFunc[fn];
        chart(root, fn + ": significant digits per value", {
          width: 760,
          scales: { x: { time: false }, y: { range: [0, 18] } },
          axes: [{ label: "value (call: name)", values: function (u, vals) {
                     return vals.map(function (x) {
                       var v = vs[x];
                       return v && x === Math.round(x) ? (v.process ? "p" + v.process + "#" : "") + v.call + ":" + v.value : "";
                     });
                   } }, { label: "digits" }],
          series: [{ label: "value" }, (function () {
            var o = line("digits", i, 1);
            o.paths = uPlot.paths.bars({ size: [0.6, 40] });
            o.fill = COLORS[i % COLORS.length];
            return o;
          })()]
        }, [vs.map(function (v, j) { return j; }),
            vs.map(function (v) { return v.sig_digits === "all" ? 17 : v.sig_digits; })]);
      });
      table(root, [["function", function (r) { return r.function; }, true],
                   ["call", function (r) { return (r.process ? "p" + r.process + "#" : "") + r.call; }],
                   ["value", function (r) { return r.value; }, true],
                   ["runs", function (r) { return r.runs; }],
                   ["mean", function (r) { return r.mean.toPrecision(10); }],
                   ["std", function (r) { return r.std.toPrecision(4); }],
                   ["min", function (r) { return r.min.toPrecision(10); }],
                   ["max", function (r) { return r.max.toPrecision(10); }],
                   ["digits", function (r) {
                     return r.sig_digits === null ? "-" : r.sig_digits === "all" ? "all" : r.sig_digits.toFixed(2);
                   }]], S.values);
    });
  }
  document.body.setAttribute("data-charts", String(charts));
  document.body.setAttribute("data-rendered", "yes");
})();
