#!/bin/sh
# Regenerate vmlinux/vmlinux.h from a kernel's BTF.  Run it deliberately and
# commit the result: the build never takes vmlinux.h from the build host.
# CO-RE relocations make the checked-in header valid on other kernels.
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
out=$(dirname "$0")/../vmlinux/vmlinux.h
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out from $btf ($(uname -r))"
