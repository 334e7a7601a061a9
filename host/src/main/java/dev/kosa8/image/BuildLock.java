package dev.kosa8.image;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** One image build at a time per images directory, across processes ({@code images/.lock}). */
final class BuildLock implements AutoCloseable {
    private final FileChannel channel;
    private final FileLock lock;

    private BuildLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Waits for the lock; {@code onWait} runs once if another build holds it. */
    static BuildLock acquire(Path images, Runnable onWait) throws IOException {
        FileChannel ch = FileChannel.open(images.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            FileLock l = ch.tryLock();
            if (l == null) {
                onWait.run();
                l = ch.lock();
            }
            return new BuildLock(ch, l);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            channel.close();
        }
    }
}
