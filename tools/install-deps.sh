#!/bin/sh
# Install the Debian packages cmon builds, tests and benchmarks with, when
# any is missing.  Called by `make deps` (and so by `make demo`/`make test`).
# `check`: install nothing, name the missing build packages (plain `make`
# runs it first, so a fresh machine hears what to install, not a compiler
# error about bpf/bpf_helpers.h).
set -eu
group=${1:-build}
check=
if [ "$group" = check ]; then
	check=1
	group=build
	command -v dpkg-query >/dev/null 2>&1 || exit 0 # not Debian: cannot tell
fi
pkgs="clang llvm gcc g++ make pkg-config libbpf-dev bpftool libelf-dev libdw-dev
zlib1g-dev liblzma-dev libiberty-dev libcapstone-dev libcmocka-dev python3 libyaml-dev libmicrohttpd-dev
libcurl4-openssl-dev libsqlite3-dev libjansson-dev liblz4-dev libdebuginfod-dev libcsv-dev"
case "$group" in
bench) # bcc compiles against kernel headers: without the running kernel's,
	# bench_profile.sh builds a tree from Debian's linux-headers-amd64
	pkgs="$pkgs bpftrace bpfcc-tools libbpf-tools redis-server redis-tools"
	if [ ! -e "/lib/modules/$(uname -r)/build" ] && [ "$(dpkg --print-architecture)" = amd64 ] &&
		! ls -d /usr/src/linux-headers-*-amd64 >/dev/null 2>&1; then
		pkgs="$pkgs linux-headers-amd64"
	fi ;;
man) # `make man`/`make install`: the man pages are built from docs/ by go-md2man
	pkgs="$pkgs go-md2man" ;;
test) # chromium: test_report.py renders the HTML report headless; pandas:
	# test_csv.py loads the CSVs as a notebook would; USDT:
	# <sys/sdt.h> for tests/targets/usdt.c, and Debian's python3.11's own probes;
	# golang-go builds tests/targets/gowork.go; strace counts cmon's map walks; dwz
	# makes the Debian -dbgsym shape of DWARF (test_debugformats.py); go-md2man
	# the man pages test_manual.py installs; xz packs
	# the unit tests' MiniDebugInfo fixture (not in a minimal Debian); rustc
	# (1.63) builds test_rust.py's programs; libc6-dbg names the implementations
	# libc's IFUNCs pick (local symbols: test_programs.py); debuginfod serves
	# split debug files, podman/runc/conmon/debootstrap run containers
	# (test_debuginfod.py, test_containers.py); clickhouse-server takes the
	# records of test_clickhouse.py; python3-yaml reads the DaemonSet of
	# test_fleet.py; qemu and busybox boot Debian's own older kernel for
	# tests/kernels/run.sh
	pkgs="$pkgs prometheus python3-numpy python3-pandas chromium systemtap-sdt-dev python3.11 python3-pygments golang-go strace dwz
xz-utils rustc libc6-dbg debuginfod podman runc conmon debootstrap python3-yaml clickhouse-server
qemu-system-x86 busybox-static go-md2man" ;;
fuzz) # `make fuzz`: clang's libFuzzer and sanitizer runtimes
	pkgs="$pkgs libclang-rt-14-dev" ;;
esac
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ -n "$check" ]; then
	echo "cmon: missing build packages:$missing; \`make deps\` installs them (as root)" >&2
	exit 1
fi
echo "installing:$missing" >&2
if [ "$(id -u)" != 0 ]; then
	echo "cmon: missing packages:$missing (run as root, or apt-get install them)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
