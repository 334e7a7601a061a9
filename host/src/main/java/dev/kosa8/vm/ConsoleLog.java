package dev.kosa8.vm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A sandbox's console log kept within a limit: {@code console.log}, and
 * once that holds half the limit it becomes {@code console.log.1} (the one
 * before is dropped) and a new {@code console.log} begins, which says so on
 * its first line with the bytes dropped so far. The two files together never
 * hold more than the limit and a note; {@link #tail} reads the latest lines
 * across both. A write the disk refuses drops the bytes and says so once
 * the log can be written again: the guest's output is never held up.
 *
 * <p>One instance per file in the daemon ({@link #open}), shared by the
 * machines that write it in turn (a rewind's old and new QEMU), each of
 * which {@link #close}s its share.
 */
public final class ConsoleLog implements AutoCloseable {
    private static final Map<Path, ConsoleLog> OPEN = new ConcurrentHashMap<>();

    private final Path file;
    private final long limit;
    private int users;
    private FileChannel out;
    private long size;
    /** Bytes older than {@code console.log.1} that rotation dropped, since this log was opened. */
    private long dropped;
    /** Bytes not written because the disk refused them, not yet said in the log. */
    private long unwritten;
    private String unwrittenWhy = "";

    private ConsoleLog(Path file, long limit) {
        this.file = file;
        this.limit = limit;
    }

    /** The log at {@code file}, opened for one more writer. */
    public static ConsoleLog open(Path file, long limit) {
        ConsoleLog log = OPEN.compute(file.toAbsolutePath(), (k, v) -> v != null ? v : new ConsoleLog(k, limit));
        synchronized (log) {
            log.users++;
        }
        return log;
    }

    /** The rotated file beside {@code file}. */
    public static Path older(Path file) {
        return file.resolveSibling(file.getFileName() + ".1");
    }

    /** Appends what the guest wrote; rotates first when it would take the file past half the limit. */
    public synchronized void write(ByteBuffer bytes) {
        int n = bytes.remaining();
        try {
            ensureOpen();
            if (size + n > limit / 2 && size > 0) {
                rotate();
            }
            if (unwritten > 0) {
                writeText("[kosa8: " + now() + ": " + unwritten + " bytes of console output were dropped: "
                        + unwrittenWhy + "]\n");
                unwritten = 0;
            }
            while (bytes.hasRemaining()) {
                size += out.write(bytes);
            }
        } catch (IOException e) {
            unwritten += bytes.remaining();
            unwrittenWhy = "cannot write " + file + ": " + e.getMessage();
            bytes.position(bytes.limit());
            closeQuietly();
        }
    }

    /** A line of kosa8's own in the log, marked as such: a daemon leaving or coming back. */
    public synchronized void note(String text) {
        try {
            ensureOpen();
            writeText("\n[kosa8: " + now() + ": " + text + "]\n");
        } catch (IOException e) {
            closeQuietly();
        }
    }

    private void ensureOpen() throws IOException {
        if (out == null) {
            out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND);
            size = out.size();
        }
    }

    private void rotate() throws IOException {
        closeQuietly();
        Path older = older(file);
        if (Files.exists(older)) {
            dropped += Files.size(older);
        }
        Files.move(file, older, StandardCopyOption.REPLACE_EXISTING);
        ensureOpen();
        writeText("[kosa8: " + now() + ": earlier output is in " + older.getFileName()
                + (dropped > 0 ? "; " + dropped + " bytes older than that were dropped" : "")
                + " (the console keeps at most " + (limit >> 10) + " KiB: \"consoleLimit\" in kosa8's settings.json)]\n");
    }

    private void writeText(String text) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        while (b.hasRemaining()) {
            size += out.write(b);
        }
    }

    private void closeQuietly() {
        if (out != null) {
            try {
                out.close();
            } catch (IOException ignored) {
                // nothing was buffered
            }
            out = null;
        }
    }

    /** One writer is done with the log; the last closes it. */
    @Override
    public void close() {
        synchronized (this) {
            if (--users > 0) {
                return;
            }
            closeQuietly();
        }
        OPEN.remove(file, this);
    }

    private static String now() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
    }

    /** The last {@code lines} lines of the log at {@code file}, from {@code console.log.1} too when needed. */
    public static String tail(Path file, int lines) {
        String current = Files.exists(file) ? Tail.of(file, lines) : "";
        long have = current.isEmpty() ? 0 : current.lines().count();
        Path older = older(file);
        if (have >= lines || !Files.exists(older)) {
            return Files.exists(file) || Files.exists(older) ? current : Tail.of(file, lines);
        }
        String before = Tail.of(older, (int) (lines - have));
        return current.isEmpty() ? before : before + "\n" + current;
    }
}
