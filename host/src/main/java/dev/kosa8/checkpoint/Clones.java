package dev.kosa8.checkpoint;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.kosa8.host.NativeCall;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whole-file clones: {@code ioctl(dst, FICLONE, src)}, which makes {@code dst}
 * share {@code src}'s blocks, copy-on-write, on a file system that has
 * reflinks (XFS made with {@code reflink=1}, the default since xfsprogs 5.1;
 * Btrfs; bcachefs). A fork's folder and a rewound file then cost no new
 * space for what they share with the snapshot store, and take no time to
 * write: the same thing {@code cp --reflink=auto} does.
 *
 * <p>Where the file system has no reflinks (ext4, tmpfs), or the two files
 * are on different mounts (another file system, a bind mount, another Btrfs
 * subvolume), the call fails at once with {@code EOPNOTSUPP}, {@code EXDEV}
 * or {@code ENOTTY}, and the caller copies the bytes as before; that answer
 * is remembered, so a store that cannot clone does not ask for every file.
 * A full disk, a quota or an I/O error is the caller's to report, as a
 * write's would be. Any other refusal concerns that one file, which is
 * copied.
 *
 * <p>The clone is checked as a copy is: the caller reads the file it made
 * back and compares the hash, so a damaged object, or a clone the file
 * system made short, is found either way.
 */
final class Clones {
    /**
     * {@code _IOW(0x94, 9, int)} as x86-64 and arm64 encode it (powerpc, mips and sparc encode {@code _IOW}
     * otherwise: there the call fails with ENOTTY and every file is copied).
     */
    static final long FICLONE = 0x40049409L;
    private static final int EIO = 5, EXDEV = 18, ENOTTY = 25, ENOSPC = 28, ENOSYS = 38, EOPNOTSUPP = 95,
            EDQUOT = 122;

    private static final MethodHandle IOCTL = NativeCall.handle("ioctl", 2, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT);
    private static final int O_WRONLY = 01, O_CREAT = 0100, O_EXCL = 0200, O_CLOEXEC = 02000000, READ_ONLY = 0444;
    private static final MethodHandle OPEN = NativeCall.handle("open", 2, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);

    /** {@code KOSA8_NO_REFLINK=1} in the daemon's environment: always copy (to measure clones against copies). */
    private boolean unsupported = !NativeCall.AVAILABLE || "1".equals(System.getenv("KOSA8_NO_REFLINK"));

    /**
     * Makes {@code dstFd} (an empty file open for writing) a clone of {@code srcFd}. False, with nothing
     * changed, where this file system cannot clone between them; from then on false without asking.
     */
    boolean cloneInto(int dstFd, int srcFd) throws PosixException {
        if (unsupported) {
            return false;
        }
        try (Arena arena = Arena.ofConfined()) {
            NativeCall.call(arena, "ioctl", st -> (int) IOCTL.invokeExact(st, dstFd, FICLONE, srcFd), true,
                    errno -> new PosixException(errno, "ioctl FICLONE", ""));
            return true;
        } catch (PosixException e) {
            if (e.errno == EOPNOTSUPP || e.errno == EXDEV || e.errno == ENOTTY || e.errno == ENOSYS) {
                unsupported = true; // this file system, or this pair of mounts, has no clones: ask no more
                return false;
            }
            if (e.errno == ENOSPC || e.errno == EDQUOT || e.errno == EIO) {
                throw e; // a copy would fail the same way
            }
            // this file only (EINVAL for a Btrfs nodatacow file, EAGAIN for OpenZFS's dirty blocks, ETXTBSY for a
            // swap file, ...): it is copied, and the next is asked again
            return false;
        }
    }

    /**
     * Creates {@code dst} (a new name; read-only, as objects are) as a clone of {@code srcFd}. False, with
     * {@code dst} not made, where this file system cannot clone; on any other failure {@code dst} is gone too.
     */
    boolean cloneFile(int srcFd, Path dst) throws IOException {
        if (unsupported) {
            return false;
        }
        int fd;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = NativeCall.cString(arena, ByteNames.fromHostPath(dst.toAbsolutePath()),
                    errno -> new PosixException(errno, "open", dst.toString()));
            fd = (int) NativeCall.call(arena, "open", st -> (int) OPEN.invokeExact(st, p,
                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, READ_ONLY), true,
                    errno -> new PosixException(errno, "open", dst.toString()));
        }
        boolean made = false;
        try {
            made = cloneInto(fd, srcFd);
            return made;
        } finally {
            Posix.close(fd);
            if (!made) {
                Files.deleteIfExists(dst);
            }
        }
    }

    /**
     * Whether a file in {@code fromDir} can be cloned into {@code toDir}: one small scratch file made in
     * {@code fromDir}, cloned to a scratch name in {@code toDir}, both removed. False on any failure.
     */
    static boolean possible(Path fromDir, Path toDir) {
        Path src = null;
        Path dst = null;
        try {
            src = Files.createTempFile(fromDir, ".kosa8-clone-probe-", "");
            Files.write(src, new byte[4096]);
            dst = toDir.resolve(src.getFileName() + "-clone");
            int fd = Posix.open(src.toAbsolutePath().toString(), Posix.O_RDONLY);
            try {
                return new Clones().cloneFile(fd, dst);
            } finally {
                Posix.close(fd);
            }
        } catch (IOException | RuntimeException e) {
            return false;
        } finally {
            try {
                if (src != null) {
                    Files.deleteIfExists(src);
                }
                if (dst != null) {
                    Files.deleteIfExists(dst);
                }
            } catch (IOException e) {
                // scratch files: a name left behind is all that can go wrong
            }
        }
    }

    /** Whether the last answer was that this store cannot clone (for the restore's figures and the tests). */
    boolean unsupported() {
        return unsupported;
    }
}
