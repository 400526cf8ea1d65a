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
names=$(grep -v '^#' "$here/subset" | tr '\n' ' ')
# Where the guest cannot be had, each test is skipped by name, with why.
skip_all() {
	for n in $names; do echo "skipped $n@older-kernel: $1"; done
	echo "0 passed, 0 failed, $(echo $names | wc -w) skipped"
	exit 0
}
if ! command -v qemu-system-x86_64 >/dev/null 2>&1 || ! command -v busybox >/dev/null 2>&1; then
	skip_all "qemu-system-x86 or busybox-static missing (tools/install-deps.sh test)"
fi
# The kernel package (downloaded once, then cached): vm.sh exits 2 when it
# can be neither downloaded nor found in the cache.
if ! why=$("$here/vm.sh" --fetch 2>&1); then
	skip_all "no kernel to boot: $(echo "$why" | tail -n 1)"
fi
# The runner's per-test timeout: the guest is emulated (no KVM), ~10-30x
# slower than the host.
# shellcheck disable=SC2086
CMON_IT_TIMEOUT=${CMON_VM_TEST_TIMEOUT:-900} CMON_IT_TIME_SCALE=${CMON_IT_TIME_SCALE:-15} OUT=$OUT "$here/vm.sh" sh -c \
	'CMON_IT_SUFFIX="@$(uname -r)" exec python3 tests/integration/run.py --exact "$@"' sh $names
