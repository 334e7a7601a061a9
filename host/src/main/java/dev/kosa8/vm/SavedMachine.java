package dev.kosa8.vm;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A machine's saved RAM, CPU and device state, as QEMU loads it: a migration
 * stream. Kept either as the stream itself (a template, a machine paused to
 * disk) or taken apart into pages that checkpoints share
 * ({@code dev.kosa8.checkpoint.ram}), and put together again here.
 */
public interface SavedMachine {
    /** Writes the whole stream to {@code out}. */
    void writeTo(WritableByteChannel out) throws IOException;

    /** What it is, for messages: a file name. */
    String name();

    /** A stream kept as a file. */
    static SavedMachine file(Path file) {
        return new SavedMachine() {
            @Override
            public void writeTo(WritableByteChannel out) throws IOException {
                try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
                    long size = in.size();
                    long sent = 0;
                    while (sent < size) {
                        sent += in.transferTo(sent, size - sent, out);
                    }
                }
            }

            @Override
            public String name() {
                return file.getFileName().toString();
            }
        };
    }
}
