#!/bin/bash
# Debian's redis-server under redis-benchmark (SET and GET, 50 clients), its
# CPU per request untraced and with the return-probing tools side by side in
# one run (configurations interleaved run by run, median of BENCH_RUNS):
# bpftrace uprobe+uretprobe stats() on processCommand, cmon profile and cmon
# trace -F csv on it, then the same over 11 functions of the command path.
# Redis maps libstdc++ (through jemalloc): this is where cmon used to put
# every return on a single-stepped `ret` (issue 14).  A private port,
# nothing persisted.  Printed as Markdown.  A measurement, not a test.
#   OUT=build ./tools/bench/bench_redis.sh     (root; tools/bench.sh calls it)
# Environment: BENCH_REDIS_REQUESTS (default 100000 per test, two tests a
# run), BENCH_RUNS (5), BENCH_REDIS_PORT (16379).
set -u
# shellcheck source=tools/bench/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build}
OUT=$(cd "$OUT" && pwd)
CMON=${CMON:-$OUT/cmon}
N=${BENCH_REDIS_REQUESTS:-100000}
RUNS=${BENCH_RUNS:-5}
PORT=${BENCH_REDIS_PORT:-16379}

[ "$(id -u)" = 0 ] || { echo "bench_redis: needs root (uprobes)" >&2; exit 1; }
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
	{ echo "bench_redis: redis-server and redis-tools are not installed (make bench-deps)" >&2; exit 1; }
HAVE_BT=0
command -v bpftrace >/dev/null 2>&1 && HAVE_BT=1
BIN=$(readlink -f "$(command -v redis-server)")
PATHFUNCS="processCommand call lookupCommand processInputBuffer readQueryFromClient addReply
addReplyBulk setCommand getCommand getGenericCommand setGenericCommand"
tmp=$(mktemp -d /tmp/cmon-bench-redis.XXXXXX) || exit 1
RPID=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
redis-cli -p "$PORT" ping >/dev/null 2>&1 &&
	{ echo "bench_redis: port $PORT is in use (BENCH_REDIS_PORT)" >&2; exit 1; }
(cd "$tmp" && exec redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
	--dir "$tmp" --logfile "$tmp/redis.log") &
RPID=$!
for _ in $(seq 50); do
	redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
	sleep 0.1
done
redis-cli -p "$PORT" ping >/dev/null 2>&1 && kill -0 "$RPID" 2>/dev/null ||
	{ echo "bench_redis: redis-server did not start" >&2; exit 1; }

FAILED=0
declare -A US

cpu_ns() { # redis's CPU time so far, every thread, ns
	local t s=0
	for t in /proc/$RPID/task/*/schedstat; do
		read -r v _ <"$t" && s=$((s + v))
	done
	echo $s
}

wait_for() { # file pattern: until the tracer said it is attached (30 s)
	for _ in $(seq 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

bt_prog() { # functions... -> a bpftrace program: latency stats per function
	local u="" r="" f
	for f in "$@"; do
		u="$u${u:+,}uprobe:$BIN:$f"
		r="$r${r:+,}uretprobe:$BIN:$f"
	done
	echo "$u { @s[tid, func] = nsecs; } $r /@s[tid, func]/ { @lat[func] = stats(nsecs - @s[tid, func]); delete(@s[tid, func]); }"
}

one() { # config -> appends us/request to US[config]
	local cfg=$1 log=$tmp/tracer.log tpid= ready="" t0 t1 funcs
	# shellcheck disable=SC2086
	case $cfg in
	*_path) funcs=$PATHFUNCS ;;
	*) funcs=processCommand ;;
	esac
	rm -f "$log"
	case $cfg in
	untraced) ;;
	bt*) bpftrace -p "$RPID" -e "$(bt_prog $funcs)" >"$log" 2>&1 & tpid=$! ready="Attaching" ;;
	profile*) "$CMON" profile -p "$RPID" $(printf -- '--func %s ' $funcs) -F json \
		-o "$tmp/p.json" 2>"$log" & tpid=$! ready="attached" ;;
	trace*) "$CMON" trace -p "$RPID" $(printf -- '--func %s ' $funcs) -F csv \
		-o "$tmp/t.csv" 2>"$log" & tpid=$! ready="attached" ;;
	esac
	if [ -n "$tpid" ] && ! wait_for "$log" "$ready"; then
		echo "bench_redis: $cfg did not attach: $(tail -n 2 "$log" | tr '\n' ' ')" >&2
		kill -INT "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null
		FAILED=1
		return
	fi
	[ -n "$tpid" ] && sleep 1 # bpftrace says "Attaching" before it has
	t0=$(cpu_ns)
	redis-benchmark -p "$PORT" -t set,get -c 50 -n "$N" -q >"$tmp/rb.txt" 2>&1 || FAILED=1
	t1=$(cpu_ns)
	if [ -n "$tpid" ]; then
		kill -INT "$tpid" 2>/dev/null
		wait "$tpid" 2>/dev/null
	fi
	US[$cfg]="${US[$cfg]:-} $(awk -v d=$((t1 - t0)) -v n="$N" 'BEGIN { printf "%.3f", d / 1000 / (2 * n) }')"
}

CFGS="untraced profile trace profile_path trace_path"
[ $HAVE_BT = 1 ] && CFGS="$CFGS bt bt_path"
for ((r = 1; r <= RUNS; r++)); do
	echo "bench_redis: run $r/$RUNS" >&2
	for c in $CFGS; do one "$c"; done
done
med() { [ -n "${US[$1]:-}" ] && median ${US[$1]}; } # shellcheck disable=SC2086

echo "## redis-server (Debian $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'))"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), Linux $(uname -r), $(nproc) CPUs.  redis CPU per request (all"
echo "threads' run time / requests), \`redis-benchmark -t set,get -c 50 -n $(fmt_int "$N")\`, median of"
echo "$RUNS run(s), configurations interleaved.  Command path: $(echo $PATHFUNCS | wc -w) functions ($(echo $PATHFUNCS | tr '\n' ' ' | sed 's/ $//'))."
echo
echo "| configuration | µs/request | × untraced | × bpftrace (same functions) |"
echo "|---|---:|---:|---:|"
un=$(med untraced)
for c in untraced bt profile trace bt_path profile_path trace_path; do
	v=$(med "$c")
	[ -n "$v" ] || continue
	case $c in
	*_path) bt=$(med bt_path) what="the command path" ;;
	*) bt=$(med bt) what="processCommand" ;;
	esac
	case $c in
	untraced) l="untraced" ;;
	bt*) l="bpftrace uprobe+uretprobe \`stats()\`, $what" ;;
	profile*) l="cmon profile, $what" ;;
	trace*) l="cmon trace -F csv to a file, $what" ;;
	esac
	echo "| $l | $v | $(ratio "$v" "$un") | $([ -n "$bt" ] && [ "$c" != untraced ] && ratio "$v" "$bt" || echo -) |"
done
echo
exit $FAILED
