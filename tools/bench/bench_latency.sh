#!/bin/bash
# Latencies that are the function's own: a ~5 us busy function (busy.c)
# behind entry points of every site class, its median call time untraced
# (as the program measures it) next to the p50 `cmon profile` reports,
# with the probe's own cost subtracted (the default) and without it
# (--raw-latency), side by side in one run (median of BENCH_RUNS).  Prints
# Markdown; with BENCH_RESULTS set, appends `latency_off_<class>=<percent>`
# lines to that file for tools/bench.sh's goals table.
# A measurement, not a test: misses are reported, never fatal.
#
#   OUT=build ./tools/bench/bench_latency.sh     (root; tools/bench.sh calls it)
#
# Environment: BENCH_RUNS (default 5), BENCH_LATENCY_CALLS (default 400)
# calls of each entry point per run.
set -u
# shellcheck source=tools/bench/lib.sh
. "$(dirname "$0")/lib.sh"

cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build}
RUNS=${BENCH_RUNS:-5}
CALLS=${BENCH_LATENCY_CALLS:-400}
CLASSES="ss fp cet nop5"

die() { echo "bench_latency: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (uprobes)"
for v in "$RUNS" "$CALLS"; do
	case $v in '' | *[!0-9]*) die "BENCH_* must be positive integers" ;; esac
	[ "$v" -gt 0 ] || die "BENCH_* must be positive integers"
done
make -s --no-print-directory -f tools/bench/bench.mk bench-tools OUT="$OUT" ||
	die "could not build the benchmark programs"
OUT=$(cd "$OUT" && pwd)
BIN=$OUT/bench/busy
CMON=${CMON:-$OUT/cmon}
[ -x "$CMON" ] || die "cmon not built"

tmp=$(mktemp -d /tmp/cmon-bench-latency.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
START=$(date +%s)
FAILED=0

declare -A UN OWN RAW LABEL=(
	[ss]="single-stepped (\`lea\`)"
	[fp]="emulated (\`push %rbp\`)"
	[cet]="CET (\`endbr64; push %rbp\`: probed past the endbr64)"
	[nop5]="5-byte nop (optimized)"
)

profile_p50() { # extra-args... -> "class p50" lines
	"$CMON" profile -q "$@" -F csv -o "$tmp/p.csv" --func 'busy_*' -- "$BIN" "$CALLS" \
		>/dev/null 2>"$tmp/err" || return 1
	awk -F, 'NR > 1 && $3 == 1 { sub(/^busy_/, "", $4); print $4, $14 }' "$tmp/p.csv"
}

for ((r = 1; r <= RUNS; r++)); do
	echo "bench_latency: run $r/$RUNS" >&2
	while read -r name v; do
		c=${name#busy_}
		UN[$c]="${UN[$c]:-} ${v#p50=}"
	done < <("$BIN" "$CALLS")
	if out=$(profile_p50); then
		while read -r c v; do OWN[$c]="${OWN[$c]:-} $v"; done <<<"$out"
	else
		echo "bench_latency: cmon profile failed: $(tail -n 1 "$tmp/err")" >&2
		FAILED=1
	fi
	if out=$(profile_p50 --raw-latency); then
		while read -r c v; do RAW[$c]="${RAW[$c]:-} $v"; done <<<"$out"
	else
		echo "bench_latency: cmon profile --raw-latency failed: $(tail -n 1 "$tmp/err")" >&2
		FAILED=1
	fi
done

off() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%+.1f", 100 * (a - b) / b }'; }

echo "## Latency: the function's own"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), Linux $(uname -r), $(nproc) CPUs."
echo "A ~5 us busy function behind entry points of each site class (\`tests/targets/busy.c\`),"
echo "$CALLS calls of each per run, median of $RUNS run(s): its median call time untraced, as the program"
echo "measures it, next to the p50 \`cmon profile\` reports (the probe's own cost, measured at start"
echo "per site class, subtracted) and with \`--raw-latency\` (not subtracted)."
echo
echo "| entry site | untraced p50 | cmon profile p50 | off | --raw-latency p50 | off |"
echo "|---|---:|---:|---:|---:|---:|"
for c in $CLASSES; do
	# shellcheck disable=SC2086 # lists of numbers
	un=$([ -n "${UN[$c]:-}" ] && median ${UN[$c]})
	# shellcheck disable=SC2086
	own=$([ -n "${OWN[$c]:-}" ] && median ${OWN[$c]})
	# shellcheck disable=SC2086
	raw=$([ -n "${RAW[$c]:-}" ] && median ${RAW[$c]})
	o=$(off "$own" "$un")
	echo "| ${LABEL[$c]} | $(fmt_ns "${un:-0}") | ${own:+$(fmt_ns "$own")} | ${o:+$o %} | ${raw:+$(fmt_ns "$raw")} | $(off "$raw" "$un")${raw:+ %} |"
	[ -n "${BENCH_RESULTS:-}" ] && [ -n "$o" ] && echo "latency_off_$c=$o" >>"$BENCH_RESULTS"
done
echo
echo "Total time: $(($(date +%s) - START)) s."
exit $FAILED
