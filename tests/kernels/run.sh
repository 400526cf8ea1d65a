#!/bin/sh
# `make test`'s older-kernel stage: the integration tests named in
# tests/kernels/subset, on Debian's own kernel (linux-image-amd64: 6.1 on
# Debian 12) booted under qemu (tests/kernels/vm.sh).  Output: the runner's
# lines, each test named "NAME@KERNEL", ending in its summary line.
#
# CMON_VM=0 skips the stage (one line saying so; `make test` counts nothing).
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-build}
if [ "${CMON_VM:-1}" = 0 ]; then
	echo "older kernel: not run (CMON_VM=0)"
	exit 0
fi
if ! command -v qemu-system-x86_64 >/dev/null 2>&1 || ! command -v busybox >/dev/null 2>&1; then
	echo "older kernel: qemu-system-x86 or busybox-static missing (tools/install-deps.sh test)"
	exit 1
fi
names=$(grep -v '^#' "$here/subset" | tr '\n' ' ')
# The runner's per-test timeout: the guest is emulated (no KVM), ~10-30x
# slower than the host.
# shellcheck disable=SC2086
CMON_IT_TIMEOUT=${CMON_VM_TEST_TIMEOUT:-900} CMON_IT_TIME_SCALE=${CMON_IT_TIME_SCALE:-15} OUT=$OUT "$here/vm.sh" sh -c \
	'CMON_IT_SUFFIX="@$(uname -r)" exec python3 tests/integration/run.py --exact "$@"' sh $names
