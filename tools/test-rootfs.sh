#!/bin/sh
# A Debian root filesystem for the container tests (test_containers.py),
# made once with debootstrap and kept between runs outside the build tree
# (CI caches the directory).  Prints its path.
#   tools/test-rootfs.sh [DIR]   default /var/cache/cmon-test/rootfs-bookworm
# CMON_DEBIAN_MIRROR overrides the mirror (default deb.debian.org).
set -eu
dir=${1:-/var/cache/cmon-test/rootfs-bookworm}
mirror=${CMON_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ ! -x "$dir/bin/sh" ]; then
	command -v debootstrap >/dev/null 2>&1 || {
		echo "test-rootfs: no debootstrap (apt-get install debootstrap)" >&2
		exit 1
	}
	mkdir -p "$(dirname "$dir")"
	# One maker at a time; the directory appears whole (made beside, renamed).
	exec 9>"$dir.lock"
	flock 9
	if [ ! -x "$dir/bin/sh" ]; then
		rm -rf "$dir.tmp"
		debootstrap --variant=minbase bookworm "$dir.tmp" "$mirror" >"$dir.log" 2>&1 || {
			echo "test-rootfs: debootstrap failed (see $dir.log)" >&2
			exit 1
		}
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	fi
fi
echo "$dir"
