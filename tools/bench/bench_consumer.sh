#!/bin/bash
# The consumer: does cmon keep up with what the programs produce?  For each
# configuration, a target calls the traced function flat out (BENCH_CALLS
# calls): the programs' production rate (calls/s, the target's own loop),
# the records cmon wrote a second (records / (cmon's wall time less its
# start and exit, measured with a 0-call run)), the records lost (%), cmon's
# peak RSS and what it spooled; typed CSV on the emulated site also with
# --blocking-timeout (the records lost then, and the program's slowdown).  Each configuration with the spool (the
# default) and without (CMON_NO_SPOOL=1, the consumer before it), runs
# interleaved, median of BENCH_RUNS (lost: the worst run).  Markdown on
# stdout.
#
#   OUT=build ./tools/bench/bench_consumer.sh     (root; tools/bench.sh calls it)
#
# Environment: BENCH_CALLS (default 1000000), BENCH_RUNS (default 3),
# BENCH_RESULTS (a file: `consumer_capture_lost=N` and
# `consumer_csv_fp_lost=N`, the worst spooled runs', are appended).
set -u
# shellcheck source=tools/bench/lib.sh
. "$(dirname "$0")/lib.sh"

cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build}
N=${BENCH_CALLS:-1000000}
RUNS=${BENCH_RUNS:-3}

die() { echo "bench_consumer: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (uprobes)"
for v in "$N" "$RUNS"; do
	case $v in '' | *[!0-9]*) die "BENCH_* must be positive integers" ;; esac
	[ "$v" -gt 0 ] || die "BENCH_* must be positive integers"
done
make -s --no-print-directory -f tools/bench/bench.mk bench-tools OUT="$OUT" ||
	die "could not build the benchmark programs"
OUT=$(cd "$OUT" && pwd)
B=$OUT/bench
CMON=${CMON:-$OUT/cmon}
[ -x "$CMON" ] || die "no $CMON"
tmp=$(mktemp -d /tmp/cmon-bench-consumer.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
FAILED=0

CONFIGS="csv_nop5 json_nop5 csv_fp csv_fp_wait capture"
declare -A LABEL=(
	[csv_nop5]="trace --no-return, typed CSV to a file, 5-byte nop site (\`target_nop5\`)"
	[json_nop5]="trace --no-return, typed JSON to a file, 5-byte nop site"
	[csv_fp]="trace (entry + return), typed CSV to a file, emulated \`push\` site (\`target_fp\`)"
	[csv_fp_wait]="the same with \`--blocking-timeout 50ms\` (the program waits for room: compare its call rate with the row above)"
	[capture]="capture into a store: a string + 64-byte \`--capture\`, emulated site (\`capture_target\`)"
)

# cmon's command for CONFIG making CALLS calls, output under $tmp.
cmd_of() { # config calls
	case $1 in
	csv_nop5) echo "$CMON trace -v --no-return --func bench_fn -F csv -o $tmp/out -- $B/target_nop5 $2" ;;
	json_nop5) echo "$CMON trace -v --no-return --func bench_fn -F json -o $tmp/out -- $B/target_nop5 $2" ;;
	csv_fp) echo "$CMON trace -v --func bench_fn -F csv -o $tmp/out -- $B/target_fp $2" ;;
	csv_fp_wait) echo "$CMON trace -v --blocking-timeout 50ms --func bench_fn -F csv -o $tmp/out -- $B/target_fp $2" ;;
	capture) echo "$CMON capture -v --func capture_fn --capture data=buf:len -o $tmp/store -- $B/capture_target $2" ;;
	esac
}

now_ns() { date +%s%N; }

# One run.  Sets R_RATE (production, calls/s) R_SECS R_LOST R_RSS R_SPOOL R_ERR.
run_one() { # config spool(0/1) calls
	local t0 t1 rc
	R_RATE='' R_SECS='' R_LOST='' R_RSS='' R_SPOOL='' R_ERR=''
	rm -rf "$tmp/out" "$tmp/store" "$tmp/rss"
	t0=$(now_ns)
	# shellcheck disable=SC2046 # the command's words
	if [ "$2" = 1 ]; then
		"$B/peakrss" "$tmp/rss" $(cmd_of "$1" "$3") >"$tmp/stdout" 2>"$tmp/stderr"
	else
		CMON_NO_SPOOL=1 "$B/peakrss" "$tmp/rss" $(cmd_of "$1" "$3") >"$tmp/stdout" 2>"$tmp/stderr"
	fi
	rc=$?
	t1=$(now_ns)
	[ "$rc" = 3 ] && rc=0 # losses are a result
	if [ "$rc" != 0 ]; then
		R_ERR="exit $rc: $(grep -v '^$' "$tmp/stderr" | tail -n 1 | cut -c1-100)"
		return
	fi
	R_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')
	R_RATE=$(sed -n 's/^ns_per_call=\([0-9.]*\) .*/\1/p' "$tmp/stdout" | awk '$1 > 0 { printf "%.0f", 1e9 / $1 }')
	R_LOST=$(sed -n 's/^cmon: events lost: *\([0-9][0-9]*\).*/\1/p' "$tmp/stderr" | tail -n 1)
	R_SPOOL=$(sed -n 's/^cmon: spooled: \([0-9]*\) records.*compressed on disk, \([0-9]*\) at most.*/\1 \2/p' "$tmp/stderr")
	[ -s "$tmp/rss" ] && R_RSS=$(cat "$tmp/rss")
}

declare -A BASE SECS RATE LOST RSS SPOOLED ERR
echo "bench_consumer: start-up and exit of each configuration (0 calls)" >&2
for cfg in $CONFIGS; do
	s=()
	for _ in 1 2; do
		run_one "$cfg" 1 0
		[ -n "$R_SECS" ] && s+=("$R_SECS")
	done
	[ ${#s[@]} -gt 0 ] && BASE[$cfg]=$(median "${s[@]}")
done
for r in $(seq "$RUNS"); do
	for cfg in $CONFIGS; do
		for sp in 1 0; do
			k=$cfg.$sp
			echo "bench_consumer: run $r/$RUNS: $cfg, spool $sp" >&2
			run_one "$cfg" "$sp" "$N"
			if [ -n "$R_ERR" ]; then
				ERR[$k]=$R_ERR
				FAILED=1
				echo "bench_consumer: $k: $R_ERR" >&2
				continue
			fi
			SECS[$k]="${SECS[$k]:-} $R_SECS"
			RATE[$k]="${RATE[$k]:-} $R_RATE"
			RSS[$k]="${RSS[$k]:-} $R_RSS"
			[ -z "${LOST[$k]:-}" ] || [ "${R_LOST:-0}" -gt "${LOST[$k]}" ] && LOST[$k]=${R_LOST:-0}
			[ -n "$R_SPOOL" ] && SPOOLED[$k]=$R_SPOOL
		done
	done
done

echo "## The consumer: records written a second, and lost, at a flat-out loop"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs; $(fmt_int "$N") calls a run, median of $RUNS (lost: the worst run; peak RSS: the largest)."
echo "*produced*: the target's own call rate under the trace; *written*: records / (cmon's wall time less its start-up and exit, a 0-call run); with the spool (default) and without (\`CMON_NO_SPOOL=1\`)."
echo
echo "| configuration | spool | produced (calls/s) | written (records/s) | lost | peak RSS | spooled (records; most on disk at once) |"
echo "|---|---|---:|---:|---:|---:|---|"
for cfg in $CONFIGS; do
	for sp in 1 0; do
		k=$cfg.$sp
		if [ -n "${ERR[$k]:-}" ]; then
			echo "| ${LABEL[$cfg]} | $sp | failed: ${ERR[$k]} | | | | |"
			continue
		fi
		# shellcheck disable=SC2086 # lists of numbers
		secs=$(median ${SECS[$k]})
		# shellcheck disable=SC2086
		rate=$(median ${RATE[$k]})
		# shellcheck disable=SC2086
		rss=$(printf '%s\n' ${RSS[$k]} | sort -n | tail -n 1)
		lost=${LOST[$k]:-0}
		written=$(awk -v n="$N" -v l="$lost" -v s="$secs" -v b="${BASE[$cfg]:-0}" \
			'BEGIN { d = s - b; if (d > 0) printf "%.0f", (n - l) / d; else print "" }')
		pct=$(awk -v n="$N" -v l="$lost" 'BEGIN { printf "%.2f %%", 100 * l / n }')
		sp_txt="-"
		if [ -n "${SPOOLED[$k]:-}" ]; then
			set -- ${SPOOLED[$k]}
			sp_txt="$(fmt_int "$1"); $(awk -v b="$2" 'BEGIN { printf "%.1f MB", b / 1e6 }')"
		fi
		echo "| ${LABEL[$cfg]} | $([ $sp = 1 ] && echo yes || echo no) | $(fmt_int "$rate") | $(fmt_int "$written") | $(fmt_int "$lost") ($pct) | $(awk -v k="$rss" 'BEGIN { printf "%.1f MB", k / 1024 }') | $sp_txt |"
		if [ -n "${BENCH_RESULTS:-}" ] && [ $sp = 1 ]; then
			case $cfg in
			capture) echo "consumer_capture_lost=$lost" >>"$BENCH_RESULTS" ;;
			csv_fp) echo "consumer_csv_fp_lost=$lost" >>"$BENCH_RESULTS" ;;
			esac
		fi
	done
done
echo
[ $FAILED = 0 ] || echo "bench_consumer: some configurations could not run (see above)" >&2
[ $FAILED = 0 ]
