package dev.kosa8.host;

import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Replaces a file whole: a reader, or the disk after a crash, sees the old
 * content or the new, never part of either. The new content goes to a
 * temporary file in the same directory ({@code .tmp-NAME-RANDOM}, created
 * new, never reused), is synced ({@code fsync}), renamed over the target
 * (atomic on one file system) and then the directory is synced, so the
 * rename itself survives a crash. A failure before the rename deletes the
 * temporary file and leaves the old target as it was.
 *
 * <p>A file that only its owner may read gets its mode when it is created:
 * a file created with the umask's mode and narrowed afterwards could be
 * opened by someone else in between, and an open descriptor outlives any
 * later {@code chmod}. The mode given is then set exactly (the umask may
 * have narrowed it), never anything wider at any moment.
 *
 * <p>Temporary files start with {@code .tmp-} ({@link #isTemporary}): an
 * owner that sweeps its directory after a crash knows them by that, and
 * listings that skip dot files never see them.
 *
 * <p>A hint, a file whose loss costs only speed, is replaced the same way
 * but without the syncs ({@link #writeHint}): they would cost more, on the
 * paths that write hints, than a lost hint does.
 *
 * <p>Only files: a directory made complete and renamed into place (an image
 * part, a template) is its owner's business.
 */
public final class AtomicFile {
    static final String TEMP_PREFIX = ".tmp-";
    /** The random part of a temporary name: 16 hex digits after a '-'. */
    private static final int RANDOM_DIGITS = 16;

    private AtomicFile() {
    }

    /** Writes a file's new content; the stream is buffered, and closing it does not end the write. */
    @FunctionalInterface
    public interface Content {
        void writeTo(OutputStream out) throws IOException;
    }

    /** Replaces {@code target} with {@code content}; the file gets the default mode (the umask's). */
    public static void write(Path target, byte[] content) throws IOException {
        write(target, null, content);
    }

    /**
     * Replaces {@code target} with {@code content}, the file having {@code mode}
     * from its creation (null: the default mode).
     */
    public static void write(Path target, Set<PosixFilePermission> mode, byte[] content) throws IOException {
        try (Pending p = begin(target, mode)) {
            writeWhole(p, content);
        }
    }

    /** Replaces {@code target} with what {@code content} writes, streamed (never held whole in memory). */
    public static void write(Path target, Content content) throws IOException {
        write(target, null, content);
    }

    /** As {@link #write(Path, Content)}, the file having {@code mode} from its creation (null: the default). */
    public static void write(Path target, Set<PosixFilePermission> mode, Content content) throws IOException {
        try (Pending p = begin(target, mode)) {
            content.writeTo(p.stream());
            p.commit();
        }
    }

    /**
     * Replaces {@code target}, a hint (a file whose loss costs only speed),
     * with {@code content}: atomically, as {@link #write(Path, byte[])} does,
     * but not synced. After a crash it may hold the old content, the new, or
     * none (empty, or no file): its reader must take whatever it finds.
     */
    public static void writeHint(Path target, byte[] content) throws IOException {
        try (Pending p = begin(target, null, false)) {
            writeWhole(p, content);
        }
    }

    private static void writeWhole(Pending p, byte[] content) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(content);
        while (b.hasRemaining()) {
            p.channel().write(b);
        }
        p.commit();
    }

    /** Starts replacing {@code target}: for a writer that needs the channel, or decides late whether to keep it. */
    public static Pending begin(Path target) throws IOException {
        return begin(target, null);
    }

    /**
     * Starts replacing {@code target} with a file that has {@code mode} from
     * its creation (null: the default mode). Nothing changes at the target
     * until {@link Pending#commit}; closing a pending write that was not
     * committed deletes its temporary file.
     */
    public static Pending begin(Path target, Set<PosixFilePermission> mode) throws IOException {
        return begin(target, mode, true);
    }

    private static Pending begin(Path target, Set<PosixFilePermission> mode, boolean durable) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        FileAttribute<?>[] attributes = mode == null ? new FileAttribute<?>[0]
                : new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(mode)};
        while (true) {
            Path temp = dir.resolve(TEMP_PREFIX + target.getFileName() + "-" + randomDigits());
            FileChannel channel;
            try {
                channel = FileChannel.open(temp, EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                        attributes);
            } catch (FileAlreadyExistsException e) {
                continue; // another writer's name: draw again
            }
            Pending p = new Pending(target, temp, channel, durable);
            if (mode != null) {
                try {
                    Files.setPosixFilePermissions(temp, mode); // what the umask took away, and nothing more
                } catch (IOException | RuntimeException e) {
                    p.close();
                    throw e;
                }
            }
            return p;
        }
    }

    /** Whether {@code file} is the temporary file of a write (under way, or left by a crash). */
    public static boolean isTemporary(Path file) {
        return targetName(file).isPresent();
    }

    /** The name of the file a temporary file was to replace; empty when {@code file} is no such temporary file. */
    public static Optional<String> targetName(Path file) {
        String name = file.getFileName().toString();
        int end = name.length() - RANDOM_DIGITS - 1;
        if (!name.startsWith(TEMP_PREFIX) || end <= TEMP_PREFIX.length() || name.charAt(end) != '-'
                || !name.substring(end + 1).chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            return Optional.empty();
        }
        return Optional.of(name.substring(TEMP_PREFIX.length(), end));
    }

    private static String randomDigits() {
        return HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    }

    /** Syncs a directory, so that a rename in it survives a crash. */
    static void syncDirectory(Path dir) throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    /**
     * A replacement under way: write the temporary file through {@link #channel}
     * or {@link #stream} (one of them), then {@link #commit}. Closed without a
     * commit (a failure), the temporary file is deleted and the target is as
     * it was.
     */
    public static final class Pending implements AutoCloseable {
        private final Path target;
        private final Path temp;
        private final FileChannel channel;
        private final boolean durable;
        private BufferedOutputStream stream;
        private boolean renamed;
        private boolean closed;

        private Pending(Path target, Path temp, FileChannel channel, boolean durable) {
            this.target = target;
            this.temp = temp;
            this.channel = channel;
            this.durable = durable;
        }

        /** The temporary file: for a writer that sets its mode late, or that another process fills. */
        public Path path() {
            return temp;
        }

        public Path target() {
            return target;
        }

        public FileChannel channel() {
            return channel;
        }

        /** A buffered stream on the temporary file; closing it only flushes it. */
        public OutputStream stream() {
            if (stream == null) {
                stream = new BufferedOutputStream(new FilterOutputStream(Channels.newOutputStream(channel)) {
                    @Override
                    public void write(byte[] b, int off, int len) throws IOException {
                        out.write(b, off, len);
                    }

                    @Override
                    public void close() throws IOException {
                        flush(); // the file stays open until the commit
                    }
                }, 1 << 16);
            }
            return stream;
        }

        /**
         * Makes the written content the target's: syncs it, renames it over
         * the target and syncs the directory. An exception before the rename
         * leaves the target as it was (and {@link #close} deletes the
         * temporary file); one from the directory's sync comes after the
         * rename: the new content is in place but may not survive a crash.
         */
        public void commit() throws IOException {
            if (closed || renamed) {
                throw new IllegalStateException("the write of " + target + " is already " + (renamed ? "committed"
                        : "abandoned"));
            }
            if (stream != null) {
                stream.flush();
            }
            if (durable) {
                channel.force(true);
            }
            channel.close();
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            renamed = true;
            closed = true;
            if (!durable) {
                return;
            }
            try {
                syncDirectory(temp.getParent());
            } catch (IOException e) {
                throw new IOException(target + " was replaced, but its directory could not be synced, so the"
                        + " change may not survive a crash: " + e.getMessage(), e);
            }
        }

        /** Abandons the write unless it was committed: the temporary file goes, the target stays as it was. */
        @Override
        public void close() throws IOException {
            if (renamed) {
                return;
            }
            closed = true;
            try {
                channel.close();
            } finally {
                Files.deleteIfExists(temp);
            }
        }
    }
}
