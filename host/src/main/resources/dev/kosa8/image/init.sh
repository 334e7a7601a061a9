#!/bin/busybox sh
# kosa8 guest init: PID 1 inside the initramfs.
#
# Loads the kernel modules the guest needs, mounts the root disk and the
# usual file systems under /newroot, puts the agent in /newroot/run/kosa8 and
# switches to the root disk with tini as PID 1 running the agent.
#
# With kosa8.probe=1 on the kernel command line it only prints KOSA8-PROBE-OK
# and powers off: the host's accelerator probe boots this to see whether the
# guest reaches user space at all.
#
# Any failure prints one line starting with KOSA8-INIT-FAILED: and powers off,
# so the host sees a clear error instead of a hung guest.
#
# QEMU must run with -no-reboot: where poweroff cannot work, the guest reboots
# instead, and -no-reboot turns that (and the reboot of panic=-1) into an exit.

BB=/bin/busybox

stop_vm() {
    $BB sync
    # Power-off needs ACPI (microvm has it unless acpi=off); without it the
    # kernel would only halt and QEMU would run on, so reboot instead.
    if [ -d /sys/firmware/acpi ]; then $BB poweroff -f; fi
    $BB reboot -f
    exit 1 # PID 1 exiting panics the kernel; panic=-1 reboots it
}

fail() {
    $BB echo "KOSA8-INIT-FAILED: $*" > /dev/console
    stop_vm
}

$BB mount -t proc -o nosuid,nodev,noexec proc /proc || fail "mount /proc"
$BB mount -t sysfs -o nosuid,nodev,noexec sysfs /sys || fail "mount /sys"
$BB mount -t devtmpfs -o nosuid,mode=0755 devtmpfs /dev || fail "mount devtmpfs on /dev"
$BB --install -s /bin || fail "busybox --install"
export PATH=/bin

hostname=sandbox
probe=0
net=0
ca=""
mmio=""
for word in $(cat /proc/cmdline); do
    case "$word" in
        kosa8.probe=1) probe=1 ;;
        kosa8.hostname=?*) hostname="${word#kosa8.hostname=}" ;;
        kosa8.net=1) net=1 ;;
        kosa8.ca=?*) ca="${word#kosa8.ca=}" ;;
        virtio_mmio.device=*) mmio="$mmio device=${word#virtio_mmio.device=}" ;;
    esac
done

if [ "$probe" = 1 ]; then
    echo "KOSA8-PROBE-OK" > /dev/console
    stop_vm
fi

while read -r module; do
    [ -n "$module" ] || continue
    if [ "$module" = virtio_mmio ]; then params="$mmio"; else params=""; fi
    # $params is split into words on purpose: one device= per virtio-mmio device.
    if [ "$module" = kosa8_ws9p ]; then
        # the workspace's own 9p transport: without it the agent relays, slower but the same
        insmod "/lib/modules/$module.ko" || echo "kosa8: insmod $module failed; the workspace goes through the relay" > /dev/console
        continue
    fi
    insmod "/lib/modules/$module.ko" $params || fail "insmod $module"
done < /lib/modules/order

# The root disk: the one whose serial number is kosa8-root where the machine gives it one (an arm64 guest's
# virt machine, whose disks the kernel may number in another order), else the first disk, /dev/vda (microvm)
root_disk() {
    for serial in /sys/block/vd*/serial; do
        [ -f "$serial" ] || continue
        if [ "$(cat "$serial")" = kosa8-root ]; then
            disk="${serial%/serial}"
            echo "/dev/${disk##*/}"
            return
        fi
    done
    # (a sysfs file's size says nothing of its content: read it)
    [ -b /dev/vda ] && [ -z "$(cat /sys/block/vda/serial 2>/dev/null)" ] && echo /dev/vda
}
tries=0
root=$(root_disk)
while [ -z "$root" ] || [ ! -b "$root" ]; do
    tries=$((tries + 1))
    [ "$tries" -le 50 ] || fail "no root disk after 5 s (is a virtio-blk device attached?)"
    sleep 0.1
    root=$(root_disk)
done

mount -t ext4 -o rw "$root" /newroot || fail "mount $root (ext4) on /newroot"
# An imported image's disk holds the image's root in /rootfs and kosa8's own files (the agent's Java runtime
# and its C library) in /kosa8: the root becomes /, and kosa8's files are mounted apart, read-only, at
# /run/kosa8/sys, so nothing of the image (its libc, its shell, its tools) is needed and the image cannot
# replace them. kosa8's own Debian image is the disk's root itself.
split=0
if [ -f /newroot/kosa8/layout ] && [ -d /newroot/rootfs ]; then
    split=1
    mkdir -p /disk || fail "mkdir /disk"
    mount --move /newroot /disk || fail "move the disk to /disk"
    mount --bind /disk/rootfs /newroot || fail "mount the image's root (/rootfs of $root) on /newroot"
    mkdir -p /newroot/run /newroot/tmp /newroot/dev /newroot/proc /newroot/sys /newroot/etc \
        || fail "make the image's /run, /tmp, /dev, /proc, /sys, /etc"
fi
mount -t tmpfs -o nosuid,nodev,mode=0755 tmpfs /newroot/run || fail "mount tmpfs on /run"
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /newroot/tmp || fail "mount tmpfs on /tmp"
mkdir -p /newroot/run/kosa8 || fail "mkdir /run/kosa8"
cp /kosa8/agent.jar /kosa8/kosa8-agent /kosa8/kosa8-guest /newroot/run/kosa8/ || fail "copy the agent to /run/kosa8"
chmod 0755 /newroot/run/kosa8/kosa8-agent /newroot/run/kosa8/kosa8-guest || fail "chmod /run/kosa8/kosa8-agent"
if [ "$split" = 1 ]; then
    mkdir -p /newroot/run/kosa8/sys || fail "mkdir /run/kosa8/sys"
    mount --bind /disk/kosa8 /newroot/run/kosa8/sys || fail "mount kosa8's files on /run/kosa8/sys"
    mount -o remount,bind,ro /newroot/run/kosa8/sys || fail "make /run/kosa8/sys read-only"
    cp /bin/busybox /newroot/run/kosa8/busybox || fail "copy busybox to /run/kosa8"
    # the shell the agent's user switch runs through (busybox su -s: agent/UserSwitch.java)
    ln -s busybox /newroot/run/kosa8/sh || fail "link /run/kosa8/sh"
fi

hostname "$hostname" || fail "set the host name $hostname"
echo "$hostname" > /newroot/etc/hostname || fail "write /etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$hostname" \
    > /newroot/etc/hosts || fail "write /etc/hosts"
ip link set lo up || fail "bring up the loopback interface"

# The network: no network device at all. The broker's address 10.0.2.100 is on the loopback interface, where the
# agent listens (DNS over TCP on 53, HTTP on 80, TLS on 443, the proxy on 3128) and carries each connection over a
# virtio-serial port of its own to the broker in the daemon; there is no route anywhere else. Everything the guest
# writes here is convenience for its programs, not enforcement: deleting it opens nothing, because the guest has
# no way out but that port, and the broker decides.
mkdir -p /newroot/etc/kosa8 /newroot/etc/profile.d || fail "mkdir /etc/kosa8"
rm -f /newroot/etc/resolv.conf
if [ "$net" = 1 ]; then
    ip addr add 10.0.2.100/32 dev lo || fail "add the broker's address 10.0.2.100 to the loopback interface"
    printf 'nameserver 10.0.2.100\noptions use-vc timeout:5 attempts:2\n' > /newroot/etc/resolv.conf \
        || fail "write /etc/resolv.conf"
    # The sandbox's CA certificate (its key never leaves the host): the broker presents leaves it signed for
    # the hosts whose requests it reads, so every client here must trust it. It joins the system bundle
    # (rebuilt from the image's own bundle at each boot) and the variables clients read.
    bundle=/newroot/etc/ssl/certs/ca-certificates.crt
    if [ -n "$ca" ]; then
        { echo "-----BEGIN CERTIFICATE-----"; echo "$ca" | fold -w 64; echo "-----END CERTIFICATE-----"; } \
            > /newroot/etc/kosa8/ca.pem || fail "write /etc/kosa8/ca.pem"
        mkdir -p /newroot/usr/local/share/ca-certificates || fail "mkdir /usr/local/share/ca-certificates"
        cp /newroot/etc/kosa8/ca.pem /newroot/usr/local/share/ca-certificates/kosa8-sandbox.crt \
            || fail "copy the CA to /usr/local/share/ca-certificates"
        if [ "$split" = 1 ] && [ ! -f "$bundle" ] && [ ! -f /newroot/etc/kosa8/system-ca.crt ]; then
            # an imported image without a CA bundle: only the variables' PEM holds the sandbox CA
            echo "kosa8: the image has no $bundle; the sandbox CA is only in /etc/kosa8/ca.pem" > /dev/console
        else
            [ -f /newroot/etc/kosa8/system-ca.crt ] || cp "$bundle" /newroot/etc/kosa8/system-ca.crt \
                || fail "keep the image's CA bundle"
            cat /newroot/etc/kosa8/system-ca.crt /newroot/etc/kosa8/ca.pem > "$bundle.kosa8" && mv "$bundle.kosa8" "$bundle" \
                || fail "add the sandbox CA to $bundle"
        fi
    fi
    proxy=http://10.0.2.100:3128
    {
        for v in HTTP_PROXY HTTPS_PROXY http_proxy https_proxy; do echo "$v=$proxy"; done
        echo "NO_PROXY=localhost,127.0.0.1,::1"
        echo "no_proxy=localhost,127.0.0.1,::1"
        if [ -n "$ca" ]; then
            for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE GIT_SSL_CAINFO CURL_CA_BUNDLE; do echo "$v=/etc/ssl/certs/ca-certificates.crt"; done
            echo "NODE_EXTRA_CA_CERTS=/etc/kosa8/ca.pem"
        fi
    } > /newroot/etc/kosa8/exec.env || fail "write /etc/kosa8/exec.env"
    sed 's/^/export /' /newroot/etc/kosa8/exec.env > /newroot/etc/profile.d/kosa8-proxy.sh \
        || fail "write /etc/profile.d/kosa8-proxy.sh"
else
    echo "# this sandbox has no network" > /newroot/etc/resolv.conf || fail "write /etc/resolv.conf"
    rm -f /newroot/etc/kosa8/exec.env /newroot/etc/profile.d/kosa8-proxy.sh
fi

mount --move /dev /newroot/dev || fail "move /dev to the root disk"
mkdir -p /newroot/dev/pts /newroot/dev/shm || fail "mkdir /dev/pts /dev/shm"
mount -t devpts -o nosuid,noexec,gid=5,mode=0620,ptmxmode=0666 devpts /newroot/dev/pts || fail "mount devpts"
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /newroot/dev/shm || fail "mount tmpfs on /dev/shm"
mount --move /sys /newroot/sys || fail "move /sys to the root disk"
mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /newroot/sys/fs/cgroup || fail "mount cgroup2"
mount --move /proc /newroot/proc || fail "move /proc to the root disk"
if [ "$split" = 1 ]; then
    # PID 1 is kosa8's busybox shell: it starts the agent and, while it runs, reaps every process that ends
    # orphaned (ash's wait collects any child); when the agent ends, so does the guest, as under tini.
    exec switch_root /newroot /run/kosa8/busybox sh -c \
        '/run/kosa8/busybox sh /run/kosa8/kosa8-agent & agent=$!; trap "kill -TERM $agent" TERM INT; while /run/kosa8/busybox kill -0 $agent 2>/dev/null; do wait; done'
fi
[ -x /newroot/usr/bin/tini ] || fail "the root disk has no /usr/bin/tini"

exec switch_root /newroot /usr/bin/tini -s -- /run/kosa8/kosa8-agent
fail "switch_root to $root"
