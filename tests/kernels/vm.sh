#!/bin/sh
# Run a command on Debian's own kernel (linux-image-amd64: 6.1 on Debian 12)
# in a qemu guest whose root is this machine's, shared read-only over 9p:
#
#     tests/kernels/vm.sh COMMAND [ARG...]
#     tests/kernels/vm.sh --fetch      # only the kernel: exit 2 if none can be had
#
# COMMAND runs as root in the current directory (read-only there, as all of
# the host's files are; /tmp is the guest's own), with the host's PATH, HOME,
# OUT, CI and CMON_* variables; its output streams to stdout and its
# exit status is vm.sh's.  The kernel package is downloaded once (apt-get
# download) and kept, unpacked, under $CMON_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/cmon), outside any build tree, so later
# runs and CI reruns on the same machine boot at once.
#
# Environment: CMON_VM_KERNEL (a linux-image package name; default the one
# linux-image-amd64 depends on), CMON_VM_TIMEOUT (seconds, default 1800),
# CMON_VM_MEM (MiB, default 2048).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${CMON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cmon}/kernels
mkdir -p "$cache"

# The package: the one Debian's linux-image-amd64 names now, else the
# newest kept (no network: what was fetched before still boots).
pkg=${CMON_VM_KERNEL:-}
if [ -z "$pkg" ]; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
	if [ -z "$pkg" ] && [ "$(id -u)" = 0 ] && ! ls "$cache"/*/vmlinuz >/dev/null 2>&1; then
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
	fi
	[ -n "$pkg" ] || pkg=$(ls -t "$cache" 2>/dev/null | head -n 1)
fi
[ -n "$pkg" ] || { echo "cmon-vm: no kernel package (linux-image-amd64 unknown to apt, none cached)" >&2; exit 2; }
kdir=$cache/$pkg
if [ ! -e "$kdir/vmlinuz" ]; then
	dl=$(mktemp -d "${TMPDIR:-/tmp}/cmon-vm-dl.XXXXXX")
	chmod 755 "$dl" # apt's _apt user writes the download
	echo "cmon-vm: downloading $pkg (kept in $cache)" >&2
	(cd "$dl" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
		{ rm -rf "$dl"; echo "cmon-vm: cannot download $pkg" >&2; exit 2; }
	rm -rf "$kdir.new" && mkdir -p "$kdir.new"
	dpkg-deb -x "$dl"/*.deb "$dl/x"
	cp "$dl"/x/boot/vmlinuz-* "$kdir.new/vmlinuz"
	cp -r "$dl"/x/lib/modules/* "$kdir.new/modules"
	rm -rf "$dl" "$kdir" && mv "$kdir.new" "$kdir"
fi

# --fetch: only the kernel, downloaded or found in the cache.
[ "${1:-}" = --fetch ] && exit 0

work=$(mktemp -d "${TMPDIR:-/tmp}/cmon-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# The initramfs: busybox, the modules that 9p over virtio needs (in
# dependency order, read from each module's own "depends=" field), /init.
root=$work/initramfs
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/modules"
cp "$(command -v busybox)" "$root/bin/busybox"
cp "$here/init.sh" "$root/init"
chmod 755 "$root/init"
kofind() { find "$kdir/modules" -name "$1.ko" | head -n 1; }
order=
add() {
	local f d
	case " $order " in *" $1 "*) return ;; esac
	f=$(kofind "$1")
	[ -n "$f" ] || return 0 # built into the image
	for d in $(strings "$f" | sed -n 's/^depends=//p' | tr ',' ' '); do
		add "$d"
	done
	cp "$f" "$root/modules/$1.ko"
	order="$order $1"
}
for m in virtio_pci 9pnet_virtio 9p; do add "$m"; done
echo $order | tr ' ' '\n' >"$root/modules.order"
(cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initrd"

mkdir -p "$work/share"
pwd >"$work/share/cwd"
echo "$PATH" >"$work/share/path"
{
	echo 'exec 2>&1'
	printf '%s' 'exec'
	for a in "$@"; do printf " '%s'" "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")"; done
	echo
} >"$work/share/job.sh"
env | grep -E '^(OUT|CMON_[A-Z_]*|CI|V|HOME|PYENV_ROOT|PYENV_VERSION)=' | sed "s/^\([^=]*\)=\(.*\)$/export \1='\2'/" |
	grep -v '^export CMON_VM_' >"$work/share/env"
sed -i '1i . /tmp/cmon-vm/env' "$work/share/job.sh"

# A checkout under /tmp is hidden by the guest's own /tmp: shared on its own
# (read-only, as the host's root is), mounted back at its path by init.sh.
cwdshare=
case $(pwd) in
/tmp/*,* | /tmp/*" "*) echo "cmon-vm: a checkout under /tmp needs a path without commas or spaces" >&2; exit 2 ;;
/tmp/*) cwdshare="-virtfs local,path=$(pwd),mount_tag=cwd,readonly=on,multidevs=remap,security_model=none" ;;
esac

# shellcheck disable=SC2086 # $cwdshare: two words or none
timeout "${CMON_VM_TIMEOUT:-1800}" qemu-system-x86_64 -machine q35 -accel tcg -cpu max \
	-m "${CMON_VM_MEM:-2048}" -smp 2 -nographic -no-reboot -nic none -vga none \
	-kernel "$kdir/vmlinuz" -initrd "$work/initrd" \
	-append "console=ttyS0 quiet panic=-1 loglevel=3" \
	-virtfs local,path=/,mount_tag=host,readonly=on,multidevs=remap,security_model=none \
	-virtfs "local,path=$work/share,mount_tag=work,multidevs=remap,security_model=none" \
	$cwdshare \
	</dev/null | tr -d '\r'
rc=$(cat "$work/share/rc" 2>/dev/null || echo 125)
[ "$rc" = 125 ] && echo "cmon-vm: the guest stopped before the command ended" >&2
exit "$rc"
