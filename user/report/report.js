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
  function chart(parent, title, opts, data) {
    var box = el("div", parent, null, "chart");
    opts.title = title;
    opts.width = opts.width || 560;
    opts.height = opts.height || 260;
    new uPlot(opts, data, box);
    charts++;
  }
  function pointsOnly(label, i) {
    return { label: label, stroke: COLORS[i % COLORS.length], fill: COLORS[i % COLORS.length],
             paths: function () { return null; }, points: { show: true, size: 4 } };
  }
  function line(label, i) {
    return { label: label, stroke: COLORS[i % COLORS.length], width: 1.5,
             points: { show: false } };
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

  if (D.trace) {
    var T = D.trace;
    el("h2", root, "Functions");
    el("p", root, T.calls + " calls over " + T.span_s.toFixed(3) + " s.", "note");
    table(root, [["function", function (r) { return r.func; }, true]].concat(FUNC_COLS), T.table);

    el("h2", root, "Latency over time");
    T.latency_over_time.forEach(function (f, i) {
      chart(root, f.func, {
        scales: { x: { time: false }, y: { distr: 3 } },
        axes: [{ label: "seconds since start" }, { label: "latency (µs)" }],
        series: [{ label: "s" }, pointsOnly(f.func, i)]
      }, [f.points.t, f.points.v.map(pos)]);
    });

    el("h2", root, "Latency distribution");
    var H = T.latency_hist;
    if (H.edges_us.length) {
      chart(root, "calls per latency bin (10 bins per decade)", {
        width: 760,
        scales: { x: { time: false, distr: 3 } },
        axes: [{ label: "latency (µs, log)" }, { label: "calls" }],
        series: [{ label: "µs" }].concat(H.series.map(function (s, i) {
          var o = line(s.func, i);
          o.paths = uPlot.paths.stepped({ align: 1 });
          return o;
        }))
      }, [H.edges_us].concat(H.series.map(function (s) { return s.counts; })));
    }

    el("h2", root, "Calls per second");
    chart(root, "calls per second (" + T.rate.bucket_s.toPrecision(3) + " s buckets)", {
      width: 760,
      scales: { x: { time: false } },
      axes: [{ label: "seconds since start" }, { label: "calls/s" }],
      series: [{ label: "s" }].concat(T.rate.series.map(function (s, i) {
        return line(s.func, i);
      }))
    }, [T.rate.t].concat(T.rate.series.map(function (s) { return s.per_s; })));

    el("h2", root, "Memory");
    T.memory.forEach(function (m) {
      var grown = T.growth.filter(function (g) { return g.pid === m.pid; });
      var data = uPlot.join([[m.rss.t, m.rss.v], [m.vms.t, m.vms.v],
                             [grown.map(function (g) { return g.t_s; }),
                              grown.map(function (g) { return g.rss_after_bytes / 1048576; })]]);
      chart(root, "process " + m.pid + ": RSS and VMS", {
        width: 760,
        scales: { x: { time: false } },
        axes: [{ label: "seconds since start" }, { label: "MiB" }],
        series: [{ label: "s" }, line("RSS", 0), line("VMS", 2),
                 pointsOnly("calls that grew RSS most", 1)]
      }, data);
    });
    if (T.growth.length) {
      el("h3", root, "The calls that grew RSS the most");
      table(root, [["function", function (r) { return r.func; }, true],
                   ["pid", function (r) { return r.pid; }],
                   ["at (s)", function (r) { return r.t_s.toFixed(6); }],
                   ["RSS growth", function (r) { return bytes(r.growth_bytes); }],
                   ["RSS after", function (r) { return bytes(r.rss_after_bytes); }]], T.growth);
    }
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
        var o = pointsOnly(k.replace("_ns", ""), i);
        o.points.size = 8;
        return o;
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
        axes: [{ label: "seconds since start" }, { label: "calls/s" }],
        series: [{ label: "s" }].concat(names.map(line))
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
            var o = line("digits", i);
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
