#!/bin/busybox sh
# /init of the guest's initramfs (busybox): load the 9p modules the kernel
# package keeps out of its image, mount the host's root read-only and the
# writable work share, chroot into the host's root and run the job the host
# left in the work share (job.sh), then power off.  The job's exit status
# is written to the work share: the host reads it there (qemu's own exit
# status says only that the guest stopped).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules.order); do
	insmod "/modules/$m.ko" || echo "cmon-vm: insmod $m failed"
done
mkdir -p /host
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 host /host ||
	{ echo "cmon-vm: cannot mount the host's root"; poweroff -f; }
# The chroot's writable places: tmpfs on /tmp, then the work share in it.
mount -t tmpfs -o mode=1777,size=1200m tmp /host/tmp
mkdir -p /host/tmp/cmon-vm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 work /host/tmp/cmon-vm ||
	{ echo "cmon-vm: cannot mount the work share"; poweroff -f; }
cwd=$(cat /host/tmp/cmon-vm/cwd)
case $cwd in /tmp/*)
	mkdir -p "/host$cwd"
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 cwd "/host$cwd" ||
		{ echo "cmon-vm: cannot mount the checkout $cwd"; poweroff -f; } ;;
esac
mount -t tmpfs -o mode=755 run /host/run
mount --move /proc /host/proc
mount --move /sys /host/sys
mount --move /dev /host/dev
mount -t devpts devpts /host/dev/pts 2>/dev/null
mount -t tmpfs -o mode=1777 shm /host/dev/shm 2>/dev/null
mount -t bpf bpf /host/sys/fs/bpf
mount -t tracefs tracefs /host/sys/kernel/tracing
mount -t debugfs debugfs /host/sys/kernel/debug
mount -t securityfs securityfs /host/sys/kernel/security
mount -t tmpfs cgroup /host/sys/fs/cgroup && mkdir -p /host/sys/fs/cgroup/unified &&
	mount -t cgroup2 cgroup2 /host/sys/fs/cgroup/unified
ifconfig lo 127.0.0.1 up
hostname cmon-vm
chroot /host /usr/bin/env -i PATH="$(cat /host/tmp/cmon-vm/path)" TERM=dumb /bin/sh -c 'cd "$(cat /tmp/cmon-vm/cwd)" && sh /tmp/cmon-vm/job.sh'
echo $? >/host/tmp/cmon-vm/rc
sync
poweroff -f
