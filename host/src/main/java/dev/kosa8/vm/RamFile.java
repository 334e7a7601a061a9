package dev.kosa8.vm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.kosa8.host.NativeCall;
import dev.kosa8.protocol.LinuxAbi;
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
 * copy is a clone ({@code ioctl FICLONE}): the file system writes back what
 * was dirtied, then shares the blocks until either side writes. Elsewhere
 * (ext4, tmpfs) the file's data runs are read ({@code lseek SEEK_DATA}/{@code
 * SEEK_HOLE}) and only their pages that are not all zeros written, so the
 * pages a guest never touched cost no disk and the copy's holes stay holes.
 *
 * <p>Off Linux, where kosa8 makes no native calls, every byte is copied
 * (macOS's {@code clonefile} is not yet used).
 */
public final class RamFile {
    private static final long FICLONE = LinuxAbi.FICLONE;
    private static final int SEEK_DATA = LinuxAbi.SEEK_DATA, SEEK_HOLE = LinuxAbi.SEEK_HOLE;
    private static final int O_RDONLY = LinuxAbi.O_RDONLY, O_WRONLY = LinuxAbi.O_WRONLY, O_CLOEXEC = LinuxAbi.O_CLOEXEC;
    private static final int ENXIO = LinuxAbi.ENXIO, EOPNOTSUPP = LinuxAbi.EOPNOTSUPP;
    /**
     * The file systems whose {@code SEEK_DATA} sees pages written through a shared mapping and not yet written
     * back (they consult the page cache): only there is a copy of a live RAM file made hole by hole. Elsewhere
     * (older OpenZFS, FUSE) a page the guest wrote could read as a hole, so every byte is copied.
     */
    static final java.util.Set<String> SEEKS_DIRTY_PAGES = java.util.Set.of("ext4", "xfs", "btrfs", "tmpfs");
    private static final MethodHandle FALLOCATE = NativeCall.handle("fallocate", -1, JAVA_INT, JAVA_INT, JAVA_INT,
            JAVA_LONG, JAVA_LONG);
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
     * the file system can, else its data runs' pages that are not all zeros
     * (every byte where {@code SEEK_DATA} cannot be trusted with pages written
     * through a mapping). On failure {@code dst} is gone.
     */
    public static Copy copy(Path src, Path dst) throws IOException {
        long size = Files.size(src);
        try (RandomAccessFile out = new RandomAccessFile(createNew(dst).toFile(), "rw")) {
            boolean done = false;
            try {
                Copy c = NativeCall.AVAILABLE ? cloneOrCopy(src, dst, size, out,
                        SEEKS_DIRTY_PAGES.contains(Files.getFileStore(src).type())) : whole(src, size, out);
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

    /**
     * Gives {@code file} blocks for all of its {@code bytes} ({@code fallocate}: unwritten extents, no data
     * written; ext4 then reports them as data to {@code SEEK_DATA}, which is why a copy also skips pages that are
     * all zeros), so that a guest touching a page never needs the
     * host's disk to have room then: a shared file mapping whose page cannot get a block kills QEMU (SIGBUS),
     * where anonymous memory never fails so. A disk without the room fails here, before the machine runs,
     * saying so. Where the file system cannot reserve (no {@code fallocate}), the file is only made that long.
     */
    public static void reserve(Path file, long bytes) throws IOException {
        if (!NativeCall.AVAILABLE) {
            lengthen(file, bytes);
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            int fd = open(arena, file, O_WRONLY);
            try {
                NativeCall.call(arena, "fallocate", st -> (int) FALLOCATE.invokeExact(st, fd, 0, 0L, bytes), true,
                        errno -> new ErrnoIo(errno, "fallocate " + file));
            } catch (ErrnoIo e) {
                if (e.errno != EOPNOTSUPP) {
                    throw new IOException(e.errno == LinuxAbi.ENOSPC ? "No space left on device for the guest's "
                            + (bytes >> 20) + " MiB of memory in " + file.getParent() : e.getMessage(), e);
                }
                lengthen(file, bytes);
            } finally {
                close(fd);
            }
        }
    }

    /** Makes {@code file} at least {@code bytes} long, its new part a hole: where nothing can be reserved. */
    private static void lengthen(Path file, long bytes) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(Math.max(bytes, f.length()));
        }
    }

    private static Path createNew(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        // the guest's memory: the owner's alone
        return Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
    }

    private static Copy cloneOrCopy(Path src, Path dst, long size, RandomAccessFile out, boolean holes)
            throws IOException {
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
                return holes ? sparse(arena, in, src, size, out) : whole(src, size, out);
            } finally {
                close(in);
            }
        }
    }

    /**
     * Copies each run of data at its place, leaving holes where the source has holes and where a page is all
     * zeros: a live RAM file is reserved whole ({@link #reserve}), and ext4 reports its unwritten (reserved,
     * never written) extents as data to {@code SEEK_DATA}, so without the zero test every checkpoint of a 1 GiB
     * guest would store 1 GiB whatever the guest touched. {@link Copy#bytes} is what was written.
     */
    private static Copy sparse(Arena arena, int fd, Path src, long size, RandomAccessFile out) throws IOException {
        out.setLength(size);
        long copied;
        byte[] buf = new byte[CHUNK];
        try (FileChannel from = FileChannel.open(src, StandardOpenOption.READ)) {
            FileChannel to = out.getChannel();
            copied = dataRuns(arena, fd, size, (data, length) -> copyNonZero(from, data, length, to, buf));
        }
        return new Copy(false, copied);
    }

    private static final int PAGE = 4096;
    private static final int CHUNK = 1 << 20;
    private static final byte[] ZERO_PAGE = new byte[PAGE];

    /** Copies {@code length} bytes at {@code at}, page by page, writing only the runs of pages not all zero. */
    private static long copyNonZero(FileChannel from, long at, long length, FileChannel to, byte[] buf)
            throws IOException {
        long written = 0;
        long done = 0;
        while (done < length) {
            int n = (int) Math.min(buf.length, length - done);
            java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(buf, 0, n);
            while (in.hasRemaining()) {
                if (from.read(in, at + done + in.position()) < 0) {
                    throw new IOException("the RAM file ended at " + (at + done + in.position())
                            + " bytes while it was copied");
                }
            }
            int run = -1; // the start of a run of pages to write
            for (int off = 0; ; off += PAGE) {
                boolean end = off >= n;
                int stop = Math.min(off, n);
                boolean zero = end || java.util.Arrays.mismatch(buf, off, Math.min(off + PAGE, n), ZERO_PAGE, 0,
                        Math.min(PAGE, n - off)) < 0;
                if (!zero && run < 0) {
                    run = off;
                } else if (zero && run >= 0) {
                    java.nio.ByteBuffer w = java.nio.ByteBuffer.wrap(buf, run, stop - run);
                    while (w.hasRemaining()) {
                        // a positional write leaves w's position at what it wrote; the file position is the buffer's
                        to.write(w, at + done + w.position());
                    }
                    written += stop - run;
                    run = -1;
                }
                if (end) {
                    break;
                }
            }
            done += n;
        }
        return written;
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
        return dataRuns(arena, fd, size, (data, length) -> length);
    }

    /** What is done with one run of data: its offset and length in; a count out, summed over the runs. */
    private interface Run {
        long apply(long data, long length) throws IOException;
    }

    /** Walks the file's runs of data ({@code SEEK_DATA}, then {@code SEEK_HOLE}), giving each to {@code run}. */
    private static long dataRuns(Arena arena, int fd, long size, Run run) throws IOException {
        long sum = 0;
        long pos = 0;
        while (pos < size) {
            long data = seek(arena, fd, pos, SEEK_DATA);
            if (data < 0 || data >= size) {
                break;
            }
            long hole = Math.min(size, seek(arena, fd, data, SEEK_HOLE));
            sum += run.apply(data, hole - data);
            pos = hole;
        }
        return sum;
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
