package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.channels.FileChannel;

/**
 * One request body on disk ({@link SpoolBudget#open()}): appended to as it arrives, read back as it goes upstream,
 * closed (its space and its bytes of the budget given back) once, when the request ends whichever way.
 */
final class SpoolFile implements AutoCloseable {
    private final FileChannel file;
    private final SpoolBudget budget;
    private long size;
    private boolean closed;

    SpoolFile(FileChannel file, SpoolBudget budget) {
        this.file = file;
        this.budget = budget;
    }

    /**
     * Appends the readable bytes of {@code b}, which are read.
     *
     * @return false, writing nothing, when the sandbox's spool would pass its bound
     */
    boolean append(ByteBuf b) throws IOException {
        int n = b.readableBytes();
        if (!budget.reserve(n)) {
            return false;
        }
        long at = size;
        size += n; // reserved, so given back on close even if the write fails
        while (b.isReadable()) {
            at += b.readBytes(file, at, b.readableBytes());
        }
        return true;
    }

    long size() {
        return size;
    }

    FileChannel channel() {
        return file;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        budget.free(size);
        try {
            file.close();
        } catch (IOException ignored) {
            // the file is unlinked: closing is all that frees it, and it is closed now whatever the error
        }
    }
}
