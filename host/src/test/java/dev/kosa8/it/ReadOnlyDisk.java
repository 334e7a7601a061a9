package dev.kosa8.it;

/**
 * The guest's attempts to write a disk QEMU gives it read-only (the workspace's read window, the network window), as
 * root: the shell script that makes them, and what its output says when every one is refused.
 */
final class ReadOnlyDisk {
    /** What {@link #writeAttempts} prints when it found the disk and every write was refused. */
    static final String[] ALL_REFUSED = {"window=/dev/vd", "refused-direct", "refused-buffered", "refused-after-setrw"};

    private ReadOnlyDisk() {
    }

    /**
     * A script that finds the disk with serial {@code serial} and writes 64 KiB of random bytes to it: with O_DIRECT,
     * through the page cache with an fsync, and with O_DIRECT again after {@code blockdev --setrw}.
     */
    static String writeAttempts(String serial) {
        return "for d in /sys/block/*; do [ \"$(cat $d/serial 2>/dev/null)\" = " + serial
                + " ] && w=/dev/${d##*/}; done; echo window=$w;"
                + " head -c 65536 /dev/urandom > /tmp/junk; dd if=/tmp/junk of=$w bs=4096 count=16 conv=notrunc"
                + " oflag=direct 2>&1 || echo refused-direct; dd if=/tmp/junk of=$w bs=4096 count=16 conv=fsync 2>&1"
                + " || echo refused-buffered; blockdev --setrw $w 2>&1; dd if=/tmp/junk of=$w bs=4096 count=16"
                + " oflag=direct 2>&1 || echo refused-after-setrw";
    }
}
