package dev.kosa8.vm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.kosa8.host.NativeCall;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A guest's RAM kept as a file ({@link CheckpointMode#FILE_RAM}), copied
 * whole: into a checkpoint at its instant, and out of one into the file a
 * restored machine maps. Where the file system has reflinks (XFS, Btrfs) the
 * copy is a clone ({@code ioctl FICLONE}): no time and no space until either
 * side writes. Elsewhere (ext4, tmpfs) only the file's data is copied, hole
 * by hole ({@code lseek SEEK_DATA}/{@code SEEK_HOLE}), so the pages a guest
 * never touched cost neither time nor disk; the copy's own holes stay holes.
 *
 * <p>Off Linux, where kosa8 makes no native calls, every byte is copied
 * (macOS's {@code clonefile} is not yet used: docs/macos.md).
 */
public final class RamFile {
    private static final long FICLONE = 0x40049409L;
    private static final int SEEK_DATA = 3, SEEK_HOLE = 4;
    private static final int O_RDONLY = 0, O_WRONLY = 01, O_CLOEXEC = 02000000;
    private static final int ENXIO = 6;
    private static final MethodHandle OPEN = NativeCall.handle("open", 2, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);
    private static final MethodHandle CLOSE = NativeCall.handle("close", -1, JAVA_INT, JAVA_INT);
    private static final MethodHandle IOCTL = NativeCall.handle("ioctl", 2, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT);
    private static final MethodHandle LSEEK = NativeCall.handle("lseek", -1, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT);

    private RamFile() {
    }

    /**
     * How a copy was made.
     *
     * @param cloned whether the file system cloned it
     * @param bytes  the bytes of data the source holds (its holes left out): what a copy wrote
     */
    public record Copy(boolean cloned, long bytes) {
    }

    /**
     * Copies {@code src} to {@code dst}, which must not exist: a clone where
     * the file system can, else its data. On failure {@code dst} is gone.
     */
    public static Copy copy(Path src, Path dst) throws IOException {
        long size = Files.size(src);
        try (RandomAccessFile out = new RandomAccessFile(createNew(dst).toFile(), "rw")) {
            boolean done = false;
            try {
                Copy c = NativeCall.AVAILABLE ? cloneOrCopy(src, dst, size, out) : whole(src, size, out);
                done = true;
                return c;
            } finally {
                if (!done) {
                    out.close();
                    Files.deleteIfExists(dst);
                }
            }
        }
    }

    /** A new empty file for a machine's RAM, in place of what was there. */
    public static void fresh(Path file) throws IOException {
        Files.deleteIfExists(file);
        createNew(file);
    }

    private static Path createNew(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        // the guest's memory: the owner's alone
        return Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
    }

    private static Copy cloneOrCopy(Path src, Path dst, long size, RandomAccessFile out) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            int in = open(arena, src, O_RDONLY);
            try {
                int to = open(arena, dst, O_WRONLY);
                try {
                    long r = NativeCall.call(arena, "ioctl", st -> (int) IOCTL.invokeExact(st, to, FICLONE, in), true,
                            errno -> new IOException("errno " + errno));
                    if (r == 0) {
                        return new Copy(true, dataBytes(arena, in, size));
                    }
                } catch (IOException e) {
                    // no reflinks here (EOPNOTSUPP, EXDEV, ENOTTY...): the data is copied
                } finally {
                    close(to);
                }
                return sparse(arena, in, src, size, out);
            } finally {
                close(in);
            }
        }
    }

    /** Copies each run of data at its place; the holes between stay holes. */
    private static Copy sparse(Arena arena, int fd, Path src, long size, RandomAccessFile out) throws IOException {
        out.setLength(size);
        long copied = 0;
        try (FileChannel from = FileChannel.open(src, StandardOpenOption.READ)) {
            FileChannel to = out.getChannel();
            long pos = 0;
            while (pos < size) {
                long data = seek(arena, fd, pos, SEEK_DATA);
                if (data < 0 || data >= size) {
                    break;
                }
                long hole = Math.min(size, seek(arena, fd, data, SEEK_HOLE));
                copied += transfer(from, data, hole - data, to);
                pos = hole;
            }
        }
        return new Copy(false, copied);
    }

    private static Copy whole(Path src, long size, RandomAccessFile out) throws IOException {
        try (FileChannel from = FileChannel.open(src, StandardOpenOption.READ)) {
            return new Copy(false, transfer(from, 0, size, out.getChannel()));
        }
    }

    private static long transfer(FileChannel from, long at, long length, FileChannel to) throws IOException {
        long done = 0;
        while (done < length) {
            long n = from.transferTo(at + done, length - done, to.position(at + done));
            if (n <= 0) {
                throw new IOException("the RAM file ended at " + (at + done) + " bytes while it was copied");
            }
            done += n;
        }
        return done;
    }

    /**
     * The bytes of data a file holds, its holes left out: what a checkpoint's
     * RAM costs on disk (a clone's shared blocks counted as its own).
     */
    public static long dataBytes(Path file) throws IOException {
        if (!NativeCall.AVAILABLE) {
            return Files.size(file);
        }
        try (Arena arena = Arena.ofConfined()) {
            int fd = open(arena, file, O_RDONLY);
            try {
                return dataBytes(arena, fd, Files.size(file));
            } finally {
                close(fd);
            }
        }
    }

    private static long dataBytes(Arena arena, int fd, long size) throws IOException {
        long bytes = 0;
        long pos = 0;
        while (pos < size) {
            long data = seek(arena, fd, pos, SEEK_DATA);
            if (data < 0 || data >= size) {
                break;
            }
            long hole = Math.min(size, seek(arena, fd, data, SEEK_HOLE));
            bytes += hole - data;
            pos = hole;
        }
        return bytes;
    }

    /** {@code lseek}; -1 where SEEK_DATA finds no data after {@code pos} (ENXIO). */
    private static long seek(Arena arena, int fd, long pos, int whence) throws IOException {
        try {
            return NativeCall.call(arena, "lseek", st -> (long) LSEEK.invokeExact(st, fd, pos, whence), true,
                    errno -> new ErrnoIo(errno, "lseek"));
        } catch (ErrnoIo e) {
            if (e.errno == ENXIO) {
                return -1;
            }
            throw e;
        }
    }

    private static int open(Arena arena, Path file, int flags) throws IOException {
        MemorySegment p = NativeCall.cString(arena, file.toAbsolutePath().toString(),
                errno -> new ErrnoIo(errno, "open " + file));
        return (int) NativeCall.call(arena, "open", st -> (int) OPEN.invokeExact(st, p, flags | O_CLOEXEC, 0), true,
                errno -> new ErrnoIo(errno, "open " + file));
    }

    private static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            NativeCall.call(arena, "close", st -> (int) CLOSE.invokeExact(st, fd), false, errno -> new ErrnoIo(errno,
                    "close"));
        } catch (IOException e) {
            // nothing was written through it that a failed close could lose
        }
    }

    /** A failed call and its errno. */
    private static final class ErrnoIo extends IOException {
        final int errno;

        ErrnoIo(int errno, String what) {
            super(what + " failed: errno " + errno);
            this.errno = errno;
        }
    }
}
