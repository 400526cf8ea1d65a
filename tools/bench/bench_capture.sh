#!/bin/bash
# The cost of typed capture.  Two measurements, printed as Markdown:
#
#  1. Per call: `cmon trace` of capture_fn(const char *name, const uint8_t
#     *buf, size_t len) typed from DWARF (the string read through name, and
#     --capture data=buf:len: 64 bytes) next to raw mode (--raw, no
#     captures) and the bare uprobe+uretprobe floor, as timed by the
#     target's own loop (tools/bench/capture_target.c; capture_fn starts
#     with push %rbp, emulated).  Configurations interleaved run by run,
#     median of BENCH_RUNS.
#  2. `cmon capture` into a store: the highest call rate it sustains with
#     zero loss (the target paces its calls; rates tried in increasing
#     order until one loses a call), and the store's bytes per call
#     (calls.db size / calls).
#
# A measurement, not a test: misses are reported, never fatal.  Exits
# non-zero only when something could not run.
#
#   OUT=build ./tools/bench/bench_capture.sh     (root; tools/bench.sh calls it)
#
# Environment: BENCH_CALLS (default 1000000) calls per run, BENCH_RUNS
# (default 5), BENCH_CAPTURE_SECONDS (default 2) per rate tried,
# BENCH_RESULTS (a file: `capture_typed_ratio=<typed / raw>` is appended),
# BENCH_CAPTURE_RATES (calls/s, increasing; default 25000 50000 100000
# 150000 200000 300000 400000 600000 800000 1200000).
set -u
# shellcheck source=tools/bench/lib.sh
. "$(dirname "$0")/lib.sh"

cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build}
N=${BENCH_CALLS:-1000000}
RUNS=${BENCH_RUNS:-5}
SECS=${BENCH_CAPTURE_SECONDS:-2}
RATES=${BENCH_CAPTURE_RATES:-25000 50000 100000 150000 200000 300000 400000 600000 800000 1200000}
FUNC=capture_fn
CAPTURE=(--capture data=buf:len)

die() { echo "bench_capture: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (uprobes)"
for v in "$N" "$RUNS" "$SECS" $RATES; do
	case $v in '' | *[!0-9]*) die "BENCH_* must be positive integers" ;; esac
	[ "$v" -gt 0 ] || die "BENCH_* must be positive integers"
done

make -s --no-print-directory -f tools/bench/bench.mk bench-tools OUT="$OUT" ||
	die "could not build the benchmark programs"
OUT=$(cd "$OUT" && pwd) # uprobes want absolute paths
B=$OUT/bench
BIN=$B/capture_target
CMON=${CMON:-$OUT/cmon}
PEAKRSS=$B/peakrss

HAVE_CMON=0
[ -x "$CMON" ] && "$CMON" capture --help >/dev/null 2>&1 && HAVE_CMON=1

tmp=$(mktemp -d /tmp/cmon-bench-capture.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

FAILED=0
START=$(date +%s)

# "cmon: events lost: N" of a cmon summary
lost_of() { sed -n 's/^cmon: events lost: *\([0-9][0-9]*\).*/\1/p' "$1" | tail -n 1; }

# --- 1. per-call cost ----------------------------------------------------------

# One run.  Sets R_NS R_EVENTS R_LOST R_RSS R_ERR.
run_one() { # config
	local cfg=$1 rc out=$tmp/stdout err=$tmp/stderr
	R_NS='' R_EVENTS='' R_LOST='' R_RSS='' R_ERR=''
	rm -f "$out" "$err" "$tmp/rss" "$tmp/out.csv"
	case $cfg in
	untraced) "$BIN" "$N" >"$out" 2>"$err" ;;
	floor_ret) "$PEAKRSS" "$tmp/rss" "$B/uprobe-floor" --ret "$BIN" "$FUNC" -- "$BIN" "$N" >"$out" 2>"$err" ;;
	cmon_raw) "$PEAKRSS" "$tmp/rss" "$CMON" trace --raw --func "$FUNC" -F csv -o "$tmp/out.csv" \
		-- "$BIN" "$N" >"$out" 2>"$err" ;;
	cmon_typed) "$PEAKRSS" "$tmp/rss" "$CMON" trace --func "$FUNC" "${CAPTURE[@]}" -F csv \
		-o "$tmp/out.csv" -- "$BIN" "$N" >"$out" 2>"$err" ;;
	cmon_nofault) "$PEAKRSS" "$tmp/rss" "$CMON" trace --no-fault-in --func "$FUNC" "${CAPTURE[@]}" \
		-F csv -o "$tmp/out.csv" -- "$BIN" "$N" >"$out" 2>"$err" ;;
	esac
	rc=$?
	R_NS=$(sed -n 's/^ns_per_call=\([0-9.]*\) .*/\1/p' "$out" | tail -n 1)
	[ -s "$tmp/rss" ] && R_RSS=$(cat "$tmp/rss")
	case $cfg in
	cmon_*)
		[ -f "$tmp/out.csv" ] && R_EVENTS=$(($(wc -l <"$tmp/out.csv") - 1))
		R_LOST=$(lost_of "$err")
		[ $rc = 3 ] && rc=0 # the program ran; losses are a result
		;;
	esac
	if [ $rc != 0 ] || [ -z "$R_NS" ]; then
		R_ERR="exit $rc: $(grep -v '^$' "$err" | tail -n 1 | cut -c1-100)"
		R_NS=
	fi
}

declare -A NS EVMIN LOST RSSMAX ERR
CONFIGS="untraced floor_ret cmon_raw cmon_typed cmon_nofault"
declare -A LABEL=(
	[untraced]="untraced"
	[floor_ret]="empty uprobe + uretprobe (the floor)"
	[cmon_raw]="cmon trace --raw (registers only), CSV to a file"
	[cmon_typed]="cmon trace, typed: name string + 64-byte --capture, CSV to a file"
	[cmon_nofault]="the same with --no-fault-in (plain reads, not sleepable)"
)

skip_reason() {
	case $1 in cmon_*) [ $HAVE_CMON = 1 ] || echo "n/a (cmon with capture not built)" ;; esac
}

record() {
	local k=$1
	if [ -n "$R_ERR" ]; then
		ERR[$k]=$R_ERR
		FAILED=1
		echo "bench_capture: $k: $R_ERR" >&2
		return
	fi
	NS[$k]="${NS[$k]:-} $R_NS"
	if [ -n "$R_EVENTS" ]; then
		if [ -z "${EVMIN[$k]:-}" ] || [ "$R_EVENTS" -lt "${EVMIN[$k]}" ]; then EVMIN[$k]=$R_EVENTS; fi
	fi
	[ -n "$R_LOST" ] && LOST[$k]=$((${LOST[$k]:-0} + R_LOST))
	if [ -n "$R_RSS" ] && [ "$R_RSS" -ge "${RSSMAX[$k]:-0}" ]; then RSSMAX[$k]=$R_RSS; fi
}

for ((r = 1; r <= RUNS; r++)); do
	echo "bench_capture: per-call run $r/$RUNS" >&2
	for c in $CONFIGS; do
		[ -n "$(skip_reason "$c")" ] && continue
		run_one "$c"
		record "$c"
	done
done

# shellcheck disable=SC2086 # the runs are words
med() { [ -n "${NS[$1]:-}" ] || return 0; median ${NS[$1]}; }

echo "## Typed capture: per-call cost and store throughput"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), Linux $(uname -r), $(nproc) CPUs."
echo
echo "### Per call: \`$FUNC(const char *name, const uint8_t *buf, size_t len)\`, starts with \`$(first_insn "$BIN")\`"
echo
echo "ns per call as timed by the target's own loop, median of $RUNS run(s) of $(fmt_int "$N") calls,"
echo "configurations interleaved.  Records: the worst run's records written / calls made; lost: all runs."
echo
echo "| configuration | ns/call | × floor | × raw | records | lost | tracer RSS |"
echo "|---|---:|---:|---:|---|---:|---:|"
floor=$(med floor_ret)
raw=$(med cmon_raw)
# For tools/bench.sh's goals table.
[ -n "${BENCH_RESULTS:-}" ] && [ -n "$raw" ] && [ -n "$(med cmon_typed)" ] &&
	awk -v a="$(med cmon_typed)" -v b="$raw" 'BEGIN { printf "capture_typed_ratio=%.3f\n", a / b }' >>"$BENCH_RESULTS"
for c in $CONFIGS; do
	why=$(skip_reason "$c")
	if [ -n "$why" ]; then
		echo "| ${LABEL[$c]} | $why | | | | | |"
		continue
	fi
	if [ -z "${NS[$c]:-}" ]; then
		echo "| ${LABEL[$c]} | failed: ${ERR[$c]:-?} | | | | | |"
		continue
	fi
	ns=$(med "$c")
	rf=- rr=- rec=n/a lost=n/a rss=-
	case $c in
	untraced | floor_ret) ;;
	*)
		rf=$(ratio "$ns" "$floor")
		[ "$c" != cmon_raw ] && rr=$(ratio "$ns" "$raw")
		if [ -n "${EVMIN[$c]:-}" ]; then
			rec=$(awk -v g="${EVMIN[$c]}" -v e="$N" 'BEGIN { printf (g == e ? "100 %%" : "%.2f %%"), 100 * g / e }')
			rec="$rec ($(fmt_int "${EVMIN[$c]}") / $(fmt_int "$N"))"
		else
			rec="?"
		fi
		lost=$(fmt_int "${LOST[$c]:-0}")
		[ -n "${LOST[$c]:-}" ] || lost="?"
		;;
	esac
	[ -n "${RSSMAX[$c]:-}" ] && rss=$(awk -v k="${RSSMAX[$c]}" 'BEGIN { printf "%.1f MB", k / 1024 }')
	note=
	[ -n "${ERR[$c]:-}" ] && note=" (a run failed)"
	echo "| ${LABEL[$c]} | $(fmt_ns "$ns")$note | $rf | $rr | $rec | $lost | $rss |"
done

# --- 2. cmon capture: sustained rate, bytes per call ---------------------------------

echo
echo "### \`cmon capture\` into a store: sustained rate with zero loss"
echo
if [ $HAVE_CMON = 0 ]; then
	echo "n/a (cmon with capture not built)"
else
	echo "\`cmon capture --func $FUNC ${CAPTURE[*]}\` of a target calling it at a paced rate for ${SECS} s"
	echo "(64 bytes captured per call, plus the name string); rates tried in increasing order until a call is lost."
	echo "Stored: calls in the store (\`cmon ls\`) / calls made."
	echo
	echo "| rate asked (calls/s) | rate achieved | stored | lost | calls.db | bytes/call | |"
	echo "|---:|---:|---|---:|---:|---:|---|"
	BEST='' BEST_BPC='' CEILING=0
	for rate in $RATES; do
		n=$((rate * SECS))
		store=$tmp/store-$rate
		echo "bench_capture: cmon capture at $rate calls/s" >&2
		"$CMON" capture --func "$FUNC" "${CAPTURE[@]}" -o "$store" -- "$BIN" "$n" "$rate" \
			>"$tmp/stdout" 2>"$tmp/stderr"
		rc=$?
		achieved=$(sed -n 's/.* rate=\([0-9.]*\) .*/\1/p' "$tmp/stdout" | tail -n 1)
		lost=$(lost_of "$tmp/stderr")
		stored=$("$CMON" ls "$store" 2>/dev/null | sed -n 's/^[0-9]* functions\{0,1\}, \([0-9]*\) calls\{0,1\}$/\1/p')
		size=$(stat -c %s "$store/calls.db" 2>/dev/null)
		if [ $rc != 0 ] && [ $rc != 3 ] || [ -z "$achieved" ] || [ -z "$stored" ]; then
			echo "| $(fmt_int "$rate") | failed: exit $rc: $(grep -v '^$' "$tmp/stderr" | tail -n 1 | cut -c1-100) | | | | | |"
			FAILED=1
			break
		fi
		bpc=$(awk -v s="$size" -v c="$stored" 'BEGIN { if (c > 0) printf "%.0f", s / c }')
		ok=0
		[ $rc = 0 ] && [ "${lost:-1}" = 0 ] && [ "$stored" = "$n" ] && ok=1
		# The target could not keep the pace itself: the rate is not reached.
		reached=$(awk -v a="$achieved" -v r="$rate" 'BEGIN { print (a >= 0.95 * r) ? 1 : 0 }')
		verdict="zero loss"
		[ $ok = 1 ] || verdict="LOSS"
		[ "$reached" = 1 ] || verdict="$verdict (target too slow for the rate)"
		echo "| $(fmt_int "$rate") | $(fmt_int "$achieved") | $(fmt_int "$stored") / $(fmt_int "$n") | $(fmt_int "${lost:-0}") | $(fmt_int "$size") | $bpc | $verdict |"
		rm -rf "$store"
		if [ $ok = 1 ]; then
			BEST=$achieved BEST_BPC=$bpc
			[ "$reached" = 1 ] || break
		else
			CEILING=1
			break
		fi
	done
	echo
	if [ -n "$BEST" ]; then
		note=
		[ $CEILING = 1 ] || note=" (no rate tried lost a call: the ceiling is higher)"
		echo "- Sustained with zero loss: $(fmt_int "$BEST") captured calls/s$note; the store takes $BEST_BPC bytes per call."
	else
		echo "- No rate tried was sustained with zero loss."
	fi
fi
echo
echo "Total time: $(($(date +%s) - START)) s."
[ $FAILED = 0 ] || echo "bench_capture: some configurations could not run (see above)" >&2
exit $FAILED
