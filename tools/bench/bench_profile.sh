#!/bin/bash
# The per-call cost of `cmon profile` (in-kernel aggregation: counts, latency
# histogram, RSS growth) next to the bare uprobe+uretprobe floor, bpftrace's
# latency hist() and bcc's funclatency-bpfcc, side by side in one run
# (configurations interleaved run by run, median of BENCH_RUNS), on the
# target whose bench_fn starts with push %rbp (emulated) and the one whose
# first instruction is single-stepped.  Prints Markdown.
# A measurement, not a test: misses are reported, never fatal.  Exits
# non-zero only when something could not run.
#
#   OUT=build ./tools/bench/bench_profile.sh     (root; tools/bench.sh calls it)
#
# Environment: BENCH_CALLS (default 1000000) calls per run, BENCH_CALLS_SLOW
# (default BENCH_CALLS) on target_ss, BENCH_RUNS (default 5); with
# BENCH_RESULTS set, `profile_ratio_<build>=<ratio>` lines are appended to
# that file (tools/bench.sh's goals table).
set -u
# shellcheck source=tools/bench/lib.sh
. "$(dirname "$0")/lib.sh"

cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build}
N=${BENCH_CALLS:-1000000}
N_SLOW=${BENCH_CALLS_SLOW:-$N}
RUNS=${BENCH_RUNS:-5}
FUNC=bench_fn
BUILDS="fp ss"

die() { echo "bench_profile: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (uprobes)"
for v in "$N" "$N_SLOW" "$RUNS"; do
	case $v in '' | *[!0-9]*) die "BENCH_* must be positive integers" ;; esac
	[ "$v" -gt 0 ] || die "BENCH_* must be positive integers"
done

make -s --no-print-directory -f tools/bench/bench.mk bench-tools OUT="$OUT" ||
	die "could not build the benchmark programs"
OUT=$(cd "$OUT" && pwd) # uprobes want absolute paths
B=$OUT/bench
CMON=${CMON:-$OUT/cmon}
PEAKRSS=$B/peakrss
FUNCLATENCY=$(command -v funclatency-bpfcc || true)

HAVE_CMON=0
[ -x "$CMON" ] && "$CMON" profile --help >/dev/null 2>&1 && HAVE_CMON=1
HAVE_BT=0
command -v bpftrace >/dev/null 2>&1 && HAVE_BT=1
HAVE_FL=0
[ -n "$FUNCLATENCY" ] && HAVE_FL=1

tmp=$(mktemp -d /tmp/cmon-bench-profile.XXXXXX) || die "mktemp failed"
FL_PID=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	[ -n "$FL_PID" ] && kill -INT "$FL_PID" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# bcc compiles its programs against the running kernel's headers.  When
# there are none (a custom kernel), use an installed Debian linux-headers
# package, merged (-common + -ARCH) as a symlink tree: funclatency only
# needs struct pt_regs and basic types.
FL_NOTE=
if [ $HAVE_FL = 1 ] && [ -z "${BCC_KERNEL_SOURCE:-}" ] && [ ! -e "/lib/modules/$(uname -r)/build" ]; then
	hdr=$(find /usr/src -maxdepth 1 -name 'linux-headers-*-amd64' 2>/dev/null | sort -V | tail -n 1)
	common=${hdr%-amd64}-common
	if [ -n "$hdr" ] && [ -d "$common" ] && mkdir -p "$tmp/kheaders" &&
		cp -rs "$common/." "$tmp/kheaders/" 2>/dev/null &&
		cp -rs --remove-destination "$hdr/." "$tmp/kheaders/" 2>/dev/null; then
		export BCC_KERNEL_SOURCE=$tmp/kheaders
		FL_NOTE=" (no headers for this kernel: compiled against $(basename "$hdr"))"
	else
		HAVE_FL=0
		FL_SKIP="skipped (bcc needs kernel headers: none for $(uname -r), and no linux-headers-*-amd64 installed)"
	fi
fi

FAILED=0
START=$(date +%s)


# A tool started in the background (PID) is ready when FILE has a line
# matching PATTERN (30 s at most); otherwise it is stopped and its stderr
# (ERR) shown.  0: ready.
wait_ready() { # pid file pattern err
	local pid=$1 file=$2 pat=$3 err=$4 i
	for ((i = 0; i < 600; i++)); do
		grep -q "$pat" "$file" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	grep -q "$pat" "$file" 2>/dev/null && return 0
	kill -INT "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	cat "$err" >&2
	return 1
}

# funclatency-bpfcc attaches by path (every process running the file) and
# compiles at start: start it, wait for its banner, run the target, stop it.
run_funclatency() { # tool bin n -> prints the target's output; histogram in $tmp/fl.txt
	local tool=$1 bin=$2 n=$3 rc
	rm -f "$tmp/fl.txt"
	# Job control on: a background job of a script otherwise starts with
	# SIGINT ignored, and python then never sees its KeyboardInterrupt.
	set -m
	PYTHONUNBUFFERED=1 "$tool" "$bin:$FUNC" >"$tmp/fl.txt" 2>"$tmp/fl.err" &
	FL_PID=$!
	set +m
	if ! wait_ready "$FL_PID" "$tmp/fl.txt" '^Tracing' "$tmp/fl.err"; then
		FL_PID=
		return 1
	fi
	"$bin" "$n" 1
	rc=$?
	# Its peak RSS, read before it ends (peakrss would trace the python).
	awk '/^VmHWM:/ { print $2 }' "/proc/$FL_PID/status" >"$tmp/rss" 2>/dev/null
	kill -INT "$FL_PID" 2>/dev/null
	wait "$FL_PID" 2>/dev/null
	FL_PID=
	return $rc
}

# cmon profile --binary: every process running the file counts (the
# executable's identity is checked in the kernel on each entry).  Start it,
# wait until it says it attached, run the target, stop it.
run_binary_mode() { # bin n -> prints the target's output; profile in $tmp/prof.json
	local bin=$1 n=$2 rc cpid
	"$CMON" profile --binary "$bin" --func "$FUNC" -F json -o "$tmp/prof.json" \
		2>"$tmp/bin.err" &
	cpid=$!
	wait_ready "$cpid" "$tmp/bin.err" '^cmon: attached' "$tmp/bin.err" || return 1
	"$bin" "$n" 1
	rc=$?
	kill -INT "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	return $rc
}

# One run.  Sets R_NS R_CALLS R_RSS R_ERR.
run_one() { # config build calls
	local cfg=$1 bin=$B/target_$2 n=$3 rc
	local out=$tmp/stdout err=$tmp/stderr
	R_NS='' R_CALLS='' R_RSS='' R_ERR=''
	rm -f "$out" "$err" "$tmp/rss" "$tmp/prof.json" "$tmp/bt.txt"
	case $cfg in
	untraced) "$bin" "$n" 1 >"$out" 2>"$err" ;;
	floor_ret) "$PEAKRSS" "$tmp/rss" "$B/uprobe-floor" --ret "$bin" "$FUNC" -- "$bin" "$n" 1 >"$out" 2>"$err" ;;
	floor_clock) "$PEAKRSS" "$tmp/rss" "$B/uprobe-floor" --clock "$bin" "$FUNC" -- "$bin" "$n" 1 >"$out" 2>"$err" ;;
	cmon | cmon_nomem)
		local extra=()
		[ "$cfg" = cmon_nomem ] && extra=(--no-mem)
		"$PEAKRSS" "$tmp/rss" "$CMON" profile -q "${extra[@]}" -F json -o "$tmp/prof.json" \
			--func "$FUNC" -- "$bin" "$n" 1 >"$out" 2>"$err"
		;;
	cmon_binary) run_binary_mode "$bin" "$n" >"$out" 2>"$err" ;;
	bt_hist) "$PEAKRSS" "$tmp/rss" bpftrace -o "$tmp/bt.txt" \
		-e "uprobe:$bin:$FUNC { @s[tid] = nsecs; } uretprobe:$bin:$FUNC /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }" \
		-c "$bin $n 1" >"$out" 2>"$err" ;;
	funclatency) run_funclatency "$FUNCLATENCY" "$bin" "$n" >"$out" 2>"$err" ;;
	esac
	rc=$?
	R_NS=$(sed -n 's/^ns_per_call=\([0-9.]*\) .*/\1/p' "$out" | tail -n 1)
	[ -s "$tmp/rss" ] && R_RSS=$(cat "$tmp/rss")
	case $cfg in
	cmon*) [ -f "$tmp/prof.json" ] &&
		R_CALLS=$(sed -n 's/.*"final":true,.*"calls":\([0-9]*\),.*/\1/p' "$tmp/prof.json" | tail -n 1) ;;
	bt_hist) [ -f "$tmp/bt.txt" ] &&
		R_CALLS=$(awk '/^\[/ { sub(/^[^])]*[])]/, ""); s += $1 } END { print s + 0 }' "$tmp/bt.txt") ;;
	funclatency*) [ -f "$tmp/fl.txt" ] &&
		R_CALLS=$(awk -F: '/->/ { split($2, a, " "); s += a[1] } END { print s + 0 }' "$tmp/fl.txt") ;;
	esac
	if [ $rc != 0 ] || [ -z "$R_NS" ]; then
		R_ERR="exit $rc: $(grep -v '^$' "$err" | tail -n 1 | cut -c1-100)"
		R_NS=
	fi
}

declare -A NS CALLS RSSMAX ERR
CONFIGS="untraced floor_ret floor_clock cmon cmon_nomem cmon_binary bt_hist funclatency"
declare -A LABEL=(
	[untraced]="untraced"
	[floor_ret]="empty uprobe + uretprobe (the floor)"
	[floor_clock]="uprobe + uretprobe reading only the clock (any latency profile's floor)"
	[cmon]="cmon profile (RSS growth on, the default)"
	[cmon_nomem]="cmon profile --no-mem"
	[cmon_binary]="cmon profile --binary (any process running the file)"
	[bt_hist]="bpftrace entry+return latency \`hist()\`"
	[funclatency]="bcc \`funclatency-bpfcc\`"
)

skip_reason() {
	case $1 in
	cmon*) [ $HAVE_CMON = 1 ] || echo "n/a (cmon with profile not built)" ;;
	bt_*) [ $HAVE_BT = 1 ] || echo "skipped (bpftrace not installed)" ;;
	funclatency) [ $HAVE_FL = 1 ] || echo "${FL_SKIP:-skipped (funclatency-bpfcc not installed: apt-get install bpfcc-tools)}" ;;
	esac
}

record() { # key expected-calls
	local k=$1
	if [ -n "$R_ERR" ]; then
		ERR[$k]=$R_ERR
		FAILED=1
		echo "bench_profile: $k: $R_ERR" >&2
		return
	fi
	NS[$k]="${NS[$k]:-} $R_NS"
	# The worst run's count: every run must count every call.
	if [ -n "$R_CALLS" ]; then
		if [ -z "${CALLS[$k]:-}" ] || [ "$R_CALLS" -lt "${CALLS[$k]}" ]; then CALLS[$k]=$R_CALLS; fi
	fi
	if [ -n "$R_RSS" ] && [ "$R_RSS" -ge "${RSSMAX[$k]:-0}" ]; then RSSMAX[$k]=$R_RSS; fi
}

echo "## cmon profile: per-call cost"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), Linux $(uname -r), $(nproc) CPUs."
echo "ns per call of a 1 ns function (\`$FUNC\`) as timed by the target's own loop, median of $RUNS run(s), configurations interleaved;"
echo "$N calls per run ($N_SLOW on target_ss).  Calls counted: the worst run's count / calls made."
echo

for ((r = 1; r <= RUNS; r++)); do
	for t in $BUILDS; do
		n=$N
		[ "$t" = ss ] && n=$N_SLOW
		echo "bench_profile: target_$t run $r/$RUNS" >&2
		for c in $CONFIGS; do
			[ -n "$(skip_reason "$c")" ] && continue
			run_one "$c" "$t" "$n"
			record "$t.$c"
		done
	done
done

med() { # key -> median ns, or nothing
	[ -n "${NS[$1]:-}" ] || return 0
	# shellcheck disable=SC2086 # a list of numbers
	median ${NS[$1]}
}

declare -A RATIO
for t in $BUILDS; do
	n=$N
	[ "$t" = ss ] && n=$N_SLOW
	floor=$(med "$t.floor_ret")
	bt=$(med "$t.bt_hist")
	echo "### \`target_$t\`: \`$FUNC\` starts with \`$(first_insn "$B/target_$t")\`"
	echo
	echo "| configuration | ns/call | × floor | × bpftrace hist | calls counted | tool RSS |"
	echo "|---|---:|---:|---:|---|---:|"
	for c in $CONFIGS; do
		k=$t.$c
		why=$(skip_reason "$c")
		if [ -n "$why" ]; then
			echo "| ${LABEL[$c]} | $why | | | | |"
			continue
		fi
		if [ -z "${NS[$k]:-}" ]; then
			echo "| ${LABEL[$c]} | failed: ${ERR[$k]:-?} | | | | |"
			continue
		fi
		ns=$(med "$k")
		rf=-
		rb=-
		case $c in
		untraced | floor_ret) ;;
		floor_clock) rf=$(ratio "$ns" "$floor") ;;
		*) rf=$(ratio "$ns" "$floor") rb=$(ratio "$ns" "$bt") ;;
		esac
		RATIO[$k]=$(awk -v a="$ns" -v b="$floor" 'BEGIN { if (b > 0) printf "%.3f", a / b }')
		cnt=n/a
		case $c in
		cmon* | bt_hist | funclatency*)
			if [ -z "${CALLS[$k]:-}" ]; then cnt="?"
			elif [ "${CALLS[$k]}" = "$n" ]; then cnt="exact ($n)"
			else cnt="${CALLS[$k]} / $n"; fi ;;
		esac
		rss=-
		[ -n "${RSSMAX[$k]:-}" ] && rss=$(awk -v k="${RSSMAX[$k]}" 'BEGIN { printf "%.1f MB", k / 1024 }')
		note=
		[ -n "${ERR[$k]:-}" ] && note=" (a run failed)"
		label=${LABEL[$c]}
		[ "$c" = funclatency ] && label="$label$FL_NOTE"
		echo "| $label | $(fmt_ns "$ns")$note | $rf | $rb | $cnt | $rss |"
	done
	echo
done

# For tools/bench.sh's goals table.
if [ -n "${BENCH_RESULTS:-}" ]; then
	for t in $BUILDS; do
		[ -n "${RATIO[$t.cmon]:-}" ] && echo "profile_ratio_$t=${RATIO[$t.cmon]}" >>"$BENCH_RESULTS"
		[ -n "${RATIO[$t.floor_clock]:-}" ] && echo "profile_clock_$t=${RATIO[$t.floor_clock]}" >>"$BENCH_RESULTS"
	done
fi

echo "### Goals"
echo
for t in $BUILDS; do
	for c in cmon_nomem cmon; do
		r=${RATIO[$t.$c]:-}
		if [ -z "$r" ]; then v="n/a"
		elif awk -v r="$r" 'BEGIN { exit !(r <= 1.05) }'; then v=PASS
		else v=MISS; fi
		printf -- '- %s: %s ≤ 1.05× the uprobe+uretprobe floor on target_%s: %s\n' \
			"$v" "${LABEL[$c]}" "$t" "${r:+${r}×}"
	done
	# What two clock reads alone add on this host: a profile cannot go below.
	r=${RATIO[$t.floor_clock]:-}
	[ -n "$r" ] && printf -- '- (the clock: reading it at the entry and the return alone costs %s× the floor on target_%s)\n' "$r" "$t"
done
echo
echo "Total time: $(($(date +%s) - START)) s."
[ $FAILED = 0 ] || echo "bench_profile: some configurations could not run (see above)" >&2
exit $FAILED
