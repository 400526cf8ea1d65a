#!/bin/bash
# The tests that compare timings with an untraced run (tests/integration,
# quiet_machine()): `make test` skips them by name, since a busy 2-CPU
# machine (another suite beside it) moves every figure; here, on the quiet
# machine a benchmark wants, they run with CMON_QUIET_MACHINE=1.  Prints
# Markdown: each test's line and the summary.  A failure is reported like
# any bench miss; the script exits non-zero only when they could not run.
#
#   OUT=build ./tools/bench/bench_quiet.sh     (root; tools/bench.sh calls it)
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build}
out=$(CMON_QUIET_MACHINE=1 OUT=$OUT python3 tests/integration/run.py test_latency test_list_cost 2>&1)
rc=$?
echo "## Timings checked on a quiet machine"
echo
echo '```'
echo "$out" | grep -E '^(ok|FAIL|skip) |passed, '
echo '```'
echo "$out" | grep -qE '^[0-9]+ passed, ' || exit 1
[ "$rc" -le 1 ] || exit "$rc"
exit 0
