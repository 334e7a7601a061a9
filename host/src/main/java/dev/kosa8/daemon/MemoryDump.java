package dev.kosa8.daemon;

import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.Vm;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code kosa8 dump-memory}: the guest's whole RAM as an ELF core (QMP
 * {@code dump-guest-memory}). QEMU sees nothing of the host but its own
 * files in its jail, so it writes into a FIFO in its runtime folder, and the
 * daemon copies what comes out into the file the user named, created by the
 * daemon (0600, refused if it exists).
 */
final class MemoryDump {
    static final String FIFO = "memory.fifo";

    private MemoryDump() {
    }

    static void dump(Vm vm, Path file, Duration timeout) throws IOException {
        Path fifo = vm.spec().qmpSocket().resolveSibling(FIFO);
        Files.deleteIfExists(fifo);
        HostCommand.of("mkfifo", "-m", "600", fifo.toString()).run(KosaException.Kind.HOST, "making " + fifo);
        FileChannel target = FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        CompletableFuture<Long> copied = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("memory-dump").start(() -> {
            try (target; FileChannel in = FileChannel.open(fifo, StandardOpenOption.READ)) {
                long n = 0;
                java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(1 << 20);
                while (in.read(buf) >= 0) {
                    buf.flip();
                    while (buf.hasRemaining()) {
                        n += target.write(buf);
                    }
                    buf.clear();
                }
                target.force(true);
                copied.complete(n);
            } catch (IOException | RuntimeException e) {
                copied.completeExceptionally(e);
            }
        });
        try {
            vm.qmp().execute("dump-guest-memory", Map.of("paging", false, "protocol", "file:" + fifo), timeout);
        } catch (RuntimeException e) {
            release(fifo, copied);
            Files.deleteIfExists(file);
            throw e;
        } finally {
            Files.deleteIfExists(fifo);
        }
        try {
            copied.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Files.deleteIfExists(file);
            throw new IOException("cannot write " + file + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException | InterruptedException e) {
            throw new IOException("the dump was not written within " + timeout.toSeconds() + " s", e);
        }
    }

    /** QEMU never opened the FIFO: open it for writing ourselves, so the copy waiting on it ends. */
    private static void release(Path fifo, CompletableFuture<Long> copied) {
        if (copied.isDone()) {
            return;
        }
        try (FileChannel ignored = FileChannel.open(fifo, StandardOpenOption.WRITE)) {
            copied.get(5, TimeUnit.SECONDS);
        } catch (IOException | ExecutionException | TimeoutException | InterruptedException e) {
            // the copy ends with the fifo's deletion at the latest
        }
    }
}
