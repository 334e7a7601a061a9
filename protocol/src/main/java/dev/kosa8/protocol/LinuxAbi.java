package dev.kosa8.protocol;

import java.util.Locale;

/**
 * The numbers of Linux's system-call interface that kosa8 passes to the
 * kernel itself (open flags, system-call numbers, ioctl requests, structure
 * sizes), per architecture: the host's folder server and checkpoint code and
 * the guest's agent each take {@link #current()}, so neither carries one
 * architecture's values into another. Several differ between x86-64 and
 * arm64 (arm64 uses the generic table; x86-64 its own): {@code O_DIRECTORY},
 * {@code O_NOFOLLOW}, {@code O_DIRECT} and {@code O_LARGEFILE} are four
 * octal bits in another order, so x86-64's {@code O_DIRECT} is arm64's
 * {@code O_DIRECTORY}; {@code getdents64} is 217 on x86-64 and 61 on arm64.
 * Every value of both tables is checked against each architecture's own C
 * headers by compiling static assertions with its compiler
 * ({@code LinuxAbiTest}), so the table cannot drift from the kernel's.
 *
 * <p>9P's Tlopen and Tlcreate carry flags in their own wire encoding
 * ({@code P9_DOTL_*}, x86-64's values whatever the architecture); the folder
 * server translates them to the host's with {@link #fromDotl(int)}.
 */
public record LinuxAbi(String arch, int oDirect, int oLargefile, int oDirectory, int oNofollow, int oTmpfile,
                       long sysGetdents64, long sysOpenat2, long sysUserfaultfd) {
    // the same on both (asm-generic/fcntl.h; x86-64 does not override them)
    public static final int O_RDONLY = 0, O_WRONLY = 01, O_RDWR = 02, O_CREAT = 0100, O_EXCL = 0200;
    public static final int O_NOCTTY = 0400, O_TRUNC = 01000, O_APPEND = 02000, O_NONBLOCK = 04000;
    public static final int O_DSYNC = 010000, O_NOATIME = 01000000, O_CLOEXEC = 02000000;
    public static final int O_SYNC = 04010000, O_PATH = 010000000;
    /** asm-generic/ioctls.h, which both use. */
    public static final long TIOCSWINSZ = 0x5414, FIONREAD = 0x541B;
    /** {@code _IOW(0x94, 9, int)}, as both encode {@code _IOW} (linux/fs.h). */
    public static final long FICLONE = 0x40049409L;
    /** lseek's whence for the next data and the next hole (a file's sparse runs), and fallocate's errno-free mode. */
    public static final int SEEK_DATA = 3, SEEK_HOLE = 4;
    /** The errno values kosa8 tells apart, the same on both (asm-generic/errno-base.h, errno.h). */
    public static final int ENXIO = 6, ENOSPC = 28, ENOSYS = 38, EOPNOTSUPP = 95;
    /**
     * The structures the folder server reads and writes, the same size on both (arm64's generic statfs and
     * flock are laid out as x86-64's): statx, statfs (its fields read at 8-byte steps from 0 to 64), flock
     * ({@code l_type} at 0, {@code l_start} 8, {@code l_len} 16, {@code l_pid} 24) and openat2's open_how.
     */
    public static final int STATX_SIZE = 256, STATFS_SIZE = 120, FLOCK_SIZE = 32, OPEN_HOW_SIZE = 24;

    public static final LinuxAbi X86_64 = new LinuxAbi("x86_64", 040000, 0100000, 0200000, 0400000, 020200000,
            217, 437, 323);
    public static final LinuxAbi AARCH64 = new LinuxAbi("aarch64", 0200000, 0400000, 040000, 0100000, 020040000,
            61, 437, 282);

    private static final LinuxAbi CURRENT = of(System.getProperty("os.arch", ""));

    /** The table of the architecture this JVM runs on. */
    public static LinuxAbi current() {
        return CURRENT;
    }

    /** The table of a JVM {@code os.arch} ({@code amd64}, {@code x86_64}, {@code aarch64}, {@code arm64}). */
    public static LinuxAbi of(String osArch) {
        return switch (osArch.toLowerCase(Locale.ROOT)) {
            case "amd64", "x86_64" -> X86_64;
            case "aarch64", "arm64" -> AARCH64;
            // a table made up for another architecture would pass wrong flags to open(2); nothing is better
            default -> new LinuxAbi("unsupported:" + osArch, 0, 0, 0, 0, 0, -1, -1, -1);
        };
    }

    /** Whether kosa8 has this architecture's numbers. */
    public boolean supported() {
        return !arch.startsWith("unsupported:");
    }

    // 9P2000.L's open flags on the wire (include/net/9p/9p.h, P9_DOTL_*)
    public static final int DOTL_DIRECT = 040000, DOTL_LARGEFILE = 0100000, DOTL_DIRECTORY = 0200000;
    public static final int DOTL_NOFOLLOW = 0400000, DOTL_SYNC = 04000000;

    /**
     * 9P's open flags as this architecture's: the flags both encodings place alike are kept as they are (the
     * access mode, create, exclusive, truncate, append, non-blocking, dsync, no-atime, close-on-exec), the four
     * that move are moved, and {@code P9_DOTL_SYNC} becomes {@code O_SYNC}. Bits 9P does not define are dropped.
     */
    public int fromDotl(int dotl) {
        int same = 03 | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC | O_NOATIME
                | O_CLOEXEC;
        int out = dotl & same;
        out |= (dotl & DOTL_DIRECT) != 0 ? oDirect : 0;
        out |= (dotl & DOTL_LARGEFILE) != 0 ? oLargefile : 0;
        out |= (dotl & DOTL_DIRECTORY) != 0 ? oDirectory : 0;
        out |= (dotl & DOTL_NOFOLLOW) != 0 ? oNofollow : 0;
        out |= (dotl & DOTL_SYNC) != 0 ? O_SYNC : 0;
        return out;
    }
}
