#!/bin/bash
# Probes past a function's edge, side by side in one run (configurations
# interleaved run by run, median of BENCH_RUNS), printed as Markdown:
#
#  1. A USDT site in a loop (tools/bench/usdt_target.c): untraced, cmon trace
#     --usdt (CSV to a file), cmon profile --usdt, bpftrace `usdt` count().
#  2. --focus: cmon trace --func bench_fn on target_fp with a focus function
#     the loop never enters (the cost of being outside the focus), next to
#     the uprobe+uretprobe floor and to plain cmon trace.
#  3. --line on bench_fn's body line, next to an empty uprobe.
#  4. --if on bench_fn(acc, i): a condition that always holds (every call
#     written) and one that never does (nothing written), next to plain
#     cmon trace; and --if on the latency (decided at the return).
#
# A measurement, not a test.  Exits non-zero only when something could not run.
#   OUT=build ./tools/bench/bench_probes.sh     (root; tools/bench.sh calls it)
# Environment: BENCH_CALLS (default 1000000) calls per run, BENCH_RUNS (5).
set -u
# shellcheck source=tools/bench/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build}
N=${BENCH_CALLS:-1000000}
RUNS=${BENCH_RUNS:-5}
FUNC=bench_fn

[ "$(id -u)" = 0 ] || { echo "bench_probes: needs root (uprobes)" >&2; exit 1; }
make -s --no-print-directory -f tools/bench/bench.mk bench-tools OUT="$OUT" ||
	{ echo "bench_probes: could not build the benchmark programs" >&2; exit 1; }
OUT=$(cd "$OUT" && pwd)
B=$OUT/bench
CMON=${CMON:-$OUT/cmon}
HAVE_BT=0
command -v bpftrace >/dev/null 2>&1 && HAVE_BT=1
tmp=$(mktemp -d /tmp/cmon-bench-probes.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
FAILED=0
declare -A NS

one() { # config -> appends ns/call to NS[config]
	local cfg=$1 out=$tmp/out v
	case $cfg in
	usdt_untraced) "$B/usdt_target" "$N" >"$out" 2>&1 ;;
	usdt_cmon) "$CMON" trace -q --usdt bench:tick -F csv -o "$tmp/u.csv" -- \
		"$B/usdt_target" "$N" >"$out" 2>&1 ;;
	usdt_profile) "$CMON" profile -q --usdt bench:tick -F json -o "$tmp/u.json" -- \
		"$B/usdt_target" "$N" >"$out" 2>&1 ;;
	usdt_bt) bpftrace -o "$tmp/bt.txt" -e "usdt:$B/usdt_target:bench:tick { @ = count(); }" \
		-c "$B/usdt_target $N" >"$out" 2>&1 ;;
	fp_floor) "$B/uprobe-floor" --ret "$B/target_fp" "$FUNC" -- "$B/target_fp" "$N" 1 \
		>"$out" 2>&1 ;;
	fp_cmon) "$CMON" trace -q --func "$FUNC" -F csv -o "$tmp/f.csv" -- "$B/target_fp" "$N" 1 \
		>"$out" 2>&1 ;;
	fp_focus_out) "$CMON" trace -q --func "$FUNC" --focus 'libc.so.6:abort' -F csv \
		-o "$tmp/f.csv" -- "$B/target_fp" "$N" 1 >"$out" 2>&1 ;;
	fp_floor1) "$B/uprobe-floor" "$B/target_fp" "$FUNC" -- "$B/target_fp" "$N" 1 \
		>"$out" 2>&1 ;;
	fp_line) "$CMON" trace -q --line "target.c:$LINE" -F csv -o "$tmp/l.csv" -- \
		"$B/target_fp" "$N" 1 >"$out" 2>&1 ;;
	fp_if_true) "$CMON" trace -q --func "$FUNC" --if 'arg1 >= 0' -F csv -o "$tmp/f.csv" -- \
		"$B/target_fp" "$N" 1 >"$out" 2>&1 ;;
	fp_if_false) "$CMON" trace -q --func "$FUNC" --if 'arg1 < 0' -F csv -o "$tmp/f.csv" -- \
		"$B/target_fp" "$N" 1 >"$out" 2>&1 ;;
	fp_if_lat) "$CMON" trace -q --func "$FUNC" --if 'latency_ns > 1000000000' -F csv \
		-o "$tmp/f.csv" -- "$B/target_fp" "$N" 1 >"$out" 2>&1 ;;
	esac
	v=$(sed -n 's/^ns_per_call=\([0-9.]*\) .*/\1/p' "$out" | tail -n 1)
	if [ -z "$v" ]; then
		echo "bench_probes: $cfg failed: $(tail -n 2 "$out" | tr '\n' ' ')" >&2
		FAILED=1
		return
	fi
	NS[$cfg]="${NS[$cfg]:-} $v"
}

# bench_fn's body line (volatile long sum = a + b): a --line site.
LINE=$(grep -n 'volatile long sum' tools/bench/target.c | cut -d: -f1)
CFGS="usdt_untraced usdt_cmon usdt_profile fp_floor fp_cmon fp_focus_out fp_floor1 fp_line"
CFGS="$CFGS fp_if_true fp_if_false fp_if_lat"
[ $HAVE_BT = 1 ] && CFGS="$CFGS usdt_bt"
for ((r = 1; r <= RUNS; r++)); do
	echo "bench_probes: run $r/$RUNS" >&2
	for c in $CFGS; do one "$c"; done
done
med() { [ -n "${NS[$1]:-}" ] && median ${NS[$1]}; } # shellcheck disable=SC2086

echo "## Probes past a function's edge"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), Linux $(uname -r), $(nproc) CPUs.  ns per call (per firing) as the"
echo "target's own loop times it, median of $RUNS run(s) of $(fmt_int "$N"), configurations interleaved."
echo
echo "### A USDT site (\`bench:tick\`, 2 arguments, no semaphore)"
echo
echo "| configuration | ns/firing | × bpftrace count() |"
echo "|---|---:|---:|"
bt=$(med usdt_bt)
for c in usdt_untraced usdt_cmon usdt_profile usdt_bt; do
	v=$(med "$c")
	case $c in
	usdt_untraced) l="untraced" ;;
	usdt_cmon) l="cmon trace --usdt, CSV to a file" ;;
	usdt_profile) l="cmon profile --usdt (counts)" ;;
	usdt_bt) l="bpftrace \`usdt\` \`@ = count()\`" ;;
	esac
	[ -n "$v" ] && echo "| $l | $(fmt_ns "$v") | $([ -n "$bt" ] && ratio "$v" "$bt" || echo -) |"
done
echo
echo "### --focus, outside the focus (\`bench_fn\` on target_fp, the focus function never entered)"
echo
echo "| configuration | ns/call | × floor |"
echo "|---|---:|---:|"
fl=$(med fp_floor)
for c in fp_floor fp_cmon fp_focus_out; do
	v=$(med "$c")
	case $c in
	fp_floor) l="empty uprobe + uretprobe (the floor)" ;;
	fp_cmon) l="cmon trace, entry+return, CSV to a file" ;;
	fp_focus_out) l="cmon trace --focus (outside it: nothing written)" ;;
	esac
	[ -n "$v" ] && echo "| $l | $(fmt_ns "$v") | $(ratio "$v" "$fl") |"
done
echo
echo "### A source line (\`--line target.c:$LINE\`, inside \`bench_fn\` on target_fp)"
echo
echo "| configuration | ns/call | × empty uprobe |"
echo "|---|---:|---:|"
f1=$(med fp_floor1)
for c in fp_floor1 fp_line; do
	v=$(med "$c")
	case $c in
	fp_floor1) l="empty uprobe on bench_fn's entry (the floor)" ;;
	fp_line) l="cmon trace --line, CSV to a file" ;;
	esac
	[ -n "$v" ] && echo "| $l | $(fmt_ns "$v") | $(ratio "$v" "$f1") |"
done
echo
echo "### --if (\`bench_fn\` on target_fp)"
echo
echo "| configuration | ns/call | × plain trace |"
echo "|---|---:|---:|"
pt=$(med fp_cmon)
for c in fp_cmon fp_if_true fp_if_false fp_if_lat; do
	v=$(med "$c")
	case $c in
	fp_cmon) l="cmon trace, CSV to a file" ;;
	fp_if_true) l="--if 'arg1 >= 0' (always true: every call written)" ;;
	fp_if_false) l="--if 'arg1 < 0' (never true, decided at the entry)" ;;
	fp_if_lat) l="--if 'latency_ns > 1000000000' (never true, decided at the return)" ;;
	esac
	[ -n "$v" ] && echo "| $l | $(fmt_ns "$v") | $(ratio "$v" "$pt") |"
done
echo
exit $FAILED
