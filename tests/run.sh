#!/bin/sh
# The README's test command runs this (through `make test`): every cmocka
# unit test, plain and built with AddressSanitizer and UBSan (OUT/san), then
# the integration tests that attach for real, then a subset of them on
# Debian's own older kernel under qemu (tests/kernels/run.sh).  It ends with
# each skipped test and its reason, the duration, and one closing line
# "N passed, N failed, N skipped".
set -u
OUT=${OUT:-build}
export CMON_FIXTURES=${CMON_FIXTURES:-$OUT/tests/fixtures}
passed=0
failed=0
skipped=0
start=$(date +%s)
log=$(mktemp)
skips=$(mktemp)
trap 'rm -f "$log" "$skips"' EXIT

for t in "$OUT"/tests/test_* "$OUT"/san/tests/test_*; do
	[ -x "$t" ] || continue
	"$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAIL $t: exited $rc"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done

# An integration runner's output in $log: add its counts, keep its skips.
count_runner() {
	what=$1
	rc=$2
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $what: runner exited $rc without a summary"
		failed=$((failed + 1))
		return
	fi
	p=$(echo "$line" | sed 's/^\([0-9]*\) passed.*/\1/')
	f=$(echo "$line" | sed 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/')
	s=$(echo "$line" | sed -n 's/.*, \([0-9]*\) skipped.*/\1/p')
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + ${s:-0}))
	grep '^skipped ' "$log" >>"$skips"
}

if [ "$(id -u)" = 0 ]; then
	OUT=$OUT python3 tests/integration/run.py >"$log" 2>&1
	rc=$?
	cat "$log"
	count_runner integration "$rc"
	OUT=$OUT ./tests/kernels/run.sh >"$log" 2>&1
	rc=$?
	cat "$log"
	if grep -q '^older kernel: not run' "$log"; then
		:
	else
		count_runner "older kernel" "$rc"
	fi
else
	echo "integration tests need root (they attach probes): not run"
	failed=$((failed + 1))
fi

cat "$skips"
s=$(($(date +%s) - start))
printf 'make test took %dm%02ds\n' $((s / 60)) $((s % 60))
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
