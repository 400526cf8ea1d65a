#!/bin/bash
# Attach and detach time for 10, 100 and 1,000 functions: `cmon trace`,
# `cmon profile` and `cmon agent` next to bpftrace, side by side in one run
# (tools interleaved run by run, median of BENCH_ATTACH_RUNS), on a
# generated program of 1,000 one-line functions (tools/bench/gen_many.sh).
# Prints Markdown.  A measurement, not a test: misses are reported, never
# fatal.  Exits non-zero only when something could not run.
#
#   OUT=build ./tools/bench/bench_attach.sh     (root; tools/bench.sh calls it)
#
# Per run and tool: start it on the file ($OUT/bench/many, every process
# running it), wait until it says it is ready (cmon trace/profile: its
# "attached N probes" line; the agent: its "ready: serving" line, after the
# spec is applied; bpftrace: the output of a BEGIN probe, which runs once
# every probe is attached), run the program once (each function called
# once: the "calls counted" column checks that every probe fired), then
# SIGINT (the agent: SIGTERM) and wait for the tool to exit.
#   ready  = start -> ready, detach = signal -> exit, total = ready + detach.
#
# Environment: BENCH_ATTACH_RUNS (default 3) runs per row;
# BENCH_ATTACH_SLOW_RUNS (default BENCH_ATTACH_RUNS; 0 skips them) runs of
# the rows that detach ordinary perf-event uprobes one by one (~100 ms
# each): bpftrace at 100 functions and more, and cmon's fallback
# (CMON_NO_UPROBE_MULTI=1);
# BENCH_ATTACH_BPFTRACE_1000=1 also runs bpftrace on 1,000 functions (about
# two minutes per run).
set -u
# shellcheck source=tools/bench/lib.sh
. "$(dirname "$0")/lib.sh"

cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build}
RUNS=${BENCH_ATTACH_RUNS:-3}
SLOW_RUNS=${BENCH_ATTACH_SLOW_RUNS:-$RUNS}
BT1000=${BENCH_ATTACH_BPFTRACE_1000:-0}
SIZES="10 100 1000"
GOAL_MS=500
READY_TIMEOUT=120  # s from start to ready
DETACH_TIMEOUT=900 # s from the signal to exit

die() { echo "bench_attach: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (uprobes)"
case $RUNS$SLOW_RUNS in '' | *[!0-9]*) die "BENCH_ATTACH_*RUNS must be integers" ;; esac
[ "$RUNS" -gt 0 ] || die "BENCH_ATTACH_RUNS must be positive"

make -s --no-print-directory -f tools/bench/bench.mk bench-tools OUT="$OUT" ||
	die "could not build the benchmark programs"
OUT=$(cd "$OUT" && pwd) # uprobes want absolute paths
B=$OUT/bench
MANY=$B/many
CMON=${CMON:-$OUT/cmon}
AGENT=${CMON_AGENT:-$OUT/cmon-agent}

HAVE_CMON=0
[ -x "$CMON" ] && HAVE_CMON=1
HAVE_PROFILE=0
[ $HAVE_CMON = 1 ] && "$CMON" profile --help >/dev/null 2>&1 && HAVE_PROFILE=1
HAVE_AGENT=0
[ -x "$AGENT" ] && "$AGENT" --help >/dev/null 2>&1 && HAVE_AGENT=1
HAVE_BT=0
command -v bpftrace >/dev/null 2>&1 && HAVE_BT=1

tmp=$(mktemp -d /tmp/cmon-bench-attach.XXXXXX) || die "mktemp failed"
CUR_PID=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	[ -n "$CUR_PID" ] && kill -KILL "$CUR_PID" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

FAILED=0
START=$(date +%s)

# --- helpers -------------------------------------------------------------------

# ms: one decimal below 100, thousands separated above
fmt_ms() { awk -v x="$1" 'BEGIN { if (x < 100) { printf "%.1f", x; exit }
	s = sprintf("%.0f", x); o = "";
	while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) }
	print s o }'; }
now_us() { echo "${EPOCHREALTIME/./}"; }
us_to_ms() { awk -v a="$1" 'BEGIN { printf "%.3f", a / 1000 }'; }
nfds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

# Globs that bpftrace takes too (it has no `?`).
glob_of() {
	case $1 in 10) echo 'many_000*' ;; 100) echo 'many_00*' ;; 1000) echo 'many_0*' ;; esac
}

# How many of the program's functions GLOB selects.
count_glob() {
	local g=$1 n=0 name
	# shellcheck disable=SC2053 # $g is a glob on purpose
	while read -r name; do [[ $name == $g ]] && n=$((n + 1)); done <"$tmp/funcs"
	echo "$n"
}

# --- one measurement ---------------------------------------------------------------

# Start CMD (stdout and stderr to a pipe, which is read line by line: no
# polling), wait for a line matching READY_RE, run the program once, call
# HOOK (if set), send SIGNAL, read until the tool exits.  Sets M_READY
# M_DETACH (ms), M_RC, M_ERR, M_RESENT; the tool's output is in $tmp/log.
HOOK=
run_tool() { # ready-regex signal cmd...
	local re=$1 sig=$2 t0 t1 t2 t3 line ok=0 rfd pid rc fds0 waited=0
	shift 2
	M_READY='' M_DETACH='' M_RC='' M_ERR='' M_RESENT=0
	: >"$tmp/log"
	t0=$(now_us)
	# Job control on: a background job of a script otherwise starts with
	# SIGINT ignored (a tool that does not install its own handler would
	# then never see it).
	set -m
	coproc TOOL { exec "$@" </dev/null 2>&1; }
	set +m
	pid=$TOOL_PID
	CUR_PID=$pid
	# Our own copy: bash closes the coproc's descriptors when it reaps it.
	exec {rfd}<&"${TOOL[0]}"
	while IFS= read -r -t "$READY_TIMEOUT" -u "$rfd" line; do
		printf '%s\n' "$line" >>"$tmp/log"
		if [[ $line =~ $re ]]; then
			ok=1
			break
		fi
	done
	t1=$(now_us)
	if [ $ok = 0 ]; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		M_RC=$?
		exec {rfd}<&-
		CUR_PID=
		M_ERR="never ready: $(grep -v 'RLIMIT_MEMLOCK' "$tmp/log" | grep -v '^$' | tail -n 1 | cut -c1-120)"
		return 1
	fi
	"$MANY" >"$tmp/many.out" 2>&1
	[ -n "$HOOK" ] && "$HOOK"
	fds0=$(nfds "$pid")
	t2=$(now_us)
	kill -s "$sig" "$pid" 2>/dev/null
	while :; do
		IFS= read -r -t 2 -u "$rfd" line
		rc=$?
		if [ $rc = 0 ]; then
			printf '%s\n' "$line" >>"$tmp/log"
			continue
		fi
		[ $rc -le 128 ] && break # end of file: the tool has exited
		waited=$((waited + 2))
		# Two quiet seconds and not one descriptor closed: the signal
		# was missed (bpftrace can miss one that arrives while it is
		# busy); send it again, and say so.
		if [ $M_RESENT = 0 ] && [ "$(nfds "$pid")" -ge "$fds0" ]; then
			kill -s "$sig" "$pid" 2>/dev/null
			M_RESENT=1
		fi
		if [ $waited -ge $DETACH_TIMEOUT ]; then
			kill -KILL "$pid" 2>/dev/null
			M_ERR="still running ${DETACH_TIMEOUT} s after SIG$sig: killed"
			break
		fi
	done
	t3=$(now_us)
	exec {rfd}<&-
	wait "$pid" 2>/dev/null
	M_RC=$?
	CUR_PID=
	M_READY=$(us_to_ms $((t1 - t0)))
	M_DETACH=$(us_to_ms $((t3 - t2)))
	[ -z "$M_ERR" ] || return 1
}

AGENT_ADDR=

# One run of one row.  Sets R_READY R_DETACH R_PROBES R_OWN R_CALLS R_ERR.
measure() { # tool n
	local tool=$1 n=$2 g rc
	g=$(glob_of "$n")
	R_READY='' R_DETACH='' R_PROBES='' R_OWN='' R_CALLS='' R_ERR=''
	HOOK=
	case $tool in
	trace) run_tool '^cmon: attached [0-9]+ probe' INT \
		"$CMON" trace --binary "$MANY" --func "$g" -o /dev/null ;;
	trace_perf) run_tool '^cmon: attached [0-9]+ probe' INT \
		env CMON_NO_UPROBE_MULTI=1 "$CMON" trace --binary "$MANY" --func "$g" -o /dev/null ;;
	profile) run_tool '^cmon: attached [0-9]+ probe' INT \
		"$CMON" profile --binary "$MANY" --func "$g" -o /dev/null ;;
	agent)
		printf 'probes:\n  - name: many\n    target: %s\n    func: %s\n    instrument: count\n' \
			"$MANY" "'$g'" >"$tmp/spec.yaml"
		HOOK=agent_hook
		run_tool '^cmon: ready: serving' TERM "$AGENT" --spec "$tmp/spec.yaml" --listen 127.0.0.1:0
		;;
	bpftrace) BPFTRACE_MAX_PROBES=$((n + 16)) run_tool '^ready$' INT \
		bpftrace -e "BEGIN { printf(\"ready\\n\"); } uprobe:$MANY:$g { @ = count(); }" ;;
	esac
	rc=$?
	R_READY=$M_READY R_DETACH=$M_DETACH
	if [ $rc != 0 ]; then
		R_ERR=$M_ERR
		return
	fi
	case $tool in
	trace | trace_perf | profile)
		R_PROBES=$(sed -n 's/^cmon: attached \([0-9]*\) probes\{0,1\} in .*/\1/p' "$tmp/log" | head -n 1)
		R_OWN=$(sed -n 's/^cmon: attached [0-9]* probes\{0,1\} in \([0-9.]*\) ms.*/\1/p' "$tmp/log" | head -n 1)
		;;
	agent)
		R_PROBES=$(sed -n 's/^cmon: probe many: applied:.* \([0-9][0-9]*\) probes\{0,1\} attached in .*/\1/p' "$tmp/log" | head -n 1)
		R_OWN=$(sed -n 's/^cmon: probe many: applied: .* attached in \([0-9.]*\) ms.*/\1/p' "$tmp/log" | head -n 1)
		;;
	bpftrace)
		# "Attaching N probes..." counts BEGIN too
		R_PROBES=$(sed -n 's/^Attaching \([0-9]*\) probes.*/\1/p' "$tmp/log" | head -n 1)
		[ -n "$R_PROBES" ] && R_PROBES=$((R_PROBES - 1))
		;;
	esac
	case $tool in
	trace | trace_perf) R_CALLS=$(sed -n 's/^cmon: events written: *\([0-9]*\).*/\1/p' "$tmp/log" | tail -n 1) ;;
	profile) R_CALLS=$(sed -n 's/^cmon: \([0-9]*\) calls counted in.*/\1/p' "$tmp/log" | tail -n 1) ;;
	agent) R_CALLS=$AGENT_HITS ;;
	bpftrace) R_CALLS=$(sed -n 's/^@: *\([0-9]*\).*/\1/p' "$tmp/log" | tail -n 1) ;;
	esac
	# Exit status: cmon 0 (3: events lost, which the calls column shows).
	case $M_RC in 0 | 3) ;; *) R_ERR="exit $M_RC: $(grep -v 'RLIMIT_MEMLOCK' "$tmp/log" | grep -v '^$' | tail -n 1 | cut -c1-120)" ;; esac
	[ "$M_RESENT" = 1 ] && R_NOTE[$n:$tool]="once the first signal was missed and sent again after 2 s"
}

# After the run of the program: the agent's own view of the probe.
# shellcheck disable=SC2317 # called through $HOOK
agent_hook() {
	local line st funcs hits
	AGENT_HITS=''
	line=$(sed -n 's|^cmon: ready: serving http://\([^/]*\)/.*|\1|p' "$tmp/log" | head -n 1)
	AGENT_ADDR=$line
	[ -n "$AGENT_ADDR" ] || return 0
	# The probe's line of `cmon agent --status`: NAME STATE FUNCS HITS LOST ...
	# (counts are read from the kernel when asked: no delay needed)
	"$AGENT" --status --listen "$AGENT_ADDR" 2>&1 | awk '$1 == "many"' >"$tmp/status"
	if [ -s "$tmp/status" ]; then
		read -r _ st funcs hits _ <"$tmp/status"
		[ "$st" = applied ] && [ "$funcs" = "$n" ] && AGENT_HITS=$hits
	fi
}

# --- the runs ----------------------------------------------------------------------

nm "$MANY" 2>/dev/null | awk '$2 == "T" && $3 ~ /^many_/ { print $3 }' >"$tmp/funcs"
declare -A GLOB_N
for n in $SIZES; do GLOB_N[$n]=$(count_glob "$(glob_of "$n")"); done
MANY_OK=1
"$MANY" >"$tmp/many.out" 2>&1 && grep -q '^calls=1000 ' "$tmp/many.out" || MANY_OK=0
for n in $SIZES; do [ "${GLOB_N[$n]}" = "$n" ] || MANY_OK=0; done
if [ $MANY_OK = 0 ]; then
	echo "## Attach and detach time"
	echo
	echo "failed: $MANY is not the program of 1,000 functions it should be (globs select: ${GLOB_N[*]})"
	exit 1
fi

# Rows: N:tool.  The perf-event fallback once, at 100 functions.
ROWS=
for n in $SIZES; do
	ROWS="$ROWS $n:trace $n:profile $n:agent $n:bpftrace"
	[ "$n" = 100 ] && ROWS="$ROWS $n:trace_perf"
done
declare -A LABEL=(
	[trace]="cmon trace"
	[trace_perf]="cmon trace, \`CMON_NO_UPROBE_MULTI=1\` (perf-event uprobes, the fallback)"
	[profile]="cmon profile"
	[agent]="cmon agent (one \`count\` probe)"
	[bpftrace]="bpftrace \`@ = count()\`"
)

skip_reason() { # tool n
	case $1 in
	trace) [ $HAVE_CMON = 1 ] || echo "n/a (cmon not built)" ;;
	profile) [ $HAVE_PROFILE = 1 ] || echo "n/a (cmon with profile not built)" ;;
	agent) [ $HAVE_AGENT = 1 ] || echo "n/a (cmon-agent not built)" ;;
	bpftrace | trace_perf)
		if slow_row "$1" "$2" && [ "$SLOW_RUNS" = 0 ]; then
			echo "skipped (BENCH_ATTACH_SLOW_RUNS=0)"
		elif [ "$1" = trace_perf ]; then
			[ $HAVE_CMON = 1 ] || echo "n/a (cmon not built)"
		elif [ $HAVE_BT = 0 ]; then
			echo "skipped (bpftrace not installed)"
		elif [ "$2" -ge 1000 ] && [ "$BT1000" != 1 ]; then
			echo "skipped"
		fi
		;;
	esac
}

slow_row() { # tool n: detaches perf-event uprobes one by one
	[ "$1" = trace_perf ] || { [ "$1" = bpftrace ] && [ "$2" -ge 100 ]; }
}

declare -A READY DETACH TOTAL PROBES OWN CALLS ERR R_NOTE
MAXRUNS=$RUNS
[ "$SLOW_RUNS" -gt "$MAXRUNS" ] && MAXRUNS=$SLOW_RUNS
for ((r = 1; r <= MAXRUNS; r++)); do
	for row in $ROWS; do
		n=${row%%:*} tool=${row#*:} k=$row
		[ -n "$(skip_reason "$tool" "$n")" ] && continue
		if slow_row "$tool" "$n"; then
			[ "$r" -le "$SLOW_RUNS" ] || continue
		else
			[ "$r" -le "$RUNS" ] || continue
		fi
		echo "bench_attach: run $r/$MAXRUNS: $tool, $n functions" >&2
		measure "$tool" "$n"
		if [ -n "$R_ERR" ]; then
			ERR[$k]=$R_ERR
			FAILED=1
			echo "bench_attach: $tool, $n functions: $R_ERR" >&2
			grep -v '^$' "$tmp/log" | tail -n 5 | sed 's/^/bench_attach:   /' >&2
			continue
		fi
		READY[$k]="${READY[$k]:-} $R_READY"
		DETACH[$k]="${DETACH[$k]:-} $R_DETACH"
		TOTAL[$k]="${TOTAL[$k]:-} $(awk -v a="$R_READY" -v b="$R_DETACH" 'BEGIN { printf "%.3f", a + b }')"
		[ -n "$R_PROBES" ] && PROBES[$k]=$R_PROBES
		[ -n "$R_OWN" ] && OWN[$k]="${OWN[$k]:-} $R_OWN"
		# the worst run's count
		c=${R_CALLS:-?}
		if [ -z "${CALLS[$k]:-}" ] || [ "$c" = "?" ] ||
			{ [ "${CALLS[$k]}" != "?" ] && [ "$c" -lt "${CALLS[$k]}" ]; }; then
			CALLS[$k]=$c
		fi
	done
done

# --- the table ----------------------------------------------------------------------

# shellcheck disable=SC2086 # lists of numbers
med() { [ -n "$1" ] && median $1; }

echo "## Attach and detach time: 10, 100 and 1,000 functions"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), Linux $(uname -r), $(nproc) CPUs."
printf 'Tools: cmon %s, bpftrace %s.\n' \
	"$([ $HAVE_CMON = 1 ] && echo "$CMON" || echo 'not built')" \
	"$([ $HAVE_BT = 1 ] && bpftrace --version 2>/dev/null | awk '{ print $2 }' || echo 'not installed')"
echo "Each tool attaches to every function the glob selects in \`$MANY\` (1,000 one-line functions"
echo "\`many_0000\`..\`many_0999\`, by path: every process running it), the program runs once (each function"
echo "called once), then the tool is stopped (SIGINT; the agent SIGTERM)."
echo "Ready: start → the tool says it is attached (cmon: its \"attached\" line; the agent: \"ready: serving\";"
echo "bpftrace: its BEGIN probe's output), so resolving, loading and attaching.  Detach: the signal → the tool"
echo "has exited.  Total: ready + detach of each run.  Medians of $RUNS run(s) ($SLOW_RUNS for the rows detaching"
echo "perf-event uprobes one by one), each column on its own; tools interleaved.  Probes: uprobes attached (cmon trace and profile: entry and"
echo "return).  Own figure: the attach time the tool reports itself (link creation).  Calls counted: the"
echo "worst run's count of the one call of each function."
echo
echo "| functions | tool | probes | ready ms | detach ms | total ms | own figure | calls counted |"
echo "|---:|---|---:|---:|---:|---:|---:|---|"
declare -A TOTMED
for row in $ROWS; do
	n=${row%%:*} tool=${row#*:} k=$row g=$(glob_of "$n")
	label="${LABEL[$tool]}"
	why=$(skip_reason "$tool" "$n")
	if [ -n "$why" ]; then
		if [ "$tool" = bpftrace ] && [ "$why" = skipped ]; then
			est=
			# the measured per-probe detach at 100 functions, times n
			d=$(med "${DETACH[100:bpftrace]:-}")
			[ -n "$d" ] && est=$(awk -v d="$d" -v n="$n" 'BEGIN { printf "%.0f", d / 100 * n / 1000 }')
			why="skipped (≈ $(fmt_int "$n") × $([ -n "$d" ] && fmt_ms "$(awk -v d="$d" 'BEGIN { print d / 100 }')" || echo "~110") ms to detach${est:+ ≈ $est s} per run; set BENCH_ATTACH_BPFTRACE_1000=1)"
		fi
		echo "| $(fmt_int "$n") | $label | | $why | | | | |"
		continue
	fi
	if [ -z "${TOTAL[$k]:-}" ]; then
		echo "| $(fmt_int "$n") | $label | | failed: ${ERR[$k]//|/\\|} | | | | |"
		continue
	fi
	rd=$(med "${READY[$k]}")
	dt=$(med "${DETACH[$k]}")
	tt=$(med "${TOTAL[$k]}")
	TOTMED[$k]=$tt
	probes="?"
	[ -n "${PROBES[$k]:-}" ] && probes=$(fmt_int "${PROBES[$k]}")
	own=-
	[ -n "${OWN[$k]:-}" ] && own="$(fmt_ms "$(med "${OWN[$k]}")") ms"
	c=${CALLS[$k]:-?}
	if [ "$c" = "$n" ]; then
		cc="all ($(fmt_int "$n"))"
	elif [ "$c" = "?" ]; then
		cc="?"
	else
		cc="$(fmt_int "$c") / $(fmt_int "$n")"
	fi
	note=
	[ -n "${ERR[$k]:-}" ] && note=" (a run failed: ${ERR[$k]//|/\\|})"
	[ -n "${R_NOTE[$k]:-}" ] && note="$note (${R_NOTE[$k]})"
	echo "| $(fmt_int "$n") | $label$note | $probes | $(fmt_ms "$rd") | $(fmt_ms "$dt") | $(fmt_ms "$tt") | $own | $cc |"
done
echo
# shellcheck disable=SC2016 # the backquotes are Markdown
echo "Globs: $(for n in $SIZES; do printf '`%s` (%s)  ' "$(glob_of "$n")" "${GLOB_N[$n]}"; done)"
echo

echo "### Goals"
echo
for tool in trace profile agent; do
	k=1000:$tool
	t=${TOTMED[$k]:-} extra=
	if [ -z "$t" ]; then
		v="n/a"
	elif [ "${CALLS[$k]:-?}" != 1000 ]; then
		v="MISS"
		extra=" (and not every call was counted)"
	elif awk -v t="$t" -v g="$GOAL_MS" 'BEGIN { exit !(t < g) }'; then
		v=PASS
	else
		v=MISS
	fi
	printf -- '- %s: 1,000 functions attach and detach in < %s ms in total, %s: %s\n' \
		"$v" "$GOAL_MS" "${LABEL[$tool]}" "${t:+$(fmt_ms "$t") ms}$extra"
done
for n in $SIZES; do
	a=${TOTMED[$n:trace]:-} b=${TOTMED[$n:bpftrace]:-}
	[ -n "$a" ] && [ -n "$b" ] &&
		printf -- '- %s functions: bpftrace takes %s× as long as cmon trace to attach and detach (%s vs %s ms).\n' \
			"$(fmt_int "$n")" "$(awk -v a="$a" -v b="$b" 'BEGIN { r = b / a; printf (r < 10 ? "%.1f" : "%.0f"), r }')" \
			"$(fmt_ms "$b")" "$(fmt_ms "$a")"
done
echo
echo "Total time: $(($(date +%s) - START)) s."
[ $FAILED = 0 ] || echo "bench_attach: some runs failed (see above)" >&2
exit $FAILED
