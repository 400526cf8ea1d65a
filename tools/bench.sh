#!/bin/bash
# cmon's benchmark: the per-call cost of tracing a 1 ns function with cmon,
# next to the bare uprobe floor and bpftrace, measured side by side in one
# run (configurations interleaved run by run, median of BENCH_RUNS); then
# the other benchmarks under tools/bench/, each printing its own section:
# bench_profile.sh (cmon profile's per-call cost, next to bpftrace hist()
# and bcc funclatency), bench_capture.sh (typed capture, the store's
# sustained rate), bench_latency.sh (a 5 us function's latency as cmon
# reports it, next to its untraced time, on every site class),
# bench_attach.sh (attach and detach time for 10, 100 and 1,000 functions,
# next to bpftrace), bench_python.py (--py: fib(25) per CPython of the
# machine, untraced, under cProfile, with cmon attached and fib not
# selected, and traced), bench_quiet.sh (the tests that compare timings,
# which `make test` skips); and last, the goals table of issue 12, every figure
# from this run.  Markdown on stdout, progress on stderr.  A measurement, not a test: misses are reported, never fatal.
# A section that fails says so and the others still run.  Exits non-zero
# only when something could not run.
#
#   OUT=build ./tools/bench.sh     (root; `make bench` does this)
#
# Environment: BENCH_REDIS_RUNS (default 3) runs of the redis section,
# BENCH_CALLS (default 1000000) calls per run,
# BENCH_CALLS_SLOW (default 100000) calls per run on the builds whose
# first instruction is single-stepped (target_ss, target_cet: ~10 us a
# call on some hosts), BENCH_RUNS (default 5), BENCH_THREADS (default 4)
# for the threaded run (with a CPU hog competing).
# The sections take the same calls and BENCH_PROFILE_RUNS,
# BENCH_CAPTURE_RUNS (default BENCH_RUNS), BENCH_ATTACH_RUNS (default 3),
# BENCH_ATTACH_SLOW_RUNS (default BENCH_ATTACH_RUNS; the attach rows that
# detach perf-event uprobes one by one, ~100 ms each),
# BENCH_ATTACH_BPFTRACE_1000=1 (bpftrace on 1,000 functions too: about two
# minutes a run).  BENCH_SECTIONS (default "trace profile capture consumer
# latency probes redis attach python quiet budget") picks the sections to run
# (consumer: records written a second and lost at a flat-out loop, per format
# and for capture, with and without the spool, BENCH_CONSUMER_RUNS (default 3)
# runs; probes: USDT sites and --focus; redis: redis-server's CPU per request
# under cmon and bpftrace; python: --py's cost; quiet: test_latency's timing
# checks; budget: the agent's overhead budget).  Under 15 minutes on 2 CPUs with the defaults, where single-stepping costs ~10 us.
set -u
# shellcheck source=tools/bench/lib.sh
. "$(dirname "$0")/bench/lib.sh"

cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build}
N=${BENCH_CALLS:-1000000}
N_SLOW=${BENCH_CALLS_SLOW:-100000}
RUNS=${BENCH_RUNS:-5}
THREADS=${BENCH_THREADS:-4}
SECTIONS=${BENCH_SECTIONS:-trace profile capture consumer latency probes redis attach python quiet budget}
PROFILE_RUNS=${BENCH_PROFILE_RUNS:-$RUNS}
CAPTURE_RUNS=${BENCH_CAPTURE_RUNS:-$RUNS}
ATTACH_RUNS=${BENCH_ATTACH_RUNS:-3}
ATTACH_SLOW_RUNS=${BENCH_ATTACH_SLOW_RUNS:-$ATTACH_RUNS}
FUNC=bench_fn

die() { echo "bench: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (uprobes)"
for v in "$N" "$N_SLOW" "$RUNS" "$THREADS" "$PROFILE_RUNS" "$CAPTURE_RUNS" "$ATTACH_RUNS"; do
	case $v in '' | *[!0-9]*) die "BENCH_* must be positive integers" ;; esac
	[ "$v" -gt 0 ] || die "BENCH_* must be positive integers"
done
case $ATTACH_SLOW_RUNS in '' | *[!0-9]*) die "BENCH_ATTACH_SLOW_RUNS must be an integer" ;; esac
for s in $SECTIONS; do
	case $s in trace | profile | capture | consumer | latency | probes | redis | attach | python | quiet | budget) ;; *) die "BENCH_SECTIONS: unknown section $s" ;; esac
done
section() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }

make -s --no-print-directory -f tools/bench/bench.mk bench-tools OUT="$OUT" ||
	die "could not build the benchmark programs"
OUT=$(cd "$OUT" && pwd) # bpftrace and uprobes want absolute paths
B=$OUT/bench
rm -f "$B"/failed.*.log
CMON=$OUT/cmon
PEAKRSS=$B/peakrss

HAVE_CMON=0
[ -x "$CMON" ] && HAVE_CMON=1
HAVE_BT=0
command -v bpftrace >/dev/null 2>&1 && HAVE_BT=1

tmp=$(mktemp -d /tmp/cmon-bench.XXXXXX) || die "mktemp failed"
HOG=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	[ -n "$HOG" ] && kill "$HOG" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
# What every section measured, `name=value` lines, for the goals table.
RESULTS=$tmp/results
: >"$RESULTS"

FAILED=0
START=$(date +%s)

# --- helpers -----------------------------------------------------------------

verdict() { # condition-result (1 pass, 0 miss, empty unknown)
	case $1 in 1) echo PASS ;; 0) echo MISS ;; "?") echo "?" ;; *) echo "n/a" ;; esac
}
le() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? 1 : 0 }'; }
ge() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { print (a >= b) ? 1 : 0 }'; }
rat() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b }'; }

first_bytes() {
	objdump -d "$1" 2>/dev/null |
		awk -v f="<$FUNC>:" '$2 == f { getline; split($0, p, "\t"); gsub(/ +$/, "", p[2]); print p[2]; exit }'
}

BUILDS="ss fp cet nop5"
declare -A DESC HOW
HOW[ss]="single-stepped"
HOW[fp]="emulated"
HOW[cet]="CET build, single-stepped"
HOW[nop5]="5-byte nop, optimized"
DESC[ss]="an ordinary instruction, single-stepped by the kernel"
DESC[fp]="push %rbp, emulated by the kernel"
DESC[cet]="endbr64 (CET build), single-stepped by the kernel"
DESC[nop5]="a 5-byte nop (gcc -pg -mfentry -mnop-mcount), optimized by the kernel"

check_build() { # build -> prints a line, returns 1 if the build is not what it should be
	local t=$1 bin=$B/target_$1 insn bytes ok=1
	insn=$(first_insn "$bin")
	bytes=$(first_bytes "$bin")
	case $t in
	ss) case $insn in push* | nop* | endbr* | "") ok=0 ;; esac ;;
	fp) case $insn in "push   %rbp"*) ;; *) ok=0 ;; esac ;;
	cet) case $insn in endbr64*) ;; *) ok=0 ;; esac ;;
	nop5) [ "$bytes" = "0f 1f 44 00 00" ] || ok=0 ;;
	esac
	# shellcheck disable=SC2016 # the backquotes are Markdown
	if [ $ok = 1 ]; then
		printf -- '- `target_%s`: `%s` starts with `%s` (%s): %s\n' "$t" "$FUNC" "$insn" "$bytes" "${DESC[$t]}"
	else
		printf -- '- `target_%s`: `%s` starts with `%s` (%s): UNEXPECTED, wanted %s\n' "$t" "$FUNC" "$insn" "$bytes" "${DESC[$t]}"
		return 1
	fi
}

# One run of one configuration.  Sets R_NS R_EVENTS R_EXPECTED R_RSS
# R_ATTACH R_LOST R_ERR.
run_one() { # config build calls threads
	local cfg=$1 bin=$B/target_$2 n=$3 th=$4 rc
	local out=$tmp/stdout err=$tmp/stderr rss=$tmp/rss
	R_NS='' R_EVENTS='' R_EXPECTED=$((n * th)) R_RSS='' R_ATTACH=- R_LOST='' R_ERR=''
	rm -f "$out" "$err" "$rss" "$tmp/out.csv" "$tmp/bt.txt"
	case $cfg in
	untraced) "$bin" "$n" "$th" >"$out" 2>"$err" ;;
	floor) "$PEAKRSS" "$rss" "$B/uprobe-floor" "$bin" "$FUNC" -- "$bin" "$n" "$th" >"$out" 2>"$err" ;;
	floor_ret) "$PEAKRSS" "$rss" "$B/uprobe-floor" --ret "$bin" "$FUNC" -- "$bin" "$n" "$th" >"$out" 2>"$err" ;;
	cmon_entry) "$PEAKRSS" "$rss" "$CMON" trace --no-return --func "$FUNC" -F csv -o "$tmp/out.csv" -- "$bin" "$n" "$th" >"$out" 2>"$err" ;;
	cmon_ret) "$PEAKRSS" "$rss" "$CMON" trace --func "$FUNC" -F csv -o "$tmp/out.csv" -- "$bin" "$n" "$th" >"$out" 2>"$err" ;;
	cmon_entry_unstaged) CMON_NO_STAGING=1 "$PEAKRSS" "$rss" "$CMON" trace --no-return --func "$FUNC" -F csv -o "$tmp/out.csv" -- "$bin" "$n" "$th" >"$out" 2>"$err" ;;
	bt_printf) "$PEAKRSS" "$rss" bpftrace -o "$tmp/bt.txt" \
		-e "uprobe:$bin:$FUNC { printf(\"%d %d\\n\", arg0, arg1); }" -c "$bin $n $th" >"$out" 2>"$err" ;;
	bt_count) "$PEAKRSS" "$rss" bpftrace -o "$tmp/bt.txt" \
		-e "uprobe:$bin:$FUNC { @ = count(); }" -c "$bin $n $th" >"$out" 2>"$err" ;;
	esac
	rc=$?
	R_NS=$(sed -n 's/^ns_per_call=\([0-9.]*\) .*/\1/p' "$out" | tail -n 1)
	[ -s "$rss" ] && R_RSS=$(cat "$rss")
	case $cfg in
	cmon_*)
		[ -f "$tmp/out.csv" ] && R_EVENTS=$(($(wc -l <"$tmp/out.csv") - 1))
		[ "${R_EVENTS:-0}" -lt 0 ] && R_EVENTS=0
		R_LOST=$(sed -n 's/.*events lost: *\([0-9][0-9]*\).*/\1/p' "$err" | tail -n 1)
		R_ATTACH=$(sed -n 's/.*attached [0-9]* probes\{0,1\} in \([0-9.]*\) *ms.*/\1/p' "$err" | tail -n 1)
		[ -n "$R_ATTACH" ] || R_ATTACH=-
		# 3: the program exited 0 but events were lost, which is a result
		[ $rc = 3 ] && rc=0
		;;
	bt_printf) [ -f "$tmp/bt.txt" ] && R_EVENTS=$(grep -cE '^-?[0-9]+ -?[0-9]+$' "$tmp/bt.txt") ;;
	bt_count) [ -f "$tmp/bt.txt" ] && R_EVENTS=$(sed -n 's/^@: *\([0-9][0-9]*\).*/\1/p' "$tmp/bt.txt" | tail -n 1) ;;
	esac
	if [ $rc != 0 ] || [ -z "$R_NS" ]; then
		local log=$B/failed.$cfg.$2.t$th.log
		cp "$err" "$log"
		R_ERR="exit $rc: $(grep -v '^$' "$err" | tail -n 1 | cut -c1-100) (stderr: $log)"
		R_NS=
	fi
}

declare -A NS EVMIN EXP RSSMAX ATT LOST ERR
CONFIGS="untraced floor floor_ret cmon_entry cmon_entry_unstaged cmon_ret bt_printf bt_count"
declare -A LABEL=(
	[untraced]="untraced"
	[floor]="empty uprobe (the floor)"
	[floor_ret]="empty uprobe + uretprobe (the floor)"
	[cmon_entry]="cmon trace, entry only, CSV to a file"
	[cmon_entry_unstaged]="same, records not staged per CPU (\`CMON_NO_STAGING=1\`: one ring-buffer reservation each)"
	[cmon_ret]="cmon trace, entry+return, CSV to a file"
	[bt_printf]="bpftrace \`printf\` of two arguments to a file"
	[bt_count]="bpftrace \`@ = count()\`"
)

record() { # key
	local k=$1
	if [ -n "$R_ERR" ]; then
		ERR[$k]=$R_ERR
		FAILED=1
		echo "bench: $k: $R_ERR" >&2
		return
	fi
	NS[$k]="${NS[$k]:-} $R_NS"
	EXP[$k]=$R_EXPECTED
	if [ -n "$R_EVENTS" ]; then
		if [ -z "${EVMIN[$k]:-}" ] || [ "$R_EVENTS" -lt "${EVMIN[$k]}" ]; then EVMIN[$k]=$R_EVENTS; fi
	else
		EVMIN[$k]='?'
	fi
	if [ -n "$R_RSS" ] && [ "$R_RSS" -ge "${RSSMAX[$k]:-0}" ]; then RSSMAX[$k]=$R_RSS; fi
	[ "$R_ATTACH" != - ] && ATT[$k]="${ATT[$k]:-} $R_ATTACH"
	if [ -z "$R_LOST" ]; then
		LOST[$k]='?'
	elif [ "${LOST[$k]:-0}" != "?" ]; then
		LOST[$k]=$((${LOST[$k]:-0} + R_LOST))
	fi
}

skip_reason() { # config -> prints a reason, or nothing
	case $1 in
	cmon_*) [ $HAVE_CMON = 1 ] || echo "n/a (cmon not built)" ;;
	bt_*) [ $HAVE_BT = 1 ] || echo "skipped (bpftrace not installed)" ;;
	esac
}

# --- the other sections -----------------------------------------------------------

# Run one section's script.  Its Markdown is printed when it is done; its
# progress and errors go to stderr as they come.  A script that exits
# non-zero had something that could not run: its section says what (a
# script that failed before printing anything gets a section that says so).
SUB_FAILED=
run_section() { # title script VAR=value...
	local title=$1 script=$2 rc t0
	shift 2
	t0=$(date +%s)
	echo "bench: $title: $script $*" >&2
	# stdout to the file, stderr through tee
	{ env "$@" OUT="$OUT" CMON="$CMON" "$script" 2>&1 >&3 3>&- |
		tee "$tmp/section.err" >&2; } 3>"$tmp/section.out"
	rc=${PIPESTATUS[0]}
	echo
	if grep -q '^## ' "$tmp/section.out"; then
		cat "$tmp/section.out"
	else
		echo "## $title"
		echo
		cat "$tmp/section.out"
		echo "failed: could not run (\`$script\` exited $rc: $(grep -v '^$' "$tmp/section.err" | tail -n 1 | cut -c1-200))"
	fi
	if [ "$rc" != 0 ]; then
		SUB_FAILED="$SUB_FAILED $title"
		echo "bench: $title: some configurations could not run (exit $rc, see above)" >&2
	fi
	echo "bench: $title done in $(($(date +%s) - t0)) s" >&2
}

# The goals of issue 12, each figure from this run (n/a: its section did
# not run or failed).
goals_table() {
	local v
	res() { sed -n "s/^$1=//p" "$RESULTS" | tail -n 1; }
	row() { # figure value goal verdict
		printf '| %s | %s | %s | %s |\n' "$1" "${2:-n/a}" "$3" "$(verdict "$4")"
	}
	echo
	echo "## Goals (issue 12), all from this run"
	echo
	echo "| figure | this run | goal | |"
	echo "|---|---:|---:|---|"
	ratio_row() { # key figure op bound
		local v
		v=$(res "$1")
		row "$2" "${v:+${v}×}" "$([ "$3" = le ] && echo "≤" || echo "≥") $4×" "$("$3" "$v" "$4")"
	}
	ratio_row trace_entry_fp "entry-only records to CSV ÷ empty uprobe, \`push\` site" le 1.3
	ratio_row trace_ret_fp "entry+return records ÷ empty uprobe+uretprobe, \`push\` site" le 1.3
	ratio_row trace_entry_nop5 "entry-only ÷ empty uprobe, 5-byte nop site" le 1.5
	ratio_row cet_bt_count_over_cmon "CET build: bpftrace \`count()\` ÷ cmon entry-only" ge 8
	ratio_row profile_ratio_fp "profile ÷ empty uprobe+uretprobe, \`push\` site" le 1.05
	v=$(res profile_clock_fp)
	printf '| %s | %s | %s | %s |\n' "(the same floor reading only the clock at both ends, no goal)" \
		"${v:+${v}×}" "" ""
	ratio_row capture_typed_ratio "typed capture (string + 64 B) ÷ raw trace" le 1.4
	local cells='' worst='' c o
	for c in ss fp cet nop5; do
		o=$(res "latency_off_$c")
		[ -n "$o" ] || continue
		cells="$cells${cells:+, }$c $o %"
		o=${o#[+-]}
		if [ -z "$worst" ] || awk -v a="$o" -v b="$worst" 'BEGIN { exit !(a > b) }'; then worst=$o; fi
	done
	row "p50 latency of a ~5 µs function vs untraced, every site class" "$cells" "within 10 %" \
		"$(le "$worst" 10)"
	v=$(res consumer_capture_lost)
	row "capture of $(fmt_int "$N") flat-out typed calls: records lost (issue 24)" "$v" "0" \
		"$([ -n "$v" ] && { [ "$v" = 0 ] && echo 1 || echo 0; })"
	v=$(res consumer_csv_fp_lost)
	row "trace, typed CSV, $(fmt_int "$N") flat-out calls on an emulated site: records lost (issue 24)" "$v" "0" \
		"$([ -n "$v" ] && { [ "$v" = 0 ] && echo 1 || echo 0; })"
	v=$(res mt_lost)
	local lv=''
	[ -n "$v" ] && lv=$( [ "$v" = 0 ] && [ "$(res mt_short)" = 0 ] && echo 1 || echo 0)
	row "lost events, $THREADS threads flat out, with CPU contention (all runs)" "$v" "0" "$lv"
}

# The other sections, the total time, and the exit status.
finish() {
	section profile && run_section "cmon profile: per-call cost" tools/bench/bench_profile.sh \
		BENCH_CALLS="$N" BENCH_CALLS_SLOW="$N_SLOW" BENCH_RUNS="$PROFILE_RUNS" BENCH_RESULTS="$RESULTS"
	section capture && run_section "Typed capture" tools/bench/bench_capture.sh \
		BENCH_CALLS="$N" BENCH_RUNS="$CAPTURE_RUNS" BENCH_RESULTS="$RESULTS"
	section consumer && run_section "The consumer" tools/bench/bench_consumer.sh \
		BENCH_CALLS="$N" BENCH_RUNS="${BENCH_CONSUMER_RUNS:-3}" BENCH_RESULTS="$RESULTS"
	section latency && run_section "Latency: the function's own" tools/bench/bench_latency.sh \
		BENCH_RUNS="$RUNS" BENCH_RESULTS="$RESULTS"
	section probes && run_section "Probes past a function's edge" tools/bench/bench_probes.sh \
		BENCH_CALLS="$N" BENCH_RUNS="$RUNS"
	section redis && run_section "redis-server" tools/bench/bench_redis.sh \
		BENCH_RUNS="${BENCH_REDIS_RUNS:-3}"
	section attach && run_section "Attach and detach time" tools/bench/bench_attach.sh \
		BENCH_ATTACH_RUNS="$ATTACH_RUNS" BENCH_ATTACH_SLOW_RUNS="$ATTACH_SLOW_RUNS"
	section python && run_section "Python functions (--py)" tools/bench/bench_python.py \
		BENCH_RUNS="$RUNS"
	section quiet && run_section "Timings checked on a quiet machine" tools/bench/bench_quiet.sh
	# budget: the agent's `budget: 1%` (issue 26), BENCH_BUDGET_RUNS (default 3) runs
	section budget && run_section "The overhead budget" tools/bench/bench_budget.py \
		BENCH_RUNS="${BENCH_BUDGET_RUNS:-3}"
	goals_table
	echo
	echo "Total benchmark time: $(($(date +%s) - START)) s."
	[ $FAILED = 0 ] || echo "bench: some per-call configurations could not run (see above)" >&2
	[ -z "$SUB_FAILED" ] || echo "bench: some sections had something that could not run:$SUB_FAILED" >&2
	[ $FAILED = 0 ] && [ -z "$SUB_FAILED" ]
	exit
}

# --- header ------------------------------------------------------------------

echo "# cmon benchmark"
echo
echo "Sections: $SECTIONS.  Calls per run: $(fmt_int "$N") ($(fmt_int "$N_SLOW") on single-stepped builds);"
echo "runs: per-call $RUNS, profile $PROFILE_RUNS, capture $CAPTURE_RUNS, attach $ATTACH_RUNS ($ATTACH_SLOW_RUNS for the rows that detach perf-event uprobes one by one)."
echo
section trace || finish # the per-call section not asked for: the others only

echo "## cmon trace: per-call cost"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), Linux $(uname -r), $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo))."
echo "Each figure: ns per call of a 1 ns function (\`$FUNC\`) as timed by the target's own loop, median of $RUNS run(s);"
echo "$(fmt_int "$N") calls per run ($(fmt_int "$N_SLOW") on the single-stepped builds target_ss and target_cet); configurations interleaved run by run."
echo "Events: the worst run's events received / calls made.  Tracer RSS: the tracer process's own peak (VmHWM at exit), largest of the runs."
printf 'Tools: bpftrace %s, cmon %s.\n' \
	"$([ $HAVE_BT = 1 ] && bpftrace --version 2>/dev/null | awk '{ print $2 }' || echo 'not installed')" \
	"$([ $HAVE_CMON = 1 ] && echo "$CMON" || echo 'not built')"
echo
echo "Target builds:"
echo
for t in $BUILDS; do
	check_build "$t" || FAILED=1
done

# --- the measurements ----------------------------------------------------------

for t in $BUILDS; do
	n=$N
	case $t in ss | cet) n=$N_SLOW ;; esac
	for ((r = 1; r <= RUNS; r++)); do
		echo "bench: target_$t run $r/$RUNS" >&2
		for c in $CONFIGS; do
			[ -n "$(skip_reason "$c")" ] && continue
			run_one "$c" "$t" "$n" 1
			record "$t.$c"
		done
	done
done

if [ $HAVE_CMON = 1 ]; then
	# A CPU hog competes with the threads and the consumer.
	(while :; do :; done) &
	HOG=$!
	for ((r = 1; r <= RUNS; r++)); do
		echo "bench: $THREADS threads run $r/$RUNS" >&2
		run_one cmon_ret fp "$N" "$THREADS"
		record "mt.cmon_ret"
	done
	kill "$HOG" 2>/dev/null
	wait "$HOG" 2>/dev/null
	HOG=
fi

# --- the tables ---------------------------------------------------------------

med() { # key -> median ns, or empty
	local k=$1
	[ -n "${NS[$k]:-}" ] || return 0
	# shellcheck disable=SC2086
	median ${NS[$k]}
}

events_cell() { # key config
	local k=$1 c=$2 got=${EVMIN[$1]:-} exp=${EXP[$1]:-}
	case $c in untraced | floor | floor_ret) echo "n/a"; return ;; esac
	if [ -z "$got" ] || [ "$got" = "?" ]; then echo "?"; return; fi
	if [ "$c" = bt_count ]; then
		[ "$got" = "$exp" ] && echo "exact ($(fmt_int "$got"))" || echo "$(fmt_int "$got") / $(fmt_int "$exp")"
		return
	fi
	awk -v g="$got" -v e="$exp" 'BEGIN { p = e > 0 ? 100 * g / e : 0;
		f = g == e ? "100 %%" : "%.2f %%"; printf f, p }'
	printf ' (%s / %s)' "$(fmt_int "$got")" "$(fmt_int "$exp")"
	[ "${LOST[$k]:-}" != "" ] && [ "${LOST[$k]}" != "?" ] && [ "${LOST[$k]}" != 0 ] &&
		printf ', %s lost' "$(fmt_int "${LOST[$k]}")"
	echo
}

for t in $BUILDS; do
	n=$N
	case $t in ss | cet) n=$N_SLOW ;; esac
	echo
	echo "### \`target_$t\`: \`$FUNC\` starts with \`$(first_insn "$B/target_$t")\` (${HOW[$t]})"
	echo
	echo "$(fmt_int "$n") calls, median of $RUNS run(s)."
	echo
	echo "| configuration | ns/call | × floor | × bpftrace count() | events received | tracer RSS | attach |"
	echo "|---|---:|---:|---:|---|---:|---:|"
	floor=$(med "$t.floor")
	floor_ret=$(med "$t.floor_ret")
	btc=$(med "$t.bt_count")
	for c in $CONFIGS; do
		k=$t.$c
		why=$(skip_reason "$c")
		if [ -n "$why" ]; then
			echo "| ${LABEL[$c]} | $why | | | | | |"
			continue
		fi
		if [ -n "${ERR[$k]:-}" ] && [ -z "${NS[$k]:-}" ]; then
			echo "| ${LABEL[$c]} | failed: ${ERR[$k]//|/\\|} | | | | | |"
			continue
		fi
		ns=$(med "$k")
		case $c in
		untraced) rf=- ;;
		floor_ret | cmon_ret) rf=$(ratio "$ns" "$floor_ret") ;;
		*) rf=$(ratio "$ns" "$floor") ;;
		esac
		[ "$c" = untraced ] && rb=- || rb=$(ratio "$ns" "$btc")
		rss=-
		[ -n "${RSSMAX[$k]:-}" ] && rss=$(awk -v k="${RSSMAX[$k]}" 'BEGIN { printf "%.1f MB", k / 1024 }')
		att=-
		# shellcheck disable=SC2086
		[ -n "${ATT[$k]:-}" ] && att="$(median ${ATT[$k]}) ms"
		note=
		[ -n "${ERR[$k]:-}" ] && note=" (a run failed)"
		echo "| ${LABEL[$c]} | $(fmt_ns "$ns")$note | $rf | $rb | $(events_cell "$k" "$c") | $rss | $att |"
	done
done

echo
echo "### $THREADS threads and a CPU hog: cmon trace, entry+return, on \`target_fp\`"
echo
if [ $HAVE_CMON = 1 ]; then
	echo "$(fmt_int "$N") calls per thread, $RUNS run(s)."
	echo
	echo "| configuration | ns/call (per thread) | events received (worst run) | events lost (all runs) | tracer RSS |"
	echo "|---|---:|---|---:|---:|"
	k=mt.cmon_ret
	if [ -n "${NS[$k]:-}" ]; then
		rss=-
		[ -n "${RSSMAX[$k]:-}" ] && rss=$(awk -v k="${RSSMAX[$k]}" 'BEGIN { printf "%.1f MB", k / 1024 }')
		echo "| cmon trace, entry+return, $THREADS threads | $(fmt_ns "$(med $k)") | $(events_cell $k cmon_ret) | ${LOST[$k]:-?} | $rss |"
	else
		echo "| cmon trace, entry+return, $THREADS threads | failed: ${ERR[$k]:-} | | | |"
	fi
else
	echo "n/a (cmon not built)"
fi

# --- the goals ----------------------------------------------------------------


{
	r=$(rat "$(med fp.cmon_entry)" "$(med fp.floor)") && [ -n "$r" ] && echo "trace_entry_fp=$r"
	r=$(rat "$(med fp.cmon_ret)" "$(med fp.floor_ret)") && [ -n "$r" ] && echo "trace_ret_fp=$r"
	r=$(rat "$(med nop5.cmon_entry)" "$(med nop5.floor)") && [ -n "$r" ] && echo "trace_entry_nop5=$r"
	r=$(rat "$(med cet.bt_count)" "$(med cet.cmon_entry)") && [ -n "$r" ] && echo "cet_bt_count_over_cmon=$r"
	if [ -n "${NS[mt.cmon_ret]:-}" ] && [ "${LOST[mt.cmon_ret]:-?}" != "?" ]; then
		short=0
		[ "${EVMIN[mt.cmon_ret]:-?}" = "?" ] || [ "${EVMIN[mt.cmon_ret]}" -lt "${EXP[mt.cmon_ret]}" ] && short=1
		echo "mt_lost=${LOST[mt.cmon_ret]}"
		echo "mt_short=$short"
	fi
} >>"$RESULTS"

echo
echo "### Goals"
echo
r1=$(rat "$(med ss.cmon_entry)" "$(med ss.floor)")
r2=$(rat "$(med ss.cmon_ret)" "$(med ss.floor_ret)")
r3=$(rat "$(med cet.bt_count)" "$(med cet.cmon_entry)")
printf -- '- %s: entry only ≤ 1.15× the uprobe floor on target_ss: %s\n' \
	"$(verdict "$(le "$r1" 1.15)")" "${r1:+${r1}×}"
printf -- '- %s: entry+return ≤ 1.25× the uprobe+uretprobe floor on target_ss: %s\n' \
	"$(verdict "$(le "$r2" 1.25)")" "${r2:+${r2}×}"
printf -- '- %s: on target_cet, entry only ≥ 8× cheaper than bpftrace count(): %s\n' \
	"$(verdict "$(ge "$r3" 8)")" "${r3:+${r3}× cheaper}"

# Lost events: every cmon run, threaded included, must deliver every call.
lost_v='' lost_txt=''
if [ $HAVE_CMON = 1 ]; then
	total=0 unknown=0 short=0 seen=0
	for k in "${!NS[@]}"; do
		case $k in *.cmon_*) seen=$((seen + 1)) ;; *) continue ;; esac
		if [ "${LOST[$k]:-?}" = "?" ]; then unknown=1; else total=$((total + ${LOST[$k]})); fi
		if [ "${EVMIN[$k]:-?}" = "?" ] || [ "${EVMIN[$k]}" -lt "${EXP[$k]}" ]; then short=1; fi
	done
	if [ $total -gt 0 ] || [ $short = 1 ]; then
		lost_v=0
	elif [ $unknown = 0 ]; then
		lost_v=1
	fi
	lost_txt="$total lost over all cmon runs"
	[ $unknown = 1 ] && lost_txt="$lost_txt (some runs printed no \"events lost\" line)"
	[ $short = 1 ] && lost_txt="$lost_txt; some run received fewer events than calls"
	[ $unknown = 1 ] && [ $total = 0 ] && [ $short = 0 ] && lost_v='?'
	if [ $seen = 0 ]; then
		lost_v='' lost_txt="no cmon run succeeded"
	fi
fi
printf -- '- %s: zero lost events: %s\n' "$(verdict "$lost_v")" "$lost_txt"

rss_v='' rss_txt=''
if [ $HAVE_CMON = 1 ]; then
	maxk=0
	for k in "${!RSSMAX[@]}"; do
		case $k in *.cmon_*) [ "${RSSMAX[$k]}" -gt "$maxk" ] && maxk=${RSSMAX[$k]} ;; esac
	done
	if [ "$maxk" -gt 0 ]; then
		rss_v=$([ "$maxk" -lt 16384 ] && echo 1 || echo 0)
		rss_txt=$(awk -v k="$maxk" 'BEGIN { printf "%.1f MB", k / 1024 }')
	fi
fi
printf -- '- %s: cmon peak RSS < 16 MB: %s\n' "$(verdict "$rss_v")" "$rss_txt"

echo
echo "Time: $(($(date +%s) - START)) s."

finish
