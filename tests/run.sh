#!/bin/sh
# The README's test command runs this (through `make test`): every cmocka
# unit test, plain and built with AddressSanitizer and UBSan (OUT/san), then
# the integration tests that attach for real, then one closing line
# "N passed, N failed".
set -u
OUT=${OUT:-build}
export CMON_FIXTURES=${CMON_FIXTURES:-$OUT/tests/fixtures}
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

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

if [ "$(id -u)" = 0 ]; then
	OUT=$OUT python3 tests/integration/run.py >"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$log" | tail -n 1)
	if [ -z "$p" ]; then
		echo "FAIL integration: runner exited $rc without a summary"
		p=0
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
else
	echo "integration tests need root (they attach probes): not run"
	failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
