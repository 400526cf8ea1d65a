#!/bin/sh
# `make demo` (or any make goals: `test`, ...) as the first command on a
# fresh Debian bookworm: a minimal root filesystem (debootstrap's minbase,
# plus make and ca-certificates: what running `make` at all takes), this
# tree's committed HEAD copied in, and the host's kernel with its /sys and
# /dev for the probes, in a mount namespace of its own (the mounts go with
# it).  The goals install what they miss (tools/install-deps.sh): a package
# left out of that list fails here, as on a new machine.  As root:
#
#     tools/fresh-machine.sh [GOAL...]     (default: demo)
#
# FRESH_CACHE (default ~/.cache/cmon): the minbase tarball, made once;
# FRESH_KEEP=1 keeps the root filesystem (its path is printed);
# FRESH_MAKEFLAGS (default -j2) for make.  Exits with make's status.
set -eu
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "fresh-machine.sh: run as root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "fresh-machine.sh: needs debootstrap" >&2; exit 1; }
[ $# -gt 0 ] || set -- demo
cache=${FRESH_CACHE:-$HOME/.cache/cmon}
base=$cache/bookworm-minbase.tar
if [ ! -s "$base" ]; then
	mkdir -p "$cache"
	tmp=$(mktemp -d /var/tmp/cmon-minbase.XXXXXX)
	debootstrap --variant=minbase --include=make,ca-certificates bookworm "$tmp" \
		http://deb.debian.org/debian >"$tmp.log" 2>&1 ||
		{ echo "fresh-machine.sh: debootstrap failed: $tmp.log" >&2; exit 1; }
	tar -C "$tmp" -cf "$base.part" . && mv "$base.part" "$base"
	rm -rf "$tmp" "$tmp.log"
fi
root=$(mktemp -d /var/tmp/cmon-fresh.XXXXXX)
chmod 755 "$root" # apt downloads as _apt
tar -C "$root" -xf "$base"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir "$root/src"
git archive HEAD | tar -C "$root/src" -x
echo "fresh-machine.sh: make $* in a fresh bookworm ($root)" >&2
status=0
# shellcheck disable=SC2016
unshare -m --propagation private sh -c '
	r=$1; shift
	mount -t proc proc "$r/proc"
	mount --rbind /sys "$r/sys"
	mount --rbind /dev "$r/dev"
	mount -t tmpfs tmpfs "$r/tmp"
	exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 MAKEFLAGS="$0" sh -c "cd /src && exec make \"\$@\"" make "$@"
' "${FRESH_MAKEFLAGS:--j2}" "$root" "$@" || status=$?
if [ "${FRESH_KEEP:-}" = 1 ]; then
	echo "fresh-machine.sh: kept $root" >&2
elif ! grep -q " $root/" /proc/mounts; then # never remove through a mount
	rm -rf "$root"
fi
exit "$status"
