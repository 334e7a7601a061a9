package dev.kosa8.egress;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.function.Consumer;

/**
 * A sandbox's network audit log: JSON lines, appended. The guest decides how
 * much it is asked to log, so the file is bounded: past {@link #MAX_BYTES} it
 * becomes {@code net.log.1} (replacing the older one) and a fresh file starts,
 * so the two hold at most twice that. A log that cannot be written says so
 * once in the daemon's log until it can be again: the guest's requests do
 * not grow that log either.
 */
public final class AuditLog implements AutoCloseable {
    public static final long MAX_BYTES = 16L << 20;
    static final ObjectMapper JSON = new ObjectMapper().registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);

    private final Path file;
    private final Consumer<String> problems;
    private OutputStream out;
    private long size;
    private boolean closed;
    /** A write failed and was said; the next failure is not, until a write succeeds. */
    private boolean failing;

    public AuditLog(Path file, Consumer<String> problems) {
        this.file = file;
        this.problems = problems;
    }

    public Path file() {
        return file;
    }

    /** Dropped once closed: a connection ending after its sandbox is gone must not recreate its directory. */
    public synchronized void write(AuditEvent e) {
        if (closed) {
            return;
        }
        try {
            byte[] line = JSON.writeValueAsBytes(e);
            if (out == null) {
                open();
            }
            if (size + line.length + 1 > MAX_BYTES) {
                out.close();
                Files.move(file, file.resolveSibling(file.getFileName() + ".1"), StandardCopyOption.REPLACE_EXISTING);
                open();
            }
            out.write(line);
            out.write('\n');
            out.flush();
            size += line.length + 1;
            failing = false;
        } catch (IOException x) {
            if (!failing) {
                problems.accept("cannot write the network audit log " + file + ": " + x.getMessage()
                        + "; events are dropped until it can be written again");
            }
            failing = true;
            closeQuietly();
        }
    }

    private void open() throws IOException {
        Files.createDirectories(file.getParent());
        out = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        size = Files.size(file);
    }

    private void closeQuietly() {
        if (out != null) {
            try {
                out.close();
            } catch (IOException ignored) {
                // opened afresh by the next write
            }
            out = null;
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (out != null) {
            try {
                out.close();
            } catch (IOException ignored) {
                // nothing to flush that a close would save
            }
            out = null;
        }
    }
}
