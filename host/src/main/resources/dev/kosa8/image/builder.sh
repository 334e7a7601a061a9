#!/kosa8/busybox sh
# kosa8 image builder: PID 1 of the builder VM (docs/image.md, "The builder VM").
#
# Builds the guest's root file system inside a guest, so the host needs neither
# mmdebstrap, apt, dpkg nor mke2fs, nor root: the host hands in one read-only
# disk holding a tar (the checked .debs as a flat repository, the
# files kosa8 adds, build.sh), a second holding the builder's own Debian (the
# data of minbase's packages and mmdebstrap's, as one tar), and two empty disks:
# the image's ext4 disk and a small one for what the host needs back.
#
#   1. unpack the builder's Debian into /b: unconfigured, enough to run
#      mmdebstrap;
#   2. chroot /b and run /in/build.sh (written by the host): mmdebstrap from the
#      flat repository into /b/target, kosa8's files, mke2fs -d onto the disk;
#   3. print KOSA8-BUILDER-OK and power off.
#
# Disks are found by their serial numbers, never by their order. Any failure
# prints one line starting with KOSA8-BUILDER-FAILED: and powers off; QEMU runs
# with -no-reboot, so a panic or reboot ends it too. With kosa8.probe=1 on the
# kernel command line it only prints KOSA8-PROBE-OK (the accelerator probe).

BB=/kosa8/busybox

stop_vm() {
    $BB sync
    if [ -d /sys/firmware/acpi ]; then $BB poweroff -f; fi
    $BB reboot -f
    exit 1
}

fail() {
    $BB echo "KOSA8-BUILDER-FAILED: $*" > /dev/console
    stop_vm
}

$BB mkdir -p /proc /sys /dev /tmp /bin
$BB mount -t proc -o nosuid,nodev,noexec proc /proc || fail "mount /proc"
$BB mount -t sysfs -o nosuid,nodev,noexec sysfs /sys || fail "mount /sys"
$BB mount -t devtmpfs -o nosuid,mode=0755 devtmpfs /dev || fail "mount devtmpfs on /dev"
$BB --install -s /bin || fail "busybox --install"
export PATH=/bin

for word in $(cat /proc/cmdline); do
    if [ "$word" = kosa8.probe=1 ]; then
        echo "KOSA8-PROBE-OK" > /dev/console
        stop_vm
    fi
done

while read -r module; do
    [ -n "$module" ] || continue
    insmod "/kosa8/modules/$module.ko" || fail "insmod $module"
done < /kosa8/modules/order

# the block device whose virtio serial number is $1, waiting up to 5 s for it
disk() {
    tries=0
    while :; do
        for d in /sys/block/vd*; do
            if [ -f "$d/serial" ] && [ "$(cat "$d/serial")" = "$1" ]; then
                echo "/dev/${d##*/}"
                return 0
            fi
        done
        tries=$((tries + 1))
        [ "$tries" -le 50 ] || return 1
        sleep 0.1
    done
}
ROOT=$(disk kosa8-builder-root) || fail "no builder disk (serial kosa8-builder-root)"
IN=$(disk kosa8-builder-in) || fail "no input disk (serial kosa8-builder-in)"
OUT=$(disk kosa8-builder-out) || fail "no image disk (serial kosa8-builder-out)"
BACK=$(disk kosa8-builder-back) || fail "no hand-back disk (serial kosa8-builder-back)"

echo "kosa8-builder: unpacking the builder and the input" > /dev/console
# the initramfs's own file system may take half the RAM; the builder's Debian, the input and the tree being
# built all live here until mke2fs writes the tree out
mkdir -p /b && mount -t tmpfs -o size=90%,mode=0755 tmpfs /b || fail "mount a tmpfs on /b"
tar -xf "$ROOT" -C /b || fail "unpack the builder's Debian from $ROOT"
mkdir -p /b/in /b/proc /b/sys /b/dev /b/tmp /b/target || fail "mkdir /b/..."
tar -xf "$IN" -C /b/in || fail "unpack the input disk $IN"
[ -f /b/in/build.sh ] || fail "the input disk has no build.sh"
mkdir -p /b/var/lib/dpkg/info /b/var/lib/dpkg/updates /b/var/lib/dpkg/triggers /b/var/lib/dpkg/alternatives \
    || fail "dpkg's folders"
[ -e /b/var/lib/dpkg/status ] || : > /b/var/lib/dpkg/status
[ -x /b/bin/sh ] || fail "the builder's Debian has no /bin/sh"

mount -t proc proc /b/proc || fail "mount /b/proc"
mount -t sysfs sysfs /b/sys || fail "mount /b/sys"
mount -t devtmpfs devtmpfs /b/dev || fail "mount /b/dev"
mkdir -p /b/dev/shm /b/dev/pts && mount -t tmpfs -o mode=1777 tmpfs /b/dev/shm || fail "mount /b/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs /b/tmp || fail "mount /b/tmp"

chroot /b /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LC_ALL=C.UTF-8 KOSA8_OUT="$OUT" KOSA8_BACK="$BACK" /bin/sh -e /in/build.sh > /dev/console 2>&1 \
    || fail "build.sh failed (its output is above)"
sync
echo "KOSA8-BUILDER-OK" > /dev/console
stop_vm
